package vfs

import (
	"sync"
	"time"

	sqlitevfs "github.com/ncruces/go-sqlite3/vfs"
)

// Limits are emulated device limits for one database's files (DESIGN.md
// section 6, emulation): a zero field sets no limit.
type Limits struct {
	LogBytesPerSec  float64 // writes of the WAL and the rollback journal
	LogSyncsPerSec  float64 // syncs of the WAL and the rollback journal
	DataIOPS        float64 // reads and writes of the main file
	DataBytesPerSec float64 // bytes read and written of the main file
	// Device latency: added to each sync of the log and to each read of
	// the main file (the reads a request waits for; SQLite writes the
	// main file at checkpoints), after any queue. It is the device's
	// time, so it is not in the emulated wait.
	LogSyncLatency  time.Duration
	DataReadLatency time.Duration
}

func (l Limits) zero() bool { return l == Limits{} }

// Govern makes the files of the database whose main file is at path behave
// as if they sat on a device with limits l, on top of the real device: an
// operation first waits its turn on the emulated device (a queue of one
// server per lane: log bytes, log syncs, data IOs) and its service time
// there (bytes ÷ rate, 1 ÷ syncs/s, the larger of 1 ÷ IOPS and bytes ÷
// MB/s), then runs. The wait counts in the operation's time, and
// separately as its emulated wait ([Stats]' EmulatedNs). Limits{} removes
// the limits. Govern may be called before the database is opened.
func Govern(path string, l Limits) {
	key := path
	if base := sqlitevfs.Find("os"); base != nil {
		if full, _ := base.FullPathname(path); full != "" {
			key = full
		}
	}
	d := record(key)
	if l.zero() {
		d.gov.Store(nil)
		return
	}
	d.gov.Store(&governor{lim: l})
}

// governor holds a database's emulated device: one lane per limited
// resource.
type governor struct {
	lim                    Limits
	logBytes, logSyncs, io lane
}

// lane is one emulated device queue: free is when it is next idle.
type lane struct {
	mu   sync.Mutex
	free time.Time
}

// laneBurst is how far an idle lane's schedule may lag behind the clock:
// an operation on a lane idle for less than that is scheduled from where
// the last one ended, not from now. A sleep overshoots its end (by a
// fraction of a millisecond to a millisecond or more on a loaded VM), and
// without this every overshoot would be device time lost, so the emulated
// rate would fall short of the limit; with it, the lane keeps to its rate
// over time, as a token bucket of laneBurst's depth does.
const laneBurst = 20 * time.Millisecond

// take reserves cost on the lane and sleeps until the reservation ends; it
// returns the time it slept.
func (l *lane) take(cost time.Duration) time.Duration {
	if cost <= 0 {
		return 0
	}
	now := time.Now()
	l.mu.Lock()
	start := l.free
	if floor := now.Add(-laneBurst); start.Before(floor) {
		start = floor
	}
	l.free = start.Add(cost)
	end := l.free
	l.mu.Unlock()
	d := end.Sub(now)
	if d <= 0 {
		return 0
	}
	time.Sleep(d)
	return time.Since(now) // the sleep's overshoot is waiting too, not the device's time
}

func perSec(n, rate float64) time.Duration {
	if rate <= 0 {
		return 0
	}
	return time.Duration(n / rate * float64(time.Second))
}

// File operations, for governor.wait.
const (
	opRead  = 'r'
	opWrite = 'w'
	opSync  = 's'
)

// latency is the emulated device latency of an operation op on a file of
// role (Limits.LogSyncLatency, DataReadLatency), 0 for none.
func (g *governor) latency(role string, op byte) time.Duration {
	switch {
	case role == RoleLog && op == opSync:
		return g.lim.LogSyncLatency
	case role == RoleData && op == opRead:
		return g.lim.DataReadLatency
	}
	return 0
}

// wait holds an operation op of n bytes on a file of role for the
// emulated device, and returns how long it waited. The log's limits are
// on its writes and syncs (a WAL read is a reader's, not the log's
// device's work); the data file's on its reads and writes.
func (g *governor) wait(role string, op byte, n int) time.Duration {
	switch {
	case role == RoleLog && op == opWrite:
		return g.logBytes.take(perSec(float64(n), g.lim.LogBytesPerSec))
	case role == RoleLog && op == opSync:
		return g.logSyncs.take(perSec(1, g.lim.LogSyncsPerSec))
	case role == RoleData && op != opSync:
		return g.io.take(max(perSec(1, g.lim.DataIOPS), perSec(float64(n), g.lim.DataBytesPerSec)))
	}
	return 0
}
