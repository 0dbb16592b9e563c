//go:build !unix

package blockio

import (
	"context"
	"net"
	"syscall"
)

// Elsewhere than on Unix, worker sessions go through Go's netpoller: the
// blocking and cooperative connections of blockio.go use Unix system
// calls. The dial functions are nil, and the targets then dial as usual.
var DialMux, DialMuxPoll, DialRaw, DialBlocking func(ctx context.Context, network, addr string) (net.Conn, error)

// SetWaiter reports false: there are no cooperative connections here.
func SetWaiter(net.Conn, func(fd int, write bool) bool) bool { return false }

// RingIO is the blockio.go type; nothing here takes one.
type RingIO = func(fd int, write bool, p []byte) (n int, errno syscall.Errno, ok bool)

// SetRingIO reports false: there are no cooperative connections here.
func SetRingIO(net.Conn, RingIO) bool { return false }

// OrdinaryIO does nothing here: there are no raw connections.
func OrdinaryIO(net.Conn) func() { return func() {} }

// Supported reports whether this system has the connections of this
// package: not here.
const Supported = false

// Raw reports false: there are no raw connections here.
func Raw(net.Conn) bool { return false }
