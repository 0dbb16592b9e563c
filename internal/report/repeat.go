package report

import (
	"cmp"
	"fmt"
	"time"

	"github.com/ceiling-db/ceiling/internal/metrics"
	"github.com/ceiling-db/ceiling/internal/runner"
)

// RunSummary is the headline figures of one repeat (runs[] in the result).
type RunSummary struct {
	Run            int              `json:"run"` // 1-based
	StartedAt      time.Time        `json:"started_at"`
	Partial        bool             `json:"partial"`
	ElapsedS       float64          `json:"elapsed_s"`
	Requests       int64            `json:"requests"`
	RequestsPerSec float64          `json:"requests_per_sec"`
	RowsPerSec     float64          `json:"rows_per_sec"`
	MBPerMin       *float64         `json:"mb_per_min"`
	Errors         int64            `json:"errors"`
	Late           *int64           `json:"late"`     // open loop; null in closed loop
	LatePct        *float64         `json:"late_pct"` // open loop, of scheduled
	LatencyMs      *metrics.Latency `json:"latency_ms"`
	Costs          Costs            `json:"costs"`
	// RoundTripsPerRequest and LogDeviceFlushesPerOp are this run's
	// summary.round_trips_per_request and log_device.flushes_per_op;
	// absent where the run did not measure them.
	RoundTripsPerRequest  *float64  `json:"round_trips_per_request,omitempty"`
	LogDeviceFlushesPerOp *float64  `json:"log_device_flushes_per_op,omitempty"`
	Steps                 []RunStep `json:"steps,omitempty"` // open loop: each step's figures in this run
	// InFlightAtEnd is this run's summary.in_flight_at_end, absent when
	// nothing was left waiting at its end.
	InFlightAtEnd *InFlightAtEnd `json:"in_flight_at_end,omitempty"`
}

// RunStep is one step of one repeat.
type RunStep struct {
	Rate float64 `json:"rate"`
	// Threads and Batch are a closed-loop sweep's step (--threads-ramp,
	// --batches), as in steps[]; absent for rate steps.
	Threads        *int     `json:"threads,omitempty"`
	Batch          *int     `json:"batch,omitempty"`
	MBPerMin       *float64 `json:"mb_per_min,omitempty"` // batch steps
	NOPM           *float64 `json:"nopm,omitempty"`       // tpcc: the step's new orders per minute
	AchievedPerSec *float64 `json:"achieved_per_sec"`
	LatePct        *float64 `json:"late_pct"`
	P99Ms          *float64 `json:"p99_ms"`
	Saturated      bool     `json:"saturated"`
}

func summaryOf(n int, d *Result) RunSummary {
	s := d.Summary
	rs := RunSummary{
		Run: n, StartedAt: d.StartedAt, Partial: d.Partial, ElapsedS: s.ElapsedS, Requests: s.Requests,
		RequestsPerSec: s.RequestsPerSec, RowsPerSec: s.RowsPerSec, MBPerMin: s.MBPerMin, Errors: s.Errors,
		LatencyMs: s.LatencyMs, Costs: d.Costs, RoundTripsPerRequest: s.RoundTripsPerRequest,
	}
	if d.LogDevice != nil {
		rs.LogDeviceFlushesPerOp = d.LogDevice.FlushesPerOp
	}
	if in := s.InFlightAtEnd; in.Requests > 0 || in.Reconnecting > 0 {
		rs.InFlightAtEnd = &in
	}
	if s.Scheduled != nil {
		late := s.Late
		rs.Late = &late
		if *s.Scheduled > 0 {
			rs.LatePct = f64(100 * float64(late) / float64(*s.Scheduled))
		}
	}
	for _, st := range d.Steps {
		one := RunStep{Rate: st.Rate, Threads: st.Threads, Batch: st.Batch, AchievedPerSec: st.AchievedPerSec, LatePct: st.LatePct, P99Ms: P99(st.LatencyMs), Saturated: st.Saturated}
		if st.Batch != nil {
			one.MBPerMin = st.MBPerMin
		}
		if v, ok := st.Figures["nopm"]; ok {
			one.NOPM = f64(v)
		}
		rs.Steps = append(rs.Steps, one)
	}
	return rs
}

// P99 is l's 99th percentile, or nil without l.
func P99(l *metrics.Latency) *float64 {
	if l == nil {
		return nil
	}
	return f64(l.P99)
}

// RepeatMetric is one figure compared across repeats: Key in
// repeat_stats, Label and Format (printf) on the console and in the
// report, Get its value in one run (nil: not measured).
type RepeatMetric struct {
	Key, Label, Format string
	Get                func(RunSummary) *float64
}

func latencyOf(f func(*metrics.Latency) float64) func(RunSummary) *float64 {
	return func(r RunSummary) *float64 {
		if r.LatencyMs == nil {
			return nil
		}
		return f64(f(r.LatencyMs))
	}
}

// PerOpFormat, as a RepeatMetric's Format, prints a per-request count as
// the summary does (perOp: three significant digits below 0.01).
const PerOpFormat = "per-op"

// RepeatMetrics are the keys of repeat_stats, in console (and report) order.
var RepeatMetrics = []RepeatMetric{
	{"requests_per_sec", "req/s", "%.1f", func(r RunSummary) *float64 { return f64(r.RequestsPerSec) }},
	{"rows_per_sec", "rows/s", "%.1f", func(r RunSummary) *float64 { return f64(r.RowsPerSec) }},
	{"mb_per_min", "MB/min", "%.3f", func(r RunSummary) *float64 { return r.MBPerMin }},
	{"latency_p50_ms", "p50 ms", "%.3f", latencyOf(func(l *metrics.Latency) float64 { return l.P50 })},
	{"latency_p95_ms", "p95 ms", "%.3f", latencyOf(func(l *metrics.Latency) float64 { return l.P95 })},
	{"latency_p99_ms", "p99 ms", "%.3f", latencyOf(func(l *metrics.Latency) float64 { return l.P99 })},
	{"errors", "errors", "%.0f", func(r RunSummary) *float64 { return f64(float64(r.Errors)) }},
	{"late_pct", "late %", "%.2f", func(r RunSummary) *float64 { return r.LatePct }},
	{"log_bytes_per_op", "log bytes/req", "%.0f", func(r RunSummary) *float64 { return r.Costs.LogBytesPerOp }},
	{"log_syncs_per_op", "log syncs/req", PerOpFormat, func(r RunSummary) *float64 { return r.Costs.LogSyncsPerOp }},
	{"data_reads_per_op", "data reads/req", PerOpFormat, func(r RunSummary) *float64 { return r.Costs.DataReadsPerOp }},
	{"data_writes_per_op", "data writes/req", PerOpFormat, func(r RunSummary) *float64 { return r.Costs.DataWritesPerOp }},
	{"data_syncs_per_op", "data-file syncs/req", PerOpFormat, func(r RunSummary) *float64 { return r.Costs.DataSyncsPerOp }},
	{"log_writes_per_op", "log writes/req", PerOpFormat, func(r RunSummary) *float64 { return r.Costs.LogWritesPerOp }},
	{"commits_per_op", "commits/req", PerOpFormat, func(r RunSummary) *float64 { return r.Costs.CommitsPerOp }},
	{"cpu_us_per_op", "CPU µs/req", "%.1f", func(r RunSummary) *float64 { return r.Costs.CPUusPerOp }},
	{"log_device_flushes_per_op", "log dev flushes/req", PerOpFormat, func(r RunSummary) *float64 { return r.LogDeviceFlushesPerOp }},
	{"round_trips_per_op", "round trips/req", PerOpFormat, func(r RunSummary) *float64 { return r.RoundTripsPerRequest }},
}

// BuildRepeat assembles one document from repeated runs of the same test.
// The top-level figures merge the runs (counters summed over the summed
// measured time, latency histograms merged exactly, step i merged across
// runs); runs[] holds each run's summary and repeat_stats the mean, spread
// and 95% confidence interval of the headline figures over the complete
// runs (a partial run is listed but left out of the statistics). A run that
// measured nothing (interrupted in its warm-up) is left out.
func BuildRepeat(p Params, runs []*runner.Result) (*Result, error) {
	if len(runs) == 0 {
		return nil, fmt.Errorf("no run to report")
	}
	var kept []*runner.Result
	for _, r := range runs {
		if r.Elapsed > 0 {
			kept = append(kept, r)
		}
	}
	if len(kept) == 0 {
		kept = runs[len(runs)-1:]
	}
	docs := make([]*Result, len(kept))
	for i, r := range kept {
		d, err := Build(p, r)
		if err != nil {
			return nil, err
		}
		docs[i] = d
	}
	comb := combine(kept, false)
	p.runs = kept
	res, err := Build(p, comb)
	if err != nil {
		return nil, err
	}
	addRuns(res, docs)
	for i, d := range docs {
		n := i + 1
		for _, st := range d.Summary.Stalls {
			st.Run = &n
			res.Summary.Stalls = append(res.Summary.Stalls, st)
		}
	}
	if in := res.Summary.InFlightAtEnd; len(res.Summary.Stalls) > 0 || in.Requests > 0 || in.Reconnecting > 0 {
		// The merged result has no intervals of its own: its stalls are
		// the runs', and its verdict is made again with them (and with
		// the runs' intervals, which tell a run whose requests kept
		// completing while one waited, a starved worker, from a stall).
		setVerdicts(res, comb, deviceLatencyOf(p, comb))
		applyStalls(res, p.Load.Grace)
		addAdvice(res, p)
	}
	setRepeatStats(res)
	return res, nil
}

// addRuns makes res the merge of the runs docs: their intervals, each
// with its run number (1-based), replace res's, and runs[] lists their
// summaries.
func addRuns(res *Result, docs []*Result) {
	res.Load.Repeat = len(docs)
	res.Intervals = nil
	for i, d := range docs {
		n := i + 1
		for _, pt := range d.Intervals {
			pt.Run = &n
			res.Intervals = append(res.Intervals, pt)
		}
		res.Runs = append(res.Runs, summaryOf(n, d))
	}
}

// setRepeatStats sets res's repeat_stats, and each step's, from res.Runs:
// the mean, spread and 95% confidence interval over the complete runs (a
// partial run is listed but left out).
func setRepeatStats(res *Result) {
	var complete []RunSummary
	for _, r := range res.Runs {
		if !r.Partial {
			complete = append(complete, r)
		}
	}
	res.RepeatStats = map[string]*Stat{}
	for _, m := range RepeatMetrics {
		xs := make([]*float64, len(complete))
		for i, r := range complete {
			xs[i] = m.Get(r)
		}
		if st := StatOf(xs); st != nil {
			res.RepeatStats[m.Key] = st
		}
	}
	for i := range res.Steps {
		stats := map[string][]*float64{}
		for _, r := range complete {
			if i < len(r.Steps) {
				stats["achieved_per_sec"] = append(stats["achieved_per_sec"], r.Steps[i].AchievedPerSec)
				stats["late_pct"] = append(stats["late_pct"], r.Steps[i].LatePct)
				stats["p99_ms"] = append(stats["p99_ms"], r.Steps[i].P99Ms)
				stats["mb_per_min"] = append(stats["mb_per_min"], r.Steps[i].MBPerMin)
				stats["nopm"] = append(stats["nopm"], r.Steps[i].NOPM)
			}
		}
		res.Steps[i].RepeatStats = map[string]*Stat{}
		for k, xs := range stats {
			if st := StatOf(xs); st != nil {
				res.Steps[i].RepeatStats[k] = st
			}
		}
	}
}

// combine merges several runs of one workload into one runner.Result: the
// counters and histograms are merged, the measured times and server
// evidence summed. With concat the runs' steps follow each other (knee
// probes); otherwise step i of every run is merged into step i (repeats of
// one ramp). Intervals are left to the caller.
func combine(rs []*runner.Result, concat bool) *runner.Result {
	out := &runner.Result{Started: rs[0].Started, Total: metrics.NewSnapshot(opNames(rs[0].Total))}
	cpu, cpuKnown := 0.0, true
	evKnown := true
	for _, r := range rs {
		out.Elapsed += r.Elapsed
		out.Partial = out.Partial || r.Partial
		out.Total.Merge(r.Total)
		if out.SampleErr == "" {
			out.SampleErr, out.SampleErrAt = r.SampleErr, r.SampleErrAt
		}
		out.SampleErrs += r.SampleErrs
		cpu += r.ClientCPUSeconds
		cpuKnown = cpuKnown && r.ClientCPUSeconds >= 0
		out.PausedSeconds += r.PausedSeconds
		out.InFlight.Requests += r.InFlight.Requests
		out.InFlight.Oldest = max(out.InFlight.Oldest, r.InFlight.Oldest)
		out.InFlight.Unfinished += r.InFlight.Unfinished
		out.InFlight.Reconnecting += r.InFlight.Reconnecting
		out.InFlight.ReconnectingFor = max(out.InFlight.ReconnectingFor, r.InFlight.ReconnectingFor)
		out.WorkerGroups = max(out.WorkerGroups, r.WorkerGroups) // the same rule for every run
		out.WorkerIO = cmp.Or(out.WorkerIO, r.WorkerIO)
		switch {
		case r.Evidence != nil:
			if out.Evidence == nil {
				out.Evidence = &runner.Evidence{}
			}
			out.Evidence.Add(r.Evidence)
		case r.Total.Total().Requests > 0:
			evKnown = false // a run measured requests but not their cost
		}
		if concat {
			out.Steps = append(out.Steps, r.Steps...)
			continue
		}
		for i, st := range r.Steps {
			if i < len(out.Steps) {
				mergeStep(&out.Steps[i], st)
				continue
			}
			// The first run with step i: copy what merging would change.
			cp := st
			cp.Snap = metrics.NewSnapshot(opNames(rs[0].Total))
			if st.Snap != nil {
				cp.Snap.Merge(st.Snap)
			}
			if st.Evidence != nil {
				cp.Evidence = &runner.Evidence{}
				cp.Evidence.Add(st.Evidence)
			}
			out.Steps = append(out.Steps, cp)
		}
	}
	if !evKnown {
		out.Evidence = nil
	}
	out.Observed = combineObserved(rs)
	out.ClientCPUSeconds = -1
	if cpuKnown {
		out.ClientCPUSeconds = cpu
	}
	return out
}

// mergeStep adds step o (the same step of another run) into s. The lag
// summaries cannot be merged exactly (their histograms are not kept), so s
// keeps the worst of each percentile.
func mergeStep(s *runner.StepResult, o runner.StepResult) {
	s.Scheduled += o.Scheduled
	s.Completed += o.Completed
	s.Late += o.Late
	s.Failed += o.Failed
	s.Elapsed += o.Elapsed
	s.Partial = s.Partial || o.Partial
	if o.Snap != nil {
		s.Snap.Merge(o.Snap)
	}
	if sec := s.Elapsed.Seconds(); sec > 0 {
		s.Achieved = float64(s.Completed) / sec
	}
	if s.Evidence != nil && o.Evidence != nil {
		s.Evidence.Add(o.Evidence)
	} else {
		s.Evidence = nil // not measured in every run: a partial sum would mislead
	}
	if s.ClientCPUSeconds >= 0 && o.ClientCPUSeconds >= 0 {
		s.ClientCPUSeconds += o.ClientCPUSeconds
	} else {
		s.ClientCPUSeconds = -1
	}
	s.SchedLag = worst(s.SchedLag, o.SchedLag)
	s.SchedLagSlow += o.SchedLagSlow
	s.StartLag = worst(s.StartLag, o.StartLag)
	s.Service = worst(s.Service, o.Service)
	s.MaxBacklog = max(s.MaxBacklog, o.MaxBacklog)
	s.Observed = combineObserved([]*runner.Result{{Observed: s.Observed}, {Observed: o.Observed}})
}

// worst returns the field-wise maximum of two latency summaries.
func worst(a, b *metrics.Latency) *metrics.Latency {
	if a == nil {
		return b
	}
	if b == nil {
		return a
	}
	return &metrics.Latency{P50: max(a.P50, b.P50), P90: max(a.P90, b.P90), P95: max(a.P95, b.P95), P99: max(a.P99, b.P99),
		P999: max(a.P999, b.P999), Max: max(a.Max, b.Max), Mean: max(a.Mean, b.Mean)}
}
