package report

import (
	"slices"
	"strings"
	"testing"

	"github.com/ceiling-db/ceiling/internal/diagnose"
	"github.com/ceiling-db/ceiling/internal/knee"
	"github.com/ceiling-db/ceiling/internal/metrics"
	"github.com/ceiling-db/ceiling/internal/target"
)

// TestKneeVerdictAndTransients: a knee search's verdict is that of its
// first failing rate's last run, not of a probe whose failure did not
// recur (here the lowest saturated step); the transient lines name that
// probe with its worst interval by what broke the SLO: the one with the
// most late requests for a late term, the slowest for a p99 alone.
func TestKneeVerdictAndTransients(t *testing.T) {
	v := func(b string) *diagnose.Verdict {
		return &diagnose.Verdict{Bottleneck: b, Evidence: []string{b + " evidence"}}
	}
	one, two, three, four := 0, 1, 2, 3
	knee, ff := 40.0, 80.0
	res := &Result{
		Workload: Workload{Name: "single-inserts"},
		Load:     Load{Threads: 4},
		Target:   target.Info{DSN: "mysql://root:secret@127.0.0.1:3306/test", Durability: target.DurabilityInfo{Mode: target.DurabilityFull}},
		Steps: []Step{
			{Rate: 20, Verdict: v("none")},
			{Rate: 40, Verdict: v("storage-queue"), Saturated: true},
			{Rate: 40, Verdict: v("none")},
			{Rate: 80, Verdict: v("client"), Saturated: true},
		},
		Intervals: []IntervalPoint{
			{T: 1, Seconds: 1, Step: &two, LatencyMs: &metrics.Latency{P99: 900, Max: 950}},
			{T: 2, Seconds: 1, Step: &two, Late: 12, LatencyMs: &metrics.Latency{P99: 3, Max: 4}},
		},
		Knee: &Knee{Rate: &knee, FirstFailingRate: &ff, SLOApplied: "p99<300ms", Retries: 1, Stop: "converged", TransientRates: []float64{40},
			Probes: []KneeProbe{
				{Rate: 20, Pass: true, Step: &one},
				{Rate: 40, FailedTerms: []string{"late 12% ≥ 1%"}, Step: &two},
				{Rate: 40, Pass: true, Retry: 1, Step: &three},
				{Rate: 80, FailedTerms: []string{"p99 400ms ≥ 300ms"}, Step: &four},
			}},
	}
	setKneeVerdict(res)
	if res.Verdict == nil || res.Verdict.Bottleneck != "client" || !strings.Contains(strings.Join(res.Verdict.Evidence, "|"), "at 80/s (probe 4), the lowest rate that broke the SLO") {
		t.Fatalf("verdict %+v, want the 80/s probe's", res.Verdict)
	}
	if res.Steps[3].Verdict.Evidence[0] != "client evidence" || len(res.Steps[3].Verdict.Evidence) != 1 {
		t.Fatalf("the step's own verdict was changed: %+v", res.Steps[3].Verdict)
	}
	lines := TransientLines(res)
	if len(lines) != 3 || !strings.Contains(lines[0], "1 of 4 probes") ||
		lines[1] != "  40/s (probe 2): late 12% ≥ 1%; worst interval: 12 late, p99 3 ms, max 4 ms, 1-2 s into the probe" ||
		!strings.HasSuffix(lines[2], "(ceiling run single-inserts --rate 40 -T 10m -c 4 --durability full --db 'mysql://root:xxxxx@127.0.0.1:3306/test')") {
		t.Fatalf("transient lines:\n%s", strings.Join(lines, "\n"))
	}
	// The same probe broken by its p99 alone: the slow interval, not the
	// one where a request of the stall went late.
	res.Knee.Probes[1].FailedTerms = []string{"p99 900ms ≥ 300ms"}
	if lines := TransientLines(res); len(lines) != 3 || lines[1] != "  40/s (probe 2): p99 900ms ≥ 300ms; worst interval: p99 900 ms, max 950 ms, 0-1 s into the probe" {
		t.Fatalf("p99 broken: transient lines:\n%s", strings.Join(lines, "\n"))
	}
	res.Knee.Probes[1].FailedTerms = []string{"late 12% ≥ 1%"}
	// No failing rate: the passing run at the knee.
	res.Knee.FirstFailingRate, res.Knee.Rate = nil, &ff
	res.Knee.Probes[3].Pass, res.Knee.Probes[3].FailedTerms = true, nil
	setKneeVerdict(res)
	if !strings.Contains(strings.Join(res.Verdict.Evidence, "|"), "at 80/s (probe 4), the highest rate that met the SLO before the search stopped (converged)") {
		t.Fatalf("verdict %+v", res.Verdict)
	}
	res.Knee.Stop = "max-passed"
	setKneeVerdict(res)
	if !strings.Contains(strings.Join(res.Verdict.Evidence, "|"), "at 80/s (probe 4), the highest rate that met the SLO (none broke it)") {
		t.Fatalf("verdict %+v", res.Verdict)
	}
}

// TestStepVerdictsKeptUp: a step that ran at its rate is marked, so its
// verdict does not read as the ramp's ceiling.
func TestStepVerdictsKeptUp(t *testing.T) {
	v := func(b string) *diagnose.Verdict {
		return &diagnose.Verdict{Bottleneck: b, Evidence: []string{b + " evidence"}}
	}
	var out strings.Builder
	printStepVerdicts(&out, "verdict per step", []rampRow{
		{label: "1", step: Step{Rate: 500, Verdict: v("commit-flush")}},
		{label: "2", step: Step{Rate: 2000, Verdict: v("none")}},
		{label: "3", step: Step{Rate: 50000, Verdict: v("client"), Saturated: true}},
	})
	got := out.String()
	for _, want := range []string{"      1 commit-flush (kept up) — commit-flush evidence\n", "      2 none — none evidence\n", "      3 client — client evidence\n", "(kept up) = the step ran at its rate"} {
		if !strings.Contains(got, want) {
			t.Errorf("lacks %q:\n%s", want, got)
		}
	}
	out.Reset()
	printStepVerdicts(&out, "verdict per step", []rampRow{{label: "1", step: Step{Rate: 500, Verdict: v("cpu"), Saturated: true}}})
	if strings.Contains(out.String(), "kept up") {
		t.Errorf("no kept-up step, yet:\n%s", out.String())
	}
}

// TestStepVerdictsGrouped: neighbouring steps with the same verdict line
// take one line (a MariaDB knee of 22 probes printed "none — no clear
// bottleneck" 22 times); different lines stay apart, in order.
func TestStepVerdictsGrouped(t *testing.T) {
	v := func(b, ev string) *diagnose.Verdict {
		return &diagnose.Verdict{Bottleneck: b, Evidence: []string{ev}}
	}
	var out strings.Builder
	printStepVerdicts(&out, "verdict per step", []rampRow{
		{label: "1", step: Step{Rate: 10, Verdict: v("none", "no clear bottleneck: no rule matched")}},
		{label: "2", step: Step{Rate: 20, Verdict: v("none", "no clear bottleneck: no rule matched")}},
		{label: "16", step: Step{Rate: 30, Verdict: v("none", "no clear bottleneck: no rule matched")}},
		{label: "21", step: Step{Rate: 40, Verdict: v("cpu", "CPU 90%"), Saturated: true}},
		{label: "12", step: Step{Rate: 50, Verdict: v("none", "no clear bottleneck: no rule matched")}},
	})
	want := "  verdict per step:\n" +
		"  1 … 16 (3) none — no clear bottleneck: no rule matched\n" +
		"     21 cpu — CPU 90%\n" +
		"     12 none — no clear bottleneck: no rule matched\n"
	if out.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", out.String(), want)
	}
}

// TestStepVerdictsNearest: a step with no bottleneck names the rules it
// came closest to (a PostgreSQL ramp's 500/s step: commit-flush, log syncs
// 35% of each request's time < 40%, between steps that matched it), by
// name only, so neighbours near the same rule with other figures still
// share a line.
func TestStepVerdictsNearest(t *testing.T) {
	none := func(near ...string) *diagnose.Verdict {
		v := &diagnose.Verdict{Bottleneck: diagnose.None, Evidence: []string{"no clear bottleneck: no rule matched", "500 req/s with 1 thread"}}
		for _, n := range near {
			v.Evidence = append(v.Evidence, "nearest: "+n)
		}
		return v
	}
	var out strings.Builder
	printStepVerdicts(&out, "verdict per step", []rampRow{
		{label: "1", step: Step{Rate: 500, Verdict: none("commit-flush — log syncs are 35% of each request's time < 40%")}},
		{label: "2", step: Step{Rate: 1000, Verdict: none("commit-flush — log syncs are 38% of each request's time < 40%")}},
		{label: "3", step: Step{Rate: 1500, Verdict: none("commit-flush — log syncs are 39% of each request's time < 40%", "cpu — CPU 70% of the server's cores < 85%")}},
		{label: "4", step: Step{Rate: 2000, Verdict: none()}},
	})
	want := "  verdict per step:\n" +
		"  1 … 2 (2) none — no clear bottleneck: no rule matched (nearest: commit-flush)\n" +
		"      3 none — no clear bottleneck: no rule matched (nearest: commit-flush, cpu)\n" +
		"      4 none — no clear bottleneck: no rule matched\n"
	if out.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", out.String(), want)
	}
}

// TestWorkerBoundNote: a saturated step whose requests waited for a free
// worker suggests raising -c, unless the step's verdict names a saturated
// resource of the database (a real run: PostgreSQL -R 60000 -c 8 relaxed,
// host 99% busy, verdict cpu), where more workers would only queue in it.
func TestWorkerBoundNote(t *testing.T) {
	s := Step{Rate: 60000, Saturated: true, StartLagMs: &metrics.Latency{P50: 1000.4}, SchedLagMs: &metrics.Latency{P99: 0.001}}
	if n := workerBound(s, 8); !strings.Contains(n, "all 8 workers were busy") || !strings.Contains(n, "raise -c") {
		t.Errorf("no verdict: %q", n)
	}
	s.Verdict = &diagnose.Verdict{Bottleneck: diagnose.CPU}
	if n := workerBound(s, 8); strings.Contains(n, "raise -c") || !strings.Contains(n, "the step's verdict is cpu: the database was the limit there, not the number of workers") {
		t.Errorf("cpu-bound step: %q", n)
	}
	// Commit-flush: more sessions share their flushes, so more workers help.
	s.Verdict = &diagnose.Verdict{Bottleneck: diagnose.CommitFlush}
	if n := workerBound(s, 8); !strings.Contains(n, "raise -c") {
		t.Errorf("commit-flush step: %q", n)
	}
}

// TestKneeRunCommand: the command suggested to check a knee over a longer
// run repeats the flags the search was given that shape the data and the
// arrivals, quoted for a shell where needed, and never the password.
func TestKneeRunCommand(t *testing.T) {
	r := &Result{Workload: Workload{Name: "updates"}, Load: Load{Threads: 8}}
	r.Target.DSN = "postgres://app:secret@db1/bench"
	r.Target.Durability.Mode = "relaxed"
	r.Knee = &Knee{RunArgs: []string{"--rows=20000", "--arrival=poisson", "--note=it's 2"}}
	got := kneeRunCommand(r, 5760)
	want := `ceiling run updates --rate 5760 -T 10m -c 8 --durability relaxed --db 'postgres://app:xxxxx@db1/bench' --rows=20000 --arrival=poisson '--note=it'\''s 2'`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	r.Knee.RunArgs = nil // a result from before run_args: the flags ceiling knows of
	if got := kneeRunCommand(r, 5760); strings.Contains(got, "--rows") || !strings.HasSuffix(got, "--db 'postgres://app:xxxxx@db1/bench'") {
		t.Errorf("without run args: %s", got)
	}
}

// TestKneeAnswerThinStart: a search that fails at its start rate only on
// a percentile taken from too few requests does not advise a lower start
// (fewer requests still) but a probe long enough to measure it; any other
// failure at the start keeps "try a lower --start".
func TestKneeAnswerThinStart(t *testing.T) {
	k := &Knee{SLOApplied: "p99<5ms,late<1%,errors<1%", Start: 10, Stop: "start-failed", StepS: 10,
		Probes: []KneeProbe{
			{Rate: 10, FailedTerms: []string{"p99 13.119ms ≥ 5ms (of 100 requests: the 2nd slowest)"}, ThinTerms: []string{"p99"}},
			{Rate: 10, Retry: 1, FailedTerms: []string{"p99 6.507ms ≥ 5ms (of 100 requests: the 2nd slowest)"}, ThinTerms: []string{"p99"}},
		}}
	got := KneeAnswer(k)
	if !strings.Contains(got, "only by its p99, taken from too few requests") || !strings.Contains(got, "needs 100s for 1000 requests") || strings.Contains(got, "lower --start") {
		t.Fatalf("thin start: %s", got)
	}
	k.Probes[1].FailedTerms = append(k.Probes[1].FailedTerms, "late 3.00% ≥ 1%") // the re-run was also late
	if got := KneeAnswer(k); !strings.HasSuffix(got, "; try a lower --start") {
		t.Fatalf("a start that also failed otherwise: %s", got)
	}
}

// TestKneeFlatLatency: figures of a real search (updates on PostgreSQL,
// p99<5ms): the p99 at 10/s was already that at the first failing rate,
// so the verdict says the knee is not a capacity; where the latency grew
// with the rate, or the failing rate fell behind, it does not.
func TestKneeFlatLatency(t *testing.T) {
	idx := []int{0, 1, 2, 3, 4}
	build := func(lowP99, lowP99Again float64, failSaturated bool) *Result {
		kr, ff := 75.0, 77.5
		return &Result{
			Workload: Workload{Name: "updates"},
			Steps: []Step{
				{Rate: 10, Completed: 100, LatencyMs: &metrics.Latency{P99: lowP99}, Verdict: &diagnose.Verdict{Bottleneck: "none"}},
				{Rate: 10, Completed: 100, LatencyMs: &metrics.Latency{P99: lowP99Again}, Verdict: &diagnose.Verdict{Bottleneck: "none"}},
				{Rate: 75, Completed: 750, LatencyMs: &metrics.Latency{P99: 4.915}, Verdict: &diagnose.Verdict{Bottleneck: "none"}},
				{Rate: 77.5, Completed: 775, LatencyMs: &metrics.Latency{P99: 5.291}, Verdict: &diagnose.Verdict{Bottleneck: "none"}},
				{Rate: 77.5, Completed: 775, LatencyMs: &metrics.Latency{P99: 5.187}, Saturated: failSaturated, Verdict: &diagnose.Verdict{Bottleneck: "none"}},
			},
			Knee: &Knee{Rate: &kr, FirstFailingRate: &ff, SLOApplied: "p99<5ms,late<1%,errors<1%", Retries: 1, Stop: "converged", TransientRates: []float64{10},
				Probes: []KneeProbe{
					{Rate: 10, FailedTerms: []string{"p99 5.335ms ≥ 5ms"}, Step: &idx[0]},
					{Rate: 10, Pass: true, Retry: 1, Step: &idx[1]},
					{Rate: 75, Pass: true, Step: &idx[2]},
					{Rate: 77.5, FailedTerms: []string{"p99 5.291ms ≥ 5ms"}, Step: &idx[3]},
					{Rate: 77.5, FailedTerms: []string{"p99 5.187ms ≥ 5ms"}, Retry: 1, Step: &idx[4]},
				}},
		}
	}
	res := build(5.335, 4.987, false)
	setKneeVerdict(res)
	ev := strings.Join(res.Verdict.Evidence, "|")
	if !strings.Contains(ev, "latency did not grow with the rate: p99 4.99 ms at 10/s (probe 2), 5.19 ms at 77.5/s, which kept up with its rate; p99<5ms is about this target's latency at any load") {
		t.Fatalf("flat latency not said: %q", ev)
	}
	if n := len(res.Verdict.Suggestions); n != 1 || !strings.Contains(res.Verdict.Suggestions[0].Action, "a looser p99") {
		t.Fatalf("suggestions %+v", res.Verdict.Suggestions)
	}
	if len(res.Steps[4].Verdict.Suggestions) != 0 {
		t.Fatalf("the step's own verdict was changed: %+v", res.Steps[4].Verdict)
	}
	// 10/s at 3.9 ms at best: the latency grew (5.19 > 3.9/0.9).
	res = build(4.0, 3.9, false)
	setKneeVerdict(res)
	if ev := strings.Join(res.Verdict.Evidence, "|"); strings.Contains(ev, "did not grow") {
		t.Fatalf("latency grew, but: %q", ev)
	}
	// The lowest rate's best run counts, not a failure there that did not
	// recur: 4.5 ms is under 90% of 5.19 ms, whatever the 5.34 ms run.
	res = build(5.335, 4.5, false)
	setKneeVerdict(res)
	if ev := strings.Join(res.Verdict.Evidence, "|"); strings.Contains(ev, "did not grow") {
		t.Fatalf("the lowest rate's best run was well under, but: %q", ev)
	}
	// The failing rate fell behind: a capacity, whatever the latency.
	res = build(5.335, 4.987, true)
	setKneeVerdict(res)
	if ev := strings.Join(res.Verdict.Evidence, "|"); strings.Contains(ev, "did not grow") {
		t.Fatalf("saturated at the failing rate, but: %q", ev)
	}

	// The start rate failed, kept up, on a p99 of 1000 requests (a real
	// search: 10/s, p99 6.33 ms of 100 requests, then 9.71 ms of 1000): the
	// latency at rest, not the rate; a lower start is not the advice.
	start := func(thinAgain bool) *Result {
		ff := 10.0
		again := KneeProbe{Rate: 10, FailedTerms: []string{"p99 9.711ms ≥ 5ms"}, Retry: 1, Step: &idx[1]}
		if thinAgain {
			again.ThinTerms = []string{"p99"}
		}
		return &Result{
			Workload: Workload{Name: "updates"},
			Steps: []Step{
				{Rate: 10, Completed: 100, LatencyMs: &metrics.Latency{P99: 6.327}, Verdict: &diagnose.Verdict{Bottleneck: "none"}},
				{Rate: 10, Completed: 1000, LatencyMs: &metrics.Latency{P99: 9.711}, Verdict: &diagnose.Verdict{Bottleneck: "commit-flush"}},
			},
			Knee: &Knee{FirstFailingRate: &ff, Start: 10, SLOApplied: "p99<5ms,late<1%,errors<1%", Retries: 1, Stop: "start-failed",
				Probes: []KneeProbe{{Rate: 10, FailedTerms: []string{"p99 6.327ms ≥ 5ms (of 100 requests: the 2nd slowest)"}, ThinTerms: []string{"p99"}, NeedRequests: 1000, Step: &idx[0]}, again}},
		}
	}
	res = start(false)
	setKneeVerdict(res)
	if ev := strings.Join(res.Verdict.Evidence, "|"); res.Verdict.Bottleneck != "commit-flush" ||
		!strings.Contains(ev, "the target kept up with 10/s, the start rate, and p99 was 9.71 ms there (probe 2, of enough requests): its latency at rest is above p99<5ms") {
		t.Fatalf("start failed at rest: %s %q", res.Verdict.Bottleneck, ev)
	}
	if a := Answer(res); strings.Contains(a, "lower --start") || !strings.HasSuffix(a, "so its latency at rest is what breaks the SLO (the verdict says what it is made of)") {
		t.Fatalf("answer %q", a)
	}
	// Every failure on too few requests: the thin-start advice stands.
	res = start(true)
	setKneeVerdict(res)
	if ev := strings.Join(res.Verdict.Evidence, "|"); strings.Contains(ev, "latency at rest") || strings.Contains(Answer(res), "latency at rest") {
		t.Fatalf("thin failures only, but: %q / %q", ev, Answer(res))
	}

	// A search that converged near its start (25/s passes, 37.5/s fails,
	// less than twice 25/s): 50/s, twice the lowest rate, broke p99 in both
	// runs while keeping up, no higher than 25/s did (figures of a real
	// search, p99<5ms, 40 s probes).
	kr, ff := 25.0, 37.5
	steps := []Step{}
	var probes []KneeProbe
	for i, f := range []struct {
		rate, p99 float64
		pass      bool
	}{{25, 5.627, false}, {25, 4.775, true}, {50, 5.215, false}, {50, 5.439, false}, {37.5, 6.527, false}, {37.5, 9.775, false}} {
		steps = append(steps, Step{Rate: f.rate, Completed: int64(40 * f.rate), LatencyMs: &metrics.Latency{P99: f.p99}, Verdict: &diagnose.Verdict{Bottleneck: "none"}})
		probes = append(probes, KneeProbe{Rate: f.rate, Pass: f.pass, Step: &[]int{i}[0]})
	}
	res = &Result{Workload: Workload{Name: "updates"}, Steps: steps,
		Knee: &Knee{Rate: &kr, FirstFailingRate: &ff, SLOApplied: "p99<5ms,late<1%,errors<1%", Retries: 1, Stop: "converged", Probes: probes}}
	setKneeVerdict(res)
	if ev := strings.Join(res.Verdict.Evidence, "|"); !strings.Contains(ev, "latency did not grow with the rate: p99 4.78 ms at 25/s (probe 2), 5.21 ms at 50/s, which kept up with its rate") {
		t.Fatalf("converged near the start: %q", ev)
	}
	// 50/s fell behind: nothing at twice the lowest rate kept up.
	res.Steps[3].Saturated = true
	setKneeVerdict(res)
	if ev := strings.Join(res.Verdict.Evidence, "|"); strings.Contains(ev, "did not grow") {
		t.Fatalf("50/s saturated, but: %q", ev)
	}
}

// TestKneeFailsBelow: rates below the knee that broke the SLO while kept
// up with are named after the answer (figures of a real search, updates
// on PostgreSQL with p50<1ms: 10-80/s failed, 160/s passed, the knee
// 4000/s), the thin ones said; a search whose scan found no passing rate
// says how far it looked instead of advising a lower start.
func TestKneeFailsBelow(t *testing.T) {
	kr, ff := 4000.0, 4160.0
	k := &Knee{Rate: &kr, FirstFailingRate: &ff, Start: 10, SLOApplied: "p50<1ms,late<1%,errors<1%", Retries: 1, Stop: "converged",
		FailsBelow: []float64{10, 20, 40, 80}}
	for _, p := range []struct {
		rate       float64
		pass, thin bool
	}{{10, false, true}, {10, false, true}, {20, false, false}, {40, false, false}, {80, false, false}, {160, true, false}, {4000, true, false}, {4160, false, false}} {
		kp := KneeProbe{Rate: p.rate, Pass: p.pass}
		if !p.pass {
			kp.FailedTerms = []string{"p50 2.2ms ≥ 1ms"}
		}
		if p.thin {
			kp.ThinTerms = []string{"p50"}
		}
		k.Probes = append(k.Probes, kp)
	}
	got := KneeAnswer(k)
	if !strings.HasPrefix(got, "knee: 4000/s meets p50<1ms,late<1%,errors<1%; 4160/s does not; below 160/s it fails too: 10/s, 20/s, 40/s and 80/s broke it while keeping up") ||
		!strings.HasSuffix(got, ", though 10/s only by a percentile of too few requests") {
		t.Fatalf("answer %q", got)
	}
	k.FailsBelow = nil
	if got := KneeAnswer(k); strings.Contains(got, "below") {
		t.Fatalf("no rate failed below, but: %q", got)
	}

	// None passed: the scan went to 640/s.
	start := 10.0
	k = &Knee{FirstFailingRate: &start, Start: 10, SLOApplied: "p99<1ms,late<1%,errors<1%", Stop: "start-failed", FailsBelow: []float64{10, 20, 40, 80, 160, 320, 640},
		Probes: []KneeProbe{{Rate: 10, FailedTerms: []string{"p99 7ms ≥ 1ms"}}}}
	if got := KneeAnswer(k); !strings.HasSuffix(got, "fails already at the start rate 10/s, and at every rate above it probed up to 640/s") {
		t.Fatalf("start failed, scanned: %q", got)
	}
}

// TestKeptUp: a probe kept up when it ran at its rate by the ramp's
// saturation rule.
func TestKeptUp(t *testing.T) {
	for _, tc := range []struct {
		f    knee.Figures
		want bool
	}{
		{knee.Figures{Rate: 100, Achieved: 99.9, Scheduled: 1000, Completed: 999}, true},
		{knee.Figures{Rate: 100, Achieved: 90, Scheduled: 1000, Completed: 900}, false},           // achieved < 95%
		{knee.Figures{Rate: 100, Achieved: 98, Scheduled: 1000, Completed: 980, Late: 20}, false}, // late 2%
		{knee.Figures{Rate: 100, Scheduled: 1000}, false},                                         // nothing completed
	} {
		if got := KeptUp(tc.f); got != tc.want {
			t.Errorf("%+v: kept up %v, want %v", tc.f, got, tc.want)
		}
	}
}

// TestKneeNarrowBetweenFailures: a knee that passed narrowly, with rates
// failing below it (the low-rate scan) and above it and no rate passing
// with room, is where the spread fell (figures of a real search:
// PostgreSQL updates, 8 threads, p99<5ms, 5 s probes: only 640/s passed,
// at 4.86 ms); where other rates passed well under the limit (p50<1ms:
// 0.60-0.87 ms from 320/s to 2560/s), the knee stands.
func TestKneeNarrowBetweenFailures(t *testing.T) {
	type pr struct {
		rate      float64
		pass      bool
		completed int64
		fig       float64
	}
	build := func(slo string, first float64, kneeRate float64, below []float64, probes []pr, p50 bool) *Result {
		res := &Result{Workload: Workload{Name: "updates"}}
		k := &Knee{Rate: &kneeRate, FirstFailingRate: &first, SLOApplied: slo, Retries: 1, Stop: "converged", Start: 10, FailsBelow: below}
		for i, p := range probes {
			lat := &metrics.Latency{P99: p.fig}
			if p50 {
				lat = &metrics.Latency{P50: p.fig, P99: 5 * p.fig}
			}
			res.Steps = append(res.Steps, Step{Rate: p.rate, Completed: p.completed, LatencyMs: lat, Verdict: &diagnose.Verdict{Bottleneck: "none"}})
			kp := KneeProbe{Rate: p.rate, Pass: p.pass, Step: &[]int{i}[0]}
			if !p.pass {
				kp.FailedTerms = []string{"broken"}
			}
			k.Probes = append(k.Probes, kp)
		}
		res.Knee = k
		return res
	}
	res := build("p99<5ms,late<1%,errors<1%", 660, 640, []float64{10, 20, 40, 80, 160, 320}, []pr{
		{10, false, 500, 5.767}, {20, false, 100, 9.695}, {40, false, 200, 7.131}, {80, false, 400, 5.987}, {160, false, 800, 5.159},
		{320, false, 1600, 5.767}, {640, true, 3200, 4.859}, {1280, false, 6400, 8.119}, {960, false, 4800, 6.943}, {800, false, 4000, 7.823},
		{720, false, 3600, 6.931}, {680, false, 3400, 5.615}, {660, false, 3300, 8.199}, {660, false, 3300, 7.859}}, false)
	setKneeVerdict(res)
	ev := strings.Join(res.Verdict.Evidence, "|")
	if !strings.Contains(ev, "640/s passed narrowly (p99 4.86 ms, probe 7) between rates that broke p99<5ms below it (10/s, 20/s, 40/s, 80/s, 160/s and 320/s) and above it (7.86 ms at 660/s)") {
		t.Fatalf("spread not said: %q", ev)
	}
	if !slices.ContainsFunc(res.Verdict.Suggestions, func(s diagnose.Suggestion) bool { return strings.Contains(s.Action, "a looser p99") }) {
		t.Errorf("suggestions %+v", res.Verdict.Suggestions)
	}

	res = build("p50<1ms,late<1%,errors<1%", 4640, 4480, []float64{10, 20, 40, 80, 160}, []pr{
		{10, false, 500, 2.2}, {320, true, 1600, 0.873}, {640, true, 3200, 0.715}, {2560, true, 12800, 0.604},
		{4480, true, 22400, 0.97}, {4640, false, 23200, 1.659}, {4640, false, 23200, 1.44}}, true)
	setKneeVerdict(res)
	if ev := strings.Join(res.Verdict.Evidence, "|"); strings.Contains(ev, "passed narrowly") || strings.Contains(ev, "did not grow") {
		t.Errorf("a knee with room below it: %q", ev)
	}
}
