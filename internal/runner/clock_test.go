package runner

import (
	"testing"
	"time"
)

// TestSleepUntilDeadline: the real clock's sleeps, fine (under coarseWait)
// or coarse then fine, return at or after their deadline, with an ordinary
// sleep or one that keeps the P (a worker whose connection holds one,
// target.PHolder), without allocating; a closed stop ends a coarse sleep.
func TestSleepUntilDeadline(t *testing.T) {
	stop := make(chan struct{})
	s := realClock{}.newSleeper(stop)
	for _, holdP := range []bool{false, true} {
		for _, d := range []time.Duration{300 * time.Microsecond, 2 * time.Millisecond, 6 * time.Millisecond} {
			at := time.Now().Add(d)
			if !s.sleepUntil(at, holdP) {
				t.Fatalf("sleepUntil(+%v, holdP %v) reported a stop", d, holdP)
			}
			if now := time.Now(); now.Before(at) {
				t.Errorf("sleepUntil(+%v, holdP %v) returned %v early", d, holdP, at.Sub(now))
			}
		}
		if a := testing.AllocsPerRun(20, func() { s.sleepUntil(time.Now().Add(200*time.Microsecond), holdP) }); a > 0 {
			t.Errorf("holdP %v: %.1f allocations per sleep", holdP, a)
		}
	}
	close(stop)
	if s.sleepUntil(time.Now().Add(time.Hour), true) {
		t.Error("a closed stop did not end an hour's sleep")
	}
}
