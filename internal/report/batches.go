package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/ceiling-db/ceiling/internal/metrics"

	"github.com/ceiling-db/ceiling/internal/runner"
	"github.com/ceiling-db/ceiling/internal/target"
)

// BuildBatches assembles the result of a bulk-load batch-size ramp: runs[i]
// is one closed-loop run of batches[i] rows per request, all on the same
// table one after the other. The summary covers every step; steps[] has one
// entry per batch size (Step.Batch set); intervals follow each other, each
// tagged with its step. p.Load is the load of one step.
func BuildBatches(p Params, batches []int, runs []*runner.Result) (*Result, error) {
	if len(runs) == 0 || len(runs) > len(batches) {
		return nil, fmt.Errorf("batch ramp: %d runs for %d batch sizes", len(runs), len(batches))
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
	var total float64
	for i, r := range runs {
		res.Steps = append(res.Steps, batchStep(i, batches[i], r, p.Cores))
		total += r.Elapsed.Seconds()
	}
	batchVerdicts(p, res, runs)
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

// batchVerdicts diagnoses each batch size's closed-loop run on its own
// (the merged figures mix batch sizes: a request of 1 row and one of 4,096
// averaged into one req/s), and gives the run the verdict of the batch
// size that loaded the most MB/min, the load at its best, saying so.
func batchVerdicts(p Params, res *Result, runs []*runner.Result) {
	best := -1
	for i, r := range runs {
		s := &res.Steps[i]
		if s.Completed == 0 {
			continue
		}
		one, err := Build(p, r)
		if err != nil || one.Verdict == nil {
			continue
		}
		s.Verdict = one.Verdict
		if s.MBPerMin != nil && (best < 0 || *s.MBPerMin > *res.Steps[best].MBPerMin) {
			best = i
		}
	}
	if best < 0 {
		return
	}
	s := res.Steps[best]
	v := *s.Verdict
	v.Evidence = append(append([]string{}, v.Evidence...),
		fmt.Sprintf("from the %d-row batches, the size that loaded the most (%s MB/min)", *s.Batch, strconv.FormatFloat(*s.MBPerMin, 'f', 1, 64)))
	res.Verdict = &v
}

// batchStep builds the step of one batch size from its closed-loop run.
func batchStep(i, batch int, r *runner.Result, cores int) Step {
	el := r.Elapsed.Seconds()
	tot := r.Total.Total()
	b := batch
	s := Step{
		Index: i, Batch: &b, Completed: tot.Requests, Failed: tot.ErrorCount(), ErrorsByClass: map[string]int64{},
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
		s.MBPerMin = f64(mbPerMin(tot.Bytes, el))
		if r.ClientCPUSeconds >= 0 && cores > 0 {
			s.ClientCPUPct = f64(100 * r.ClientCPUSeconds / el / float64(cores))
		}
	}
	s.LogMBPerSec, s.LogSyncsPerSec, s.DataIOPS = ioRates(r.Evidence)
	if r.Evidence != nil {
		s.Costs = costsOf(r.Evidence.Counters, tot.Requests)
		s.LogBytesPerDataByte = LogRatio(r.Evidence.Counters, tot.Bytes)
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
		lat := func(f func() float64) string {
			if s.LatencyMs == nil {
				return "n/a"
			}
			return fmt.Sprintf("%.3f", f())
		}
		flag := ""
		if s.Partial {
			flag = "partial"
		}
		line := fmt.Sprintf("%8d %9s %11s %10s %10s %9s %9s %10s %8d %7s", *s.Batch,
			opt(s.AchievedPerSec, "%.1f"), opt(s.RowsPerSec, "%.0f"), opt(s.MBPerMin, "%.2f"), opt(s.LogMBPerSec, "%.2f"),
			opt(s.LogBytesPerDataByte, "%.2f"), lat(func() float64 { return s.LatencyMs.P50 }), lat(func() float64 { return s.LatencyMs.P99 }),
			s.Failed, flag)
		fmt.Fprintln(w, strings.TrimRight(line, " "))
	}
	fmt.Fprintln(w, "  log/data = log bytes written by the server ÷ data bytes loaded (by SQL type sizes); n/a = not measured.")
	var vs []verdictRow
	for _, s := range steps {
		if s.Verdict != nil {
			vs = append(vs, verdictRow{label: strconv.Itoa(*s.Batch), v: s.Verdict})
		}
	}
	printVerdicts(w, "verdict per batch size", vs)
}
