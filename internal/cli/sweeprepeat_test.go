package cli

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ceiling-db/ceiling/internal/report"
	"github.com/ceiling-db/ceiling/internal/testenv"
)

// runSweepDoc runs the CLI with args and decodes its one result as the
// report package writes it.
func runSweepDoc(t *testing.T, args ...string) (*report.Result, string) {
	t.Helper()
	var r report.Result
	stdout := runInto(t, &r, args...)
	return &r, stdout
}

// TestThreadsRampRepeat: --threads-ramp with --repeat runs the whole ramp
// that many times, each on data prepared afresh; step i of the result
// merges step i of every run, and carries the spread of its requests/s
// over them; runs[] lists each run's steps.
func TestThreadsRampRepeat(t *testing.T) {
	testenv.EachEngine(t, "sqlite:"+filepath.Join(t.TempDir(), "t.db"), func(t *testing.T, dsn string) {
		if !strings.HasPrefix(dsn, "sqlite:") {
			t.Cleanup(dropNewTables(t, dsn))
		}
		r, out := runSweepDoc(t, "run", "single-inserts", "--db", dsn, "--threads-ramp", "1,2", "--step", "500ms", "--repeat", "2")
		if r.Load.Repeat != 2 || len(r.Runs) != 2 || len(r.Steps) != 2 || r.Partial {
			t.Fatalf("repeat %d, %d runs, %d steps, partial %v: want 2 complete runs of 2 steps", r.Load.Repeat, len(r.Runs), len(r.Steps), r.Partial)
		}
		for _, run := range r.Runs {
			if len(run.Steps) != 2 || run.Steps[0].Threads == nil || *run.Steps[0].Threads != 1 || run.Steps[1].Threads == nil || *run.Steps[1].Threads != 2 {
				t.Fatalf("run %d steps %+v: want 1 and 2 threads", run.Run, run.Steps)
			}
		}
		var total int64
		for i, st := range r.Steps {
			s := st.RepeatStats["achieved_per_sec"]
			if s == nil || s.N != 2 || s.StdDev == nil {
				t.Fatalf("step %d repeat_stats %v: want req/s over 2 runs", i, st.RepeatStats)
			}
			a, b := r.Runs[0].Steps[i].AchievedPerSec, r.Runs[1].Steps[i].AchievedPerSec
			if a == nil || b == nil || math.Abs(s.Mean-(*a+*b)/2) > 1e-6*s.Mean {
				t.Fatalf("step %d: mean %v, runs %v and %v", i, s.Mean, a, b)
			}
			// Merged: both runs' requests over both runs' time.
			if st.DurationS < 0.8 || st.DurationS > 1.5 || st.Verdict == nil {
				t.Fatalf("step %d: merged duration %.2f s (want about 2 × 0.5 s), verdict %v", i, st.DurationS, st.Verdict)
			}
			total += st.Completed
		}
		if r.Summary.Requests != total {
			t.Errorf("summary %d requests, steps %d", r.Summary.Requests, total)
		}
		for _, s := range []string{"== run 2 of 2", "run 1: req/s by thread count: 1→", "req/s @ 2 threads", "(over 2 runs, "} {
			if !strings.Contains(out, s) {
				t.Errorf("output lacks %q:\n%s", s, out)
			}
		}
		if n := strings.Count(out, "preparing single-inserts"); n != 2 {
			t.Errorf("prepared %d times, want once per run:\n%s", n, out)
		}
	})
}

// TestBatchesRepeat: a bulk-load batch sweep run twice keeps each size's
// MB/min per run and its spread.
func TestBatchesRepeat(t *testing.T) {
	r, out := runSweepDoc(t, "run", "bulk-load", "--db", "sqlite:"+filepath.Join(t.TempDir(), "t.db"), "--batches", "10,100", "--step", "300ms", "--repeat", "2", "--no-index")
	if r.Load.Repeat != 2 || len(r.Runs) != 2 || len(r.Steps) != 2 {
		t.Fatalf("repeat %d, %d runs, %d steps", r.Load.Repeat, len(r.Runs), len(r.Steps))
	}
	for i, st := range r.Steps {
		s := st.RepeatStats["mb_per_min"]
		if st.Batch == nil || s == nil || s.N != 2 || r.Runs[0].Steps[i].MBPerMin == nil || r.Runs[0].Steps[i].Batch == nil || *r.Runs[0].Steps[i].Batch != *st.Batch {
			t.Fatalf("step %d: batch %v, repeat_stats %v, run 1's %+v", i, st.Batch, st.RepeatStats, r.Runs[0].Steps[i])
		}
	}
	if !strings.Contains(out, "MB/min @ 100-row batch") || !strings.Contains(out, "run 2: MB/min by batch size: 10→") {
		t.Errorf("console:\n%s", out)
	}
}
