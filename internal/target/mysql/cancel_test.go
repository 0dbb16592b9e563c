package mysql

import (
	"strconv"
	"testing"

	"github.com/ceiling-db/ceiling/internal/target"
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
}
