package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/ceiling-db/ceiling/internal/metrics"
	"github.com/ceiling-db/ceiling/internal/target"
	"github.com/ceiling-db/ceiling/internal/testenv"
)

// The integration tests run against CEILING_TEST_MYSQL_DSN, e.g.
// mysql://root@127.0.0.1:3306/test. So as not to disturb other users of
// that database they work in a database of their own, ceiling_test_my,
// created here and dropped by TestMain. innodb_flush_log_at_trx_commit is
// global, so these tests do not run in parallel with each other.

const testDBName = "ceiling_test_my"

var (
	setupOnce sync.Once
	setupErr  error
	usersMu   sync.Mutex
	users     []string // accounts to drop after the tests
)

func TestMain(m *testing.M) {
	code := m.Run()
	if dsn := os.Getenv(testenv.MySQLEnv); dsn != "" {
		if db, err := rawDB(dsn); err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			_, _ = db.ExecContext(ctx, "DROP DATABASE IF EXISTS "+testDBName)
			for _, u := range users {
				_, _ = db.ExecContext(ctx, "DROP USER IF EXISTS "+u)
			}
			cancel()
			_ = db.Close()
		}
	}
	os.Exit(code)
}

// rawDB opens a plain database/sql handle for dsn (a mysql:// URL).
func rawDB(dsn string) (*sql.DB, error) {
	cfg, err := parseDSN(dsn)
	if err != nil {
		return nil, err
	}
	c, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(c), nil
}

// testDSN returns a DSN for the test database, creating it once, or skips.
func testDSN(t *testing.T) string {
	t.Helper()
	base := testenv.DSN(t, testenv.MySQLEnv)
	setupOnce.Do(func() {
		db, err := rawDB(base)
		if err != nil {
			setupErr = err
			return
		}
		defer db.Close()
		_, setupErr = db.ExecContext(context.Background(), "CREATE DATABASE IF NOT EXISTS "+testDBName)
	})
	if setupErr != nil {
		t.Fatalf("set up %s: %v", testDBName, setupErr)
	}
	return withDatabase(t, base, testDBName)
}

func withDatabase(t *testing.T, dsn, db string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatalf("parse CEILING_TEST_MYSQL_DSN: %v", err)
	}
	u.Path = "/" + db
	return u.String()
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// raw opens a plain handle on the test database for setup and checks.
func raw(t *testing.T) *sql.DB {
	t.Helper()
	db, err := rawDB(testDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func openTarget(t *testing.T, dsn string, mode target.Durability) target.Target {
	t.Helper()
	tg, err := Open(testCtx(t), target.Options{DSN: dsn, Durability: mode, MaxConns: 4})
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

func queryString(t *testing.T, c target.Conn, q string, args ...any) string {
	t.Helper()
	rows, err := c.Query(testCtx(t), q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	if !rows.Next() {
		t.Fatalf("%s: no row (err %v)", q, rows.Err())
	}
	var s string
	if err := rows.Scan(&s); err != nil {
		t.Fatalf("%s: scan: %v", q, err)
	}
	return s
}

func mustExec(t *testing.T, c target.Conn, q string) {
	t.Helper()
	if _, err := c.Exec(testCtx(t), q); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

func globalFlush(t *testing.T, db *sql.DB) string {
	t.Helper()
	var v string
	if err := db.QueryRow("SELECT @@GLOBAL.innodb_flush_log_at_trx_commit").Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestOpenInfo(t *testing.T) {
	dsn := testDSN(t)
	tg := openTarget(t, dsn, target.DurabilityServer)
	info := tg.Info()
	if info.Engine != "mysql" || info.Version == "" || info.DSN != target.Redact(dsn) {
		t.Errorf("Info = engine %q, version %q, dsn %q", info.Engine, info.Version, info.DSN)
	}
	for _, k := range []string{"innodb_flush_log_at_trx_commit", "sync_binlog", "innodb_buffer_pool_size", "flavor"} {
		if _, ok := info.Settings[k]; !ok {
			t.Errorf("Settings lacks %s; got %v", k, info.Settings)
		}
	}
	if d := tg.Dialect(); d != (target.Dialect{Engine: "mysql", Prefix: "ceiling_"}) {
		t.Errorf("Dialect = %+v", d)
	}
	// datadir is readable by any user: the redo log's directory is known.
	if info.Settings["datadir"] == "" || info.LogDir == "" || !path.IsAbs(info.LogDir) {
		t.Errorf("datadir %q, innodb_log_group_home_dir %q: LogDir %q, want an absolute directory",
			info.Settings["datadir"], info.Settings["innodb_log_group_home_dir"], info.LogDir)
	}
	// A local server's datadir is examined as its log's directory is:
	// whether the device's reads are the data files'.
	if info.Local && info.LogDevice != nil && info.DataOnLogDevice == nil {
		t.Errorf("log device %s found, but not whether datadir is on it", info.LogDevice.Name)
	}
	// Encryption as a worker's session has it: Ssl_version empty when
	// the connection is not encrypted.
	ver := workerTLS(t, tg)
	if want := target.TLSOff; ver != "" {
		if !strings.HasPrefix(info.TLS, strings.Replace(ver, "TLSv", "TLS ", 1)+", ") {
			t.Errorf("TLS %q, but a worker's Ssl_version is %q", info.TLS, ver)
		}
	} else if info.TLS != want {
		t.Errorf("TLS %q, want %q for an unencrypted worker session", info.TLS, want)
	}
	t.Logf("version %s; log directory %q; TLS %s; settings %v", info.Version, info.LogDir, info.TLS, info.Settings)
}

func TestTableRoundTrip(t *testing.T) {
	ctx := testCtx(t)
	tg := openTarget(t, testDSN(t), target.DurabilityServer)
	s := tg.Schema()
	tbl := tg.Dialect().Table("rt")
	if err := s.CreateTable(ctx, "rt", "id INT PRIMARY KEY, v VARCHAR(20) NOT NULL, at DATETIME NULL"); err != nil {
		t.Fatalf("CreateTable: %v", err)
	}
	c := connect(t, tg)
	for i := 1; i <= 3; i++ {
		n, err := c.Exec(ctx, "INSERT INTO "+tbl+" (id, v, at) VALUES (?, ?, ?)", i, "v"+strconv.Itoa(i), time.Date(2024, 1, i, 0, 0, 0, 0, time.UTC))
		if err != nil || n != 1 {
			t.Fatalf("insert %d: n=%d err=%v, want 1, nil", i, n, err)
		}
	}
	if n, err := c.Exec(ctx, "UPDATE "+tbl+" SET v = CONCAT(v, 'x') WHERE id >= ?", 2); err != nil || n != 2 {
		t.Fatalf("update: n=%d err=%v, want 2, nil", n, err)
	}
	rows, err := c.Query(ctx, "SELECT id, v, at FROM "+tbl+" WHERE id > ? ORDER BY id", 0)
	if err != nil {
		t.Fatalf("query: %v", err)
	}
	var got []string
	for rows.Next() {
		var id int
		var v string
		var at time.Time
		if err := rows.Scan(&id, &v, &at); err != nil {
			t.Fatalf("scan: %v", err)
		}
		got = append(got, fmt.Sprintf("%d=%s@%d", id, v, at.Day()))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	if want := "1=v1@1 2=v2x@2 3=v3x@3"; strings.Join(got, " ") != want {
		t.Errorf("rows = %q, want %q", strings.Join(got, " "), want)
	}

	if err := c.Begin(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, "DELETE FROM "+tbl+" WHERE id > ?", 0); err != nil {
		t.Fatal(err)
	}
	if err := c.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if n := queryString(t, c, "SELECT COUNT(*) FROM "+tbl); n != "3" {
		t.Errorf("after rollback count = %s, want 3", n)
	}
	if err := c.Begin(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, "DELETE FROM "+tbl+" WHERE id = ?", 1); err != nil {
		t.Fatal(err)
	}
	if err := c.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if n := queryString(t, c, "SELECT COUNT(*) FROM "+tbl); n != "2" {
		t.Errorf("after commit count = %s, want 2", n)
	}

	// Exec of a prepared SELECT counts the rows, also when there are none
	// (which hangs go-sql-driver v1.10's own Exec path on MariaDB).
	for _, tc := range []struct {
		id   int
		want int64
	}{{0, 2}, {100, 0}} {
		ectx, cancel := context.WithTimeout(ctx, 5*time.Second)
		n, err := c.Exec(ectx, "SELECT id FROM "+tbl+" WHERE id > ?", tc.id)
		cancel()
		if err != nil || n != tc.want {
			t.Errorf("Exec(SELECT … id > %d) = %d, %v; want %d, nil", tc.id, n, err, tc.want)
		}
	}

	if err := s.CreateIndex(ctx, "rt", "rt_v", "v"); err != nil {
		t.Fatalf("CreateIndex: %v", err)
	}
	if names, err := s.Tables(ctx); err != nil || !contains(names, "rt") {
		t.Fatalf("Tables = %v, %v; want rt in it", names, err)
	}
	if err := s.CreateTable(ctx, "rt", "id INT PRIMARY KEY"); err != nil {
		t.Fatalf("CreateTable again: %v", err)
	}
	c2 := connect(t, tg) // c's prepared statements refer to the old table
	if n := queryString(t, c2, "SELECT COUNT(*) FROM "+tbl); n != "0" {
		t.Errorf("after replace count = %s, want 0", n)
	}
	if err := s.DropTable(ctx, "rt"); err != nil {
		t.Fatalf("DropTable: %v", err)
	}
	if err := s.DropTable(ctx, "rt"); err != nil {
		t.Fatalf("DropTable of a missing table: %v", err)
	}
	if err := s.CreateTable(ctx, "a", "id INT PRIMARY KEY"); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateTable(ctx, "b", "id INT PRIMARY KEY, a_id INT, FOREIGN KEY (a_id) REFERENCES ceiling_a (id)"); err != nil {
		t.Fatal(err)
	}
	if err := s.DropAll(ctx); err != nil {
		t.Fatalf("DropAll: %v", err)
	}
	if names, err := s.Tables(ctx); err != nil || len(names) != 0 {
		t.Errorf("Tables after DropAll = %v, %v; want none", names, err)
	}
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func TestForeignTable(t *testing.T) {
	ctx := testCtx(t)
	db := raw(t)
	for _, q := range []string{
		"DROP TABLE IF EXISTS ceiling_theirs, ceiling_other",
		"DROP VIEW IF EXISTS ceiling_view",
		"CREATE TABLE ceiling_theirs (x INT)",
		"CREATE TABLE ceiling_other (x INT) COMMENT = 'not ceiling'",
		"CREATE VIEW ceiling_view AS SELECT 1 AS x",
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	t.Cleanup(func() {
		_, _ = db.Exec("DROP TABLE IF EXISTS ceiling_theirs, ceiling_other")
		_, _ = db.Exec("DROP VIEW IF EXISTS ceiling_view")
	})
	tg := openTarget(t, testDSN(t), target.DurabilityServer)
	s := tg.Schema()
	if err := s.CreateTable(ctx, "mine", "id INT"); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"theirs", "other", "view"} {
		if err := s.CreateTable(ctx, name, "id INT"); !errors.Is(err, target.ErrForeignObject) || !strings.Contains(err.Error(), "ceiling_"+name) {
			t.Errorf("CreateTable(%s) = %v, want ErrForeignObject naming it", name, err)
		}
		if err := s.DropTable(ctx, name); !errors.Is(err, target.ErrForeignObject) {
			t.Errorf("DropTable(%s) = %v, want ErrForeignObject", name, err)
		}
	}
	if err := s.CreateIndex(ctx, "theirs", "theirs_x", "x"); !errors.Is(err, target.ErrForeignObject) {
		t.Errorf("CreateIndex on a foreign table = %v, want ErrForeignObject", err)
	}
	if names, err := s.Tables(ctx); err != nil || strings.Join(names, ",") != "mine" {
		t.Errorf("Tables = %v, %v; want [mine]", names, err)
	}
	if err := s.DropAll(ctx); err != nil {
		t.Errorf("DropAll = %v", err)
	}
	for _, q := range []string{"SELECT COUNT(*) FROM ceiling_theirs", "SELECT COUNT(*) FROM ceiling_other", "SELECT COUNT(*) FROM ceiling_view"} {
		var n int
		if err := db.QueryRowContext(ctx, q).Scan(&n); err != nil {
			t.Errorf("foreign object was touched: %s: %v", q, err)
		}
	}
	var n int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM ceiling_mine").Scan(&n); err == nil {
		t.Error("DropAll left ceiling_mine")
	}
}

func TestDurability(t *testing.T) {
	dsn := testDSN(t)
	db := raw(t)
	before := globalFlush(t, db)
	for _, tt := range []struct {
		mode target.Durability
		want string
	}{
		{target.DurabilityFull, "1"},
		{target.DurabilityRelaxed, "2"},
		{target.DurabilityServer, before},
	} {
		t.Run(string(tt.mode), func(t *testing.T) {
			// Open with a context that is cancelled before Close, as after
			// Ctrl-C; Close gets a fresh one.
			ctx, cancel := context.WithCancel(context.Background())
			tg, err := Open(ctx, target.Options{DSN: dsn, Durability: tt.mode})
			if err != nil {
				cancel()
				t.Fatal(err)
			}
			if got := globalFlush(t, db); got != tt.want {
				t.Errorf("during: global innodb_flush_log_at_trx_commit = %s, want %s", got, tt.want)
			}
			d := tg.Info().Durability
			if d.Mode != tt.mode || d.Setting != "innodb_flush_log_at_trx_commit" || d.Scope != "global" ||
				d.Before != before || d.During != tt.want || d.After != "" {
				t.Errorf("Durability = %+v", d)
			}
			cancel()
			if err := tg.Close(context.Background()); err != nil {
				t.Fatalf("Close: %v", err)
			}
			if got := globalFlush(t, db); got != before {
				t.Errorf("after Close: global = %s, want %s", got, before)
			}
			if d := tg.Info().Durability; d.After != before {
				t.Errorf("after Close: After = %q, want %q", d.After, before)
			}
			if err := tg.Close(context.Background()); err != nil {
				t.Errorf("second Close: %v", err)
			}
		})
	}
}

// createUser makes an account with only rights on the test database.
// workerTLS is a new worker session's Ssl_version: the TLS version, or
// "" for an unencrypted session.
func workerTLS(t *testing.T, tg target.Target) string {
	t.Helper()
	var name, ver string
	rows, err := connect(t, tg).Query(testCtx(t), "SHOW SESSION STATUS LIKE 'Ssl_version'")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		if err := rows.Scan(&name, &ver); err != nil {
			t.Fatal(err)
		}
	}
	rows.Close()
	return ver
}

func createUser(t *testing.T, name, password string) {
	t.Helper()
	db := raw(t)
	acct := "'" + name + "'@'%'"
	for _, q := range []string{
		"DROP USER IF EXISTS " + acct,
		"CREATE USER " + acct + " IDENTIFIED BY '" + password + "'",
		"GRANT ALL ON " + testDBName + ".* TO " + acct,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", strings.ReplaceAll(q, password, "xxxxx"), err)
		}
	}
	usersMu.Lock()
	users = append(users, acct)
	usersMu.Unlock()
}

func TestDurabilityPrivilege(t *testing.T) {
	dsn := testDSN(t)
	before := globalFlush(t, raw(t))
	createUser(t, "ceiling_t_np", testPassword)
	u, _ := url.Parse(dsn)
	u.User = url.UserPassword("ceiling_t_np", testPassword)
	mode := target.DurabilityRelaxed
	if before == "2" {
		mode = target.DurabilityFull
	}
	checkOpenError(t, target.Options{DSN: u.String(), Durability: mode}, "--durability server")
	if got := globalFlush(t, raw(t)); got != before {
		t.Errorf("global changed to %s by a failed Open, want %s", got, before)
	}
	tg := openTarget(t, u.String(), target.DurabilityServer)
	if d := tg.Info().Durability; d.During != before {
		t.Errorf("server mode: During = %q, want %q", d.During, before)
	}
}

func TestOpenErrors(t *testing.T) {
	dsn := testDSN(t)
	createUser(t, "ceiling_t_pw", testPassword)
	u, _ := url.Parse(dsn)
	const wrong = "Wr0ngPassw0rdX"
	t.Run("wrong password", func(t *testing.T) {
		v := *u
		v.User = url.UserPassword("ceiling_t_pw", wrong)
		checkOpenError(t, target.Options{DSN: v.String()}, "Access denied", wrong)
	})
	t.Run("unknown user", func(t *testing.T) {
		v := *u
		v.User = url.UserPassword("ceiling_no_such_user", wrong)
		checkOpenError(t, target.Options{DSN: v.String()}, "Access denied", wrong)
	})
	t.Run("missing database", func(t *testing.T) {
		v := *u
		v.User = url.UserPassword("ceiling_t_pw", testPassword)
		v.Path = "/ceiling_no_such_db"
		checkOpenError(t, target.Options{DSN: v.String()}, "ceiling_no_such_db")
	})
	t.Run("missing database, DSN user", func(t *testing.T) {
		v := *u
		v.Path = "/ceiling_no_such_db"
		checkOpenError(t, target.Options{DSN: v.String()}, "ceiling_no_such_db")
	})
}

func TestSamplerDeltas(t *testing.T) {
	dsn := testDSN(t)
	syncs := map[target.Durability]float64{}
	for _, mode := range []target.Durability{target.DurabilityFull, target.DurabilityRelaxed} {
		t.Run(string(mode), func(t *testing.T) {
			ctx := testCtx(t)
			tg := openTarget(t, dsn, mode)
			sampler := tg.(target.Sampler)
			if err := tg.Schema().CreateTable(ctx, "samp", "id INT PRIMARY KEY, v VARCHAR(10)"); err != nil {
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
				if _, err := c.Exec(ctx, "INSERT INTO ceiling_samp (id, v) VALUES (?, ?)", i, "x"); err != nil {
					t.Fatal(err)
				}
			}
			elapsed := time.Since(start)
			s1, err := sampler.Sample(ctx)
			if err != nil {
				t.Fatalf("Sample: %v", err)
			}
			d := map[string]float64{}
			for k, v := range s1.Counters {
				if old, ok := s0.Counters[k]; ok {
					d[k] = v - old
				}
			}
			_, hasLogSyncs := s1.Counters[target.CtrLogSyncs]
			syncKey := target.CtrLogSyncs
			if !hasLogSyncs {
				syncKey = "mysql.innodb_data_fsyncs" // MariaDB: log fsyncs are in here
			}
			for _, k := range []string{target.CtrLogBytes, target.CtrLogWrites, target.CtrDataSyncs, target.CtrDataWrites,
				target.CtrCacheReads, target.CtrCacheHits, syncKey} {
				if _, ok := s1.Counters[k]; !ok {
					t.Errorf("counter %s absent", k)
				}
			}
			if !hasLogSyncs && !strings.Contains(tg.Info().Settings["missing_evidence"], "Innodb_os_log_fsyncs") {
				t.Errorf("no Innodb_os_log_fsyncs but missing_evidence = %q", tg.Info().Settings["missing_evidence"])
			}
			if _, ok := s1.Counters[target.CtrCommits]; ok || !strings.Contains(tg.Info().Settings["missing_evidence"], "commits (Com_commit") {
				t.Errorf("commits counter present %v, missing_evidence = %q: want it absent and explained", ok, tg.Info().Settings["missing_evidence"])
			}
			syncs[mode] = d[syncKey]
			t.Logf("%s (%s): %d inserts in %v: %s %+.0f, log_syncs present %v, log_writes %+.0f, log_bytes %+.0f (%.0f B/insert), data_writes %+.0f, data_bytes_write %+.0f, commits %+.0f, mysql.handler_commit %+.0f, mysql.com_insert %+.0f",
				mode, tg.Info().Version, n, elapsed.Round(time.Millisecond), syncKey, d[syncKey], hasLogSyncs,
				d[target.CtrLogWrites], d[target.CtrLogBytes], d[target.CtrLogBytes]/n, d[target.CtrDataWrites],
				d[target.CtrDataBytesWrite], d[target.CtrCommits], d["mysql.handler_commit"], d["mysql.com_insert"])
			if mode == target.DurabilityFull && d[syncKey] < 150 {
				t.Errorf("full durability: %s delta = %v for %d commits, want >= 150", syncKey, d[syncKey], n)
			}
		})
	}
	if full, relaxed := syncs[target.DurabilityFull], syncs[target.DurabilityRelaxed]; full > 0 && relaxed > full/4 {
		t.Errorf("relaxed durability: fsyncs delta = %v, want far fewer than full's %v", relaxed, full)
	}
}

func TestClassifyReal(t *testing.T) {
	ctx := testCtx(t)
	tg := openTarget(t, testDSN(t), target.DurabilityServer)
	if err := tg.Schema().CreateTable(ctx, "cls", "id INT PRIMARY KEY, v INT NOT NULL"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tg.Schema().DropTable(context.Background(), "cls") })
	a, b := connect(t, tg), connect(t, tg)
	for i := 1; i <= 2; i++ {
		if _, err := a.Exec(ctx, "INSERT INTO ceiling_cls VALUES (?, 0)", i); err != nil {
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

	_, err := a.Exec(ctx, "INSERT INTO ceiling_cls VALUES (?, 0)", 1)
	want("duplicate key", err, metrics.ErrConstraint)
	_, err = a.Exec(ctx, "INSERT INTO ceiling_cls VALUES (?, ?)", 3, nil)
	want("not null", err, metrics.ErrConstraint)
	_, err = a.Exec(ctx, "SELECT * FROM ceiling_no_such_table WHERE id = ?", 1)
	want("no such table", err, metrics.ErrOther)

	// Lock wait timeout: a holds row 1, b waits at most 1s.
	mustExec(t, a, "BEGIN")
	mustExec(t, a, "UPDATE ceiling_cls SET v = 1 WHERE id = 1")
	mustExec(t, b, "SET SESSION innodb_lock_wait_timeout = 1")
	_, err = b.Exec(ctx, "UPDATE ceiling_cls SET v = 2 WHERE id = ?", 1)
	want("lock wait timeout", err, metrics.ErrLockTimeout)
	mustExec(t, a, "ROLLBACK")
	mustExec(t, b, "SET SESSION innodb_lock_wait_timeout = 50")

	// Deadlock: a locks 1 then 2, b locks 2 then 1.
	mustExec(t, a, "BEGIN")
	mustExec(t, b, "BEGIN")
	mustExec(t, a, "UPDATE ceiling_cls SET v = 1 WHERE id = 1")
	mustExec(t, b, "UPDATE ceiling_cls SET v = 1 WHERE id = 2")
	errc := make(chan error, 1)
	go func() {
		_, err := a.Exec(ctx, "UPDATE ceiling_cls SET v = 2 WHERE id = ?", 2)
		errc <- err
	}()
	time.Sleep(100 * time.Millisecond)
	_, errB := b.Exec(ctx, "UPDATE ceiling_cls SET v = 2 WHERE id = ?", 1)
	errA := <-errc
	_ = a.Rollback(ctx)
	_ = b.Rollback(ctx)
	if errA == nil {
		want("deadlock", errB, metrics.ErrSerialization)
	} else {
		want("deadlock", errA, metrics.ErrSerialization)
	}

	// Statement time limit. (MariaDB's BENCHMARK() returns 0 instead of
	// failing when interrupted; SLEEP() fails. MySQL's SLEEP() returns 1
	// instead, so the MySQL branch uses a big join; it is not exercised
	// against the MariaDB server these tests were written on.)
	if tg.Info().Settings["flavor"] == "mariadb" {
		mustExec(t, b, "SET SESSION max_statement_time = 0.05")
		_, err = b.Exec(ctx, "SELECT SLEEP(?)", 1)
		want("max_statement_time", err, metrics.ErrTimeout)
		mustExec(t, b, "SET SESSION max_statement_time = 0")
	} else {
		_, err = b.Exec(ctx, "SELECT /*+ MAX_EXECUTION_TIME(50) */ COUNT(*) FROM information_schema.COLUMNS a, "+
			"information_schema.COLUMNS b, information_schema.COLUMNS c WHERE a.ORDINAL_POSITION > ?", 0)
		want("max_execution_time", err, metrics.ErrTimeout)
	}

	// Killed session.
	id := queryString(t, b, "SELECT CONNECTION_ID()")
	mustExec(t, a, "KILL "+id)
	time.Sleep(100 * time.Millisecond)
	_, err = b.Exec(ctx, "SELECT ?", 1)
	want("killed", err, metrics.ErrConnLost)
	_, err = b.Exec(ctx, "SELECT 1")
	want("use after kill", err, metrics.ErrConnLost)
	// The target still connects.
	c := connect(t, tg)
	if got := queryString(t, c, "SELECT 1"); got != "1" {
		t.Errorf("after a kill: SELECT 1 = %s", got)
	}
}

func TestSamplerReconnects(t *testing.T) {
	ctx := testCtx(t)
	tg := openTarget(t, testDSN(t), target.DurabilityServer)
	sampler := tg.(target.Sampler)
	if _, err := sampler.Sample(ctx); err != nil {
		t.Fatal(err)
	}
	db := raw(t)
	// Kill every other session of this user running nothing: the
	// sampler's and the admin's.
	rows, err := db.QueryContext(ctx, "SELECT ID FROM information_schema.PROCESSLIST WHERE DB = ? AND ID <> CONNECTION_ID() AND COMMAND = 'Sleep'", testDBName)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for rows.Next() {
		var id string
		_ = rows.Scan(&id)
		ids = append(ids, id)
	}
	rows.Close()
	for _, id := range ids {
		_, _ = db.ExecContext(ctx, "KILL "+id)
	}
	time.Sleep(100 * time.Millisecond)
	if _, err := sampler.Sample(ctx); err != nil {
		t.Errorf("Sample after its session was killed: %v", err)
	}
	if _, err := tg.Schema().Tables(ctx); err != nil {
		t.Errorf("Tables after the admin session was killed: %v", err)
	}
}

// TestLockNamespace: a second target on the same database cannot take
// ceiling's namespace while the first holds it (named in the error), and
// can once the first is closed.
func TestLockNamespace(t *testing.T) {
	dsn := testDSN(t)
	testenv.CheckNamespaceLock(t, func() target.Target { return openTarget(t, dsn, target.DurabilityServer) }, "(connection ")
}

// TestDurabilityAfterRestart: a server restart resets the global
// durability setting to its configured value. Seen as a lost sampler
// session, the target puts its own back and says so in the durability's
// note; Close still restores the value from before. (A restart is played
// by resetting the setting by hand and killing the sampler's session.)
func TestDurabilityAfterRestart(t *testing.T) {
	db := raw(t)
	before := globalFlush(t, db)
	mode, during, other := target.DurabilityRelaxed, "2", "1"
	if before == "2" {
		mode, during, other = target.DurabilityFull, "1", "2"
	}
	ctx := testCtx(t)
	tg, err := Open(ctx, target.Options{DSN: testDSN(t), Durability: mode})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close(context.Background())
	my := tg.(*myTarget)
	if _, err := my.Sample(ctx); err != nil {
		t.Fatal(err)
	}
	var id int64
	if err := my.sampler.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "SET GLOBAL innodb_flush_log_at_trx_commit = "+other); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "KILL "+strconv.FormatInt(id, 10)); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ { // the first may only find its session gone
		if _, err = my.Sample(ctx); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatalf("sample after the lost session: %v", err)
	}
	if got := globalFlush(t, db); got != during {
		t.Errorf("after the reset: global %s, want ceiling's %s again", got, during)
	}
	if n := tg.Info().Durability.Note; !strings.Contains(n, "the server had innodb_flush_log_at_trx_commit="+other+" (a restart?): ceiling set it to "+during+" again") {
		t.Errorf("durability note %q", n)
	}
	if err := tg.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := globalFlush(t, db); got != before {
		t.Errorf("after Close: %s, want %s", got, before)
	}
}

// TestRowLockCounter: a session that waits 400 ms for a row another holds
// shows in the sampled row_lock_ms (Innodb_row_lock_time), which stands
// for the lock waits where performance_schema is off.
func TestRowLockCounter(t *testing.T) {
	ctx := testCtx(t)
	tg := openTarget(t, testDSN(t), target.DurabilityServer)
	sampler := tg.(target.Sampler)
	if err := tg.Schema().CreateTable(ctx, "rowlock", "id INT PRIMARY KEY, v INT NOT NULL"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tg.Schema().DropTable(context.Background(), "rowlock") })
	a, b := connect(t, tg), connect(t, tg)
	mustExec(t, a, "INSERT INTO ceiling_rowlock VALUES (1, 0)")
	s0, err := sampler.Sample(ctx)
	if err != nil {
		t.Fatal(err)
	}
	before, ok := s0.Counters[target.CtrRowLockMs]
	if !ok {
		t.Fatalf("no %s counter: %v", target.CtrRowLockMs, s0.Counters)
	}
	mustExec(t, a, "BEGIN")
	mustExec(t, a, "UPDATE ceiling_rowlock SET v = 1 WHERE id = 1")
	done := make(chan error, 1)
	start := time.Now()
	go func() {
		_, err := b.Exec(ctx, "UPDATE ceiling_rowlock SET v = 2 WHERE id = ?", 1)
		done <- err
	}()
	time.Sleep(400 * time.Millisecond)
	mustExec(t, a, "COMMIT")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	waited := time.Since(start)
	s1, err := sampler.Sample(ctx)
	if err != nil {
		t.Fatal(err)
	}
	d := s1.Counters[target.CtrRowLockMs] - before
	t.Logf("row_lock_ms %+.0f for a wait of %v", d, waited.Round(time.Millisecond))
	if d < 300 || d > float64(waited.Milliseconds())+200 {
		t.Errorf("row_lock_ms grew by %.0f for one wait of %v", d, waited)
	}
}

// TestLockWaitTables: a session waiting for a row lock has its wait
// attributed to the row's table, from the waits in progress at each
// sample; a table whose row is locked but not waited for gets nothing.
//
// On the server with performance_schema on, the wait categories and
// events count the wait once: as InnoDB's row-lock time, not also as the
// waiting statement's time outside wait events.
func TestLockWaitTables(t *testing.T) {
	t.Run("plain", func(t *testing.T) { testLockWaits(t, testDSN(t)) })
	t.Run("performance_schema", func(t *testing.T) { testLockWaits(t, psDSN(t)) })
}

func testLockWaits(t *testing.T, dsn string) {
	ctx := testCtx(t)
	tg := openTarget(t, dsn, target.DurabilityServer)
	sampler := tg.(target.Sampler)
	for _, name := range []string{"lwhot", "lwcold"} {
		if err := tg.Schema().CreateTable(ctx, name, "id INT PRIMARY KEY, v INT NOT NULL"); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = tg.Schema().DropTable(context.Background(), name) })
	}
	a, b := connect(t, tg), connect(t, tg)
	mustExec(t, a, "INSERT INTO ceiling_lwhot VALUES (1, 0)")
	mustExec(t, a, "INSERT INTO ceiling_lwcold VALUES (1, 0)")
	sample := func() target.Sample {
		t.Helper()
		s, err := sampler.Sample(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s0 := sample()
	mustExec(t, a, "BEGIN")
	mustExec(t, a, "UPDATE ceiling_lwhot SET v = 1 WHERE id = 1")
	mustExec(t, a, "UPDATE ceiling_lwcold SET v = 1 WHERE id = 1") // held, never waited for
	done := make(chan error, 1)
	start := time.Now()
	go func() {
		_, err := b.Exec(ctx, "UPDATE ceiling_lwhot SET v = v + ? WHERE id = ?", 2, 1)
		done <- err
	}()
	time.Sleep(300 * time.Millisecond)
	sample() // the wait is in progress
	time.Sleep(300 * time.Millisecond)
	s2 := sample() // still waiting (innodb_lock_wait_timeout is 50 s by default)
	mustExec(t, a, "COMMIT")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	waited := time.Since(start)
	key := target.CtrLockTablePrefix + "ceiling_lwhot"
	hot := s2.Counters[key] - s0.Counters[key] // absent before its first wait: zero
	t.Logf("lock waits attributed to ceiling_lwhot: %.0f ms for a wait of %v", hot, waited.Round(time.Millisecond))
	if hot < 400 || hot > float64(waited.Milliseconds())+300 {
		t.Errorf("lock waits on ceiling_lwhot %.0f ms for one wait of %v (two samples 300 ms apart saw it)", hot, waited)
	}
	if v, ok := s2.Counters[target.CtrLockTablePrefix+"ceiling_lwcold"]; ok {
		t.Errorf("ceiling_lwcold has lock waits (%.0f ms): nobody waited for it", v)
	}
	if !psOn(tg.Info().Settings) {
		return
	}
	s3 := sample() // after the wait
	d := func(k string) float64 { return s3.Counters[k] - s0.Counters[k] }
	lock, other := d(target.CtrWaitLockMs), d(target.CtrWaitOtherMs)+d(target.CtrWaitCPUMs)
	rowLocks := d(target.CtrWaitEventPrefix + EventRowLocks)
	outside := d(target.CtrWaitEventPrefix+EventUntimed) + d(target.CtrWaitEventPrefix+EventCPU)
	t.Logf("categories: lock %.0f ms, other+cpu %.0f ms; events: row locks %.0f ms, outside wait events %.0f ms", lock, other, rowLocks, outside)
	if lock < 400 || rowLocks < 400 {
		t.Errorf("lock %.0f ms, row-lock event %.0f ms: want the wait of %v", lock, rowLocks, waited)
	}
	if other > 300 || outside > 300 {
		t.Errorf("other+cpu %.0f ms, outside wait events %.0f ms: the row-lock wait is counted there too", other, outside)
	}
}

// TestLockAfterSessionsLost: ceiling's sessions ended by an administrator
// (KILL) take the namespace lock with them; the next sample, on a new
// session, takes it again and says so. Ended again while another session
// grabs the lock, the target's info names that connection.
func TestLockAfterSessionsLost(t *testing.T) {
	ctx := testCtx(t)
	db := raw(t)
	tg := openTarget(t, testDSN(t), target.DurabilityServer)
	if err := tg.(target.Exclusive).LockNamespace(ctx); err != nil {
		t.Fatal(err)
	}
	my := tg.(*myTarget)
	if _, err := my.Sample(ctx); err != nil {
		t.Fatal(err)
	}
	name := my.lockName
	other, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	var otherID int64
	if err := other.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&otherID); err != nil {
		t.Fatal(err)
	}
	endCeiling := func() {
		t.Helper()
		var ids []int64
		for _, c := range []*sql.Conn{my.admin, my.sampler} {
			var id int64
			if err := c.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id)
		}
		for _, id := range ids {
			if _, err := other.ExecContext(ctx, "KILL "+strconv.FormatInt(id, 10)); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	holder := func() int64 {
		t.Helper()
		var id sql.NullInt64
		if err := other.QueryRowContext(ctx, "SELECT IS_USED_LOCK(?)", name).Scan(&id); err != nil {
			t.Fatal(err)
		}
		return id.Int64
	}
	sample := func() {
		t.Helper()
		var err error
		for i := 0; i < 3; i++ { // the first may only find its session gone
			if _, err = my.Sample(ctx); err == nil {
				return
			}
		}
		t.Fatalf("sample after the lost sessions: %v", err)
	}
	if holder() == 0 || tg.Info().NamespaceLock != "" {
		t.Fatalf("after LockNamespace: holder %d, note %q", holder(), tg.Info().NamespaceLock)
	}

	endCeiling()
	if holder() != 0 {
		t.Fatal("the lock outlived its session")
	}
	sample()
	if h := holder(); h == 0 || h == otherID || !strings.HasSuffix(tg.Info().NamespaceLock, "the namespace lock with them: taken again") {
		t.Fatalf("after a new sample: holder %d, note %q", h, tg.Info().NamespaceLock)
	}

	endCeiling()
	var got int64
	if err := other.QueryRowContext(ctx, "SELECT GET_LOCK(?, 0)", name).Scan(&got); err != nil || got != 1 {
		t.Fatalf("GET_LOCK by the other session: %d, %v", got, err)
	}
	defer other.ExecContext(ctx, "SELECT RELEASE_LOCK(?)", name)
	sample()
	if note := tg.Info().NamespaceLock; !strings.Contains(note, fmt.Sprintf(": connection %d", otherID)) || !strings.Contains(note, "holds it now") {
		t.Fatalf("with the lock taken by another session: note %q", note)
	}
}

// TestDurabilityAfterKill: a ceiling that dies holding a changed
// innodb_flush_log_at_trx_commit (SIGKILL: its sessions end, nothing is
// restored; played by closing the target's sessions without Close) leaves
// the value to put back in ceiling_durability, and the next Open of that
// database restores it and says so. While the first still holds the
// namespace lock, a second Open leaves its marker alone; a value changed
// by hand since is not overwritten.
func TestDurabilityAfterKill(t *testing.T) {
	db := raw(t)
	before := globalFlush(t, db)
	mode, during, other := target.DurabilityRelaxed, "2", "0"
	if before == "2" {
		mode, during = target.DurabilityFull, "1"
	}
	t.Cleanup(func() { _, _ = db.Exec("SET GLOBAL innodb_flush_log_at_trx_commit = " + before) })
	marker := func() string {
		var b, d string
		err := db.QueryRow("SELECT before_value, during_value FROM "+durabilityTable+" WHERE setting = 'innodb_flush_log_at_trx_commit'").Scan(&b, &d)
		if err != nil {
			return "none (" + err.Error() + ")"
		}
		return b + "->" + d
	}
	// kill opens a target with mode, takes the lock, and ends its
	// sessions as a killed process would.
	kill := func(t *testing.T) {
		t.Helper()
		ctx := testCtx(t)
		tg, err := Open(ctx, target.Options{DSN: testDSN(t), Durability: mode})
		if err != nil {
			t.Fatal(err)
		}
		if err := tg.(target.Exclusive).LockNamespace(ctx); err != nil {
			t.Fatal(err)
		}
		if got := marker(); got != before+"->"+during {
			t.Fatalf("marker while the run holds the lock: %s, want %s->%s", got, before, during)
		}
		// A second ceiling meanwhile leaves the live run's setting alone.
		second := openTarget(t, testDSN(t), target.DurabilityServer)
		if n := second.Info().Durability.Note; n != "" || globalFlush(t, db) != during || marker() != before+"->"+during {
			t.Fatalf("a second Open during the run: note %q, global %s, marker %s", n, globalFlush(t, db), marker())
		}
		if err := second.Close(ctx); err != nil {
			t.Fatal(err)
		}
		tg.(*myTarget).closeAll()
		if got := globalFlush(t, db); got != during {
			t.Fatalf("after the kill: global %s, want it left at %s", got, during)
		}
	}

	t.Run("restored", func(t *testing.T) {
		kill(t)
		next := openTarget(t, testDSN(t), target.DurabilityServer)
		if got := globalFlush(t, db); got != before {
			t.Errorf("after the next Open: global %s, want %s put back", got, before)
		}
		want := fmt.Sprintf("innodb_flush_log_at_trx_commit was left at %s by a ceiling run (pid %d on", during, os.Getpid())
		if n := next.Info().Durability.Note; !strings.Contains(n, want) || !strings.Contains(n, "ceiling put back its value from before, "+before) {
			t.Errorf("note %q, want it to contain %q and the value put back", n, want)
		}
		if d := next.Info().Durability; d.Before != before {
			t.Errorf("the next run's before = %s, want %s", d.Before, before)
		}
		if got := marker(); !strings.HasPrefix(got, "none") {
			t.Errorf("marker after recovery: %s", got)
		}
	})
	t.Run("changed since", func(t *testing.T) {
		kill(t)
		if _, err := db.Exec("SET GLOBAL innodb_flush_log_at_trx_commit = " + other); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _, _ = db.Exec("SET GLOBAL innodb_flush_log_at_trx_commit = " + before) })
		next := openTarget(t, testDSN(t), target.DurabilityServer)
		if got := globalFlush(t, db); got != other {
			t.Errorf("global %s, want the value set by hand, %s, left", got, other)
		}
		if n := next.Info().Durability.Note; !strings.Contains(n, "it is "+other+" now, changed since, and was left as it is") {
			t.Errorf("note %q", n)
		}
		if got := marker(); !strings.HasPrefix(got, "none") {
			t.Errorf("marker after recovery: %s", got)
		}
	})
	t.Run("closed", func(t *testing.T) {
		tg := openTarget(t, testDSN(t), mode)
		if err := tg.(target.Exclusive).LockNamespace(testCtx(t)); err != nil {
			t.Fatal(err)
		}
		if err := tg.Close(testCtx(t)); err != nil {
			t.Fatal(err)
		}
		if got := marker(); !strings.HasPrefix(got, "none") || globalFlush(t, db) != before {
			t.Errorf("after Close: marker %s, global %s (want none, %s)", got, globalFlush(t, db), before)
		}
	})
}

// TestRemoteServer: a server reached at another host's address (this
// host's own, through a forwarder, whose address the server sees the
// session come from: ceiling cannot tell it is on this host) is not taken
// for a local one, round trips to it are timed, and its connections count
// theirs. Reached straight, the server sees the admin session come from
// its socket (direct: what makes a server named by this host's own name or
// address a local one).
func TestRemoteServer(t *testing.T) {
	const delay = 20 * time.Millisecond
	if !openTarget(t, testDSN(t), target.DurabilityServer).(*myTarget).direct(context.Background()) {
		t.Errorf("%s: the server's process list does not show the admin session's own socket", target.Redact(testDSN(t)))
	}
	dsn := testenv.Remote(t, testDSN(t), "3306", delay)
	tg := openTarget(t, dsn, target.DurabilityServer)
	if tg.(*myTarget).direct(context.Background()) {
		t.Errorf("through a forwarder: taken for a session straight to the server")
	}
	testenv.CheckNotLocal(t, tg, dsn)
	testenv.CheckPings(t, tg, delay)
	testenv.CheckRoundTrips(t, tg)
}
