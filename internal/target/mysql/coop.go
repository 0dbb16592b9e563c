package mysql

import (
	"github.com/ceiling-db/ceiling/internal/target"
	"github.com/ceiling-db/ceiling/internal/target/blockio"
)

var (
	_ target.Cooperative = (*conn)(nil)
	_ target.PHolder     = (*conn)(nil)
)

// HoldsP implements target.PHolder: a raw session (blockio.Raw).
func (c *conn) HoldsP() bool { return c.nc != nil && blockio.Raw(c.nc) }

// SetWaiter implements target.Cooperative: only sessions dialled in mux
// modes (workerIO) accept a waiter (blockio.SetWaiter). go-sql-driver
// reads and writes the connection on the calling goroutine, so a worker's
// coroutine waits in its group's poll.
//
// The connections do not take ring I/O (target.RingCooperative): single-row
// inserts on MariaDB 10.11 at 8 connections, CPU-bound, cost the client
// 18.9-19.2 µs per request through the ring against 17.9-18.2 polling
// (three alternated 5 s runs each, 2-core development VM, 2026-11-26).
func (c *conn) SetWaiter(wait func(fd int, write bool) bool) bool {
	return c.nc != nil && blockio.SetWaiter(c.nc, wait)
}
