//go:build !unix

package postgres

import (
	"net"

	"github.com/jackc/pgx/v5/pgconn"
)

// Elsewhere than on Unix, worker sessions go through Go's netpoller: the
// blocking and cooperative connections of blockconn.go use Unix system
// calls. workerDial then returns nil whatever the mode.
var dialMux, dialMuxPoll, dialRaw, dialBlocking pgconn.DialFunc

// waitFunc is a target.Cooperative waiter.
type waitFunc = func(fd int, write bool) bool

// blockingConn never exists here; it is declared so that SetWaiter compiles.
type blockingConn struct{ net.Conn }

func (*blockingConn) setWaiter(waitFunc) bool { return false }

// ordinaryIO does nothing here: there are no raw connections.
func ordinaryIO(net.Conn) func() { return func() {} }
