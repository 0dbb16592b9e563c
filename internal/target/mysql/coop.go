package mysql

import (
	"github.com/ceiling-db/ceiling/internal/target"
	"github.com/ceiling-db/ceiling/internal/target/blockio"
)

var _ target.Cooperative = (*conn)(nil)

// SetWaiter implements target.Cooperative: only sessions dialled in mux
// modes (workerIO) accept a waiter (blockio.SetWaiter). go-sql-driver
// reads and writes the connection on the calling goroutine, so a worker's
// coroutine waits in its group's poll.
func (c *conn) SetWaiter(wait func(fd int, write bool) bool) bool {
	return c.nc != nil && blockio.SetWaiter(c.nc, wait)
}
