package runner

import "time"

// clock is the open loop's source of time. It exists for one reason: the
// real clock sleeps with a blocking system call for the last few
// milliseconds of a wait (Go timers overshoot by about half a millisecond on
// Linux, nanosleep by about 60 µs), and a system call cannot be virtualised
// by testing/synctest. Tests therefore run the open loop inside a synctest
// bubble with a clock that uses Go timers only, so every wait is virtual.
//
// The driving goroutine's own timers (phase ends, interval ticks) use the
// time package directly: they need no precision, and synctest virtualises them.
type clock interface {
	Now() time.Time
	// newSleeper returns a sleeper for one goroutine. Its sleeps end early
	// when stop is closed.
	newSleeper(stop <-chan struct{}) sleeper
}

// sleeper waits for one goroutine; it is not safe for concurrent use.
type sleeper interface {
	// sleepUntil blocks until t. It reports false if stop was closed first.
	// It must not allocate: it is on the hot path. With holdP, the
	// calling goroutine has a P of its own (target.PHolder) and may keep
	// it through the wait.
	sleepUntil(t time.Time, holdP bool) bool
}

// Coarse waits: a wait longer than coarseWait sleeps on a (reused) Go timer
// until coarseMargin before the deadline, then precisely for the rest, so
// the blocking precise sleep is never longer than coarseWait and stop is
// noticed within it.
const (
	coarseWait   = 3 * time.Millisecond
	coarseMargin = 2 * time.Millisecond
)

// realClock is the wall clock, with precise short sleeps (see preciseSleep).
type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) newSleeper(stop <-chan struct{}) sleeper {
	return &timerSleeper{t: newStoppedTimer(), stop: stop, precise: true}
}

// timerClock uses Go timers only. Inside a synctest bubble it is a fake
// clock: Now and every sleep are virtual.
type timerClock struct{}

func (timerClock) Now() time.Time { return time.Now() }

func (timerClock) newSleeper(stop <-chan struct{}) sleeper {
	return &timerSleeper{t: newStoppedTimer(), stop: stop}
}

type timerSleeper struct {
	t       *time.Timer // reused: Reset does not allocate
	stop    <-chan struct{}
	precise bool
}

func newStoppedTimer() *time.Timer {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return t
}

func (s *timerSleeper) sleepUntil(at time.Time, holdP bool) bool {
	d := time.Until(at)
	if s.precise && d <= coarseWait {
		return s.fine(at, d, holdP)
	}
	if s.precise {
		d -= coarseMargin
	}
	if d > 0 {
		// Since Go 1.23 a stopped or fired timer can be Reset without draining.
		s.t.Reset(d)
		select {
		case <-s.t.C:
		case <-s.stop:
			s.t.Stop()
			return false
		}
	}
	if s.precise {
		return s.fine(at, time.Until(at), holdP)
	}
	return true
}

// fine sleeps the last stretch d before at with preciseSleep (rawSleep
// with holdP), again after an early return (a signal interrupts the
// system call).
func (s *timerSleeper) fine(at time.Time, d time.Duration, holdP bool) bool {
	for d > 0 {
		if holdP {
			rawSleep(d)
		} else {
			preciseSleep(d)
		}
		d = time.Until(at)
	}
	return true
}
