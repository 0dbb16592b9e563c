package cli

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-db/ceiling/internal/knee"
	"github.com/ceiling-db/ceiling/internal/runner"
	"github.com/ceiling-db/ceiling/internal/workload/all"
)

func TestParseRates(t *testing.T) {
	tests := []struct {
		spec string
		want []float64
		err  string
	}{
		{"20:200:20", []float64{20, 40, 60, 80, 100, 120, 140, 160, 180, 200}, ""},
		{"50:150:50", []float64{50, 100, 150}, ""},
		{"10:35:10", []float64{10, 20, 30}, ""},
		{"0.1:0.3:0.1", []float64{0.1, 0.2, 0.3}, ""},
		{"100:100:10", []float64{100}, ""},
		{"10:1000:x2", []float64{10, 20, 40, 80, 160, 320, 640}, ""},
		{"10:1000:X10", []float64{10, 100, 1000}, ""},
		{"1:2:x1.5", []float64{1, 1.5}, ""},
		{"50,100,200", []float64{50, 100, 200}, ""},
		{" 200, 100 ,50 ", []float64{200, 100, 50}, ""},
		{"75", []float64{75}, ""},
		{"", nil, "empty"},
		{"20:10:5", nil, "stop 10 is below start 20"},
		{"abc", nil, `"abc" is not a rate`},
		{"0", nil, "must be above 0"},
		{"-5", nil, "must be above 0"},
		{"-5:10:5", nil, "must be above 0"},
		{"10:20:0", nil, "step must be above 0"},
		{"10:20:-5", nil, "step must be above 0"},
		{"10:20:y", nil, "not a number"},
		{"10:20", nil, "START:STOP:STEP"},
		{"10:20:5:1", nil, "START:STOP:STEP"},
		{"10:1000:x1", nil, "factor must be above 1"},
		{"10:1000:x0.5", nil, "factor must be above 1"},
		{"10:1000:xz", nil, "not a number"},
		{"1:100000:1", nil, "at most 1000"},
		{"50,,100", nil, "empty rate"},
		{"50,NaN", nil, "not a rate"},
		{"1e9", nil, "at most"},
	}
	for _, tc := range tests {
		t.Run(tc.spec, func(t *testing.T) {
			got, err := parseRates(tc.spec)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("got %v, %v; want an error mentioning %q", got, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error %v", err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("got %v, want %v", got, tc.want)
				}
			}
		})
	}
}

// openResult is the part of the result document the open-loop tests read.
type openResult struct {
	Partial bool `json:"partial"`
	Load    struct {
		Model      string    `json:"model"`
		Rate       *float64  `json:"rate"`
		Rates      []float64 `json:"rates"`
		Arrival    *string   `json:"arrival"`
		LateAfterS *float64  `json:"late_after_s"`
		StepS      *float64  `json:"step_s"`
		Repeat     int       `json:"repeat"`
	} `json:"load"`
	Summary struct {
		Requests  int64  `json:"requests"`
		Late      int64  `json:"late"`
		Scheduled *int64 `json:"scheduled"`
	} `json:"summary"`
	Steps []struct {
		Rate           float64          `json:"rate"`
		AchievedPerSec *float64         `json:"achieved_per_sec"`
		Scheduled      int64            `json:"scheduled"`
		Completed      int64            `json:"completed"`
		Late           int64            `json:"late"`
		LatePct        *float64         `json:"late_pct"`
		Failed         int64            `json:"failed"`
		LatencyMs      map[string]any   `json:"latency_ms"`
		ServiceMs      map[string]any   `json:"service_ms"`
		DurationS      float64          `json:"duration_s"`
		LogMBPerSec    *float64         `json:"log_mb_per_sec"`
		LogSyncsPerSec *float64         `json:"log_syncs_per_sec"`
		DataIOPS       *float64         `json:"data_iops"`
		Costs          map[string]any   `json:"costs"`
		SchedLagMs     map[string]any   `json:"sched_lag_ms"`
		StartLagMs     map[string]any   `json:"start_lag_ms"`
		MaxBacklog     *int64           `json:"max_backlog"`
		Saturated      *bool            `json:"saturated"`
		RepeatStats    map[string]*stat `json:"repeat_stats"`
	} `json:"steps"`
	Intervals []struct {
		Step *int `json:"step"`
		Run  *int `json:"run"`
	} `json:"intervals"`
	Runs []struct {
		Run            int            `json:"run"`
		Partial        bool           `json:"partial"`
		RequestsPerSec float64        `json:"requests_per_sec"`
		Requests       int64          `json:"requests"`
		LatencyMs      map[string]any `json:"latency_ms"`
		Costs          map[string]any `json:"costs"`
		Steps          []struct {
			Rate           float64  `json:"rate"`
			AchievedPerSec *float64 `json:"achieved_per_sec"`
		} `json:"steps"`
	} `json:"runs"`
	RepeatStats map[string]*stat `json:"repeat_stats"`
	Verdict     any              `json:"verdict"`
	Knee        *struct {
		Rate             *float64  `json:"rate"`
		FirstFailingRate *float64  `json:"first_failing_rate"`
		SLO              string    `json:"slo"`
		SLOApplied       string    `json:"slo_applied"`
		Stop             string    `json:"stop"`
		Retries          int       `json:"retries"`
		TransientRates   []float64 `json:"transient_rates"`
		RunArgs          []string  `json:"run_args"`
		Probes           []struct {
			Rate        float64  `json:"rate"`
			Pass        bool     `json:"pass"`
			FailedTerms []string `json:"failed_terms"`
			Retry       int      `json:"retry"`
			Step        *int     `json:"step"`
			DurationS   float64  `json:"duration_s"`
		} `json:"probes"`
	} `json:"knee"`
}

type stat struct {
	Mean     float64  `json:"mean"`
	StdDev   *float64 `json:"stddev"`
	CI95Low  *float64 `json:"ci95_low"`
	CI95High *float64 `json:"ci95_high"`
	N        int      `json:"n"`
}

func readOpen(t *testing.T, dir string) (openResult, string) {
	t.Helper()
	_, path := readResult(t, dir)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r openResult
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("result: %v", err)
	}
	return r, path
}

func TestRampSQLite(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	code, stdout, stderr := runCLI(t, context.Background(), "run", "single-inserts", "--db", "sqlite:"+filepath.Join(dir, "t.db"),
		"--rates", "50:150:50", "--step", "1s", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	r, _ := readOpen(t, out)
	if r.Load.Model != "open" || r.Load.Rate != nil || len(r.Load.Rates) != 3 || r.Load.StepS == nil || *r.Load.StepS != 1 ||
		r.Load.Arrival == nil || *r.Load.Arrival != "uniform" || r.Load.LateAfterS == nil || *r.Load.LateAfterS != 1 {
		t.Fatalf("load: %+v", r.Load)
	}
	if len(r.Steps) != 3 {
		t.Fatalf("got %d steps, want 3", len(r.Steps))
	}
	for i, st := range r.Steps {
		want := float64(50 * (i + 1))
		if st.Rate != want {
			t.Fatalf("step %d: rate %g, want %g", i, st.Rate, want)
		}
		if st.AchievedPerSec == nil || math.Abs(*st.AchievedPerSec-want) > 0.1*want {
			t.Fatalf("step %d: achieved %v, want within 10%% of %g", i, showPtr(st.AchievedPerSec), want)
		}
		if st.Scheduled < int64(want*0.9) || st.LatePct == nil || st.LatencyMs == nil || st.SchedLagMs == nil || st.StartLagMs == nil ||
			st.MaxBacklog == nil || st.Saturated == nil || st.Costs == nil {
			t.Fatalf("step %d: missing figures: %+v", i, st)
		}
		// SQLite's metering VFS measures the log: the figures are there, not null.
		if st.LogMBPerSec == nil || st.LogSyncsPerSec == nil || st.DataIOPS == nil {
			t.Fatalf("step %d: server evidence missing: %+v", i, st)
		}
		if st.DurationS < 0.9 || st.DurationS > 1.5 {
			t.Fatalf("step %d: duration %.2fs for --step 1s", i, st.DurationS)
		}
	}
	if r.Summary.Scheduled == nil || r.Summary.Requests == 0 {
		t.Fatalf("summary: %+v", r.Summary)
	}
	seen := map[int]bool{}
	for _, iv := range r.Intervals {
		if iv.Step == nil {
			t.Fatalf("open-loop interval without its step index")
		}
		seen[*iv.Step] = true
	}
	if len(seen) != 3 {
		t.Fatalf("intervals cover steps %v, want 0, 1, 2", seen)
	}
	for _, want := range []string{"target/s", "open-loop steps", "achieved", "late%", "data IOPS", "lag p99"} {
		if !strings.Contains(stdout, want) {
			t.Fatalf("console lacks %q:\n%s", want, stdout)
		}
	}
}

func TestOverloadCountsLate(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	code, stdout, stderr := runCLI(t, ctx, "run", "single-inserts", "--db", "sqlite:"+filepath.Join(dir, "t.db"),
		"--rate", "200000", "-T", "1s", "-c", "1", "--out", out)
	if took := time.Since(start); took > 15*time.Second {
		t.Fatalf("a 1 s overloaded run took %v", took)
	}
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	r, _ := readOpen(t, out)
	if r.Load.Model != "open" || r.Load.Rate == nil || *r.Load.Rate != 200000 || r.Load.Rates != nil {
		t.Fatalf("load: %+v", r.Load)
	}
	if len(r.Steps) != 1 {
		t.Fatalf("got %d steps, want 1", len(r.Steps))
	}
	st := r.Steps[0]
	if st.Late == 0 || r.Summary.Late != st.Late || st.LatePct == nil || *st.LatePct <= 1 {
		t.Fatalf("late %d (summary %d, pct %v): one SQLite worker cannot do 200000/s", st.Late, r.Summary.Late, showPtr(st.LatePct))
	}
	if st.Saturated == nil || !*st.Saturated || !strings.Contains(stdout, "SATURATED") {
		t.Fatalf("an overloaded step must be flagged saturated:\n%s", stdout)
	}
	if st.Completed+st.Late+st.Failed < st.Scheduled*9/10 {
		t.Fatalf("completed %d + late %d + failed %d far below scheduled %d", st.Completed, st.Late, st.Failed, st.Scheduled)
	}
}

func TestRepeat(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	code, stdout, stderr := runCLI(t, context.Background(), "run", "single-inserts", "--db", "sqlite:"+filepath.Join(dir, "t.db"),
		"--ops", "300", "--repeat", "2", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	r, _ := readOpen(t, out)
	if len(r.Runs) != 2 || r.Load.Repeat != 2 || r.Load.Model != "closed" {
		t.Fatalf("runs %d, load %+v", len(r.Runs), r.Load)
	}
	for i, run := range r.Runs {
		if run.Run != i+1 || run.Partial || run.Requests != 300 || run.RequestsPerSec <= 0 || run.LatencyMs == nil || run.Costs == nil {
			t.Fatalf("run %d: %+v", i+1, run)
		}
	}
	if r.Summary.Requests != 600 {
		t.Fatalf("merged requests %d, want 600", r.Summary.Requests)
	}
	st := r.RepeatStats["requests_per_sec"]
	if st == nil || st.N != 2 || st.StdDev == nil || st.CI95Low == nil || *st.CI95Low > st.Mean || *st.CI95High < st.Mean {
		t.Fatalf("repeat_stats.requests_per_sec = %+v", st)
	}
	if want := (r.Runs[0].RequestsPerSec + r.Runs[1].RequestsPerSec) / 2; math.Abs(st.Mean-want) > 1e-6*want {
		t.Fatalf("mean %g, want %g", st.Mean, want)
	}
	for _, key := range []string{"rows_per_sec", "mb_per_min", "latency_p99_ms", "errors", "log_bytes_per_op"} {
		if r.RepeatStats[key] == nil {
			t.Fatalf("repeat_stats lacks %s: %v", key, r.RepeatStats)
		}
	}
	if _, ok := r.RepeatStats["late_pct"]; ok {
		t.Fatalf("closed loop has no late_pct")
	}
	for _, iv := range r.Intervals {
		if iv.Run == nil || *iv.Run < 1 || *iv.Run > 2 {
			t.Fatalf("interval without its run number")
		}
	}
	if strings.Count(stdout, "preparing single-inserts") != 2 || !strings.Contains(stdout, "95% CI") || !strings.Contains(stdout, "run 2") {
		t.Fatalf("console: want two prepares and the repeats table:\n%s", stdout)
	}
}

func TestRepeatRamp(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	code, stdout, stderr := runCLI(t, context.Background(), "run", "single-inserts", "--db", "sqlite:"+filepath.Join(dir, "t.db"),
		"--rates", "100,200", "--step", "300ms", "--repeat", "2", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	r, _ := readOpen(t, out)
	if len(r.Runs) != 2 || len(r.Steps) != 2 {
		t.Fatalf("runs %d steps %d", len(r.Runs), len(r.Steps))
	}
	for _, run := range r.Runs {
		if len(run.Steps) != 2 || run.Steps[1].Rate != 200 || run.Steps[1].AchievedPerSec == nil {
			t.Fatalf("run %d steps %+v", run.Run, run.Steps)
		}
	}
	// Step i of the document merges step i of both runs.
	for i, st := range r.Steps {
		if st.RepeatStats["achieved_per_sec"] == nil || st.RepeatStats["achieved_per_sec"].N != 2 {
			t.Fatalf("step %d repeat_stats %v", i, st.RepeatStats)
		}
		if st.DurationS < 0.5 || st.DurationS > 0.9 {
			t.Fatalf("step %d: merged duration %.2fs, want about 2 × 0.3 s", i, st.DurationS)
		}
	}
	if r.RepeatStats["late_pct"] == nil || !strings.Contains(stdout, "achieved @ 200/s") {
		t.Fatalf("repeat_stats %v\n%s", r.RepeatStats, stdout)
	}
}

// TestRepeatInterrupted: Ctrl-C during run 2 writes a partial result with
// run 1 and the part of run 2 measured so far.
func TestRepeatInterrupted(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		// Cancel once run 2 has measured a little: its progress line is the sign.
		deadline := time.After(20 * time.Second)
		for {
			select {
			case <-deadline:
				cancel()
				return
			case <-time.After(20 * time.Millisecond):
			}
			if b, _ := os.ReadFile(filepath.Join(dir, "marker")); len(b) > 0 {
				time.Sleep(400 * time.Millisecond)
				cancel()
				return
			}
		}
	}()
	w := &markerWriter{path: filepath.Join(dir, "marker"), after: "== run 2 of 3"}
	code := Run(ctx, []string{"run", "single-inserts", "--db", "sqlite:" + filepath.Join(dir, "t.db"), "-T", "600ms", "--repeat", "3", "--out", out}, w, &strings.Builder{})
	if code != ExitRun {
		t.Fatalf("exit %d, want %d\n%s", code, ExitRun, w.String())
	}
	r, path := readOpen(t, out)
	if !r.Partial || !strings.Contains(path, "partial") {
		t.Fatalf("partial %v path %s", r.Partial, path)
	}
	if len(r.Runs) != 2 || r.Runs[0].Partial || !r.Runs[1].Partial {
		t.Fatalf("runs: %+v, want run 1 complete and run 2 partial", r.Runs)
	}
	if st := r.RepeatStats["requests_per_sec"]; st == nil || st.N != 1 || st.StdDev != nil {
		t.Fatalf("stats over the complete run only: %+v", st)
	}
}

// markerWriter collects output and writes a marker file once after appears.
type markerWriter struct {
	strings.Builder
	path, after string
	done        bool
}

func (m *markerWriter) Write(p []byte) (int, error) {
	n, err := m.Builder.Write(p)
	if !m.done && strings.Contains(m.Builder.String(), m.after) {
		m.done = true
		_ = os.WriteFile(m.path, []byte("x"), 0o644)
	}
	return n, err
}

func TestKneeSQLite(t *testing.T) {
	dir := t.TempDir()
	db := "sqlite:" + filepath.Join(dir, "t.db")
	knee := func(t *testing.T, name string, args ...string) (openResult, string) {
		t.Helper()
		out := filepath.Join(dir, name)
		code, stdout, stderr := runCLI(t, context.Background(), append([]string{"knee", "single-inserts", "--db", db, "--step-duration", "250ms", "--out", out}, args...)...)
		if code != 0 {
			t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
		}
		r, _ := readOpen(t, out)
		return r, stdout
	}
	t.Run("passes at max", func(t *testing.T) {
		r, stdout := knee(t, "max", "--slo", "p99<500ms,late<5%", "--start", "20", "--max", "80")
		k := r.Knee
		if k == nil || k.Rate == nil || *k.Rate != 80 || k.FirstFailingRate != nil || k.Stop != "max-passed" {
			t.Fatalf("knee %+v", k)
		}
		if len(k.Probes) != 3 || len(r.Steps) != 3 || r.Steps[2].Rate != 80 || *k.Probes[2].Step != 2 {
			t.Fatalf("probes %+v steps %d", k.Probes, len(r.Steps))
		}
		if k.SLO != "p99<500ms,late<5%" || k.SLOApplied != "p99<500ms,late<5%,errors<1%" {
			t.Fatalf("slo %q applied %q", k.SLO, k.SLOApplied)
		}
		if k.Retries != 1 || k.TransientRates == nil || len(k.TransientRates) != 0 {
			t.Fatalf("retries %d transient %v, want 1 and []", k.Retries, k.TransientRates)
		}
		for _, want := range []string{"stop rule:", "re-runs: a probe that breaks the SLO is run once more", "one open-loop step of 250ms", "probe  1:", "knee: at least 80/s", "verdict per probe, by rate (# = order run):"} {
			if !strings.Contains(stdout, want) {
				t.Fatalf("console lacks %q:\n%s", want, stdout)
			}
		}
		// SQLite takes one writer at a time: one worker is no limit to
		// warn of there.
		if strings.Contains(stdout, "one worker (-c 1") {
			t.Fatalf("one-worker note on SQLite:\n%s", stdout)
		}
	})
	t.Run("fails at start", func(t *testing.T) {
		r, stdout := knee(t, "start", "--slo", "p50<1us", "--start", "20")
		k := r.Knee
		// The start rate failed, was run again (--retries 1 by default)
		// and failed again: only then does the search give up.
		if k == nil || k.Rate != nil || k.FirstFailingRate == nil || *k.FirstFailingRate != 20 || k.Stop != "start-failed" || len(k.Probes) != 2 {
			t.Fatalf("knee %+v", k)
		}
		for i, p := range k.Probes {
			if p.Rate != 20 || p.Pass || p.Retry != i || len(p.FailedTerms) == 0 || !strings.Contains(p.FailedTerms[0], "p50") || p.Step == nil || *p.Step != i {
				t.Fatalf("probe %d %+v", i, p)
			}
		}
		if len(r.Steps) != 2 || len(k.TransientRates) != 0 {
			t.Fatalf("%d steps, transient %v", len(r.Steps), k.TransientRates)
		}
		for _, want := range []string{"knee: none", "FAIL: p50", "FAIL again: p50", "at 20/s (probe 2): p50"} {
			if !strings.Contains(stdout, want) {
				t.Fatalf("console lacks %q:\n%s", want, stdout)
			}
		}
	})
	t.Run("run args", func(t *testing.T) {
		// The flags a run at the knee must repeat are recorded, and run
		// takes every one of them.
		r, _ := knee(t, "runargs", "--slo", "p99<500ms,late<5%", "--start", "20", "--max", "40", "--arrival", "poisson", "--late-after", "2s", "--seed", "7")
		want := []string{"--arrival=poisson", "--late-after=2s", "--seed=7"}
		if k := r.Knee; k == nil || !slices.Equal(k.RunArgs, want) {
			t.Fatalf("run args %v, want %v", r.Knee.RunArgs, want)
		}
		args := append([]string{"run", "single-inserts", "--db", db, "--rate", "20", "-T", "300ms", "--out", filepath.Join(dir, "runargs-run")}, r.Knee.RunArgs...)
		if code, stdout, stderr := runCLI(t, context.Background(), args...); code != 0 {
			t.Fatalf("run with the knee's run args: exit %d\n%s%s", code, stdout, stderr)
		}
	})
	t.Run("re-run long enough", func(t *testing.T) {
		// 250 ms at 1000/s holds 250 requests: a broken p99 is the 3rd
		// slowest of them. The re-run lasts 1 s, the 1,000 requests p99
		// needs, and the result says so.
		r, stdout := knee(t, "longer", "--slo", "p99<1us", "--start", "1000")
		k := r.Knee
		if k == nil || len(k.Probes) != 2 || len(r.Steps) != 2 {
			t.Fatalf("knee %+v, %d steps", k, len(r.Steps))
		}
		if k.Probes[0].DurationS != 0 || k.Probes[1].DurationS != 1 || k.Probes[1].Retry != 1 {
			t.Fatalf("probe durations %v then %v (want the search's 0.25 s, then 1 s)", k.Probes[0].DurationS, k.Probes[1].DurationS)
		}
		if d := r.Steps[1].DurationS; d < 0.9 || d > 1.5 || r.Steps[1].Scheduled < 900 {
			t.Fatalf("the re-run measured %v s and scheduled %d requests, want about 1 s and 1,000", d, r.Steps[1].Scheduled)
		}
		for _, want := range []string{"[run for 1s: p99 failed on too few requests; 1s at 1000/s holds 1000]", "re-runs of a probe that broke the SLO only by percentiles of too few requests"} {
			if !strings.Contains(stdout, want) {
				t.Fatalf("console lacks %q:\n%s", want, stdout)
			}
		}
	})
	t.Run("per operation", func(t *testing.T) {
		r, _ := knee(t, "perop", "--slo", "insert.p50<1us", "--start", "20", "--retries", "0")
		if k := r.Knee; k == nil || k.Stop != "start-failed" || len(k.Probes) != 1 || !strings.HasPrefix(k.Probes[0].FailedTerms[0], "insert.p50 ") {
			t.Fatalf("knee %+v", r.Knee)
		}
		code, stdout, stderr := runCLI(t, context.Background(), "knee", "single-inserts", "--db", db, "--slo", "new_order.p90<5s", "--out", filepath.Join(dir, "badop"))
		if code != 2 || !strings.Contains(stderr, `--slo: SLO term new_order.p90<5s: the workload has no operation "new_order" (it has: insert)`) {
			t.Fatalf("an operation the workload lacks: exit %d\n%s%s", code, stdout, stderr)
		}
	})
	t.Run("no re-runs", func(t *testing.T) {
		r, stdout := knee(t, "noretry", "--slo", "p50<1us", "--start", "20", "--retries", "0")
		if k := r.Knee; k == nil || k.Stop != "start-failed" || len(k.Probes) != 1 || k.Retries != 0 {
			t.Fatalf("knee %+v", k)
		}
		if !strings.Contains(stdout, "re-runs: none (--retries 0)") {
			t.Fatalf("console:\n%s", stdout)
		}
	})
}

func TestOpenLoopBadInput(t *testing.T) {
	dir := t.TempDir()
	db := "sqlite:" + filepath.Join(dir, "t.db")
	run := func(extra ...string) []string {
		return append([]string{"run", "single-inserts", "--db", db, "--out", filepath.Join(dir, "out")}, extra...)
	}
	knee := func(extra ...string) []string {
		return append([]string{"knee", "single-inserts", "--db", db, "--out", filepath.Join(dir, "out")}, extra...)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"rate with rates", run("--rate", "100", "--rates", "50:100:50"), "--rate and --rates are exclusive"},
		{"rates with ops", run("--rates", "50:100:50", "--ops", "10"), "--ops does not apply to a --rates ramp"},
		{"rates with duration", run("--rates", "50:100:50", "-T", "10s"), "--duration does not apply"},
		{"rates with warmup", run("--rates", "50:100:50", "--warmup", "1s"), "--warmup does not apply"},
		{"step without rates", run("--step", "1s"), "--step needs --rates"},
		{"step-warmup without rates", run("--rate", "10", "--step-warmup", "1s"), "--step-warmup needs --rates"},
		{"descending range", run("--rates", "20:10:5"), "stop 10 is below start 20"},
		{"not a rate", run("--rates", "abc"), `"abc" is not a rate`},
		{"zero rate in rates", run("--rates", "0"), "must be above 0"},
		{"negative rates", run("--rates", "-10:20:10"), "must be above 0"},
		{"zero step", run("--rates", "10:20:10", "--step", "0"), "--step must be at least 100ms"},
		{"1ms step", run("--rates", "100:200:50", "--step", "1ms"), "--step must be at least 100ms (a step measures a rate over its duration), got 1ms"},
		{"zero rate", run("--rate", "0"), "--rate must be above 0"},
		{"negative rate", run("-R", "-5"), "--rate must be above 0"},
		{"rate not a number", run("--rate", "fast"), "invalid argument"},
		{"bad arrival", run("--rate", "10", "--arrival", "zipf"), "--arrival must be uniform or poisson"},
		{"arrival in closed loop", run("--arrival", "poisson"), "--arrival applies to the open loop"},
		{"late-after in closed loop", run("--late-after", "2s"), "--late-after applies to the open loop"},
		{"zero late-after", run("--rate", "10", "--late-after", "0"), "--late-after must be positive"},
		{"zero repeat", run("--repeat", "0"), "--repeat must be at least 1"},
		{"knee without slo", knee(), "--slo is required"},
		{"knee slo without unit", knee("--slo", "p99<50"), "needs a unit"},
		{"knee slo unknown metric", knee("--slo", "p98<50ms"), "unknown metric"},
		{"knee slo without percent", knee("--slo", "late<1"), "write it with %"},
		{"knee zero start", knee("--slo", "p99<5ms", "--start", "0"), "--start must be above 0"},
		{"knee max below start", knee("--slo", "p99<5ms", "--start", "100", "--max", "50"), "--max 50 is below --start 100"},
		{"knee zero precision", knee("--slo", "p99<5ms", "--precision", "0%"), "--precision"},
		{"knee bad precision", knee("--slo", "p99<5ms", "--precision", "tight"), "not a percentage"},
		{"knee zero step", knee("--slo", "p99<5ms", "--step-duration", "0"), "--step-duration must be at least 100ms"},
		{"knee 10ms probe", knee("--slo", "p99<5ms", "--step-duration", "10ms"), "--step-duration must be at least 100ms"},
		{"knee --step as a ramp calls it", knee("--slo", "p99<5ms", "--step", "10ms"), "--step-duration must be at least 100ms"},
		{"knee negative retries", knee("--slo", "p99<5ms", "--retries", "-1"), "--retries must be between 0 and 5, got -1"},
		{"knee too many retries", knee("--slo", "p99<5ms", "--retries", "6"), "--retries must be between 0 and 5, got 6"},
		{"knee without workload", []string{"knee"}, "needs a workload"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, context.Background(), tc.args...)
			if code != ExitUsage {
				t.Fatalf("exit %d, want %d (stderr %q)", code, ExitUsage, stderr)
			}
			line := strings.TrimRight(stderr, "\n")
			if strings.Contains(line, "\n") || !strings.HasPrefix(line, "ceiling: ") {
				t.Fatalf("want one line starting with 'ceiling: ', got %q", stderr)
			}
			if !strings.Contains(line, tc.want) {
				t.Fatalf("error %q does not mention %q", line, tc.want)
			}
			if strings.Contains(stdout, "preparing") {
				t.Fatalf("a usage error must be caught before touching the database:\n%s", stdout)
			}
		})
	}
}

func TestSeedFlagShared(t *testing.T) {
	// inserts-deletes has its own --seed: one flag seeds data, choices and arrivals.
	code, out, _ := runCLI(t, context.Background(), "run", "inserts-deletes", "--help")
	if code != 0 || strings.Count(out, "--seed") != 1 || !strings.Contains(out, "also seeds the poisson arrivals") {
		t.Fatalf("help: exit %d\n%s", code, out)
	}
	code, out, _ = runCLI(t, context.Background(), "run", "single-inserts", "--help")
	if code != 0 || !strings.Contains(out, "--seed") || !strings.Contains(out, "--rates") || !strings.Contains(out, "-R, --rate") {
		t.Fatalf("help: exit %d\n%s", code, out)
	}
}

func showPtr(p *float64) string {
	if p == nil {
		return "null"
	}
	return strconv.FormatFloat(*p, 'f', 3, 64)
}

// TestThinPlan: before a knee search, a note says below which rate a probe
// holds too few requests for the SLO's percentile, and the probe length
// that measures it from the start rate; none when the start is above it
// or the SLO bounds no percentile.
func TestThinPlan(t *testing.T) {
	slo, err := knee.ParseSLO("p99<50ms,p50<5ms,late<1%")
	if err != nil {
		t.Fatal(err)
	}
	got := thinPlan(slo, 10, 10*time.Second)
	if !strings.Contains(got, "a 10s probe below 100/s holds fewer than the 1000 requests p99 needs") || !strings.Contains(got, "--step-duration 100s measures it from 10/s") {
		t.Fatalf("note: %q", got)
	}
	if got := thinPlan(slo, 100, 10*time.Second); got != "" {
		t.Fatalf("start at the rate that measures p99: %q", got)
	}
	other, _ := knee.ParseSLO("max<100ms,late<1%")
	if got := thinPlan(other, 1, time.Second); got != "" {
		t.Fatalf("no percentile: %q", got)
	}
}

// TestRunHint: a run tells the target whether its sessions run an open
// loop (a rate or a ramp of rates), which keeps them on their own threads
// up to more workers, and a closed loop of several workers that it will
// multiplex them.
func TestRunHint(t *testing.T) {
	m, err := all.Registry().Lookup("updates") // a workload whose workers do not pause
	if err != nil {
		t.Fatal(err)
	}
	u := m.New()
	for name, c := range map[string]struct {
		cfg                   runner.Config
		multiplexed, openLoop bool
	}{
		"closed loop": {runner.Config{Threads: 20, Duration: time.Second}, true, false},
		"rate":        {runner.Config{Threads: 20, Rate: 2000, Duration: time.Second}, false, true},
		"rates":       {runner.Config{Threads: 20, Steps: []runner.Step{{Rate: 100, Duration: time.Second}}}, false, true},
	} {
		h := runHint(20, c.cfg, u)
		if h.MaxConns != 20 || h.Multiplexed != c.multiplexed || h.OpenLoop != c.openLoop {
			t.Errorf("%s: %+v, want 20 conns, multiplexed %v, open loop %v", name, h, c.multiplexed, c.openLoop)
		}
	}
}
