package tpcc

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/spf13/pflag"

	"github.com/ceiling-db/ceiling/internal/target"
	"github.com/ceiling-db/ceiling/internal/target/engines"
	"github.com/ceiling-db/ceiling/internal/testenv"
)

// The loader's integration tests use a database of their own on the
// servers, ceiling_test_tpcc_load, so they never meet other tests' tables.
const loadTestDB = "ceiling_test_tpcc_load"

// loadTestDSNs returns the engines to test and their DSNs: SQLite always,
// PostgreSQL and MySQL/MariaDB when CEILING_TEST_PG_DSN and
// CEILING_TEST_MYSQL_DSN are set.
// dropTestDB drops the test database on the server of base when the test
// is over, so that the tests leave nothing behind.
func dropTestDB(t *testing.T, engine, base string) {
	ctx := context.Background()
	var err error
	switch engine {
	case "postgres":
		var c *pgx.Conn
		if c, err = pgx.Connect(ctx, base); err == nil {
			_, err = c.Exec(ctx, "DROP DATABASE IF EXISTS "+loadTestDB+" WITH (FORCE)")
			c.Close(ctx)
		}
	case "mysql":
		var tg target.Target
		if tg, err = engines.Open(ctx, target.Options{DSN: base}); err == nil {
			var c target.Conn
			if c, err = tg.Connect(ctx); err == nil {
				_, err = c.Exec(ctx, "DROP DATABASE IF EXISTS "+loadTestDB)
				c.Close()
			}
			tg.Close(ctx)
		}
	}
	if err != nil {
		t.Errorf("drop test database %s on %s: %v", loadTestDB, engine, err)
	}
}

func loadTestDSNs(t *testing.T, ctx context.Context) map[string]string {
	t.Helper()
	dsns := map[string]string{"sqlite": "sqlite:" + filepath.Join(t.TempDir(), "tpcc.db")}
	withDB := func(dsn string) string {
		u, err := url.Parse(dsn)
		if err != nil {
			t.Fatalf("parse %s: %v", target.Redact(dsn), err)
		}
		u.Path = "/" + loadTestDB
		return u.String()
	}
	if base := testenv.Optional(t, testenv.PostgresEnv); base != "" {
		c, err := pgx.Connect(ctx, base)
		if err != nil {
			t.Fatalf("connect to CEILING_TEST_PG_DSN: %v", err)
		}
		var exists bool
		err = c.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", loadTestDB).Scan(&exists)
		if err == nil && !exists {
			_, err = c.Exec(ctx, "CREATE DATABASE "+loadTestDB)
		}
		c.Close(ctx)
		if err != nil {
			t.Fatalf("create database %s: %v", loadTestDB, err)
		}
		t.Cleanup(func() { dropTestDB(t, "postgres", base) })
		dsns["postgres"] = withDB(base)
	}
	if base := testenv.Optional(t, testenv.MySQLEnv); base != "" {
		tg, err := engines.Open(ctx, target.Options{DSN: base})
		if err != nil {
			t.Fatalf("open CEILING_TEST_MYSQL_DSN: %v", err)
		}
		c, err := tg.Connect(ctx)
		if err == nil {
			_, err = c.Exec(ctx, "CREATE DATABASE IF NOT EXISTS "+loadTestDB)
			c.Close()
		}
		tg.Close(ctx)
		if err != nil {
			t.Fatalf("create database %s: %v", loadTestDB, err)
		}
		t.Cleanup(func() { dropTestDB(t, "mysql", base) })
		dsns["mysql"] = withDB(base)
	}
	return dsns
}

// newTestWorkload returns a Workload configured by args, as the CLI does.
func newTestWorkload(t *testing.T, args ...string) *Workload {
	t.Helper()
	w := Meta.New().(*Workload)
	fs := pflag.NewFlagSet("tpcc", pflag.ContinueOnError)
	w.Flags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	if err := w.Validate(); err != nil {
		t.Fatal(err)
	}
	return w
}

func dropTPCC(t *testing.T, tg target.Target) {
	t.Helper()
	for _, name := range (&Workload{}).Tables() {
		if err := tg.Schema().DropTable(context.Background(), name); err != nil {
			t.Errorf("drop %s: %v", name, err)
		}
	}
}

func ltCount(t *testing.T, ctx context.Context, tg target.Target, sql string) int64 {
	t.Helper()
	c, err := tg.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rows, err := c.Query(ctx, sql)
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

func ltExec(t *testing.T, ctx context.Context, tg target.Target, sql string) {
	t.Helper()
	c, err := tg.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Exec(ctx, sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

func ltFailures(results []CheckResult, clause string) []string {
	for _, r := range results {
		if r.Clause == clause {
			return r.Failures
		}
	}
	return []string{"clause " + clause + " not checked"}
}

func mustCheck(t *testing.T, ctx context.Context, tg target.Target, only ...string) []CheckResult {
	t.Helper()
	res, err := Check(ctx, tg, only...)
	if err != nil {
		t.Fatalf("check: %v", err)
	}
	if len(only) == 0 && len(res) < 11 || len(only) > 0 && len(res) != len(only) {
		t.Fatalf("%d conditions checked", len(res))
	}
	return res
}

// TestLoadRunCheck is the integration test of the issue, per engine: load
// one warehouse, check the cardinalities and the consistency conditions,
// refuse a second load, run a few hundred transactions, check again, then
// corrupt one district and see the check name it, and clean up.
func TestLoadRunCheck(t *testing.T) {
	if testing.Short() {
		t.Skip("loads a warehouse per engine")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	for eng, dsn := range loadTestDSNs(t, ctx) {
		t.Run(eng, func(t *testing.T) { loadRunCheck(t, ctx, dsn) })
	}
}

func loadRunCheck(t *testing.T, ctx context.Context, dsn string) {
	tg, err := engines.Open(ctx, target.Options{DSN: dsn, MaxConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close(context.Background())
	dropTPCC(t, tg)
	defer dropTPCC(t, tg)
	tb := tg.Dialect().Table

	w := newTestWorkload(t, "--warehouses", "1", "--load-threads", "2")
	var out bytes.Buffer
	start := time.Now()
	if err := w.Prepare(ctx, tg, &out); err != nil {
		t.Fatalf("prepare: %v\n%s", err, out.String())
	}
	t.Logf("loaded 1 warehouse in %v:\n%s", time.Since(start).Round(time.Millisecond), out.String())
	if !strings.Contains(out.String(), "rows/s") || !strings.Contains(out.String(), "MB/min") {
		t.Errorf("no rows/s and MB/min in the load output:\n%s", out.String())
	}
	want := map[string]int64{TItem: Items, TWarehouse: 1, TDistrict: 10, TCustomer: 30_000, THistory: 30_000,
		TOrders: 30_000, TNewOrder: 9_000, TStock: Items}
	for name, n := range want {
		if got := ltCount(t, ctx, tg, "SELECT count(*) FROM "+tb(name)); got != n {
			t.Errorf("%s: %d rows, want %d", name, got, n)
		}
	}
	// Every table but history has its primary key (added after the data on
	// PostgreSQL), and both secondary indexes exist.
	var pks, idx string
	switch tg.Dialect().Engine {
	case "postgres":
		pks = "SELECT count(*) FROM pg_constraint c JOIN pg_class r ON r.oid = c.conrelid JOIN pg_namespace n ON n.oid = r.relnamespace WHERE c.contype = 'p' AND n.nspname = 'ceiling' AND r.relname IN (%s)"
		idx = "SELECT count(*) FROM pg_indexes WHERE schemaname = 'ceiling' AND indexname IN ('" + IdxCustomerLast + "', '" + IdxOrdersCustomer + "')"
	case "mysql":
		pks = "SELECT count(*) FROM information_schema.table_constraints WHERE constraint_type = 'PRIMARY KEY' AND table_schema = DATABASE() AND table_name IN (%s)"
		idx = "SELECT count(DISTINCT index_name) FROM information_schema.statistics WHERE table_schema = DATABASE() AND index_name IN ('" + IdxCustomerLast + "', '" + IdxOrdersCustomer + "')"
	}
	if pks != "" {
		var names []string
		for _, name := range dataTables {
			n := tb(name)
			if i := strings.LastIndexByte(n, '.'); i >= 0 {
				n = n[i+1:]
			}
			names = append(names, "'"+n+"'")
		}
		if got := ltCount(t, ctx, tg, fmt.Sprintf(pks, strings.Join(names, ", "))); got != int64(len(dataTables)-1) {
			t.Errorf("%d tables with a primary key, want %d (all but history)", got, len(dataTables)-1)
		}
		if got := ltCount(t, ctx, tg, idx); got != 2 {
			t.Errorf("%d secondary indexes, want 2", got)
		}
	}
	if n := ltCount(t, ctx, tg, "SELECT count(*) FROM "+tb(TItem)+" WHERE i_data LIKE '%ORIGINAL%'"); n < 8000 || n > 12000 {
		t.Errorf("%d items with ORIGINAL, want about 10000", n)
	}
	if n := ltCount(t, ctx, tg, "SELECT count(*) FROM "+tb(TCustomer)+" WHERE c_last = 'BARBARBAR'"); n < 10 {
		t.Errorf("%d customers named BARBARBAR, want at least one per district", n)
	}
	for _, r := range mustCheck(t, ctx, tg) {
		if !r.Pass() {
			t.Errorf("after load: %s fails: %v", r.Clause, r.Failures)
		}
	}

	// A second prepare refuses to load over the complete dataset.
	if err := newTestWorkload(t, "--warehouses", "1").Prepare(ctx, tg, nil); err == nil || !strings.Contains(err.Error(), "already loaded") {
		t.Errorf("second prepare without --force: err = %v, want already loaded", err)
	}
	// run attaches: more warehouses than loaded is an error; the default
	// adopts the loaded count.
	if err := newTestWorkload(t, "--warehouses", "3").Attach(ctx, tg, nil); err == nil {
		t.Error("attach with --warehouses 3 on a 1-warehouse dataset succeeded")
	}
	rw := newTestWorkload(t)
	rw.Warehouses = 7 // what a default would be replaced with
	if err := rw.Attach(ctx, tg, nil); err != nil || rw.Warehouses != 1 {
		t.Fatalf("attach: err %v, warehouses %d, want 1", err, rw.Warehouses)
	}
	if rw.consts != w.consts {
		t.Errorf("attach read constants %+v, the load used %+v", rw.consts, w.consts)
	}

	// Run a few hundred transactions, then check again.
	// (runAndAssert, in driver_test.go, checks the run's figures against
	// the database; on PostgreSQL the retry test holds a row lock.)
	runAndAssert(t, ctx, tg, rw)
	isolateAndAssert(t, ctx, tg, rw)
	if tg.Dialect().Engine == "postgres" {
		t.Run("retries", func(t *testing.T) { runRetryTest(t, ctx, tg, dsn, rw) })
	}
	for _, r := range mustCheck(t, ctx, tg) {
		if !r.Pass() {
			t.Errorf("after the run: %s fails: %v", r.Clause, r.Failures)
		}
	}

	// Corrupt district 3: 3.3.2.1 names the warehouse, 3.3.2.9 the district.
	ltExec(t, ctx, tg, "UPDATE "+tb(TDistrict)+" SET d_ytd = d_ytd + 1 WHERE d_w_id = 1 AND d_id = 3")
	res := mustCheck(t, ctx, tg, "3.3.2.1", "3.3.2.9", "3.3.2.3")
	if f := ltFailures(res, "3.3.2.1"); len(f) != 1 || !strings.HasPrefix(f[0], "warehouse 1:") {
		t.Errorf("3.3.2.1 after corrupting d_ytd: %v", f)
	}
	if f := ltFailures(res, "3.3.2.9"); len(f) != 1 || !strings.HasPrefix(f[0], "warehouse 1 district 3:") {
		t.Errorf("3.3.2.9 after corrupting d_ytd: %v", f)
	}
	ltExec(t, ctx, tg, "DELETE FROM "+tb(TNewOrder)+" WHERE no_w_id = 1 AND no_d_id = 5 AND no_o_id = (SELECT max(no_o_id) FROM "+tb(TNewOrder)+" WHERE no_w_id = 1 AND no_d_id = 5) - 10")
	ltExec(t, ctx, tg, "UPDATE "+tb(TCustomer)+" SET c_balance = c_balance + 5 WHERE c_w_id = 1 AND c_d_id = 7 AND c_id = 42")
	res = mustCheck(t, ctx, tg, "3.3.2.3", "3.3.2.5", "3.3.2.12")
	if f := ltFailures(res, "3.3.2.12"); len(f) != 1 || f[0] != "warehouse 1 district 7: 1 customers" {
		t.Errorf("3.3.2.12 after changing a balance: %v", f)
	}
	if f := ltFailures(res, "3.3.2.3"); len(f) != 1 || !strings.HasPrefix(f[0], "warehouse 1 district 5:") {
		t.Errorf("3.3.2.3 after deleting a new order: %v", f)
	}
	if f := ltFailures(res, "3.3.2.5"); len(f) != 1 || !strings.HasPrefix(f[0], "warehouse 1 district 5:") {
		t.Errorf("3.3.2.5 after deleting a new order: %v", f)
	}
	var buf bytes.Buffer
	if n := PrintChecks(&buf, res); n != 3 || !strings.Contains(buf.String(), "FAIL") {
		t.Errorf("PrintChecks counted %d failures:\n%s", n, buf.String())
	}
}

// TestInterruptedLoad cancels a load part-way and checks that prepare, run
// and check all see an incomplete dataset, and that dropping the tables
// (what cleanup does) leaves nothing behind.
func TestInterruptedLoad(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for eng, dsn := range loadTestDSNs(t, ctx) {
		t.Run(eng, func(t *testing.T) {
			tg, err := engines.Open(ctx, target.Options{DSN: dsn})
			if err != nil {
				t.Fatal(err)
			}
			defer tg.Close(context.Background())
			dropTPCC(t, tg)
			defer dropTPCC(t, tg)

			lctx, lcancel := context.WithCancel(ctx)
			defer lcancel()
			afterTable = func(table string) {
				if table == TCustomer {
					lcancel()
				}
			}
			defer func() { afterTable = nil }()
			w := newTestWorkload(t, "--warehouses", "2", "--load-threads", "1")
			if err := w.Prepare(lctx, tg, nil); err == nil {
				t.Fatal("interrupted load returned no error")
			}
			ds, tables, err := ReadDataset(ctx, tg)
			if err != nil {
				t.Fatal(err)
			}
			if ds == nil || ds.State != stateLoading || len(tables) == 0 {
				t.Fatalf("after the interrupted load: dataset %+v, tables %v", ds, tables)
			}
			if err := newTestWorkload(t).Prepare(ctx, tg, nil); err == nil || !strings.Contains(err.Error(), "incomplete") {
				t.Errorf("prepare over an interrupted load: err = %v, want incomplete", err)
			}
			if err := newTestWorkload(t).Attach(ctx, tg, nil); err == nil || !strings.Contains(err.Error(), "incomplete") {
				t.Errorf("attach to an interrupted load: err = %v, want incomplete", err)
			}
			if _, err := Check(ctx, tg); err == nil {
				t.Error("check on an interrupted load succeeded")
			}
			// Without tpcc_meta but with data tables left (an interrupted
			// cleanup), the dataset is still incomplete.
			if err := tg.Schema().DropTable(ctx, TMeta); err != nil {
				t.Fatal(err)
			}
			if err := newTestWorkload(t).Prepare(ctx, tg, nil); err == nil || !strings.Contains(err.Error(), "incomplete") {
				t.Errorf("prepare over tables without tpcc_meta: err = %v, want incomplete", err)
			}
			dropTPCC(t, tg)
			ds, tables, err = ReadDataset(ctx, tg)
			if err != nil || ds != nil || len(tables) != 0 {
				t.Errorf("after cleanup: dataset %+v, tables %v, err %v", ds, tables, err)
			}
			if err := newTestWorkload(t).Attach(ctx, tg, nil); err == nil || !strings.Contains(err.Error(), "prepare") {
				t.Errorf("attach with no dataset: err = %v, want a hint to prepare", err)
			}
		})
	}
}
