//go:build unix

package postgres

import (
	"reflect"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ceiling-db/ceiling/internal/target/blockio"
)

// TestWorkerDialChoice: how worker sessions are dialled by worker count and
// by whether the run will be multiplexed.
func TestWorkerDialChoice(t *testing.T) {
	t.Setenv("CEILING_PG_IO", "")
	t.Setenv("CEILING_PG_NETPOLL", "")
	name := func(d pgconn.DialFunc) string {
		if d == nil {
			return "netpoll"
		}
		for n, f := range map[string]pgconn.DialFunc{"mux": blockio.DialMux, "muxpoll": blockio.DialMuxPoll, "raw": blockio.DialRaw, "poll": blockio.DialBlocking} {
			if reflect.ValueOf(f).Pointer() == reflect.ValueOf(d).Pointer() {
				return n
			}
		}
		return "unknown"
	}
	cases := []struct {
		workers     int
		multiplexed bool
		want        string
	}{
		{0, false, "netpoll"},
		{1, false, "mux"},
		{maxRawWorkers, true, "mux"},
		{maxRawWorkers, false, "mux"},
		{maxRawWorkers + 1, true, "muxpoll"},
		{maxRawWorkers + 1, false, "netpoll"},
		{200, true, "muxpoll"},
	}
	for _, c := range cases {
		if got := name(workerDial(c.workers, c.multiplexed)); got != c.want {
			t.Errorf("workerDial(%d, %v) = %s, want %s", c.workers, c.multiplexed, got, c.want)
		}
	}
	t.Setenv("CEILING_PG_IO", "raw")
	if got := name(workerDial(200, true)); got != "raw" {
		t.Errorf("CEILING_PG_IO=raw: workerDial = %s, want raw", got)
	}
}
