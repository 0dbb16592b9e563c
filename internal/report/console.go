package report

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ceiling-db/ceiling/internal/diagnose"
	"github.com/ceiling-db/ceiling/internal/metrics"
	"github.com/ceiling-db/ceiling/internal/runner"
	"github.com/ceiling-db/ceiling/internal/suggest"
	"github.com/ceiling-db/ceiling/internal/target"
)

// Live prints the per-interval progress of a run. On a terminal it rewrites
// one status line every interval and keeps a line every Every; when piped it
// prints only the kept lines.
type Live struct {
	W     io.Writer
	TTY   bool
	Every time.Duration // default 10 s
	Cores int
	// Rates, set for an open-loop run, is each step's requested rate: the
	// lines then show it and the late requests, and a step's last line is
	// printed when the step (or its warm-up) ends.
	Rates []float64
	// NoBytes: the workload does not count data bytes; MB/min shows n/a.
	NoBytes bool

	acc         runner.Interval
	lastKeep    time.Duration
	header      bool
	fsyncsNoted bool // FsyncsNote printed
}

// FilesNA says which of files' figures are not available, and why, or "".
func FilesNA(files []File) string {
	var syncs, writes bool
	for _, f := range files {
		syncs = syncs || f.NoSyncs
		writes = writes || f.NoWriteTime
	}
	var out []string
	if syncs {
		out = append(out, "syncs (the server's file statistics count them with the files' other calls)")
	}
	if writes {
		out = append(out, "write ms (the writes are asynchronous: their time is the submission's, not the device's)")
	}
	return strings.Join(out, "; ")
}

// ThreadCounts lists a thread ramp's counts, "1, 2, 4 threads (a step
// each)"; "" for other results.
func ThreadCounts(steps []Step) string {
	if len(steps) == 0 || steps[0].Threads == nil {
		return ""
	}
	n := make([]string, len(steps))
	for i, st := range steps {
		n[i] = strconv.Itoa(*st.Threads)
	}
	return strings.Join(n, ", ") + " threads (a step each)"
}

// TouchedFiles are the files read, written or synced in the measured
// phase; the others were open but idle.
func TouchedFiles(files []File) []File {
	var out []File
	for _, f := range files {
		if f.Reads != 0 || f.Writes != 0 || f.Syncs != 0 {
			out = append(out, f)
		}
	}
	return out
}

// IdleFilesNote says that none of the files measured was read or written
// in the measured phase (a server's reads served from its cache, its
// changed pages not yet flushed; MariaDB's redo log is not among them),
// naming them, or "" when some were.
func IdleFilesNote(files []File) string {
	if len(files) == 0 || len(TouchedFiles(files)) > 0 {
		return ""
	}
	names := make([]string, 0, 4)
	for i, f := range files {
		if i == 3 {
			names = append(names, fmt.Sprintf("and %d more", len(files)-3))
			break
		}
		names = append(names, f.Name)
	}
	return fmt.Sprintf("none of the %d files measured (%s) was read or written in the measured phase: their pages were read and changed in the server's cache only", len(files), strings.Join(names, ", "))
}

// WaitEventsLine describes where ceiling's sessions spent their time by
// wait event (target.CtrWaitEventPrefix), the largest first: "IO:WALSync
// 38%, Client:ClientRead 30%, CPU 20%, LWLock:WALWrite 8% and 5 more 4%";
// "" when no event was recorded.
func WaitEventsLine(c map[string]float64) string {
	type ev struct {
		name string
		ms   float64
	}
	var evs []ev
	sum := 0.0
	for k, v := range c {
		if name, ok := strings.CutPrefix(k, target.CtrWaitEventPrefix); ok && v > 0 {
			evs = append(evs, ev{name, v})
			sum += v
		}
	}
	if sum <= 0 {
		return ""
	}
	sort.Slice(evs, func(i, j int) bool {
		if evs[i].ms != evs[j].ms {
			return evs[i].ms > evs[j].ms
		}
		return evs[i].name < evs[j].name
	})
	const top = 6
	var parts []string
	rest := 0.0
	for i, e := range evs {
		if i < top || len(evs) == top+1 {
			parts = append(parts, fmt.Sprintf("%s %s", e.name, pct(e.ms/sum)))
			continue
		}
		rest += e.ms
	}
	if n := len(evs) - len(parts); n > 0 {
		parts = append(parts, fmt.Sprintf("%d more %s", n, pct(rest/sum)))
	}
	return suggest.AndList(parts)
}

// WaitEventsHow says how a result's wait events were measured; in an
// open loop, that the sessions' idle time between scheduled requests is
// among them (as the client's), which the verdict's wait shares leave
// out (discountIdle): PostgreSQL updates at 10/s and 4000/s, 8 threads,
// "Client:ClientRead 74%" beside "wait shares: log_io 74%".
func WaitEventsHow(r *Result) string {
	how := "share of the sessions' time, from performance_schema"
	if r.Target.Engine == "postgres" {
		how = "share of the sessions' time, sampled from pg_stat_activity"
	}
	if r.Load.Model == "open" {
		how += "; the client's events hold the time idle between scheduled requests, which the verdict's wait shares leave out"
	}
	return how
}

// pct prints a share as a percentage, "<1%" below one half.
func pct(share float64) string {
	if share < 0.005 {
		return "<1%"
	}
	return fmt.Sprintf("%.0f%%", 100*share)
}

// Interval is the runner's OnInterval callback.
func (l *Live) Interval(iv runner.Interval) {
	if l.Every == 0 {
		l.Every = 10 * time.Second
	}
	if !l.header {
		if l.Rates != nil {
			fmt.Fprintf(l.W, "%7s %10s %10s %10s %9s %9s %9s %6s %8s %10s %9s %6s\n", "time", "target/s", "req/s", "rows/s", "MB/min", "p50 ms", "p99 ms", "errors", "late", "log MB/s", "syncs/s", "cpu%")
		} else {
			fmt.Fprintf(l.W, "%7s %10s %10s %9s %9s %9s %6s %10s %9s %6s\n", "time", "req/s", "rows/s", "MB/min", "p50 ms", "p99 ms", "errors", "log MB/s", "syncs/s", "cpu%")
		}
		l.header = true
	}
	if l.Rates != nil && l.acc.Snap != nil && (l.acc.Warmup != iv.Warmup || l.acc.Step != iv.Step) {
		// A step (or its warm-up) ended: keep its last line.
		end := l.acc.End
		l.Done()
		l.lastKeep = end
	}
	// Accumulate so a kept line covers everything since the previous one.
	// The accumulator owns copies: the interval itself goes into the result.
	if l.acc.Snap == nil || l.acc.Warmup != iv.Warmup || l.acc.Step != iv.Step {
		snap := metrics.NewSnapshot(opNames(iv.Snap))
		snap.Merge(iv.Snap)
		var ev *runner.Evidence
		if iv.Evidence != nil {
			ev = &runner.Evidence{}
			ev.Add(iv.Evidence)
		}
		l.acc = runner.Interval{Start: iv.Start, Warmup: iv.Warmup, Step: iv.Step, Snap: snap, Evidence: ev, ClientCPU: iv.ClientCPU}
	} else {
		l.acc.Snap.Merge(iv.Snap)
		if iv.Evidence != nil {
			if l.acc.Evidence == nil {
				l.acc.Evidence = iv.Evidence
			} else {
				l.acc.Evidence.Add(iv.Evidence)
			}
		}
		if iv.ClientCPU >= 0 && l.acc.ClientCPU >= 0 {
			l.acc.ClientCPU += iv.ClientCPU
		}
	}
	l.acc.End = iv.End
	keep := iv.End-l.lastKeep >= l.Every-50*time.Millisecond
	if l.TTY {
		fmt.Fprintf(l.W, "\r\033[K%s", l.line(iv))
		if keep {
			fmt.Fprintf(l.W, "\r\033[K%s\n", l.line(l.acc))
		}
	} else if keep {
		fmt.Fprintln(l.W, l.line(l.acc))
	}
	if keep {
		l.noteFsyncs()
		l.lastKeep = iv.End
		l.acc = runner.Interval{}
	}
}

// Done ends the live display: it clears the status line and prints what
// was measured since the last kept line.
func (l *Live) Done() {
	if l.TTY {
		fmt.Fprint(l.W, "\r\033[K")
	}
	if l.acc.Snap != nil && l.acc.End > l.acc.Start {
		fmt.Fprintln(l.W, l.line(l.acc))
		l.noteFsyncs()
		l.acc = runner.Interval{}
	}
}

// noteFsyncs says once, under the first kept line whose syncs/s shows the
// log's and data files' fsyncs together (MariaDB), what they are.
func (l *Live) noteFsyncs() {
	if !l.fsyncsNoted && fsyncRate(l.acc.Evidence) != nil {
		fmt.Fprintf(l.W, "  (%s)\n", FsyncsNote)
		l.fsyncsNoted = true
	}
}

func (l *Live) line(iv runner.Interval) string {
	p := intervalOf(iv, l.Cores, l.NoBytes)
	lat := func(f func() float64) string {
		if p.LatencyMs == nil {
			return "n/a"
		}
		return fmt.Sprintf("%.2f", f())
	}
	opt := func(v *float64, format string) string {
		if v == nil {
			return "n/a"
		}
		return fmt.Sprintf(format, *v)
	}
	tag := ""
	if iv.Warmup {
		tag = " (warm-up)"
	}
	if l.Rates != nil {
		target := "n/a"
		if iv.Step >= 0 && iv.Step < len(l.Rates) {
			target = fmtRate(l.Rates[iv.Step])
		}
		return fmt.Sprintf("%6.0fs %10s %10.1f %10.1f %9s %9s %9s %6d %8d %10s %9s %6s%s",
			p.T, target, p.RequestsPerSec, p.RowsPerSec, opt(p.MBPerMin, "%.2f"),
			lat(func() float64 { return p.LatencyMs.P50 }), lat(func() float64 { return p.LatencyMs.P99 }),
			p.Errors, p.Late, opt(p.LogMBPerSec, "%.2f"), SyncsCell(p.LogSyncsPerSec, p.FsyncsPerSec), opt(p.ClientCPUPct, "%.0f"), tag)
	}
	return fmt.Sprintf("%6.0fs %10.1f %10.1f %9s %9s %9s %6d %10s %9s %6s%s",
		p.T, p.RequestsPerSec, p.RowsPerSec, opt(p.MBPerMin, "%.2f"),
		lat(func() float64 { return p.LatencyMs.P50 }), lat(func() float64 { return p.LatencyMs.P99 }),
		p.Errors, opt(p.LogMBPerSec, "%.2f"), SyncsCell(p.LogSyncsPerSec, p.FsyncsPerSec), opt(p.ClientCPUPct, "%.0f"), tag)
}

// PrintSummary prints the end-of-run summary.
func PrintSummary(w io.Writer, r *Result) {
	s := r.Summary
	state := "complete"
	if r.Partial {
		state = "PARTIAL (interrupted)"
	}
	runs := ""
	if r.Load.Repeat > 1 {
		runs = fmt.Sprintf(" over %d runs", r.Load.Repeat)
	}
	fmt.Fprintf(w, "\n== %s on %s %s — %s, %.1fs measured%s\n", r.Workload.Name, r.Target.Engine, r.Target.Version, state, s.ElapsedS, runs)
	threads := diagnose.Threads(r.Load.Threads)
	if tr := ThreadCounts(r.Steps); tr != "" {
		threads = tr
	}
	if sh := r.Load.Shard; sh != nil && sh.I < 0 {
		threads += fmt.Sprintf(" over %d shards (merged)", sh.N)
	} else if sh != nil {
		threads += fmt.Sprintf(" (shard %d of %d)", sh.I, sh.N)
	}
	fmt.Fprintf(w, "   target %s, %s, durability %s", r.Target.DSN, threads, r.Target.Durability.Mode)
	if d := r.Target.Durability; d.Setting != "" {
		fmt.Fprintf(w, " (%s=%s)", d.Setting, d.During)
	}
	if r.Target.Encrypted() {
		fmt.Fprintf(w, ", connections encrypted (%s)", r.Target.TLS)
	}
	if r.Target.Pooler != "" {
		fmt.Fprintf(w, ", through a connection pooler (%s mode)", r.Target.Pooler)
	}
	if r.Target.ReadOnly != "" {
		fmt.Fprintf(w, ", read-only server (%s)", r.Target.ReadOnly)
	}
	fmt.Fprintln(w)
	if e := r.Target.Emulation; e != nil {
		fmt.Fprintf(w, "   files held to profile %s's limits while measuring (--emulate)\n", e.Profile)
	}
	if r.Load.Model == "open" {
		fmt.Fprintf(w, "   %s\n", OpenLoopPlan(r.Load))
	}

	if n := MixedRatesNote(r); n != "" {
		fmt.Fprintf(w, "   %s\n", n)
	}

	nameW := 10 // the operation column fits the longest name (tpcc: order_status)
	for _, op := range s.OpOrder {
		nameW = max(nameW, len(op))
	}
	fmt.Fprintf(w, "\n%-*s %10s %10s %10s %10s %9s %8s %8s %8s %8s %8s %8s %7s\n",
		nameW, "operation", "requests", "req/s", "rows/s", "MB/min", "p50 ms", "p90", "p95", "p99", "p99.9", "max", "mean", "errors")
	row := func(name string, o OpResult) {
		l := o.LatencyMs
		if l == nil {
			fmt.Fprintf(w, "%-*s %10d %10.1f %10.1f %10s %9s %8s %8s %8s %8s %8s %8s %7d\n", nameW, name, o.Requests, o.RequestsPerSec, o.RowsPerSec, opt(o.MBPerMin, "%.3f"),
				"n/a", "n/a", "n/a", "n/a", "n/a", "n/a", "n/a", o.Errors)
			return
		}
		fmt.Fprintf(w, "%-*s %10d %10.1f %10.1f %10s %9.3f %8.3f %8.3f %8.3f %8.3f %8.3f %8.3f %7d\n", nameW, name, o.Requests, o.RequestsPerSec, o.RowsPerSec, opt(o.MBPerMin, "%.3f"),
			l.P50, l.P90, l.P95, l.P99, l.P999, l.Max, l.Mean, o.Errors)
	}
	for _, op := range s.OpOrder {
		row(op, s.ByOp[op])
	}
	if len(s.OpOrder) > 1 {
		row("total", OpResult{Requests: s.Requests, RequestsPerSec: s.RequestsPerSec, Rows: s.Rows, RowsPerSec: s.RowsPerSec, MBPerMin: s.MBPerMin, Errors: s.Errors, LatencyMs: s.LatencyMs})
	}
	printFigures(w, r)

	for _, op := range s.OpOrder {
		if o := s.ByOp[op]; o.RowsExamined != nil {
			fmt.Fprintf(w, "%s: %d rows examined, %s per request (%.1f returned per request)\n", op, *o.RowsExamined,
				opt(o.RowsExaminedPerRequest, "%.1f"), float64(o.Rows)/math.Max(1, float64(o.Requests)))
		}
	}
	if l := RoundTripsLine(r); l != "" {
		fmt.Fprintln(w, l)
	}
	if s.Errors > 0 {
		fmt.Fprintf(w, "\nerrors by class:\n")
		for _, c := range sortedKeys(s.ErrorsByClass) {
			fmt.Fprintf(w, "  %-18s %8d  first: %s\n", c, s.ErrorsByClass[c], oneLine(s.FirstErrors[c]))
		}
	}
	if s.Reconnects > 0 {
		fmt.Fprintf(w, "reconnects: %d\n", s.Reconnects)
	}
	if s.Late > 0 {
		fmt.Fprintf(w, "late (skipped) requests: %d\n", s.Late)
	}
	if r.Knee == nil {
		PrintRamp(w, r)
	}

	if note := IdleFilesNote(r.Files); note != "" {
		fmt.Fprintf(w, "\nfile IO (measured phase): %s\n", note)
	} else if len(r.Files) > 0 {
		fmt.Fprintf(w, "\nfile IO (measured phase)\n%-22s %-5s %9s %9s %8s %9s %9s %9s %8s %9s %9s %9s %10s\n",
			"file", "role", "reads", "writes", "IOPS", "MB/s", "KB/write", "syncs", "syncs/tx", "read ms", "write ms", "sync ms", "sync total")
		for _, f := range TouchedFiles(r.Files) { // the others were open but idle
			syncs, total := strconv.FormatInt(f.Syncs, 10), fmt.Sprintf("%.0fms", f.SyncMs)
			if f.NoSyncs {
				syncs, total = "n/a", "n/a"
			}
			fmt.Fprintf(w, "%-22s %-5s %9d %9d %8.0f %9.2f %9s %9s %8s %9s %9s %9s %11s\n",
				trunc(f.Name, 22), f.Role, f.Reads, f.Writes, f.IOPS, f.MBPerSec, opt(f.KBPerWrite, "%.2f"), syncs,
				opt(f.SyncsPerTxn, "%.3f"), opt(f.AvgReadMs, "%.3f"), opt(f.AvgWriteMs, "%.3f"), opt(f.AvgSyncMs, "%.3f"), total)
		}
		fmt.Fprintln(w, "  (read/write/sync ms are average latencies per call; syncs/tx = syncs per request, one transaction each)")
		if fileNotes := FilesNA(r.Files); fileNotes != "" {
			fmt.Fprintf(w, "  n/a: %s\n", fileNotes)
		}
		for _, ew := range EmulatedWaits(r.Files) {
			fmt.Fprintf(w, "  %s: %.0f%% of its IO time waited for the emulated limits (%.0f ms)\n", ew.Name, ew.Pct, ew.Ms)
		}
	}

	c := r.Costs
	fmt.Fprintf(w, "\nper-request server cost: log %s bytes, %s log syncs, %s log writes, %s data reads, %s data writes, %s data-file syncs, %s commits, %s µs server CPU\n",
		opt(c.LogBytesPerOp, "%.0f"), perOp(c.LogSyncsPerOp), perOp(c.LogWritesPerOp), perOp(c.DataReadsPerOp),
		perOp(c.DataWritesPerOp), perOp(c.DataSyncsPerOp), perOp(c.CommitsPerOp), opt(c.CPUusPerOp, "%.0f"))
	if m := r.Target.Settings["missing_evidence"]; m != "" && c.AnyMissing() {
		fmt.Fprintf(w, "  n/a: not available from %s: %s\n", r.Target.Engine, m)
	}
	if d := r.LogDevice; d != nil {
		fmt.Fprintf(w, "log device %s (kernel counters, the whole device): %s\n", d.Name, LogDeviceLine(d))
		if d.Note != "" {
			fmt.Fprintf(w, "  %s\n", d.Note)
		}
	}
	if r.Evidence != nil {
		if line := WaitEventsLine(r.Evidence.Counters); line != "" {
			fmt.Fprintf(w, "wait events of ceiling's sessions (%s): %s\n", WaitEventsHow(r), line)
		}
	}
	if line := ReplayLine(r); line != "" {
		fmt.Fprintln(w, line)
	}
	if r.Evidence != nil && r.Evidence.Error != "" {
		fmt.Fprintf(w, "server evidence incomplete: %s\n", EvidenceErrorText(r.Evidence))
	}
	if r.Client.CPUPctCores != nil {
		fmt.Fprintf(w, "load generator CPU: %.0f%% of %d cores", *r.Client.CPUPctCores, r.Client.Cores)
		if ms := ClientQueueMs(r); ms != nil {
			fmt.Fprintf(w, "; its threads waited for a core %s ms per request", diagnose.MsText(*ms))
		}
		if *r.Client.CPUPctCores > 85 {
			fmt.Fprintf(w, " — WARNING: the client may be the bottleneck; these figures may understate the database")
		}
		fmt.Fprintln(w)
	}
	if r.Client.ThinkShare != nil {
		fmt.Fprintf(w, "think times: the workers spent %.1f%% of their time in them (not in the latencies)\n", 100**r.Client.ThinkShare)
	}
	printRepeats(w, r)
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	PrintVerdict(w, r.Verdict)
	printIsolated(w, r)
}

// LogDeviceLine describes the log device's requests, e.g. "4,860
// flushes/s at 0.070 ms (1.00 per request), 10,012 writes/s at 0.055 ms,
// 0 reads/s, busy 57%".
func LogDeviceLine(d *LogDeviceStats) string {
	at := func(ms *float64) string {
		if ms == nil {
			return ""
		}
		return fmt.Sprintf(" at %.3f ms", *ms)
	}
	rate := func(v float64) string {
		if v < 10 {
			return fmt.Sprintf("%.1f", v)
		}
		return diagnose.Thousands(math.Round(v))
	}
	var s string
	if d.FlushesPerSec != nil {
		s = fmt.Sprintf("%s flushes/s%s", rate(*d.FlushesPerSec), at(d.FlushMs))
		if d.FlushesPerOp != nil {
			s += fmt.Sprintf(" (%.2f per request)", *d.FlushesPerOp)
		}
	} else {
		s = "flushes n/a (not counted by this kernel)"
	}
	return s + fmt.Sprintf(", %s writes/s%s, %s reads/s%s, busy %.0f%%",
		rate(d.WritesPerSec), at(d.WriteMs), rate(d.ReadsPerSec), at(d.ReadMs), d.BusyPct)
}

// MixedRatesNote says that the summary of several steps (a ramp, a
// knee's probes, a batch sweep's sizes) puts requests made at different
// rates or batch sizes together, so its latency and rate are of no one
// of them; "" for one step.
func MixedRatesNote(r *Result) string {
	if len(r.Steps) < 2 {
		return ""
	}
	what, one, together := "steps", "step", "requests together, made at different rates"
	switch {
	case r.Knee != nil:
		what, one = "probes", "probe"
	case r.Steps[0].Batch != nil:
		what, one, together = "batch sizes", "batch size", "runs together"
	case r.Steps[0].Threads != nil:
		what, one, together = "thread counts", "thread count", "runs together"
	}
	return fmt.Sprintf("the summary puts the %d %s' %s: each %s's own figures are in the %s' table", len(r.Steps), what, together, one, what)
}

// OpenLoopPlan describes an open-loop load model in one line, e.g.
// "open loop: 3 steps 50..150/s, 30s each, uniform arrivals, late after 1s".
func OpenLoopPlan(l Load) string {
	arrival, late := "uniform", "1s"
	if l.Arrival != nil {
		arrival = *l.Arrival
	}
	if l.LateAfterS != nil {
		late = strconv.FormatFloat(*l.LateAfterS, 'g', -1, 64) + "s"
	}
	var b strings.Builder
	b.WriteString("open loop: ")
	switch {
	case l.Rate != nil:
		fmt.Fprintf(&b, "%s/s", fmtRate(*l.Rate))
		if l.DurationS != nil {
			fmt.Fprintf(&b, " for %ss", fmtRate(*l.DurationS))
		}
		if l.Ops != nil {
			fmt.Fprintf(&b, ", %d requests", *l.Ops)
		}
		if l.WarmupS > 0 {
			fmt.Fprintf(&b, " after %ss warm-up", fmtRate(l.WarmupS))
		}
	case len(l.Rates) > 0:
		rs := make([]string, len(l.Rates))
		for i, v := range l.Rates {
			rs[i] = fmtRate(v)
		}
		if len(rs) > 8 {
			rs = append(rs[:3], "…", rs[len(rs)-1])
		}
		fmt.Fprintf(&b, "%d steps at %s req/s", len(l.Rates), strings.Join(rs, ", "))
		if l.StepS != nil {
			fmt.Fprintf(&b, ", %ss each", fmtRate(*l.StepS))
			if l.StepWarmupS != nil && *l.StepWarmupS > 0 {
				fmt.Fprintf(&b, " after %ss warm-up", fmtRate(*l.StepWarmupS))
			}
		}
	}
	fmt.Fprintf(&b, ", %s arrivals, late after %s", arrival, late)
	return b.String()
}

func opNames(s *metrics.Snapshot) []string {
	names := make([]string, len(s.Ops))
	for i, o := range s.Ops {
		names[i] = o.Name
	}
	return names
}

// perOp formats a per-request count: three decimals from 0.01 up, three
// significant digits below (0.00138 syncs per request is not "0.001", and
// a few reads in a million requests are not "0.000").
func perOp(v *float64) string {
	switch {
	case v == nil:
		return "n/a"
	case *v == 0 || math.Abs(*v) >= 0.01:
		return fmt.Sprintf("%.3f", *v)
	}
	return Small(*v)
}

// Small formats a figure below 0.01 with three significant digits:
// 0.00138, 0.000939, 1.23e-05 below 0.0001 (the console's per-request
// counts and the HTML report's and compare's figures alike).
func Small(v float64) string {
	if a := math.Abs(v); a >= 0.0001 {
		return strconv.FormatFloat(v, 'f', 2-int(math.Floor(math.Log10(a))), 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

func opt(v *float64, format string) string {
	if v == nil {
		return "n/a"
	}
	return fmt.Sprintf(format, *v)
}

func trunc(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n+1:]
}

// oneLine puts s on one line of at most about 200 bytes; a longer s
// keeps its start and its end, where drivers put the server's own words
// ("… server error: FATAL: the database system is shutting down").
func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	const head, tail = 80, 120
	if len(s) <= head+tail {
		return s
	}
	h, t := head, len(s)-tail
	for h > 0 && !utf8.RuneStart(s[h]) {
		h--
	}
	for t < len(s) && !utf8.RuneStart(s[t]) {
		t++
	}
	return s[:h] + " … " + s[t:]
}

// EmulatedWait is a file's wait for the emulated limits (run --emulate).
type EmulatedWait struct {
	Name    string
	Ms, Pct float64 // the wait, and its share of the file's IO time
}

// EmulatedWaits lists the files that waited for emulated limits.
func EmulatedWaits(files []File) []EmulatedWait {
	var out []EmulatedWait
	for _, f := range files {
		if total := f.ReadMs + f.WriteMs + f.SyncMs; f.EmulatedWaitMs != nil && total > 0 {
			out = append(out, EmulatedWait{Name: f.Name, Ms: *f.EmulatedWaitMs, Pct: 100 * *f.EmulatedWaitMs / total})
		}
	}
	return out
}

// RoundTripsLine describes the round trips to the server each request
// made, by operation, where the connections counted them and they matter:
// a server on another host, or requests of several statements. "" otherwise.
func RoundTripsLine(r *Result) string {
	s := r.Summary
	if s.RoundTripsPerRequest == nil || r.Network == nil && *s.RoundTripsPerRequest < 1.5 {
		return ""
	}
	line := fmt.Sprintf("round trips to the server: %.3g per request", *s.RoundTripsPerRequest)
	var ops []string
	for _, op := range s.OpOrder {
		if o := s.ByOp[op]; o.RoundTripsPerRequest != nil && len(s.OpOrder) > 1 {
			ops = append(ops, fmt.Sprintf("%s %.3g", op, *o.RoundTripsPerRequest))
		}
	}
	if len(ops) > 0 {
		line += " (" + strings.Join(ops, ", ") + ")"
	}
	if n := r.Network; n != nil && n.RoundTripMs.P50 > 0 {
		line += fmt.Sprintf(", at least %.3g ms of each on the network (round trip p50 %.3g ms)", *s.RoundTripsPerRequest*n.RoundTripMs.P50, n.RoundTripMs.P50)
	}
	return line
}

// EvidenceErrorText says how many samples of the server's evidence failed,
// when the first did, and why (on one line).
func EvidenceErrorText(ev *Evidence) string {
	what := ""
	switch {
	case ev.FailedSamples == 1:
		what = "1 sample failed"
	case ev.FailedSamples > 1:
		what = fmt.Sprintf("%d samples failed", ev.FailedSamples)
	}
	if what != "" && ev.FirstFailedS != nil {
		what += fmt.Sprintf(" (the first %.1f s into the run)", *ev.FirstFailedS)
	}
	if what == "" {
		return oneLine(ev.Error)
	}
	return what + ": " + oneLine(ev.Error)
}

// ClientQueueMs is how long ceiling's own threads waited for a core per
// request over the measured phase (evidence.counters
// client_runqueue_s ÷ requests), nil when not measured.
func ClientQueueMs(r *Result) *float64 {
	if r.Evidence == nil || r.Summary.Requests <= 0 {
		return nil
	}
	sec, ok := r.Evidence.Counters[target.CtrClientRunQueueSec]
	if !ok {
		return nil
	}
	return f64(1000 * sec / float64(r.Summary.Requests))
}

// ReplayLine describes a replica's application of its primary's log
// during the measured phase (a PostgreSQL hot standby's WAL replay, a
// MySQL/MariaDB replica's binary log; "" where the target is none): the
// primary's changes applied beside the run's reads, with whose work (CPU,
// IO, conflicts) they competed.
func ReplayLine(r *Result) string {
	if r.Evidence == nil {
		return ""
	}
	bps, ok := r.Evidence.PerSec[target.CtrReplayBytes]
	if !ok {
		return ""
	}
	if r.Target.Engine == "mysql" {
		if bps <= 0 {
			return "replica: nothing of the primary's binary log applied during the run (no changes on the primary, or replication stopped)"
		}
		return fmt.Sprintf("replica: applied %.3g MB/s of the primary's binary log during the run (%.3g MB in all) beside these reads; the applier's CPU and IO are in the server's figures above",
			bps/1e6, r.Evidence.Counters[target.CtrReplayBytes]/1e6)
	}
	if bps <= 0 {
		return "hot standby: no WAL of the primary's replayed during the run (no changes on the primary, or replay paused)"
	}
	return fmt.Sprintf("hot standby: replayed %.3g MB/s of the primary's WAL during the run (%.3g MB in all) beside these reads; replay's CPU and IO are in the server's figures above",
		bps/1e6, r.Evidence.Counters[target.CtrReplayBytes]/1e6)
}
