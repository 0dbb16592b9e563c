package postgres

import "github.com/ceiling-db/ceiling/internal/target"

var _ target.Cooperative = (*conn)(nil)

// SetWaiter implements target.Cooperative: only sessions dialled in mux
// mode (see workerDial) accept; their I/O then gives way through wait (see
// blockingConn.setWaiter).
func (c *conn) SetWaiter(wait func(fd int, write bool) bool) bool {
	bc, ok := c.c.PgConn().Conn().(*blockingConn)
	return ok && bc.setWaiter(wait)
}
