package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"

	"github.com/ceiling-db/ceiling/internal/target"
)

// Wait categories from performance_schema (when the server runs with it on).
//
// Like the PostgreSQL sampler, they describe ceiling's own sessions only:
// each worker session's CONNECTION_ID() is recorded at Connect, and every
// sample reads those threads' rows of
// events_waits_summary_by_thread_by_event_name and
// events_statements_summary_by_thread_by_event_name. Per thread:
//
//	idle                                   → client (waiting for ceiling's next request)
//	wait/io/file/innodb/innodb_log_file    → log IO (MySQL; MariaDB 10.11 does not instrument its redo log)
//	wait/io/file/innodb/{data,temp} file   → data read (foreground sessions read pages; the page
//	                                         cleaner, not the sessions, writes them)
//	wait/lock/%                            → lock (table and metadata locks)
//	wait/synch/% (when enabled)            → other
//	statement time − the waits above       → cpu where the redo log is instrumented; else other,
//	                                         as it then also holds the log flushes
//
// InnoDB row-lock waits are not wait events; the server-wide
// Innodb_row_lock_time (ms) is added to lock. A thread's counters vanish
// when its session ends, so the target keeps each thread's last reading
// and the sums only grow: what a session did after the last sample before
// it closed is lost (at most one interval).
type psWaits struct {
	mu    sync.Mutex
	ids   []int64                      // CONNECTION_ID() of worker sessions
	last  map[int64]map[string]float64 // per session: category ms at the last sample
	total map[string]float64           // sum over sessions of their last readings

	logInstrumented bool // the redo log has a file instrument (MySQL)
	// rowLock0 is Innodb_row_lock_time at the first reading (fill).
	rowLock0 *float64
	// repl0 is the semi-synchronous replication wait (repl_wait_ms) at
	// the first reading (fill).
	repl0 *float64
}

func newPSWaits() *psWaits {
	return &psWaits{last: map[int64]map[string]float64{}, total: map[string]float64{}}
}

// psOn says whether the server runs with performance_schema enabled.
func psOn(settings map[string]string) bool {
	switch strings.ToUpper(settings["performance_schema"]) {
	case "ON", "1":
		return true
	}
	return false
}

// register records a worker session and returns its connection id.
func (p *psWaits) register(id int64) {
	p.mu.Lock()
	p.ids = append(p.ids, id)
	p.mu.Unlock()
}

// final takes a worker session's last reading just before it closes, on
// that session itself, so the end of the run is not lost with its thread.
func (p *psWaits) final(ctx context.Context, c *sql.Conn, id int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	_ = p.update(ctx, c, []int64{id})
}

// probe finds out whether the redo log is instrumented.
func (p *psWaits) probe(ctx context.Context, c *sql.Conn) error {
	var n int
	err := c.QueryRowContext(ctx, `SELECT COUNT(*) FROM performance_schema.setup_instruments
		WHERE NAME = 'wait/io/file/innodb/innodb_log_file' AND ENABLED = 'YES' AND TIMED = 'YES'`).Scan(&n)
	if err != nil {
		return fmt.Errorf("mysql: read performance_schema.setup_instruments: %w", err)
	}
	p.logInstrumented = n > 0
	return nil
}

// waitCategory maps a wait event name to a category counter ("" = not
// counted: table IO events are parents of the file IO waits).
func (p *psWaits) waitCategory(event string) string {
	switch {
	case event == "idle":
		return target.CtrWaitClientMs
	case event == "wait/io/file/innodb/innodb_log_file":
		return target.CtrWaitLogMs
	case strings.HasPrefix(event, "wait/io/file/innodb/"):
		return target.CtrWaitDataReadMs
	case strings.HasPrefix(event, "wait/lock/"):
		return target.CtrWaitLockMs
	case strings.HasPrefix(event, "wait/synch/"):
		return target.CtrWaitOtherMs
	}
	return ""
}

// read adds the wait categories of the worker sessions to out. Timers are
// in picoseconds.
func (p *psWaits) read(ctx context.Context, c *sql.Conn, out map[string]float64) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.update(ctx, c, p.ids); err != nil {
		return err
	}
	p.fill(out)
	return nil
}

// update reads the sessions ids and adds what they did since their last
// reading to the totals. p.mu must be held.
func (p *psWaits) update(ctx context.Context, c *sql.Conn, ids []int64) error {
	if len(ids) > 0 {
		in := make([]string, len(ids))
		for i, id := range ids {
			in[i] = fmt.Sprint(id)
		}
		list := strings.Join(in, ",")
		now := map[int64]map[string]float64{}
		get := func(id int64) map[string]float64 {
			m := now[id]
			if m == nil {
				m = map[string]float64{}
				now[id] = m
			}
			return m
		}
		rows, err := c.QueryContext(ctx, `SELECT t.PROCESSLIST_ID, w.EVENT_NAME, w.SUM_TIMER_WAIT
			FROM performance_schema.events_waits_summary_by_thread_by_event_name w
			JOIN performance_schema.threads t ON t.THREAD_ID = w.THREAD_ID
			WHERE t.PROCESSLIST_ID IN (`+list+`) AND w.COUNT_STAR > 0`)
		if err != nil {
			return fmt.Errorf("mysql: read performance_schema waits: %w", err)
		}
		for rows.Next() {
			var (
				id    int64
				event string
				ps    float64
			)
			if err := rows.Scan(&id, &event, &ps); err != nil {
				rows.Close()
				return fmt.Errorf("mysql: read performance_schema waits: %w", err)
			}
			if cat := p.waitCategory(event); cat != "" {
				get(id)[cat] += ps / 1e9
				get(id)[target.CtrWaitEventPrefix+strings.TrimPrefix(event, "wait/")] += ps / 1e9
			}
		}
		if err := rows.Close(); err != nil {
			return fmt.Errorf("mysql: read performance_schema waits: %w", err)
		}
		rows, err = c.QueryContext(ctx, `SELECT t.PROCESSLIST_ID, SUM(s.SUM_TIMER_WAIT)
			FROM performance_schema.events_statements_summary_by_thread_by_event_name s
			JOIN performance_schema.threads t ON t.THREAD_ID = s.THREAD_ID
			WHERE t.PROCESSLIST_ID IN (`+list+`) GROUP BY t.PROCESSLIST_ID`)
		if err != nil {
			return fmt.Errorf("mysql: read performance_schema statements: %w", err)
		}
		for rows.Next() {
			var (
				id int64
				ps sql.NullFloat64
			)
			if err := rows.Scan(&id, &ps); err != nil {
				rows.Close()
				return fmt.Errorf("mysql: read performance_schema statements: %w", err)
			}
			m := get(id)
			rest := ps.Float64/1e9 - m[target.CtrWaitLogMs] - m[target.CtrWaitDataReadMs] - m[target.CtrWaitLockMs] - m[target.CtrWaitOtherMs]
			if p.logInstrumented {
				m[target.CtrWaitCPUMs] += max(rest, 0)
			} else {
				m["mysql.ps_unattributed_ms"] += max(rest, 0)
			}
		}
		if err := rows.Close(); err != nil {
			return fmt.Errorf("mysql: read performance_schema statements: %w", err)
		}
		// A session's readings only grow while it lives; one that is gone
		// keeps its last reading in total.
		for id, m := range now {
			prev := p.last[id]
			for k, v := range m {
				if d := v - prev[k]; d > 0 {
					p.total[k] += d
				}
			}
			p.last[id] = m
		}
	}
	return nil
}

// fill writes the totals as wait counters into out. p.mu must be held.
//
// InnoDB's row-lock waits are no wait event, so they are in the
// statements' time outside the wait events, with the CPU (and, where the
// redo log is not instrumented, the log flushes): the server's row-lock
// time (Innodb_row_lock_time, all sessions', from the first reading on,
// as the sessions' times are) is moved from there to lock.
func (p *psWaits) fill(out map[string]float64) {
	rowLocks, haveRowLocks := out["mysql.innodb_row_lock_time"]
	if haveRowLocks {
		if p.rowLock0 == nil || rowLocks < *p.rowLock0 { // first, or the server restarted
			base := rowLocks
			p.rowLock0 = &base
		}
		rowLocks -= *p.rowLock0
	}
	// The commits' waits for a semi-synchronous replica's
	// acknowledgement are no wait event either: moved to replication.
	repl, haveRepl := out[target.CtrReplWaitMs]
	if haveRepl {
		if p.repl0 == nil || repl < *p.repl0 {
			base := repl
			p.repl0 = &base
		}
		repl -= *p.repl0
	}
	outside := p.total[target.CtrWaitCPUMs] // statement time outside wait events
	if !p.logInstrumented {
		outside = p.total["mysql.ps_unattributed_ms"]
	}
	repl = min(repl, max(outside-rowLocks, 0))
	outside = max(outside-rowLocks-repl, 0)
	for _, k := range []string{target.CtrWaitClientMs, target.CtrWaitLogMs, target.CtrWaitDataReadMs, target.CtrWaitLockMs, target.CtrWaitOtherMs} {
		if k == target.CtrWaitLogMs && !p.logInstrumented {
			continue
		}
		out[k] = p.total[k]
	}
	out[target.CtrWaitLockMs] += rowLocks
	if haveRepl {
		out[target.CtrWaitReplMs] = repl
		out[target.CtrWaitEventPrefix+EventSemiSync] = repl
	}
	if p.logInstrumented {
		out[target.CtrWaitCPUMs] = outside
	} else {
		// It holds both CPU and the commits' log flushes: "other".
		out[target.CtrWaitOtherMs] += outside
	}
	// The wait events, and the two parts of the time that are none.
	for k, v := range p.total {
		if strings.HasPrefix(k, target.CtrWaitEventPrefix) {
			out[k] = v
		}
	}
	if haveRowLocks {
		out[target.CtrWaitEventPrefix+EventRowLocks] = rowLocks
	}
	if p.logInstrumented {
		out[target.CtrWaitEventPrefix+EventCPU] = outside
	} else {
		out[target.CtrWaitEventPrefix+EventUntimed] = outside
	}
}

// Names of the wait-event counters for time outside performance_schema's
// wait events.
const (
	// EventCPU is statement time outside any wait event where the redo
	// log is instrumented (MySQL): on CPU.
	EventCPU = "CPU (statement time outside wait events)"
	// EventUntimed is statement time outside any wait event where the
	// redo log is not instrumented (MariaDB): CPU and log flushes.
	EventUntimed = "statement time outside wait events (CPU, log flushes)"
	// EventSemiSync is the commits' wait for a semi-synchronous
	// replica's acknowledgement, server-wide (all sessions'), from
	// Rpl_semi_sync_master_tx_wait_time.
	EventSemiSync = "semi-sync replica acknowledgement (server-wide)"
	// EventRowLocks is InnoDB's row-lock wait time, server-wide (all
	// sessions'), from Innodb_row_lock_time.
	EventRowLocks = "innodb row locks (server-wide)"
)
