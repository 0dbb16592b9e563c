package report

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/ceiling-db/ceiling/internal/diagnose"
	"github.com/ceiling-db/ceiling/internal/metrics"

	"github.com/ceiling-db/ceiling/internal/runner"
	"github.com/ceiling-db/ceiling/internal/target"
	"github.com/ceiling-db/ceiling/internal/workload"
)

// BuildBatches assembles the result of a bulk-load batch-size ramp: runs[i]
// is one closed-loop run of batches[i] rows per request, all on the same
// table one after the other. The summary covers every step; steps[] has one
// entry per batch size (Step.Batch set); intervals follow each other, each
// tagged with its step. p.Load is the load of one step.
func BuildBatches(p Params, batches []int, runs []*runner.Result) (*Result, error) {
	return buildSweep(p, sweepBatch, batches, runs)
}

// BuildThreads assembles the result of a thread-count ramp (run
// --threads-ramp): runs[i] is one closed-loop run with threads[i] workers,
// one after the other on the same data, like BuildBatches' (Step.Threads
// set). p.Load is the load of one step, its Threads the most of them.
func BuildThreads(p Params, threads []int, runs []*runner.Result) (*Result, error) {
	return buildSweep(p, sweepThreads, threads, runs)
}

// BuildBatchesRepeat and BuildThreadsRepeat assemble a closed-loop sweep
// run several times (--repeat): reps[k] is the k-th run's steps, as
// BuildBatches' and BuildThreads' runs (a run stopped early has fewer).
// Step i merges step i of every run (counters summed, histograms merged
// exactly) and carries the spread of its rate over the complete runs;
// runs[] holds each run's summary and steps, as a repeated ramp's does.
func BuildBatchesRepeat(p Params, batches []int, reps [][]*runner.Result) (*Result, error) {
	return buildSweepRepeat(p, sweepBatch, batches, reps)
}

// BuildThreadsRepeat: see BuildBatchesRepeat.
func BuildThreadsRepeat(p Params, threads []int, reps [][]*runner.Result) (*Result, error) {
	return buildSweepRepeat(p, sweepThreads, threads, reps)
}

func buildSweepRepeat(p Params, kind sweepKind, vals []int, reps [][]*runner.Result) (*Result, error) {
	var kept [][]*runner.Result
	for _, r := range reps {
		if len(r) > 0 {
			kept = append(kept, r)
		}
	}
	if len(kept) == 0 {
		return nil, fmt.Errorf("closed-loop ramp: no step ran")
	}
	docs := make([]*Result, len(kept))
	for k, r := range kept {
		d, err := buildSweep(p, kind, vals, r)
		if err != nil {
			return nil, err
		}
		if len(r) < len(vals) {
			d.Partial = true // stopped before its last step
		}
		docs[k] = d
	}
	// Step i of every run that reached it, merged.
	var steps []*runner.Result
	for i := range kept[0] {
		var same []*runner.Result
		for _, r := range kept {
			if i < len(r) {
				same = append(same, r[i])
			}
		}
		steps = append(steps, combine(same, false))
	}
	res, err := buildSweep(p, kind, vals, steps)
	if err != nil {
		return nil, err
	}
	addRuns(res, docs)
	setRepeatStats(res)
	return res, nil
}

// A closed-loop sweep varies one thing from step to step.
type sweepKind int

const (
	sweepBatch   sweepKind = iota // rows per request (bulk-load --batches)
	sweepThreads                  // workers (run --threads-ramp)
)

func buildSweep(p Params, kind sweepKind, vals []int, runs []*runner.Result) (*Result, error) {
	if len(runs) == 0 || len(runs) > len(vals) {
		return nil, fmt.Errorf("closed-loop ramp: %d runs for %d steps", len(runs), len(vals))
	}
	merged := combine(runs, true)
	var off time.Duration
	for i, r := range runs {
		for _, iv := range r.Intervals {
			iv.Start += off
			iv.End += off
			iv.Step = i
			merged.Intervals = append(merged.Intervals, iv)
		}
		if n := len(r.Intervals); n > 0 {
			off += r.Intervals[n-1].End
		}
	}
	res, err := Build(p, merged)
	if err != nil {
		return nil, err
	}
	for i := range res.Intervals {
		if i < len(merged.Intervals) {
			st := merged.Intervals[i].Step
			res.Intervals[i].Step = &st
		}
	}
	if kind == sweepThreads {
		// Build took every step's workers as p's: the share of their time
		// in think times is over each step's own thread count.
		res.Client.ThinkShare = nil
		var paused, avail float64
		for i, r := range runs {
			paused += r.PausedSeconds
			avail += float64(vals[i]) * r.Elapsed.Seconds()
		}
		if share := paused / avail; avail > 0 && share >= minThinkShare {
			res.Client.ThinkShare = f64(min(1, share))
		}
	}
	var total float64
	for i, r := range runs {
		s := sweepStep(p, i, r)
		v := vals[i]
		if kind == sweepThreads {
			s.Threads = &v
		} else {
			s.Batch = &v
			if r.Evidence != nil {
				s.LogBytesPerDataByte = LogRatio(r.Evidence.Counters, r.Total.Total().Bytes)
			}
		}
		res.Steps = append(res.Steps, s)
		total += r.Elapsed.Seconds()
	}
	sweepVerdicts(p, kind, res, runs)
	res.Load.DurationS = f64(total)
	if p.Load.Duration > 0 {
		res.Load.StepS = f64(p.Load.Duration.Seconds())
		res.Load.DurationS = f64(p.Load.Duration.Seconds() * float64(len(runs)))
	}
	if p.Load.Warmup > 0 {
		res.Load.StepWarmupS = f64(p.Load.Warmup.Seconds())
		res.Load.WarmupS = p.Load.Warmup.Seconds() * float64(len(runs))
	}
	return res, nil
}

// sweepVerdicts diagnoses each step's closed-loop run on its own (the
// merged figures mix batch sizes or thread counts: a request of 1 row and
// one of 4,096 averaged into one req/s), and gives the run the verdict of
// the step that did the most (MB/min loaded, or requests/s with threads),
// the load at its best, saying so.
func sweepVerdicts(p Params, kind sweepKind, res *Result, runs []*runner.Result) {
	best := -1
	score := func(s Step) *float64 {
		if kind == sweepThreads {
			return s.AchievedPerSec
		}
		return s.MBPerMin
	}
	for i, r := range runs {
		s := &res.Steps[i]
		if s.Completed == 0 {
			continue
		}
		one := p
		if s.Threads != nil {
			one.Load.Threads = *s.Threads
		}
		b, err := Build(one, r)
		if err != nil || b.Verdict == nil {
			continue
		}
		s.Verdict = b.Verdict
		if score(*s) != nil && (best < 0 || *score(*s) > *score(res.Steps[best])) {
			best = i
		}
	}
	if best < 0 {
		return
	}
	s := res.Steps[best]
	v := *s.Verdict
	var from string
	if kind == sweepBatch {
		from = fmt.Sprintf("from the %d-row batches, the size that loaded the most (%s MB/min)", *s.Batch, strconv.FormatFloat(*s.MBPerMin, 'f', 1, 64))
	} else {
		from = fmt.Sprintf("from the step at %s, the count that did the most requests/s (%s)", diagnose.Threads(*s.Threads), diagnose.Thousands(math.Round(*s.AchievedPerSec)))
	}
	v.Evidence = append(append([]string{}, v.Evidence...), from)
	res.Verdict = &v
}

// sweepStep builds the step of one closed-loop run of a sweep (the caller
// sets what it varies), with the workload's figures over it (tpcc: NOPM).
func sweepStep(p Params, i int, r *runner.Result) Step {
	cores := p.Cores
	el := r.Elapsed.Seconds()
	tot := r.Total.Total()
	s := Step{
		Index: i, Completed: tot.Requests, Failed: tot.ErrorCount(), ErrorsByClass: map[string]int64{},
		DurationS: el, Partial: r.Partial, LatencyMs: metrics.LatencyOf(tot.Hist),
	}
	for _, c := range metrics.ErrClasses() {
		if n := tot.Errors[c]; n > 0 {
			s.ErrorsByClass[c.String()] = n
		}
	}
	if el > 0 {
		s.AchievedPerSec = f64(perSec(tot.Requests, el))
		s.RowsPerSec = f64(perSec(tot.Rows, el))
		s.MBPerMin = mbRate(tot.Bytes, el, p.NoBytes)
		if r.ClientCPUSeconds >= 0 && cores > 0 {
			s.ClientCPUPct = f64(100 * r.ClientCPUSeconds / el / float64(cores))
		}
	}
	s.LogMBPerSec, s.LogSyncsPerSec, s.DataIOPS = ioRates(r.Evidence)
	if r.Evidence != nil {
		s.Costs = costsOf(r.Evidence.Counters, tot.Requests)
	}
	if p.Figures != nil && r.Observed != nil && el > 0 {
		sp := workload.Span{Seconds: el, Delta: r.Observed}
		if r.Evidence != nil {
			sp.Server = r.Evidence.Counters
		}
		if f := p.Figures(sp); len(f) > 0 {
			s.Figures = f
		}
	}
	return s
}

// LogRatio is the log bytes the server wrote per data byte loaded, or nil
// when the log bytes were not measured or no data was loaded.
func LogRatio(counters map[string]float64, dataBytes int64) *float64 {
	v, ok := counters[target.CtrLogBytes]
	if !ok || dataBytes <= 0 {
		return nil
	}
	return f64(v / float64(dataBytes))
}

// printBatches prints one line per batch size of a bulk-load ramp.
func printBatches(w io.Writer, steps []Step) {
	fmt.Fprintf(w, "\nbatch-size steps (closed loop; one request = one batch)\n")
	fmt.Fprintf(w, "%8s %9s %11s %10s %10s %9s %9s %10s %8s\n",
		"batch", "req/s", "rows/s", "MB/min", "log MB/s", "log/data", "p50 ms", "p99 ms", "failed")
	for _, s := range steps {
		flag := ""
		if s.Partial {
			flag = "partial"
		}
		line := fmt.Sprintf("%8d %9s %11s %10s %10s %9s %9s %10s %8d %7s", *s.Batch,
			opt(s.AchievedPerSec, "%.1f"), opt(s.RowsPerSec, "%.0f"), opt(s.MBPerMin, "%.2f"), opt(s.LogMBPerSec, "%.2f"),
			opt(s.LogBytesPerDataByte, "%.2f"), latMs(s.LatencyMs, p50), latMs(s.LatencyMs, p99),
			s.Failed, flag)
		fmt.Fprintln(w, strings.TrimRight(line, " "))
	}
	fmt.Fprintln(w, "  log/data = log bytes written by the server ÷ data bytes loaded (by SQL type sizes); n/a = not measured.")
	printSweepVerdicts(w, "verdict per batch size", steps, func(s Step) int { return *s.Batch })
}

// printSweepVerdicts prints the verdicts of a closed-loop ramp's steps,
// each labelled with what the ramp varies (value).
func printSweepVerdicts(w io.Writer, title string, steps []Step, value func(Step) int) {
	var vs []verdictRow
	for _, s := range steps {
		if s.Verdict != nil {
			vs = append(vs, verdictRow{label: strconv.Itoa(value(s)), v: s.Verdict})
		}
	}
	printVerdicts(w, title, vs)
}

func p50(l *metrics.Latency) float64 { return l.P50 }
func p99(l *metrics.Latency) float64 { return l.P99 }

// latMs prints one latency figure of l in ms, "n/a" without l.
func latMs(l *metrics.Latency, f func(*metrics.Latency) float64) string {
	if l == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.3f", f(l))
}

// ThreadScaling is step i's requests/s against the first measured step's
// of a thread ramp ("×1.93") and that per thread ("97%": 100% is linear
// scaling); "n/a" without rates.
func ThreadScaling(steps []Step, i int) (scale, perThread string) {
	s := steps[i]
	for _, first := range steps {
		if first.AchievedPerSec == nil || *first.AchievedPerSec <= 0 {
			continue
		}
		if s.AchievedPerSec == nil || s.Threads == nil || first.Threads == nil {
			break
		}
		x := *s.AchievedPerSec / *first.AchievedPerSec
		return fmt.Sprintf("×%.2f", x), fmt.Sprintf("%.0f%%", 100*x*float64(*first.Threads)/float64(*s.Threads))
	}
	return "n/a", "n/a"
}

// PeakThreadStep is the index of a thread ramp's step that did the most
// requests/s, -1 for other results.
func PeakThreadStep(steps []Step) int {
	best := -1
	for i, s := range steps {
		if s.Threads != nil && s.AchievedPerSec != nil && (best < 0 || *s.AchievedPerSec > *steps[best].AchievedPerSec) {
			best = i
		}
	}
	return best
}

// ThreadsSummary answers a thread ramp in one line: the count that did
// the most requests/s, and the fewest threads that did 90% of that ("most
// requests/s: 22,200 at 16 threads; 90% of it from 8 threads (18,955)"),
// "" without rates.
func ThreadsSummary(steps []Step) string {
	best := PeakThreadStep(steps)
	if best < 0 || *steps[best].AchievedPerSec <= 0 {
		return ""
	}
	b := steps[best]
	out := fmt.Sprintf("most requests/s: %s at %s", diagnose.Thousands(math.Round(*b.AchievedPerSec)), diagnose.Threads(*b.Threads))
	enough := -1
	for i, s := range steps {
		if s.Threads != nil && s.AchievedPerSec != nil && *s.AchievedPerSec >= 0.9**b.AchievedPerSec &&
			(enough < 0 || *s.Threads < *steps[enough].Threads) {
			enough = i
		}
	}
	if enough >= 0 && *steps[enough].Threads < *b.Threads {
		e := steps[enough]
		out += fmt.Sprintf("; 90%% of it from %s (%s)", diagnose.Threads(*e.Threads), diagnose.Thousands(math.Round(*e.AchievedPerSec)))
	}
	out += peakSpread(steps, best)
	if StepsHaveNOPM(steps) {
		// TPC-C: HammerDB's figure, whose peak can sit elsewhere (the
		// transactions' mix shifts as their rollbacks and retries do).
		top := -1
		for i, s := range steps {
			if v, ok := s.Figures["nopm"]; ok && s.Threads != nil && (top < 0 || v > steps[top].Figures["nopm"]) {
				top = i
			}
		}
		if top >= 0 {
			out += fmt.Sprintf("; most NOPM: %s at %s", StepNOPM(steps[top]), diagnose.Threads(*steps[top].Threads))
		}
	}
	return out
}

// peakSpread says, for a thread ramp run several times (--repeat), whether
// its best count's rate stood out from the others' beyond the run-to-run
// spread: the counts whose 95% interval of requests/s over the runs reaches
// the best's are as likely to be the best. "" without intervals.
func peakSpread(steps []Step, best int) string {
	st := steps[best].RepeatStats["achieved_per_sec"]
	if st == nil || st.CI95Low == nil {
		return ""
	}
	var near []string
	for i, s := range steps {
		if o := s.RepeatStats["achieved_per_sec"]; i != best && s.Threads != nil && o != nil && o.CI95High != nil && *o.CI95High >= *st.CI95Low {
			near = append(near, strconv.Itoa(*s.Threads))
		}
	}
	if len(near) == 0 {
		return fmt.Sprintf(" (over %d runs, beyond every other count's 95%% interval)", st.N)
	}
	counts := strings.Join(near, ", ") + " threads"
	if len(near) == 1 && near[0] == "1" {
		counts = "1 thread"
	}
	return fmt.Sprintf(" (over %d runs, within the run-to-run spread of %s: their 95%% intervals reach its own, so the best count is not told apart)",
		st.N, counts)
}

// StepsHaveNOPM says whether any step counted TPC-C's new orders.
func StepsHaveNOPM(steps []Step) bool {
	for _, s := range steps {
		if _, ok := s.Figures["nopm"]; ok {
			return true
		}
	}
	return false
}

// StepNOPM is a step's NOPM, "n/a" where it was not counted.
func StepNOPM(s Step) string {
	if v, ok := s.Figures["nopm"]; ok {
		return diagnose.Thousands(math.Round(v))
	}
	return "n/a"
}

// printThreads prints one line per thread count of a thread ramp, with
// each step's requests/s against the first step's (scale) and against
// the first step's per thread (efficiency: 100% = linear scaling).
func printThreads(w io.Writer, steps []Step) {
	fmt.Fprintf(w, "\nthread-count steps (closed loop; scale = req/s ÷ the first step's; per thread = scale ÷ threads ratio)\n")
	nopm := StepsHaveNOPM(steps)
	head := fmt.Sprintf("%8s %10s %7s %10s", "threads", "req/s", "scale", "per thread")
	if nopm {
		head += fmt.Sprintf(" %9s", "NOPM")
	}
	fmt.Fprintf(w, "%s %11s %10s %10s %9s %9s %9s %8s\n", head, "rows/s", "MB/min", "log MB/s", "p50 ms", "p99 ms", "CPU µs", "failed")
	for i, s := range steps {
		scale, per := ThreadScaling(steps, i)
		flag := ""
		if s.Partial {
			flag = "partial"
		}
		line := fmt.Sprintf("%8d %10s %7s %10s", *s.Threads, opt(s.AchievedPerSec, "%.1f"), scale, per)
		if nopm {
			line += fmt.Sprintf(" %9s", StepNOPM(s))
		}
		line += fmt.Sprintf(" %11s %10s %10s %9s %9s %9s %8d %7s",
			opt(s.RowsPerSec, "%.0f"), opt(s.MBPerMin, "%.2f"), opt(s.LogMBPerSec, "%.2f"),
			latMs(s.LatencyMs, p50), latMs(s.LatencyMs, p99), opt(s.Costs.CPUusPerOp, "%.0f"),
			s.Failed, flag)
		fmt.Fprintln(w, strings.TrimRight(line, " "))
	}
	fmt.Fprintln(w, "  CPU µs = the server's CPU per request (n/a where not measured).")
	if sum := ThreadsSummary(steps); sum != "" {
		fmt.Fprintf(w, "  %s\n", sum)
	}
	printSweepVerdicts(w, "verdict per thread count", steps, func(s Step) int { return *s.Threads })
}
