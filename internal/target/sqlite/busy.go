package sqlite

import (
	"context"
	"math/rand/v2"
	"sync/atomic"
	"time"
)

// busyWait is a connection's busy handler: it waits for a lock another
// connection holds (SQLite's one writer at a time: the WAL write lock,
// which the VFS cannot see) the way the driver's own busy timeout does —
// retrying at once while retries come more than a millisecond apart,
// sleeping up to ~2 ms at random otherwise — until BusyTimeout, and it
// counts the time waited into the target's total (Sample: wait_lock_ms).
//
// The time is counted from the first failed attempt to the last one; the
// final stretch, from the last failed attempt to the one that gets the
// lock (at most one sleep), is not, so the figure is a slight undercount.
type busyWait struct {
	total *atomic.Int64 // the target's busy-wait nanoseconds
	first time.Time     // first failed attempt of the current wait
	last  time.Time     // previous failed attempt
	prev  time.Time     // previous return of the handler (for the pacing)
}

// handle implements the callback of sqlite3.Conn.BusyHandler: count is the
// number of times it was called for the same wait before.
func (b *busyWait) handle(ctx context.Context, count int) bool {
	now := time.Now()
	if count == 0 {
		b.first = now
	} else {
		b.total.Add(int64(now.Sub(b.last)))
	}
	b.last = now
	if now.Sub(b.first) >= BusyTimeout || ctx.Err() != nil {
		return false
	}
	if count > 0 && now.Sub(b.prev) < time.Millisecond {
		const sleepMask = 2<<20 - 1 // up to ~2 ms
		t := time.NewTimer(time.Duration(rand.Int64() & sleepMask))
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return false
		}
	}
	b.prev = time.Now()
	return true
}
