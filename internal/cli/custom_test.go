package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ceiling-db/ceiling/internal/testenv"
)

// TestCustomRun: `ceiling run custom --file F` runs a user's file like a
// built-in workload (per-request operations named after the file's
// requests, the file named in the result, MB/min not measured), one
// request needs no --isolate, and cleanup without --file drops every
// custom table ceiling made (here: the file goes with them).
func TestCustomRun(t *testing.T) {
	dir := t.TempDir()
	db := "sqlite:" + filepath.Join(dir, "c.db")
	file := filepath.Join(dir, "kv.yaml")
	spec := `description: key-value puts and gets
tables:
  - name: kv
    rows: 500
    columns:
      - {name: k, type: integer primary key, load: seq}
      - {name: v, type: text, load: text 5 20}
requests:
  - name: get
    weight: 3
    sql: SELECT v FROM {kv} WHERE k = ?
    args: [row kv]
  - name: put
    sql: UPDATE {kv} SET v = ? WHERE k = ?
    args: [text 5 20, row kv]
`
	if err := os.WriteFile(file, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "res")
	code, stdout, stderr := runCLI(t, context.Background(), "run", "custom", "--file", file, "--db", db, "--ops", "400", "-c", "2", "--no-probe", "--isolate", "0", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	r, path := readResult(t, out)
	if r.Workload.Name != "custom" || r.Workload.Params["file"] != file || r.Workload.Params["sha256"] == nil {
		t.Fatalf("workload %q, params %v: want custom with the file and its sum", r.Workload.Name, r.Workload.Params)
	}
	if def := readJSONMap(t, path)["workload"].(map[string]any)["definition"]; def != spec {
		t.Fatalf("workload.definition %q, want the file's text", def)
	}
	get, put := r.Summary.ByOp["get"], r.Summary.ByOp["put"]
	if r.Summary.Requests != 400 || get.Requests+put.Requests != 400 || get.Requests <= put.Requests {
		t.Fatalf("requests %d: get %d, put %d (weights 3:1)", r.Summary.Requests, get.Requests, put.Requests)
	}
	if get.Rows != get.Requests || put.Rows != put.Requests || r.Summary.Errors != 0 {
		t.Fatalf("every get returns its row and every put changes one: get %d rows in %d, put %d rows in %d, %d errors", get.Rows, get.Requests, put.Rows, put.Requests, r.Summary.Errors)
	}
	if !strings.Contains(stdout, "MB/min") || r.Summary.MBPerMin != 0 {
		t.Fatalf("MB/min must be n/a (not measured): %v", r.Summary.MBPerMin)
	}

	// One request: the run is that request alone, nothing to isolate.
	one := filepath.Join(dir, "one.yaml")
	if err := os.WriteFile(one, []byte(strings.SplitN(spec, "  - name: put", 2)[0]), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = runCLI(t, context.Background(), "run", "custom", "--file", one, "--db", db, "--ops", "50", "--no-probe", "--out", out)
	if code != 0 || strings.Contains(stdout, "alone") {
		t.Fatalf("one request: exit %d, and no operation runs alone\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}

	code, _, stderr = runCLI(t, context.Background(), "run", "custom", "--db", db)
	if code != 2 || !strings.Contains(stderr, "custom needs --file") {
		t.Fatalf("without --file: exit %d, %q", code, stderr)
	}
	code, stdout, stderr = runCLI(t, context.Background(), "cleanup", "custom", "--db", db)
	if code != 0 || !strings.Contains(stdout, "dropped ceiling_u_kv") {
		t.Fatalf("cleanup: exit %d\n%s%s", code, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "c.db")); !os.IsNotExist(err) {
		t.Fatalf("cleanup left the database ceiling created: %v", err)
	}
}

// TestCustomDeadlocks: transfers between a few rows, each transaction
// updating two random rows in random order, deadlock on the servers: the
// errors are classified as serialization and the run goes on; on
// PostgreSQL, whose sessions then wait deadlock_timeout before the server
// looks, the verdict says so, with the lock-order advice (also when the
// sessions, all waiting on each other, completed nothing for a while).
func TestCustomDeadlocks(t *testing.T) {
	engs := map[string]string{
		"postgres": testenv.Optional(t, testenv.PostgresEnv),
		"mysql":    testenv.Optional(t, testenv.MySQLEnv),
	}
	file := filepath.Join(t.TempDir(), "bank.yaml")
	spec := `tables:
  - name: accounts
    rows: 4
    columns:
      - {name: id, type: int primary key, load: seq}
      - {name: balance, type: bigint not null, load: int 1000 2000}
requests:
  - name: transfer
    transaction:
      - sql: UPDATE {accounts} SET balance = balance - 1 WHERE id = ?
        args: [row accounts]
      - sql: UPDATE {accounts} SET balance = balance + 1 WHERE id = ?
        args: [row accounts]
`
	if err := os.WriteFile(file, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, dsn := range engs {
		if dsn == "" {
			continue
		}
		t.Run(name, func(t *testing.T) {
			out := t.TempDir()
			defer runCLI(t, context.Background(), "cleanup", "custom", "--file", file, "--db", dsn)
			code, stdout, stderr := runCLI(t, context.Background(), "run", "custom", "--file", file, "--db", dsn, "-c", "4", "-T", "3s", "--no-probe", "--out", out)
			if code != 0 {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			r := readJSONMap(t, firstResult(t, out))
			sum := r["summary"].(map[string]any)
			classes, _ := sum["errors_by_class"].(map[string]any)
			first, _ := sum["first_errors"].(map[string]any)
			if n, _ := classes["serialization"].(float64); n < 1 || !strings.Contains(strings.ToLower(fmt.Sprint(first["serialization"])), "deadlock") {
				t.Fatalf("errors by class %v, first %v: want deadlocks as serialization errors\n%s", classes, first, stdout)
			}
			if req, _ := sum["requests"].(float64); req < 4 {
				t.Fatalf("%v requests completed: the run must go on past its deadlocks", req)
			}
			if name != "postgres" {
				return
			}
			v := r["verdict"].(map[string]any)
			ev := fmt.Sprint(v["evidence"], v["suggestions"])
			// Contention, or errors when more than a tenth of the
			// transfers deadlocked: either way the deadlocks are named.
			if b := v["bottleneck"]; (b != "contention" && b != "errors") || !strings.Contains(ev, "deadlock_timeout (1s)") || !strings.Contains(ev, "locking the rows in one order") {
				t.Fatalf("verdict %v: %s", v["bottleneck"], ev)
			}
		})
	}
}

// TestCustomThink: a file's think times pace a closed loop's workers
// (outside the latencies): with 50 ms after each get and 100 ms after each
// put, 2 workers cannot pass 40 requests/s whatever the machine; the
// result holds the share of the workers' time in them and the verdict says
// they set the pace. An open loop (--rate) or a knee search is refused.
func TestCustomThink(t *testing.T) {
	dir := t.TempDir()
	db := "sqlite:" + filepath.Join(dir, "t.db")
	file := filepath.Join(dir, "think.yaml")
	spec := `description: users that pause
think: 50ms
tables:
  - name: kv
    rows: 200
    columns:
      - {name: k, type: integer primary key, load: seq}
      - {name: v, type: int, load: int 1 9}
requests:
  - name: get
    weight: 3
    sql: SELECT v FROM {kv} WHERE k = ?
    args: [row kv]
  - name: put
    think: exp 100ms
    sql: UPDATE {kv} SET v = ? WHERE k = ?
    args: [int 1 9, row kv]
`
	if err := os.WriteFile(file, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "res")
	code, stdout, stderr := runCLI(t, context.Background(), "run", "custom", "--file", file, "--db", db, "-T", "2s", "-c", "2", "--no-probe", "--isolate", "0", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	_, path := readResult(t, out)
	doc := readJSONMap(t, path)
	sum := doc["summary"].(map[string]any)
	if rps := sum["requests_per_sec"].(float64); rps <= 0 || rps > 40 {
		t.Errorf("%.1f requests/s: 2 workers pausing 50-100 ms after each request stay under 40", rps)
	}
	share, ok := doc["client"].(map[string]any)["think_share"].(float64)
	if !ok || share < 0.5 || share > 1 {
		t.Errorf("client.think_share %v: the workers paused most of their time", doc["client"].(map[string]any)["think_share"])
	}
	if !strings.Contains(stdout, "think times: the workers spent") {
		t.Errorf("the console does not say how long the workers paused:\n%s", stdout)
	}
	v := doc["verdict"].(map[string]any)
	if ev := fmt.Sprint(v["evidence"]); v["bottleneck"] != "none" || !strings.Contains(ev, "the workload's think times set the pace") {
		t.Errorf("verdict %v: %s; want none, paced by the think times", v["bottleneck"], ev)
	}
	// A thread ramp (1, 2, 4 workers): the share is over each step's own
	// workers (over 4 workers in every step it would be under 7/12).
	slow := strings.Replace(spec, "think: 50ms", "think: 200ms", 1)
	slow = strings.Replace(slow, "think: exp 100ms", "think: 200ms", 1)
	if err := os.WriteFile(file, []byte(slow), 0o644); err != nil {
		t.Fatal(err)
	}
	ramp := filepath.Join(dir, "ramp")
	code, stdout, stderr = runCLI(t, context.Background(), "run", "custom", "--file", file, "--db", db, "--threads-ramp", "1:4:x2", "--step", "1s", "--no-probe", "--out", ramp)
	if code != 0 {
		t.Fatalf("thread ramp: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	_, path = readResult(t, ramp)
	if share, ok := readJSONMap(t, path)["client"].(map[string]any)["think_share"].(float64); !ok || share < 0.9 {
		t.Errorf("thread ramp: client.think_share %v, want ≥ 0.9 (200 ms pauses around sub-ms requests)", share)
	}
	for _, args := range [][]string{{"run", "custom", "-R", "10", "-T", "2s"}, {"knee", "custom", "--slo", "p99<10ms"}} {
		code, _, stderr := runCLI(t, context.Background(), append(args, "--file", file, "--db", db, "--no-probe", "--out", out)...)
		if code != 2 || !strings.Contains(stderr, "the file's think times (think:) apply to the closed loop") {
			t.Errorf("%v: exit %d, %q; want 2 and the think times named", args, code, stderr)
		}
	}
}

// firstResult is the path of the one result in dir.
func firstResult(t *testing.T, dir string) string {
	t.Helper()
	_, path := readResult(t, dir)
	return path
}

// TestPhaseFlags: a workload flag of one phase given to another command
// is a usage error naming it, before any database is opened; the phase's
// own commands take it.
func TestPhaseFlags(t *testing.T) {
	dir := t.TempDir()
	db := "sqlite:" + filepath.Join(dir, "p.db")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"prepare", "tpcc", "--procedures"}, "--procedures applies to run and knee only (prepare does nothing with it)"},
		{[]string{"cleanup", "tpcc", "--keying-thinking"}, "--keying-thinking applies to run and knee only (cleanup does nothing with it)"},
		{[]string{"run", "tpcc", "--force", "--load-threads", "2"}, "--force applies to prepare only (run does nothing with it); --load-threads applies to prepare only"},
		{[]string{"knee", "tpcc", "--slo", "p99<1s", "--force"}, "--force applies to prepare only (knee does nothing with it)"},
		{[]string{"prepare", "custom", "--file", example(t), "--reuse"}, "--reuse applies to run and knee only"},
	} {
		code, _, stderr := runCLI(t, context.Background(), append(c.args, "--db", db)...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", c.args, code, stderr, c.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "p.db")); !os.IsNotExist(err) {
		t.Fatalf("a refused command created the database: %v", err)
	}
	if code, out, stderr := runCLI(t, context.Background(), "run", "custom", "--file", example(t), "--reuse", "--db", db, "--ops", "10", "--no-probe", "--out", dir); code != 1 || !strings.Contains(stderr, "--reuse: no ceiling table") {
		t.Fatalf("run custom --reuse takes the flag (and finds no tables): exit %d\n%s%s", code, out, stderr)
	}
}

// example is the path of the shipped custom workload file.
func example(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs("../../examples/custom/orders.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestFileCompletion: shells complete --file of run, knee, prepare and
// cleanup custom with YAML files (cobra's hidden __complete command).
func TestFileCompletion(t *testing.T) {
	for _, cmd := range []string{"run", "knee", "prepare", "cleanup"} {
		code, out, _ := runCLI(t, context.Background(), "__complete", cmd, "custom", "--file", "")
		if code != 0 || !strings.Contains(out, "yaml\nyml\n:8") {
			t.Errorf("%s custom --file completion: exit %d, %q", cmd, code, out)
		}
	}
}

// TestValueCompletion: shells complete the values of --durability,
// --arrival, --profile and --emulate (the shipped profiles; files too).
func TestValueCompletion(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "single-inserts", "--durability", ""}, "relaxed\tcommits do not wait for the flush\n"},
		{[]string{"knee", "updates", "--durability", ""}, "full\t"},
		{[]string{"run", "mixed", "--arrival", ""}, "poisson\t"},
		{[]string{"predict", "r.json", "--profile", ""}, "azure-mi-gp-file-512g\tAzure SQL Managed Instance General Purpose, data file ≤512 GiB\n"},
		{[]string{"run", "direct-selects", "--emulate", ""}, "azure-2014-s1\t"},
		{[]string{"knee", "single-inserts", "--emulate", ""}, "azure-sql-gp-8\t"},
	} {
		code, out, _ := runCLI(t, context.Background(), append([]string{"__complete"}, c.args...)...)
		if code != 0 || !strings.Contains(out, c.want) {
			t.Errorf("%v: exit %d, %q lacks %q", c.args, code, out, c.want)
		}
	}
}

// TestCheckCustom: `ceiling check custom --file F` runs the file's checks
// (exit 0 when they hold), refuses a file without checks (usage), and
// names the prepare to run when there is no database.
func TestCheckCustom(t *testing.T) {
	dir := t.TempDir()
	db := "sqlite:" + filepath.Join(dir, "c.db")
	transfers, err := filepath.Abs("../../examples/custom/transfers.yaml")
	if err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI(t, context.Background(), "check", "custom", "--file", transfers, "--db", db)
	if code != 1 || !strings.Contains(stderr, "run `ceiling prepare custom --file") {
		t.Fatalf("no database: exit %d, %q", code, stderr)
	}
	if code, out, stderr := runCLI(t, context.Background(), "prepare", "custom", "--file", transfers, "--db", db); code != 0 {
		t.Fatalf("prepare: exit %d\n%s%s", code, out, stderr)
	}
	code, out, stderr := runCLI(t, context.Background(), "check", "custom", "--file", transfers, "--db", db)
	if code != 0 || !strings.Contains(out, "ok      no-lost-update") {
		t.Fatalf("check: exit %d\n%s%s", code, out, stderr)
	}
	code, _, stderr = runCLI(t, context.Background(), "check", "custom", "--file", example(t), "--db", db)
	if code != 2 || !strings.Contains(stderr, "lists no checks") {
		t.Fatalf("a file without checks: exit %d, %q", code, stderr)
	}
}

// TestRunChecks: a run of a file with checks runs them afterwards and
// records them in the result's notes; a check that fails makes the run
// exit 1 after writing its result.
func TestRunChecks(t *testing.T) {
	dir := t.TempDir()
	transfers, err := filepath.Abs("../../examples/custom/transfers.yaml")
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "ok")
	code, stdout, stderr := runCLI(t, context.Background(), "run", "custom", "--file", transfers, "--ops", "100", "-c", "2", "--isolate", "0", "--no-probe", "--db", "sqlite:"+filepath.Join(dir, "a.db"), "--out", out)
	if code != 0 || !strings.Contains(stdout, "note: check after the run: no-lost-update: ok (14977)") {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	// --seed 2 loads other balances: the file's total no longer holds.
	out = filepath.Join(dir, "bad")
	code, stdout, stderr = runCLI(t, context.Background(), "run", "custom", "--file", transfers, "--seed", "2", "--ops", "100", "--isolate", "0", "--no-probe", "--db", "sqlite:"+filepath.Join(dir, "b.db"), "--out", out)
	if code != 1 || !strings.Contains(stdout, "no-lost-update: FAILED, got") || !strings.Contains(stderr, "1 of 2 checks failed after the run (the result is written)") {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	notes := fmt.Sprint(readJSONMap(t, firstResult(t, out))["notes"])
	if !strings.Contains(notes, "check after the run: no-lost-update: FAILED") {
		t.Fatalf("notes: %s", notes)
	}
}
