package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-db/ceiling/internal/testenv"
)

// readOnlyCase is a command on a server that takes no writes, and what
// ceiling must say: exit 1 and one line holding want.
type readOnlyCase struct {
	args []string
	want string
}

// checkReadOnly runs the read workload direct-selects on dsn, a server
// that takes no writes (why: the reason ceiling must name) with its
// tables prepared there through another way in, and each refusal.
func checkReadOnly(t *testing.T, dsn, why string) {
	t.Helper()
	out := t.TempDir()
	code, stdout, stderr := runCLI(t, context.Background(), "run", "direct-selects", "--reuse", "--db", dsn, "-c", "2", "-T", "2s", "--warmup", "0", "--out", out)
	if code != 0 {
		t.Fatalf("run direct-selects --reuse on the read-only server: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	_, line, _ := strings.Cut(stdout, "   target ")
	line, _, _ = strings.Cut(line, "\n")
	if _, said, ok := strings.Cut(line, ", read-only server ("); !ok || !strings.Contains(said, why) {
		t.Errorf("the summary's target line does not say the server is read-only (%s):\n%s", why, stdout)
	}
	var raw struct {
		Target struct {
			ReadOnly string `json:"read_only"`
		} `json:"target"`
		Summary struct {
			Requests int64 `json:"requests"`
			Errors   int64 `json:"errors"`
		} `json:"summary"`
	}
	readResultInto(t, out, &raw)
	if !strings.Contains(raw.Target.ReadOnly, why) || raw.Summary.Requests == 0 || raw.Summary.Errors != 0 {
		t.Errorf("result: target.read_only %q (want %q in it), %d requests, %d errors", raw.Target.ReadOnly, why, raw.Summary.Requests, raw.Summary.Errors)
	}

	for _, c := range []readOnlyCase{
		{[]string{"prepare", "direct-selects"}, "prepare direct-selects on the primary"},
		{[]string{"run", "direct-selects", "-T", "1s"}, "so the tables of direct-selects cannot be loaded there"},
		{[]string{"run", "inserts-deletes", "-T", "1s"}, "inserts-deletes changes rows"},
		{[]string{"run", "direct-selects", "--reuse", "-T", "1s", "--durability", "relaxed"}, "--durability relaxed has nothing to change"},
		{[]string{"run", "direct-selects", "--reuse", "-T", "1s", "-c", "2", "--shard", "0/2"}, "the shards meet in a table there"},
		{[]string{"cleanup", "direct-selects"}, "clean up on the primary"},
		{[]string{"cleanup", "all"}, "clean up on the primary"},
	} {
		args := append(append([]string{}, c.args...), "--db", dsn)
		if c.args[0] == "run" {
			args = append(args, "--out", t.TempDir())
		}
		code, stdout, stderr := runCLI(t, context.Background(), args...)
		if code != 1 || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.Contains(stderr, c.want) || !strings.Contains(stderr, why) {
			t.Errorf("%s: exit %d, stderr %q; want 1 and one line with %q and %q\nstdout:\n%s", strings.Join(c.args, " "), code, stderr, c.want, why, stdout)
		}
	}
}

// TestPostgresStandby: on a hot standby ceiling runs a read workload on
// the tables prepared on the primary, says the server is read-only, and
// refuses in one line what would write there.
func TestPostgresStandby(t *testing.T) {
	serverDSN(t, testenv.PostgresEnv)
	primary, standby := testenv.PgStandby(t)
	if code, stdout, stderr := runCLI(t, context.Background(), "prepare", "direct-selects", "--db", primary); code != 0 {
		t.Fatalf("prepare on the primary: exit %d\n%s\n%s", code, stdout, stderr)
	}
	checkReadOnly(t, standby, "a hot standby")
	// --reuse with other --rows than the primary's tables: prepared there.
	code, _, stderr := runCLI(t, context.Background(), "run", "direct-selects", "--reuse", "--rows", "500", "--db", standby, "-T", "1s", "--out", t.TempDir())
	if code != 1 || !strings.Contains(stderr, "--db PRIMARY` on the primary") || !strings.Contains(stderr, "give the --rows and --tables the primary's tables were prepared with") {
		t.Errorf("--reuse with other --rows on the standby: exit %d, %q", code, stderr)
	}

	// Queries the primary's replayed clean-ups conflict with: with
	// max_standby_streaming_delay 0 the standby cancels them at once, and
	// the verdict says whose work that is.
	std := pgSession(t, standby)
	ctx := context.Background()
	for _, q := range []string{"ALTER SYSTEM SET max_standby_streaming_delay = 0", "SELECT pg_reload_conf()"} {
		if _, err := std.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	prim := pgSession(t, primary)
	for _, q := range []string{"CREATE TABLE churn (id int PRIMARY KEY, v int)", "INSERT INTO churn SELECT g, 0 FROM generate_series(1, 1000) g"} {
		if _, err := prim.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if code, stdout, stderr := runCLI(t, ctx, "prepare", "sequential-selects", "--rows", "20000", "--db", primary); code != 0 {
		t.Fatalf("prepare sequential-selects on the primary: exit %d\n%s\n%s", code, stdout, stderr)
	}
	churnCtx, stop := context.WithCancel(ctx)
	churned := make(chan error, 1)
	go func() {
		var err error
		for churnCtx.Err() == nil && err == nil {
			if _, err = prim.Exec(churnCtx, "UPDATE churn SET v = v + 1"); err == nil {
				_, err = prim.Exec(churnCtx, "VACUUM churn")
			}
		}
		if churnCtx.Err() != nil {
			err = nil
		}
		churned <- err
	}()
	out := t.TempDir()
	code, stdout, stderr := runCLI(t, ctx, "run", "sequential-selects", "--reuse", "--rows", "20000", "--db", standby, "-c", "2", "-T", "3s", "--warmup", "0", "--out", out)
	stop()
	if err := <-churned; err != nil {
		t.Fatalf("the primary's updates: %v", err)
	}
	if code != 0 {
		t.Fatalf("run on the standby beside the primary's updates: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "hot standby: replayed ") {
		t.Errorf("the summary does not say how much of the primary's WAL the standby replayed during the run:\n%s", stdout)
	}
	var raw struct {
		Evidence struct {
			PerSec map[string]float64 `json:"per_sec"`
		} `json:"evidence"`
		Summary struct {
			ErrorsByClass map[string]int64 `json:"errors_by_class"`
		} `json:"summary"`
		Verdict struct {
			Bottleneck  string `json:"bottleneck"`
			Suggestions []struct {
				Action string `json:"action"`
			} `json:"suggestions"`
		} `json:"verdict"`
	}
	readResultInto(t, out, &raw)
	t.Logf("errors by class beside the primary's updates: %v", raw.Summary.ErrorsByClass)
	if raw.Evidence.PerSec["replay_bytes"] <= 0 {
		t.Errorf("replay_bytes per second %v beside the primary's updates, want > 0", raw.Evidence.PerSec["replay_bytes"])
	}
	if raw.Summary.ErrorsByClass["recovery_conflict"] == 0 || raw.Summary.ErrorsByClass["serialization"] != 0 {
		t.Errorf("errors by class %v: want the cancelled scans as recovery_conflict, none as serialization", raw.Summary.ErrorsByClass)
	}
	if v := raw.Verdict; v.Bottleneck == "errors" && (len(v.Suggestions) == 0 || !strings.Contains(v.Suggestions[0].Action, "hot_standby_feedback")) {
		t.Errorf("errors verdict without the standby's remedies: %+v", v.Suggestions)
	}
	// The primary was left alone by all that: its tables are there.
	if code, stdout, stderr := runCLI(t, context.Background(), "cleanup", "direct-selects", "--db", primary); code != 0 || !strings.Contains(stdout, "dropped ceiling.rows") {
		t.Errorf("cleanup on the primary: exit %d\n%s\n%s", code, stdout, stderr)
	}
}

// TestPostgresReadOnlySessions: default_transaction_read_only (here from
// the DSN; a role's or database's setting alike) makes ceiling's sessions
// read-only on a primary.
func TestPostgresReadOnlySessions(t *testing.T) {
	dsn := serverDSN(t, testenv.PostgresEnv)
	if code, stdout, stderr := runCLI(t, context.Background(), "prepare", "direct-selects", "--db", dsn); code != 0 {
		t.Fatalf("prepare: exit %d\n%s\n%s", code, stdout, stderr)
	}
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	checkReadOnly(t, dsn+sep+"default_transaction_read_only=on", "default_transaction_read_only is on")
}

// TestMySQLReadOnly: a MySQL/MariaDB server with read_only ON is taken
// for a replica, though root could write there; its setting is left
// alone.
func TestMySQLReadOnly(t *testing.T) {
	dsn := serverDSN(t, testenv.MySQLEnv)
	if code, stdout, stderr := runCLI(t, context.Background(), "prepare", "direct-selects", "--db", dsn); code != 0 {
		t.Fatalf("prepare: exit %d\n%s\n%s", code, stdout, stderr)
	}
	db := openMySQL(t, dsn)
	var flush string
	if err := db.QueryRow("SELECT @@GLOBAL.innodb_flush_log_at_trx_commit").Scan(&flush); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("SET GLOBAL read_only = ON"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Before serverDSN's cleanup drops the tables, and before db
		// closes (cleanups run last registered first).
		if _, err := db.Exec("SET GLOBAL read_only = OFF"); err != nil {
			t.Errorf("put read_only back: %v", err)
		}
	})
	checkReadOnly(t, dsn, "read_only is ON")
	var after string
	if err := db.QueryRow("SELECT @@GLOBAL.innodb_flush_log_at_trx_commit").Scan(&after); err != nil {
		t.Fatal(err)
	}
	if after != flush {
		t.Errorf("innodb_flush_log_at_trx_commit %s after the read-only runs, was %s", after, flush)
	}
}

// verdictResult is what the replication tests read of a result.
type verdictResult struct {
	Verdict struct {
		Bottleneck  string   `json:"bottleneck"`
		Evidence    []string `json:"evidence"`
		Suggestions []struct {
			Action string `json:"action"`
		} `json:"suggestions"`
	} `json:"verdict"`
	Evidence struct {
		Counters map[string]float64 `json:"counters"`
	} `json:"evidence"`
}

// singleInsert runs single inserts on dsn with one worker for 3 s and
// returns the result.
func singleInsert(t *testing.T, dsn string) verdictResult {
	t.Helper()
	out := t.TempDir()
	code, stdout, stderr := runCLI(t, context.Background(), "run", "single-inserts", "--db", dsn, "-c", "1", "-T", "3s", "--warmup", "1s", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	var raw verdictResult
	readResultInto(t, out, &raw)
	return raw
}

// TestPostgresSyncStandby: on a primary whose commits wait for a
// synchronous standby (PgStandby's: remote_apply), the sessions' waits
// for it are their own category and the verdict names them.
func TestPostgresSyncStandby(t *testing.T) {
	serverDSN(t, testenv.PostgresEnv)
	primary, _ := testenv.PgStandby(t)
	raw := singleInsert(t, primary)
	c := raw.Evidence.Counters
	t.Logf("waits: replication %.0f ms, log %.0f ms, client %.0f ms", c["wait_replication_ms"], c["wait_log_io_ms"], c["wait_client_ms"])
	if c["wait_replication_ms"] <= c["wait_log_io_ms"] || c["wait_event_ms:IPC:SyncRep"] == 0 {
		t.Errorf("the commits' waits for the standby (%v ms) are not counted as replication, above the local flushes (%v ms)", c["wait_replication_ms"], c["wait_log_io_ms"])
	}
	ev := strings.Join(raw.Verdict.Evidence, "|")
	if raw.Verdict.Bottleneck != "replication" || !strings.Contains(ev, "synchronous_standby_names = '*'") || !strings.Contains(ev, "remote_apply") {
		t.Errorf("verdict %s: %s", raw.Verdict.Bottleneck, ev)
	}
}

// TestMySQLSemiSync: on a MariaDB primary whose commits wait for a
// semi-synchronous replica a network's round trip away (1 ms each way),
// the waits are counted from the server's own total and the verdict
// names them; with performance_schema on they are a wait category taken
// out of the statements' untimed rest, without it a share of the workers'
// time.
func TestMySQLSemiSync(t *testing.T) {
	serverDSN(t, testenv.MySQLEnv)
	for _, ps := range []string{"OFF", "ON"} {
		t.Run("performance_schema="+ps, func(t *testing.T) {
			primary, _ := testenv.MariaDBReplica(t, time.Millisecond, "--performance-schema="+ps)
			raw := singleInsert(t, primary)
			c := raw.Evidence.Counters
			t.Logf("semi-sync waits %.0f ms (as a wait category %.0f ms) in 3 s", c["repl_wait_ms"], c["wait_replication_ms"])
			if c["repl_wait_ms"] < 1000 {
				t.Errorf("the commits waited %.0f ms in all for the replica, want most of the 3 s", c["repl_wait_ms"])
			}
			if _, ok := c["wait_replication_ms"]; ok != (ps == "ON") {
				t.Errorf("wait category replication present %v with performance_schema %s", ok, ps)
			}
			v := raw.Verdict
			if v.Bottleneck != "replication" || !strings.Contains(strings.Join(v.Evidence, "|"), "a semi-synchronous replica (rpl_semi_sync_master_enabled") ||
				len(v.Suggestions) == 0 || !strings.Contains(v.Suggestions[0].Action, "asynchronous replication") {
				t.Errorf("verdict %s: %q %+v", v.Bottleneck, v.Evidence, v.Suggestions)
			}
		})
	}
}

// TestMySQLReplicaReads: on a MariaDB replica (read_only, replicating from
// its primary) a read workload runs on the tables prepared on the primary,
// and the summary says how much of the primary's binary log the replica
// applied beside it, while the primary takes writes.
func TestMySQLReplicaReads(t *testing.T) {
	serverDSN(t, testenv.MySQLEnv)
	primary, replica := testenv.MariaDBReplica(t, 0)
	ctx := context.Background()
	if code, stdout, stderr := runCLI(t, ctx, "prepare", "direct-selects", "--db", primary); code != 0 {
		t.Fatalf("prepare on the primary: exit %d\n%s\n%s", code, stdout, stderr)
	}
	db := openMySQL(t, primary)
	if _, err := db.Exec("CREATE TABLE churn (id int PRIMARY KEY, v int)"); err != nil {
		t.Fatal(err)
	}
	// The replica acknowledges what it received; it applies it after.
	rdb := openMySQL(t, replica)
	for deadline := time.Now().Add(30 * time.Second); ; {
		var n int
		err := rdb.QueryRow("SELECT count(*) FROM ceiling_rows").Scan(&n)
		if err == nil && n == 10000 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the replica has %d rows of ceiling_rows after 30 s (%v)", n, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	churnCtx, stop := context.WithCancel(ctx)
	churned := make(chan error, 1)
	go func() {
		var err error
		for i := 0; churnCtx.Err() == nil && err == nil; i++ {
			_, err = db.ExecContext(churnCtx, "INSERT INTO churn VALUES (?, 0)", i)
		}
		if churnCtx.Err() != nil {
			err = nil
		}
		churned <- err
	}()
	out := t.TempDir()
	code, stdout, stderr := runCLI(t, ctx, "run", "direct-selects", "--reuse", "--db", replica, "-c", "2", "-T", "2s", "--warmup", "0", "--out", out)
	stop()
	if err := <-churned; err != nil {
		t.Fatalf("the primary's inserts: %v", err)
	}
	if code != 0 {
		t.Fatalf("run on the replica: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if _, line, ok := strings.Cut(stdout, "replica: applied "); ok {
		line, _, _ = strings.Cut(line, ";")
		t.Logf("replica: applied %s", line)
	}
	for _, want := range []string{"read-only server (read_only is ON", "replica: applied "} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the summary lacks %q:\n%s", want, stdout)
		}
	}
	var raw struct {
		Evidence struct {
			PerSec map[string]float64 `json:"per_sec"`
		} `json:"evidence"`
	}
	readResultInto(t, out, &raw)
	if raw.Evidence.PerSec["replay_bytes"] <= 0 {
		t.Errorf("replay_bytes per second %v while the primary took inserts, want > 0", raw.Evidence.PerSec["replay_bytes"])
	}
}
