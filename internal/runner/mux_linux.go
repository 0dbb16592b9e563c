package runner

import (
	"runtime"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

const (
	muxSupported = true
	pollIn       = unix.POLLIN
	pollOut      = unix.POLLOUT
)

var _ [unsafe.Sizeof(unix.PollFd{})]struct{} = [unsafe.Sizeof(pollFd{})]struct{}{}

// pollWait waits up to timeout for one of fds to be ready and returns how
// many are. Like the raw connections' recv, it keeps the scheduler out
// (the group keeps its P and thread); a signal, such as the runtime's
// preemption request, ends it early with no error after yielding the
// processor.
func pollWait(fds []pollFd, timeout time.Duration) (int, error) {
	ts := unix.NsecToTimespec(max(timeout, 0).Nanoseconds())
	n, _, e := syscall.RawSyscall6(unix.SYS_PPOLL, uintptr(unsafe.Pointer(&fds[0])), uintptr(len(fds)),
		uintptr(unsafe.Pointer(&ts)), 0, 0, 0)
	runtime.KeepAlive(fds)
	switch e {
	case 0:
		return int(n), nil
	case syscall.EINTR:
		runtime.Gosched() // a preemption or stop-the-world request
		return 0, nil
	}
	return 0, e
}
