package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-db/ceiling/internal/runner"
	"github.com/ceiling-db/ceiling/internal/target"
	"github.com/ceiling-db/ceiling/internal/workload"
)

// perMinute is a workload.Observer's Figures: "x_pm" per minute, and "tpm"
// from the server's commits when sampled.
func perMinute(s workload.Span) map[string]float64 {
	out := map[string]float64{"nopm": s.Delta["x"] * 60 / s.Seconds}
	if c, ok := s.Server[target.CtrCommits]; ok {
		out["tpm"] = c * 60 / s.Seconds
	}
	return out
}

func TestWorkloadFigures(t *testing.T) {
	p := Params{Workload: "w", Info: target.Info{Engine: "postgres"}, Figures: perMinute}
	r := &runner.Result{Started: time.Now(), Total: snapWith(10, time.Millisecond, 0), Elapsed: 30 * time.Second, ClientCPUSeconds: -1,
		Observed: map[string]float64{"x": 50}, Evidence: &runner.Evidence{Seconds: 30, Counters: map[string]float64{target.CtrCommits: 600}}}
	d, err := Build(p, r)
	if err != nil {
		t.Fatal(err)
	}
	if d.Figures["nopm"] != 100 || d.Figures["tpm"] != 1200 {
		t.Fatalf("figures %v, want nopm 100 and tpm 1200", d.Figures)
	}
	var out bytes.Buffer
	PrintSummary(&out, d)
	if !strings.Contains(out.String(), "NOPM              100") || !strings.Contains(out.String(), "TPM              1200") {
		t.Errorf("summary lacks the NOPM and TPM lines:\n%s", out.String())
	}

	// Without server commits TPM is n/a, never 0.
	r.Evidence = nil
	d, _ = Build(p, r)
	if _, ok := d.Figures["tpm"]; ok {
		t.Fatalf("tpm without server evidence: %v", d.Figures)
	}
	out.Reset()
	PrintSummary(&out, d)
	if !strings.Contains(out.String(), "TPM               n/a") {
		t.Errorf("summary lacks TPM n/a:\n%s", out.String())
	}

	// Repeats add up the runs' counters and durations.
	d, err = BuildRepeat(p, []*runner.Result{r, r})
	if err != nil {
		t.Fatal(err)
	}
	if d.Figures["nopm"] != 100 {
		t.Errorf("repeat figures %v, want nopm 100", d.Figures)
	}

	// A failed reading leaves the figures out and says why.
	r.Observed, r.ObserveErr = nil, "count new orders: boom"
	d, _ = Build(p, r)
	if d.Figures != nil || len(d.Notes) == 0 || !strings.Contains(d.Notes[len(d.Notes)-1], "boom") {
		t.Errorf("figures %v, notes %v", d.Figures, d.Notes)
	}
}

func TestWorkloadFiguresPerStep(t *testing.T) {
	p := Params{Workload: "w", Info: target.Info{Engine: "sqlite"}, Figures: perMinute,
		Load: runner.Config{Threads: 2, Steps: []runner.Step{{Rate: 10, Duration: 30 * time.Second}, {Rate: 20, Duration: 30 * time.Second}}}}
	step := func(rate, x float64) runner.StepResult {
		return runner.StepResult{Rate: rate, Elapsed: 30 * time.Second, Snap: snapWith(10, time.Millisecond, 0), ClientCPUSeconds: -1, Observed: map[string]float64{"x": x}}
	}
	r := &runner.Result{Started: time.Now(), Total: snapWith(20, time.Millisecond, 0), Elapsed: time.Minute, ClientCPUSeconds: -1,
		Steps: []runner.StepResult{step(10, 5), step(20, 10)}, Observed: map[string]float64{"x": 15}}
	d, err := Build(p, r)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Steps) != 2 || d.Steps[0].Figures["nopm"] != 10 || d.Steps[1].Figures["nopm"] != 20 || d.Figures["nopm"] != 15 {
		t.Fatalf("run figures %v, steps %+v", d.Figures, d.Steps)
	}
	var out bytes.Buffer
	PrintSummary(&out, d)
	if !strings.Contains(out.String(), "NOPM by step  10/s: 10, 20/s: 20") {
		t.Errorf("summary lacks the NOPM per step:\n%s", out.String())
	}
	// Repeats of a ramp add up each step's counters.
	d, err = BuildRepeat(p, []*runner.Result{r, r})
	if err != nil {
		t.Fatal(err)
	}
	if d.Steps[1].Figures["nopm"] != 20 || r.Steps[0].Observed["x"] != 5 {
		t.Errorf("repeated ramp: step figures %v; the first run's counters became %v", d.Steps[1].Figures, r.Steps[0].Observed)
	}
}

// TestPrintFiguresOthers: figures without a console line of their own are
// printed by their label, to three decimals; those a note states in words
// (bulk-load's) are not printed twice.
func TestPrintFiguresOthers(t *testing.T) {
	r := &Result{Figures: map[string]float64{"rows_checked": 1457119, "ratio_x": 1.14159, "log_bytes_per_data_byte": 1.14, "index_build_s": 8.8}}
	var out bytes.Buffer
	printFigures(&out, r)
	got := out.String()
	for _, want := range []string{"rows checked: 1457119\n", "ratio x: 1.142\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("lacks %q:\n%s", want, got)
		}
	}
	for _, not := range []string{"log bytes per", "log_bytes", "index build", "index_build"} {
		if strings.Contains(got, not) {
			t.Errorf("prints %q, which a note states:\n%s", not, got)
		}
	}
	// Only figures a note states: nothing at all, not even a blank line.
	out.Reset()
	printFigures(&out, &Result{Figures: map[string]float64{"log_bytes_per_data_byte": 1.14}})
	if out.Len() != 0 {
		t.Errorf("printed %q for figures that notes state", out.String())
	}
}

// TestMissingEvidenceLine: an n/a per-request cost is explained by the
// target's missing_evidence; with every cost given there is no such line.
func TestMissingEvidenceLine(t *testing.T) {
	info := target.Info{Engine: "mysql", Settings: map[string]string{"missing_evidence": "commits (Com_commit counts COMMIT statements, not autocommit ones)"}}
	p := Params{Workload: "w", Info: info}
	ctrs := map[string]float64{target.CtrLogBytes: 1000, target.CtrLogWrites: 10, target.CtrLogSyncs: 10, target.CtrDataReads: 0,
		target.CtrDataWrites: 0, target.CtrDataSyncs: 0, target.CtrServerCPUSec: 0.01}
	r := &runner.Result{Started: time.Now(), Total: snapWith(10, time.Millisecond, 0), Elapsed: 30 * time.Second, ClientCPUSeconds: -1,
		Evidence: &runner.Evidence{Seconds: 30, Counters: ctrs}}
	d, err := Build(p, r)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	PrintSummary(&out, d)
	if d.Costs.CommitsPerOp != nil || !strings.Contains(out.String(), "n/a commits") ||
		!strings.Contains(out.String(), "\n  n/a: not available from mysql: commits (Com_commit counts COMMIT statements, not autocommit ones)\n") {
		t.Fatalf("commits per op %v; summary:\n%s", d.Costs.CommitsPerOp, out.String())
	}
	ctrs[target.CtrCommits] = 10
	d, _ = Build(p, r)
	out.Reset()
	PrintSummary(&out, d)
	if d.Costs.AnyMissing() || strings.Contains(out.String(), "not available from") {
		t.Fatalf("every cost given (%+v), yet:\n%s", d.Costs, out.String())
	}
}
