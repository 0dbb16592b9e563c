//go:build unix

// Package blockio holds the network connections that worker sessions use
// to wait for their server the way a C client does: blocking system calls
// on the worker's own thread, or several workers' sockets polled together
// on one thread (cooperative), instead of Go's netpoller. The PostgreSQL
// and MySQL targets dial their worker sessions through it.
package blockio

import (
	"context"
	"io"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// blockingConn reads and writes a TCP socket with blocking system calls on
// the calling thread, as C clients such as pgbench do, instead of parking
// the goroutine in Go's netpoller. With one request in flight per
// connection, the netpoller's wake-up (epoll, then a futex to hand the
// goroutine to a thread) adds tens of microseconds to every round trip.
// Two flavours: poll (poll(2) then read(2), ordinary system calls) and raw
// (send/recv that keep the scheduler out, see DialRaw; the default). On the
// 2-core development VM, single-connection inserts cost the client about
// 70 µs of CPU per request through the netpoller, 40 µs with poll and
// 22 µs raw, the same as pgbench.
//
// Deadlines (which pgx uses to interrupt a query when its context is
// cancelled) are checked at least every 100 ms while a call blocks. Each
// connection blocked in a read holds an OS thread, which is fine at the
// connection counts a load generator uses.
//
// A third flavour, cooperative (see DialMux and setWaiter), lets several
// connections share one thread: a call that would block hands the socket to
// a waiter (the runner's multiplexer) instead.
type blockingConn struct {
	fd       int
	local    net.Addr
	remote   net.Addr
	rdl, wdl atomic.Int64 // deadlines in Unix nanoseconds, 0 = none
	raw      atomic.Bool  // blocking send/recv without leaving the scheduler (see DialRaw, OrdinaryIO)
	closed   atomic.Bool

	// Cooperative I/O (mux connections only, see setWaiter).
	mux     bool                     // setWaiter is allowed
	waiter  atomic.Pointer[waitFunc] // nil: block as a raw connection does
	ring    atomic.Pointer[RingIO]   // nil: send and recv here (see SetRingIO)
	wrote   atomic.Bool              // last call was a write (see earlyRead)
	early   earlyRead                // used by coopRead only
	counted bool                     // counted in rawConns; guarded by rawMu
}

// earlyRead decides whether a cooperative read that follows a write tries
// recv before handing the socket to the waiter. The reply is often there
// already: when the server's process is woken on the client's core, it
// preempts the client as sendto returns, runs the statement and replies
// before the client runs again. Reading then keeps the client and that
// process taking turns on one core, as pgbench does (it always reads right
// after sending). Waiting first instead costs a poll and two coroutine
// switches, and measured slower: single-row inserts, 4 connections,
// synchronous_commit off, on the 2-core development VM, medians of 5-6
// alternated windows (bench/pg-window-ab.sh): always waiting first 42.5k
// and 44.5k tx/s, always reading first 45.5k and 47.3k, pgbench 47.8k and
// 46.3k. When the reply cannot be there yet (every commit waits for a
// flush), the read is a failed system call per request: always reading
// first lost 6% at 8 connections at the server's durability (16.9k
// against 18.0k). So the read is tried while it finds the reply often
// enough (an estimate over the last few tries), and otherwise once every
// 16 writes, to notice when that changes. Measured with this rule: 47.2k
// against 42.5k waiting first (pgbench 47.8k) CPU-bound, and 16.9k
// against 17.4k (pgbench 17.2k) flush-bound, 3% less there, inside the
// spread of pgbench against itself (bench/pgbench-compare.sh SELF=1).
type earlyRead struct {
	miss   int32  // moving estimate of the share of tries that found nothing, in 1/earlyScale; 0 at first
	writes uint32 // reads after a write, for the periodic try
}

const (
	earlyScale   = 256
	earlyMaxMiss = earlyScale * 7 / 8 // try while at least 1 in 8 finds the reply
	earlyEvery   = 16                 // otherwise try once every 16
)

// try reports whether to recv before waiting; the caller reports what the
// recv found with note.
func (r *earlyRead) try() bool {
	r.writes++
	return r.miss <= earlyMaxMiss || r.writes%earlyEvery == 0
}

// note records whether a try found data (an exponential moving average
// over about the last 8 tries).
func (r *earlyRead) note(found bool) {
	v := int32(earlyScale)
	if found {
		v = 0
	}
	r.miss += (v - r.miss) / 8
}

// waitFunc is a target.Cooperative waiter.
type waitFunc = func(fd int, write bool) bool

// RingIO runs one send (write) or recv of p on fd on behalf of a
// cooperative connection, through the runner's io_uring (see
// target.RingCooperative): it returns what the system call would (bytes,
// or an errno, EAGAIN when the wait was cut short so that the connection
// re-checks its deadlines), or ok false when it cannot (it was called from
// another goroutine than the waiter's coroutine), and the connection then
// does the call itself.
type RingIO = func(fd int, write bool, p []byte) (n int, errno syscall.Errno, ok bool)

// rawSlice is how long a raw send or recv blocks before it returns to
// re-check the deadlines (SO_RCVTIMEO / SO_SNDTIMEO).
const rawSlice = 100 * time.Millisecond

// Raw connections hold their goroutine's P while blocked, so the process
// needs a P per raw connection plus one for everything else (the runner's
// clock, the samplers, the garbage collector).
//
// A connection that turns cooperative no longer needs its P: the extra Ps
// are given back if nobody else changed GOMAXPROCS since (idle Ps are not
// free: the garbage collector runs a mark worker on each).
var (
	rawMu    sync.Mutex
	rawConns int
	rawSet   int // GOMAXPROCS as rawCount last set it; 0 before
	rawBase  int // GOMAXPROCS before rawCount raised it
)

// rawCount counts c in rawConns (on) or out, raising GOMAXPROCS when
// needed, and lowering it (never below rawBase) when c leaves for
// cooperative I/O (release).
func (c *blockingConn) rawCount(on, release bool) {
	rawMu.Lock()
	defer rawMu.Unlock()
	if c.counted == on {
		return
	}
	c.counted = on
	cur := runtime.GOMAXPROCS(0)
	if on {
		rawConns++
		if cur < rawConns+1 {
			if cur != rawSet {
				rawBase = cur
			}
			rawSet = rawConns + 1
			runtime.GOMAXPROCS(rawSet)
		}
		return
	}
	rawConns--
	if want := max(rawBase, rawConns+1); release && cur == rawSet && want < cur {
		rawSet = want
		runtime.GOMAXPROCS(want)
	}
}

// Supported reports whether this system has the connections of this
// package; elsewhere the dial functions are nil.
const Supported = true

// DialRaw is DialBlocking whose connections send and receive with raw
// system calls (syscall.RawSyscall6): the goroutine keeps its P and its
// thread while the call blocks in the kernel, exactly like a C client's
// thread. The ordinary path (entersyscall/exitsyscall) lets the runtime's
// monitor hand the P to another thread whenever a call blocks for more than
// ~20 µs, which on a round trip to the server is every call: a futex wake,
// an epoll wait and several monitor wake-ups per request, measured with
// strace on single-row inserts. A raw call can still be interrupted: the
// runtime's preemption signal ends it with EINTR (recv/send with a timeout
// set are never restarted), and the connection then yields its P.
func DialRaw(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := DialBlocking(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	bc, ok := c.(*blockingConn)
	if !ok {
		return c, nil
	}
	tv := unix.NsecToTimeval(rawSlice.Nanoseconds())
	if err := unix.SetsockoptTimeval(bc.fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		bc.Close()
		return nil, err
	}
	if err := unix.SetsockoptTimeval(bc.fd, unix.SOL_SOCKET, unix.SO_SNDTIMEO, &tv); err != nil {
		bc.Close()
		return nil, err
	}
	bc.raw.Store(true)
	bc.rawCount(true, false)
	return bc, nil
}

// OrdinaryIO makes a raw connection under nc wait through ordinary system
// calls, as a poll connection does, until the returned function is called;
// for any other connection it does nothing. A bulk transfer (COPY) keeps a
// writer and a reader goroutine on the connection for seconds: blocked in
// raw calls, they look to the runtime as if they were running, so every
// stack scan of the garbage collector (which such a transfer's allocations
// trigger often) has to interrupt them with a signal and spin until they
// yield. Measured on the 2-core development VM, a 2-warehouse TPC-C load
// on PostgreSQL: the data took 3.4-4.5 s raw against 1.9-2.3 s with
// ordinary calls (or Go's netpoller), and the client 3.1-4.4 s of CPU
// against 1.4-1.7 s.
func OrdinaryIO(nc net.Conn) (restore func()) {
	c, ok := nc.(*blockingConn)
	if !ok || !c.raw.Swap(false) {
		return func() {}
	}
	return func() { c.raw.Store(true) }
}

// DialMux is DialRaw whose connections may also turn cooperative
// (setWaiter): the runner then serves several of them from one thread, as
// pgbench -j does, instead of giving each its own thread.
func DialMux(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := DialRaw(ctx, network, addr)
	if bc, ok := c.(*blockingConn); ok {
		bc.mux = true
	}
	return c, err
}

// DialMuxPoll is DialMux for many workers: until (unless) it turns
// cooperative, the connection waits in poll(2) through ordinary system
// calls, which give the goroutine's P back, instead of holding a P as a
// raw one does. A run that is not multiplexed (an open loop, a workload
// that pauses) then needs a thread per blocked connection but not a P per
// connection.
func DialMuxPoll(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := DialBlocking(ctx, network, addr)
	if bc, ok := c.(*blockingConn); ok {
		bc.mux = true
	}
	return c, err
}

// setWaiter implements target.Cooperative for a mux connection (false for
// any other). With a waiter, send and recv never block (MSG_DONTWAIT): when
// the socket is not ready, the connection calls wait, which suspends the
// calling coroutine until the socket is ready or ~100 ms passed, then it
// re-checks its deadlines and retries. If wait returns false (it was called
// from a goroutine that is not the waiter's coroutine, such as pgconn's
// background reader after a slow write), the call waits in poll(2).
// A cooperative connection does not hold a P while it waits, so it is not
// counted for GOMAXPROCS.
// Raw reports whether nc is a raw connection (DialRaw, DialMux) that is
// not waiting through ordinary system calls at the moment (OrdinaryIO).
func Raw(nc net.Conn) bool {
	bc, ok := nc.(*blockingConn)
	return ok && bc.raw.Load()
}

// SetWaiter makes nc, when it is a mux connection (DialMux, DialMuxPoll),
// cooperative: its I/O then gives way through wait (see setWaiter); nil
// makes it block again. It reports false for any other connection.
func SetWaiter(nc net.Conn, wait func(fd int, write bool) bool) bool {
	bc, ok := nc.(*blockingConn)
	return ok && bc.setWaiter(wait)
}

// SetRingIO makes a cooperative connection (one with a waiter, see
// SetWaiter) send and receive through io (nil: by itself again). It
// reports false for any other connection. SetWaiter(nil) also removes it.
func SetRingIO(nc net.Conn, io RingIO) bool {
	bc, ok := nc.(*blockingConn)
	if !ok || bc.waiter.Load() == nil {
		return false
	}
	if io == nil {
		bc.ring.Store(nil)
	} else {
		bc.ring.Store(&io)
	}
	return true
}

func (c *blockingConn) setWaiter(wait waitFunc) bool {
	if !c.mux || c.closed.Load() {
		return false
	}
	if wait == nil {
		c.ring.Store(nil)
		c.waiter.Store(nil)
		if c.raw.Load() {
			c.rawCount(true, false)
		}
		return true
	}
	c.waiter.Store(&wait)
	c.rawCount(false, true)
	return true
}

// DialBlocking is a pgconn.DialFunc returning a blockingConn for TCP and an
// ordinary connection for anything else (Unix sockets).
func DialBlocking(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return c, nil
	}
	tc.SetNoDelay(true)
	// Duplicate the descriptor by hand: TCPConn.File would register the
	// duplicate with the netpoller, whose thread would then wake on every
	// packet of the connection (measured: one epoll wake-up per request).
	// Closing tc removes the original's registration.
	rc, err := tc.SyscallConn()
	if err != nil {
		tc.Close()
		return nil, err
	}
	fd := -1
	var derr error
	if err := rc.Control(func(s uintptr) { fd, derr = unix.FcntlInt(s, unix.F_DUPFD_CLOEXEC, 0) }); err != nil {
		derr = err
	}
	la, ra := tc.LocalAddr(), tc.RemoteAddr()
	tc.Close()
	if derr != nil {
		if fd >= 0 {
			unix.Close(fd)
		}
		return nil, derr
	}
	if err := unix.SetNonblock(fd, false); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return &blockingConn{fd: fd, local: la, remote: ra}, nil
}

var errTimeout = &timeoutErr{}

type timeoutErr struct{}

func (*timeoutErr) Error() string   { return "i/o timeout" }
func (*timeoutErr) Timeout() bool   { return true }
func (*timeoutErr) Temporary() bool { return true }

func (c *blockingConn) wait(events int16, deadline *atomic.Int64) error {
	for {
		dl := deadline.Load() // may be set while we wait
		ms := -1
		if dl != 0 {
			rem := time.Until(time.Unix(0, dl))
			if rem <= 0 {
				return errTimeout
			}
			ms = int(rem/time.Millisecond) + 1
		}
		if ms < 0 || ms > 100 {
			ms = 100 // re-check deadlines set meanwhile
		}
		fds := []unix.PollFd{{Fd: int32(c.fd), Events: events}}
		n, err := unix.Poll(fds, ms)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		if n > 0 {
			return nil
		}
	}
}

// rawIO runs one send (write) or recv on the socket without leaving the
// scheduler. It blocks at most rawSlice; with MSG_DONTWAIT in flags, not at
// all.
func (c *blockingConn) rawIO(write bool, p []byte, flags uintptr) (int, syscall.Errno) {
	if len(p) == 0 {
		return 0, 0
	}
	trap := uintptr(unix.SYS_RECVFROM)
	if write {
		trap, flags = unix.SYS_SENDTO, flags|unix.MSG_NOSIGNAL
	}
	n, _, e := syscall.RawSyscall6(trap, uintptr(c.fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)), flags, 0, 0)
	runtime.KeepAlive(p)
	return int(n), e
}

// expired reports errTimeout once the deadline has passed.
func expired(deadline *atomic.Int64) error {
	if dl := deadline.Load(); dl != 0 && time.Now().UnixNano() >= dl {
		return errTimeout
	}
	return nil
}

// readable reports why the connection cannot be read now: its read
// deadline passed, or it was closed.
func (c *blockingConn) readable() error {
	if err := expired(&c.rdl); err != nil {
		return err
	}
	if c.closed.Load() {
		return net.ErrClosed
	}
	return nil
}

func (c *blockingConn) rawRead(p []byte) (int, error) {
	for {
		if err := c.readable(); err != nil {
			return 0, err
		}
		n, e := c.rawIO(false, p, 0)
		switch e {
		case 0:
			if n == 0 && len(p) > 0 {
				return 0, io.EOF
			}
			return n, nil
		case syscall.EINTR:
			runtime.Gosched() // a preemption or stop-the-world request
		case syscall.EAGAIN: // rawSlice passed: re-check the deadline
		default:
			return 0, e
		}
	}
}

func (c *blockingConn) rawWrite(p []byte) (int, error) {
	total := 0
	for total < len(p) {
		if err := expired(&c.wdl); err != nil {
			return total, err
		}
		n, e := c.rawIO(true, p[total:], 0)
		switch e {
		case 0:
			total += n
		case syscall.EINTR:
			runtime.Gosched()
		case syscall.EAGAIN:
		default:
			return total, e
		}
	}
	return total, nil
}

// coopRead is a cooperative Read (see setWaiter). Right after a write it
// tries recv first only while that tends to find the reply (earlyRead).
func (c *blockingConn) coopRead(p []byte, wait *waitFunc) (int, error) {
	if ring := c.ring.Load(); ring != nil && len(p) > 0 {
		// The rest of a reply (a read that does not follow a write) is
		// usually there already: one recv, not a trip through the ring.
		if !c.wrote.Swap(false) {
			switch n, e := c.rawIO(false, p, unix.MSG_DONTWAIT); e {
			case 0:
				if n == 0 {
					return 0, io.EOF
				}
				return n, nil
			case syscall.EAGAIN, syscall.EINTR:
			default:
				return 0, e
			}
		}
		for {
			if err := c.readable(); err != nil {
				return 0, err
			}
			n, e, ok := (*ring)(c.fd, false, p)
			if !ok {
				break
			}
			switch e {
			case 0:
				if n == 0 {
					return 0, io.EOF
				}
				return n, nil
			case syscall.EINTR, syscall.EAGAIN, syscall.ECANCELED:
			default:
				return 0, e
			}
		}
	}
	afterWrite := c.wrote.Swap(false)
	ready := !afterWrite || c.early.try()
	trying := afterWrite && ready
	for {
		if err := c.readable(); err != nil {
			return 0, err
		}
		if ready {
			n, e := c.rawIO(false, p, unix.MSG_DONTWAIT)
			if trying {
				c.early.note(e == 0)
				trying = false
			}
			switch e {
			case 0:
				if n == 0 && len(p) > 0 {
					return 0, io.EOF
				}
				return n, nil
			case syscall.EINTR:
				continue
			case syscall.EAGAIN:
			default:
				return 0, e
			}
		}
		ready = true
		if !(*wait)(c.fd, false) {
			if err := c.wait(unix.POLLIN, &c.rdl); err != nil {
				return 0, err
			}
		}
	}
}

// coopWrite is a cooperative Write (see setWaiter).
func (c *blockingConn) coopWrite(p []byte, wait *waitFunc) (int, error) {
	ring := c.ring.Load()
	total := 0
	for total < len(p) {
		if err := expired(&c.wdl); err != nil {
			return total, err
		}
		if ring != nil {
			if n, e, ok := (*ring)(c.fd, true, p[total:]); ok {
				switch e {
				case 0:
					total += n
				case syscall.EINTR, syscall.EAGAIN, syscall.ECANCELED:
				default:
					return total, e
				}
				continue
			}
		}
		n, e := c.rawIO(true, p[total:], unix.MSG_DONTWAIT)
		switch e {
		case 0:
			total += n
		case syscall.EINTR:
		case syscall.EAGAIN:
			if !(*wait)(c.fd, true) {
				if err := c.wait(unix.POLLOUT, &c.wdl); err != nil {
					return total, err
				}
			}
		default:
			return total, e
		}
	}
	c.wrote.Store(true)
	return total, nil
}

func (c *blockingConn) Read(p []byte) (int, error) {
	if w := c.waiter.Load(); w != nil {
		return c.coopRead(p, w)
	}
	if c.raw.Load() {
		return c.rawRead(p)
	}
	if err := c.wait(unix.POLLIN, &c.rdl); err != nil {
		return 0, err
	}
	for {
		n, err := unix.Read(c.fd, p)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return 0, err
		}
		if n == 0 {
			return 0, io.EOF
		}
		return n, nil
	}
}

func (c *blockingConn) Write(p []byte) (int, error) {
	if w := c.waiter.Load(); w != nil {
		return c.coopWrite(p, w)
	}
	if c.raw.Load() {
		return c.rawWrite(p)
	}
	total := 0
	for total < len(p) {
		n, err := unix.Write(c.fd, p[total:])
		if err == unix.EINTR {
			continue
		}
		if err == unix.EAGAIN {
			if err := c.wait(unix.POLLOUT, &c.wdl); err != nil {
				return total, err
			}
			continue
		}
		if err != nil {
			return total, err
		}
		total += n
	}
	return total, nil
}

// Close closes the socket. It is safe to call more than once.
func (c *blockingConn) Close() error {
	if c.closed.Swap(true) {
		return nil
	}
	c.rawCount(false, false)
	return unix.Close(c.fd)
}
func (c *blockingConn) LocalAddr() net.Addr  { return c.local }
func (c *blockingConn) RemoteAddr() net.Addr { return c.remote }
func (c *blockingConn) SetDeadline(t time.Time) error {
	c.SetReadDeadline(t)
	return c.SetWriteDeadline(t)
}
func nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}
func (c *blockingConn) SetReadDeadline(t time.Time) error  { c.rdl.Store(nanos(t)); return nil }
func (c *blockingConn) SetWriteDeadline(t time.Time) error { c.wdl.Store(nanos(t)); return nil }
