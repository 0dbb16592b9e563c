package postgres

import (
	"github.com/ceiling-db/ceiling/internal/target"
	"github.com/ceiling-db/ceiling/internal/target/blockio"
)

var _ target.Cooperative = (*conn)(nil)

// SetWaiter implements target.Cooperative: only sessions dialled in mux
// mode (see workerDial) accept; their I/O then gives way through wait (see
// blockio.SetWaiter).
func (c *conn) SetWaiter(wait func(fd int, write bool) bool) bool {
	return blockio.SetWaiter(netConn(c.c.PgConn().Conn()), wait)
}
