package postgres

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/url"
	"os"
	"path"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ceiling-db/ceiling/internal/metrics"
	"github.com/ceiling-db/ceiling/internal/target"
	"github.com/ceiling-db/ceiling/internal/testenv"
)

// The integration tests run against CEILING_TEST_PG_DSN, e.g.
// postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable. So as not
// to disturb other users of that server (or other packages' tests), they
// work in databases of their own, created here and dropped by TestMain:
// ceiling_test_pg for most tests, ceiling_test_ns for the foreign-schema
// test.

const testPassword = "Sup3rS3cretPw"

var (
	createdMu sync.Mutex
	created   []string // databases to drop after the tests
)

func TestMain(m *testing.M) {
	code := m.Run()
	if dsn := os.Getenv(testenv.PostgresEnv); dsn != "" && len(created) > 0 {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if c, err := pgx.Connect(ctx, dsn); err == nil {
			for _, db := range created {
				_, _ = c.Exec(ctx, "DROP DATABASE IF EXISTS "+db+" WITH (FORCE)")
			}
			_ = c.Close(ctx)
		}
		cancel()
	}
	os.Exit(code)
}

// baseDSN returns CEILING_TEST_PG_DSN or skips the test.
func baseDSN(t *testing.T) string {
	t.Helper()
	return testenv.DSN(t, testenv.PostgresEnv)
}

// testDB returns a DSN for database name on the test server, creating the
// database the first time.
func testDB(t *testing.T, name string) string {
	t.Helper()
	base := baseDSN(t)
	createdMu.Lock()
	defer createdMu.Unlock()
	if !slicesContains(created, name) {
		ctx := testCtx(t)
		c, err := pgx.Connect(ctx, base)
		if err != nil {
			t.Fatalf("connect %s: %v", target.Redact(base), err)
		}
		defer c.Close(ctx)
		var exists bool
		if err := c.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
			t.Fatal(err)
		}
		if !exists {
			if _, err := c.Exec(ctx, "CREATE DATABASE "+name); err != nil {
				t.Fatalf("create database %s: %v", name, err)
			}
		}
		created = append(created, name)
	}
	return withDatabase(t, base, name)
}

func slicesContains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// withDatabase points dsn (URL or key/value) at database db.
func withDatabase(t *testing.T, dsn, db string) string {
	t.Helper()
	if strings.Contains(dsn, "://") {
		u, err := url.Parse(dsn)
		if err != nil {
			t.Fatalf("parse CEILING_TEST_PG_DSN: %v", err)
		}
		u.Path = "/" + db
		return u.String()
	}
	return dsn + " dbname=" + db
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func openTarget(t *testing.T, dsn string, mode target.Durability) target.Target {
	t.Helper()
	tg, err := Open(testCtx(t), target.Options{DSN: dsn, Durability: mode})
	if err != nil {
		t.Fatalf("Open(%s): %v", target.Redact(dsn), err)
	}
	t.Cleanup(func() {
		if err := tg.Close(context.Background()); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return tg
}

func connect(t *testing.T, tg target.Target) target.Conn {
	t.Helper()
	c, err := tg.Connect(testCtx(t))
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func queryString(t *testing.T, c target.Conn, sql string, args ...any) string {
	t.Helper()
	rows, err := c.Query(testCtx(t), sql, args...)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	defer rows.Close()
	var s string
	if !rows.Next() {
		t.Fatalf("%s: no row (err %v)", sql, rows.Err())
	}
	if err := rows.Scan(&s); err != nil {
		t.Fatalf("%s: scan: %v", sql, err)
	}
	return s
}

func TestOpenInfo(t *testing.T) {
	dsn := testDB(t, "ceiling_test_pg")
	tg := openTarget(t, dsn, target.DurabilityServer)
	info := tg.Info()
	if info.Engine != "postgres" {
		t.Errorf("Engine = %q, want postgres", info.Engine)
	}
	if info.Version == "" || info.Version[0] < '1' || info.Version[0] > '9' {
		t.Errorf("Version = %q, want a server_version", info.Version)
	}
	if info.DSN != target.Redact(dsn) {
		t.Errorf("DSN = %q, want %q", info.DSN, target.Redact(dsn))
	}
	for _, k := range []string{"synchronous_commit", "fsync", "wal_sync_method", "shared_buffers",
		"max_connections", "checkpoint_timeout", "max_wal_size", "full_page_writes", "track_wal_io_timing"} {
		if _, ok := info.Settings[k]; !ok {
			t.Errorf("Settings lacks %s; got %v", k, info.Settings)
		}
	}
	if d := tg.Dialect(); d != (target.Dialect{Engine: "postgres", Prefix: "ceiling.", Dollar: true}) {
		t.Errorf("Dialect = %+v", d)
	}
	if v, _ := strconv.Atoi(info.Settings["server_version_num"]); v < 160000 && !strings.Contains(info.Settings["missing_evidence"], "pg_stat_io") {
		t.Errorf("server %d has no pg_stat_io but missing_evidence = %q", v, info.Settings["missing_evidence"])
	}
	// The log directory comes from data_directory, which superusers see.
	if super := queryString(t, connect(t, tg), "SELECT current_setting('is_superuser')"); super == "on" {
		if d := info.Settings["data_directory"]; d == "" || info.LogDir != path.Join(d, "pg_wal") {
			t.Errorf("superuser: data_directory %q, LogDir %q; want LogDir = data_directory/pg_wal", d, info.LogDir)
		}
		// A local server's data directory is examined as its log's is:
		// whether the device's reads are the data files'.
		if info.Local && info.LogDevice != nil && info.DataOnLogDevice == nil {
			t.Errorf("log device %s found, but not whether data_directory is on it", info.LogDevice.Name)
		}
	} else if info.LogDir != "" {
		t.Errorf("not a superuser, yet LogDir %q", info.LogDir)
	}
	t.Logf("version %s; log directory %q; settings %v", info.Version, info.LogDir, info.Settings)
}

func TestTableRoundTrip(t *testing.T) {
	ctx := testCtx(t)
	tg := openTarget(t, testDB(t, "ceiling_test_pg"), target.DurabilityServer)
	s := tg.Schema()
	tbl := tg.Dialect().Table("rt")
	if err := s.CreateTable(ctx, "rt", "id int PRIMARY KEY, v text NOT NULL"); err != nil {
		t.Fatalf("CreateTable: %v", err)
	}
	c := connect(t, tg)
	for i := 1; i <= 3; i++ {
		n, err := c.Exec(ctx, "INSERT INTO "+tbl+" (id, v) VALUES ($1, $2)", i, "v"+strconv.Itoa(i))
		if err != nil || n != 1 {
			t.Fatalf("insert %d: n=%d err=%v, want 1, nil", i, n, err)
		}
	}
	if n, err := c.Exec(ctx, "UPDATE "+tbl+" SET v = v || 'x' WHERE id >= $1", 2); err != nil || n != 2 {
		t.Fatalf("update: n=%d err=%v, want 2, nil", n, err)
	}
	rows, err := c.Query(ctx, "SELECT id, v FROM "+tbl+" WHERE id > $1 ORDER BY id", 0)
	if err != nil {
		t.Fatalf("query: %v", err)
	}
	var got []string
	for rows.Next() {
		var id int
		var v string
		if err := rows.Scan(&id, &v); err != nil {
			t.Fatalf("scan: %v", err)
		}
		got = append(got, fmt.Sprintf("%d=%s", id, v))
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("rows: %v", err)
	}
	_ = rows.Close()
	if want := "1=v1 2=v2x 3=v3x"; strings.Join(got, " ") != want {
		t.Errorf("rows = %q, want %q", strings.Join(got, " "), want)
	}

	// A transaction that rolls back leaves nothing.
	if err := c.Begin(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, "DELETE FROM "+tbl); err != nil {
		t.Fatal(err)
	}
	if err := c.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if n := queryString(t, c, "SELECT count(*)::text FROM "+tbl); n != "3" {
		t.Errorf("after rollback count = %s, want 3", n)
	}
	// A failed transaction's COMMIT is reported.
	if err := c.Begin(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, "INSERT INTO "+tbl+" (id, v) VALUES ($1, $2)", 1, "dup"); err == nil {
		t.Fatal("duplicate insert succeeded")
	}
	if err := c.Commit(ctx); !errors.Is(err, pgx.ErrTxCommitRollback) {
		t.Errorf("Commit after a failed statement = %v, want ErrTxCommitRollback", err)
	}

	if err := s.CreateIndex(ctx, "rt", "rt_v", "v"); err != nil {
		t.Fatalf("CreateIndex: %v", err)
	}
	names, err := s.Tables(ctx)
	if err != nil || !slicesContains(names, "rt") {
		t.Fatalf("Tables = %v, %v; want rt in it", names, err)
	}
	// CreateTable replaces ceiling's own table.
	if err := s.CreateTable(ctx, "rt", "id int PRIMARY KEY"); err != nil {
		t.Fatalf("CreateTable again: %v", err)
	}
	if n := queryString(t, c, "SELECT count(*)::text FROM "+tbl); n != "0" {
		t.Errorf("after replace count = %s, want 0", n)
	}
	if err := s.DropTable(ctx, "rt"); err != nil {
		t.Fatalf("DropTable: %v", err)
	}
	if err := s.DropTable(ctx, "rt"); err != nil {
		t.Fatalf("DropTable of a missing table: %v", err)
	}
	if names, _ := s.Tables(ctx); slicesContains(names, "rt") {
		t.Errorf("Tables after drop = %v", names)
	}
	if err := s.DropAll(ctx); err != nil {
		t.Fatalf("DropAll: %v", err)
	}
	if names, err := s.Tables(ctx); err != nil || len(names) != 0 {
		t.Errorf("Tables after DropAll = %v, %v; want none", names, err)
	}
}

func TestForeignSchema(t *testing.T) {
	ctx := testCtx(t)
	dsn := testDB(t, "ceiling_test_ns")
	raw, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close(ctx)
	if _, err := raw.Exec(ctx, "DROP SCHEMA IF EXISTS ceiling CASCADE; CREATE SCHEMA ceiling; CREATE TABLE ceiling.keep (x int)"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = raw.Exec(context.Background(), "DROP SCHEMA IF EXISTS ceiling CASCADE") })

	tg := openTarget(t, dsn, target.DurabilityServer)
	s := tg.Schema()
	checks := map[string]error{
		"CreateTable": s.CreateTable(ctx, "t", "id int"),
		"DropTable":   s.DropTable(ctx, "keep"),
		"DropAll":     s.DropAll(ctx),
	}
	_, checks["Tables"] = s.Tables(ctx)
	for op, err := range checks {
		if !errors.Is(err, target.ErrForeignObject) {
			t.Errorf("%s on a foreign schema = %v, want ErrForeignObject", op, err)
		} else if !strings.Contains(err.Error(), `"ceiling"`) {
			t.Errorf("%s error %q does not name the schema", op, err)
		}
	}
	var n int
	if err := raw.QueryRow(ctx, "SELECT count(*) FROM ceiling.keep").Scan(&n); err != nil {
		t.Errorf("foreign table was touched: %v", err)
	}
}

func TestForeignTable(t *testing.T) {
	ctx := testCtx(t)
	dsn := testDB(t, "ceiling_test_pg")
	tg := openTarget(t, dsn, target.DurabilityServer)
	s := tg.Schema()
	// Make sure ceiling's schema exists, then put a table of "someone
	// else's" in it.
	if err := s.CreateTable(ctx, "mine", "id int"); err != nil {
		t.Fatal(err)
	}
	raw, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close(ctx)
	if _, err := raw.Exec(ctx, "CREATE TABLE ceiling.theirs (x int)"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = raw.Exec(context.Background(), "DROP TABLE IF EXISTS ceiling.theirs")
		_ = s.DropAll(context.Background())
	})
	if err := s.CreateTable(ctx, "theirs", "id int"); !errors.Is(err, target.ErrForeignObject) {
		t.Errorf("CreateTable over a foreign table = %v, want ErrForeignObject", err)
	}
	if err := s.DropTable(ctx, "theirs"); !errors.Is(err, target.ErrForeignObject) {
		t.Errorf("DropTable of a foreign table = %v, want ErrForeignObject", err)
	}
	if err := s.CreateIndex(ctx, "theirs", "theirs_x", "x"); !errors.Is(err, target.ErrForeignObject) {
		t.Errorf("CreateIndex on a foreign table = %v, want ErrForeignObject", err)
	}
	if err := s.DropAll(ctx); !errors.Is(err, target.ErrForeignObject) || !strings.Contains(err.Error(), "theirs") {
		t.Errorf("DropAll with a foreign table inside = %v, want ErrForeignObject naming it", err)
	}
	names, err := s.Tables(ctx)
	if err != nil || !slicesContains(names, "mine") || slicesContains(names, "theirs") {
		t.Errorf("Tables = %v, %v; want mine, not theirs", names, err)
	}
	var n int
	if err := raw.QueryRow(ctx, "SELECT count(*) FROM ceiling.theirs").Scan(&n); err != nil {
		t.Errorf("foreign table was touched: %v", err)
	}
}

func TestDurability(t *testing.T) {
	dsn := testDB(t, "ceiling_test_pg")
	for _, tt := range []struct {
		mode target.Durability
		want string // "" = the server's value
	}{
		{target.DurabilityFull, "on"},
		{target.DurabilityRelaxed, "off"},
		{target.DurabilityServer, ""},
	} {
		t.Run(string(tt.mode), func(t *testing.T) {
			tg, err := Open(testCtx(t), target.Options{DSN: dsn, Durability: tt.mode})
			if err != nil {
				t.Fatal(err)
			}
			c, err := tg.Connect(testCtx(t))
			if err != nil {
				t.Fatal(err)
			}
			got := queryString(t, c, "SHOW synchronous_commit")
			_ = c.Close()
			d := tg.Info().Durability
			want := tt.want
			if want == "" {
				want = d.Before
			}
			if got != want {
				t.Errorf("worker synchronous_commit = %q, want %q", got, want)
			}
			if d.Mode != tt.mode || d.Setting != "synchronous_commit" || d.Scope != "session" || d.During != want || d.Before == "" {
				t.Errorf("Durability = %+v", d)
			}
			if err := tg.Close(testCtx(t)); err != nil {
				t.Fatal(err)
			}
			if d := tg.Info().Durability; d.After != d.Before {
				t.Errorf("after Close: After = %q, Before = %q", d.After, d.Before)
			}
		})
	}
}

func TestSamplerDeltas(t *testing.T) {
	dsn := testDB(t, "ceiling_test_pg")
	syncs := map[target.Durability]float64{}
	for _, mode := range []target.Durability{target.DurabilityFull, target.DurabilityRelaxed} {
		t.Run(string(mode), func(t *testing.T) {
			ctx := testCtx(t)
			tg := openTarget(t, dsn, mode)
			sampler, ok := tg.(target.Sampler)
			if !ok {
				t.Fatal("target does not implement Sampler")
			}
			if err := tg.Schema().CreateTable(ctx, "samp", "id int PRIMARY KEY, v text"); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = tg.Schema().DropTable(context.Background(), "samp") })
			c := connect(t, tg)
			s0, err := sampler.Sample(ctx)
			if err != nil {
				t.Fatalf("Sample: %v", err)
			}
			const n = 200
			start := time.Now()
			for i := 0; i < n; i++ {
				if _, err := c.Exec(ctx, "INSERT INTO ceiling.samp (id, v) VALUES ($1, $2)", i, "x"); err != nil {
					t.Fatal(err)
				}
			}
			elapsed := time.Since(start)
			// Backends publish statistics when idle, at most once a second;
			// ask this one to publish now (15+), then poll briefly.
			_, _ = c.Exec(ctx, "SELECT pg_stat_force_next_flush()")
			var s1 target.Sample
			var d map[string]float64
			for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(200 * time.Millisecond) {
				if s1, err = sampler.Sample(ctx); err != nil {
					t.Fatalf("Sample: %v", err)
				}
				d = delta(s0, s1)
				// The backend's WAL counters can be published after its
				// table and database counters (seen once in a full run: all
				// 200 inserts and commits counted, 70 syncs), so a full
				// durability run also waits for its syncs.
				published := d[target.CtrCommits] >= n && d["pg.tup_inserted"] >= n &&
					(mode != target.DurabilityFull || d[target.CtrLogSyncs] >= 150)
				if published || time.Now().After(deadline) {
					break
				}
			}
			for _, k := range []string{target.CtrLogBytes, target.CtrLogWrites, target.CtrLogSyncs,
				target.CtrCommits, target.CtrCacheReads, target.CtrCheckpoints, target.CtrDataWrites, "pg.tup_inserted"} {
				if _, ok := s1.Counters[k]; !ok {
					t.Errorf("counter %s absent", k)
				}
			}
			if tg.Info().Settings["track_wal_io_timing"] != "on" {
				if _, ok := s1.Counters[target.CtrLogSyncMs]; ok {
					t.Errorf("%s present with track_wal_io_timing off", target.CtrLogSyncMs)
				}
			}
			syncs[mode] = d[target.CtrLogSyncs]
			t.Logf("%s: %d inserts in %v: log_syncs %+.0f, log_writes %+.0f, log_bytes %+.0f (%.0f B/insert), commits %+.0f, pg.wal_records %+.0f, pg.tup_inserted %+.0f",
				mode, n, elapsed.Round(time.Millisecond), d[target.CtrLogSyncs], d[target.CtrLogWrites], d[target.CtrLogBytes],
				d[target.CtrLogBytes]/n, d[target.CtrCommits], d["pg.wal_records"], d["pg.tup_inserted"])
			if d["pg.tup_inserted"] < n {
				t.Errorf("pg.tup_inserted delta = %v, want >= %d", d["pg.tup_inserted"], n)
			}
			if mode == target.DurabilityFull && d[target.CtrLogSyncs] < 150 {
				t.Errorf("full durability: log_syncs delta = %v for %d commits, want >= 150", d[target.CtrLogSyncs], n)
			}
		})
	}
	if full, relaxed := syncs[target.DurabilityFull], syncs[target.DurabilityRelaxed]; full > 0 && relaxed > full/4 {
		t.Errorf("relaxed durability: log_syncs delta = %v, want far fewer than full's %v", relaxed, full)
	}
}

// TestSamplerOwnTransactions: ceiling's own sampler sessions (the
// statistics reads and the wait sampler's rounds, about 22 a second) commit
// read-only transactions in the target's database, which xact_commit counts;
// the commits counter leaves them out, so an idle target shows about none.
func TestSamplerOwnTransactions(t *testing.T) {
	ctx := testCtx(t)
	tg := openTarget(t, testDB(t, "ceiling_test_pg"), target.DurabilityServer)
	sampler := tg.(target.Sampler)
	s0, err := sampler.Sample(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var s1 target.Sample
	for range 5 {
		time.Sleep(time.Second)
		if s1, err = sampler.Sample(ctx); err != nil {
			t.Fatal(err)
		}
	}
	d := delta(s0, s1)
	own, server, commits := d[CtrSamplerXacts], d["pg.xact_commit"], d[target.CtrCommits]
	t.Logf("5 s idle: server xact_commit %+.0f, ceiling's sampler transactions %+.0f, commits %+.0f", server, own, commits)
	// 5 statistics reads and about 100 wait-sampler rounds; a backend
	// publishes its counts up to about a second late, so the server's
	// figure trails or leads ceiling's count by up to about 20.
	if own < 50 || server < 50 {
		t.Fatalf("sampler transactions %v, server xact_commit %v over 5 s: want >= 50 each (the wait sampler runs every %v)", own, server, WaitSampleInterval)
	}
	if math.Abs(commits) > 30 {
		t.Errorf("commits delta %v on an idle target, want within ±30 of 0 (server %v, ceiling's own %v)", commits, server, own)
	}

	// Settle, as at the end of a run, ends the wait sampler's session and
	// has the sampler's publish its statistics: the count is then exact
	// but for a few transactions.
	if err := tg.(target.Settler).Settle(ctx); err != nil {
		t.Fatal(err)
	}
	s2, err := sampler.Sample(ctx)
	if err != nil {
		t.Fatal(err)
	}
	d = delta(s0, s2)
	t.Logf("after Settle: server xact_commit %+.0f, ceiling's sampler transactions %+.0f, commits %+.0f", d["pg.xact_commit"], d[CtrSamplerXacts], d[target.CtrCommits])
	if math.Abs(d[target.CtrCommits]) > 5 {
		t.Errorf("after Settle: commits delta %v on an idle target, want within ±5 of 0", d[target.CtrCommits])
	}
	// The next Sample resumed the wait sampler.
	time.Sleep(500 * time.Millisecond)
	s3, err := sampler.Sample(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := delta(s2, s3)[target.CtrWaitSamples]; n < 3 {
		t.Errorf("wait sampler rounds credited in the 0.5 s after Settle: %v, want it running again", n)
	}
}

func TestSamplerReconnects(t *testing.T) {
	ctx := testCtx(t)
	dsn := testDB(t, "ceiling_test_pg")
	tg := openTarget(t, dsn, target.DurabilityServer)
	sampler := tg.(target.Sampler)
	if _, err := sampler.Sample(ctx); err != nil {
		t.Fatal(err)
	}
	// End the target's own sessions (admin and sampler).
	raw, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close(ctx)
	var n int
	if err := raw.QueryRow(ctx, `
		SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE datname = current_database() AND application_name = 'ceiling' AND pid <> pg_backend_pid()`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n < 2 {
		t.Fatalf("terminated %d sessions, want the admin and sampler sessions", n)
	}
	time.Sleep(100 * time.Millisecond)
	if _, err := sampler.Sample(ctx); err != nil {
		t.Errorf("Sample after its session was terminated: %v", err)
	}
	if _, err := tg.Schema().Tables(ctx); err != nil {
		t.Errorf("Tables after the admin session was terminated: %v", err)
	}
}

func delta(a, b target.Sample) map[string]float64 {
	d := map[string]float64{}
	for k, v := range b.Counters {
		if old, ok := a.Counters[k]; ok {
			d[k] = v - old
		}
	}
	return d
}

func TestClassifyReal(t *testing.T) {
	ctx := testCtx(t)
	tg := openTarget(t, testDB(t, "ceiling_test_pg"), target.DurabilityServer)
	if err := tg.Schema().CreateTable(ctx, "cls", "id int PRIMARY KEY, v int"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tg.Schema().DropTable(context.Background(), "cls") })
	a, b := connect(t, tg), connect(t, tg)
	for i := 1; i <= 2; i++ {
		if _, err := a.Exec(ctx, "INSERT INTO ceiling.cls VALUES ($1, 0)", i); err != nil {
			t.Fatal(err)
		}
	}
	want := func(name string, err error, class metrics.ErrClass) {
		t.Helper()
		if err == nil {
			t.Errorf("%s: no error", name)
			return
		}
		if got := tg.Classify(err); got != class {
			t.Errorf("%s: Classify(%v) = %v, want %v", name, err, got, class)
		} else {
			t.Logf("%s: %v → %v", name, err, got)
		}
	}

	_, err := a.Exec(ctx, "INSERT INTO ceiling.cls VALUES ($1, 0)", 1)
	want("unique violation", err, metrics.ErrConstraint)
	_, err = a.Exec(ctx, "INSERT INTO ceiling.cls VALUES ($1, 1 / $2::int)", 3, 0)
	want("division by zero", err, metrics.ErrOther)

	// Lock timeout: a holds the row, b waits at most 100ms.
	mustExec(t, a, "BEGIN")
	mustExec(t, a, "UPDATE ceiling.cls SET v = 1 WHERE id = 1")
	mustExec(t, b, "SET lock_timeout = '100ms'")
	_, err = b.Exec(ctx, "UPDATE ceiling.cls SET v = 2 WHERE id = $1", 1)
	want("lock timeout", err, metrics.ErrLockTimeout)
	mustExec(t, b, "SET lock_timeout = 0")
	mustExec(t, a, "ROLLBACK")

	// Deadlock: a locks 1 then 2, b locks 2 then 1.
	mustExec(t, a, "BEGIN")
	mustExec(t, b, "BEGIN")
	mustExec(t, a, "UPDATE ceiling.cls SET v = 1 WHERE id = 1")
	mustExec(t, b, "UPDATE ceiling.cls SET v = 1 WHERE id = 2")
	errc := make(chan error, 1)
	go func() {
		_, err := a.Exec(ctx, "UPDATE ceiling.cls SET v = 2 WHERE id = $1", 2)
		errc <- err
	}()
	time.Sleep(100 * time.Millisecond)
	_, errB := b.Exec(ctx, "UPDATE ceiling.cls SET v = 2 WHERE id = $1", 1)
	errA := <-errc
	_ = a.Rollback(ctx)
	_ = b.Rollback(ctx)
	if errA == nil {
		want("deadlock", errB, metrics.ErrSerialization)
	} else {
		want("deadlock", errA, metrics.ErrSerialization)
	}

	// Statement timeout.
	mustExec(t, b, "SET statement_timeout = '50ms'")
	_, err = b.Exec(ctx, "SELECT pg_sleep(1)")
	want("statement timeout", err, metrics.ErrTimeout)
	mustExec(t, b, "SET statement_timeout = 0")

	// Terminated session.
	pid := queryString(t, b, "SELECT pg_backend_pid()::text")
	mustExec(t, a, "SELECT pg_terminate_backend("+pid+")")
	time.Sleep(100 * time.Millisecond)
	_, err = b.Exec(ctx, "SELECT 1")
	want("terminated", err, metrics.ErrConnLost)
	_, err = b.Exec(ctx, "SELECT 1")
	want("use after termination", err, metrics.ErrConnLost)

	// A client-side deadline.
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	_, err = a.Exec(short, "SELECT pg_sleep(1)")
	cancel()
	if got := tg.Classify(err); got != metrics.ErrTimeout && got != metrics.ErrConnLost {
		t.Errorf("client deadline: Classify(%v) = %v, want statement_timeout or connection_lost", err, got)
	}
}

func mustExec(t *testing.T, c target.Conn, sql string) {
	t.Helper()
	if _, err := c.Exec(testCtx(t), sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// checkOpenError asserts that Open fails with a one-line error free of the
// password.
func checkOpenError(t *testing.T, dsn, mustContain string) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tg, err := Open(ctx, target.Options{DSN: dsn})
	if err == nil {
		_ = tg.Close(ctx)
		t.Fatalf("Open(%s) succeeded, want an error", target.Redact(dsn))
	}
	if errors.Is(err, target.ErrBadDSN) != (mustContain == "malformed DSN") {
		t.Errorf("errors.Is(%v, ErrBadDSN) = %v", err, errors.Is(err, target.ErrBadDSN))
	}
	msg := err.Error()
	t.Logf("error: %s", msg)
	if strings.Contains(msg, testPassword) {
		t.Errorf("error contains the password: %q", msg)
	}
	if strings.ContainsAny(msg, "\r\n") {
		t.Errorf("error is not one line: %q", msg)
	}
	if !strings.HasPrefix(msg, "postgres: ") {
		t.Errorf("error %q lacks the package prefix", msg)
	}
	if mustContain != "" && !strings.Contains(msg, mustContain) {
		t.Errorf("error %q does not contain %q", msg, mustContain)
	}
	// Each host's attempt is a "; "-separated part; the first part also
	// carries the prefix.
	parts := strings.Split(msg, "; ")
	for i, part := range parts {
		for _, earlier := range parts[:i] {
			if strings.HasSuffix(earlier, part) {
				t.Errorf("error %q says %q twice", msg, part)
			}
		}
	}
	return err
}

func TestOpenErrors(t *testing.T) {
	base := baseDSN(t)
	u, err := url.Parse(base)
	if err != nil || u.Scheme == "" {
		t.Skip("CEILING_TEST_PG_DSN is not a URL")
	}
	t.Run("unknown user", func(t *testing.T) {
		v := *u
		v.User = url.UserPassword("ceiling_no_such_user", testPassword)
		checkOpenError(t, v.String(), "ceiling_no_such_user")
	})
	t.Run("missing database", func(t *testing.T) {
		v := *u
		v.User = url.UserPassword(u.User.Username(), testPassword)
		v.Path = "/ceiling_no_such_db"
		checkOpenError(t, v.String(), "ceiling_no_such_db")
	})
}

// The next two need no server.

func TestOpenClosedPort(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skip("no loopback:", err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	for _, dsn := range []string{
		fmt.Sprintf("postgres://u:%s@127.0.0.1:%d/db?sslmode=disable&connect_timeout=5", testPassword, port),
		fmt.Sprintf("host=localhost port=%d user=u password=%s dbname=db sslmode=disable connect_timeout=5", port, testPassword),
		// sslmode=prefer (the default): pgx tries with TLS, then without.
		fmt.Sprintf("postgres://u:%s@127.0.0.1:%d/db?connect_timeout=5", testPassword, port),
	} {
		checkOpenError(t, dsn, strconv.Itoa(port))
	}
}

// TestOpenSilentServer: a server that accepts the connection and never
// answers is a one-line error after the DSN's connect_timeout (10 s
// without one), not a hang.
func TestOpenSilentServer(t *testing.T) {
	addr := testenv.SilentServer(t)
	checkOpenError(t, fmt.Sprintf("postgres://u:%s@%s/db?connect_timeout=1", testPassword, addr),
		"no reply from "+addr+" within 1s: is a PostgreSQL server listening there, and up? (connect_timeout= in the DSN sets the wait)")
}

func TestOpenInvalidDSN(t *testing.T) {
	for _, dsn := range []string{
		"postgres://u:" + testPassword + "@127.0.0.1:notaport/db",
		"postgres://u:" + testPassword + "@127.0.0.1/db?statement_cache_capacity=x",
		"host=h password='" + testPassword,
	} {
		err := checkOpenError(t, dsn, "malformed DSN")
		if !errors.Is(err, target.ErrBadDSN) {
			t.Errorf("Open(%s) = %v, want ErrBadDSN", target.Redact(dsn), err)
		}
	}
	if _, err := Open(context.Background(), target.Options{DSN: "postgres://h/db", Durability: "fast"}); err == nil {
		t.Error("Open with durability \"fast\" succeeded")
	}
}

// TestTLSInfo: Info.TLS says whether the sessions are encrypted, as the
// workers' own sessions are (pg_stat_ssl): with sslmode=disable never; with
// sslmode=prefer (libpq's default) exactly when the server has ssl on
// (Debian's packages do, so loopback runs are encrypted unless told not to).
func TestTLSInfo(t *testing.T) {
	dsn := testDB(t, "ceiling_test_pg")
	withMode := func(mode string) string {
		u, err := url.Parse(dsn)
		if err != nil {
			t.Skipf("CEILING_TEST_PG_DSN is not a URL: %v", err)
		}
		q := u.Query()
		q.Set("sslmode", mode)
		u.RawQuery = q.Encode()
		return u.String()
	}
	plain := openTarget(t, withMode("disable"), target.DurabilityServer)
	if got := plain.Info().TLS; got != target.TLSOff {
		t.Errorf("sslmode=disable: TLS %q, want %q", got, target.TLSOff)
	}
	sslOn := queryString(t, connect(t, plain), "SHOW ssl") == "on"
	tg := openTarget(t, withMode("prefer"), target.DurabilityServer)
	got := tg.Info().TLS
	worker := queryString(t, connect(t, tg), "SELECT ssl::text FROM pg_stat_ssl WHERE pid = pg_backend_pid()")
	switch {
	case sslOn && !strings.HasPrefix(got, "TLS 1."):
		t.Errorf("server ssl on, sslmode=prefer: TLS %q, want the version and cipher", got)
	case !sslOn && got != target.TLSOff:
		t.Errorf("server ssl off, sslmode=prefer: TLS %q, want %q", got, target.TLSOff)
	case (got != target.TLSOff) != (worker == "true"):
		t.Errorf("Info.TLS %q but a worker session's pg_stat_ssl.ssl is %s", got, worker)
	}
	t.Logf("server ssl %v; sslmode=prefer: %s", sslOn, got)
}

// TestCertHint: with sslmode=verify-ca, a server certificate that the
// CA in sslrootcert did not sign is refused, and the error says so and
// what encrypts without the check. (The hint for a DSN without
// sslrootcert is not reached here: the server's certificate, Debian's snake
// oil, is among the system's CAs; MySQL's TestTLS reaches it.)
func TestCertHint(t *testing.T) {
	dsn := testDB(t, "ceiling_test_pg")
	u, err := url.Parse(dsn)
	if err != nil {
		t.Skipf("CEILING_TEST_PG_DSN is not a URL: %v", err)
	}
	q := u.Query()
	q.Set("sslmode", "disable")
	u.RawQuery = q.Encode()
	if queryString(t, connect(t, openTarget(t, u.String(), target.DurabilityServer)), "SHOW ssl") != "on" {
		t.Skip("the server has ssl off: no certificate to refuse")
	}
	ca, _, _ := testenv.SelfSignedCA(t)
	q.Set("sslmode", "verify-ca")
	q.Set("sslrootcert", ca)
	u.RawQuery = q.Encode()
	checkOpenError(t, u.String(), "x509: certificate signed by unknown authority (no CA certificate in the DSN's sslrootcert signed the server's; sslmode=require encrypts without checking it)")
}

// TestUnprivilegedUser: a user without CREATE on the database is told what
// to grant; once granted it runs, but without the superuser's view of
// data_directory the WAL's device is unknown, and the result says so
// rather than leaving the device figures silently out.
// otherRole makes a login role with password pw on the test server (the
// test user must be a superuser, else the test is skipped) and drops it,
// with ceiling's schema in dsn's database and what the role owns, when
// the test ends. It returns the test user's session on dsn and a DSN for
// the role.
func otherRole(t *testing.T, dsn, role, pw string) (*pgx.Conn, string) {
	t.Helper()
	ctx := testCtx(t)
	admin, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	// Cleanups run last first: the role goes (drop, below) before this
	// session closes, and after the test's targets' sessions have.
	t.Cleanup(func() { _ = admin.Close(context.Background()) })
	var super string
	if err := admin.QueryRow(ctx, "SELECT current_setting('is_superuser')").Scan(&super); err != nil || super != "on" {
		t.Skipf("the test user is not a superuser (%s, %v): it cannot make the role", super, err)
	}
	drop := func() {
		for _, q := range []string{"DROP SCHEMA IF EXISTS " + Schema + " CASCADE", "DROP OWNED BY " + role, "DROP ROLE " + role} {
			if _, err := admin.Exec(context.Background(), q); err != nil && !strings.Contains(err.Error(), "does not exist") {
				t.Errorf("%s: %v", q, err)
			}
		}
	}
	drop()
	t.Cleanup(drop)
	if _, err := admin.Exec(ctx, "CREATE ROLE "+role+" LOGIN PASSWORD '"+pw+"'"); err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(dsn)
	if err != nil {
		t.Skipf("CEILING_TEST_PG_DSN is not a URL: %v", err)
	}
	u.User = url.UserPassword(role, pw)
	return admin, u.String()
}

func TestUnprivilegedUser(t *testing.T) {
	dsn := testDB(t, "ceiling_test_nopriv")
	ctx := testCtx(t)
	admin, roleDSN := otherRole(t, dsn, "ceiling_test_nopriv", "nopriv-pw-1")
	const role = "ceiling_test_nopriv"
	tg := openTarget(t, roleDSN, target.DurabilityServer)
	err := tg.Schema().CreateTable(ctx, "t", "id int")
	if err == nil || !strings.Contains(err.Error(), `GRANT CREATE ON DATABASE "ceiling_test_nopriv" TO "ceiling_test_nopriv"`) || strings.Contains(err.Error(), "nopriv-pw-1") {
		t.Fatalf("create without the privilege: %v; want the grant that would do, no password", err)
	}
	if _, err := admin.Exec(ctx, "GRANT CREATE ON DATABASE ceiling_test_nopriv TO "+role); err != nil {
		t.Fatal(err)
	}
	if err := tg.Schema().CreateTable(ctx, "t", "id int"); err != nil {
		t.Fatalf("create after the grant: %v", err)
	}
	info := tg.Info()
	if info.Local && (info.LogDir != "" || !strings.Contains(info.Settings["missing_evidence"], "the log device's counters (data_directory")) {
		t.Errorf("unprivileged on a local server: LogDir %q, missing_evidence %q; want no LogDir and the device counters named", info.LogDir, info.Settings["missing_evidence"])
	}
}

// TestLockNamespace: a second target on the same database cannot take
// ceiling's namespace while the first holds it (named in the error), can
// once the first is closed, and a target on another database is not
// excluded.
func TestLockNamespace(t *testing.T) {
	dsn := testDB(t, "ceiling_test_pg")
	held := openTarget(t, dsn, target.DurabilityServer)
	testenv.CheckNamespaceLock(t, func() target.Target {
		return openTarget(t, testDB(t, "ceiling_test_pg_other"), target.DurabilityServer)
	}, "(backend pid ")
	if err := held.(target.Exclusive).LockNamespace(testCtx(t)); err != nil {
		t.Fatalf("ceiling_test_pg while ceiling_test_pg_other is held: %v", err)
	}
}

// TestLockAfterSessionsLost: ceiling's sessions ended by an administrator
// (pg_terminate_backend) take the namespace lock with them; the next
// sample, on a new session, takes it again and says so. Ended again while
// another session grabs the lock, the target's info names that session.
func TestLockAfterSessionsLost(t *testing.T) {
	ctx := testCtx(t)
	dsn := testDB(t, "ceiling_test_pg_relock")
	tg := openTarget(t, dsn, target.DurabilityServer)
	if err := tg.(target.Exclusive).LockNamespace(ctx); err != nil {
		t.Fatal(err)
	}
	sampler := tg.(target.Sampler)
	if _, err := sampler.Sample(ctx); err != nil {
		t.Fatal(err)
	}
	other, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close(ctx)
	endCeiling := func() {
		t.Helper()
		var n int
		if err := other.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
			WHERE datname = current_database() AND pid <> pg_backend_pid()`).Scan(&n); err != nil || n < 2 {
			t.Fatalf("ended %d of ceiling's sessions (%v), want the admin and the sampler", n, err)
		}
		time.Sleep(200 * time.Millisecond) // the backends exit
	}
	lockers := func() (n int) {
		t.Helper()
		if err := other.QueryRow(ctx, `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted
			AND classid::bigint = $1 AND objid::bigint = $2 AND pid <> pg_backend_pid()`, NamespaceLockKey>>32, NamespaceLockKey&0xffffffff).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if lockers() != 1 {
		t.Fatal("the namespace lock is not held after LockNamespace")
	}
	if tg.Info().NamespaceLock != "" {
		t.Fatalf("a note before anything happened: %q", tg.Info().NamespaceLock)
	}

	endCeiling()
	if lockers() != 0 {
		t.Fatal("the lock outlived its session")
	}
	if _, err := sampler.Sample(ctx); err != nil {
		t.Fatalf("Sample after the sessions were ended: %v", err)
	}
	if n := lockers(); n != 1 || !strings.HasSuffix(tg.Info().NamespaceLock, "the namespace lock with them: taken again") {
		t.Fatalf("after a new sample: %d holders, note %q", n, tg.Info().NamespaceLock)
	}

	endCeiling()
	if _, err := other.Exec(ctx, "SELECT pg_advisory_lock($1)", NamespaceLockKey); err != nil {
		t.Fatal(err)
	}
	defer other.Exec(ctx, "SELECT pg_advisory_unlock($1)", NamespaceLockKey)
	if _, err := sampler.Sample(ctx); err != nil {
		t.Fatalf("Sample: %v", err)
	}
	if note := tg.Info().NamespaceLock; !strings.Contains(note, ": backend pid ") || !strings.Contains(note, "holds it now: a second ceiling may have changed this run's tables since") {
		t.Fatalf("with the lock taken by another session: note %q", note)
	}
}

// TestSchemaOfAnotherRole: ceiling's schema and tables made by a run as
// one role (here the test's superuser) are refused to another user of
// the database with the owner named and what would do, instead of the
// server's bare "permission denied for schema ceiling"; after the grant
// the user makes its own tables, but still cannot replace the owner's.
func TestSchemaOfAnotherRole(t *testing.T) {
	dsn := testDB(t, "ceiling_test_owner")
	ctx := testCtx(t)
	const role = "ceiling_test_other"
	admin, roleDSN := otherRole(t, dsn, role, "other-pw-1")
	owner := openTarget(t, dsn, target.DurabilityServer)
	if err := owner.Schema().CreateTable(ctx, "t", "id int"); err != nil {
		t.Fatal(err)
	}
	var ownerName string
	if err := admin.QueryRow(ctx, "SELECT current_user").Scan(&ownerName); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec(ctx, "GRANT CREATE ON DATABASE ceiling_test_owner TO "+role); err != nil {
		t.Fatal(err)
	}
	other := openTarget(t, roleDSN, target.DurabilityServer)
	ownerID := pgx.Identifier{ownerName}.Sanitize()

	err := other.Schema().CreateTable(ctx, "u", "id int")
	if err == nil || !strings.Contains(err.Error(), "belongs to role "+ownerID) ||
		!strings.Contains(err.Error(), `GRANT USAGE, CREATE ON SCHEMA ceiling TO "ceiling_test_other"`) || strings.Contains(err.Error(), "other-pw-1") {
		t.Fatalf("create in another role's schema: %v; want its owner %s and the grant named, no password", err, ownerID)
	}
	if _, err := admin.Exec(ctx, "GRANT USAGE, CREATE ON SCHEMA "+Schema+" TO "+role); err != nil {
		t.Fatal(err)
	}
	if err := other.Schema().CreateTable(ctx, "u", "id int"); err != nil {
		t.Fatalf("create after the grant: %v", err)
	}
	err = other.Schema().CreateTable(ctx, "t", "id int")
	if err == nil || !strings.Contains(err.Error(), "ceiling.t") || !strings.Contains(err.Error(), "belongs to role "+ownerID) {
		t.Fatalf("replace another role's table: %v; want the table and its owner %s named", err, ownerID)
	}
	var n int
	if err := admin.QueryRow(ctx, "SELECT count(*) FROM ceiling.t").Scan(&n); err != nil {
		t.Errorf("the owner's table was touched: %v", err)
	}
}

// TestDSNNamesTheSession: a DSN that leaves the user, host or database to
// libpq's environment ("postgres://") is recorded with the session it
// made, so that a result names the server it measured; a full DSN is
// recorded as given.
func TestDSNNamesTheSession(t *testing.T) {
	dsn := testDB(t, "ceiling_test_pg")
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("PGHOST", cfg.Host)
	t.Setenv("PGPORT", strconv.Itoa(int(cfg.Port)))
	t.Setenv("PGUSER", cfg.User)
	t.Setenv("PGDATABASE", cfg.Database)
	if cfg.TLSConfig == nil {
		t.Setenv("PGSSLMODE", "disable")
	}
	if cfg.Password != "" {
		t.Setenv("PGPASSWORD", cfg.Password)
	}
	session := fmt.Sprintf("postgres://%s@%s/%s", cfg.User, hostPort(cfg.Host, cfg.Port), cfg.Database)
	for _, tc := range []struct{ dsn, want string }{
		{"postgres://", "postgres://" + target.ConnectedAs + session + ")"},
		{"dbname=" + cfg.Database, "dbname=" + cfg.Database + target.ConnectedAs + session + ")"},
		{dsn, target.Redact(dsn)},
	} {
		tg := openTarget(t, tc.dsn, target.DurabilityServer)
		got := tg.Info().DSN
		if got != tc.want {
			t.Errorf("DSN %q: Info().DSN = %q, want %q", tc.dsn, got, tc.want)
		}
		if target.GivenDSN(got) != target.Redact(tc.dsn) {
			t.Errorf("GivenDSN(%q) = %q, want the DSN as given", got, target.GivenDSN(got))
		}
		if cfg.Password != "" && strings.Contains(got, cfg.Password) {
			t.Errorf("Info().DSN %q shows the password", got)
		}
	}
}

func TestNamesSession(t *testing.T) {
	for dsn, want := range map[string]bool{
		"postgres://u@h/db":                 true,
		"postgresql://u:pw@h:5433/db?x=1":   true,
		"postgres://h/db":                   false,
		"postgres://u@h":                    false,
		"postgres://":                       false,
		"postgres:///db?host=/tmp&user=u":   true,
		"host=h user=u dbname=d":            true,
		"host=h dbname=d":                   false,
		"host=h user=u dbname=''":           false,
		"host=h user=u password=x dbname=d": true,
	} {
		if got := namesSession(dsn); got != want {
			t.Errorf("namesSession(%q) = %v, want %v", dsn, got, want)
		}
	}
}

// TestRemoteServer: a server reached at another host's address (this
// host's own, through a forwarder, whose address the server sees the
// session come from: ceiling cannot tell it is on this host) is not taken
// for a local one, round trips to it are timed, and its connections count
// theirs. Reached straight, the server sees the session come from its
// socket (directOnThisHost: what makes a server named by this host's own
// name or address a local one).
func TestRemoteServer(t *testing.T) {
	const delay = 20 * time.Millisecond
	ctx := context.Background()
	for _, c := range []struct {
		name string
		dsn  string
		want bool
	}{
		{"straight", testDB(t, "ceiling_test_pg"), true},
		{"through a forwarder", testenv.Remote(t, testDB(t, "ceiling_test_pg"), "5432", 0), false},
	} {
		conn, err := pgx.Connect(ctx, c.dsn)
		if err != nil {
			t.Fatal(err)
		}
		if got := directOnThisHost(ctx, conn); got != c.want {
			t.Errorf("%s (%s): directOnThisHost %v, want %v", c.name, target.Redact(c.dsn), got, c.want)
		}
		_ = conn.Close(ctx)
	}
	dsn := testenv.Remote(t, testDB(t, "ceiling_test_pg"), "5432", delay)
	tg := openTarget(t, dsn, target.DurabilityServer)
	testenv.CheckNotLocal(t, tg, dsn)
	testenv.CheckPings(t, tg, delay)
	testenv.CheckRoundTrips(t, tg)
}
