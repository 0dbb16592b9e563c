package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-db/ceiling/internal/report"
	"github.com/ceiling-db/ceiling/internal/runner"
	"github.com/ceiling-db/ceiling/internal/workload/all"
)

// runCLI runs ceiling in-process and returns its exit code, stdout and stderr.
func runCLI(t *testing.T, ctx context.Context, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Run(ctx, args, &out, &errb)
	return code, out.String(), errb.String()
}

// result is the part of the JSON result document the tests read.
type result struct {
	Schema  string `json:"schema"`
	Partial bool   `json:"partial"`
	Target  struct {
		Engine     string `json:"engine"`
		Version    string `json:"version"`
		DSN        string `json:"dsn"`
		Durability struct {
			Mode, Setting, Before, During, After string
		} `json:"durability"`
	} `json:"target"`
	Workload struct {
		Name   string         `json:"name"`
		Params map[string]any `json:"params"`
	} `json:"workload"`
	Load struct {
		Model   string `json:"model"`
		Threads int    `json:"threads"`
	} `json:"load"`
	Summary struct {
		Requests       int64   `json:"requests"`
		RequestsPerSec float64 `json:"requests_per_sec"`
		Rows           int64   `json:"rows"`
		RowsPerSec     float64 `json:"rows_per_sec"`
		Bytes          int64   `json:"bytes"`
		MBPerMin       float64 `json:"mb_per_min"`
		Errors         int64   `json:"errors"`
		ElapsedS       float64 `json:"elapsed_s"`
		InFlightAtEnd  struct {
			Requests   int     `json:"requests"`
			OldestMs   float64 `json:"oldest_ms"`
			Unfinished int     `json:"unfinished"`
		} `json:"in_flight_at_end"`
		Stalls []struct {
			FromS float64 `json:"from_s"`
			ToS   float64 `json:"to_s"`
		} `json:"stalls"`
		LatencyMs *struct {
			P50, P90, P95, P99, P999, Max float64
		} `json:"latency_ms"`
		ByOp map[string]struct {
			Requests int64   `json:"requests"`
			Bytes    int64   `json:"bytes"`
			Rows     int64   `json:"rows"`
			MBPerMin float64 `json:"mb_per_min"`
		} `json:"by_op"`
	} `json:"summary"`
	Costs struct {
		LogBytesPerOp *float64 `json:"log_bytes_per_op"`
		LogSyncsPerOp *float64 `json:"log_syncs_per_op"`
		CPUusPerOp    *float64 `json:"cpu_us_per_op"`
	} `json:"costs"`
	Files []struct {
		Name         string   `json:"name"`
		Role         string   `json:"role"`
		Writes       int64    `json:"writes"`
		Syncs        int64    `json:"syncs"`
		BytesWritten int64    `json:"bytes_written"`
		KBPerWrite   *float64 `json:"kb_per_write"`
	} `json:"files"`
	Intervals  []map[string]any  `json:"intervals"`
	Steps      []any             `json:"steps"`
	Verdict    any               `json:"verdict"`
	Histograms map[string]string `json:"histograms"`
	Isolated   []struct {
		Op       string `json:"op"`
		Requests int64  `json:"requests"`
		Errors   int64  `json:"errors"`
		Note     string `json:"note"`
		Verdict  any    `json:"verdict"`
	} `json:"isolated"`
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

// readJSONMap reads the JSON object in path, failing the test when it
// cannot.
func readJSONMap(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return m
}

func readResult(t *testing.T, dir string) (result, string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(files) != 1 {
		t.Fatalf("want exactly one result in %s, got %v (%v)", dir, files, err)
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var r result
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("result is not valid JSON: %v", err)
	}
	if r.Schema != "ceiling.result/v1" {
		t.Fatalf("schema: got %q", r.Schema)
	}
	return r, files[0]
}

func logFile(t *testing.T, r result) (writes, syncs, bytes int64) {
	t.Helper()
	for _, f := range r.Files {
		if f.Role == "log" && strings.HasSuffix(f.Name, "-wal") {
			return f.Writes, f.Syncs, f.BytesWritten
		}
	}
	t.Fatalf("no WAL file in result files: %+v", r.Files)
	return
}

// TestSingleInsertsDurability reproduces the delayed-durability experiment on
// the embedded engine: about one WAL sync per transaction at full durability,
// far fewer (and more bytes per sync) when relaxed.
func TestSingleInsertsDurability(t *testing.T) {
	const ops = 600
	dir := t.TempDir()
	db := "sqlite:" + filepath.Join(dir, "t.db")

	outFull := filepath.Join(dir, "full")
	code, stdout, stderr := runCLI(t, context.Background(), "run", "single-inserts", "--db", db, "--ops", "600", "--durability", "full", "--out", outFull)
	if code != 0 {
		t.Fatalf("full: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	full, _ := readResult(t, outFull)
	if full.Summary.Requests != ops || full.Summary.Rows != ops || full.Summary.Bytes != ops*12 {
		t.Fatalf("full: requests %d rows %d bytes %d, want %d, %d, %d", full.Summary.Requests, full.Summary.Rows, full.Summary.Bytes, ops, ops, ops*12)
	}
	if full.Target.Engine != "sqlite" || full.Target.Durability.During != "FULL" || full.Workload.Name != "single-inserts" || full.Load.Model != "closed" {
		t.Fatalf("full: target/workload/load: %+v %+v %+v", full.Target, full.Workload, full.Load)
	}
	_, fullSyncs, _ := logFile(t, full)
	if fullSyncs < ops*9/10 || fullSyncs > ops*11/10 {
		t.Fatalf("full: %d WAL syncs for %d commits, want about one per commit", fullSyncs, ops)
	}
	if c := full.Costs.LogSyncsPerOp; c == nil || math.Abs(*c-1) > 0.1 {
		t.Fatalf("full: costs.log_syncs_per_op = %v, want ≈1", c)
	}
	if full.Costs.CPUusPerOp != nil {
		t.Fatalf("full: cpu_us_per_op should be null (not measured), got %v", *full.Costs.CPUusPerOp)
	}
	if !strings.Contains(stdout, "ceiling.db") && !strings.Contains(stdout, "t.db-wal") {
		t.Fatalf("full: console has no file IO table:\n%s", stdout)
	}
	if full.Summary.LatencyMs == nil || full.Summary.LatencyMs.P99 <= 0 || full.Summary.LatencyMs.Max < full.Summary.LatencyMs.P50 {
		t.Fatalf("full: latency %+v", full.Summary.LatencyMs)
	}
	if _, ok := full.Histograms["insert"]; !ok {
		t.Fatalf("full: no serialized histogram for insert")
	}

	outRelaxed := filepath.Join(dir, "relaxed")
	code, stdout, stderr = runCLI(t, context.Background(), "run", "single-inserts", "--db", db, "--ops", "600", "--durability", "relaxed", "--out", outRelaxed)
	if code != 0 {
		t.Fatalf("relaxed: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	relaxed, _ := readResult(t, outRelaxed)
	_, relSyncs, relBytes := logFile(t, relaxed)
	if relSyncs*10 > ops {
		t.Fatalf("relaxed: %d WAL syncs for %d commits, want far fewer than one per commit", relSyncs, ops)
	}
	if relaxed.Target.Durability.During != "NORMAL" {
		t.Fatalf("relaxed: synchronous during the run = %q, want NORMAL", relaxed.Target.Durability.During)
	}
	// Bytes per sync grow as syncs group many commits.
	_, _, fullBytes := logFile(t, full)
	if relSyncs > 0 && float64(relBytes)/float64(relSyncs) <= float64(fullBytes)/float64(fullSyncs) {
		t.Fatalf("relaxed: bytes per sync %d/%d not above full's %d/%d", relBytes, relSyncs, fullBytes, fullSyncs)
	}
}

func TestInsertsDeletesMixAndVolume(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	code, stdout, stderr := runCLI(t, context.Background(), "run", "inserts-deletes", "--db", "sqlite:"+filepath.Join(dir, "t.db"),
		"-c", "4", "-T", "2s", "--rows", "2000", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	r, _ := readResult(t, out)
	if !strings.Contains(stdout, "n/a commits") || !strings.Contains(stdout, "\n  n/a: not available from sqlite: commits (SQLite keeps no commit counter)") {
		t.Errorf("the n/a commits are not explained:\n%s", stdout)
	}
	ins, del := r.Summary.ByOp["insert"], r.Summary.ByOp["delete"]
	total := ins.Requests + del.Requests
	if total < 100 || total != r.Summary.Requests {
		t.Fatalf("requests: insert %d + delete %d vs total %d", ins.Requests, del.Requests, r.Summary.Requests)
	}
	if frac := float64(ins.Requests) / float64(total); frac < 0.45 || frac > 0.55 {
		t.Fatalf("insert fraction %.3f, want about 0.5", frac)
	}
	if r.Summary.Errors != 0 {
		t.Fatalf("errors: %d", r.Summary.Errors)
	}
	// Every request touches one row of ~400 bytes.
	if r.Summary.Rows != r.Summary.Requests {
		t.Fatalf("rows %d != requests %d", r.Summary.Rows, r.Summary.Requests)
	}
	perRow := float64(r.Summary.Bytes) / float64(r.Summary.Rows)
	if perRow < 380 || perRow > 420 {
		t.Fatalf("bytes per row %.1f, want about 400", perRow)
	}
	wantMB := r.Summary.RowsPerSec * perRow * 60 / (1 << 20)
	if math.Abs(r.Summary.MBPerMin-wantMB) > wantMB*0.01 {
		t.Fatalf("mb_per_min %.3f inconsistent with rows/s × row size = %.3f", r.Summary.MBPerMin, wantMB)
	}
	if r.Summary.ElapsedS < 1.9 || r.Summary.ElapsedS > 2.5 {
		t.Fatalf("elapsed %.2fs for -T 2s", r.Summary.ElapsedS)
	}
	if r.Load.Threads != 4 || len(r.Intervals) < 2 {
		t.Fatalf("threads %d, intervals %d", r.Load.Threads, len(r.Intervals))
	}
	perFile := 0
	for _, iv := range r.Intervals {
		files, _ := iv["files"].([]any)
		for _, f := range files {
			m := f.(map[string]any)
			if m["role"] == "log" && m["writes"].(float64) > 0 && m["kb_per_write"] != nil {
				perFile++
			}
		}
	}
	if perFile == 0 {
		t.Fatalf("no interval carries per-file IO stats for the log")
	}
	if r.Steps == nil || len(r.Steps) != 0 {
		t.Fatalf("steps should be an empty list for a closed-loop run, got %v", r.Steps)
	}
}

func TestInterruptWritesPartialResult(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(1500 * time.Millisecond); cancel() }()
	code, stdout, stderr := runCLI(t, ctx, "run", "inserts-deletes", "--db", "sqlite:"+filepath.Join(dir, "t.db"), "-T", "60s", "--rows", "100", "--out", out)
	if code != ExitRun {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, ExitRun, stdout, stderr)
	}
	r, path := readResult(t, out)
	if !r.Partial || !strings.Contains(path, "partial") {
		t.Fatalf("partial flag %v, path %s", r.Partial, path)
	}
	if r.Summary.Requests == 0 || r.Summary.ElapsedS > 10 {
		t.Fatalf("partial result: requests %d elapsed %.1f", r.Summary.Requests, r.Summary.ElapsedS)
	}
	if !strings.Contains(stderr, "interrupted") || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Fatalf("stderr should be one line saying interrupted, got %q", stderr)
	}
}

func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	db := "sqlite:" + filepath.Join(dir, "t.db")
	notDir := filepath.Join(dir, "file")
	if err := os.WriteFile(notDir, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		code int
		want string // in the one-line error
	}{
		{"unknown workload", []string{"run", "nope", "--db", db}, ExitUsage, `unknown workload "nope"`},
		{"missing workload", []string{"run"}, ExitUsage, "needs a workload"},
		{"cleanup without a workload", []string{"cleanup"}, ExitUsage, "needs a workload: one of inserts-deletes, "},
		{"cleanup without a workload names all", []string{"cleanup"}, ExitUsage, "tpcc, custom (or all, for every one of them)"},
		{"unknown command", []string{"frobnicate"}, ExitUsage, `unknown command "frobnicate" (see ceiling --help)`},
		{"mistyped command", []string{"rnu", "single-inserts"}, ExitUsage, `unknown command "rnu" (did you mean run?)`},
		{"command prefix", []string{"kne"}, ExitUsage, `unknown command "kne" (did you mean knee?)`},
		{"unknown flag", []string{"run", "single-inserts", "--bogus"}, ExitUsage, "unknown flag: --bogus"},
		{"mistyped flag", []string{"run", "single-inserts", "--thread", "4"}, ExitUsage, "unknown flag: --thread (did you mean --threads?)"},
		{"knee max not a number", []string{"knee", "single-inserts", "--slo", "p99<1s", "--max", "lots"}, ExitUsage, `"lots" is not a number of requests/s`},
		{"knee max too high", []string{"knee", "single-inserts", "--db", db, "--slo", "p99<1s", "--max", "2e8"}, ExitUsage, "--max must be above 0 and at most 100000000 requests/s, got 2e+08"},
		{"another workload's flag", []string{"run", "direct-selects", "--isolate", "0"}, ExitUsage, "unknown flag: --isolate: run direct-selects has no such flag; workloads custom, mixed and tpcc have it"},
		{"one other workload's flag", []string{"prepare", "updates", "--warehouses", "2"}, ExitUsage, "unknown flag: --warehouses: prepare updates has no such flag; workload tpcc has it"},
		{"another command's flag", []string{"run", "single-inserts", "--slo", "p99<1s"}, ExitUsage, "unknown flag: --slo: run single-inserts has no such flag; knee has it"},
		{"swapped letters in a knee flag", []string{"knee", "single-inserts", "--sol", "p99<1s"}, ExitUsage, "unknown flag: --sol (did you mean --slo?)"},
		{"sqlite in memory", []string{"run", "single-inserts", "--db", "sqlite::memory:", "--ops", "1"}, ExitUsage, "in-memory and file: URI databases are not supported"},
		{"malformed DSN", []string{"run", "single-inserts", "--db", "nonsense", "--ops", "1"}, ExitUsage, "malformed DSN"},
		{"unknown scheme", []string{"run", "single-inserts", "--db", "oracle://u:secret@h/db", "--ops", "1"}, ExitUsage, "unknown scheme"},
		{"sqlserver scheme", []string{"run", "single-inserts", "--db", "sqlserver://sa:secret@localhost/db", "--ops", "1"}, ExitUsage, "SQL Server and Azure SQL are not supported yet"},
		{"check without checks", []string{"check", "mixed"}, ExitUsage, `ceiling check has no consistency checks for "mixed"; tpcc and custom have them`},
		{"empty --db", []string{"run", "single-inserts", "--db", "", "--ops", "1"}, ExitUsage, "--db is empty (an unset variable?)"},
		{"blank --db on knee", []string{"knee", "single-inserts", "--db", " ", "--slo", "p99<1s"}, ExitUsage, "--db is empty"},
		{"empty --db on cleanup", []string{"cleanup", "single-inserts", "--db="}, ExitUsage, "--db is empty"},
		{"empty sqlite path", []string{"run", "single-inserts", "--db", "sqlite:", "--ops", "1"}, ExitUsage, "no file path"},
		{"db directory missing", []string{"run", "single-inserts", "--db", "sqlite:" + filepath.Join(dir, "no", "such", "x.db"), "--ops", "1"}, ExitUsage, "does not exist"},
		{"out not writable", []string{"run", "single-inserts", "--db", db, "--ops", "1", "--out", filepath.Join(notDir, "sub")}, ExitUsage, "--out"},
		{"out file under a file", []string{"run", "single-inserts", "--db", db, "--ops", "1", "--out", filepath.Join(notDir, "r.json")}, ExitUsage, "--out"},
		{"empty out", []string{"run", "single-inserts", "--db", db, "--ops", "1", "--out", ""}, ExitUsage, "--out is empty"},
		{"zero threads", []string{"run", "single-inserts", "--db", db, "-c", "0"}, ExitUsage, "--threads must be at least 1"},
		{"negative threads", []string{"run", "single-inserts", "--db", db, "-c", "-3"}, ExitUsage, "--threads must be at least 1"},
		{"zero duration", []string{"run", "single-inserts", "--db", db, "-T", "0"}, ExitUsage, "--duration must be positive"},
		{"negative duration", []string{"run", "single-inserts", "--db", db, "-T", "-5s"}, ExitUsage, "--duration must be positive"},
		{"cold with warm-up", []string{"run", "sequential-selects", "--db", db, "--cold", "--warmup", "2s"}, ExitUsage, "with --warmup 2s the measured requests would find them warm"},
		{"cold ramp", []string{"run", "sequential-selects", "--db", db, "--cold", "--rates", "1,2"}, ExitUsage, "with --rates' steps the measured requests would find them warm"},
		{"cold threads ramp", []string{"run", "sequential-selects", "--db", db, "--cold", "--threads-ramp", "1,2"}, ExitUsage, "with --threads-ramp's steps the measured requests"},
		{"cold knee", []string{"knee", "sequential-selects", "--db", db, "--cold", "--slo", "p99<1s"}, ExitUsage, "with a knee search's probes"},
		{"zero ops", []string{"run", "single-inserts", "--db", db, "--ops", "0"}, ExitUsage, "--ops must be positive, got 0"},
		{"zero batch", []string{"run", "single-inserts", "--db", db, "--batch", "0"}, ExitUsage, "--batch must be between 1 and 100000 rows, got 0"},
		{"zero ops on a threads ramp", []string{"run", "single-inserts", "--db", db, "--threads-ramp", "1,2", "--ops", "0"}, ExitUsage, "--ops must be positive, got 0"},
		{"1ns duration", []string{"run", "single-inserts", "--db", db, "-T", "1ns"}, ExitUsage, "--duration must be at least 100ms"},
		{"5ms interval", []string{"run", "single-inserts", "--db", db, "--interval", "5ms"}, ExitUsage, "--interval must be at least 100ms (the kernel counts CPU time in 10 ms ticks"},
		{"5ms interval on knee", []string{"knee", "single-inserts", "--db", db, "--slo", "p99<1s", "--interval", "5ms"}, ExitUsage, "--interval must be at least 100ms"},
		{"threads ramp with -T", []string{"run", "single-inserts", "--db", db, "--threads-ramp", "1,2", "-T", "5s"}, ExitUsage, "--duration does not apply to a --threads-ramp ramp: each thread count runs closed loop for --step"},
		{"threads ramp with -c", []string{"run", "single-inserts", "--db", db, "--threads-ramp", "1,2", "-c", "4"}, ExitUsage, "--threads does not apply to a --threads-ramp ramp"},
		{"threads ramp of 0", []string{"run", "single-inserts", "--db", db, "--threads-ramp", "0,2"}, ExitUsage, "--threads-ramp"},
		{"threads ramp with batches", []string{"run", "bulk-load", "--db", db, "--threads-ramp", "1,2", "--batches", "1,10"}, ExitUsage, "--batches and --threads-ramp are exclusive"},
		{"threads ramp with rates", []string{"run", "single-inserts", "--db", db, "--threads-ramp", "1,2", "--rates", "10,20"}, ExitUsage, "--rates does not apply to a --threads-ramp ramp"},
		{"5ms interval on batches", []string{"run", "bulk-load", "--db", db, "--batches", "1,2", "--interval", "5ms"}, ExitUsage, "--interval must be at least 100ms"},
		{"1ms isolate", []string{"run", "mixed", "--db", db, "--isolate", "1ms"}, ExitUsage, "--isolate must be 0 (skip) or at least 100ms"},
		{"bad duration", []string{"run", "single-inserts", "--db", db, "-T", "soon"}, ExitUsage, "not a duration"},
		{"bad durability", []string{"run", "single-inserts", "--db", db, "--durability", "maybe", "--ops", "1"}, ExitUsage, "durability must be one of"},
		{"negative rows", []string{"run", "inserts-deletes", "--db", db, "--rows", "-1"}, ExitUsage, "--rows"},
		{"updates: fewer rows than workers", []string{"run", "updates", "--db", db, "-c", "16", "--rows", "8"}, ExitUsage, "--rows 8 is too few for 16 workers: each update holds its row until it returns, so the table needs a row per worker: --rows 16 or more"},
		{"updates: fewer rows per table than workers", []string{"run", "updates", "--db", db, "-c", "16", "--rows", "40", "--tables", "3"}, ExitUsage, "each of the 3 tables needs a row per worker: --rows 48 or more"},
		{"updates knee: fewer rows than workers", []string{"knee", "updates", "--db", db, "-c", "4", "--rows", "3", "--slo", "p99<1s"}, ExitUsage, "--rows 3 is too few for 4 workers"},
		{"unreachable server", []string{"run", "single-inserts", "--db", "postgres://postgres:secret@127.0.0.1:1/x", "--ops", "1"}, ExitRun, "connection refused"},
		{"mysql DSN without database", []string{"run", "single-inserts", "--db", "mysql://root:secret@127.0.0.1:3306", "--ops", "1"}, ExitUsage, "names no database"},
		{"not a number", []string{"run", "single-inserts", "--db", db, "-c", "four"}, ExitUsage, "invalid argument"},
		// A suggested command acts on the same database when copied.
		{"tpcc not prepared", []string{"run", "tpcc", "--db", db, "--warehouses", "3"}, ExitRun, "run `ceiling prepare tpcc --warehouses 3 --db " + db + "` first"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, context.Background(), tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d (stderr %q)", code, tc.code, stderr)
			}
			line := strings.TrimRight(stderr, "\n")
			if strings.Contains(line, "\n") || !strings.HasPrefix(line, "ceiling: ") {
				t.Fatalf("want one line starting with 'ceiling: ', got %q", stderr)
			}
			if !strings.Contains(line, tc.want) {
				t.Fatalf("error %q does not mention %q", line, tc.want)
			}
			if strings.Contains(line, "secret") || strings.Contains(line, "goroutine") {
				t.Fatalf("error leaks a password or a stack trace: %q", line)
			}
		})
	}
}

// TestAddDB: the ceiling commands a message suggests get the run's --db
// (quoted for the shell where needed), unless they have one or are
// commands without --db.
func TestAddDB(t *testing.T) {
	tests := []struct{ msg, db, want string }{
		{"no dataset: run `ceiling prepare tpcc --warehouses 2` first", "sqlite:/tmp/a.db",
			"no dataset: run `ceiling prepare tpcc --warehouses 2 --db sqlite:/tmp/a.db` first"},
		{"`ceiling run x --reuse` uses them; `ceiling cleanup x` drops them", "postgres://u:xxxxx@h/db?sslmode=disable",
			"`ceiling run x --reuse --db 'postgres://u:xxxxx@h/db?sslmode=disable'` uses them; `ceiling cleanup x --db 'postgres://u:xxxxx@h/db?sslmode=disable'` drops them"},
		{"`ceiling merge` the shards; `ceiling predict` it", "sqlite:a.db", "`ceiling merge` the shards; `ceiling predict` it"},
		{"`ceiling prepare x --db other` first", "sqlite:a.db", "`ceiling prepare x --db other` first"},
		{"a lone ` backquote, `ceiling run x", "sqlite:a.db", "a lone ` backquote, `ceiling run x"},
		{"it's `ceiling check tpcc`", "sqlite:/tmp/it's.db", "it's `ceiling check tpcc --db 'sqlite:/tmp/it'\\''s.db'`"},
	}
	for _, tc := range tests {
		if got := report.WithDB(tc.msg, tc.db); got != tc.want {
			t.Errorf("WithDB(%q, %q)\n got %q\nwant %q", tc.msg, tc.db, got, tc.want)
		}
	}
}

func TestHelpAndWorkloads(t *testing.T) {
	code, out, _ := runCLI(t, context.Background(), "workloads")
	if code != 0 || !strings.Contains(out, "inserts-deletes") || !strings.Contains(out, "single-inserts") {
		t.Fatalf("workloads: exit %d, output %q", code, out)
	}
	code, out, _ = runCLI(t, context.Background(), "run", "inserts-deletes", "--help")
	if code != 0 || !strings.Contains(out, "--rows") || !strings.Contains(out, "Examples:") || !strings.Contains(out, "--durability") {
		t.Fatalf("run inserts-deletes --help: exit %d, output %q", code, out)
	}
}

func TestPrepareAndCleanup(t *testing.T) {
	dir := t.TempDir()
	db := "sqlite:" + filepath.Join(dir, "t.db")
	if code, out, errs := runCLI(t, context.Background(), "prepare", "inserts-deletes", "--db", db, "--rows", "500"); code != 0 {
		t.Fatalf("prepare: exit %d %s %s", code, out, errs)
	}
	code, out, errs := runCLI(t, context.Background(), "cleanup", "inserts-deletes", "--db", db)
	if code != 0 || !strings.Contains(out, "dropped ceiling_rows") {
		t.Fatalf("cleanup: exit %d %q %q", code, out, errs)
	}
}

// TestFailedRunLeavesNoOutDir: a run that fails before writing its result
// (a server that refuses the connection; a tpcc run without its dataset,
// which fails after opening the database) removes the --out directories
// it made, and the SQLite file it made; a run that writes its result
// keeps them.
func TestFailedRunLeavesNoOutDir(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "a", "b")
	for _, args := range [][]string{
		{"run", "single-inserts", "--db", "postgres://postgres@127.0.0.1:1/postgres?connect_timeout=5", "--out", out},
		{"run", "tpcc", "--db", "sqlite:" + filepath.Join(dir, "t.db"), "--out", out},
	} {
		if code, _, _ := runCLI(t, context.Background(), args...); code == 0 {
			t.Fatalf("%v: exit 0", args)
		}
		for _, left := range []string{"a", "t.db"} {
			if _, err := os.Stat(filepath.Join(dir, left)); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("%v left %s behind: %v", args, left, err)
			}
		}
	}
	if code, _, errs := runCLI(t, context.Background(), "run", "single-inserts", "--db", "sqlite:"+filepath.Join(dir, "t.db"), "--ops", "10", "--no-probe", "--out", out); code != 0 {
		t.Fatalf("run: exit %d: %s", code, errs)
	}
	if m, _ := filepath.Glob(filepath.Join(out, "*.json")); len(m) != 1 {
		t.Fatalf("results in %s: %v", out, m)
	}
}

// TestOutResultFile: --out ending in .json names the result file itself
// (created with its directory, replaced by the next run, which says so); an existing
// directory of that name is still a directory.
func TestOutResultFile(t *testing.T) {
	dir := t.TempDir()
	db := "sqlite:" + filepath.Join(dir, "t.db")
	file := filepath.Join(dir, "sub", "first.json")
	for i, ops := range []string{"50", "80"} {
		code, stdout, stderr := runCLI(t, context.Background(), "run", "single-inserts", "--db", db, "--ops", ops, "--no-probe", "--out", file)
		if code != 0 {
			t.Fatalf("run %d: exit %d\nstdout:\n%s\nstderr:\n%s", i, code, stdout, stderr)
		}
		// The second run says it replaced the first one's file.
		want := []string{"result: " + file + "\n", "result: " + file + " (replaced the file that was there)\n"}[i]
		if !strings.Contains(stdout, want) {
			t.Fatalf("run %d: console lacks %q:\n%s", i, want, stdout)
		}
		r, path := readResult(t, filepath.Dir(file))
		if path != file {
			t.Fatalf("run %d: result at %s, want %s", i, path, file)
		}
		if want, _ := strconv.ParseInt(ops, 10, 64); r.Summary.Requests != want {
			t.Fatalf("run %d: the file holds %d requests, want this run's %d", i, r.Summary.Requests, want)
		}
	}

	asDir := filepath.Join(dir, "dir.json")
	if err := os.Mkdir(asDir, 0o755); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, context.Background(), "run", "single-inserts", "--db", db, "--ops", "50", "--no-probe", "--out", asDir)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if _, path := readResult(t, asDir); filepath.Dir(path) != asDir || !strings.HasSuffix(path, "-single-inserts-sqlite.json") {
		t.Fatalf("result at %s, want a run-named file inside the directory %s", path, asDir)
	}
}

// TestParentExamples: `ceiling run|knee|prepare|cleanup|check --help`
// and each workload's own help show examples, and every example's flags
// exist: each one, run with --help added, exits 0 (cobra parses the flags
// before printing help, so a misspelt flag would fail).
func TestParentExamples(t *testing.T) {
	cmds := [][]string{{"run"}, {"knee"}, {"prepare"}, {"cleanup"}, {"check"}, {"check", "tpcc"}}
	for _, m := range all.Registry() {
		for _, parent := range []string{"run", "knee", "prepare", "cleanup"} {
			cmds = append(cmds, []string{parent, m.Name})
		}
	}
	for _, path := range cmds {
		cmd := path[0]
		code, out, _ := runCLI(t, context.Background(), append(path, "--help")...)
		i := strings.Index(out, "Examples:\n")
		if code != 0 || i < 0 {
			t.Fatalf("%v --help: exit %d, no examples:\n%s", path, code, out)
		}
		n := 0
		for _, line := range strings.Split(out[i+len("Examples:\n"):], "\n") {
			line = strings.TrimSpace(line)
			if line == "" {
				break
			}
			if j := strings.Index(line, "#"); j >= 0 {
				line = strings.TrimSpace(line[:j])
			}
			args := strings.Fields(strings.ReplaceAll(line, "'", ""))
			// A run example may show the prepare it needs first (tpcc).
			if len(args) < 3 || args[0] != "ceiling" || args[1] != cmd && !(cmd == "run" && args[1] == "prepare") {
				t.Fatalf("%s example %q", cmd, line)
			}
			if args[2] == "WORKLOAD" {
				continue
			}
			n++
			if code, _, errOut := runCLI(t, context.Background(), append(args[1:], "--help")...); code != 0 {
				t.Errorf("example %q with --help: exit %d: %s", line, code, errOut)
			}
		}
		if n == 0 {
			t.Errorf("%s --help: no runnable example", cmd)
		}
	}
}

// TestSeriesInterval: a run planned longer than MaxSeriesPoints default
// intervals keeps a point every few whole seconds instead (bounded memory
// for hours-long runs, DESIGN §4); an --interval the user gave is kept,
// with what it costs; an open loop of --ops lasts --ops ÷ --rate; a closed
// loop of --ops is not planned: its series widens as it grows instead
// (runner.Config.MaxPoints, tested in the runner).
func TestSeriesInterval(t *testing.T) {
	for _, c := range []struct {
		name     string
		cfg      runner.Config
		given    bool
		want     time.Duration
		noteHas  string
		wantNote bool
	}{
		{"two hours at 1s", runner.Config{Interval: time.Second, Duration: 2 * time.Hour}, false, time.Second, "", false},
		{"a day at 1s", runner.Config{Interval: time.Second, Duration: 24 * time.Hour}, false, 12 * time.Second,
			"the series keeps a point every 12s (24h0m0s at 1s would be 86,400 points; --interval sets it)", true},
		{"warm-up counted", runner.Config{Interval: time.Second, Duration: 2 * time.Hour, Warmup: time.Minute}, false, 2 * time.Second, "every 2s", true},
		{"a ramp's steps", runner.Config{Interval: time.Second, Steps: []runner.Step{{Rate: 10, Duration: 90 * time.Minute}, {Rate: 20, Duration: 90 * time.Minute, Warmup: time.Minute}}}, false, 2 * time.Second, "every 2s", true},
		{"given", runner.Config{Interval: time.Second, Duration: 5 * time.Hour}, true, time.Second,
			"--interval 1s over 5h0m0s keeps 18,000 points (~54 MB of memory, ~36 MB of JSON)", true},
		{"ops", runner.Config{Interval: time.Second, Ops: 1e9}, false, time.Second, "", false},
		{"open loop of ops", runner.Config{Interval: time.Second, Rate: 10, Ops: 1e6}, false, 14 * time.Second,
			"the series keeps a point every 14s (27h46m40s at 1s would be 100,000 points", true},
	} {
		got, note := seriesInterval(c.cfg, c.given)
		if got != c.want || (note != "") != c.wantNote || !strings.Contains(note, c.noteHas) {
			t.Errorf("%s: %v %q, want %v and a note with %q", c.name, got, note, c.want, c.noteHas)
		}
		if want := c.name == "ops"; unplanned(c.cfg) != want {
			t.Errorf("%s: unplanned %v, want %v", c.name, !want, want)
		}
	}
	if n := widenedNote(time.Second, []*runner.Result{{Stride: 1}, {}}); n != "" {
		t.Errorf("series of one width: note %q", n)
	}
	if n := widenedNote(time.Second, []*runner.Result{{Stride: 2}, {Stride: 8}}); !strings.Contains(n, "1s each for the first 3,600, then twice as long for half as many, up to 8s") {
		t.Errorf("widened series: note %q", n)
	}
}

// TestInFlightNote: an open loop whose threads leave each request less
// than 10 ms at its top rate says how long a request may take; a closed
// loop, or enough threads, says nothing.
func TestInFlightNote(t *testing.T) {
	steps := []runner.Step{{Rate: 1000}, {Rate: 8000}, {Rate: 2000}}
	cases := []struct {
		threads int
		cfg     runner.Config
		want    string
	}{
		{1, runner.Config{Steps: steps}, "at most 1 request in flight (-c 1): 8000/s is kept up only while each request takes under 125 µs;"},
		{16, runner.Config{Steps: steps}, "at most 16 requests in flight (-c 16): 8000/s is kept up only while each request takes under 2 ms;"},
		{4, runner.Config{Rate: 200}, ""}, // 20 ms each
		{4, runner.Config{Rate: 1000}, "at most 4 requests in flight (-c 4): 1000/s is kept up only while each request takes under 4 ms;"},
		{80, runner.Config{Steps: steps}, ""},
		{1, runner.Config{}, ""},
	}
	for _, c := range cases {
		got := inFlightNote(c.threads, c.cfg)
		if (c.want == "") != (got == "") || !strings.HasPrefix(got, c.want) {
			t.Errorf("threads %d, rate %v, steps %d: %q, want %q…", c.threads, c.cfg.Rate, len(c.cfg.Steps), got, c.want)
		}
	}
	// On the console, before the first step.
	db := "sqlite:" + filepath.Join(t.TempDir(), "x.db")
	code, stdout, stderr := runCLI(t, context.Background(), "run", "single-inserts", "--db", db, "--rates", "500:1000:500", "--step", "200ms", "--no-probe", "--out", t.TempDir())
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "note: at most 1 request in flight (-c 1): 1000/s is kept up only while each request takes under 1 ms") {
		t.Errorf("no in-flight note:\n%s", stdout)
	}
}
