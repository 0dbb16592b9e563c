package runner

import (
	"syscall"
	"time"
	"unsafe"
)

// preciseSleep blocks the calling thread for about d with nanosleep(2),
// which overshoots by the thread's timer slack (50 µs by default) instead of
// the Go timer's ~0.5 ms. The runtime hands the P to another thread while it
// blocks. It may return early when a signal arrives.
func preciseSleep(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	_ = syscall.Nanosleep(&ts, nil) // EINTR: the caller sleeps the rest
}

// rawSleep is preciseSleep without leaving the scheduler
// (syscall.RawSyscall): the thread keeps its P while it sleeps, as a raw
// connection's thread does while it waits for the server, and the
// runtime's monitor is neither woken nor asked to hand the P on. For
// workers that have a P of their own (target.PHolder). A signal (the
// runtime's preemption) ends it early with EINTR; the caller sleeps the
// rest. PostgreSQL direct selects, 8 workers, open loop at 1,000 req/s:
// ceiling at 12-14% of the 2 cores with preciseSleep (perf: a third of it
// the monitor's usleep), 8-9% with rawSleep, the start lag's p99 alike.
// (A timerfd read through the netpoller saved as much CPU but doubled the
// lag's p99: its wake-up goes through the scheduler.)
func rawSleep(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	_, _, _ = syscall.RawSyscall(syscall.SYS_NANOSLEEP, uintptr(unsafe.Pointer(&ts)), 0, 0)
}
