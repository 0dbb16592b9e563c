package runner

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A minimal io_uring (Linux 5.11 and later), enough for a group's sends,
// receives and polls: the standard library has none, and the group needs
// only a submission ring, a completion ring and one system call.
//
// The structures below have the kernel's layout (include/uapi/linux/io_uring.h).

type ringParams struct {
	sqEntries, cqEntries, flags, sqThreadCPU, sqThreadIdle, features, wqFd uint32
	resv                                                                   [3]uint32
	sqOff                                                                  struct {
		head, tail, ringMask, ringEntries, flags, dropped, array, resv1 uint32
		userAddr                                                        uint64
	}
	cqOff struct {
		head, tail, ringMask, ringEntries, overflow, cqes, flags, resv1 uint32
		userAddr                                                        uint64
	}
}

type ringSQE struct {
	opcode   uint8
	flags    uint8
	ioprio   uint16
	fd       int32
	off      uint64
	addr     uint64
	len      uint32
	opFlags  uint32 // msg_flags, poll32_events, cancel_flags
	userData uint64
	bufIndex uint16
	pers     uint16
	splice   int32
	addr3    uint64
	pad      uint64
}

type ringCQE struct {
	userData uint64
	res      int32
	flags    uint32
}

type ringGetEventsArg struct {
	sigmask   uint64
	sigmaskSz uint32
	minWait   uint32
	ts        uint64
}

var (
	_ [64]struct{}  = [unsafe.Sizeof(ringSQE{})]struct{}{}
	_ [16]struct{}  = [unsafe.Sizeof(ringCQE{})]struct{}{}
	_ [120]struct{} = [unsafe.Sizeof(ringParams{})]struct{}{}
	_ [24]struct{}  = [unsafe.Sizeof(ringGetEventsArg{})]struct{}{}
)

const (
	sysIOURingSetup = 425
	sysIOURingEnter = 426

	ringOpPollAdd     = 6
	ringOpAsyncCancel = 14
	ringOpSend        = 26
	ringOpRecv        = 27

	ringSetupCoopTaskrun = 1 << 8 // no interrupt to the submitting thread for each completion (5.19)
	ringFeatSingleMmap   = 1 << 0
	ringFeatExtArg       = 1 << 8 // io_uring_enter takes a timeout (5.11)
	ringEnterGetEvents   = 1 << 0
	ringEnterExtArg      = 1 << 3
	ringOffSQEs          = 0x10000000
	ringMsgNoSignal      = unix.MSG_NOSIGNAL
)

// ring is one group's io_uring. Only the group's goroutine uses it.
type uring struct {
	fd             int
	sqHead, sqTail *uint32
	sqArray        []uint32
	sqMask         uint32
	sqes           []ringSQE
	cqHead, cqTail *uint32
	cqMask         uint32
	cqes           []ringCQE
	tail           uint32 // next submission slot (published to sqTail by enter)
	mem, sqeMem    []byte
}

// ringOff and ringOn are CEILING_MUX_RING=0 (groups always poll) and =1
// (groups of any size use a ring; see ringMinWorkers).
var (
	ringOff = os.Getenv("CEILING_MUX_RING") == "0"
	ringOn  = os.Getenv("CEILING_MUX_RING") == "1"
)

// newURing sets up a ring with room for entries submissions in flight.
func newURing(entries uint32) (*uring, error) {
	if ringOff {
		return nil, errors.New("io_uring turned off (CEILING_MUX_RING=0)")
	}
	var p ringParams
	p.flags = ringSetupCoopTaskrun
	fd, _, e := syscall.RawSyscall(sysIOURingSetup, uintptr(entries), uintptr(unsafe.Pointer(&p)), 0)
	if e == syscall.EINVAL { // a kernel before 5.19: no COOP_TASKRUN
		p = ringParams{}
		fd, _, e = syscall.RawSyscall(sysIOURingSetup, uintptr(entries), uintptr(unsafe.Pointer(&p)), 0)
	}
	if e != 0 {
		// ENOSYS (no io_uring), EPERM (kernel.io_uring_disabled, a
		// seccomp filter), ENOMEM (locked memory limit).
		return nil, fmt.Errorf("io_uring_setup: %w", e)
	}
	r := &uring{fd: int(fd)}
	if p.features&ringFeatSingleMmap == 0 || p.features&ringFeatExtArg == 0 {
		r.close()
		return nil, errors.New("io_uring before Linux 5.11")
	}
	size := max(p.sqOff.array+p.sqEntries*4, p.cqOff.cqes+p.cqEntries*uint32(unsafe.Sizeof(ringCQE{})))
	mem, err := unix.Mmap(r.fd, 0, int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		r.close()
		return nil, fmt.Errorf("io_uring rings: %w", err)
	}
	r.mem = mem
	sqeMem, err := unix.Mmap(r.fd, ringOffSQEs, int(p.sqEntries)*int(unsafe.Sizeof(ringSQE{})),
		unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		r.close()
		return nil, fmt.Errorf("io_uring entries: %w", err)
	}
	r.sqeMem = sqeMem
	u32 := func(off uint32) *uint32 { return (*uint32)(unsafe.Pointer(&mem[off])) }
	r.sqHead, r.sqTail = u32(p.sqOff.head), u32(p.sqOff.tail)
	r.sqMask = *u32(p.sqOff.ringMask)
	r.sqArray = unsafe.Slice(u32(p.sqOff.array), p.sqEntries)
	r.sqes = unsafe.Slice((*ringSQE)(unsafe.Pointer(&sqeMem[0])), p.sqEntries)
	r.cqHead, r.cqTail = u32(p.cqOff.head), u32(p.cqOff.tail)
	r.cqMask = *u32(p.cqOff.ringMask)
	r.cqes = unsafe.Slice((*ringCQE)(unsafe.Pointer(&mem[p.cqOff.cqes])), p.cqEntries)
	r.tail = atomic.LoadUint32(r.sqTail)
	return r, nil
}

// close releases the ring. Requests still in flight are cancelled by the
// kernel.
func (r *uring) close() {
	if r.sqeMem != nil {
		_ = unix.Munmap(r.sqeMem)
	}
	if r.mem != nil {
		_ = unix.Munmap(r.mem)
	}
	_ = unix.Close(r.fd)
	r.mem, r.sqeMem = nil, nil
}

// prep queues one request; enter submits it. The caller keeps the number
// of queued and in-flight requests within the ring's size.
func (r *uring) prep(op uint8, fd int32, addr uintptr, n uint32, opFlags uint32, user uint64) {
	i := r.tail & r.sqMask
	r.sqes[i] = ringSQE{opcode: op, fd: fd, addr: uint64(addr), len: n, opFlags: opFlags, userData: user}
	r.sqArray[i] = i
	r.tail++
}

// enter submits the queued requests and waits until at least one
// completion is there or timeout passed. Like pollWait, it keeps the
// scheduler out. It returns EINTR after a signal (such as the runtime's
// preemption request) and ETIME after the timeout, with the requests
// submitted either way.
func (r *uring) enter(timeout time.Duration) error {
	atomic.StoreUint32(r.sqTail, r.tail)
	toSubmit := r.tail - atomic.LoadUint32(r.sqHead)
	ts := unix.NsecToTimespec(max(timeout, 0).Nanoseconds())
	arg := ringGetEventsArg{ts: uint64(uintptr(unsafe.Pointer(&ts)))}
	_, _, e := syscall.RawSyscall6(sysIOURingEnter, uintptr(r.fd), uintptr(toSubmit), 1,
		ringEnterGetEvents|ringEnterExtArg, uintptr(unsafe.Pointer(&arg)), unsafe.Sizeof(arg))
	runtime.KeepAlive(&ts)
	if e != 0 {
		return e
	}
	return nil
}

// reap appends the completions there are to dst.
func (r *uring) reap(dst []ringCQE) []ringCQE {
	head := atomic.LoadUint32(r.cqHead)
	tail := atomic.LoadUint32(r.cqTail)
	for ; head != tail; head++ {
		dst = append(dst, r.cqes[head&r.cqMask])
	}
	atomic.StoreUint32(r.cqHead, head)
	return dst
}
