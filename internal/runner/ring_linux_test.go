package runner

import (
	"errors"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// testRing sets up a ring, or skips when this kernel or its settings have
// none (the groups then poll, which the pipe tests cover).
func testRing(t *testing.T) *uring {
	t.Helper()
	r, err := newURing(8)
	if err != nil {
		t.Skipf("no io_uring here (%v): groups poll instead", err)
	}
	t.Cleanup(r.close)
	return r
}

// socketPair returns a non-blocking Unix stream socket pair, closed at
// the end of the test.
func socketPair(t *testing.T) [2]int {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fds[0]); unix.Close(fds[1]) })
	return fds
}

// waited reports whether enter's error is one of what a wait returns:
// none (the requests were submitted), ETIME (it timed out) or EINTR (a
// signal, such as the runtime's preemption request).
func waited(err error) bool {
	return err == nil || errors.Is(err, syscall.ETIME) || errors.Is(err, syscall.EINTR)
}

// waitCQEs enters the ring until want completions came, or fails.
func waitCQEs(t *testing.T, r *uring, want int) []ringCQE {
	t.Helper()
	var got []ringCQE
	deadline := time.Now().Add(5 * time.Second)
	for len(got) < want {
		if time.Now().After(deadline) {
			t.Fatalf("%d completions after 5 s, want %d: %+v", len(got), want, got)
		}
		if err := r.enter(100 * time.Millisecond); !waited(err) {
			t.Fatal(err)
		}
		got = r.reap(got)
	}
	return got
}

// TestURing: the ring's sends, receives, polls and cancellations do what
// the groups rely on, on a socket pair: a send completes with its length
// and a recv with the bytes sent; a recv with nothing to read stays in
// flight through a timed-out wait and, cancelled, completes with
// ECANCELED having consumed nothing; a poll completes once the socket
// becomes readable.
func TestURing(t *testing.T) {
	r := testRing(t)
	fds := socketPair(t)
	ptr := func(b []byte) uintptr { return uintptr(unsafe.Pointer(&b[0])) }

	// A recv with nothing to read: the wait times out, nothing completes.
	buf := make([]byte, 16)
	// (io_uring_enter reports the submission when there was one, ETIME
	// when it only waited.)
	r.prep(ringOpRecv, int32(fds[0]), ptr(buf), uint32(len(buf)), 0, 1)
	for range 2 {
		if err := r.enter(20 * time.Millisecond); !waited(err) {
			t.Fatalf("enter with a recv that cannot complete: %v", err)
		}
	}
	if got := r.reap(nil); len(got) != 0 {
		t.Fatalf("completions %+v before anything was sent", got)
	}
	// Cancelled: ECANCELED for the recv, 0 (found) for the cancellation.
	r.prep(ringOpAsyncCancel, -1, 1, 0, 0, ringCancelTag|1)
	res := map[uint64]int32{}
	for _, c := range waitCQEs(t, r, 2) {
		res[c.userData] = c.res
	}
	if res[1] != -int32(syscall.ECANCELED) || res[ringCancelTag|1] != 0 {
		t.Fatalf("cancelled recv: results %v, want -ECANCELED for the recv and 0 for the cancellation", res)
	}

	// A send and a recv of its bytes, submitted together.
	msg := []byte("ceiling")
	r.prep(ringOpSend, int32(fds[1]), ptr(msg), uint32(len(msg)), ringMsgNoSignal, 2)
	r.prep(ringOpRecv, int32(fds[0]), ptr(buf), uint32(len(buf)), 0, 3)
	res = map[uint64]int32{}
	for _, c := range waitCQEs(t, r, 2) {
		res[c.userData] = c.res
	}
	if res[2] != int32(len(msg)) || res[3] != int32(len(msg)) || string(buf[:len(msg)]) != "ceiling" {
		t.Fatalf("send and recv: results %v, received %q; want %d bytes each way and %q", res, buf[:max(res[3], 0)], len(msg), msg)
	}

	// A poll completes when the socket turns readable.
	r.prep(ringOpPollAdd, int32(fds[0]), 0, 0, unix.POLLIN, 4)
	if err := r.enter(20 * time.Millisecond); !waited(err) {
		t.Fatalf("enter with a poll on a socket with nothing to read: %v", err)
	}
	if got := r.reap(nil); len(got) != 0 {
		t.Fatalf("completions %+v before the socket turned readable", got)
	}
	if _, err := unix.Write(fds[1], []byte{1}); err != nil {
		t.Fatal(err)
	}
	c := waitCQEs(t, r, 1)[0]
	if c.userData != 4 || c.res&unix.POLLIN == 0 {
		t.Fatalf("poll: completion %+v, want user 4 with POLLIN", c)
	}
}

// TestURingHotPathAllocs: submitting and reaping allocate nothing.
func TestURingHotPathAllocs(t *testing.T) {
	r := testRing(t)
	fds := socketPair(t)
	msg, buf := []byte{1}, make([]byte, 1)
	cqes := make([]ringCQE, 0, 8)
	allocs := testing.AllocsPerRun(200, func() {
		r.prep(ringOpSend, int32(fds[1]), uintptr(unsafe.Pointer(&msg[0])), 1, ringMsgNoSignal, 1)
		r.prep(ringOpRecv, int32(fds[0]), uintptr(unsafe.Pointer(&buf[0])), 1, 0, 2)
		for n := 0; n < 2; {
			if err := r.enter(time.Second); !waited(err) {
				t.Fatal(err)
			}
			cqes = r.reap(cqes[:0])
			n += len(cqes)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per send and recv through the ring, want 0", allocs)
	}
}
