//go:build !linux

package runner

import (
	"errors"
	"time"
)

// io_uring is Linux only: groups elsewhere (none yet, muxSupported) poll.

const (
	ringOpPollAdd     = 6
	ringOpAsyncCancel = 14
	ringOpSend        = 26
	ringOpRecv        = 27
	ringMsgNoSignal   = 0
)

type ringCQE struct {
	userData uint64
	res      int32
	flags    uint32
}

// ringOff, ringOn: see ring_linux.go.
var ringOff, ringOn bool

type uring struct{}

func newURing(uint32) (*uring, error) {
	return nil, errors.New("runner: io_uring is not supported on this system")
}

func (*uring) close()                                             {}
func (*uring) prep(uint8, int32, uintptr, uint32, uint32, uint64) {}
func (*uring) enter(time.Duration) error                          { return errors.New("runner: no io_uring") }
func (*uring) reap(dst []ringCQE) []ringCQE                       { return dst }
