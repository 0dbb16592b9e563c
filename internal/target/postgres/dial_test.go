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
		workers               int
		multiplexed, openLoop bool
		want                  string
	}{
		{0, false, false, "netpoll"},
		{1, false, false, "mux"},
		{maxRawWorkers, true, false, "mux"},
		{maxRawWorkers, false, false, "mux"},
		{maxRawWorkers + 1, true, false, "muxpoll"},
		{maxRawWorkers + 1, false, false, "netpoll"},
		{maxRawWorkers + 1, false, true, "mux"},
		{maxOpenLoopRaw, false, true, "mux"},
		{maxOpenLoopRaw + 1, false, true, "netpoll"},
		{200, true, false, "muxpoll"},
	}
	for _, c := range cases {
		if got := name(workerDial(c.workers, c.multiplexed, c.openLoop)); got != c.want {
			t.Errorf("workerDial(%d, %v, %v) = %s, want %s", c.workers, c.multiplexed, c.openLoop, got, c.want)
		}
	}
	t.Setenv("CEILING_PG_IO", "raw")
	if got := name(workerDial(200, true, false)); got != "raw" {
		t.Errorf("CEILING_PG_IO=raw: workerDial = %s, want raw", got)
	}
}
