package postgres

import (
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-db/ceiling/internal/osstat"
	"github.com/ceiling-db/ceiling/internal/target"
)

// TestWaitEvent: the names of the wait-event counters.
func TestWaitEvent(t *testing.T) {
	for _, c := range []struct{ typ, ev, state, want string }{
		{"IO", "WALSync", "active", "IO:WALSync"},
		{"Client", "ClientRead", "idle", "Client:ClientRead"},
		{"", "", "idle in transaction", "Client:idle in transaction"},
		{"", "", "active", "CPU"},
		{"", "", "disabled", "state:disabled"},
		{"", "", "", "unknown"},
	} {
		if got := waitEvent(c.typ, c.ev, c.state); got != c.want {
			t.Errorf("waitEvent(%q, %q, %q) = %q, want %q", c.typ, c.ev, c.state, got, c.want)
		}
	}
}

func TestWaitCategory(t *testing.T) {
	for _, c := range []struct {
		typ, ev, state string
		want           int
	}{
		{"", "", "active", catCPU},
		{"Client", "ClientRead", "idle", catClient},
		{"", "", "idle in transaction", catClient},
		{"Client", "ClientWrite", "active", catClient},
		{"IO", "WALSync", "active", catLog},
		{"IO", "WALWrite", "active", catLog},
		{"IO", "WALInitSync", "active", catLog},
		{"LWLock", "WALWrite", "active", catLog},
		{"LWLock", "WALWriteLock", "active", catLog},
		{"LWLock", "WALInsert", "active", catLog},
		{"LWLock", "WALBufMapping", "active", catLog},
		{"IO", "DataFileRead", "active", catDataRead},
		{"IO", "DataFileExtend", "active", catDataWrite},
		{"IO", "DataFileSync", "active", catDataWrite},
		{"IO", "DataFileWrite", "active", catDataWrite},
		{"Lock", "transactionid", "active", catLock},
		{"LWLock", "BufferContent", "active", catLock},
		{"BufferPin", "BufferPin", "active", catLock},
		{"IPC", "SyncRep", "active", catRepl},
		{"LWLock", "SyncRep", "active", catRepl},
		{"IPC", "ProcArrayGroupUpdate", "active", catOther},
		{"Timeout", "PgSleep", "active", catOther},
		{"IO", "BufFileRead", "active", catOther},
		{"", "", "disabled", catOther},
	} {
		if got := waitCategory(c.typ, c.ev, c.state); got != c.want {
			t.Errorf("%s/%s/%s: got %s, want %s", c.typ, c.ev, c.state, waitCtrs[got], waitCtrs[c.want])
		}
	}
}

func TestIsLocalHost(t *testing.T) {
	for host, want := range map[string]bool{
		"127.0.0.1": true, "::1": true, "localhost": true, "/var/run/postgresql": true,
		"127.0.0.2": true, "db.example.com": false, "10.0.0.5": false, "": false,
	} {
		if got := isLocalHost(host); got != want {
			t.Errorf("%q: got %v", host, got)
		}
	}
}

// TestWaitsAndCPU runs single-row autocommit inserts on one worker for
// about 1.5 s and checks the sampled wait categories and CPU counters.
// startWaits starts tg's wait sampler and returns the sampler and a first
// sample taken once it runs.
func startWaits(t *testing.T, tg target.Target) (target.Sampler, target.Sample) {
	t.Helper()
	ctx := testCtx(t)
	s := tg.(target.Sampler)
	if _, err := s.Sample(ctx); err != nil { // starts the wait sampler
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // let it connect
	before, err := s.Sample(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return s, before
}

func TestWaitsAndCPU(t *testing.T) {
	dsn := testDB(t, "ceiling_test_pg")
	tg := openTarget(t, dsn, target.DurabilityFull)
	ctx := testCtx(t)
	if err := tg.Schema().CreateTable(ctx, "waits", "id bigint PRIMARY KEY, v text"); err != nil {
		t.Fatal(err)
	}
	// The table goes with the test database (TestMain) if the test fails.
	c := connect(t, tg)
	s, before := startWaits(t, tg)
	start := time.Now()
	n := 0
	for time.Since(start) < 1500*time.Millisecond {
		if _, err := c.Exec(ctx, "INSERT INTO ceiling.waits VALUES ($1, $2)", n, "x"); err != nil {
			t.Fatal(err)
		}
		n++
	}
	after, err := s.Sample(ctx)
	if err != nil {
		t.Fatal(err)
	}
	elapsedMs := float64(after.At.Sub(before.At)) / 1e6
	d := delta(before, after)
	sum := 0.0
	msg := fmt.Sprintf("%d inserts in %.0f ms:", n, elapsedMs)
	for _, name := range waitCtrs {
		if _, ok := after.Counters[name]; !ok {
			t.Fatalf("%s absent", name)
		}
		sum += d[name]
		msg += fmt.Sprintf(" %s=%.0f", name, d[name])
	}
	t.Log(msg, "samples", d[target.CtrWaitSamples], "server_cpu_s", d[target.CtrServerCPUSec],
		"host_busy_s", d[target.CtrHostCPUBusy], "host_total_s", d[target.CtrHostCPUTotal])
	// Half the nominal rounds at least (a loaded machine delays some).
	if want := 0.5 * elapsedMs / float64(WaitSampleInterval.Milliseconds()); d[target.CtrWaitSamples] < want {
		t.Errorf("wait samples %v, want >= %.0f", d[target.CtrWaitSamples], want)
	}
	if sum < 0.5*elapsedMs || sum > 1.5*elapsedMs {
		t.Errorf("categories sum to %.0f ms over %.0f ms with one session", sum, elapsedMs)
	}
	if d[target.CtrWaitLogMs]+d[target.CtrWaitCPUMs]+d[target.CtrWaitClientMs] <= 0 {
		t.Error("no log IO, CPU or client time")
	}
	for _, k := range []string{target.CtrServerCPUSec, target.CtrHostCPUBusy, target.CtrHostCPUTotal, target.CtrHostCores} {
		if _, ok := after.Counters[k]; !ok {
			t.Errorf("%s absent for a local server", k)
		}
	}
	if d[target.CtrServerCPUSec] <= 0 || d[target.CtrHostCPUBusy] <= 0 {
		t.Errorf("server CPU delta %v, host busy delta %v: want > 0", d[target.CtrServerCPUSec], d[target.CtrHostCPUBusy])
	}
	// Where the kernel gives PSI, the host's CPU pressure comes along:
	// seconds some task waited for a core, at most the span's.
	if _, psi := osstat.ReadCPUPressure(); psi {
		if p, ok := d[target.CtrHostCPUPressure]; !ok || p < 0 || p > elapsedMs/1000+0.5 {
			t.Errorf("CPU pressure %v s (present %v) over %.0f ms", p, ok, elapsedMs)
		}
	} else if _, ok := after.Counters[target.CtrHostCPUPressure]; ok {
		t.Errorf("CPU pressure counted on a host without /proc/pressure/cpu")
	}
	// The server's threads' waits for a core (schedstat): each insert
	// wakes the backend, whose wake-up latency counts, so some time over
	// thousands of inserts; at most every server process's whole span.
	if _, err := os.Stat("/proc/self/schedstat"); err == nil {
		rq, ok := d[target.CtrServerRunQueueSec]
		t.Logf("server_runqueue_s %+.4f", rq)
		if !ok || rq <= 0 || rq > 100*elapsedMs/1000 {
			t.Errorf("server run-queue delta %v s (present %v) over %.0f ms: want > 0", rq, ok, elapsedMs)
		}
	}
	if err := tg.Schema().DropTable(ctx, "waits"); err != nil {
		t.Error(err)
	}
	// Closing the target stops the wait sampler.
	if err := tg.Close(ctx); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		waitSamplersMu.Lock()
		_, running := waitSamplers[tg.(*pgTarget)]
		waitSamplersMu.Unlock()
		if !running {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("wait sampler still running 2 s after Close")
		}
	}
}

// TestLockWaitTables: a worker session waiting for a row another holds
// has its wait attributed to the table its statement updates (PostgreSQL
// names no table for a wait on a transaction id); a table nobody waited
// for gets nothing.
func TestLockWaitTables(t *testing.T) {
	dsn := testDB(t, "ceiling_test_pg")
	tg := openTarget(t, dsn, target.DurabilityServer)
	ctx := testCtx(t)
	for _, name := range []string{"hot", "cold"} {
		if err := tg.Schema().CreateTable(ctx, name, "id bigint PRIMARY KEY, v bigint NOT NULL"); err != nil {
			t.Fatal(err)
		}
	}
	a, b := connect(t, tg), connect(t, tg)
	mustExec(t, a, "INSERT INTO ceiling.hot VALUES (1, 0)")
	mustExec(t, a, "INSERT INTO ceiling.cold VALUES (1, 0)")
	s, before := startWaits(t, tg)
	mustExec(t, a, "BEGIN")
	mustExec(t, a, "UPDATE ceiling.hot SET v = 1 WHERE id = 1")
	mustExec(t, a, "UPDATE ceiling.cold SET v = 1 WHERE id = 1") // held, never waited for
	done := make(chan error, 1)
	start := time.Now()
	go func() {
		_, err := b.Exec(ctx, "UPDATE ceiling.hot SET v = v + $1 WHERE id = $2", 2, 1)
		done <- err
	}()
	time.Sleep(600 * time.Millisecond)
	mustExec(t, a, "COMMIT")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	waited := time.Since(start)
	after, err := s.Sample(ctx)
	if err != nil {
		t.Fatal(err)
	}
	d := delta(before, after)
	// A table's counter appears with its first wait (absent before: zero).
	hot := after.Counters[target.CtrLockTablePrefix+"ceiling.hot"] - before.Counters[target.CtrLockTablePrefix+"ceiling.hot"]
	cold := after.Counters[target.CtrLockTablePrefix+"ceiling.cold"]
	t.Logf("lock waits: ceiling.hot %.0f ms, ceiling.cold %.0f ms, all %.0f ms, for a wait of %v", hot, cold, d[target.CtrWaitLockMs], waited.Round(time.Millisecond))
	if hot < 300 || hot > float64(waited.Milliseconds())+300 {
		t.Errorf("lock waits on ceiling.hot %.0f ms for one wait of %v", hot, waited)
	}
	if hot > d[target.CtrWaitLockMs]+1 {
		t.Errorf("lock waits on ceiling.hot %.0f ms exceed all lock waits, %.0f ms", hot, d[target.CtrWaitLockMs])
	}
	if _, ok := after.Counters[target.CtrLockTablePrefix+"ceiling.cold"]; ok {
		t.Errorf("ceiling.cold has lock waits (%.0f ms): nobody waited for it", cold)
	}
	// The wait events detail the categories: a row lock is a wait on the
	// holder's transaction id, and the events' times add up to the
	// categories'.
	var events, cats float64
	for k, v := range after.Counters {
		if strings.HasPrefix(k, target.CtrWaitEventPrefix) {
			events += v - before.Counters[k]
		}
	}
	for _, k := range waitCtrs {
		cats += d[k]
	}
	xid := after.Counters[target.CtrWaitEventPrefix+"Lock:transactionid"] - before.Counters[target.CtrWaitEventPrefix+"Lock:transactionid"]
	t.Logf("wait events: Lock:transactionid %.0f ms; all events %.0f ms, all categories %.0f ms", xid, events, cats)
	if xid < 300 {
		t.Errorf("Lock:transactionid %.0f ms for one wait of %v", xid, waited)
	}
	if math.Abs(events-cats) > 1 {
		t.Errorf("wait events sum to %.0f ms, the categories to %.0f ms", events, cats)
	}

	// A routine's call names no table (TPC-C --procedures): the wait
	// goes to the table of the tuple lock the session holds while it
	// waits for the row's transaction, from pg_locks.
	mustExec(t, a, "CREATE FUNCTION pg_temp.bump(d bigint) RETURNS void LANGUAGE sql AS 'UPDATE ceiling.hot SET v = v + d WHERE id = 1'")
	mustExec(t, b, "CREATE FUNCTION pg_temp.bump(d bigint) RETURNS void LANGUAGE sql AS 'UPDATE ceiling.hot SET v = v + d WHERE id = 1'")
	before = after
	mustExec(t, a, "BEGIN")
	mustExec(t, a, "SELECT pg_temp.bump(1)")
	start = time.Now()
	go func() {
		_, err := b.Exec(ctx, "SELECT pg_temp.bump($1)", 2)
		done <- err
	}()
	time.Sleep(600 * time.Millisecond)
	mustExec(t, a, "COMMIT")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	waited = time.Since(start)
	if after, err = s.Sample(ctx); err != nil {
		t.Fatal(err)
	}
	hot = after.Counters[target.CtrLockTablePrefix+"ceiling.hot"] - before.Counters[target.CtrLockTablePrefix+"ceiling.hot"]
	call := after.Counters[target.CtrLockTablePrefix+"pg_temp.bump()"]
	t.Logf("routine call's lock waits: ceiling.hot %.0f ms, pg_temp.bump() %.0f ms, for a wait of %v", hot, call, waited.Round(time.Millisecond))
	if hot < 300 || hot > float64(waited.Milliseconds())+300 || call > 100 {
		t.Errorf("a routine's wait of %v: %.0f ms on ceiling.hot, %.0f ms on the call; want it on the table", waited, hot, call)
	}
	for _, name := range []string{"hot", "cold"} {
		if err := tg.Schema().DropTable(ctx, name); err != nil {
			t.Error(err)
		}
	}
}

// TestLockTable: a lock wait's table is its statement's, or, where that
// names none or a routine's call, the lock's table from pg_locks.
func TestLockTable(t *testing.T) {
	for _, tc := range []struct{ q, rel, want string }{
		{"UPDATE ceiling.hot SET v = 1 WHERE id = $1", "ceiling.other", "ceiling.hot"},
		{"SELECT pg_temp.ceiling_tpcc_payment($1, $2)", "ceiling.warehouse", "ceiling.warehouse"},
		{"SELECT * FROM pg_temp.ceiling_tpcc_delivery($1)", "ceiling.district", "ceiling.district"},
		{"SELECT * FROM pg_temp.ceiling_tpcc_delivery($1)", "", "pg_temp.ceiling_tpcc_delivery()"},
		{"COMMIT", "", ""},
	} {
		if got := lockTable(tc.q, tc.rel); got != tc.want {
			t.Errorf("lockTable(%q, %q) = %q, want %q", tc.q, tc.rel, got, tc.want)
		}
	}
}
