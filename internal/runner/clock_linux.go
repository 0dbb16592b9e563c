package runner

import (
	"syscall"
	"time"
)

// preciseSleep blocks the calling thread for about d with nanosleep(2),
// which overshoots by the thread's timer slack (50 µs by default) instead of
// the Go timer's ~0.5 ms. The runtime hands the P to another thread while it
// blocks. It may return early when a signal arrives.
func preciseSleep(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	_ = syscall.Nanosleep(&ts, nil) // EINTR: the caller sleeps the rest
}
