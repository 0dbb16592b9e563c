package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/spf13/pflag"
	"golang.org/x/sys/unix"

	"github.com/ceiling-db/ceiling/internal/metrics"
	"github.com/ceiling-db/ceiling/internal/target"
	"github.com/ceiling-db/ceiling/internal/target/postgres"
	"github.com/ceiling-db/ceiling/internal/testenv"
	"github.com/ceiling-db/ceiling/internal/workload"
)

// tidWorkload's workers record the OS thread of each request, to tell a
// multiplexed run (the workers of a group share their group's thread)
// from one goroutine per worker. Do runs doSQL when set (on the
// target's connection), else the connection's own Exec.
type tidWorkload struct {
	doSQL string
	pause bool // workers implement workload.Pauser
	// failFirst: worker 0's requests all fail at once, before reaching
	// the server (as a workload with no row free for it).
	failFirst bool
	calls     atomic.Int64
	procs     atomic.Int64 // the highest GOMAXPROCS seen as workers were made

	mu      sync.Mutex
	tids    map[int]map[int]bool // worker id → threads seen
	doProcs map[int]bool         // GOMAXPROCS values seen by requests
}

func (w *tidWorkload) Flags(*pflag.FlagSet)   {}
func (w *tidWorkload) Validate() error        { return nil }
func (w *tidWorkload) Params() map[string]any { return nil }
func (w *tidWorkload) Ops() []string          { return []string{"do"} }
func (w *tidWorkload) Tables() []string       { return nil }
func (w *tidWorkload) Prepare(context.Context, target.Target, io.Writer) error {
	return nil
}
func (w *tidWorkload) NewWorker(_ context.Context, _ target.Target, c target.Conn, id int) (workload.Worker, error) {
	tw := &tidWorker{w: w, c: c, id: id, tids: map[int]bool{}}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.procs.Store(max(w.procs.Load(), int64(runtime.GOMAXPROCS(0))))
	if w.tids == nil {
		w.tids = map[int]map[int]bool{}
	}
	if old := w.tids[id]; old != nil {
		tw.tids = old // a reconnected worker keeps its record
	} else {
		w.tids[id] = tw.tids
	}
	if w.pause {
		return pausingWorker{tw}, nil
	}
	if w.failFirst && id == 0 {
		return failingWorker{}, nil
	}
	return tw, nil
}

type failingWorker struct{}

var errNothingFree = errors.New("test: no row free for this worker")

func (failingWorker) Do(context.Context) (workload.Result, error) {
	return workload.Result{}, errNothingFree
}

// threads returns, per worker, the threads it ran on, and the distinct
// threads of the whole run.
func (w *tidWorkload) threads() (perWorker []int, all int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	seen := map[int]bool{}
	for id := 0; id < len(w.tids); id++ {
		perWorker = append(perWorker, len(w.tids[id]))
		for tid := range w.tids[id] {
			seen[tid] = true
		}
	}
	return perWorker, len(seen)
}

// seeProcs records GOMAXPROCS as a request sees it.
func (w *tidWorkload) seeProcs() {
	p := runtime.GOMAXPROCS(0)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.doProcs == nil {
		w.doProcs = map[int]bool{}
	}
	w.doProcs[p] = true
}

type tidWorker struct {
	w    *tidWorkload
	c    target.Conn
	id   int
	tids map[int]bool // written by this worker only while it runs
}

func (k *tidWorker) Do(ctx context.Context) (workload.Result, error) {
	k.tids[unix.Gettid()] = true
	k.w.seeProcs()
	k.w.calls.Add(1)
	n, err := k.c.Exec(ctx, k.w.doSQL)
	return workload.Result{Rows: n}, err
}

type pausingWorker struct{ *tidWorker }

func (pausingWorker) Pause(context.Context) error { return nil }

// pipeConn is a cooperative connection over a socket pair whose far end
// echoes: Exec sends one byte and waits, through the waiter, for it to come
// back.
type pipeConn struct {
	fakeConn
	fd     int
	accept bool
	waiter atomic.Pointer[func(int, bool) bool]
	set    atomic.Int64 // SetWaiter calls with a waiter
	unset  atomic.Int64 // SetWaiter(nil) calls
	waits  atomic.Int64 // waits that suspended the caller

	// With probeForeign, each Exec first asks the waiter from another
	// goroutine (as pgconn's background reader could); foreign counts the
	// times it agreed to suspend that caller.
	probeForeign bool
	foreign      atomic.Int64
}

func newPipeConn(t testing.TB, accept bool) *pipeConn {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	go func() { // echo, blocking
		unix.SetNonblock(fds[1], false)
		defer unix.Close(fds[1])
		b := make([]byte, 64)
		for {
			n, err := unix.Read(fds[1], b)
			if err == unix.EINTR {
				continue
			}
			if err != nil || n == 0 {
				return
			}
			if _, err := unix.Write(fds[1], b[:n]); err != nil {
				return
			}
		}
	}()
	return &pipeConn{fd: fds[0], accept: accept}
}

func (c *pipeConn) SetWaiter(w func(int, bool) bool) bool {
	if !c.accept {
		return false
	}
	if w == nil {
		c.unset.Add(1)
		c.waiter.Store(nil)
	} else {
		c.set.Add(1)
		c.waiter.Store(&w)
	}
	return true
}

func (c *pipeConn) Exec(ctx context.Context, _ string, _ ...any) (int64, error) {
	if w := c.waiter.Load(); w != nil && c.probeForeign {
		done := make(chan bool)
		go func() { done <- (*w)(c.fd, false) }()
		if <-done {
			c.foreign.Add(1)
		}
	}
	if _, err := unix.Write(c.fd, []byte{1}); err != nil {
		return 0, err
	}
	var b [1]byte
	for {
		n, err := unix.Read(c.fd, b[:])
		if n == 1 {
			return 1, nil
		}
		if err != unix.EAGAIN && err != unix.EINTR {
			return 0, errors.Join(err, io.EOF)
		}
		if w := c.waiter.Load(); w != nil && (*w)(c.fd, false) {
			c.waits.Add(1)
			continue
		}
		unix.Poll([]unix.PollFd{{Fd: int32(c.fd), Events: unix.POLLIN}}, 100)
	}
}

func (c *pipeConn) Close() error { return unix.Close(c.fd) }

// pipeTarget hands out pipeConns.
type pipeTarget struct {
	fakeTarget
	t       testing.TB
	refuse  int  // the refuse-th connection (1-based) does not cooperate
	foreign bool // connections probe the waiter from other goroutines
	mu      sync.Mutex
	conns   []*pipeConn
}

func (p *pipeTarget) Connect(context.Context) (target.Conn, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := newPipeConn(p.t, len(p.conns)+1 != p.refuse)
	c.probeForeign = p.foreign
	p.conns = append(p.conns, c)
	return c, nil
}

// TestMuxGroupsShareThreads: forced into two groups, eight workers on
// cooperative connections: every request is counted, the waiter really
// suspended the coroutines, and the run had exactly one P per group (no
// spare P for a group's yield to wake a thread for), given back at the
// end. Locked to their threads (CEILING_MUX_LOCKED=1, the earlier
// scheme), the groups run on exactly two threads, each worker always on
// the same one, with one spare P.
func TestMuxGroupsShareThreads(t *testing.T) {
	for _, locked := range []bool{false, true} {
		t.Run(fmt.Sprintf("locked=%v", locked), func(t *testing.T) {
			if locked != muxLocked {
				old := muxLocked
				muxLocked = locked
				defer func() { muxLocked = old }()
			}
			if !locked && !curgIsGoroutine {
				t.Skip("groups stay locked where curg reads the thread id")
			}
			t.Setenv("CEILING_MUX_GROUPS", "2")
			before := runtime.GOMAXPROCS(0)
			pt := &pipeTarget{t: t}
			w := &tidWorkload{}
			res, err := Run(context.Background(), Config{Threads: 8, Ops: 20000}, pt, w)
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Total.Total().Requests; got != 20000 {
				t.Fatalf("requests %d, want 20000", got)
			}
			if got := runtime.GOMAXPROCS(0); got != before {
				t.Errorf("GOMAXPROCS %d after the run, want %d as before it", got, before)
			}
			wantProcs := 2
			if locked {
				wantProcs = max(before, 3)
			}
			if len(w.doProcs) != 1 || !w.doProcs[wantProcs] {
				t.Errorf("GOMAXPROCS during the requests %v, want only %d", w.doProcs, wantProcs)
			}
			per, all := w.threads()
			if locked {
				for id, n := range per {
					if n != 1 {
						t.Errorf("worker %d ran on %d threads, want 1 (its group's)", id, n)
					}
				}
				if all != 2 {
					t.Errorf("workers ran on %d threads, want 2 (one per group)", all)
				}
			}
			// Unlocked, a group that yields may resume on another thread,
			// and here the echoing goroutines' blocking reads take the Ps
			// from the groups now and then (in a real run the server is
			// another process and the groups' system calls are raw), so
			// the thread count says nothing; the waits below and
			// TestMuxWaiterOnlyForItsCoroutine tell a multiplexed run.
			var waits int64
			for i, c := range pt.conns {
				if c.set.Load() != 1 {
					t.Errorf("connection %d: SetWaiter called %d times, want 1", i, c.set.Load())
				}
				waits += c.waits.Load()
			}
			if waits == 0 {
				t.Error("no request waited through the group's poll")
			}
		})
	}
}

// TestMuxWaiterOnlyForItsCoroutine: a group's waiter suspends only the
// coroutine of its own worker; asked from any other goroutine (pgconn's
// background reader), it declines, and the requests still complete.
func TestMuxWaiterOnlyForItsCoroutine(t *testing.T) {
	t.Setenv("CEILING_MUX_GROUPS", "2")
	pt := &pipeTarget{t: t, foreign: true}
	res, err := Run(context.Background(), Config{Threads: 4, Ops: 2000}, pt, &tidWorkload{})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Total.Total().Requests; got != 2000 {
		t.Fatalf("requests %d, want 2000", got)
	}
	var foreign, waits int64
	for _, c := range pt.conns {
		foreign += c.foreign.Load()
		waits += c.waits.Load()
	}
	if foreign != 0 {
		t.Errorf("the waiter agreed %d times to suspend a goroutine that was not its worker's coroutine", foreign)
	}
	if waits == 0 {
		t.Error("no request waited through the group's poll")
	}
}

// TestMuxNotUsed: the runner keeps one goroutine per worker when a worker
// pauses on purpose, when a connection does not cooperate (the others are
// given their blocking I/O back), in the open loop and when turned off.
func TestMuxNotUsed(t *testing.T) {
	cases := []struct {
		name   string
		groups string
		refuse int
		pause  bool
		rate   float64
	}{
		{name: "pauser", groups: "2", pause: true},
		{name: "refused", groups: "2", refuse: 3},
		{name: "open-loop", groups: "2", rate: 2000},
		{name: "off", groups: "0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("CEILING_MUX_GROUPS", tc.groups)
			pt := &pipeTarget{t: t, refuse: tc.refuse}
			w := &tidWorkload{pause: tc.pause}
			cfg := Config{Threads: 4, Ops: 400, Rate: tc.rate}
			res, err := Run(context.Background(), cfg, pt, w)
			if err != nil {
				t.Fatal(err)
			}
			// Closed loop: exactly the 400 requests. Open loop: 400 are
			// scheduled; one that could not start within LateAfter is
			// skipped as late (a slow machine, the race detector), and one
			// in flight at the step's end is not counted (StepResult: at
			// most one per worker here).
			got := res.Total.Total().Requests
			if tc.rate == 0 {
				if got != 400 {
					t.Fatalf("requests %d, want 400", got)
				}
			} else {
				var late int64
				for _, st := range res.Steps {
					late += st.Late
				}
				if got == 0 || got+late > 400 || got+late < 400-int64(cfg.Threads) {
					t.Fatalf("requests %d, late %d: want requests + late between %d and 400, some run",
						got, late, 400-cfg.Threads)
				}
			}
			for i, c := range pt.conns {
				if c.set.Load() != c.unset.Load() {
					t.Errorf("connection %d: left with a waiter (set %d, unset %d)", i, c.set.Load(), c.unset.Load())
				}
				if c.waits.Load() != 0 {
					t.Errorf("connection %d: %d requests waited through a group", i, c.waits.Load())
				}
			}
		})
	}
}

// pgDSN returns a DSN for a fresh database on the test server (dropped at
// the end of the test), or skips the test.
func pgDSN(t *testing.T) string {
	t.Helper()
	base := testenv.DSN(t, testenv.PostgresEnv)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	admin, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("connect %s: %v", target.Redact(base), err)
	}
	defer admin.Close(ctx)
	const db = "ceiling_runner_mux"
	if _, err := admin.Exec(ctx, "DROP DATABASE IF EXISTS "+db+" WITH (FORCE)"); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+db); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if c, err := pgx.Connect(ctx, base); err == nil {
			_, _ = c.Exec(ctx, "DROP DATABASE IF EXISTS "+db+" WITH (FORCE)")
			_ = c.Close(ctx)
		}
	})
	if strings.Contains(base, "://") {
		u, err := url.Parse(base)
		if err != nil {
			t.Fatal(err)
		}
		u.Path = "/" + db
		return u.String()
	}
	return base + " dbname=" + db
}

// openPG opens the PostgreSQL target in its default I/O mode for workers
// (mux) and creates table mux_test.
func openPG(t *testing.T, dsn string, workers int) target.Target {
	t.Helper()
	t.Setenv("CEILING_PG_IO", "")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// Multiplexes as the CLI asks it (CEILING_MUX_GROUPS set by the caller
	// counts).
	tg, err := postgres.Open(ctx, target.Options{DSN: dsn, MaxConns: workers, Multiplexed: Multiplexes(Config{Threads: workers}, nil)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tg.Close(context.Background()) })
	if err := tg.Schema().CreateTable(ctx, "mux_test", "id bigserial PRIMARY KEY, at timestamptz DEFAULT now()"); err != nil {
		t.Fatal(err)
	}
	return tg
}

func countRows(t *testing.T, dsn string) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	var n int64
	if err := c.QueryRow(ctx, "SELECT count(*) FROM ceiling.mux_test").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestMuxPostgres: a multiplexed run against PostgreSQL completes, counts
// every request (as many rows as requests), and its workers ran in two
// groups.
func TestMuxPostgres(t *testing.T) {
	bothWorkerIO(t, func(t *testing.T) {
		dsn := pgDSN(t)
		t.Setenv("CEILING_MUX_GROUPS", "2")
		tg := openPG(t, dsn, 8)
		w := &tidWorkload{doSQL: "INSERT INTO ceiling.mux_test DEFAULT VALUES"}
		res, err := Run(context.Background(), Config{Threads: 8, Ops: 4000}, tg, w)
		if err != nil {
			t.Fatal(err)
		}
		checkInsertRun(t, func() int64 { return countRows(t, dsn) }, w, res, 4000)
	})
}

// TestMuxTurns: in one group of two workers, worker 0's requests all fail
// before reaching the server, so its coroutine never suspends; worker 1's
// inserts still go on through the run, each one stored and counted. (The
// group used to stay with worker 0 until the run ended: no insert at all.)
func TestMuxTurns(t *testing.T) {
	bothWorkerIO(t, func(t *testing.T) {
		dsn := pgDSN(t)
		t.Setenv("CEILING_MUX_GROUPS", "1")
		tg := openPG(t, dsn, 2)
		w := &tidWorkload{doSQL: "INSERT INTO ceiling.mux_test DEFAULT VALUES", failFirst: true}
		res, err := Run(context.Background(), Config{Threads: 2, Duration: time.Second}, tg, w)
		if err != nil {
			t.Fatal(err)
		}
		if res.WorkerGroups != 1 {
			t.Fatalf("workers ran in %d groups, want 1", res.WorkerGroups)
		}
		tot := res.Total.Total()
		rows := countRows(t, dsn)
		t.Logf("%d inserts, %d rows, errors %v", tot.Requests, rows, tot.Errors)
		if tot.Requests < 100 {
			t.Errorf("worker 1 completed %d inserts in a second beside a worker that never suspends, want at least 100", tot.Requests)
		}
		// The run stops counting at its end; an insert in flight then may
		// still be stored.
		if rows < tot.Requests || rows > tot.Requests+1 {
			t.Errorf("%d rows stored for %d inserts counted", rows, tot.Requests)
		}
		var failed int64
		for _, n := range tot.Errors {
			failed += n
		}
		if failed == 0 {
			t.Error("worker 0's failures were not counted")
		}
		checkWorkerIO(t, res)
	})
}

// checkInsertRun checks a two-group run of w's inserts: every one of the
// ops requests counted and stored (rows counts the table's rows), no
// error, two groups. (The groups' threads are not counted: a group that
// yields may resume on another thread, see muxYield.)
func checkInsertRun(t *testing.T, rows func() int64, w *tidWorkload, res *Result, ops int64) {
	t.Helper()
	tot := res.Total.Total()
	var errs int64
	for _, n := range tot.Errors {
		errs += n
	}
	if tot.Requests != ops || errs != 0 {
		t.Fatalf("requests %d, errors %v (first %v): want %d and none", tot.Requests, tot.Errors, res.Total.FirstErr, ops)
	}
	if n := rows(); n != ops {
		t.Fatalf("%d rows in the table, want %d", n, ops)
	}
	if res.WorkerGroups != 2 {
		t.Errorf("workers ran in %d groups, want 2", res.WorkerGroups)
	}
	checkWorkerIO(t, res)
}

// TestMuxPostgresManyWorkers: more workers than the raw limit
// (postgres.maxRawWorkers) are multiplexed too, on as many threads as
// groups, and their connections never held a P each.
func TestMuxPostgresManyWorkers(t *testing.T) {
	dsn := pgDSN(t)
	testManyWorkers(t, func(n int) target.Target { return openPG(t, dsn, n) },
		"INSERT INTO ceiling.mux_test DEFAULT VALUES", func() int64 { return countRows(t, dsn) })
}

// testManyWorkers runs 24 workers of insertSQL in two groups on the target
// open returns for that many workers, and checks that their connections
// never held a P each and that the run was complete (checkInsertRun).
func testManyWorkers(t *testing.T, open func(workers int) target.Target, insertSQL string, rows func() int64) {
	t.Helper()
	t.Setenv("CEILING_MUX_GROUPS", "2")
	procs := runtime.GOMAXPROCS(0)
	const workers, ops = 24, 4800
	tg := open(workers)
	w := &tidWorkload{doSQL: insertSQL}
	res, err := Run(context.Background(), Config{Threads: workers, Ops: ops}, tg, w)
	if err != nil {
		t.Fatal(err)
	}
	// Each worker is made once its connection is open: a raw connection
	// would have raised GOMAXPROCS to one more than the connections.
	if got := w.procs.Load(); got > int64(procs) {
		t.Errorf("GOMAXPROCS reached %d while %d workers connected (was %d): the connections held Ps", got, workers, procs)
	}
	checkInsertRun(t, rows, w, res, ops)
}

// TestMuxPostgresCancel: eight workers in two groups all wait in the server
// at once (their connections give way instead of blocking the group), and
// cancelling the run interrupts their reads long before the server would
// have answered.
func TestMuxPostgresCancel(t *testing.T) {
	bothWorkerIO(t, func(t *testing.T) {
		dsn := pgDSN(t)
		t.Setenv("CEILING_MUX_GROUPS", "2")
		tg := openPG(t, dsn, 8)
		watch, err := pgx.Connect(context.Background(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer watch.Close(context.Background())
		testMuxCancel(t, tg, "SELECT pg_sleep(60)", func(ctx context.Context) (n int64, err error) {
			err = watch.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
				WHERE datname = current_database() AND application_name = $1 AND query LIKE 'SELECT pg_sleep%' AND state = 'active'`,
				postgres.WorkerAppName).Scan(&n)
			return n, err
		})
	})
}

// testMuxCancel runs eight workers of sleepSQL (a statement that waits a
// minute) in two groups on tg and cancels the run once sleeping (the count
// of the statements running on the server) says all eight wait at once.
// It checks that they did, and that the run ended long before the server
// would have answered, partial, with one request per worker.
func testMuxCancel(t *testing.T, tg target.Target, sleepSQL string, sleeping func(context.Context) (int64, error)) {
	t.Helper()
	w := &tidWorkload{doSQL: sleepSQL}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	most := make(chan int64, 1)
	go func() {
		var n int64
		for i := 0; i < 200 && ctx.Err() == nil; i++ {
			var err error
			if n, err = sleeping(ctx); err != nil || n >= 8 {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		most <- n
		cancel()
	}()

	start := time.Now()
	res, err := Run(ctx, Config{Threads: 8, Duration: time.Hour}, tg, w)
	if err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el > 30*time.Second {
		t.Fatalf("the run took %v after its context was cancelled: reads were not interrupted", el)
	}
	if n := <-most; n != 8 {
		t.Errorf("%d sessions were waiting in the server at once, want 8: the groups blocked on one connection", n)
	}
	if !res.Partial {
		t.Error("a cancelled run is not marked partial")
	}
	if got := w.calls.Load(); got != 8 {
		t.Errorf("%d requests started, want 8 (one per worker)", got)
	}
	checkWorkerIO(t, res)
}

// TestMuxPostgresReconnect: when the server terminates the worker sessions
// of a multiplexed run, the workers reconnect within their groups and the
// run completes its requests.
func TestMuxPostgresReconnect(t *testing.T) {
	bothWorkerIO(t, func(t *testing.T) {
		dsn := pgDSN(t)
		t.Setenv("CEILING_MUX_GROUPS", "2")
		tg := openPG(t, dsn, 8)
		killer, err := pgx.Connect(context.Background(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer killer.Close(context.Background())
		testMuxReconnect(t, tg, "INSERT INTO ceiling.mux_test DEFAULT VALUES", func(ctx context.Context) (n int64) {
			_ = killer.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
				WHERE datname = current_database() AND application_name = $1`, postgres.WorkerAppName).Scan(&n)
			return n
		}, func() int64 { return countRows(t, dsn) })
	})
}

// testMuxReconnect runs 6,000 requests of insertSQL by eight workers in
// two groups on tg, calls kill (which ends worker sessions on the server
// and says how many) once 500 have started, and checks that each lost
// request was followed by a reconnect, that the run completed its
// requests, that the table holds them (rows; a request cut off by the
// kill may have committed), and that the run was multiplexed in two groups.
func testMuxReconnect(t *testing.T, tg target.Target, insertSQL string, kill func(context.Context) int64, rows func() int64) {
	t.Helper()
	w := &tidWorkload{doSQL: insertSQL}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	killed := make(chan int64, 1)
	go func() {
		for w.calls.Load() < 500 && ctx.Err() == nil {
			time.Sleep(time.Millisecond)
		}
		killed <- kill(ctx)
	}()
	const ops = 6000
	res, err := Run(ctx, Config{Threads: 8, Ops: ops}, tg, w)
	if err != nil {
		t.Fatal(err)
	}
	if n := <-killed; n == 0 {
		t.Fatal("no worker session was ended; the test did not test anything")
	}
	tot := res.Total.Total()
	lost := tot.Errors[metrics.ErrConnLost]
	if lost == 0 || res.Total.Reconnects != lost {
		t.Fatalf("lost %d, reconnects %d (errors %v, first %v): want equal and non-zero",
			lost, res.Total.Reconnects, tot.Errors, res.Total.FirstErr)
	}
	if tot.Requests+lost != ops {
		t.Fatalf("requests %d + lost %d, want %d", tot.Requests, lost, ops)
	}
	if n := rows(); n < tot.Requests || n > tot.Requests+lost {
		t.Fatalf("%d rows, want between %d and %d", n, tot.Requests, tot.Requests+lost)
	}
	if res.WorkerGroups != 2 {
		t.Errorf("workers ran in %d groups, want 2", res.WorkerGroups)
	}
	checkWorkerIO(t, res)
}

// wantWorkerIO is the Result.WorkerIO that bothWorkerIO's current run
// expects; empty outside it.
var wantWorkerIO string

// bothWorkerIO runs f twice: with the groups on io_uring whatever their
// size (CEILING_MUX_RING=1; where this system has io_uring, the run polls
// otherwise, and says so) and polling (CEILING_MUX_RING=0). checkWorkerIO checks that each run waited as
// expected.
func bothWorkerIO(t *testing.T, f func(t *testing.T)) {
	for _, off := range []bool{false, true} {
		name := map[bool]string{false: "io_uring", true: "ppoll"}[off]
		t.Run(name, func(t *testing.T) {
			oldOff, oldOn := ringOff, ringOn
			ringOff, ringOn = off, !off
			defer func() { ringOff, ringOn, wantWorkerIO = oldOff, oldOn, "" }()
			wantWorkerIO = "ppoll"
			if !off {
				if r, err := newURing(8); err != nil {
					t.Logf("no io_uring here (%v): this run polls", err)
				} else {
					r.close()
					wantWorkerIO = "io_uring"
				}
			}
			f(t)
		})
	}
}

// checkWorkerIO checks a multiplexed run's Result.WorkerIO against
// bothWorkerIO's expectation.
func checkWorkerIO(t *testing.T, res *Result) {
	t.Helper()
	if wantWorkerIO != "" && res.WorkerIO != wantWorkerIO {
		t.Errorf("the groups waited with %q, want %q", res.WorkerIO, wantWorkerIO)
	}
}
