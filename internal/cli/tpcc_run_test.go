package cli

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestRunTPCC drives `run tpcc` through the CLI on SQLite, on a prepared
// warehouse: the closed loop and the open loop both report NOPM counted
// from the database and ceiling's own TPM, TPM itself is n/a (SQLite has no
// server counters), the dataset stays consistent, and --keying-thinking
// with an open loop is a usage error.
func TestRunTPCC(t *testing.T) {
	if testing.Short() {
		t.Skip("loads a TPC-C warehouse")
	}
	ctx := context.Background()
	dir := t.TempDir()
	db := "sqlite:" + filepath.Join(dir, "tpcc.db")
	if code, out, errs := runCLI(t, ctx, "prepare", "tpcc", "--db", db, "--warehouses", "1"); code != 0 {
		t.Fatalf("prepare tpcc: exit %d %q %q", code, out, errs)
	}
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"closed", []string{"-c", "2", "--ops", "300", "--isolate", "1s"}},
		{"open", []string{"-c", "2", "-R", "200", "--ops", "200", "--isolate", "0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, tc.name)
			args := append([]string{"run", "tpcc", "--db", db, "--no-probe", "--out", out}, tc.args...)
			code, stdout, errs := runCLI(t, ctx, args...)
			if code != 0 {
				t.Fatalf("run: exit %d %q %q", code, stdout, errs)
			}
			for _, want := range []string{"NOPM", "TPM               n/a", "client TPM", "new_order", "stock_level"} {
				if !strings.Contains(stdout, want) {
					t.Errorf("console lacks %q:\n%s", want, stdout)
				}
			}
			_, path := readResult(t, out)
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var doc struct {
				Figures map[string]float64 `json:"figures"`
				Summary struct {
					Bytes    *int64   `json:"bytes"`
					MBPerMin *float64 `json:"mb_per_min"`
					ByOp     map[string]struct {
						MBPerMin *float64 `json:"mb_per_min"`
					} `json:"by_op"`
				} `json:"summary"`
				Intervals []map[string]any `json:"intervals"`
				Workload  struct {
					Params map[string]any `json:"params"`
				} `json:"workload"`
				Isolated []struct {
					Op       string             `json:"op"`
					Requests int64              `json:"requests"`
					Figures  map[string]float64 `json:"figures"`
					Note     string             `json:"note"`
					Verdict  *struct {
						Bottleneck string `json:"bottleneck"`
					} `json:"verdict"`
					MixPct   *float64           `json:"mix_pct"`
					SharePct map[string]float64 `json:"share_pct"`
				} `json:"isolated"`
			}
			if err := json.Unmarshal(b, &doc); err != nil {
				t.Fatal(err)
			}
			// TPC-C counts rows, not data bytes: MB/min is null, never 0,
			// and the console says n/a.
			if doc.Summary.Bytes != nil || doc.Summary.MBPerMin != nil || doc.Summary.ByOp["new_order"].MBPerMin != nil || len(doc.Summary.ByOp) != 5 {
				t.Errorf("bytes %v, mb_per_min %v, new_order's %v (%d operations): want null", doc.Summary.Bytes, doc.Summary.MBPerMin, doc.Summary.ByOp["new_order"].MBPerMin, len(doc.Summary.ByOp))
			}
			if len(doc.Intervals) == 0 || doc.Intervals[0]["mb_per_min"] != nil {
				t.Errorf("intervals' mb_per_min: want null, got %v", doc.Intervals)
			}
			if !regexp.MustCompile(`(?m)^new_order +\d+ +[\d.]+ +[\d.]+ +n/a `).MatchString(stdout) {
				t.Errorf("console's new_order line does not show MB/min n/a:\n%s", stdout)
			}
			if doc.Figures["nopm"] <= 0 || doc.Figures["new_orders"] <= 0 || doc.Figures["client_tpm"] <= 0 {
				t.Errorf("figures %v: want nopm, new_orders and client_tpm above 0", doc.Figures)
			}
			if _, ok := doc.Figures["tpm"]; ok {
				t.Errorf("tpm reported on SQLite: %v", doc.Figures)
			}
			if _, ok := doc.Figures["efficiency_pct"]; ok {
				t.Errorf("efficiency reported without --keying-thinking: %v", doc.Figures)
			}
			if doc.Workload.Params["warehouses"] != 1.0 {
				t.Errorf("params %v: want warehouses 1", doc.Workload.Params)
			}
			if tc.name == "open" {
				if len(doc.Isolated) != 0 || strings.Contains(stdout, "alone") {
					t.Errorf("--isolate 0 ran operations alone: %d", len(doc.Isolated))
				}
				return
			}
			// --isolate 1s: each transaction alone, with its own verdict
			// and its share of the mix.
			ops := []string{"new_order", "payment", "order_status", "delivery", "stock_level"}
			if len(doc.Isolated) != len(ops) {
				t.Fatalf("%d operations run alone, want %d:\n%s", len(doc.Isolated), len(ops), stdout)
			}
			var timeShare float64
			for i, o := range doc.Isolated {
				if o.Op != ops[i] || o.Requests <= 0 || o.Verdict == nil || o.MixPct == nil {
					t.Errorf("alone #%d: %+v, want %s with requests, a verdict and its mix share", i, o, ops[i])
				}
				timeShare += o.SharePct["time"]
				if _, ok := o.SharePct["log_bytes"]; !ok {
					t.Errorf("%s alone: no share of the log bytes (%v)", o.Op, o.SharePct)
				}
			}
			if math.Abs(timeShare-100) > 0.5 {
				t.Errorf("time shares sum to %.2f%%, want 100", timeShare)
			}
			// Only New-Order commits new orders; Delivery is bounded by the
			// undelivered orders and finds none missing.
			if doc.Isolated[0].Figures["new_orders"] <= 0 || doc.Isolated[2].Figures["new_orders"] != 0 {
				t.Errorf("new orders alone: new_order %v, order_status %v; want >0 and 0",
					doc.Isolated[0].Figures["new_orders"], doc.Isolated[2].Figures["new_orders"])
			}
			if d := doc.Isolated[3]; !strings.Contains(d.Note, "undelivered") || d.Figures["delivery_empty_districts"] != 0 {
				t.Errorf("delivery alone: note %q, empty districts %v", d.Note, d.Figures["delivery_empty_districts"])
			}
			for _, want := range []string{"each operation alone", "share of the mix", "delivery alone: bounded by the undelivered orders"} {
				if !strings.Contains(stdout, want) {
					t.Errorf("console lacks %q:\n%s", want, stdout)
				}
			}
		})
	}
	code, out, errs := runCLI(t, ctx, "check", "tpcc", "--db", db)
	if code != 0 || !strings.Contains(out, "conditions hold") {
		t.Fatalf("check after the runs: exit %d %q %q", code, out, errs)
	}
	if code, _, errs := runCLI(t, ctx, "run", "tpcc", "--db", db, "-R", "10", "--keying-thinking"); code != ExitUsage || !strings.Contains(errs, "--keying-thinking") {
		t.Fatalf("--keying-thinking with -R: exit %d %q", code, errs)
	}
	if code, _, errs := runCLI(t, ctx, "run", "tpcc", "--db", db, "--isolate", "-1s"); code != ExitUsage || !strings.Contains(errs, "--isolate must be 0 (skip) or at least 100ms") {
		t.Fatalf("--isolate -1s: exit %d %q", code, errs)
	}
}

// TestPrepareInterrupted: a load cut short by Ctrl-C ends in one line that
// says so and how to recover (not the driver's "context canceled" in the
// middle of some table), and the next run refuses the incomplete dataset.
func TestPrepareInterrupted(t *testing.T) {
	dir := t.TempDir()
	db := "sqlite:" + filepath.Join(dir, "tpcc.db")
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(700 * time.Millisecond); cancel() }()
	code, out, errs := runCLI(t, ctx, "prepare", "tpcc", "--db", db, "--warehouses", "5")
	if code != ExitRun {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, ExitRun, out, errs)
	}
	line := strings.TrimSpace(errs)
	for _, want := range []string{"prepare tpcc interrupted after", "incomplete", "`ceiling prepare tpcc --warehouses 5 --force --db " + db + "` loads it again", "`ceiling cleanup tpcc --db " + db + "` drops it"} {
		if !strings.Contains(line, want) {
			t.Errorf("stderr %q lacks %q", line, want)
		}
	}
	if strings.Contains(line, "\n") || strings.Contains(line, "context canceled") {
		t.Errorf("stderr should be one line without the driver's error, got %q", line)
	}
	code, _, errs = runCLI(t, context.Background(), "run", "tpcc", "--db", db, "-T", "1s")
	if code != ExitRun || !strings.Contains(errs, "incomplete") {
		t.Fatalf("run on the interrupted load: exit %d, %q", code, errs)
	}
}
