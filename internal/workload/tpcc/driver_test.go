package tpcc

import (
	"context"
	"io"
	"math"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/spf13/pflag"

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
		d := thinkTime(rng, mean)
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

// The integration tests load one warehouse per engine (SQLite always;
// PostgreSQL and MySQL/MariaDB when CEILING_TEST_PG_DSN and
// CEILING_TEST_MYSQL_DSN are set, in a database of their own,
// ceiling_test_tpcc_run, so as not to disturb other tests), run a few
// hundred transactions on 4 workers and check the outcome against the
// database.

const runTestDB = "ceiling_test_tpcc_run"

// runTestDSNs returns the engines to test and their DSNs.
func runTestDSNs(t *testing.T) map[string]string {
	t.Helper()
	dsns := map[string]string{"sqlite": "sqlite:" + filepath.Join(t.TempDir(), "tpcc.db")}
	ctx := runTestCtx(t)
	if base := os.Getenv("CEILING_TEST_PG_DSN"); base != "" {
		c, err := pgx.Connect(ctx, base)
		if err != nil {
			t.Fatalf("connect to CEILING_TEST_PG_DSN: %v", err)
		}
		var exists bool
		if err := c.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", runTestDB).Scan(&exists); err != nil {
			t.Fatal(err)
		}
		if !exists {
			if _, err := c.Exec(ctx, "CREATE DATABASE "+runTestDB); err != nil {
				t.Fatal(err)
			}
		}
		c.Close(ctx)
		dsns["postgres"] = runTestWithDB(t, base, runTestDB)
	} else if os.Getenv("CEILING_REQUIRE_SERVERS") != "" {
		t.Fatal("CEILING_TEST_PG_DSN not set but CEILING_REQUIRE_SERVERS is: in CI the server must be reachable")
	} else {
		t.Log("CEILING_TEST_PG_DSN not set: PostgreSQL skipped")
	}
	if base := os.Getenv("CEILING_TEST_MYSQL_DSN"); base != "" {
		tg, err := engines.Open(ctx, target.Options{DSN: base})
		if err != nil {
			t.Fatalf("open CEILING_TEST_MYSQL_DSN: %v", err)
		}
		c, err := tg.Connect(ctx)
		if err == nil {
			_, err = c.Exec(ctx, "CREATE DATABASE IF NOT EXISTS "+runTestDB)
			c.Close()
		}
		tg.Close(ctx)
		if err != nil {
			t.Fatalf("create database %s: %v", runTestDB, err)
		}
		dsns["mysql"] = runTestWithDB(t, base, runTestDB)
	} else if os.Getenv("CEILING_REQUIRE_SERVERS") != "" {
		t.Fatal("CEILING_TEST_MYSQL_DSN not set but CEILING_REQUIRE_SERVERS is: in CI the server must be reachable")
	} else {
		t.Log("CEILING_TEST_MYSQL_DSN not set: MySQL/MariaDB skipped")
	}
	return dsns
}

func runTestWithDB(t *testing.T, dsn, db string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatalf("parse %s: %v", target.Redact(dsn), err)
	}
	u.Path = "/" + db
	return u.String()
}

func runTestCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func TestRunOnEachEngine(t *testing.T) {
	if testing.Short() {
		t.Skip("loads a warehouse per engine")
	}
	dsns := runTestDSNs(t)
	for _, eng := range []string{"sqlite", "postgres", "mysql"} {
		dsn, ok := dsns[eng]
		if !ok {
			continue
		}
		t.Run(eng, func(t *testing.T) { runOneEngine(t, dsn) })
	}
}

func runOneEngine(t *testing.T, dsn string) {
	ctx := runTestCtx(t)
	tg, err := engines.Open(ctx, target.Options{DSN: dsn, MaxConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := tg.Schema().DropAll(context.Background()); err != nil {
			t.Errorf("drop: %v", err)
		}
		tg.Close(context.Background())
	}()
	// Load as `ceiling prepare tpcc --warehouses 1 --force` does, then
	// attach a fresh workload to the dataset as `ceiling run tpcc` does.
	loader := &Workload{}
	lfs := pflag.NewFlagSet("prepare", pflag.ContinueOnError)
	loader.Flags(lfs)
	if err := lfs.Parse([]string{"--warehouses", "1", "--force"}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := loader.Prepare(ctx, tg, io.Discard); err != nil {
		t.Fatalf("prepare: %v", err)
	}
	t.Logf("loaded 1 warehouse in %v", time.Since(start).Round(time.Millisecond))

	w := &Workload{}
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	w.Flags(fs)
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	if err := w.Attach(ctx, tg, io.Discard); err != nil {
		t.Fatalf("attach: %v", err)
	}
	if w.Warehouses != 1 || w.consts != loader.consts {
		t.Fatalf("attached %d warehouses with constants %+v; loaded 1 with %+v", w.Warehouses, w.consts, loader.consts)
	}
	before := runDBTotals(t, ctx, tg)
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
	committed := res.Total.Ops[OpNewOrder].Requests - w.run.stats.noRollbacks.Load()
	if got := after.orders - before.orders; got != committed {
		t.Errorf("orders grew by %d, want %d (new orders done %d, rolled back %d)", got, committed, res.Total.Ops[OpNewOrder].Requests, w.run.stats.noRollbacks.Load())
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
	results, err := Check(ctx, tg)
	if err != nil {
		t.Fatalf("check: %v", err)
	}
	for _, r := range results {
		if !r.Pass() {
			t.Errorf("consistency condition %s (%s) fails after the run: %v", r.Clause, r.Rule, r.Failures)
		}
	}
	if len(results) < 4 {
		t.Errorf("check evaluated %d conditions, want at least 4", len(results))
	}
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
	c.orders = runQueryInt(t, ctx, tg, "SELECT COUNT(*) FROM "+d.Table(TOrders))
	c.nextOIDs = runQueryInt(t, ctx, tg, "SELECT SUM(d_next_o_id) FROM "+d.Table(TDistrict))
	return c
}

func runQueryInt(t *testing.T, ctx context.Context, tg target.Target, sql string) int64 {
	t.Helper()
	conn, err := tg.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	rows, err := conn.Query(ctx, sql)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	defer rows.Close()
	var n int64
	if !rows.Next() {
		t.Fatalf("%s: no row (%v)", sql, rows.Err())
	}
	if err := rows.Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}
