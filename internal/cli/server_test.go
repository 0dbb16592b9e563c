package cli

import (
	"context"
	"database/sql"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"

	"github.com/ceiling-db/ceiling/internal/report"
	"github.com/ceiling-db/ceiling/internal/target"
	"github.com/ceiling-db/ceiling/internal/target/engines"
	"github.com/ceiling-db/ceiling/internal/target/postgres"
	"github.com/ceiling-db/ceiling/internal/testenv"
)

// serverDSN returns the DSN of a live server for integration tests. Off CI
// the test skips when the variable is unset; with CEILING_REQUIRE_SERVERS
// set (as .ci/run does) a missing DSN is a failure, never a silent skip.
func serverDSN(t *testing.T, env string) string {
	t.Helper()
	dsn := testenv.DSN(t, env)
	t.Cleanup(dropNewTables(t, dsn))
	return dsn
}

// dropNewTables notes ceiling's tables on the server of dsn and returns a
// cleanup that drops those made since (and ceiling's namespace when no
// ceiling table is left), so that the tests' runs leave nothing behind in
// the shared test database.
func dropNewTables(t *testing.T, dsn string) func() {
	t.Helper()
	tables := func() (target.Target, map[string]bool) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		tg, err := engines.Open(ctx, target.Options{DSN: dsn, MaxConns: 1})
		if err != nil {
			t.Fatalf("open %s to list ceiling's tables: %v", target.Redact(dsn), err)
		}
		names, err := tg.Schema().Tables(ctx)
		if err != nil {
			tg.Close(context.Background())
			t.Fatalf("list ceiling's tables: %v", err)
		}
		m := map[string]bool{}
		for _, n := range names {
			m[n] = true
		}
		return tg, m
	}
	tg, before := tables()
	tg.Close(context.Background())
	return func() {
		tg, after := tables()
		defer tg.Close(context.Background())
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		left := 0
		for n := range after {
			if before[n] {
				left++
				continue
			}
			if err := tg.Schema().DropTable(ctx, n); err != nil {
				t.Errorf("drop the test's table %s: %v", n, err)
			}
		}
		if left == 0 {
			if err := tg.Schema().DropAll(ctx); err != nil {
				t.Errorf("remove ceiling's namespace: %v", err)
			}
		}
	}
}

type engineCase struct {
	name, env string
}

var engineCases = []engineCase{{"postgres", testenv.PostgresEnv}, {"mysql", testenv.MySQLEnv}}

func TestServerWorkloads(t *testing.T) {
	for _, ec := range engineCases {
		t.Run(ec.name, func(t *testing.T) {
			dsn := serverDSN(t, ec.env)
			for _, wl := range []string{"single-inserts", "inserts-deletes"} {
				t.Run(wl, func(t *testing.T) {
					out := filepath.Join(t.TempDir(), "out")
					args := []string{"run", wl, "--db", dsn, "-c", "4", "--ops", "800", "--out", out}
					if wl == "inserts-deletes" {
						args = append(args, "--rows", "500")
					}
					code, stdout, stderr := runCLI(t, context.Background(), args...)
					if code != 0 {
						t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
					}
					r, _ := readResult(t, out)
					if r.Target.Engine != ec.name || r.Summary.Requests != 800 || r.Summary.Errors != 0 {
						t.Fatalf("engine %s requests %d errors %d", r.Target.Engine, r.Summary.Requests, r.Summary.Errors)
					}
					if c := r.Costs.LogBytesPerOp; c == nil || *c < 50 {
						t.Fatalf("log bytes per op = %v, want measured and above 50 bytes", fmtPtr(c))
					}
					if strings.Contains(stdout, "xxxxx") && !strings.Contains(dsn, "@") {
						t.Fatalf("unexpected redaction marker in output")
					}
				})
			}
		})
	}
}

// TestServerDurability is the delayed-durability experiment on each server:
// about one log flush per commit at full durability, far fewer when relaxed.
func TestServerDurability(t *testing.T) {
	for _, ec := range engineCases {
		t.Run(ec.name, func(t *testing.T) {
			dsn := serverDSN(t, ec.env)
			syncsPerOp := map[string]float64{}
			for _, mode := range []string{"full", "relaxed"} {
				out := filepath.Join(t.TempDir(), mode)
				code, stdout, stderr := runCLI(t, context.Background(), "run", "single-inserts", "--db", dsn, "--ops", "500", "--durability", mode, "--out", out)
				if code != 0 {
					t.Fatalf("%s: exit %d\nstdout:\n%s\nstderr:\n%s", mode, code, stdout, stderr)
				}
				r, _ := readResult(t, out)
				// MariaDB has no log fsync counter; its data fsyncs include the log's.
				var raw map[string]any
				b, _ := os.ReadFile(mustGlob(t, out))
				_ = jsonUnmarshal(b, &raw)
				costs := raw["costs"].(map[string]any)
				v, ok := costs["log_syncs_per_op"].(float64)
				if !ok {
					v, ok = costs["data_syncs_per_op"].(float64)
				}
				if !ok {
					t.Fatalf("%s: neither log nor data syncs per op measured: %v", mode, costs)
				}
				syncsPerOp[mode] = v
				// Without a log fsync counter the console's syncs/s shows
				// the log's and data files' fsyncs together, marked and
				// explained; the series has them apart from log syncs.
				_, logSyncs := costs["log_syncs_per_op"].(float64)
				marked := strings.Contains(stdout, "†\n") || strings.Contains(stdout, "† ")
				if marked == logSyncs || logSyncs == strings.Contains(stdout, report.FsyncsNote) {
					t.Errorf("%s: log syncs counted %v, but the console's syncs/s marked † %v:\n%s", mode, logSyncs, marked, stdout)
				}
				ivs, _ := raw["intervals"].([]any)
				fsyncs := false
				for _, iv := range ivs {
					p := iv.(map[string]any)
					if f, ok := p["fsyncs_per_sec"].(float64); ok && f > 0 && p["log_syncs_per_sec"] == nil {
						fsyncs = true
					}
				}
				if fsyncs == logSyncs {
					t.Errorf("%s: log syncs counted %v, intervals' fsyncs_per_sec in their place %v", mode, logSyncs, fsyncs)
				}
				if d := r.Target.Durability; d.Before != d.After {
					t.Fatalf("%s: setting %s was %q before and %q after the run", mode, d.Setting, d.Before, d.After)
				}
			}
			if syncsPerOp["full"] < 0.8 || syncsPerOp["full"] > 1.3 {
				t.Fatalf("full durability: %.3f syncs per commit, want about 1", syncsPerOp["full"])
			}
			if syncsPerOp["relaxed"] > 0.3 {
				t.Fatalf("relaxed durability: %.3f syncs per commit, want far fewer than 1", syncsPerOp["relaxed"])
			}
		})
	}
}

// TestPostgresCommitsPerRequest: at a low request rate ceiling's own
// sampling sessions (about 22 read-only transactions a second) would be
// half the server's commits; the commits counter leaves them out, so one
// insert per transaction costs about one commit.
func TestPostgresCommitsPerRequest(t *testing.T) {
	dsn := serverDSN(t, testenv.PostgresEnv)
	out := t.TempDir()
	code, stdout, stderr := runCLI(t, context.Background(), "run", "single-inserts", "--db", dsn, "-R", "40", "-T", "5s", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	var raw struct {
		Summary struct {
			Requests int64 `json:"requests"`
		} `json:"summary"`
		Costs struct {
			CommitsPerOp *float64 `json:"commits_per_op"`
		} `json:"costs"`
		Evidence struct {
			Counters map[string]float64 `json:"counters"`
		} `json:"evidence"`
	}
	readResultInto(t, out, &raw)
	c := raw.Evidence.Counters
	own, server := c["pg.ceiling_sampler_xacts"], c["pg.xact_commit"]
	if raw.Costs.CommitsPerOp == nil {
		t.Fatalf("commits per op not measured; counters %v", c)
	}
	t.Logf("%d requests: %.3f commits per request (server xact_commit %+.0f, ceiling's sampler transactions %+.0f)",
		raw.Summary.Requests, *raw.Costs.CommitsPerOp, server, own)
	if own < 50 {
		t.Errorf("ceiling's sampler transactions over 5 s: %v, want >= 50", own)
	}
	// 200 requests; the samplers' rounds are published up to about a
	// second late (±22): within ±0.15 of one.
	if v := *raw.Costs.CommitsPerOp; v < 0.85 || v > 1.15 {
		t.Errorf("commits per request %.3f, want about 1 (server xact_commit %+.0f, ceiling's own %+.0f)", v, server, own)
	}
}

// TestPostgresThroughPooler runs single inserts at relaxed durability
// through PgBouncer in session mode, whose default configuration refuses
// the synchronous_commit start-up parameter: the run works, says it goes
// through a pooler and waits for the pooled backends' statistics, and the
// server's figures are a direct run's (about one commit and no WAL sync
// per request: relaxed was in force). In transaction mode the run is
// refused with one line and exit code 1.
func TestPostgresThroughPooler(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: waits 10 s for the pooled backends' statistics")
	}
	dsn := serverDSN(t, testenv.PostgresEnv)
	out := t.TempDir()
	pooled := testenv.PgBouncer(t, dsn, "session")
	code, stdout, stderr := runCLI(t, context.Background(), "run", "single-inserts", "--db", pooled, "-c", "2", "--ops", "3000", "--durability", "relaxed", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	for _, want := range []string{"through a connection pooler (session mode)", "the run ends with a wait of about 10 s"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	var raw struct {
		Target struct {
			Pooler     string `json:"pooler"`
			Durability struct {
				During string `json:"during"`
				Note   string `json:"note"`
			} `json:"durability"`
		} `json:"target"`
		Costs struct {
			CommitsPerOp  *float64 `json:"commits_per_op"`
			LogSyncsPerOp *float64 `json:"log_syncs_per_op"`
		} `json:"costs"`
	}
	readResultInto(t, out, &raw)
	tg := raw.Target
	if tg.Pooler != "session" || tg.Durability.During != "off" || !strings.Contains(tg.Durability.Note, "set with SET on each session") {
		t.Errorf("target: pooler %q, durability during %q, note %q", tg.Pooler, tg.Durability.During, tg.Durability.Note)
	}
	c := raw.Costs
	if c.CommitsPerOp == nil || c.LogSyncsPerOp == nil {
		t.Fatalf("commits %s, log syncs %s per request: not measured", fmtPtr(c.CommitsPerOp), fmtPtr(c.LogSyncsPerOp))
	}
	t.Logf("through PgBouncer: %.3f commits, %.4f log syncs per request", *c.CommitsPerOp, *c.LogSyncsPerOp)
	if *c.CommitsPerOp < 0.9 || *c.CommitsPerOp > 1.1 || *c.LogSyncsPerOp > 0.05 {
		t.Errorf("%.3f commits and %.4f log syncs per request: want about 1 and about 0 (relaxed)", *c.CommitsPerOp, *c.LogSyncsPerOp)
	}

	code, stdout, stderr = runCLI(t, context.Background(), "run", "single-inserts", "--db", testenv.PgBouncer(t, dsn, "transaction"), "--ops", "100", "--out", t.TempDir())
	if code != 1 || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.Contains(stderr, "connection pooler in transaction or statement mode") {
		t.Errorf("transaction pooling: exit %d, stderr %q; want 1 and one line naming the pooler's mode\nstdout:\n%s", code, stderr, stdout)
	}
}

// TestMySQLDurabilityRestoredAfterInterrupt: innodb_flush_log_at_trx_commit
// is global, so an interrupted run must still put it back.
func TestMySQLDurabilityRestoredAfterInterrupt(t *testing.T) {
	dsn := serverDSN(t, testenv.MySQLEnv)
	db := openMySQL(t, dsn)
	read := func() string {
		var v string
		if err := db.QueryRow("SELECT @@GLOBAL.innodb_flush_log_at_trx_commit").Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	before := read()
	mode := "relaxed"
	if before == "2" {
		mode = "full"
	}
	ctx, cancel := context.WithCancel(context.Background())
	during := make(chan string, 1)
	go func() {
		time.Sleep(1200 * time.Millisecond)
		during <- read()
		cancel()
	}()
	out := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := runCLI(t, ctx, "run", "single-inserts", "--db", dsn, "-T", "60s", "--durability", mode, "--out", out)
	if code != ExitRun {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, ExitRun, stdout, stderr)
	}
	if d := <-during; d == before {
		t.Fatalf("setting during the run was %q, same as before: durability %s not applied", d, mode)
	}
	if after := read(); after != before {
		t.Fatalf("innodb_flush_log_at_trx_commit is %q after an interrupted run, was %q", after, before)
	}
	r, _ := readResult(t, out)
	if !r.Partial || r.Target.Durability.After != before {
		t.Fatalf("partial %v, recorded after %q, want true and %q", r.Partial, r.Target.Durability.After, before)
	}
}

// pgSession opens a plain PostgreSQL session on dsn for a test's own
// queries, closed when the test ends.
func pgSession(t *testing.T, dsn string) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	return c
}

// TestPostgresReconnect terminates the workers' sessions mid-run: the run
// must count the lost connections, reconnect and go on.
func TestPostgresReconnect(t *testing.T) {
	dsn := serverDSN(t, testenv.PostgresEnv)
	ctx := context.Background()
	admin := pgSession(t, dsn)
	killed := make(chan int64, 1)
	go func() {
		time.Sleep(1500 * time.Millisecond)
		var n int64
		_ = admin.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
			WHERE application_name = $1 AND datname = current_database()`, postgres.WorkerAppName).Scan(&n)
		killed <- n
	}()
	out := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := runCLI(t, ctx, "run", "inserts-deletes", "--db", dsn, "-c", "2", "-T", "4s", "--rows", "500", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if n := <-killed; n < 1 {
		t.Fatalf("terminated %d worker sessions; the test did not exercise a reconnect", n)
	}
	var raw map[string]any
	b, _ := os.ReadFile(mustGlob(t, out))
	if err := jsonUnmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	s := raw["summary"].(map[string]any)
	if rc := s["reconnects"].(float64); rc < 1 {
		t.Fatalf("reconnects = %v, want at least 1", rc)
	}
	byClass, _ := s["errors_by_class"].(map[string]any)
	if byClass["connection_lost"] == nil {
		t.Fatalf("errors_by_class = %v, want connection_lost counted", byClass)
	}
	// The run went on after the reconnect: requests completed in the last second.
	ivs := raw["intervals"].([]any)
	last := ivs[len(ivs)-2].(map[string]any)
	if last["requests"].(float64) == 0 {
		t.Fatalf("no requests in the interval before the end: the run did not go on")
	}
}

func openMySQL(t *testing.T, dsn string) *sql.DB {
	t.Helper()
	rest := strings.TrimPrefix(dsn, "mysql://")
	at := strings.LastIndex(rest, "@")
	user, hostdb := rest[:at], rest[at+1:]
	host, dbname, _ := strings.Cut(hostdb, "/")
	if i := strings.IndexByte(dbname, '?'); i >= 0 {
		dbname = dbname[:i]
	}
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, _ = strings.Cut(user, ":")
	cfg.Net, cfg.Addr, cfg.DBName = "tcp", host, dbname
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func mustGlob(t *testing.T, dir string) string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(m) != 1 {
		t.Fatalf("want one result in %s, got %v", dir, m)
	}
	return m[0]
}

// readResultInto reads the one result in dir into v, failing the test when
// it cannot.
func readResultInto(t *testing.T, dir string, v any) {
	t.Helper()
	b, err := os.ReadFile(mustGlob(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	if err := jsonUnmarshal(b, v); err != nil {
		t.Fatal(err)
	}
}

func fmtPtr(p *float64) string {
	if p == nil {
		return "null"
	}
	return strconv.FormatFloat(*p, 'f', 3, 64)
}

// TestPasswordNeverShown runs with a password in the DSN (PostgreSQL's trust
// authentication here ignores it) and checks that it appears nowhere: not
// on the console, not in errors, not in the result document.
func TestPasswordNeverShown(t *testing.T) {
	dsn := serverDSN(t, testenv.PostgresEnv)
	const secret = "Sup3rS3cretPw"
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(u.User.Username(), secret)
	out := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := runCLI(t, context.Background(), "run", "single-inserts", "--db", u.String(), "--ops", "50", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	b, err := os.ReadFile(mustGlob(t, out))
	if err != nil {
		t.Fatal(err)
	}
	for what, text := range map[string]string{"stdout": stdout, "stderr": stderr, "result": string(b)} {
		if strings.Contains(text, secret) {
			t.Fatalf("the password appears in %s", what)
		}
	}
	if !strings.Contains(string(b), "xxxxx") {
		t.Fatalf("the result's DSN does not show the redaction marker")
	}
	// An error path: a database that does not exist.
	u.Path = "/ceiling_no_such_db"
	code, stdout, stderr = runCLI(t, context.Background(), "run", "single-inserts", "--db", u.String(), "--ops", "1", "--out", out)
	if code != ExitRun || strings.Contains(stdout+stderr, secret) || !strings.Contains(stderr, "does not exist") {
		t.Fatalf("missing database: exit %d, stderr %q", code, stderr)
	}
}

// TestMySQLReconnect kills ceiling's sessions with KILL mid-run: the run
// counts the lost connections, reconnects and goes on.
func TestMySQLReconnect(t *testing.T) {
	dsn := serverDSN(t, testenv.MySQLEnv)
	db := openMySQL(t, dsn)
	killed := make(chan int, 1)
	go func() {
		time.Sleep(1500 * time.Millisecond)
		rows, err := db.Query(`SELECT id FROM information_schema.processlist
			WHERE user = 'root' AND db = DATABASE() AND id <> CONNECTION_ID() AND command <> 'Daemon'`)
		if err != nil {
			killed <- 0
			return
		}
		var ids []int64
		for rows.Next() {
			var id int64
			if rows.Scan(&id) == nil {
				ids = append(ids, id)
			}
		}
		rows.Close()
		n := 0
		for _, id := range ids {
			if _, err := db.Exec("KILL " + strconv.FormatInt(id, 10)); err == nil {
				n++
			}
		}
		killed <- n
	}()
	out := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := runCLI(t, context.Background(), "run", "inserts-deletes", "--db", dsn, "-c", "2", "-T", "4s", "--rows", "500", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if n := <-killed; n < 2 {
		t.Fatalf("killed %d sessions; the test did not exercise a reconnect", n)
	}
	var raw map[string]any
	b, _ := os.ReadFile(mustGlob(t, out))
	if err := jsonUnmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	s := raw["summary"].(map[string]any)
	if rc := s["reconnects"].(float64); rc < 1 {
		t.Fatalf("reconnects = %v, want at least 1 (errors %v)", rc, s["errors_by_class"])
	}
}

// TestConnectionLimit: more workers than the server admits fail on one
// line that names the server's refusal and its max_connections, and how
// many workers had connected before.
func TestConnectionLimit(t *testing.T) {
	dsn := serverDSN(t, testenv.PostgresEnv)
	ctx := context.Background()
	var maxConns int
	if err := pgSession(t, dsn).QueryRow(ctx, "SELECT current_setting('max_connections')::int").Scan(&maxConns); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI(t, ctx, "run", "single-inserts", "--db", dsn, "-c", strconv.Itoa(maxConns+5), "-T", "1s", "--no-probe", "--out", t.TempDir())
	line := strings.TrimSpace(stderr)
	if code != ExitRun || strings.Contains(line, "\n") || !strings.Contains(line, "53300") ||
		!strings.Contains(line, "may exceed the server's connection limit (max_connections = "+strconv.Itoa(maxConns)+")") ||
		!strings.Contains(line, "workers 0-") {
		t.Fatalf("-c %d: exit %d, %q", maxConns+5, code, line)
	}
}

// TestOneCeilingPerDatabase: while a run holds the database, a second
// run (and a cleanup) on it stops before touching anything, on one line
// naming the holder; the first run is not disturbed.
func TestOneCeilingPerDatabase(t *testing.T) {
	dsn := serverDSN(t, testenv.PostgresEnv)
	ctx := context.Background()
	admin := pgSession(t, dsn)
	type outcome struct {
		code           int
		stdout, stderr string
	}
	// The first run lasts 8 s: each refused command waits up to 2 s for
	// a lock that may be on its way out (target.RetryBusy).
	// The first run's lock is told from one a session of an earlier test
	// may still hold while its backend exits: by a session started after
	// this point (the server's clock).
	var since time.Time
	if err := admin.QueryRow(ctx, "SELECT clock_timestamp()").Scan(&since); err != nil {
		t.Fatal(err)
	}
	done := make(chan outcome, 1)
	go func() {
		code, out, errs := runCLI(t, ctx, "run", "inserts-deletes", "--db", dsn, "-T", "8s", "--rows", "200", "--no-probe", "--out", t.TempDir())
		done <- outcome{code, out, errs}
	}()
	held := false
	for deadline := time.Now().Add(20 * time.Second); !held && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if err := admin.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
			WHERE l.locktype = 'advisory' AND l.granted AND l.classid::bigint = $1 AND l.objid::bigint = $2 AND a.backend_start > $3)`,
			postgres.NamespaceLockKey>>32, postgres.NamespaceLockKey&0xffffffff, since).Scan(&held); err != nil {
			t.Fatal(err)
		}
	}
	if !held {
		t.Fatal("the first run never took the namespace lock")
	}
	for _, args := range [][]string{
		{"run", "inserts-deletes", "--db", dsn, "-T", "1s", "--no-probe", "--out", t.TempDir()},
		{"cleanup", "inserts-deletes", "--db", dsn},
	} {
		code, _, stderr := runCLI(t, ctx, args...)
		line := strings.TrimSpace(stderr)
		if code != ExitRun || strings.Contains(line, "\n") || !strings.Contains(line, "another ceiling is using this database (backend pid ") {
			t.Errorf("%s while a run holds the database: exit %d, %q", args[0], code, line)
		}
	}
	first := <-done
	if first.code != 0 || !strings.Contains(first.stdout, "== inserts-deletes") {
		t.Fatalf("the first run: exit %d\n%s\n%s", first.code, first.stdout, first.stderr)
	}
	if strings.Contains(first.stdout, "other work on the server") {
		t.Errorf("the first run saw other work: the second one touched the server\n%s", first.stdout)
	}
}

// watchWriter collects what is written to it and closes seen once the
// text holds want.
type watchWriter struct {
	mu   sync.Mutex
	b    strings.Builder
	want string
	seen chan struct{}
}

func (w *watchWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	had := strings.Contains(w.b.String(), w.want)
	w.b.Write(p)
	if !had && strings.Contains(w.b.String(), w.want) {
		close(w.seen)
	}
	return len(p), nil
}

func (w *watchWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// TestErrorsVerdictServers: a direct-selects run whose table is dropped by
// hand a second into its 3 s fails most of its requests from then on; its
// verdict is "errors", naming the share failed and the class, on each
// server.
// liveRun is a `ceiling run` going on in the background (startRun).
type liveRun struct {
	stdout *watchWriter
	stderr strings.Builder
	done   chan int
	out    string // its --out directory
}

// startRun starts `ceiling run WORKLOAD --db dsn args... --no-probe --out
// DIR` in the background and returns once its measured phase has begun,
// with an admin target on dsn for the test's own statements.
func startRun(t *testing.T, ctx context.Context, dsn, workload string, args ...string) (*liveRun, target.Target) {
	t.Helper()
	admin, err := engines.Open(ctx, target.Options{DSN: dsn, MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close(context.Background()) })
	lr := &liveRun{stdout: &watchWriter{want: "running " + workload, seen: make(chan struct{})}, done: make(chan int), out: filepath.Join(t.TempDir(), "out")}
	argv := append(append([]string{"run", workload, "--db", dsn}, args...), "--no-probe", "--out", lr.out)
	go func() { lr.done <- Run(ctx, argv, lr.stdout, &lr.stderr) }()
	select {
	case <-lr.stdout.seen:
	case code := <-lr.done:
		t.Fatalf("exit %d before the run started\n%s\n%s", code, lr.stdout, lr.stderr.String())
	}
	return lr, admin
}

// wait waits for the run to end with exit status 0 and returns its result.
func (lr *liveRun) wait(t *testing.T) result {
	t.Helper()
	if code := <-lr.done; code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, lr.stdout, lr.stderr.String())
	}
	r, _ := readResult(t, lr.out)
	return r
}

func TestErrorsVerdictServers(t *testing.T) {
	drops := map[string]string{"postgres": "DROP TABLE ceiling.rows", "mysql": "DROP TABLE ceiling_rows"}
	for _, ec := range engineCases {
		t.Run(ec.name, func(t *testing.T) {
			dsn := serverDSN(t, ec.env)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			lr, admin := startRun(t, ctx, dsn, "direct-selects", "-c", "2", "--rows", "100", "-T", "3s")
			time.Sleep(time.Second)
			conn, err := admin.Connect(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := conn.Exec(ctx, drops[ec.name]); err != nil {
				t.Fatalf("%s: %v", drops[ec.name], err)
			}
			conn.Close()
			r := lr.wait(t)
			stdout := lr.stdout
			v, _ := r.Verdict.(map[string]any)
			ev, _ := v["evidence"].([]any)
			if v["bottleneck"] != "errors" || len(ev) < 2 || !strings.Contains(ev[0].(string), "requests failed") || !strings.Contains(ev[1].(string), "other errors") {
				t.Fatalf("verdict %v, want errors naming the failures\n%s", v, stdout)
			}
			if r.Summary.Errors == 0 || r.Summary.Requests == 0 {
				t.Fatalf("%d requests, %d errors: want both", r.Summary.Requests, r.Summary.Errors)
			}
		})
	}
}

// TestStallVerdictServers: a lock taken outside the run on the table every
// request reads, held from a second into a 4 s run to past its end, leaves
// no request completing for most of the run: the verdict is "stall", the
// silent span is listed, and the requests still waiting at the end are
// counted apart (they are in no latency), not dropped unseen. Before,
// the run reported the first second's latencies and "none".
func TestStallVerdictServers(t *testing.T) {
	locks := map[string][2]string{
		"postgres": {"LOCK TABLE ceiling.rows IN ACCESS EXCLUSIVE MODE", ""},
		"mysql":    {"LOCK TABLES ceiling_rows WRITE", "UNLOCK TABLES"},
	}
	for _, ec := range engineCases {
		t.Run(ec.name, func(t *testing.T) {
			dsn := serverDSN(t, ec.env)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			lr, admin := startRun(t, ctx, dsn, "direct-selects", "-c", "2", "--rows", "100", "-T", "4s")
			conn, err := admin.Connect(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			time.Sleep(time.Second)
			lock, unlock := locks[ec.name][0], locks[ec.name][1]
			if unlock == "" { // PostgreSQL: the lock lasts as long as its transaction
				if err := conn.Begin(ctx); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := conn.Exec(ctx, lock); err != nil {
				t.Fatalf("%s: %v", lock, err)
			}
			time.Sleep(3500 * time.Millisecond) // to past the run's end
			if unlock == "" {
				err = conn.Commit(ctx)
			} else {
				_, err = conn.Exec(ctx, unlock)
			}
			if err != nil {
				t.Fatal(err)
			}
			r := lr.wait(t)
			stdout := lr.stdout
			v, _ := r.Verdict.(map[string]any)
			ev, _ := v["evidence"].([]any)
			if v["bottleneck"] != "stall" || len(ev) < 2 || !strings.Contains(ev[0].(string), "no request completed for") ||
				!strings.Contains(ev[1].(string), "2 requests were still waiting for the database when the run ended") {
				t.Fatalf("verdict %v, want stall naming the silent span and the requests left waiting\n%s", v, stdout)
			}
			in := r.Summary.InFlightAtEnd
			if len(r.Summary.Stalls) == 0 || in.Requests != 2 || in.OldestMs < 1000 {
				t.Fatalf("stalls %v, in flight at the end %+v: want a stall and both workers' requests waiting over a second", r.Summary.Stalls, in)
			}
			if r.Summary.Requests == 0 || r.Summary.ElapsedS > 4.5 {
				t.Fatalf("%d requests over %.1f s: want the first second's requests, and the measured phase to end at -T", r.Summary.Requests, r.Summary.ElapsedS)
			}
		})
	}
}

// TestNetworkVerdict: a server reached through a forwarder on this host's
// own address that delays each way by 3 ms (a network's round trip) is
// probed before the run, and a run of one connection whose requests are
// mostly that round trip is called network-bound.
func TestNetworkVerdict(t *testing.T) {
	ports := map[string]string{"postgres": "5432", "mysql": "3306"}
	for _, ec := range engineCases {
		t.Run(ec.name, func(t *testing.T) {
			dsn := testenv.Remote(t, serverDSN(t, ec.env), ports[ec.name], 3*time.Millisecond)
			out := filepath.Join(t.TempDir(), "out")
			code, stdout, stderr := runCLI(t, context.Background(), "run", "single-inserts", "--db", dsn, "-c", "1", "-T", "2s", "--durability", "relaxed", "--out", out)
			if code != 0 {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			if !strings.Contains(stdout, "round trip to the server (") {
				t.Errorf("no round-trip probe line:\n%s", stdout)
			}
			var raw struct {
				Network *struct {
					RoundTripMs struct{ P50 float64 } `json:"round_trip_ms"`
					N           int
				}
				Verdict struct {
					Bottleneck  string
					Evidence    []string
					Suggestions []struct{ Action string }
				}
				Summary struct {
					RoundTripsPerRequest *float64 `json:"round_trips_per_request"`
				}
			}
			readResultInto(t, out, &raw)
			if raw.Network == nil || raw.Network.N < 10 || raw.Network.RoundTripMs.P50 < 6 {
				t.Fatalf("network %+v, want at least 10 round trips of at least 6 ms", raw.Network)
			}
			// One statement per single insert, its first use prepared.
			if rt := raw.Summary.RoundTripsPerRequest; rt == nil || *rt < 1 || *rt > 1.05 {
				t.Errorf("round trips per request %v, want about 1", fmtPtr(rt))
			}
			if raw.Verdict.Bottleneck != "network" || len(raw.Verdict.Suggestions) == 0 || !strings.Contains(raw.Verdict.Suggestions[0].Action, "2 threads (-c 2)") {
				t.Errorf("verdict %q %v %+v, want network, with 2 threads suggested first", raw.Verdict.Bottleneck, raw.Verdict.Evidence, raw.Verdict.Suggestions)
			}
			// --no-probe: no round trip, so no network verdict.
			out = filepath.Join(t.TempDir(), "noprobe")
			if code, stdout, stderr := runCLI(t, context.Background(), "run", "single-inserts", "--db", dsn, "-c", "1", "--ops", "50", "--durability", "relaxed", "--no-probe", "--out", out); code != 0 {
				t.Fatalf("--no-probe: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			raw.Network = nil
			readResultInto(t, out, &raw)
			if raw.Network != nil || raw.Verdict.Bottleneck == "network" {
				t.Errorf("--no-probe: network %+v, verdict %q; want no probe and no network verdict", raw.Network, raw.Verdict.Bottleneck)
			}
			// knee probes the round trip as run does, and --no-probe skips it.
			for _, noProbe := range []bool{false, true} {
				out = filepath.Join(t.TempDir(), "knee")
				args := []string{"knee", "single-inserts", "--db", dsn, "--slo", "p99<1s", "--start", "20", "--max", "20", "--step-duration", "1s", "--durability", "relaxed", "--out", out}
				if noProbe {
					args = append(args, "--no-probe")
				}
				code, stdout, stderr := runCLI(t, context.Background(), args...)
				if code != 0 {
					t.Fatalf("knee (--no-probe %v): exit %d\nstdout:\n%s\nstderr:\n%s", noProbe, code, stdout, stderr)
				}
				raw.Network = nil
				readResultInto(t, out, &raw)
				probed := strings.Contains(stdout, "round trip to the server (")
				if probed == noProbe || (raw.Network != nil) == noProbe {
					t.Errorf("knee --no-probe %v: probe line %v, network %+v\n%s", noProbe, probed, raw.Network, stdout)
				}
			}
		})
	}
}
