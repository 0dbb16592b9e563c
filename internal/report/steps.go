package report

import (
	"fmt"
	"time"

	"github.com/ceiling-db/ceiling/internal/diagnose"
	"github.com/ceiling-db/ceiling/internal/metrics"
	"github.com/ceiling-db/ceiling/internal/runner"
)

// Saturation thresholds: a step is saturated when more than SatLatePct of
// its scheduled requests were late, or it achieved less than
// SatAchievedPct of the requested rate.
const (
	SatLatePct     = 1.0
	SatAchievedPct = 95.0
)

// Step is one open-loop step (a row of the ramp table). Figures count the
// step's measured part only; a figure not measured is null.
type Step struct {
	Index          int              `json:"index"`
	Rate           float64          `json:"rate"`             // requested, requests/s
	AchievedPerSec *float64         `json:"achieved_per_sec"` // successful requests completed per second
	AchievedPct    *float64         `json:"achieved_pct"`     // of the requested rate
	Scheduled      int64            `json:"scheduled"`
	Completed      int64            `json:"completed"`
	Late           int64            `json:"late"` // could not start within late_after_s: skipped, never run
	LatePct        *float64         `json:"late_pct"`
	Failed         int64            `json:"failed"`
	ErrorsByClass  map[string]int64 `json:"errors_by_class"`
	RowsPerSec     *float64         `json:"rows_per_sec"`
	MBPerMin       *float64         `json:"mb_per_min"`
	LatencyMs      *metrics.Latency `json:"latency_ms"` // from the scheduled start; null when none completed
	DurationS      float64          `json:"duration_s"` // measured part as it ran
	WarmupS        float64          `json:"warmup_s"`
	Partial        bool             `json:"partial"`
	LogMBPerSec    *float64         `json:"log_mb_per_sec"`
	LogSyncsPerSec *float64         `json:"log_syncs_per_sec"`
	// FsyncsPerSec: as IntervalPoint's.
	FsyncsPerSec *float64 `json:"fsyncs_per_sec,omitempty"`
	DataIOPS     *float64 `json:"data_iops"`
	Costs        Costs    `json:"costs"` // per successful request, like the top-level costs
	// SchedLagMs is ceiling's own delay in starting requests; StartLagMs is
	// scheduled to actual start, queueing behind busy workers included.
	SchedLagMs *metrics.Latency `json:"sched_lag_ms"`
	// SchedLagSlow is how many requests ceiling started more than 10 ms
	// late by its own scheduling (runner.SlowSchedLagMs); null in
	// results written before it was counted.
	SchedLagSlow *int64           `json:"sched_lag_over_10ms"`
	StartLagMs   *metrics.Latency `json:"start_lag_ms"`
	// ServiceMs is actual start to end of the successful requests: the
	// database's time without the wait for a free worker (null in results
	// written before it was measured).
	ServiceMs    *metrics.Latency `json:"service_ms"`
	MaxBacklog   int64            `json:"max_backlog"`
	BacklogCap   int64            `json:"backlog_cap"`
	ClientCPUPct *float64         `json:"client_cpu_pct_of_cores"`
	// Saturated is true when late_pct > 1 or achieved_pct < 95;
	// SaturatedBy says which, with the figures.
	Saturated   bool             `json:"saturated"`
	SaturatedBy []string         `json:"saturated_by,omitempty"`
	RepeatStats map[string]*Stat `json:"repeat_stats,omitempty"` // --repeat: spread of this step over the runs
	// Verdict is the diagnosis of this step; null when it completed nothing.
	Verdict *diagnose.Verdict `json:"verdict"`
	// Histogram is the latency histogram of the step's requests (as the
	// result's histograms), kept by a shard's result (run --shard) so
	// that ceiling merge can merge the shards' steps exactly.
	Histogram string `json:"histogram,omitempty"`
	// Batch is the rows per request of a bulk-load batch-size step
	// (--batches): such steps are closed loop, so Rate is 0 and the
	// achieved rate is what the workers did. Absent for rate steps.
	Batch *int `json:"batch,omitempty"`
	// Threads is the workers of a thread-count step (run --threads-ramp),
	// closed loop like a batch step. Absent for other steps.
	Threads *int `json:"threads,omitempty"`
	// LogBytesPerDataByte is the server's log bytes over the data bytes
	// loaded (batch steps); absent when either was not measured.
	LogBytesPerDataByte *float64 `json:"log_bytes_per_data_byte,omitempty"`
	// Figures are the workload's headline figures over the step's measured
	// part (tpcc: nopm, ...); absent when the workload has none.
	Figures map[string]float64 `json:"figures,omitempty"`
	// StatsLagScale is the factor the step's verdict applied to the
	// PostgreSQL counters its backends publish late (statsLagScale): the
	// run's commits per request over the step's. Absent when not applied;
	// the step's own figures above stay as counted.
	StatsLagScale *float64 `json:"stats_lag_scale,omitempty"`
}

// stepOf builds step i from what the runner measured.
func stepOf(i int, st runner.StepResult, cores int, noBytes bool) Step {
	el := st.Elapsed.Seconds()
	s := Step{
		Index: i, Rate: st.Rate, Scheduled: st.Scheduled, Completed: st.Completed, Late: st.Late, Failed: st.Failed,
		ErrorsByClass: map[string]int64{}, DurationS: el, WarmupS: st.Warmup.Seconds(), Partial: st.Partial,
		SchedLagMs: st.SchedLag, StartLagMs: st.StartLag, ServiceMs: st.Service, MaxBacklog: st.MaxBacklog, BacklogCap: st.BacklogCap,
	}
	if st.SchedLag != nil {
		s.SchedLagSlow = f64i(st.SchedLagSlow)
	}
	var tot metrics.OpSnapshot
	if st.Snap != nil {
		tot = st.Snap.Total()
		s.LatencyMs = metrics.LatencyOf(tot.Hist)
		for _, c := range metrics.ErrClasses() {
			if n := tot.Errors[c]; n > 0 {
				s.ErrorsByClass[c.String()] = n
			}
		}
	}
	if el > 0 {
		s.AchievedPerSec = f64(float64(st.Completed) / el)
		s.RowsPerSec = f64(perSec(tot.Rows, el))
		s.MBPerMin = mbRate(tot.Bytes, el, noBytes)
		if st.Rate > 0 {
			s.AchievedPct = f64(100 * *s.AchievedPerSec / st.Rate)
		}
		if st.ClientCPUSeconds >= 0 && cores > 0 {
			s.ClientCPUPct = f64(100 * st.ClientCPUSeconds / el / float64(cores))
		}
	}
	if st.Scheduled > 0 {
		s.LatePct = f64(100 * float64(st.Late) / float64(st.Scheduled))
	}
	s.LogMBPerSec, s.LogSyncsPerSec, s.DataIOPS = ioRates(st.Evidence)
	s.FsyncsPerSec = fsyncRate(st.Evidence)
	if st.Evidence != nil {
		s.Costs = costsOf(st.Evidence.Counters, st.Completed)
	}
	s.SaturatedBy = saturation(s.LatePct, s.AchievedPct)
	s.Saturated = len(s.SaturatedBy) > 0
	return s
}

// saturation returns why a step counts as saturated, if it does.
func saturation(latePct, achievedPct *float64) []string {
	var why []string
	if latePct != nil && *latePct > SatLatePct {
		why = append(why, fmt.Sprintf("late %.1f%% > %g%%", *latePct, SatLatePct))
	}
	if achievedPct != nil && *achievedPct < SatAchievedPct {
		why = append(why, fmt.Sprintf("achieved %.1f%% < %g%%", *achievedPct, SatAchievedPct))
	}
	return why
}

// fillOpen records the open-loop part of the load model.
func (l *Load) fillOpen(c runner.Config) {
	l.Model = "open"
	arrival := c.Arrival
	if arrival == "" {
		arrival = runner.ArrivalUniform
	}
	l.Arrival = &arrival
	late := c.LateAfter
	if late == 0 {
		late = time.Second
	}
	l.LateAfterS = f64(late.Seconds())
	seed := c.Seed
	l.Seed = &seed
	if len(c.Steps) == 0 {
		l.Rate = f64(c.Rate)
		return
	}
	var total, warm time.Duration
	l.Rates = make([]float64, len(c.Steps))
	same := true
	for i, st := range c.Steps {
		l.Rates[i] = st.Rate
		total += st.Duration
		warm += st.Warmup
		same = same && st.Duration == c.Steps[0].Duration && st.Warmup == c.Steps[0].Warmup
	}
	l.DurationS = f64(total.Seconds())
	l.WarmupS = warm.Seconds()
	if same {
		l.StepS = f64(c.Steps[0].Duration.Seconds())
		l.StepWarmupS = f64(c.Steps[0].Warmup.Seconds())
	}
}
