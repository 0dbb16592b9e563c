package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/ceiling-db/ceiling/internal/diagnose"

	"github.com/ceiling-db/ceiling/internal/knee"
)

// rampRow is one row of the ramp table.
type rampRow struct {
	label string // step number, or probe number for knee
	step  Step
	mark  string // extra text before the saturation flag
}

// PrintRamp prints the open-loop steps of r as a table like the LT
// appendices of the source tests: requested vs achieved rate, late and
// failed requests, latency, the server's log and data IO, ceiling's own
// scheduling lag, and which steps are saturated.
func PrintRamp(w io.Writer, r *Result) {
	if len(r.Steps) == 0 {
		return
	}
	if r.Steps[0].Batch != nil {
		printBatches(w, r.Steps)
		return
	}
	if r.Steps[0].Threads != nil {
		printThreads(w, r.Steps)
		return
	}
	rows := make([]rampRow, len(r.Steps))
	for i, st := range r.Steps {
		rows[i] = rampRow{label: strconv.Itoa(i + 1), step: st}
	}
	title := "open-loop steps"
	if len(r.Steps) == 1 {
		title = "open loop"
	}
	fmt.Fprintf(w, "\n%s (latency from the scheduled start)\n", title)
	printRamp(w, r, "step", rows)
}

// ThinP99 says whether a step's p99 comes from fewer requests than it
// takes to measure one (knee.RequestsFor: 1000, ten above it): one of its
// few slowest requests then sets it.
func ThinP99(s Step) bool { return s.LatencyMs != nil && s.Completed < knee.RequestsFor("p99") }

// ThinP99Note explains the mark of a ThinP99 step's p99.
var ThinP99Note = fmt.Sprintf("* p99 of fewer than %d requests: one of the step's %d slowest, so one stray slow request sets it (a longer --step measures it)", knee.RequestsFor("p99"), knee.ThinRequests)

func printRamp(w io.Writer, r *Result, labelHead string, rows []rampRow) {
	fmt.Fprintf(w, "%5s %10s %10s %6s %8s %6s %7s %9s %8s %8s %8s %9s %8s %9s %8s\n",
		labelHead, "req/s", "achieved", "ach%", "late", "late%", "failed", "MB/min", "p50 ms", "p95", "p99", "log MB/s", "syncs/s", "data IOPS", "lag p99")
	thin, fsyncs := false, false
	for _, row := range rows {
		s := row.step
		p99 := "n/a"
		if s.LatencyMs != nil {
			p99 = fmt.Sprintf("%.3f", s.LatencyMs.P99)
			if ThinP99(s) {
				p99, thin = p99+"*", true
			}
		}
		lat := func(f func() float64) string {
			if s.LatencyMs == nil {
				return "n/a"
			}
			return fmt.Sprintf("%.3f", f())
		}
		lag := "n/a"
		if s.SchedLagMs != nil {
			lag = fmt.Sprintf("%.3f", s.SchedLagMs.P99)
		}
		var flags []string
		if row.mark != "" {
			flags = append(flags, row.mark)
		}
		if s.Saturated {
			flags = append(flags, "SATURATED ("+strings.Join(s.SaturatedBy, ", ")+")")
		}
		if s.Partial {
			flags = append(flags, "partial")
		}
		line := fmt.Sprintf("%5s %10s %10s %6s %8d %6s %7d %9s %8s %8s %8s %9s %8s %9s %8s  %s",
			row.label, fmtRate(s.Rate), opt(s.AchievedPerSec, "%.1f"), opt(s.AchievedPct, "%.1f"), s.Late, opt(s.LatePct, "%.2f"),
			s.Failed, opt(s.MBPerMin, "%.3f"),
			lat(func() float64 { return s.LatencyMs.P50 }), lat(func() float64 { return s.LatencyMs.P95 }), p99,
			opt(s.LogMBPerSec, "%.2f"), SyncsCell(s.LogSyncsPerSec, s.FsyncsPerSec), opt(s.DataIOPS, "%.0f"), lag, strings.Join(flags, "  "))
		fsyncs = fsyncs || s.LogSyncsPerSec == nil && s.FsyncsPerSec != nil
		fmt.Fprintln(w, strings.TrimRight(line, " "))
	}
	lateAfter := "the lateness limit"
	if r.Load.LateAfterS != nil {
		lateAfter = strconv.FormatFloat(*r.Load.LateAfterS, 'g', -1, 64) + "s"
	}
	fmt.Fprintf(w, "  late = could not start within %s of its scheduled time: skipped, never run. lag p99 = ceiling's own delay in starting requests (ms).\n", lateAfter)
	fmt.Fprintf(w, "  SATURATED = late > %g%% of scheduled, or achieved < %g%% of requested. n/a = not measured.\n", SatLatePct, SatAchievedPct)
	if fsyncs {
		fmt.Fprintln(w, "  "+FsyncsNote+".")
	}
	if thin {
		fmt.Fprintln(w, "  "+ThinP99Note)
	}
	if n := StatsLagNote(lagLabels(rows)); n != "" {
		fmt.Fprintln(w, "  "+n)
	}
	for _, row := range rows {
		if note := workerBound(row.step, r.Load.Threads); note != "" {
			fmt.Fprintf(w, "  note: %s\n", note)
			break
		}
	}
	few := ""
	for _, row := range rows {
		s := row.step
		if s.SchedLagMs == nil {
			continue
		}
		if diagnose.LagSuspect(s.SchedLagMs.P99, s.SchedLagSlow) {
			fmt.Fprintf(w, "  WARNING: at %s/s ceiling's own scheduling lag p99 is %.1f ms: the load generator may be the limit, not the database\n",
				fmtRate(s.Rate), s.SchedLagMs.P99)
			few = ""
			break
		}
		if few == "" && s.SchedLagMs.P99 > diagnose.MaxSchedLagP99Ms {
			few = fmt.Sprintf("  note: at %s/s %s\n", fmtRate(s.Rate), diagnose.FewSlowStarts(s.SchedLagMs.P99, *s.SchedLagSlow, s.Completed))
		}
	}
	fmt.Fprint(w, few)
	if len(rows) > 1 {
		title := "verdict per step"
		if labelHead == "#" {
			// A knee's probes, by rate: a group "3 … 9 (5)" is five
			// neighbouring rates, probes 3 to 9 in the order run.
			title = "verdict per probe, by rate (# = order run)"
		}
		printStepVerdicts(w, title, rows)
	}
}

// lagLabels are the labels of the rows whose steps have a stats_lag_scale.
func lagLabels(rows []rampRow) []string {
	var out []string
	for _, row := range rows {
		if row.step.StatsLagScale != nil {
			out = append(out, row.label)
		}
	}
	return out
}

// StatsLagNote explains the steps (by label) whose verdicts corrected
// PostgreSQL's late-published counters; "" for none.
func StatsLagNote(labels []string) string {
	if len(labels) == 0 {
		return ""
	}
	which := "step " + labels[0] + " counts"
	if len(labels) > 1 {
		which = "steps " + strings.Join(labels, ", ") + " count"
	}
	return "PostgreSQL publishes its statistics up to a second late, so " + which +
		" part of a neighbour's log and commit figures: the verdicts take them per commit (stats_lag_scale); the columns show them as counted."
}

// workerBound explains a saturated step where requests queued for a free
// worker: every one of the -c workers was busy, so the database saw at most
// that many concurrent requests. Whether more would go faster depends on the
// database; the note says so rather than guessing.
func workerBound(s Step, threads int) string {
	if !s.Saturated || s.StartLagMs == nil || s.SchedLagMs == nil {
		return ""
	}
	if s.StartLagMs.P50 < 1 || s.SchedLagMs.P99 > s.StartLagMs.P50/2 {
		return ""
	}
	busy := fmt.Sprintf("all %d workers were busy, so the database saw at most %d requests at once", threads, threads)
	if threads == 1 {
		busy = "the one worker was busy, so the database saw one request at a time"
	}
	if v := s.Verdict; v != nil && databaseBound[v.Bottleneck] {
		// The step's resource was saturated: more workers would queue
		// in the database instead.
		return fmt.Sprintf("from %s/s requests waited for a free worker (start lag p50 %.1f ms): %s, but the step's verdict is %s: the database was the limit there, not the number of workers",
			fmtRate(s.Rate), s.StartLagMs.P50, busy, v.Bottleneck)
	}
	return fmt.Sprintf("from %s/s requests waited for a free worker (start lag p50 %.1f ms): %s; raise -c to offer it more concurrency",
		fmtRate(s.Rate), s.StartLagMs.P50, busy)
}

// databaseBound are the verdicts that name a saturated resource of the
// database, which more concurrent requests would not relieve (commit-flush
// is not one: more sessions share their flushes).
var databaseBound = map[string]bool{
	diagnose.CPU: true, diagnose.LogRate: true, diagnose.StorageQueue: true, diagnose.Memory: true, diagnose.Contention: true,
}

// fmtRate writes a rate without trailing zeros: 50, 62.5, 741.25.
func fmtRate(v float64) string {
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// printRepeats prints one column per run, then the mean, standard
// deviation and 95% confidence interval over the complete runs.
func printRepeats(w io.Writer, r *Result) {
	if len(r.Runs) < 2 && r.Load.Repeat < 2 {
		return
	}
	fmt.Fprintf(w, "\nrepeats: %d runs (mean, stddev and Student-t 95%% confidence interval over the complete runs)\n", len(r.Runs))
	fmt.Fprintf(w, "%-22s", "figure")
	for _, run := range r.Runs {
		head := fmt.Sprintf("run %d", run.Run)
		if run.Partial {
			head += "*"
		}
		fmt.Fprintf(w, " %10s", head)
	}
	fmt.Fprintf(w, " %10s %10s  %s\n", "mean", "stddev", "95% CI")
	row := func(label, format string, vals []*float64, st *Stat) {
		if st == nil && allNil(vals) {
			return
		}
		num := func(v *float64) string {
			if format == PerOpFormat {
				return perOp(v)
			}
			return opt(v, format)
		}
		fmt.Fprintf(w, "%-22s", label)
		for _, v := range vals {
			fmt.Fprintf(w, " %10s", num(v))
		}
		if st == nil {
			fmt.Fprintf(w, " %10s %10s  %s\n", "n/a", "n/a", "n/a")
			return
		}
		ci := "n/a"
		if st.CI95Low != nil {
			ci = "[" + num(st.CI95Low) + ", " + num(st.CI95High) + "]"
		}
		fmt.Fprintf(w, " %10s %10s  %s\n", num(&st.Mean), num(st.StdDev), ci)
	}
	for _, m := range RepeatMetrics {
		vals := make([]*float64, len(r.Runs))
		for i, run := range r.Runs {
			vals[i] = m.Get(run)
		}
		row(m.Label, m.Format, vals, r.RepeatStats[m.Key])
	}
	for i, st := range r.Steps {
		if len(r.Steps) == 1 {
			break // one rate: its achieved rate is req/s above
		}
		vals := make([]*float64, len(r.Runs))
		label, key, get := fmt.Sprintf("achieved @ %s/s", fmtRate(st.Rate)), "achieved_per_sec", func(s RunStep) *float64 { return s.AchievedPerSec }
		switch {
		case st.Threads != nil:
			label = "req/s @ " + diagnose.Threads(*st.Threads)
		case st.Batch != nil:
			label, key, get = fmt.Sprintf("MB/min @ %d-row batch", *st.Batch), "mb_per_min", func(s RunStep) *float64 { return s.MBPerMin }
		}
		for j, run := range r.Runs {
			if i < len(run.Steps) {
				vals[j] = get(run.Steps[i])
			}
		}
		row(label, "%.1f", vals, st.RepeatStats[key])
		if ns := st.RepeatStats["nopm"]; ns != nil && st.Threads != nil {
			// TPC-C: the new orders per minute, HammerDB's figure.
			nopm := make([]*float64, len(r.Runs))
			for j, run := range r.Runs {
				if i < len(run.Steps) {
					nopm[j] = run.Steps[i].NOPM
				}
			}
			row("NOPM @ "+diagnose.Threads(*st.Threads), "%.0f", nopm, ns)
		}
	}
	for _, run := range r.Runs {
		if run.Partial {
			fmt.Fprintln(w, "  * interrupted: listed, but left out of the mean and spread")
			break
		}
	}
}

func allNil(vs []*float64) bool {
	for _, v := range vs {
		if v != nil {
			return false
		}
	}
	return true
}

// RunLine summarises one run in a line (printed after each repeat).
func RunLine(r *Result) string {
	s := r.Summary
	p99 := "n/a"
	if s.LatencyMs != nil {
		p99 = fmt.Sprintf("%.3f ms", s.LatencyMs.P99)
	}
	line := fmt.Sprintf("%.1f req/s, %.1f rows/s, %s MB/min, p99 %s, %d errors", s.RequestsPerSec, s.RowsPerSec, opt(s.MBPerMin, "%.3f"), p99, s.Errors)
	if len(r.Steps) > 1 {
		ach := make([]string, len(r.Steps))
		for i, st := range r.Steps {
			ach[i] = fmtRate(st.Rate) + "→" + opt(st.AchievedPerSec, "%.1f")
		}
		line += "; achieved per step (req/s): " + strings.Join(ach, ", ")
	}
	if s.Scheduled != nil && *s.Scheduled > 0 {
		line += fmt.Sprintf("; late %d (%.2f%%)", s.Late, 100*float64(s.Late)/float64(*s.Scheduled))
	}
	return line
}
