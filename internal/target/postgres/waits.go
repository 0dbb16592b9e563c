package postgres

import (
	"context"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ceiling-db/ceiling/internal/osstat"
	"github.com/ceiling-db/ceiling/internal/target"
)

// WaitSampleInterval is the nominal period of the wait-event sampler. Each
// sampling round is credited with the time actually elapsed since the
// previous round, so a late round does not lose time.
//
// Each round is a query the server answers while the run loads it, and a
// wake-up of the client. Measured on the 2-core development VM (4 workers,
// CPU-bound single-row inserts): at 10 ms the sampler's backend used 2% of
// a core, at 50 ms 0.4%. At 50 ms there are 20 rounds a second, each
// observing every worker session: a 10 s run at 4 workers still gets 800
// observations.
var WaitSampleInterval = 50 * time.Millisecond

// waitQuery lists the state of ceiling's worker sessions. It is run on the
// wait sampler's own session (application_name "ceiling", so not counted).
//
// Each round is a transaction that pg_stat_database's xact_commit counts,
// which the commits counter leaves out (pgTarget.own). A backend publishes
// that count only along with other pending statistics, such as a table
// read; the database's oid is looked up in pg_database by an InitPlan,
// which runs in every round, before any row is filtered, so the rounds are
// published about once a second (with the join of pg_stat_activity's
// datname, pg_database was read only when a worker's row matched, and an
// idle target's rounds stayed unpublished until the session ended).
//
// A session waiting for a lock (a heavyweight lock, a buffer pin, a
// buffer's content lock) also gives its statement, whose table the wait is
// attributed to (target.StatementTable): a row lock is mostly a wait on
// another transaction's id, which names no table. Where the statement names
// none (a routine's call: TPC-C --procedures, SELECT f(…)), a heavyweight
// lock wait gives the table of the lock the session waits for, or of the
// tuple lock it holds while it waits for the row's transaction (the fifth
// column, from pg_locks: read at most once a round, only when a session
// waits for a lock, as a CTE is evaluated when first read).
const waitQuery = `WITH tl AS MATERIALIZED (
	  SELECT l.pid, l.granted, n.nspname || '.' || c.relname AS rel
	  FROM pg_catalog.pg_locks l
	  JOIN pg_catalog.pg_class c ON c.oid = l.relation
	  JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
	  WHERE l.database = (SELECT oid FROM pg_catalog.pg_database WHERE datname = current_database())
	    AND (l.locktype = 'tuple' OR NOT l.granted))
	SELECT a.wait_event_type, a.wait_event, a.state,
	  CASE WHEN a.wait_event_type IN ('Lock', 'BufferPin') OR a.wait_event = 'BufferContent' THEN a.query END,
	  CASE WHEN a.wait_event_type = 'Lock' THEN (SELECT tl.rel FROM tl WHERE tl.pid = a.pid ORDER BY tl.granted LIMIT 1) END
	FROM pg_catalog.pg_stat_activity a
	WHERE a.datid = (SELECT oid FROM pg_catalog.pg_database WHERE datname = current_database())
	  AND a.application_name = $1`

// Wait categories, in the order of waitCtrs.
const (
	catLog = iota
	catDataRead
	catDataWrite
	catLock
	catCPU
	catClient
	catOther
	catRepl
	nCat
)

var waitCtrs = [nCat]string{
	target.CtrWaitLogMs, target.CtrWaitDataReadMs, target.CtrWaitDataWriteMs,
	target.CtrWaitLockMs, target.CtrWaitCPUMs, target.CtrWaitClientMs, target.CtrWaitOtherMs,
	target.CtrWaitReplMs,
}

// waitCategory maps one pg_stat_activity row to a wait category. Empty
// strings stand for NULL.
//
//   - state idle / idle in transaction (aborted), or wait type Client → client
//   - no wait event while active → CPU
//   - IO WAL* (WALWrite, WALSync, WALInitWrite, WALInitSync, …) and LWLock
//     WALWrite / WALInsert / WALBufMapping → log IO
//   - IO DataFileRead / DataFilePrefetch / SLRURead → data read
//   - IO DataFileExtend / Write / Flush / Sync / ImmediateSync / Truncate,
//     SLRUWrite / SLRUSync / SLRUFlushSync → data write (extending writes
//     new blocks)
//   - IPC SyncRep (a commit waiting for the synchronous standbys'
//     confirmation) and LWLock SyncRep (the queue of those commits) →
//     replication
//   - Lock (any), BufferPin, and LWLock other than the WAL ones → lock
//   - anything else (IPC, Timeout, Activity, Extension, other IO) → other
func waitCategory(waitType, waitEvent, state string) int {
	if strings.HasPrefix(state, "idle") || waitType == "Client" {
		return catClient
	}
	if waitEvent == "" && waitType == "" {
		if state == "active" || state == "fastpath function call" {
			return catCPU
		}
		return catOther // e.g. "disabled" (track_activities off)
	}
	switch waitType {
	case "IO":
		switch {
		case strings.HasPrefix(waitEvent, "WAL"):
			return catLog
		case waitEvent == "DataFileRead", waitEvent == "DataFilePrefetch", waitEvent == "SLRURead":
			return catDataRead
		case strings.HasPrefix(waitEvent, "DataFile"), strings.HasPrefix(waitEvent, "SLRU"):
			return catDataWrite
		}
		return catOther
	case "LWLock":
		switch strings.TrimSuffix(waitEvent, "Lock") { // "WALWriteLock" before 13
		case "WALWrite", "WALInsert", "WALBufMapping":
			return catLog
		case "SyncRep":
			return catRepl
		}
		return catLock
	case "Lock", "BufferPin":
		return catLock
	case "IPC":
		if waitEvent == "SyncRep" {
			return catRepl
		}
	}
	return catOther
}

// waitEvent names one pg_stat_activity row's wait as the wait-event
// counters do (target.CtrWaitEventPrefix): "type:event", "CPU" for an
// active session without a wait, "Client:<state>" for an idle one.
func waitEvent(waitType, event, state string) string {
	switch {
	case waitType != "":
		return waitType + ":" + event
	case strings.HasPrefix(state, "idle"):
		return "Client:" + state
	case state == "active" || state == "fastpath function call":
		return "CPU"
	case state == "":
		return "unknown"
	}
	return "state:" + state // "disabled": track_activities off
}

// waitSampler accumulates sampled wait time per category for one target.
type waitSampler struct {
	mu      sync.Mutex
	ms      [nCat]float64      // cumulative milliseconds per category
	samples float64            // rounds credited
	lockMs  map[string]float64 // cumulative lock-wait ms per table (see waitQuery)
	eventMs map[string]float64 // cumulative ms per wait event (waitEvent)

	// Pausing (see pause): the loop closes its session and waits for
	// resume; paused gets the ended session's backend pid (0: none).
	pauseReq bool
	wake     chan struct{} // a pause was requested (buffered 1)
	paused   chan uint32   // the loop's answer to a pause
	resumed  chan struct{} // closed by resume
}

// pause asks the sampler to close its session and stay idle until resume,
// and returns the pid of the backend it ended (0 if it had no session):
// a backend publishes its pending statistics, such as its transaction
// count, when it exits. It gives up when ctx ends.
func (w *waitSampler) pause(ctx context.Context) (uint32, error) {
	w.mu.Lock()
	if w.pauseReq {
		w.mu.Unlock()
		return 0, nil
	}
	w.pauseReq = true
	w.resumed = make(chan struct{})
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
	select {
	case pid := <-w.paused:
		return pid, nil
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// resume ends a pause; the sampler opens a new session.
func (w *waitSampler) resume() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.pauseReq {
		w.pauseReq = false
		close(w.resumed)
	}
}

// pausing returns the channel a paused loop waits on, or nil.
func (w *waitSampler) pausing() chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.pauseReq {
		return w.resumed
	}
	return nil
}

// waitSamplers maps a target to its running sampler (started lazily by the
// first Sample; the goroutine stops itself once the target is closed).
var (
	waitSamplersMu sync.Mutex
	waitSamplers   = map[*pgTarget]*waitSampler{}
)

// waits returns the target's wait sampler, starting it on first use. It
// returns nil when ceiling cannot tell its worker sessions apart (the DSN
// sets its own application_name).
func (t *pgTarget) waits() *waitSampler {
	if t.wcfg == nil || t.wcfg.RuntimeParams["application_name"] != WorkerAppName {
		return nil
	}
	waitSamplersMu.Lock()
	defer waitSamplersMu.Unlock()
	w := waitSamplers[t]
	if w == nil {
		w = &waitSampler{wake: make(chan struct{}, 1), paused: make(chan uint32)}
		waitSamplers[t] = w
		go w.run(t)
	}
	w.resume()
	return w
}

// runningWaits returns the target's wait sampler if one runs, without
// starting or resuming it.
func (t *pgTarget) runningWaits() *waitSampler {
	waitSamplersMu.Lock()
	defer waitSamplersMu.Unlock()
	return waitSamplers[t]
}

func (t *pgTarget) isClosed() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.closed
}

// run samples pg_stat_activity every WaitSampleInterval on its own session
// until the target is closed. A lost session is re-established with
// backoff; time while disconnected is not credited.
func (w *waitSampler) run(t *pgTarget) {
	defer func() {
		waitSamplersMu.Lock()
		delete(waitSamplers, t)
		waitSamplersMu.Unlock()
		t.forgetForeign() // its other per-target state (foreign.go)
	}()
	ctx := context.Background()
	var c *pgx.Conn
	defer func() {
		if c != nil {
			cctx, cancel := context.WithTimeout(ctx, closeTimeout)
			_ = c.Close(cctx)
			cancel()
		}
	}()
	// sleep waits d, returning false once the target is closed. One timer
	// serves every sleep.
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	sleep := func(d time.Duration) bool {
		if d <= 0 {
			return !t.isClosed()
		}
		timer.Reset(d)
		select {
		case <-timer.C:
			return true
		case <-w.wake:
			if !timer.Stop() {
				<-timer.C
			}
			return true
		case <-t.done:
			return false
		}
	}
	backoff := 50 * time.Millisecond
	var last time.Time // start of the previous successful round
	var et, ev, st, q, rel *string
	tables := map[string]int{} // this round's lock waits per table
	events := map[string]int{} // this round's sessions per wait event
	// hold serves a pause: it ends the session (its backend publishes
	// its statistics as it exits), answers with the backend's pid, and
	// waits for resume. It returns false once the target is closed.
	hold := func(resumed chan struct{}) bool {
		var pid uint32
		if c != nil {
			pid = c.PgConn().PID()
			cctx, cancel := context.WithTimeout(ctx, closeTimeout)
			_ = c.Close(cctx)
			cancel()
			c, last = nil, time.Time{}
		}
		select {
		case w.paused <- pid:
		case <-resumed: // the pause was given up and ended
			return true
		case <-t.done:
			return false
		}
		select {
		case <-resumed:
			return true
		case <-t.done:
			return false
		}
	}
	for !t.isClosed() {
		if resumed := w.pausing(); resumed != nil {
			if !hold(resumed) {
				return
			}
			continue
		}
		if c == nil || c.IsClosed() {
			cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			nc, err := pgx.ConnectConfig(cctx, t.scfg)
			cancel()
			if err != nil {
				if !sleep(backoff) {
					return
				}
				backoff = min(2*backoff, 5*time.Second)
				continue
			}
			c, last = nc, time.Time{}
		}
		start := time.Now()
		qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		rows, err := c.Query(qctx, waitQuery, WorkerAppName)
		var cats [nCat]int
		clear(tables)
		clear(events)
		if err == nil {
			_, err = pgx.ForEachRow(rows, []any{&et, &ev, &st, &q, &rel}, func() error {
				cat := waitCategory(deref(et), deref(ev), deref(st))
				cats[cat]++
				events[waitEvent(deref(et), deref(ev), deref(st))]++
				if cat == catLock {
					if tb := lockTable(deref(q), deref(rel)); tb != "" {
						tables[tb]++
					}
				}
				return nil
			})
		}
		cancel()
		if err == nil {
			t.own.Add(1)
		}
		if err != nil {
			cctx, cancel := context.WithTimeout(ctx, time.Second)
			_ = c.Close(cctx)
			cancel()
			c, last = nil, time.Time{}
			if !sleep(backoff) {
				return
			}
			backoff = min(2*backoff, 5*time.Second)
			continue
		}
		backoff = 50 * time.Millisecond
		if !last.IsZero() {
			period := float64(start.Sub(last)) / 1e6
			w.mu.Lock()
			for i, n := range cats {
				w.ms[i] += float64(n) * period
			}
			for tb, n := range tables {
				if w.lockMs == nil {
					w.lockMs = map[string]float64{}
				}
				w.lockMs[tb] += float64(n) * period
			}
			for e, n := range events {
				if w.eventMs == nil {
					w.eventMs = map[string]float64{}
				}
				w.eventMs[e] += float64(n) * period
			}
			w.samples++
			w.mu.Unlock()
		}
		last = start
		if !sleep(WaitSampleInterval - time.Since(start)) {
			return
		}
	}
}

// lockTable is the table a lock wait is attributed to: its statement's
// (target.StatementTable), or where that names none or a routine's call,
// the table of the lock from pg_locks (rel, "" when none was found).
func lockTable(query, rel string) string {
	tb := target.StatementTable(query)
	if (tb == "" || strings.HasSuffix(tb, "()")) && rel != "" {
		return rel
	}
	return tb
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// add puts the cumulative wait counters into out.
func (w *waitSampler) add(out map[string]float64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, name := range waitCtrs {
		out[name] = w.ms[i]
	}
	out[target.CtrWaitSamples] = w.samples
	for tb, ms := range w.lockMs {
		out[target.CtrLockTablePrefix+tb] = ms
	}
	for e, ms := range w.eventMs {
		out[target.CtrWaitEventPrefix+e] = ms
	}
}

// addDiagnosis adds the wait categories (sampled from pg_stat_activity) and,
// when the server runs on this host, the CPU counters from /proc,
// including the other sessions' backends' share (foreignCPU, listed on c).
func (t *pgTarget) addDiagnosis(ctx context.Context, c *pgx.Conn, out map[string]float64) {
	if w := t.waits(); w != nil {
		w.add(out)
	}
	if !t.here {
		return
	}
	target.AddHostCPU(out)
	target.AddLogDevice(out, t.info.LogDevice)
	if sec, n, ok := t.serverCPU(ctx, c); ok && n > 0 {
		out[target.CtrServerCPUSec] = sec
		if t.postmaster > 0 {
			if pids, ok := osstat.TreePids(t.postmaster); ok {
				if rq, ok := t.runQueue.Read(pids); ok {
					out[target.CtrServerRunQueueSec] = rq
				}
			}
		}
		if f := t.foreign(); f != nil {
			if fs, err := f.sample(ctx, c); err == nil {
				t.own.Add(1)
				out[target.CtrForeignCPUSec] = fs
			}
		}
	}
}

// serverCPU returns the CPU seconds of the server's processes on this
// host and how many there are; the caller holds t.sampleMu. At the first
// call it finds the postmaster, the parent of c's backend (whose pid the
// session learnt at start-up), and from then on reads only the postmaster
// and its children (osstat.TreeCPU): a dozen files a second instead of a
// scan of every process on the host. If that fails at the first call (the
// server's pids belong to another pid namespace, such as a container's, or
// the kernel does not list children), it counts every process named
// postgres on the host instead, where a second local instance would be
// counted too. The choice holds for the target's life, so that successive
// samples count the same processes. With the postmaster gone (a restart:
// c is then the sampler's new session), the new one is found the same way
// and the counter goes on from its last value, so it never goes back: the
// interval of the restart misses the CPU of the gap, the later ones are
// whole (before, server CPU was left out for the rest of the run). If the
// new one cannot be found, the figure is left out from then on.
func (t *pgTarget) serverCPU(ctx context.Context, c *pgx.Conn) (float64, int, bool) {
	switch {
	case t.postmaster > 0:
		if sec, n, ok := osstat.TreeCPU(t.postmaster, "postgres"); ok {
			t.cpuLast = t.cpuBase + sec
			return t.cpuLast, n, true
		}
		pm, sec, n, ok := findPostmaster(t.sessionPID(ctx, c))
		if !ok {
			t.postmaster = -2
			return 0, 0, false
		}
		t.postmaster, t.cpuBase = pm, t.cpuLast-sec
		return t.cpuLast, n, true
	case t.postmaster == 0:
		pm, sec, n, ok := findPostmaster(t.sessionPID(ctx, c))
		if ok {
			t.postmaster, t.cpuBase, t.cpuLast = pm, 0, sec
			return sec, n, true
		}
		t.postmaster = -1
		return osstat.ProcsCPU("postgres")
	case t.postmaster == -1:
		return osstat.ProcsCPU("postgres")
	}
	return 0, 0, false
}

// findPostmaster finds the postmaster of a backend (backend, its pid;
// sessionPID), its parent, and reads its tree's CPU seconds and process
// count.
func findPostmaster(backend int64) (pid int, sec float64, n int, ok bool) {
	if backend <= 0 {
		return 0, 0, 0, false
	}
	st, err := osstat.ReadPidStat(int(backend))
	if err != nil || st.Comm != "postgres" {
		return 0, 0, 0, false
	}
	if sec, n, ok := osstat.TreeCPU(st.PPid, "postgres"); ok {
		return st.PPid, sec, n, true
	}
	return 0, 0, 0, false
}

// onThisHost says whether c's server runs on this host: host (libpq's) is
// a Unix socket directory, localhost or a loopback address, or the server
// saw the session come straight from c's socket to an address of this
// host (its name, one of its own addresses: target.DirectOnThisHost).
func onThisHost(ctx context.Context, c *pgx.Conn, host string) bool {
	return isLocalHost(host) || directOnThisHost(ctx, c)
}

// directOnThisHost says whether the server saw c's session come straight
// from its socket to an address of this host.
func directOnThisHost(ctx context.Context, c *pgx.Conn) bool {
	var ip *string
	var port *int32
	err := c.QueryRow(ctx, "SELECT host(inet_client_addr()), inet_client_port()").Scan(&ip, &port)
	if err != nil || ip == nil || port == nil {
		return false
	}
	nc := c.PgConn().Conn()
	return target.DirectOnThisHost(ctx, nc.LocalAddr(), nc.RemoteAddr(), *ip, strconv.Itoa(int(*port)))
}

// isLocalHost says whether a libpq host names this machine: a Unix socket
// directory, localhost or a loopback address.
func isLocalHost(host string) bool {
	if strings.HasPrefix(host, "/") || strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}
