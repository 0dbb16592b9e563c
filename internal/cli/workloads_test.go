package cli

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"testing"
)

// runRowWorkload runs one row workload for ops requests on 2 workers over a
// 2000-row table and checks the outcome common to all of them.
func runRowWorkload(t *testing.T, dsn, wl string, ops int) result {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out")
	args := []string{"run", wl, "--db", dsn, "--ops", itoaTest(ops), "-c", "2", "--rows", "2000", "--out", out}
	if wl == "mixed" {
		args = append(args, "--isolate", "1s")
	}
	code, stdout, stderr := runCLI(t, context.Background(), args...)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	r, _ := readResult(t, out)
	if r.Workload.Name != wl || r.Summary.Requests != int64(ops) || r.Summary.Errors != 0 {
		t.Fatalf("workload %q requests %d errors %d, want %s, %d, 0", r.Workload.Name, r.Summary.Requests, r.Summary.Errors, wl, ops)
	}
	if r.Summary.Rows <= 0 {
		t.Fatalf("no rows touched")
	}
	if perRow := float64(r.Summary.Bytes) / float64(r.Summary.Rows); perRow < 360 || perRow > 440 {
		t.Fatalf("bytes per row %.1f, want 400 ± 40", perRow)
	}
	return r
}

func itoaTest(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoaTest(n/10) + string(rune('0'+n%10))
}

// checkRowWorkload checks what is particular to each workload.
func checkRowWorkload(t *testing.T, wl string, r result) {
	t.Helper()
	s := r.Summary
	switch wl {
	case "direct-selects", "updates":
		if s.Rows != s.Requests {
			t.Fatalf("rows %d != requests %d", s.Rows, s.Requests)
		}
	case "indirect-selects":
		if got := r.Workload.Params["range_rows_mean"]; got != float64(660) {
			t.Fatalf("range_rows_mean param = %v, want 660", got)
		}
		// Mean range of 660 ids at 90% selectivity, clipped at the end of a
		// 2000-row table: a few hundred rows per request.
		if perReq := float64(s.Rows) / float64(s.Requests); perReq < 150 || perReq > 700 {
			t.Fatalf("rows per request %.1f, want a few hundred", perReq)
		}
	case "mixed":
		want := map[string]float64{"insert": 20, "select-direct": 22.5, "select-indirect": 7.5, "update": 30, "delete": 20}
		var total int64
		for op, pct := range want {
			o := s.ByOp[op]
			total += o.Requests
			got := 100 * float64(o.Requests) / float64(s.Requests)
			if math.Abs(got-pct) > 6 {
				t.Fatalf("%s: %.1f%% of requests, want %.1f%% ± 6", op, got, pct)
			}
			switch op {
			case "insert", "update", "delete":
				// Updates and deletes take their id out of the live set,
				// so no other worker removes the row under them.
				if o.Rows != o.Requests {
					t.Fatalf("%s: rows %d != requests %d", op, o.Rows, o.Requests)
				}
			case "select-direct":
				if o.Rows > o.Requests || o.Rows < o.Requests*9/10 {
					t.Fatalf("select-direct: rows %d for %d requests", o.Rows, o.Requests)
				}
			}
		}
		if total != s.Requests || len(s.ByOp) != len(want) {
			t.Fatalf("by_op %v does not add up to %d requests", s.ByOp, s.Requests)
		}
		// --isolate 1s: each operation alone after the mix, deletes
		// bounded by the live rows (those of the load, the mix and the
		// inserts alone).
		order := []string{"insert", "select-direct", "select-indirect", "update", "delete"}
		if len(r.Isolated) != len(order) {
			t.Fatalf("%d operations alone, want %d", len(r.Isolated), len(order))
		}
		for i, o := range r.Isolated {
			if o.Op != order[i] || o.Requests <= 0 || o.Errors != 0 || o.Verdict == nil {
				t.Errorf("alone #%d: %+v, want %s with requests, no errors and a verdict", i, o, order[i])
			}
		}
		d := r.Isolated[4]
		var budget int64
		if _, err := fmt.Sscanf(d.Note, "bounded by the live rows: at most %d deletes", &budget); err != nil || budget < 1600 || d.Requests > budget {
			t.Errorf("delete alone: %d requests, note %q (%v); want a budget of at least 80%% of the 2000 rows and the requests within it", d.Requests, d.Note, err)
		}
	}
}

var rowWorkloads = []string{"direct-selects", "updates", "mixed", "indirect-selects"}

func TestRowWorkloadsSQLite(t *testing.T) {
	for _, wl := range rowWorkloads {
		t.Run(wl, func(t *testing.T) {
			ops := 600
			if wl == "mixed" {
				ops = 2000
			}
			dsn := "sqlite:" + filepath.Join(t.TempDir(), "t.db")
			checkRowWorkload(t, wl, runRowWorkload(t, dsn, wl, ops))
		})
	}
}

func TestRowWorkloadsServers(t *testing.T) {
	for _, ec := range engineCases {
		t.Run(ec.name, func(t *testing.T) {
			dsn := serverDSN(t, ec.env)
			for _, wl := range rowWorkloads {
				t.Run(wl, func(t *testing.T) {
					r := runRowWorkload(t, dsn, wl, 600)
					if r.Target.Engine != ec.name {
						t.Fatalf("engine %q, want %q", r.Target.Engine, ec.name)
					}
					checkRowWorkload(t, wl, r)
				})
			}
		})
	}
}

// everyEngine returns a DSN per engine: a new SQLite file and each test
// server (serverDSN: skipped off CI when unset).
func everyEngine(t *testing.T) map[string]string {
	t.Helper()
	dsns := map[string]string{"sqlite": "sqlite:" + filepath.Join(t.TempDir(), "t.db")}
	for _, ec := range engineCases {
		dsns[ec.name] = serverDSN(t, ec.env)
	}
	return dsns
}

// TestUpdatesRowPerWorker: updates with as many rows as workers, the
// fewest run accepts (TestBadInput has one fewer), on each engine: every
// request finds a row of its own, none fails.
func TestUpdatesRowPerWorker(t *testing.T) {
	for name, dsn := range everyEngine(t) {
		t.Run(name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			code, stdout, stderr := runCLI(t, context.Background(), "run", "updates", "--db", dsn, "-c", "4", "--rows", "4", "--ops", "2000", "--no-probe", "--out", out)
			if code != 0 {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			r, _ := readResult(t, out)
			if r.Summary.Requests != 2000 || r.Summary.Errors != 0 || r.Summary.Rows != 2000 {
				t.Fatalf("requests %d, errors %d, rows %d: want 2000, 0, 2000\n%s", r.Summary.Requests, r.Summary.Errors, r.Summary.Rows, stdout)
			}
		})
	}
}
