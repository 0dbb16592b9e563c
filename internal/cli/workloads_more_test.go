package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ceiling-db/ceiling/internal/target"
	"github.com/ceiling-db/ceiling/internal/target/engines"
	"github.com/ceiling-db/ceiling/internal/testenv"
	"github.com/ceiling-db/ceiling/internal/workload/bulkload"
	"github.com/ceiling-db/ceiling/internal/workload/indsel"
)

// fullResult decodes the parts of a result the tests below check.
type fullResult struct {
	Workload struct {
		Params map[string]any `json:"params"`
	} `json:"workload"`
	Summary struct {
		Requests               int64    `json:"requests"`
		Rows                   int64    `json:"rows"`
		Bytes                  int64    `json:"bytes"`
		Errors                 int64    `json:"errors"`
		MBPerMin               float64  `json:"mb_per_min"`
		RowsExamined           *int64   `json:"rows_examined"`
		RowsExaminedPerRequest *float64 `json:"rows_examined_per_request"`
		ByOp                   map[string]struct {
			Requests               int64    `json:"requests"`
			Rows                   int64    `json:"rows"`
			RowsExaminedPerRequest *float64 `json:"rows_examined_per_request"`
		} `json:"by_op"`
	} `json:"summary"`
	Costs struct {
		LogBytesPerOp  *float64 `json:"log_bytes_per_op"`
		DataReadsPerOp *float64 `json:"data_reads_per_op"`
	} `json:"costs"`
	Steps []struct {
		Batch               *int     `json:"batch"`
		Threads             *int     `json:"threads"`
		AchievedPerSec      *float64 `json:"achieved_per_sec"`
		Completed           int64    `json:"completed"`
		RowsPerSec          *float64 `json:"rows_per_sec"`
		MBPerMin            *float64 `json:"mb_per_min"`
		LogMBPerSec         *float64 `json:"log_mb_per_sec"`
		LogBytesPerDataByte *float64 `json:"log_bytes_per_data_byte"`
		Verdict             *struct {
			Bottleneck string   `json:"bottleneck"`
			Evidence   []string `json:"evidence"`
		} `json:"verdict"`
	} `json:"steps"`
	Verdict *struct {
		Bottleneck string   `json:"bottleneck"`
		Evidence   []string `json:"evidence"`
	} `json:"verdict"`
	Figures map[string]float64 `json:"figures"`
	Notes   []string           `json:"notes"`
}

// runFull runs the CLI with args (plus --out) and decodes its one result.
func runFull(t *testing.T, args ...string) (fullResult, string) {
	t.Helper()
	var r fullResult
	stdout := runInto(t, &r, args...)
	if r.Summary.Errors != 0 {
		t.Fatalf("%v: %d errors\n%s", args, r.Summary.Errors, stdout)
	}
	return r, stdout
}

// runInto runs the CLI with args (plus --out and --no-probe), decodes its
// one result into v and returns the console output.
func runInto(t *testing.T, v any, args ...string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := runCLI(t, context.Background(), append(args, "--out", out, "--no-probe")...)
	if code != 0 {
		t.Fatalf("%v: exit %d\nstdout:\n%s\nstderr:\n%s", args, code, stdout, stderr)
	}
	_, path := readResult(t, out)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}
	return stdout
}

// withConn opens dsn through ceiling's own target and calls fn with one
// connection and the target's table prefix.
func withConn(t *testing.T, dsn string, fn func(ctx context.Context, c target.Conn, prefix string)) {
	t.Helper()
	ctx := context.Background()
	tg, err := engines.Open(ctx, target.Options{DSN: dsn, Durability: target.DurabilityServer, MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close(ctx)
	c, err := tg.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fn(ctx, c, tg.Dialect().Prefix)
}

// queryInts runs a query returning one row of integers on dsn.
func queryInts(t *testing.T, dsn, sql string, n int) []int64 {
	t.Helper()
	var vals []int64
	withConn(t, dsn, func(ctx context.Context, c target.Conn, prefix string) {
		vals = queryIntsOn(t, ctx, c, strings.ReplaceAll(sql, "{ns}", prefix), n)
	})
	return vals
}

func queryIntsOn(t *testing.T, ctx context.Context, c target.Conn, sql string, n int) []int64 {
	t.Helper()
	rows, err := c.Query(ctx, sql)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	defer rows.Close()
	vals := make([]int64, n)
	dest := make([]any, n)
	for i := range vals {
		dest[i] = &vals[i]
	}
	if !rows.Next() {
		t.Fatalf("%s: no row (%v)", sql, rows.Err())
	}
	if err := rows.Scan(dest...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return vals
}

// clippedMeanRange is the expected key range an indirect select examines
// on a table of ids 1..n: the range starts at a uniform id and is clipped
// at n.
func clippedMeanRange(n int64) float64 {
	var mean float64
	for i, l := range indsel.RangeLengths {
		var sum float64
		for a := int64(1); a <= n; a++ {
			sum += float64(min(l, n-a+1))
		}
		mean += float64(indsel.RangeWeights[i]) / 100 * sum / float64(n)
	}
	return mean
}

func TestClippedMeanRange(t *testing.T) {
	if got := clippedMeanRange(1_000_000); math.Abs(got-indsel.MeanRangeLength) > 1 {
		t.Fatalf("unclipped mean %.1f, want %d", got, indsel.MeanRangeLength)
	}
	if got := clippedMeanRange(100); math.Abs(got-50.5) > 1e-9 {
		t.Fatalf("100-row table: mean %.2f, want 50.5", got)
	}
}

// dsnCases returns SQLite plus the servers that are configured.
func dsnCases(t *testing.T) map[string]func(t *testing.T) string {
	return map[string]func(t *testing.T) string{
		"sqlite":   func(t *testing.T) string { return "sqlite:" + filepath.Join(t.TempDir(), "t.db") },
		"postgres": func(t *testing.T) string { return serverDSN(t, testenv.PostgresEnv) },
		"mysql":    func(t *testing.T) string { return serverDSN(t, testenv.MySQLEnv) },
	}
}

func TestMoreWorkloads(t *testing.T) {
	for _, engine := range []string{"sqlite", "postgres", "mysql"} {
		mk := dsnCases(t)[engine]
		t.Run(engine, func(t *testing.T) {
			t.Run("indirect-selects-examined", func(t *testing.T) {
				const rows = 3000
				r, out := runFull(t, "run", "indirect-selects", "--db", mk(t), "--rows", fmt.Sprint(rows), "--ops", "800", "-c", "2")
				want := clippedMeanRange(rows)
				got := r.Summary.RowsExaminedPerRequest
				if got == nil || math.Abs(*got-want) > 0.15*want {
					t.Fatalf("rows examined per request %s, want %.0f ± 15%%", showPtr(got), want)
				}
				if r.Summary.Rows >= *r.Summary.RowsExamined || r.Summary.Rows < *r.Summary.RowsExamined*7/10 {
					t.Fatalf("returned %d of %d examined rows, want about 90%%", r.Summary.Rows, *r.Summary.RowsExamined)
				}
				if !strings.Contains(out, "rows examined") {
					t.Fatalf("summary does not show the rows examined:\n%s", out)
				}
			})
			t.Run("single-inserts-batch", func(t *testing.T) {
				// --batch 10: ten rows a request, in one transaction each.
				dsn := mk(t)
				r, _ := runFull(t, "run", "single-inserts", "--db", dsn, "--batch", "10", "--ops", "20", "-c", "2")
				if r.Summary.Requests != 20 || r.Summary.Rows != 200 || r.Summary.Errors != 0 {
					t.Fatalf("%d requests wrote %d rows (%d errors), want 20 writing 200", r.Summary.Requests, r.Summary.Rows, r.Summary.Errors)
				}
				if n, _ := r.Workload.Params["rows_per_transaction"].(float64); n != 10 {
					t.Fatalf("rows_per_transaction %v, want 10", r.Workload.Params["rows_per_transaction"])
				}
				if v := queryInts(t, dsn, "SELECT COUNT(*) FROM {ns}single_inserts", 1); v[0] != 200 {
					t.Fatalf("the table holds %d rows, want the 200 committed", v[0])
				}
			})
			t.Run("sequential-selects", func(t *testing.T) {
				args := []string{"run", "sequential-selects", "--db", mk(t), "--rows", "1000", "--ops", "10", "-c", "2"}
				if engine == "sqlite" {
					args = append(args, "--cold") // a server's OS cache drop would be host-wide
				}
				r, out := runFull(t, args...)
				if r.Summary.Requests != 10 || r.Summary.Rows != 10*1000 {
					t.Fatalf("%d requests read %d rows, want 10 reading 10000", r.Summary.Requests, r.Summary.Rows)
				}
				if perRow := float64(r.Summary.Bytes) / float64(r.Summary.Rows); perRow < 380 || perRow > 420 {
					t.Fatalf("bytes per row %.1f, want 400 ± 20", perRow)
				}
				if r.Summary.MBPerMin <= 0 || r.Costs.DataReadsPerOp == nil {
					t.Fatalf("MB/min %.2f, data reads per request %s: want both measured", r.Summary.MBPerMin, showPtr(r.Costs.DataReadsPerOp))
				}
				if engine == "sqlite" {
					cold, _ := r.Workload.Params["cold_cache"].(map[string]any)
					if os, _ := cold["os_cache"].(string); !strings.HasPrefix(os, "dropped") {
						t.Fatalf("--cold on SQLite: cold_cache %v, want the OS cache dropped", cold)
					}
					// Each worker's first scan is timed apart from the rest.
					f := r.Figures
					if n := f["first_scans"]; n < 1 || n > 2 || n+f["later_scans"] != 10 || f["first_scan_ms"] <= 0 || f["later_scan_ms"] <= 0 {
						t.Fatalf("--cold figures %v: want 1-2 first scans (one per worker) and the rest of the 10 later, both timed", f)
					}
					if !strings.Contains(out, "first scans") || !strings.Contains(out, "later scans") {
						t.Fatalf("--cold: the console does not show the first and later scans:\n%s", out)
					}
				} else if _, ok := r.Figures["first_scans"]; ok {
					t.Fatalf("without --cold: figures %v, want no first-scan figures", r.Figures)
				}
			})
			t.Run("tables-spread", func(t *testing.T) {
				dsn := mk(t)
				const tables, perTable = 4, 100
				r, _ := runFull(t, "run", "inserts-deletes", "--db", dsn, "--rows", fmt.Sprint(tables*perTable), "--tables", fmt.Sprint(tables), "--ops", "400", "-c", "2")
				if r.Workload.Params["tables"] != float64(tables) {
					t.Fatalf("params.tables = %v, want %d", r.Workload.Params["tables"], tables)
				}
				// Every table got inserts (ids above its initial 100) and
				// deletes (initial ids missing).
				for i := 1; i <= tables; i++ {
					v := queryInts(t, dsn, fmt.Sprintf("SELECT COALESCE(MAX(row_id), 0), SUM(CASE WHEN row_id <= %d THEN 1 ELSE 0 END) FROM {ns}rows_%d", perTable, i), 2)
					if v[0] <= perTable || v[1] >= perTable {
						t.Fatalf("table rows_%d: max id %d, %d of its first %d rows left: the load did not reach it", i, v[0], v[1], perTable)
					}
				}
				code, out, _ := runCLI(t, context.Background(), "cleanup", "inserts-deletes", "--db", dsn, "--tables", fmt.Sprint(tables))
				if code != 0 || !strings.Contains(out, "rows_4") {
					t.Fatalf("cleanup --tables: exit %d, %q", code, out)
				}
			})
			t.Run("bulk-load", func(t *testing.T) {
				dsn := mk(t)
				r, out := runFull(t, "run", "bulk-load", "--db", dsn, "--batch", "150", "--ops", "8", "-c", "2")
				if r.Summary.Requests != 8 || r.Summary.Rows != 8*150 {
					t.Fatalf("%d requests inserted %d rows, want 8 of 150", r.Summary.Requests, r.Summary.Rows)
				}
				// The data bytes counted must be exactly those in the table.
				v := queryInts(t, dsn, "SELECT COUNT(*), MIN(row_id), MAX(row_id), SUM(LENGTH(vc_short) + LENGTH(vc_mid) + LENGTH(vc_long)) FROM {ns}"+bulkload.Table, 4)
				if v[0] != 1200 || v[1] != 1 || v[2] != 1200 {
					t.Fatalf("table holds %d rows, ids %d..%d; want 1200 rows with ids 1..1200", v[0], v[1], v[2])
				}
				if want := v[0]*48 + v[3]; r.Summary.Bytes != want {
					t.Fatalf("bytes %d, want %d (48 fixed bytes per row + varchar lengths in the table)", r.Summary.Bytes, want)
				}
				if r.Figures["index_build_rows"] != 1200 || r.Figures["index_build_indexes"] != 2 || !strings.Contains(out, "built 2 secondary indexes on 1200 rows") {
					t.Fatalf("index build figures %v, output:\n%s", r.Figures, out)
				}
				if ratio, ok := r.Figures["log_bytes_per_data_byte"]; !ok || ratio <= 0 {
					t.Fatalf("log/data ratio %v (present %v), want measured and positive", ratio, ok)
				}
			})
		})
	}
}

func TestBulkLoadBatchRamp(t *testing.T) {
	dsn := "sqlite:" + filepath.Join(t.TempDir(), "t.db")
	r, out := runFull(t, "run", "bulk-load", "--db", dsn, "--batches", "10,100", "--ops", "6", "--no-index")
	if len(r.Steps) != 2 || r.Steps[0].Batch == nil || *r.Steps[0].Batch != 10 || *r.Steps[1].Batch != 100 {
		t.Fatalf("steps %+v, want batches 10 and 100", r.Steps)
	}
	for i, st := range r.Steps {
		if st.Completed != 6 || st.RowsPerSec == nil || st.MBPerMin == nil || st.LogMBPerSec == nil || st.LogBytesPerDataByte == nil {
			t.Fatalf("step %d: %+v, want 6 requests and measured rates", i, st)
		}
	}
	if r.Summary.Rows != 6*10+6*100 {
		t.Fatalf("rows %d, want 660", r.Summary.Rows)
	}
	if _, ok := r.Figures["index_build_s"]; ok || !strings.Contains(out, "batch-size steps") {
		t.Fatalf("--no-index built indexes, or no batch table:\n%s", out)
	}
	// Each batch size has its own verdict; the run's is that of the size
	// that loaded the most MB/min, and says so.
	best := 0
	for i, st := range r.Steps {
		if st.Verdict == nil || st.Verdict.Bottleneck == "" || !batchVerdictShown(out, *st.Batch, st.Verdict.Bottleneck) {
			t.Fatalf("batch %d: verdict %+v, or not in the verdict per batch size:\n%s", *st.Batch, st.Verdict, out)
		}
		if *st.MBPerMin > *r.Steps[best].MBPerMin {
			best = i
		}
	}
	want := fmt.Sprintf("from the %d-row batches, the size that loaded the most (", *r.Steps[best].Batch)
	if r.Verdict == nil || r.Verdict.Bottleneck != r.Steps[best].Verdict.Bottleneck || !strings.Contains(strings.Join(r.Verdict.Evidence, "|"), want) {
		t.Fatalf("run verdict %+v, want batch %d's, saying %q", r.Verdict, *r.Steps[best].Batch, want)
	}
}

// TestThreadsRamp: --threads-ramp runs each thread count as its own
// closed-loop step on each engine, with its own verdict; the run's verdict
// is that of the count that did the most requests/s, and says so.
func TestThreadsRamp(t *testing.T) {
	testenv.EachEngine(t, "sqlite:"+filepath.Join(t.TempDir(), "t.db"), func(t *testing.T, dsn string) {
		if !strings.HasPrefix(dsn, "sqlite:") {
			t.Cleanup(dropNewTables(t, dsn))
		}
		r, out := runFull(t, "run", "single-inserts", "--db", dsn, "--threads-ramp", "1,3", "--step", "1s")
		if len(r.Steps) != 2 || r.Steps[0].Threads == nil || *r.Steps[0].Threads != 1 || r.Steps[1].Threads == nil || *r.Steps[1].Threads != 3 {
			t.Fatalf("steps %+v, want 1 and 3 threads", r.Steps)
		}
		if got := fmt.Sprint(r.Workload.Params["threads_ramp"]); got != "[1 3]" {
			t.Errorf("workload.params.threads_ramp %s, want [1 3]", got)
		}
		best := 0
		for i, st := range r.Steps {
			if st.Completed == 0 || st.AchievedPerSec == nil || *st.AchievedPerSec <= 0 || st.Batch != nil {
				t.Fatalf("step %d: %+v, want requests and a measured rate", i, st)
			}
			if st.Verdict == nil || st.Verdict.Bottleneck == "" {
				t.Fatalf("step %d: no verdict", i)
			}
			if *st.AchievedPerSec > *r.Steps[best].AchievedPerSec {
				best = i
			}
		}
		if r.Summary.Requests != r.Steps[0].Completed+r.Steps[1].Completed {
			t.Errorf("summary %d requests, steps %d + %d", r.Summary.Requests, r.Steps[0].Completed, r.Steps[1].Completed)
		}
		want := fmt.Sprintf("from the step at %d thread", *r.Steps[best].Threads)
		if r.Verdict == nil || r.Verdict.Bottleneck != r.Steps[best].Verdict.Bottleneck || !strings.Contains(strings.Join(r.Verdict.Evidence, "|"), want) {
			t.Errorf("run verdict %+v, want step %d's, saying %q", r.Verdict, best+1, want)
		}
		for _, s := range []string{"thread-count steps", "verdict per thread count:", "\n-- 1 thread\n", "\n-- 3 threads\n", ", 1, 3 threads (a step each), durability"} {
			if !strings.Contains(out, s) {
				t.Errorf("output lacks %q:\n%s", s, out)
			}
		}
	})
}

func TestParseThreads(t *testing.T) {
	for spec, want := range map[string]string{"1:64:x2": "[1 2 4 8 16 32 64]", "2:10:4": "[2 6 10]", "1,2,4,8": "[1 2 4 8]", "1:4:x1.5": "[1 2 3]"} {
		if got, err := parseThreads(spec); err != nil || fmt.Sprint(got) != want {
			t.Errorf("%s = %v, %v; want %s", spec, got, err, want)
		}
	}
	for _, bad := range []string{"0,2", "1.5", "1:100000:x10", ""} {
		if _, err := parseThreads(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestParseBatches(t *testing.T) {
	got, err := parseBatches("1:4096:x4")
	if err != nil || fmt.Sprint(got) != "[1 4 16 64 256 1024 4096]" {
		t.Fatalf("1:4096:x4 = %v, %v", got, err)
	}
	if got, err := parseBatches("1:10:x1.5"); err != nil || fmt.Sprint(got) != "[1 2 3 5 8]" {
		t.Fatalf("1:10:x1.5 = %v, %v (rounded, duplicates dropped)", got, err)
	}
	for _, bad := range []string{"0.5,2", "1.5", "0:10:2", "", "1:20000000:x10"} {
		if _, err := parseBatches(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	code, _, stderr := runCLI(t, context.Background(), "run", "bulk-load", "--db", "sqlite:"+filepath.Join(t.TempDir(), "t.db"), "--batches", "1,2", "--rate", "5")
	if code != 2 || !strings.Contains(stderr, "--rate does not apply") {
		t.Fatalf("--batches with --rate: exit %d, %q", code, stderr)
	}
	code, _, stderr = runCLI(t, context.Background(), "run", "bulk-load", "--db", "sqlite:"+filepath.Join(t.TempDir(), "t.db"), "--batches", "1,2", "--step", "5ms")
	if code != 2 || !strings.Contains(stderr, "--step must be at least 100ms") {
		t.Fatalf("--batches with a 5ms step: exit %d, %q", code, stderr)
	}
	code, _, stderr = runCLI(t, context.Background(), "knee", "bulk-load", "--slo", "p99<50ms", "--batches", "1,2")
	if code != 2 || !strings.Contains(stderr, "--batches") {
		t.Fatalf("knee with --batches: exit %d, %q", code, stderr)
	}
}

// batchVerdictShown says whether the console's verdicts per batch size
// give batch the bottleneck: on its own line ("    10 none — …") or in a
// group of neighbouring sizes with the same line ("10 … 100 (2) none — …").
func batchVerdictShown(out string, batch int, bottleneck string) bool {
	_, sec, ok := strings.Cut(out, "verdict per batch size:\n")
	if !ok {
		return false
	}
	for _, line := range strings.Split(sec, "\n") {
		label, rest, ok := strings.Cut(strings.TrimSpace(line), " "+bottleneck)
		if !ok || rest != "" && !strings.HasPrefix(rest, " ") {
			continue
		}
		if label == strconv.Itoa(batch) {
			return true
		}
		var first, last, n int
		if _, err := fmt.Sscanf(label, "%d … %d (%d)", &first, &last, &n); err == nil && first <= batch && batch <= last {
			return true
		}
	}
	return false
}
