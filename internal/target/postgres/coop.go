package postgres

import (
	"syscall"

	"github.com/ceiling-db/ceiling/internal/target"
	"github.com/ceiling-db/ceiling/internal/target/blockio"
)

var (
	_ target.Cooperative     = (*conn)(nil)
	_ target.RingCooperative = (*conn)(nil)
	_ target.PHolder         = (*conn)(nil)
)

// HoldsP implements target.PHolder: a raw session (blockio.Raw).
func (c *conn) HoldsP() bool { return blockio.Raw(netConn(c.c.PgConn().Conn())) }

// SetWaiter implements target.Cooperative: only sessions dialled in mux
// mode (see workerDial) accept; their I/O then gives way through wait (see
// blockio.SetWaiter).
func (c *conn) SetWaiter(wait func(fd int, write bool) bool) bool {
	return blockio.SetWaiter(netConn(c.c.PgConn().Conn()), wait)
}

// SetRingIO implements target.RingCooperative (blockio.SetRingIO).
func (c *conn) SetRingIO(io func(fd int, write bool, p []byte) (int, syscall.Errno, bool)) bool {
	return blockio.SetRingIO(netConn(c.c.PgConn().Conn()), io)
}
