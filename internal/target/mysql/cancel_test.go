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
	// waits with blocking system calls on its own thread; during a bulk
	// load it waits through ordinary ones; the admin session never is raw.
	if !blockio.Raw(c.nc) {
		t.Error("a worker session of a 4-worker run is not raw")
	}
	restore := blockio.OrdinaryIO(c.nc)
	if blockio.Raw(c.nc) {
		t.Error("raw inside OrdinaryIO")
	}
	restore()
	if mt := tg.(*myTarget); !mt.raw || workerIO(maxRawWorkers+1) || workerIO(0) {
		t.Errorf("workerIO: raw %v for 4 workers, %v for %d, %v for 0; want true, false, false",
			mt.raw, workerIO(maxRawWorkers+1), maxRawWorkers+1, workerIO(0))
	}
	t.Setenv("CEILING_MYSQL_IO", "netpoll")
	tg2 := openTarget(t, testDSN(t), target.DurabilityServer)
	if c2 := connect(t, tg2).(*conn); c2.nc == nil || blockio.Raw(c2.nc) {
		t.Error("CEILING_MYSQL_IO=netpoll: want a recorded, ordinary connection")
	}
}
