package runner

import (
	"iter"
	"testing"

	"golang.org/x/sys/unix"
)

// TestCurg: curg is stable within a goroutine, differs between goroutines,
// and tells an iter.Pull coroutine from the goroutine that resumes it (the
// waiter's test, see muxGroup.waiter).
func TestCurg(t *testing.T) {
	me := curg()
	if me == 0 || curg() != me {
		t.Fatalf("curg() = %#x then %#x, want the same non-zero value", me, curg())
	}
	other := make(chan uintptr)
	go func() { other <- curg() }()
	if o := <-other; o == me && curgIsGoroutine {
		t.Fatalf("another goroutine has the same curg %#x", o)
	}
	var inside []uintptr
	next, stop := iter.Pull(func(yield func(int) bool) {
		for i := 0; i < 3; i++ {
			inside = append(inside, curg())
			if !yield(i) {
				return
			}
		}
	})
	defer stop()
	for range 3 {
		next()
	}
	if inside[0] != inside[1] || inside[1] != inside[2] {
		t.Fatalf("the coroutine's curg changed between resumptions: %#x", inside)
	}
	if inside[0] == me && curgIsGoroutine {
		t.Fatalf("the coroutine has its caller's curg %#x", me)
	}
}

// BenchmarkWaiterIdentity: the waiter's check of who calls it, per
// request: curg against the gettid system call it replaced.
func BenchmarkWaiterIdentity(b *testing.B) {
	b.Run("curg", func(b *testing.B) {
		var n uintptr
		for range b.N {
			n += curg()
		}
		_ = n
	})
	b.Run("gettid", func(b *testing.B) {
		var n int
		for range b.N {
			n += unix.Gettid()
		}
		_ = n
	})
}
