//go:build unix

package blockio

import (
	"context"
	"errors"
	"io"
	"net"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// listenServe listens on a loopback port and serves each connection with
// serve on its own goroutine, closing it afterwards.
func listenServe(t *testing.T, serve func(c net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				serve(c)
			}()
		}
	}()
	return ln.Addr().String()
}

// listenEcho serves connections that echo what they get (echo) or drop it.
func listenEcho(t *testing.T, echo bool) string {
	return listenServe(t, func(c net.Conn) {
		if echo {
			io.Copy(c, c)
		} else {
			io.Copy(io.Discard, c)
		}
	})
}

// dials are the blocking connection flavours under test.
var dials = []struct {
	name string
	dial func(context.Context, string, string) (net.Conn, error)
}{{"poll", DialBlocking}, {"raw", DialRaw}}

func TestBlockingConnRoundTrip(t *testing.T) {
	for _, d := range dials {
		t.Run(d.name, func(t *testing.T) { testRoundTrip(t, d.dial) })
	}
}

func testRoundTrip(t *testing.T, dial func(context.Context, string, string) (net.Conn, error)) {
	c, err := dial(context.Background(), "tcp", listenEcho(t, true))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, ok := c.(*blockingConn); !ok {
		t.Fatalf("DialBlocking over TCP returned %T, want *blockingConn", c)
	}
	echoRoundTrip(t, c)
}

// echoRoundTrip writes a message to c, connected to listenEcho's echo
// server, and reads it back.
func echoRoundTrip(t *testing.T, c net.Conn) {
	t.Helper()
	msg := []byte("hello, server")
	if n, err := c.Write(msg); err != nil || n != len(msg) {
		t.Fatalf("write: %d, %v", n, err)
	}
	buf := make([]byte, len(msg))
	if _, err := io.ReadFull(c, buf); err != nil || string(buf) != string(msg) {
		t.Fatalf("read back %q, %v", buf, err)
	}
}

// TestBlockingConnDeadlineInterruptsRead: pgx cancels a query by setting a
// deadline on the connection while a read is blocked; the read must return
// a timeout error instead of waiting for the server.
func TestBlockingConnDeadlineInterruptsRead(t *testing.T) {
	for _, d := range dials {
		t.Run(d.name, func(t *testing.T) { testDeadline(t, d.dial) })
	}
}

func testDeadline(t *testing.T, dial func(context.Context, string, string) (net.Conn, error)) {
	c, err := dial(context.Background(), "tcp", listenEcho(t, false))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	readUntilDeadline(t, c, 20*time.Millisecond)
}

func TestBlockingConnPeerClose(t *testing.T) {
	for _, d := range dials {
		t.Run(d.name, func(t *testing.T) { testPeerClose(t, d.dial) })
	}
}

func testPeerClose(t *testing.T, dial func(context.Context, string, string) (net.Conn, error)) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err == nil {
			c.Close()
		}
	}()
	c, err := dial(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Read(make([]byte, 10)); !errors.Is(err, io.EOF) {
		t.Fatalf("read after the peer closed: %v, want io.EOF", err)
	}
}

// TestRawConnAllowsStopTheWorld: a raw read blocked in the kernel holds its
// P; a garbage collection (which stops the world) must still complete while
// the read waits, and the read must then still return the data.
func TestRawConnAllowsStopTheWorld(t *testing.T) {
	c, err := DialRaw(context.Background(), "tcp", listenEcho(t, true))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if bc, ok := c.(*blockingConn); !ok || !bc.raw.Load() {
		t.Fatalf("DialRaw over TCP returned %T, want a raw *blockingConn", c)
	}
	got := make(chan string, 1)
	go func() {
		buf := make([]byte, 4)
		_, err := io.ReadFull(c, buf)
		if err != nil {
			got <- err.Error()
			return
		}
		got <- string(buf)
	}()
	time.Sleep(20 * time.Millisecond) // let the read block
	gcDone := make(chan struct{})
	go func() { runtime.GC(); close(gcDone) }()
	select {
	case <-gcDone:
	case <-time.After(10 * time.Second):
		t.Fatal("a garbage collection did not complete while a raw read was blocked")
	}
	if _, err := c.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	select {
	case s := <-got:
		if s != "ping" {
			t.Fatalf("read %q, want ping", s)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the raw read did not return the echoed data")
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("second close: %v", err)
	}
}

// pollWaiter is a cooperative waiter that waits in poll(2) itself for at
// most slice, as the runner's group does for a suspended coroutine; it
// counts its calls.
type pollWaiter struct {
	slice time.Duration
	calls atomic.Int64
}

func (w *pollWaiter) wait(fd int, write bool) bool {
	w.calls.Add(1)
	ev := int16(unix.POLLIN)
	if write {
		ev = unix.POLLOUT
	}
	unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: ev}}, int(w.slice/time.Millisecond))
	return true
}

// dialCoop dials a mux connection and makes it cooperative with w.
func dialCoop(t *testing.T, addr string, w *pollWaiter) *blockingConn {
	t.Helper()
	c, err := DialMux(context.Background(), "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	bc, ok := c.(*blockingConn)
	if !ok || !bc.raw.Load() {
		t.Fatalf("DialMux over TCP returned %T, want a raw *blockingConn", c)
	}
	if !bc.setWaiter(w.wait) {
		t.Fatal("a mux connection refused a waiter")
	}
	return bc
}

// TestCoopRoundTrip: a cooperative connection waits for the reply through
// its waiter, not in the kernel, and reads it back. (Its reads right after
// a write wait first here, as when they rarely find the reply: see
// TestCoopEarlyRead.)
func TestCoopRoundTrip(t *testing.T) {
	w := &pollWaiter{slice: 100 * time.Millisecond}
	c := dialCoop(t, listenEcho(t, true), w)
	c.early.miss = earlyScale
	for i := 0; i < 3; i++ {
		echoRoundTrip(t, c)
	}
	if w.calls.Load() < 3 {
		t.Fatalf("the waiter was called %d times for 3 round trips, want at least 3", w.calls.Load())
	}
}

// TestCoopEarlyRead: a read right after a write tries recv before the
// waiter while such tries tend to find the reply, and waits first once
// they do not.
func TestCoopEarlyRead(t *testing.T) {
	// The peer sends its line as soon as it has accepted, so that it is in
	// the socket before the client writes.
	addr := listenServe(t, func(c net.Conn) {
		c.Write([]byte("ready\n"))
		io.Copy(io.Discard, c)
	})
	for _, tc := range []struct {
		name      string
		miss      int32
		wantCalls int64
	}{{"tries first", 0, 0}, {"waits first", earlyScale, 1}} {
		t.Run(tc.name, func(t *testing.T) {
			w := &pollWaiter{slice: 100 * time.Millisecond}
			c := dialCoop(t, addr, w)
			c.early.miss = tc.miss
			pfd := []unix.PollFd{{Fd: int32(c.fd), Events: unix.POLLIN}}
			if n, err := unix.Poll(pfd, 5000); n != 1 || err != nil {
				t.Fatalf("the peer's line did not arrive: %d, %v", n, err)
			}
			if _, err := c.Write([]byte("ping\n")); err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 16)
			n, err := c.Read(buf)
			if err != nil || string(buf[:n]) != "ready\n" {
				t.Fatalf("read %q, %v; want the peer's line", buf[:n], err)
			}
			if got := w.calls.Load(); got != tc.wantCalls {
				t.Fatalf("the waiter was called %d times, want %d", got, tc.wantCalls)
			}
		})
	}
}

// TestEarlyReadEstimate: tries stop after a run of misses, except one in
// earlyEvery, and resume after a try finds the reply.
func TestEarlyReadEstimate(t *testing.T) {
	var r earlyRead
	if !r.try() {
		t.Fatal("a new connection does not try")
	}
	for range 40 {
		r.note(false)
	}
	tries := 0
	for range 2 * earlyEvery {
		if r.try() {
			tries++
		}
	}
	if tries != 2 {
		t.Fatalf("after 40 misses, %d tries in %d reads after a write, want 2", tries, 2*earlyEvery)
	}
	r.note(true)
	if !r.try() {
		t.Fatal("a try that found the reply did not resume trying")
	}
	// At pgbench's rate of success (about 1 in 3), it keeps trying.
	r = earlyRead{}
	for i := range 300 {
		r.note(i%3 == 0)
		if !r.try() {
			t.Fatalf("stopped trying after %d tries at 1 hit in 3 (estimate %d)", i+1, r.miss)
		}
	}
}

// TestCoopDeadlineInterruptsRead: a cooperative read whose waiter keeps
// returning (as the runner's group does every 100 ms) must notice a
// deadline set meanwhile and return a timeout error.
func TestCoopDeadlineInterruptsRead(t *testing.T) {
	w := &pollWaiter{slice: 20 * time.Millisecond}
	c := dialCoop(t, listenEcho(t, false), w)
	readUntilDeadline(t, c, 50*time.Millisecond)
	if w.calls.Load() == 0 {
		t.Fatal("the read never went through its waiter")
	}
}

// TestCoopWaiterDeclines: when the waiter cannot suspend its caller (it
// returns false), the connection waits by itself and still gets the data.
func TestCoopWaiterDeclines(t *testing.T) {
	var calls atomic.Int64
	c, err := DialMux(context.Background(), "tcp", listenEcho(t, true))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	bc := c.(*blockingConn)
	bc.setWaiter(func(int, bool) bool { calls.Add(1); return false })
	go func() {
		time.Sleep(50 * time.Millisecond)
		c.Write([]byte("ping"))
	}()
	buf := make([]byte, 4)
	if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "ping" {
		t.Fatalf("read %q, %v; want ping", buf, err)
	}
	if calls.Load() == 0 {
		t.Fatal("the waiter was never asked")
	}
}

// TestCoopOnlyMux: only mux connections accept a waiter; raw and poll
// connections keep their blocking I/O.
func TestCoopOnlyMux(t *testing.T) {
	addr := listenEcho(t, true)
	for _, d := range dials {
		c, err := d.dial(context.Background(), "tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		if c.(*blockingConn).setWaiter(func(int, bool) bool { return true }) {
			t.Errorf("%s connection accepted a waiter", d.name)
		}
		c.Close()
	}
}

// rawCounted returns how many connections rawCount counts as raw.
func rawCounted() int {
	rawMu.Lock()
	defer rawMu.Unlock()
	return rawConns
}

// TestCoopReleasesProcs: a raw connection holds a P (GOMAXPROCS counts it);
// once cooperative it does not, and the extra P is given back.
func TestCoopReleasesProcs(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	addr := listenEcho(t, true)
	before := rawCounted()
	var conns []*blockingConn
	for i := 0; i < 3; i++ {
		c, err := DialMux(context.Background(), "tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns = append(conns, c.(*blockingConn))
	}
	raised := runtime.GOMAXPROCS(0)
	if raised < before+3+1 {
		t.Fatalf("GOMAXPROCS %d with %d raw connections, want at least %d", raised, before+3, before+3+1)
	}
	w := &pollWaiter{slice: 10 * time.Millisecond}
	for _, c := range conns {
		c.setWaiter(w.wait)
	}
	after := rawCounted()
	if after != before {
		t.Fatalf("raw connections counted: %d after turning cooperative, want %d", after, before)
	}
	if got := runtime.GOMAXPROCS(0); got >= raised {
		t.Fatalf("GOMAXPROCS stayed %d after the connections turned cooperative", got)
	}
	conns[0].setWaiter(nil)
	back := rawCounted()
	if back != before+1 {
		t.Fatalf("raw connections counted: %d after one went back to blocking, want %d", back, before+1)
	}
}

// TestMuxPollHoldsNoProc: a connection dialled for many workers
// (DialMuxPoll) neither holds a P nor is counted as raw, whether it is
// cooperative or back to blocking, and it works both ways.
func TestMuxPollHoldsNoProc(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	addr := listenEcho(t, true)
	before := rawCounted()
	procs := runtime.GOMAXPROCS(0)
	c, err := DialMuxPoll(context.Background(), "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	bc, ok := c.(*blockingConn)
	if !ok || bc.raw.Load() || !bc.mux {
		t.Fatalf("DialMuxPoll over TCP returned %T (raw %v), want a mux, non-raw *blockingConn", c, ok && bc.raw.Load())
	}
	counted := func(when string) {
		t.Helper()
		if n := rawCounted(); n != before || runtime.GOMAXPROCS(0) != procs {
			t.Fatalf("%s: %d raw connections counted, GOMAXPROCS %d; want %d and %d", when, rawCounted(), runtime.GOMAXPROCS(0), before, procs)
		}
	}
	counted("dialled")
	echoRoundTrip(t, bc)
	w := &pollWaiter{slice: 100 * time.Millisecond}
	if !bc.setWaiter(w.wait) {
		t.Fatal("a mux-poll connection refused a waiter")
	}
	bc.early.miss = earlyScale // wait first after the write (see TestCoopEarlyRead)
	echoRoundTrip(t, bc)
	if w.calls.Load() == 0 {
		t.Fatal("the cooperative round trip never went through the waiter")
	}
	counted("cooperative")
	bc.setWaiter(nil)
	echoRoundTrip(t, bc)
	counted("back to blocking")
}

// readUntilDeadline blocks a read on c (the peer sends nothing), sets a
// read deadline in the past after the given delay, and checks that the
// read returns a timeout error promptly.
func readUntilDeadline(t *testing.T, c net.Conn, after time.Duration) {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := c.Read(make([]byte, 10))
		done <- err
	}()
	time.Sleep(after)
	if err := c.SetReadDeadline(time.Now()); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() {
			t.Fatalf("read returned %v, want a timeout error", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("read did not return after its deadline passed")
	}
}

// TestOrdinaryIO: a raw connection waits through ordinary system calls
// until the restore function runs, then is raw again; on any other
// connection OrdinaryIO changes nothing.
func TestOrdinaryIO(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skipf("no loopback: %v", err)
	}
	defer ln.Close()
	ctx := context.Background()
	for _, d := range []struct {
		name string
		dial func(context.Context, string, string) (net.Conn, error)
		raw  bool
	}{{"raw", DialRaw, true}, {"poll", DialBlocking, false}} {
		c, err := d.dial(ctx, "tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		bc := c.(*blockingConn)
		if Raw(c) != d.raw {
			t.Errorf("%s: Raw = %v, want %v", d.name, Raw(c), d.raw)
		}
		restore := OrdinaryIO(c)
		if bc.raw.Load() {
			t.Errorf("%s: still raw inside OrdinaryIO", d.name)
		}
		restore()
		if bc.raw.Load() != d.raw {
			t.Errorf("%s: raw %v after restore, want %v", d.name, bc.raw.Load(), d.raw)
		}
		c.Close()
	}
	OrdinaryIO(nil)() // not a blockingConn: nothing to do
}
