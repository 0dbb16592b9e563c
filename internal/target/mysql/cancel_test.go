//go:build unix

package mysql

import (
	"strconv"
	"testing"

	"github.com/ceiling-db/ceiling/internal/target"
	"github.com/ceiling-db/ceiling/internal/target/blockio"
)

// TestConnectRecordsConn: a worker session knows its network connection
// and its server connection id, so that it watches its calls itself and
// can kill a cancelled statement (conn.watch, conn.cancel; the behaviour
// is tested on both servers in engines.TestCancelStopsServerStatement).
func TestConnectRecordsConn(t *testing.T) {
	tg := openTarget(t, testDSN(t), target.DurabilityServer)
	c := connect(t, tg).(*conn)
	if c.nc == nil {
		t.Error("Connect did not record the session's network connection: calls go through the driver's watcher")
	}
	if id := queryString(t, c, "SELECT CONNECTION_ID()"); id == "0" || id != strconv.FormatInt(c.id, 10) {
		t.Errorf("session id %d, the server says %s", c.id, id)
	}
	// Up to maxRawWorkers workers (openTarget says 4), a worker session
	// waits with blocking system calls on its own thread until the runner
	// makes it cooperative; during a bulk load it waits through ordinary
	// ones; the admin session never is raw.
	if !blockio.Raw(c.nc) || !c.HoldsP() {
		t.Error("a worker session of a 4-worker run is not raw, or does not say it holds its P")
	}
	restore := blockio.OrdinaryIO(c.nc)
	if blockio.Raw(c.nc) || c.HoldsP() {
		t.Error("raw, or holding its P, inside OrdinaryIO")
	}
	restore()
	if !c.SetWaiter(func(int, bool) bool { return false }) {
		t.Error("a worker session of a 4-worker run refused a waiter")
	}
	if !c.SetWaiter(nil) {
		t.Error("a cooperative worker session refused to block again")
	}
	if mt := tg.(*myTarget); mt.io != ioMux {
		t.Errorf("I/O mode %v for 4 workers, want %v (mux)", mt.io, ioMux)
	}
	for _, tc := range []struct {
		workers               int
		multiplexed, openLoop bool
		want                  ioMode
	}{
		{0, false, false, ioNetpoll},
		{1, false, false, ioMux},
		{maxRawWorkers, true, false, ioMux},
		{maxRawWorkers + 1, true, false, ioMuxPoll},
		{maxRawWorkers + 1, false, false, ioNetpoll},
		{maxOpenLoopRaw, false, true, ioMux},
		{maxOpenLoopRaw + 1, false, true, ioNetpoll},
	} {
		if got := workerIO(tc.workers, tc.multiplexed, tc.openLoop); got != tc.want {
			t.Errorf("workerIO(%d, %v, %v) = %v, want %v", tc.workers, tc.multiplexed, tc.openLoop, got, tc.want)
		}
	}
	for env, want := range map[string]ioMode{"raw": ioRaw, "mux": ioMux, "muxpoll": ioMuxPoll, "netpoll": ioNetpoll} {
		t.Setenv("CEILING_MYSQL_IO", env)
		if got := workerIO(4, false, false); got != want {
			t.Errorf("CEILING_MYSQL_IO=%s: workerIO = %v, want %v", env, got, want)
		}
	}
	t.Setenv("CEILING_MYSQL_IO", "raw")
	tg3 := openTarget(t, testDSN(t), target.DurabilityServer)
	if c3 := connect(t, tg3).(*conn); c3.SetWaiter(func(int, bool) bool { return false }) {
		t.Error("CEILING_MYSQL_IO=raw: a worker session accepted a waiter")
	}
	t.Setenv("CEILING_MYSQL_IO", "netpoll")
	tg2 := openTarget(t, testDSN(t), target.DurabilityServer)
	if c2 := connect(t, tg2).(*conn); c2.nc == nil || blockio.Raw(c2.nc) || c2.HoldsP() {
		t.Error("CEILING_MYSQL_IO=netpoll: want a recorded, ordinary connection")
	}
}
