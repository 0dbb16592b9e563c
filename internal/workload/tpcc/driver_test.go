package tpcc

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-db/ceiling/internal/metrics"
	"github.com/ceiling-db/ceiling/internal/runner"
	"github.com/ceiling-db/ceiling/internal/target"
	"github.com/ceiling-db/ceiling/internal/target/engines"
	"github.com/ceiling-db/ceiling/internal/workload"
)

func TestMixProportions(t *testing.T) {
	sum := 0
	for _, m := range Mix {
		sum += m
	}
	if sum != 1000 || len(Mix) != len((&Workload{}).Ops()) {
		t.Fatalf("mix sums to %d per mille over %d ops", sum, len(Mix))
	}
	k := &vuser{rng: rand.New(rand.NewPCG(1, 2))}
	const n = 400000
	var counts [numOps]int
	for i := 0; i < n; i++ {
		counts[k.pick()]++
	}
	want := [numOps]float64{45, 43, 4, 4, 4}
	for op := range counts {
		if got := float64(counts[op]) / n * 100; math.Abs(got-want[op]) > 0.3 {
			t.Errorf("op %s drawn %.2f%%, want %.0f%%", (&Workload{}).Ops()[op], got, want[op])
		}
	}
}

func TestHomeWarehouse(t *testing.T) {
	w := &Workload{Warehouses: 3}
	for id, want := range []int{1, 2, 3, 1, 2} {
		wk, err := w.NewWorker(context.Background(), dialectTarget{}, nil, id)
		if err != nil {
			t.Fatal(err)
		}
		k := wk.(*vuser)
		if k.home != want || k.warehouse() != want {
			t.Errorf("worker %d: home %d, want %d", id, k.home, want)
		}
		if wantD := id/3 + 1; k.district != wantD {
			t.Errorf("worker %d: Stock-Level district %d, want %d", id, k.district, wantD)
		}
	}
	w.run.allWarehouses = true
	wk, _ := w.NewWorker(context.Background(), dialectTarget{}, nil, 0)
	k := wk.(*vuser)
	seen := map[int]bool{}
	for i := 0; i < 300; i++ {
		seen[k.warehouse()] = true
	}
	if len(seen) != 3 {
		t.Errorf("--all-warehouses drew warehouses %v, want all of 1..3", seen)
	}
}

func TestThinkTime(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	mean := 12 * time.Second
	const n = 200000
	var sum time.Duration
	for i := 0; i < n; i++ {
		d := workload.ThinkTime(rng, mean)
		if d < 0 || d > 10*mean {
			t.Fatalf("think time %v outside [0, 10×mean]", d)
		}
		sum += d
	}
	// The truncation at 10× removes e^-10 of the mass: the mean stays ≈ 12 s.
	if got := (sum / n).Seconds(); math.Abs(got-12) > 0.15 {
		t.Errorf("mean think time %.2fs, want 12s", got)
	}
}

func TestPauseWithoutKeyingReturnsAtOnce(t *testing.T) {
	k := &vuser{w: &Workload{}, rng: rand.New(rand.NewPCG(1, 1)), next: -1, prev: -1}
	if err := k.Pause(context.Background()); err != nil || k.next != -1 {
		t.Fatalf("Pause without --keying-thinking: err %v, next %d", err, k.next)
	}
	k.w.run.keyingThinking = true
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := k.Pause(ctx); err == nil || k.next < 0 {
		t.Fatalf("Pause with keying on a cancelled context: err %v, next %d; want an error and a chosen op", err, k.next)
	}
}

func TestFigures(t *testing.T) {
	w := &Workload{Warehouses: 2}
	delta := map[string]float64{obsNewOrders: 600, obsCommits: 1300, obsRollbacks: 14, obsRetries: 3, obsNORollbacks: 6}
	pg := w.Figures(workload.Span{Seconds: 30, Delta: delta, Server: map[string]float64{target.CtrCommits: 1500, target.CtrRollbacks: 20}})
	if pg[FigNOPM] != 1200 || pg[FigNewOrders] != 600 || pg[FigTPM] != 3040 || pg[FigClientTPM] != 2628 || pg[FigRetries] != 3 || pg[FigNORollbacks] != 6 {
		t.Errorf("postgres figures %v", pg)
	}
	if _, ok := pg[FigEfficiency]; ok {
		t.Error("efficiency reported without keying and think times")
	}
	my := w.Figures(workload.Span{Seconds: 60, Delta: delta, Server: map[string]float64{"mysql.com_commit": 900, "mysql.com_rollback": 10}})
	if my[FigTPM] != 910 {
		t.Errorf("mysql tpm %v, want 910", my[FigTPM])
	}
	lite := w.Figures(workload.Span{Seconds: 60, Delta: delta, Server: map[string]float64{target.CtrLogBytes: 1}})
	if _, ok := lite[FigTPM]; ok {
		t.Error("TPM reported without the server's commit counters")
	}
	w.run.keyingThinking = true
	kt := w.Figures(workload.Span{Seconds: 60, Delta: map[string]float64{obsNewOrders: 12.86}})
	if got := kt[FigEfficiency]; math.Abs(got-50) > 1e-9 {
		t.Errorf("efficiency %v, want 50 (12.86 NOPM on 2 warehouses)", got)
	}
	if len(w.Figures(workload.Span{Seconds: 60})) != 0 {
		t.Error("figures without readings")
	}
}

func TestRetryable(t *testing.T) {
	for c, want := range map[metrics.ErrClass]bool{metrics.ErrSerialization: true, metrics.ErrLockTimeout: true, metrics.ErrConstraint: false, metrics.ErrConnLost: false, metrics.ErrOther: false} {
		if retryable(c) != want {
			t.Errorf("retryable(%s) = %v, want %v", c, !want, want)
		}
	}
}

// dialectTarget gives NewWorker a dialect; nothing else is called.
type dialectTarget struct{ target.Target }

func (dialectTarget) Dialect() target.Dialect {
	return target.Dialect{Engine: "sqlite", Prefix: "ceiling_"}
}

// runAndAssert runs 600 transactions on 4 workers of w (attached to a
// loaded dataset on tg, as `ceiling run` does) and asserts the outcome:
// every transaction type ran, no error other than exhausted retries, the
// committed New-Orders equal the database's count of new orders, NOPM was
// counted from the database, and TPM is present except on SQLite.
func runAndAssert(t *testing.T, ctx context.Context, tg target.Target, w *Workload) {
	t.Helper()
	before := runDBTotals(t, ctx, tg)
	noRollbacks := w.run.stats.noRollbacks.Load()
	res, err := runner.Run(ctx, runner.Config{Threads: 4, Ops: 600}, tg, w)
	if err != nil {
		t.Fatal(err)
	}
	after := runDBTotals(t, ctx, tg)

	tot := res.Total.Total()
	for i, op := range res.Total.Ops {
		if op.Requests == 0 {
			t.Errorf("%s never succeeded (%d errors)", w.Ops()[i], op.ErrorCount())
		}
	}
	for _, c := range metrics.ErrClasses() {
		if n := tot.Errors[c]; n > 0 {
			// Deadlocks and lock timeouts are retried up to maxAttempts
			// times; anything else is a bug.
			if !retryable(c) {
				t.Errorf("%d %s errors, first: %s", n, c, res.Total.FirstErr[c])
			} else {
				t.Logf("%d %s errors after retries", n, c)
			}
		}
	}
	// Every New-Order the runner counted as done either committed or
	// rolled back on purpose: the database's count of committed ones
	// (orders added, and the districts' next order ids) must match.
	rolledBack := w.run.stats.noRollbacks.Load() - noRollbacks
	committed := res.Total.Ops[OpNewOrder].Requests - rolledBack
	if got := after.orders - before.orders; got != committed {
		t.Errorf("orders grew by %d, want %d (new orders done %d, rolled back %d)", got, committed, res.Total.Ops[OpNewOrder].Requests, rolledBack)
	}
	if got := after.nextOIDs - before.nextOIDs; got != committed {
		t.Errorf("sum of d_next_o_id grew by %d, want %d", got, committed)
	}
	// NOPM counts from the database over the measured phase: here every
	// request is measured (no warm-up, --ops), so it sees at most all of them.
	if n := res.Observed[obsNewOrders]; n <= 0 || int64(n) > committed {
		t.Errorf("observed %v new orders, want 1..%d", n, committed)
	}
	figs := w.Figures(workload.Span{Seconds: res.Elapsed.Seconds(), Delta: res.Observed, Server: runServerCounters(res)})
	if figs[FigNOPM] <= 0 {
		t.Errorf("NOPM %v", figs[FigNOPM])
	}
	_, hasTPM := figs[FigTPM]
	if want := tg.Dialect().Engine != "sqlite"; hasTPM != want {
		t.Errorf("TPM reported: %v, want %v (figures %v)", hasTPM, want, figs)
	}
	t.Logf("figures: %v; retries %d; per op: %v", figs, w.run.stats.retries.Load(), runOpCounts(res))
}

func runServerCounters(res *runner.Result) map[string]float64 {
	if res.Evidence == nil {
		return nil
	}
	return res.Evidence.Counters
}

func runOpCounts(res *runner.Result) map[string]int64 {
	m := map[string]int64{}
	for _, op := range res.Total.Ops {
		m[op.Name] = op.Requests
	}
	return m
}

type dbTotals struct{ orders, nextOIDs int64 }

func runDBTotals(t *testing.T, ctx context.Context, tg target.Target) dbTotals {
	t.Helper()
	d := tg.Dialect()
	var c dbTotals
	c.orders = ltCount(t, ctx, tg, "SELECT COUNT(*) FROM "+d.Table(TOrders))
	c.nextOIDs = ltCount(t, ctx, tg, "SELECT SUM(d_next_o_id) FROM "+d.Table(TDistrict))
	return c
}

func TestWorkerStreams(t *testing.T) {
	w := &Workload{Warehouses: 1}
	draw := func(id int) uint64 {
		wk, err := w.NewWorker(context.Background(), dialectTarget{}, nil, id)
		if err != nil {
			t.Fatal(err)
		}
		return wk.(*vuser).rng.Uint64()
	}
	a0, b0, a1 := draw(0), draw(1), draw(0) // a1: worker 0 after a reconnect
	if a0 == b0 || a0 == a1 {
		t.Errorf("streams not distinct: worker 0 %x, worker 1 %x, worker 0 again %x", a0, b0, a1)
	}
	// A new run with the same seed replays the first streams.
	wk, err := (&Workload{Warehouses: 1}).NewWorker(context.Background(), dialectTarget{}, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := wk.(*vuser).rng.Uint64(); got != a0 {
		t.Errorf("a new run with the same seed gives worker 0 %x, want %x", got, a0)
	}
}

// runRetryTest holds the lock of warehouse 1 in one session while a worker
// whose sessions have lock_timeout = 100 ms runs a Payment (which updates
// that warehouse first): each attempt fails with a lock timeout, is rolled
// back and retried, and after maxAttempts the error is returned and
// classified; once the lock is released, the same worker's Payment commits.
func runRetryTest(t *testing.T, ctx context.Context, tg target.Target, dsn string, w *Workload) {
	short, err := engines.Open(ctx, target.Options{DSN: dsn + "&lock_timeout=100"})
	if err != nil {
		t.Fatal(err)
	}
	defer short.Close(context.Background())
	blocker, err := tg.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer blocker.Close()
	conn, err := short.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	wk, err := w.NewWorker(ctx, short, conn, 0) // home warehouse 1
	if err != nil {
		t.Fatal(err)
	}
	k := wk.(*vuser)
	if err := blocker.Begin(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := blocker.Exec(ctx, "UPDATE "+tg.Dialect().Table(TWarehouse)+" SET w_ytd = w_ytd WHERE w_id = 1"); err != nil {
		t.Fatal(err)
	}
	retries := w.run.stats.retries.Load()
	k.next = OpPayment
	res, err := k.Do(ctx)
	if err == nil || short.Classify(err) != metrics.ErrLockTimeout || res.Op != OpPayment {
		t.Fatalf("payment behind a held lock: op %d, err %v (class %s); want a lock timeout", res.Op, err, short.Classify(err))
	}
	if got := w.run.stats.retries.Load() - retries; got != maxAttempts-1 {
		t.Errorf("%d retries, want %d", got, maxAttempts-1)
	}
	if err := blocker.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	k.next = OpPayment
	if _, err := k.Do(ctx); err != nil {
		t.Fatalf("payment after the lock was released: %v", err)
	}
}

// TestDeliveryBudget checks that Delivery alone never plans more deliveries
// for a warehouse than 90% of its emptiest district's undelivered orders,
// whatever the split of workers over the warehouses.
func TestDeliveryBudget(t *testing.T) {
	for _, tc := range []struct {
		least           int64
		warehouses, thr int
		all             bool
		want            int64
	}{
		{900, 1, 1, false, 810},
		{900, 1, 8, false, 810},
		{900, 2, 8, false, 1620},
		{900, 2, 3, false, 1215}, // warehouse 1 has 2 of the 3 workers
		{900, 4, 2, false, 1620}, // only 2 warehouses in use
		{900, 4, 2, true, 3240},
		{1, 2, 8, false, 0},
		{0, 2, 8, false, 0},
	} {
		got := deliveryBudget(tc.least, tc.warehouses, tc.thr, tc.all)
		if got != tc.want {
			t.Errorf("deliveryBudget(%d, W=%d, threads=%d, all=%v) = %d, want %d", tc.least, tc.warehouses, tc.thr, tc.all, got, tc.want)
		}
		if tc.all || tc.thr == 0 {
			continue
		}
		// Worker id's home is id mod W + 1; each worker gets budget/threads
		// requests (runner splitOps gives the remainder to the first ones).
		perWH := map[int]int64{}
		for id := 0; id < tc.thr; id++ {
			n := got / int64(tc.thr)
			if int64(id) < got%int64(tc.thr) {
				n++
			}
			perWH[id%tc.warehouses] += n
		}
		for wh, n := range perWH {
			if n > tc.least*9/10 {
				t.Errorf("W=%d threads=%d: warehouse %d gets %d deliveries, above 90%% of %d", tc.warehouses, tc.thr, wh+1, n, tc.least)
			}
		}
	}
}

// isolateAndAssert runs each transaction alone (workload.Isolator), as
// `ceiling run --isolate` does: only that transaction runs, Delivery is
// bounded by the undelivered orders and never finds an empty district, and
// on the servers the read-only transactions cost no log while New-Order
// does. The mix is restored afterwards.
func isolateAndAssert(t *testing.T, ctx context.Context, tg target.Target, w *Workload) {
	t.Helper()
	const threads = 2
	defer w.Isolate(-1)
	logPerOp := map[int]float64{}
	for op := range numOps {
		budget, why, err := w.IsolationBudget(ctx, tg, op, threads)
		if err != nil {
			t.Fatal(err)
		}
		cfg := runner.Config{Threads: threads, Ops: 200}
		if op == OpDelivery {
			// 1 warehouse, 900 undelivered orders per district at load,
			// some delivered by the mix since and at most 200 + 600 added
			// (New-Order alone and the mix).
			if budget < 100 || budget > 1530 || !strings.Contains(why, "undelivered") {
				t.Fatalf("delivery budget %d (%q), want 100..1530 bounded by the undelivered orders", budget, why)
			}
			cfg.Ops = min(budget, 100)
		} else if budget != 0 {
			t.Fatalf("%s: budget %d, want none", w.Ops()[op], budget)
		}
		empty := w.run.stats.emptyDelivery.Load()
		w.Isolate(op)
		res, err := runner.Run(ctx, cfg, tg, w)
		if err != nil {
			t.Fatal(err)
		}
		for i, o := range res.Total.Ops {
			if (i == op) != (o.Requests > 0) {
				t.Errorf("%s alone: %s ran %d times", w.Ops()[op], w.Ops()[i], o.Requests)
			}
		}
		if op == OpDelivery && w.run.stats.emptyDelivery.Load() != empty {
			t.Errorf("delivery alone found %d empty districts within its budget", w.run.stats.emptyDelivery.Load()-empty)
		}
		if ev := res.Evidence; ev != nil {
			if b, ok := ev.Counters[target.CtrLogBytes]; ok {
				logPerOp[op] = b / float64(res.Total.Ops[op].Requests)
			}
		}
	}
	w.Isolate(-1)
	k, err := w.NewWorker(ctx, tg, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for range 200 {
		seen[k.(*vuser).pick()] = true
	}
	if len(seen) != numOps {
		t.Errorf("after Isolate(-1) the mix drew only %v", seen)
	}
	t.Logf("log bytes per transaction alone: %v", logPerOp)
	if tg.Dialect().Engine == "sqlite" {
		return // no server: WAL bytes also come from checkpoints of earlier work
	}
	no, ok1 := logPerOp[OpNewOrder]
	status, ok2 := logPerOp[OpOrderStatus]
	if !ok1 || !ok2 {
		t.Fatalf("log bytes not measured: %v", logPerOp)
	}
	// New-Order inserts ~10 order lines and updates ~10 stock rows; Order-
	// Status only reads. The server's background work (InnoDB's purge of
	// the previous runs' undo, checkpoints) also writes log, server-wide:
	// a third leaves room for it.
	if no < 1000 || status > no/3 {
		t.Errorf("log bytes per transaction: new_order %.0f, order_status %.0f; want new_order ≥ 1000 and order_status below a third of it", no, status)
	}
}
