package postgres

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
// (send/recv that keep the scheduler out, see dialRaw; the default). On the
// 2-core development VM, single-connection inserts cost the client about
// 70 µs of CPU per request through the netpoller, 40 µs with poll and
// 22 µs raw, the same as pgbench.
//
// Deadlines (which pgx uses to interrupt a query when its context is
// cancelled) are checked at least every 100 ms while a call blocks. Each
// connection blocked in a read holds an OS thread, which is fine at the
// connection counts a load generator uses.
type blockingConn struct {
	fd       int
	local    net.Addr
	remote   net.Addr
	rdl, wdl atomic.Int64 // deadlines in Unix nanoseconds, 0 = none
	raw      bool         // blocking send/recv without leaving the scheduler (see dialRaw)
	closed   atomic.Bool
}

// rawSlice is how long a raw send or recv blocks before it returns to
// re-check the deadlines (SO_RCVTIMEO / SO_SNDTIMEO).
const rawSlice = 100 * time.Millisecond

// Raw connections hold their goroutine's P while blocked, so the process
// needs a P per raw connection plus one for everything else (the runner's
// clock, the samplers, the garbage collector).
var (
	rawMu    sync.Mutex
	rawConns int
)

func rawOpened() {
	rawMu.Lock()
	defer rawMu.Unlock()
	rawConns++
	if runtime.GOMAXPROCS(0) < rawConns+1 {
		runtime.GOMAXPROCS(rawConns + 1)
	}
}

func rawClosed() {
	rawMu.Lock()
	defer rawMu.Unlock()
	rawConns--
}

// dialRaw is dialBlocking whose connections send and receive with raw
// system calls (syscall.RawSyscall6): the goroutine keeps its P and its
// thread while the call blocks in the kernel, exactly like a C client's
// thread. The ordinary path (entersyscall/exitsyscall) lets the runtime's
// monitor hand the P to another thread whenever a call blocks for more than
// ~20 µs, which on a round trip to the server is every call: a futex wake,
// an epoll wait and several monitor wake-ups per request, measured with
// strace on single-row inserts. A raw call can still be interrupted: the
// runtime's preemption signal ends it with EINTR (recv/send with a timeout
// set are never restarted), and the connection then yields its P.
func dialRaw(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := dialBlocking(ctx, network, addr)
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
	bc.raw = true
	rawOpened()
	return bc, nil
}

// dialBlocking is a pgconn.DialFunc returning a blockingConn for TCP and an
// ordinary connection for anything else (Unix sockets).
func dialBlocking(ctx context.Context, network, addr string) (net.Conn, error) {
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
// scheduler. It blocks at most rawSlice.
func (c *blockingConn) rawIO(write bool, p []byte) (int, syscall.Errno) {
	if len(p) == 0 {
		return 0, 0
	}
	trap := uintptr(syscall.SYS_RECVFROM)
	flags := uintptr(0)
	if write {
		trap, flags = syscall.SYS_SENDTO, unix.MSG_NOSIGNAL
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

func (c *blockingConn) rawRead(p []byte) (int, error) {
	for {
		if err := expired(&c.rdl); err != nil {
			return 0, err
		}
		if c.closed.Load() {
			return 0, net.ErrClosed
		}
		n, e := c.rawIO(false, p)
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
		n, e := c.rawIO(true, p[total:])
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

func (c *blockingConn) Read(p []byte) (int, error) {
	if c.raw {
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
	if c.raw {
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
	if c.raw {
		rawClosed()
	}
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
