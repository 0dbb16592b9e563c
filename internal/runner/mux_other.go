//go:build !linux

package runner

import (
	"errors"
	"time"
)

// The multiplexed closed loop is implemented for Linux only.
const (
	muxSupported = false
	pollIn       = 1
	pollOut      = 4
)

func curg() uintptr { return 0 }

const curgIsGoroutine = false

func pollWait([]pollFd, time.Duration) (int, error) {
	return 0, errors.New("runner: multiplexing is not supported on this system")
}
