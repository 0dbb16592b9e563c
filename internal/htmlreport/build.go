package htmlreport

import (
	"fmt"
	"html/template"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/ceiling-db/ceiling/internal/diagnose"
	"github.com/ceiling-db/ceiling/internal/metrics"
	"github.com/ceiling-db/ceiling/internal/report"
	"github.com/ceiling-db/ceiling/internal/target"
)

// Build assembles the report of one or more results. With several, it
// starts with their comparison (the first is the baseline): the headline
// figures side by side with their mean and spread, bar charts, and any
// prediction of one run's verdict checked against another; each result's
// own sections follow.
func Build(ins []Input) (*Doc, error) {
	if len(ins) == 0 {
		return nil, fmt.Errorf("no result to report")
	}
	d := &Doc{Title: "ceiling report"}
	if len(ins) == 1 {
		r := ins[0].Result
		d.Title = "ceiling report: " + r.Workload.Name + " on " + r.Target.Engine
		d.Subtitle = Describe(r)
		d.Glance = glance(r)
		secs, err := resultSections(r, "")
		if err != nil {
			return nil, err
		}
		d.Sections = secs
		return d, nil
	}
	d.Title = fmt.Sprintf("ceiling report: %d results compared", len(ins))
	d.Subtitle = "baseline " + Label(0) + ": " + Describe(ins[0].Result)
	cmp := Compare(ins)
	secs, err := comparisonSections(cmp)
	if err != nil {
		return nil, err
	}
	d.Sections = secs
	for i, in := range ins {
		sub, err := resultSections(in.Result, Label(i))
		if err != nil {
			return nil, err
		}
		d.Sections = append(d.Sections, Section{ID: "result-" + Label(i), Title: fmt.Sprintf("Result %s: %s", Label(i), filepath.Base(in.Path)),
			Blocks: []Block{{Para: Describe(in.Result)}}})
		d.Sections = append(d.Sections, sub...)
	}
	return d, nil
}

// Label is the short name of the i-th result: A, B, … Z, R27, R28, …
func Label(i int) string {
	if i < 26 {
		return string(rune('A' + i))
	}
	return "R" + strconv.Itoa(i+1)
}

// resultSections are the sections of one result; prefix (a result's label)
// makes the section ids unique and marks them as subsections.
func resultSections(r *report.Result, prefix string) ([]Section, error) {
	id := func(s string) string {
		if prefix == "" {
			return s
		}
		return prefix + "-" + s
	}
	sub := prefix != ""
	secs := []Section{
		{ID: id("test"), Title: "Test definition and target", Sub: sub, Blocks: testBlocks(r)},
		{ID: id("verdict"), Title: "Verdict", Sub: sub, Blocks: verdictBlocks(r)},
		{ID: id("summary"), Title: "Summary", Sub: sub, Blocks: summaryBlocks(r)},
	}
	tp, err := throughputBlocks(r)
	if err != nil {
		return nil, err
	}
	secs = append(secs, Section{ID: id("time"), Title: "Throughput and latency over time", Sub: sub, Blocks: tp})
	ev, err := evidenceBlocks(r)
	if err != nil {
		return nil, err
	}
	secs = append(secs, Section{ID: id("server"), Title: "Server evidence over time", Sub: sub, Blocks: ev})
	if r.Knee != nil {
		secs = append(secs, Section{ID: id("knee"), Title: "Knee search", Sub: sub, Blocks: kneeBlocks(r)})
	}
	if len(r.Steps) > 0 {
		st, err := stepBlocks(r)
		if err != nil {
			return nil, err
		}
		title := "Open-loop steps (LT)"
		switch {
		case isBatch(r.Steps):
			title = "Batch-size steps"
		case isThreads(r.Steps):
			title = "Thread-count steps"
		case r.Knee != nil:
			title = "Knee probes as open-loop steps (LT), in the order run"
		}
		secs = append(secs, Section{ID: id("steps"), Title: title, Sub: sub, Blocks: st})
	}
	if len(r.Isolated) > 0 {
		ib, err := isolatedBlocks(r)
		if err != nil {
			return nil, err
		}
		secs = append(secs, Section{ID: id("alone"), Title: "Each operation alone", Sub: sub, Blocks: ib})
	}
	if len(r.Runs) > 1 {
		rp, err := repeatBlocks(r)
		if err != nil {
			return nil, err
		}
		secs = append(secs, Section{ID: id("repeats"), Title: "Repeats", Sub: sub, Blocks: rp})
	}
	return secs, nil
}

func kv(rows *[][]string, k, v string) {
	if v != "" {
		*rows = append(*rows, []string{k, v})
	}
}

// testBlocks describe the test and the target. The DSN is redacted again
// here, in case the result was edited by hand.
func testBlocks(r *report.Result) []Block {
	var rows [][]string
	kv(&rows, "workload", r.Workload.Name)
	kv(&rows, "workload parameters", paramsText(r.Workload.Params))
	kv(&rows, "target", fmt.Sprintf("%s %s", r.Target.Engine, r.Target.Version))
	kv(&rows, "DSN", target.Redact(r.Target.DSN))
	if r.Target.Local {
		kv(&rows, "server location", "this host (host CPU and flush probe describe the server's machine)")
	}
	kv(&rows, "durability", durabilityText(r))
	switch r.Target.TLS {
	case "":
	case target.TLSOff:
		kv(&rows, "connections", "unencrypted")
	default:
		kv(&rows, "connections", "encrypted: "+r.Target.TLS+" (costs CPU on both sides of every request)")
	}
	if r.Target.Pooler != "" {
		kv(&rows, "connection pooler", r.Target.Pooler+" mode: one server connection per session; server figures include its other clients' sessions, latencies its hop")
	}
	if r.Target.ReadOnly != "" {
		kv(&rows, "read-only server", r.Target.ReadOnly+": the tables were prepared on its primary")
	}
	if line := report.ReplayLine(r); line != "" {
		kv(&rows, "replica's own work", line)
	}
	kv(&rows, "load model", loadText(r))
	kv(&rows, "threads (connections)", strconv.Itoa(r.Load.Threads))
	if sh := r.Load.Shard; sh != nil {
		kv(&rows, "shards", shardText(sh, r.Load.Threads))
	}
	if r.Load.WarmupS > 0 {
		kv(&rows, "warm-up (excluded)", strconv.FormatFloat(r.Load.WarmupS, 'f', -1, 64)+" s")
	}
	if r.Load.Arrival != nil {
		kv(&rows, "arrivals", *r.Load.Arrival)
	}
	if r.Load.LateAfterS != nil {
		kv(&rows, "late after", strconv.FormatFloat(*r.Load.LateAfterS, 'f', -1, 64)+" s")
	}
	if r.Load.Repeat > 1 {
		kv(&rows, "repeats", strconv.Itoa(r.Load.Repeat))
	}
	kv(&rows, "measured", fmt.Sprintf("%.1f s", r.Summary.ElapsedS))
	kv(&rows, "started", r.StartedAt.UTC().Format("2006-01-02 15:04:05 UTC"))
	kv(&rows, "result id", r.ID)
	kv(&rows, "ceiling version", r.Tool.Version)
	if r.Partial {
		kv(&rows, "partial", "yes: the run was interrupted; the figures cover what it measured")
	}
	if h := r.Host; h != nil {
		kv(&rows, "flush probe", fmt.Sprintf("%d × 4 KiB write+fdatasync: p50 %s ms, p99 %s ms, mean %s ms (%s)", h.N, num(h.FsyncMs.P50), num(h.FsyncMs.P99), num(h.FsyncMs.Mean), h.Note))
	}
	if n := r.Network; n != nil {
		kv(&rows, "round trip", fmt.Sprintf("%d × %s, one at a time, before the run: p50 %s ms, p99 %s ms, mean %s ms (each request waits at least this long)", n.N, n.What, num(n.RoundTripMs.P50), num(n.RoundTripMs.P99), num(n.RoundTripMs.Mean)))
	}
	blocks := []Block{{Table: &Table{Head: []string{"", ""}, Rows: rows, Align: "ll"}}}
	if len(r.Target.Settings) > 0 {
		var srows [][]string
		for _, k := range sortedKeys(r.Target.Settings) {
			srows = append(srows, []string{k, r.Target.Settings[k]})
		}
		blocks = append(blocks, Block{Table: &Table{Caption: "Server settings at the start", Head: []string{"setting", "value"}, Rows: srows, Align: "ll"}})
	}
	if d := r.Workload.Definition; d != "" {
		blocks = append(blocks, Block{PreTitle: "The workload's definition (its file, as the run read it)", Pre: d})
	}
	for _, n := range r.Notes {
		blocks = append(blocks, Block{Note: n})
	}
	return blocks
}

func paramsText(p map[string]any) string {
	var parts []string
	for _, k := range sortedKeys(p) {
		parts = append(parts, fmt.Sprintf("%s=%v", k, p[k]))
	}
	return strings.Join(parts, ", ")
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// suggestionText is "X: predicted ×N (≈ M req/s)".
func suggestionText(s diagnose.Suggestion) string {
	t := "try " + s.Action
	if s.PredictedGain != nil {
		t += ": predicted " + gain(*s.PredictedGain)
		switch {
		case s.PredictedRequestsPerSec != nil:
			t += " (≈ " + report.ApproxRate(*s.PredictedRequestsPerSec) + " req/s)"
		case s.PredictedRowsPerSec != nil:
			t += " (≈ " + report.ApproxRate(*s.PredictedRowsPerSec) + " rows/s)"
		}
	}
	return t
}

func verdictBlocks(r *report.Result) []Block {
	v := r.Verdict
	if v == nil {
		return []Block{{Note: "no verdict: nothing was measured"}}
	}
	vb := &VerdictBlock{Headline: v.Bottleneck, Evidence: v.Evidence}
	for _, s := range v.Suggestions {
		vb.Suggestions = append(vb.Suggestions, suggestionText(s))
	}
	blocks := []Block{{Verdict: vb}}
	var rows [][]string
	for _, ru := range v.Rules {
		m := "no"
		if ru.Matched {
			m = "yes"
		}
		rows = append(rows, []string{ru.Name, m, strconv.FormatFloat(ru.Score, 'f', 2, 64), ru.Why})
	}
	if len(rows) > 0 {
		blocks = append(blocks, Block{Table: &Table{Caption: "Rules", Head: []string{"rule", "matched", "score", "why"}, Rows: rows, Align: "lrrl"}})
	}
	return blocks
}

func latencyCells(l *metrics.Latency) []string {
	if l == nil {
		return []string{"n/a", "n/a", "n/a", "n/a", "n/a", "n/a", "n/a"}
	}
	return []string{num(l.P50), num(l.P90), num(l.P95), num(l.P99), num(l.P999), num(l.Max), num(l.Mean)}
}

func summaryBlocks(r *report.Result) []Block {
	s := r.Summary
	var rows [][]string
	kv(&rows, "requests", group(strconv.FormatInt(s.Requests, 10)))
	kv(&rows, "requests/s", num(s.RequestsPerSec))
	kv(&rows, "rows/s", num(s.RowsPerSec))
	kv(&rows, "MB/min", opt(s.MBPerMin))
	for _, k := range report.FigureKeys(r.Figures) {
		v := r.Figures[k]
		text := num(v)
		if v == math.Trunc(v) && math.Abs(v) < 1e15 {
			text = group(strconv.FormatInt(int64(v), 10)) // counts: no decimals
		}
		kv(&rows, report.FigureLabel(k), text)
	}
	if s.LatencyMs != nil {
		kv(&rows, "latency p50 / p95 / p99 ms", fmt.Sprintf("%s / %s / %s", num(s.LatencyMs.P50), num(s.LatencyMs.P95), num(s.LatencyMs.P99)))
	} else {
		kv(&rows, "latency", "n/a")
	}
	kv(&rows, "errors", strconv.FormatInt(s.Errors, 10))
	if s.Scheduled != nil {
		kv(&rows, "late (skipped)", fmt.Sprintf("%s of %s scheduled (%s%%)", group(strconv.FormatInt(s.Late, 10)), group(strconv.FormatInt(*s.Scheduled, 10)), fixed(pct(s.Late, *s.Scheduled), 2)))
	}
	if r.Client.CPUPctCores != nil {
		v := fmt.Sprintf("%s%% of %d cores", num(*r.Client.CPUPctCores), r.Client.Cores)
		if ms := report.ClientQueueMs(r); ms != nil {
			v += fmt.Sprintf("; its threads waited for a core %s ms per request", diagnose.MsText(*ms))
		}
		kv(&rows, "load generator CPU", v)
	}
	if r.Client.ThinkShare != nil {
		kv(&rows, "think times", fmt.Sprintf("%s%% of the workers' time (outside the latencies)", num(100**r.Client.ThinkShare)))
	}
	if l := report.RoundTripsLine(r); l != "" {
		kv(&rows, "round trips to the server", strings.TrimPrefix(l, "round trips to the server: "))
	}
	caption := "Headline figures"
	if n := report.MixedRatesNote(r); n != "" {
		caption += " (" + n + ")"
	}
	blocks := []Block{{Table: &Table{Caption: caption, Head: []string{"figure", "value"}, Rows: rows}}}

	var ops [][]string
	order := s.OpOrder
	if len(order) == 0 {
		order = sortedKeys(s.ByOp)
	}
	for _, name := range order {
		o := s.ByOp[name]
		row := []string{name, group(strconv.FormatInt(o.Requests, 10)), num(o.RequestsPerSec), num(o.RowsPerSec), opt(o.MBPerMin)}
		row = append(row, latencyCells(o.LatencyMs)...)
		ops = append(ops, append(row, strconv.FormatInt(o.Errors, 10)))
	}
	if len(order) > 1 {
		row := []string{"total", group(strconv.FormatInt(s.Requests, 10)), num(s.RequestsPerSec), num(s.RowsPerSec), opt(s.MBPerMin)}
		row = append(row, latencyCells(s.LatencyMs)...)
		ops = append(ops, append(row, strconv.FormatInt(s.Errors, 10)))
	}
	if len(ops) > 0 {
		blocks = append(blocks, Block{Table: &Table{Caption: "Operations (latency in ms)",
			Head: []string{"operation", "requests", "req/s", "rows/s", "MB/min", "p50", "p90", "p95", "p99", "p99.9", "max", "mean", "errors"}, Rows: ops}})
	}
	if len(s.ErrorsByClass) > 0 {
		var er [][]string
		for _, c := range sortedKeys(s.ErrorsByClass) {
			er = append(er, []string{c, strconv.FormatInt(s.ErrorsByClass[c], 10), s.FirstErrors[c]})
		}
		blocks = append(blocks, Block{Table: &Table{Caption: "Errors by class", Head: []string{"class", "count", "first error"}, Rows: er, Align: "lrl"}})
	}
	var costs [][]string
	for _, c := range costRows {
		costs = append(costs, []string{c.label, opt(c.get(r.Costs))})
	}
	blocks = append(blocks, Block{Table: &Table{Caption: "Server cost per request (n/a: the server does not give the counter)", Head: []string{"cost", "per request"}, Rows: costs}})
	if m := r.Target.Settings["missing_evidence"]; m != "" && r.Costs.AnyMissing() {
		blocks = append(blocks, Block{Note: fmt.Sprintf("n/a: not available from %s: %s", r.Target.Engine, m)})
	}
	if d := r.LogDevice; d != nil {
		note := fmt.Sprintf("Log device %s (kernel counters over the measured phase, the whole device): %s", d.Name, report.LogDeviceLine(d))
		if d.Note != "" {
			note += "; " + d.Note
		}
		blocks = append(blocks, Block{Note: note})
	}
	if r.Evidence != nil {
		if line := report.WaitEventsLine(r.Evidence.Counters); line != "" {
			blocks = append(blocks, Block{Note: fmt.Sprintf("Wait events of ceiling's sessions (%s): %s", report.WaitEventsHow(r), line)})
		}
	}
	if note := report.IdleFilesNote(r.Files); note != "" {
		blocks = append(blocks, Block{Note: "File IO: " + note})
	} else if len(r.Files) > 0 {
		var fr [][]string
		for _, f := range report.TouchedFiles(r.Files) { // the others were open but idle, as on the console
			syncs := group(strconv.FormatInt(f.Syncs, 10))
			if f.NoSyncs {
				syncs = "n/a"
			}
			fr = append(fr, []string{f.Name, f.Role, group(strconv.FormatInt(f.Reads, 10)), group(strconv.FormatInt(f.Writes, 10)), num(f.IOPS), num(f.MBPerSec),
				opt(f.KBPerWrite), syncs, opt(f.AvgReadMs), opt(f.AvgWriteMs), opt(f.AvgSyncMs)})
		}
		blocks = append(blocks, Block{Table: &Table{Caption: "File IO over the measured phase (latencies are averages per call)",
			Align: "ll", Head: []string{"file", "role", "reads", "writes", "IOPS", "MB/s", "KB/write", "syncs", "read ms", "write ms", "sync ms"}, Rows: fr}})
		if na := report.FilesNA(r.Files); na != "" {
			blocks = append(blocks, Block{Note: "n/a: " + na})
		}
		if e := r.Target.Emulation; e != nil {
			var waits []string
			for _, ew := range report.EmulatedWaits(r.Files) {
				waits = append(waits, fmt.Sprintf("%s %.0f%% (%.0f ms)", ew.Name, ew.Pct, ew.Ms))
			}
			note := fmt.Sprintf("The files were held to profile %s's limits while measuring (--emulate)", e.Profile)
			if len(waits) > 0 {
				note += "; the share of each file's IO time spent waiting for them: " + strings.Join(waits, ", ")
			}
			blocks = append(blocks, Block{Note: note})
		}
	}
	if r.Evidence != nil && r.Evidence.Error != "" {
		blocks = append(blocks, Block{Note: "server evidence incomplete: " + report.EvidenceErrorText(r.Evidence)})
	}
	return blocks
}

// costRow is one per-request cost.
type costRow struct {
	key, label string
	get        func(report.Costs) *float64
}

var costRows = []costRow{
	{"log_bytes_per_op", "log bytes", func(c report.Costs) *float64 { return c.LogBytesPerOp }},
	{"log_syncs_per_op", "log syncs", func(c report.Costs) *float64 { return c.LogSyncsPerOp }},
	{"log_writes_per_op", "log writes", func(c report.Costs) *float64 { return c.LogWritesPerOp }},
	{"data_reads_per_op", "data reads", func(c report.Costs) *float64 { return c.DataReadsPerOp }},
	{"data_writes_per_op", "data writes", func(c report.Costs) *float64 { return c.DataWritesPerOp }},
	{"data_syncs_per_op", "data-file syncs", func(c report.Costs) *float64 { return c.DataSyncsPerOp }},
	{"commits_per_op", "commits", func(c report.Costs) *float64 { return c.CommitsPerOp }},
	{"cpu_us_per_op", "CPU µs", func(c report.Costs) *float64 { return c.CPUusPerOp }},
}

func pct(n, of int64) *float64 {
	if of <= 0 {
		return nil
	}
	return f64(100 * float64(n) / float64(of))
}

// chartBlock renders c into a block; an error names the chart.
func chartBlock(title string, svg func() (string, error), note string) (Block, error) {
	s, err := svg()
	if err != nil {
		return Block{}, err
	}
	return Block{Chart: &Chart{Title: title, SVG: template.HTML(s), Note: note}}, nil //nolint:gosec // SVG drawn by gonum from numbers; labels escaped
}

// points is the measured intervals of r on one time axis: repeats follow
// each other, with a gap between runs.
type points struct {
	t    []float64
	pts  []*report.IntervalPoint // nil: the gap between two runs
	runs int
}

func timeline(r *report.Result) points {
	var p points
	off, lastRun, lastT := 0.0, 0, 0.0
	for i := range r.Intervals {
		iv := &r.Intervals[i]
		if iv.Warmup {
			continue
		}
		run := 1
		if iv.Run != nil {
			run = *iv.Run
		}
		if run != lastRun {
			if lastRun != 0 {
				off = lastT + 1
				p.t = append(p.t, math.NaN())
				p.pts = append(p.pts, nil)
			}
			lastRun = run
			p.runs++
		}
		p.t = append(p.t, off+iv.T)
		p.pts = append(p.pts, iv)
		lastT = off + iv.T
	}
	return p
}

// series returns the named series of get over the timeline.
func (p points) series(name string, get func(*report.IntervalPoint) float64) Series {
	s := Series{Name: name, X: make([]float64, len(p.t)), Y: make([]float64, len(p.t))}
	for i, pt := range p.pts {
		s.X[i] = p.t[i]
		if pt == nil {
			s.X[i] = p.t[max(i-1, 0)]
			s.Y[i] = math.NaN()
			continue
		}
		s.Y[i] = get(pt)
	}
	return s
}

func (p points) xLabel() string {
	if p.runs > 1 {
		return fmt.Sprintf("time, s (%d runs one after another, warm-up left out)", p.runs)
	}
	return "time since the start, s (warm-up left out)"
}

func latOf(f func(*metrics.Latency) float64) func(*report.IntervalPoint) float64 {
	return func(pt *report.IntervalPoint) float64 {
		if pt.LatencyMs == nil {
			return math.NaN()
		}
		return f(pt.LatencyMs)
	}
}

func throughputBlocks(r *report.Result) ([]Block, error) {
	p := timeline(r)
	if len(p.pts) == 0 {
		return []Block{{Note: "no per-interval series in this result"}}, nil
	}
	req := p.series("requests/s", func(pt *report.IntervalPoint) float64 { return pt.RequestsPerSec })
	rows := p.series("rows/s", func(pt *report.IntervalPoint) float64 { return pt.RowsPerSec })
	tc := LineChart{Title: "Throughput", XLabel: p.xLabel(), YLabel: "per second", Series: []Series{req, rows}}
	note := ""
	switch mr, mq := maxOf([]Series{rows}), maxOf([]Series{req}); {
	case sameSeries(req, rows):
		tc.Series = []Series{{Name: "requests/s = rows/s", X: req.X, Y: req.Y}}
		note = "one row per request: the two series are the same"
	case mq > 0 && (mr/mq > 5 || mr/mq < 0.2):
		// Far apart (batches): rows/s gets its own axis.
		tc.YLabel, tc.Series = "requests/s", []Series{req}
		tc.Y2Label, tc.Series2 = "rows/s", []Series{rows}
	}
	b1, err := chartBlock(tc.Title, tc.SVG, note)
	if err != nil {
		return nil, err
	}
	lc := LineChart{Title: "Latency percentiles", XLabel: p.xLabel(), YLabel: "ms", Series: []Series{
		p.series("p50", latOf(func(l *metrics.Latency) float64 { return l.P50 })),
		p.series("p95", latOf(func(l *metrics.Latency) float64 { return l.P95 })),
		p.series("p99", latOf(func(l *metrics.Latency) float64 { return l.P99 })),
	}}
	if n := r.Network; n != nil && n.RoundTripMs.P50 > 0 && hasData(lc.Series) {
		lc.Lines = append(lc.Lines, RefLine{Name: "round trip to the server (p50, before the run)", Value: n.RoundTripMs.P50})
	}
	lnote := ""
	if r.Load.Model == "open" {
		lnote = "open loop: latency counts from each request's scheduled start"
	}
	if sh := r.Load.Shard; sh != nil && sh.I < 0 {
		b1.Chart.Note = strings.TrimPrefix(b1.Chart.Note+"; the shards' series added up point by point", "; ")
		if !slices.ContainsFunc(r.Intervals, func(pt report.IntervalPoint) bool { return pt.LatencyMs != nil }) {
			// The shards kept percentiles per interval, which do not
			// add up: no series to draw.
			b1.Chart.Note += ". Latency over time is not available in this merged result (its shards kept no histogram per interval: made by an older ceiling); the run's percentiles above are exact, from the shards' histograms"
			return []Block{b1}, nil
		}
		lnote = strings.TrimPrefix(lnote+"; each point from the shards' histograms of the interval merged", "; ")
	}
	b2, err := chartBlock(lc.Title, lc.SVG, lnote)
	if err != nil {
		return nil, err
	}
	return []Block{b1, b2}, nil
}

// shardText describes a shard's part of a sharded run, or the merge.
func shardText(sh *report.Shard, threads int) string {
	if sh.I < 0 {
		return fmt.Sprintf("%d shards merged (run %s): %d load generators' results added up", sh.N, sh.Key, sh.N)
	}
	return fmt.Sprintf("shard %d of %d (run %s): workers %d to %d of %d; no verdict of its own (ceiling merge)", sh.I, sh.N, sh.Key, sh.FirstWorker, sh.FirstWorker+threads-1, sh.Threads)
}

func sameSeries(a, b Series) bool {
	if len(a.Y) != len(b.Y) {
		return false
	}
	for i := range a.Y {
		if a.Y[i] != b.Y[i] && !(math.IsNaN(a.Y[i]) && math.IsNaN(b.Y[i])) {
			return false
		}
	}
	return true
}

func ptr(get func(*report.IntervalPoint) *float64) func(*report.IntervalPoint) float64 {
	return func(pt *report.IntervalPoint) float64 { return nan(get(pt)) }
}

// syncsCell is a step's log syncs/s, else its fsyncs of log and data
// together marked † (report.FsyncsNote), else n/a.
func syncsCell(logSyncs, fsyncs *float64) string {
	if logSyncs == nil && fsyncs != nil {
		return opt(fsyncs) + "†"
	}
	return opt(logSyncs)
}

// dataLatency is the mean latency per data-file IO in the interval.
func dataLatency(pt *report.IntervalPoint) float64 {
	n, ms, _ := pt.DataFileIO()
	if n == 0 {
		return math.NaN()
	}
	return ms / float64(n)
}

// logSyncLatency is the mean latency of one log sync in the interval.
func logSyncLatency(pt *report.IntervalPoint) float64 {
	var ms float64
	var n int64
	for _, f := range pt.Files {
		if f.Role == "log" {
			ms += f.SyncMs
			n += f.Syncs
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return ms / float64(n)
}

// minDeviceIOs matches the report package: an interval needs this many
// data-file IOs before its average latency estimates the device's.
const minDeviceIOs = 10

// deviceLatency estimates the data device's own latency as the lowest
// per-interval average data-file latency (queueing is least there).
func deviceLatency(r *report.Result) *float64 {
	var best *float64
	for i := range r.Intervals {
		pt := &r.Intervals[i]
		var n int64
		for _, f := range pt.Files {
			if f.Role == "data" {
				n += f.Reads + f.Writes
			}
		}
		if n < minDeviceIOs {
			continue
		}
		if v := dataLatency(pt); !math.IsNaN(v) && (best == nil || v < *best) {
			best = f64(v)
		}
	}
	return best
}

// waitOrder is the stacking order of the wait categories.
var waitOrder = []string{diagnose.WaitLog, diagnose.WaitRepl, diagnose.WaitDataWrite, diagnose.WaitDataRead, diagnose.WaitLock, diagnose.WaitCPU, diagnose.WaitOther, diagnose.WaitClient}

func evidenceBlocks(r *report.Result) ([]Block, error) {
	p := timeline(r)
	var blocks []Block
	var missing []string
	add := func(title string, c LineChart, note string) error {
		if !hasData(c.Series) && !hasData(c.Series2) {
			missing = append(missing, strings.ToLower(title))
			return nil
		}
		b, err := chartBlock(title, c.SVG, note)
		if err != nil {
			return err
		}
		blocks = append(blocks, b)
		return nil
	}
	xl := p.xLabel()
	logw := LineChart{Title: "Log writes", XLabel: xl, YLabel: "log MB/s",
		Series:  []Series{p.series("log MB/s", ptr(func(pt *report.IntervalPoint) *float64 { return pt.LogMBPerSec }))},
		Y2Label: "log syncs/s", Series2: []Series{p.series("log syncs/s", ptr(func(pt *report.IntervalPoint) *float64 { return pt.LogSyncsPerSec }))},
	}
	if slices.ContainsFunc(r.Intervals, func(pt report.IntervalPoint) bool { return pt.FsyncsPerSec != nil }) {
		// MariaDB: no log syncs of its own; its fsyncs of log and data together.
		logw.Y2Label = "syncs/s"
		logw.Series2 = append(logw.Series2, p.series("fsyncs/s, log and data together", ptr(func(pt *report.IntervalPoint) *float64 { return pt.FsyncsPerSec })))
	}
	logNote := ""
	if r.Target.Engine == "postgres" {
		logNote = "PostgreSQL's backends publish their statistics at most once a second, so a second may show none of its log writes and the next twice its share"
	}
	if err := add("Log writes", logw, logNote); err != nil {
		return nil, err
	}
	if err := add("Data-file IOPS", LineChart{Title: "Data-file IOPS", XLabel: xl, YLabel: "IOPS (reads + writes/s)",
		Series: []Series{p.series("data-file IOPS", ptr(func(pt *report.IntervalPoint) *float64 { return pt.DataIOPS }))},
	}, ""); err != nil {
		return nil, err
	}
	lat := LineChart{Title: "Data-file latency vs device latency", XLabel: xl, YLabel: "ms per IO",
		Series: []Series{p.series("data-file latency", dataLatency), p.series("log sync latency", logSyncLatency)}}
	if dev := deviceLatency(r); dev != nil && hasData(lat.Series) {
		lat.Lines = append(lat.Lines, RefLine{Name: "device latency (lowest interval)", Value: *dev})
	}
	if r.Host != nil && r.Host.FsyncMs.Mean > 0 && hasData(lat.Series) {
		lat.Lines = append(lat.Lines, RefLine{Name: "flush probe (fdatasync mean)", Value: r.Host.FsyncMs.Mean})
	}
	if err := add(lat.Title, lat, "file latency well above the device's means requests queue for the storage"); err != nil {
		return nil, err
	}
	if d := r.LogDevice; d != nil {
		if err := add("Log device", LineChart{Title: "Log device " + d.Name, XLabel: xl, YLabel: "ms per request",
			Series: []Series{
				p.series("cache flush", ptr(func(pt *report.IntervalPoint) *float64 { return pt.LogDevFlushMs })),
				p.series("write", ptr(func(pt *report.IntervalPoint) *float64 { return pt.LogDevWriteMs })),
			},
			Y2Label: "flushes/s", Series2: []Series{p.series("flushes/s", ptr(func(pt *report.IntervalPoint) *float64 { return pt.LogDevFlushesPerSec }))},
		}, "the kernel's counters of the block device holding the server's log directory (the whole device): a commit waits for a write and a cache flush there"); err != nil {
			return nil, err
		}
	}
	if err := add("CPU", LineChart{Title: "CPU", XLabel: xl, YLabel: "% of the host's cores", Series: []Series{
		p.series("database server", ptr(func(pt *report.IntervalPoint) *float64 { return pt.ServerCPUPct })),
		p.series("whole host", ptr(func(pt *report.IntervalPoint) *float64 { return pt.HostCPUPct })),
		p.series("load generator", ptr(func(pt *report.IntervalPoint) *float64 { return pt.ClientCPUPct })),
	}}, ""); err != nil {
		return nil, err
	}
	var waits []Series
	for _, cat := range waitOrder {
		s := p.series(cat, func(pt *report.IntervalPoint) float64 {
			v, ok := pt.WaitMsPerSec[cat]
			if !ok {
				return math.NaN()
			}
			return v / 1000
		})
		if hasNonZero(s) {
			waits = append(waits, s)
		}
	}
	if err := add("Wait categories", LineChart{Title: "Wait categories", XLabel: xl, YLabel: "sessions waiting (wait s per s)", Series: waits, Stacked: true},
		"stacked: the height is the average number of sessions waiting; client is time spent waiting for ceiling's next request"); err != nil {
		return nil, err
	}
	if len(missing) > 0 {
		blocks = append(blocks, Block{Note: "not measured by this target or result: " + strings.Join(missing, ", ")})
	}
	return blocks, nil
}

func hasNonZero(s Series) bool {
	for _, v := range s.Y {
		if !math.IsNaN(v) && v != 0 {
			return true
		}
	}
	return false
}

func isBatch(steps []report.Step) bool   { return len(steps) > 0 && steps[0].Batch != nil }
func isThreads(steps []report.Step) bool { return len(steps) > 0 && steps[0].Threads != nil }

// stepX is a step's position on the x axis: its batch size, thread count
// or requested rate.
func stepX(s report.Step) float64 {
	switch {
	case s.Batch != nil:
		return float64(*s.Batch)
	case s.Threads != nil:
		return float64(*s.Threads)
	}
	return s.Rate
}

func stepSeries(steps []report.Step, name string, get func(report.Step) float64) Series {
	s := Series{Name: name}
	for _, st := range steps {
		s.X = append(s.X, stepX(st))
		s.Y = append(s.Y, get(st))
	}
	return s
}

func stepLat(f func(*metrics.Latency) float64) func(report.Step) float64 {
	return func(s report.Step) float64 {
		if s.LatencyMs == nil {
			return math.NaN()
		}
		return f(s.LatencyMs)
	}
}

func stepBlocks(r *report.Result) ([]Block, error) {
	steps := r.Steps
	threads := isThreads(steps)
	batch := isBatch(steps) || threads // closed-loop steps
	var rows [][]string
	var marks [][]string
	thin, fsyncs := false, false
	nopm := report.StepsHaveNOPM(steps) // TPC-C: new orders per minute by requested rate
	for i, s := range steps {
		lat := latencyCells(s.LatencyMs)
		if !batch && report.ThinP99(s) {
			lat[3], thin = lat[3]+"*", true
		}
		first := rate(s.Rate)
		if batch {
			first = strconv.Itoa(int(stepX(s)))
		}
		bn := "n/a"
		if s.Verdict != nil {
			bn = s.Verdict.Bottleneck
			if !s.Saturated && bn != diagnose.None && bn != diagnose.Errors && !batch {
				bn += " (kept up)"
			}
			if near := report.NearestRules(s.Verdict); near != "" {
				bn += " (nearest: " + near + ")"
			}
		}
		sat := ""
		if s.Saturated {
			sat = "saturated"
		}
		if s.Partial {
			sat = strings.TrimSpace(sat + " partial")
		}
		row := []string{strconv.Itoa(i + 1), first, withSD(opt(s.AchievedPerSec), s.RepeatStats["achieved_per_sec"]), fixed(s.AchievedPct, 1),
			group(strconv.FormatInt(s.Late, 10)), withSD(fixed(s.LatePct, 2), s.RepeatStats["late_pct"]), strconv.FormatInt(s.Failed, 10)}
		if nopm {
			row = append(row, report.StepNOPM(s))
		}
		rows = append(rows, append(row, lat[0], lat[2], withSD(lat[3], s.RepeatStats["p99_ms"]), opt(s.LogMBPerSec), syncsCell(s.LogSyncsPerSec, s.FsyncsPerSec), opt(s.DataIOPS), bn, sat))
		fsyncs = fsyncs || s.LogSyncsPerSec == nil && s.FsyncsPerSec != nil
		m := make([]string, len(rows[i]))
		if s.Saturated {
			m[len(m)-1] = "sat"
		}
		if s.AchievedPct != nil && *s.AchievedPct < report.SatAchievedPct {
			m[3] = "sat"
		}
		if s.LatePct != nil && *s.LatePct > report.SatLatePct {
			m[5] = "sat"
		}
		marks = append(marks, m)
	}
	head := []string{"step", "requested req/s", "achieved req/s", "achieved %", "late", "late %", "failed", "p50 ms", "p95 ms", "p99 ms", "log MB/s", "log syncs/s", "data IOPS", "verdict", "saturation"}
	align := "rrrrrrrrrrrrrll"
	if nopm {
		head, align = slices.Insert(head, 7, "NOPM"), "r"+align
	}
	caption := fmt.Sprintf("Requested vs achieved rate per step (latency from the scheduled start; late = could not start within the limit, skipped; saturated = late above %g%% or achieved below %g%%; a verdict marked kept up is of a step that ran at its rate: what each request's time is made of, not where the rate tops out)", report.SatLatePct, report.SatAchievedPct)
	if len(r.Runs) > 1 {
		caption += "; the runs merged, ± one standard deviation over the runs"
	}
	if fsyncs {
		caption += "; " + report.FsyncsNote
	}
	if thin {
		caption += "; " + report.ThinP99Note
	}
	var lagged []string
	for i, s := range steps {
		if s.StatsLagScale != nil {
			lagged = append(lagged, strconv.Itoa(i+1))
		}
	}
	if n := report.StatsLagNote(lagged); n != "" {
		caption += "; " + strings.TrimSuffix(n, ".")
	}
	blocks := []Block{{Table: &Table{Caption: caption, Head: head, Rows: rows, Marks: marks, Align: align}}}
	switch {
	case threads:
		blocks = []Block{{Table: threadsTable(steps)}}
		if sum := report.ThreadsSummary(steps); sum != "" {
			blocks = append(blocks, Block{Note: strings.ToUpper(sum[:1]) + sum[1:] + "."})
		}
	case batch:
		blocks = []Block{{Table: batchTable(steps)}}
	}

	// Charts read left to right by rate (knee probes are not in rate order).
	steps = append([]report.Step(nil), steps...)
	sort.SliceStable(steps, func(i, j int) bool { return stepX(steps[i]) < stepX(steps[j]) })
	xl := "requested rate, req/s"
	switch {
	case threads:
		xl = "threads (workers, each with its connection)"
	case batch:
		xl = "batch size, rows per request"
	}
	var charts []LineChart
	switch {
	case threads:
		charts = append(charts, LineChart{Title: "Throughput by thread count", XLabel: xl, YLabel: "req/s",
			Series:  []Series{stepSeries(steps, "req/s", func(s report.Step) float64 { return nan(s.AchievedPerSec) })},
			Y2Label: "log MB/s", Series2: []Series{stepSeries(steps, "log MB/s", func(s report.Step) float64 { return nan(s.LogMBPerSec) })}})
	case batch:
		charts = append(charts, LineChart{Title: "Throughput by batch size", XLabel: xl, YLabel: "rows/s",
			Series:  []Series{stepSeries(steps, "rows/s", func(s report.Step) float64 { return nan(s.RowsPerSec) })},
			Y2Label: "log MB/s", Series2: []Series{stepSeries(steps, "log MB/s", func(s report.Step) float64 { return nan(s.LogMBPerSec) })}})
	default:
		charts = append(charts, LineChart{Title: "Requested vs achieved rate (LT)", XLabel: xl, YLabel: "req/s",
			Series: []Series{
				stepSeries(steps, "requested", func(s report.Step) float64 { return s.Rate }),
				stepSeries(steps, "achieved", func(s report.Step) float64 { return nan(s.AchievedPerSec) }),
			},
			Y2Label: "late %", Series2: []Series{stepSeries(steps, "late %", func(s report.Step) float64 { return nan(s.LatePct) })}})
		charts = append(charts, LineChart{Title: "Achieved rate and log writes by step", XLabel: xl, YLabel: "achieved req/s",
			Series:  []Series{stepSeries(steps, "achieved req/s", func(s report.Step) float64 { return nan(s.AchievedPerSec) })},
			Y2Label: "log MB/s", Series2: []Series{stepSeries(steps, "log MB/s", func(s report.Step) float64 { return nan(s.LogMBPerSec) })}})
	}
	latTitle := "Latency by step"
	switch {
	case threads:
		latTitle = "Latency by thread count"
	case batch:
		latTitle = "Latency by batch size"
	}
	charts = append(charts, LineChart{Title: latTitle, XLabel: xl, YLabel: "ms", Series: []Series{
		stepSeries(steps, "p50", stepLat(func(l *metrics.Latency) float64 { return l.P50 })),
		stepSeries(steps, "p95", stepLat(func(l *metrics.Latency) float64 { return l.P95 })),
		stepSeries(steps, "p99", stepLat(func(l *metrics.Latency) float64 { return l.P99 })),
	}})
	logX := geometric(steps)
	for _, c := range charts {
		if !hasData(c.Series) {
			continue
		}
		c.Points, c.LogX = true, logX
		b, err := chartBlock(c.Title, c.SVG, "")
		if err != nil {
			return nil, err
		}
		blocks = append(blocks, b)
	}
	return blocks, nil
}

func statCells(st *report.Stat) []string {
	if st == nil {
		return []string{"n/a", "n/a", "n/a"}
	}
	ci := "n/a"
	if st.CI95Low != nil && st.CI95High != nil {
		ci = "[" + num(*st.CI95Low) + ", " + num(*st.CI95High) + "]"
	}
	return []string{num(st.Mean), opt(st.StdDev), ci}
}

func repeatBlocks(r *report.Result) ([]Block, error) {
	head := []string{"figure"}
	for _, run := range r.Runs {
		h := fmt.Sprintf("run %d", run.Run)
		if run.Partial {
			h += " (partial)"
		}
		head = append(head, h)
	}
	head = append(head, "mean", "stddev", "95% CI")
	var rows [][]string
	for _, f := range report.RepeatMetrics {
		row := []string{f.Label}
		any := false
		for _, run := range r.Runs {
			v := f.Get(run)
			any = any || v != nil
			row = append(row, opt(v))
		}
		if !any {
			continue
		}
		rows = append(rows, append(row, statCells(r.RepeatStats[f.Key])...))
	}
	blocks := []Block{{Table: &Table{Caption: "One column per run, then the mean, sample standard deviation and Student-t 95% confidence interval over the complete runs",
		Head: head, Rows: rows}}}
	if t := runStepsTable(r); t != nil {
		blocks = append(blocks, Block{Table: t})
	}
	var labels []string
	var reqs, p99s []float64
	for _, run := range r.Runs {
		labels = append(labels, fmt.Sprintf("run %d", run.Run))
		reqs = append(reqs, run.RequestsPerSec)
		p99s = append(p99s, nan(report.P99(run.LatencyMs)))
	}
	for _, bc := range []BarChart{
		{Title: "Requests/s by run", YLabel: "req/s", Labels: labels, Values: reqs},
		{Title: "p99 latency by run", YLabel: "ms", Labels: labels, Values: p99s},
	} {
		b, err := chartBlock(bc.Title, bc.SVG, "")
		if err != nil {
			return nil, err
		}
		blocks = append(blocks, b)
	}
	return blocks, nil
}

// geometric reports whether the steps' x values grow by a factor (a ramp
// like 10:1000:x2): they are then best read on a logarithmic axis.
func geometric(steps []report.Step) bool {
	if len(steps) < 3 {
		return false
	}
	lo, hi := math.Inf(1), 0.0
	for _, s := range steps {
		x := stepX(s)
		if x <= 0 {
			return false
		}
		lo, hi = math.Min(lo, x), math.Max(hi, x)
	}
	if hi/lo < 8 {
		return false
	}
	// Evenly spaced steps have a constant difference; a geometric ramp a
	// constant ratio.
	r := stepX(steps[1]) / stepX(steps[0])
	for i := 2; i < len(steps); i++ {
		if math.Abs(stepX(steps[i])/stepX(steps[i-1])-r) > 0.25*r {
			return false
		}
	}
	return r > 1.2
}

// batchTable is the table of a bulk-load batch-size ramp: closed-loop
// steps, so no requested rate or lateness.
func batchTable(steps []report.Step) *Table {
	t := &Table{Caption: "One closed-loop run per batch size (one request = one batch; log/data = log bytes written per data byte loaded)" + repeatedNote(steps, "MB/min"),
		Head:  []string{"step", "batch (rows/request)", "req/s", "rows/s", "MB/min", "log MB/s", "log/data", "p50 ms", "p95 ms", "p99 ms", "failed", "verdict"},
		Align: "rrrrrrrrrrrl"}
	for i, s := range steps {
		lat := latencyCells(s.LatencyMs)
		bn := "n/a"
		if s.Verdict != nil {
			bn = s.Verdict.Bottleneck
		}
		t.Rows = append(t.Rows, []string{strconv.Itoa(i + 1), strconv.Itoa(*s.Batch), opt(s.AchievedPerSec), opt(s.RowsPerSec), withSD(opt(s.MBPerMin), s.RepeatStats["mb_per_min"]),
			opt(s.LogMBPerSec), opt(s.LogBytesPerDataByte), lat[0], lat[2], lat[3], strconv.FormatInt(s.Failed, 10), bn})
	}
	return t
}

// threadsTable is the table of a thread-count ramp: closed-loop steps,
// each with its requests/s against the first step's.
func threadsTable(steps []report.Step) *Table {
	t := &Table{Caption: "One closed-loop run per thread count (scale = req/s ÷ the first step's; per thread = scale ÷ the threads' ratio, 100% = linear; CPU µs = the server's per request)" + repeatedNote(steps, "req/s"),
		Head:  []string{"step", "threads", "req/s", "scale", "per thread", "rows/s", "MB/min", "log MB/s", "p50 ms", "p95 ms", "p99 ms", "CPU µs", "failed", "verdict"},
		Align: "rrrrrrrrrrrrrl"}
	nopm := report.StepsHaveNOPM(steps) // TPC-C: new orders per minute by thread count, HammerDB's curve
	if nopm {
		t.Head = slices.Insert(t.Head, 5, "NOPM")
		t.Align = "r" + t.Align
	}
	for i, s := range steps {
		lat := latencyCells(s.LatencyMs)
		scale, per := report.ThreadScaling(steps, i)
		bn := "n/a"
		if s.Verdict != nil {
			bn = s.Verdict.Bottleneck
			if near := report.NearestRules(s.Verdict); near != "" {
				bn += " (nearest: " + near + ")"
			}
		}
		row := []string{strconv.Itoa(i + 1), strconv.Itoa(*s.Threads), withSD(opt(s.AchievedPerSec), s.RepeatStats["achieved_per_sec"]), scale, per}
		if nopm {
			row = append(row, report.StepNOPM(s))
		}
		t.Rows = append(t.Rows, append(row, opt(s.RowsPerSec), opt(s.MBPerMin),
			opt(s.LogMBPerSec), lat[0], lat[2], lat[3], opt(s.Costs.CPUusPerOp), strconv.FormatInt(s.Failed, 10), bn))
	}
	return t
}

// withSD appends "± sd" to a figure when repeats give its spread.
func withSD(text string, st *report.Stat) string {
	if st == nil || st.StdDev == nil || text == "n/a" {
		return text
	}
	return text + " ± " + num(*st.StdDev)
}

// runStepsTable is the achieved rate of each step in each run of a
// repeated ramp (the sources' LT1..LTn appendix), or nil.
func runStepsTable(r *report.Result) *Table {
	n := 0
	for _, run := range r.Runs {
		n = max(n, len(run.Steps))
	}
	if n == 0 {
		return nil
	}
	// A rate ramp's steps by requested rate; a closed-loop sweep's by
	// its thread count or batch size (a batch step by MB/min loaded).
	caption, head := "Achieved req/s per step and run (* = saturated), then the mean and standard deviation over the complete runs", "requested req/s"
	key, label := "achieved_per_sec", func(s report.RunStep) string { return rate(s.Rate) }
	get := func(s report.RunStep) *float64 { return s.AchievedPerSec }
	switch {
	case isThreads(r.Steps):
		caption, head = "Requests/s per thread count and run, then the mean and standard deviation over the complete runs", "threads"
		label = func(s report.RunStep) string { return optInt(s.Threads) }
	case isBatch(r.Steps):
		caption, head, key = "MB/min loaded per batch size and run, then the mean and standard deviation over the complete runs", "batch (rows)", "mb_per_min"
		label = func(s report.RunStep) string { return optInt(s.Batch) }
		get = func(s report.RunStep) *float64 { return s.MBPerMin }
	}
	t := &Table{Caption: caption, Head: []string{head}}
	for _, run := range r.Runs {
		t.Head = append(t.Head, fmt.Sprintf("run %d", run.Run))
	}
	t.Head = append(t.Head, "mean", "stddev")
	for i := 0; i < n; i++ {
		row := []string{"n/a"}
		for _, run := range r.Runs {
			c := "n/a"
			if i < len(run.Steps) {
				row[0] = label(run.Steps[i])
				c = opt(get(run.Steps[i]))
				if run.Steps[i].Saturated {
					c += "*"
				}
			}
			row = append(row, c)
		}
		var st *report.Stat
		if i < len(r.Steps) {
			st = r.Steps[i].RepeatStats[key]
		}
		cells := statCells(st)
		t.Rows = append(t.Rows, append(row, cells[0], cells[1]))
	}
	return t
}

// repeatedNote tells a repeated sweep's steps table that its rows merge
// the runs and what carries their spread; "" when run once.
func repeatedNote(steps []report.Step, what string) string {
	for _, s := range steps {
		if len(s.RepeatStats) > 0 {
			return "; the runs (--repeat) merged, " + what + " ± one standard deviation over them"
		}
	}
	return ""
}

// optInt is *v in digits, "n/a" when nil.
func optInt(v *int) string {
	if v == nil {
		return "n/a"
	}
	return strconv.Itoa(*v)
}

// glance is the verdict and the headline figures in one line.
func glance(r *report.Result) string {
	var parts []string
	if r.Verdict != nil {
		parts = append(parts, "verdict: "+r.Verdict.Bottleneck)
	}
	if k := r.Knee; k != nil {
		parts = append(parts, strings.TrimPrefix(report.Answer(r), "knee: "))
		if n := len(k.TransientRates); n > 0 {
			where := fmt.Sprintf("%d rates", n)
			if n == 1 {
				where = "1 rate"
			}
			parts = append(parts, "transient failures at "+where+", passed when run again")
		}
	} else if len(r.Steps) > 1 && !isBatch(r.Steps) && !isThreads(r.Steps) {
		// A ramp: its overall averages mix the steps; say how far it kept up.
		if v := maxSustained(r.Steps); v != nil {
			parts = append(parts, "kept up to "+rate(*v)+" req/s")
		} else {
			parts = append(parts, "saturated from the first step")
		}
		var peak *report.Step
		for i := range r.Steps {
			if a := r.Steps[i].AchievedPerSec; a != nil && (peak == nil || *a > *peak.AchievedPerSec) {
				peak = &r.Steps[i]
			}
		}
		if peak != nil {
			parts = append(parts, "peak "+num(*peak.AchievedPerSec)+" req/s achieved (at "+rate(peak.Rate)+"/s requested)")
		}
	} else if isThreads(r.Steps) || isBatch(r.Steps) {
		// A closed-loop sweep: its overall averages mix the steps (a
		// MariaDB thread ramp of 1, 4 and 16 averaged 8,865 req/s where
		// 16 threads did 15,767), so the headline is its best step's.
		parts = append(parts, sweepPeak(r.Steps)...)
	} else {
		// TPC-C's headline figures first, as HammerDB prints them.
		for _, k := range []string{"nopm", "tpm"} {
			if v, ok := r.Figures[k]; ok {
				parts = append(parts, strings.ToUpper(k)+" "+num(v))
			}
		}
		parts = append(parts, num(r.Summary.RequestsPerSec)+" req/s")
		if l := r.Summary.LatencyMs; l != nil {
			parts = append(parts, "p99 "+num(l.P99)+" ms")
		}
	}
	parts = append(parts, fmt.Sprintf("%d errors", r.Summary.Errors))
	return strings.Join(parts, " · ")
}

// sweepPeak is a closed-loop sweep's best step in the glance's words: a
// thread ramp's count that did the most requests/s (with the fewest that
// did 90% of it, and the best's p99), a batch sweep's size that loaded the
// most MB/min (the verdict's choice too).
func sweepPeak(steps []report.Step) []string {
	if isThreads(steps) {
		sum := report.ThreadsSummary(steps)
		if sum == "" {
			return []string{"no thread count completed a request"}
		}
		out := []string{sum}
		if l := steps[report.PeakThreadStep(steps)].LatencyMs; l != nil {
			out = append(out, "p99 "+num(l.P99)+" ms there")
		}
		return out
	}
	best := -1
	for i, s := range steps {
		if s.Batch != nil && s.MBPerMin != nil && (best < 0 || *s.MBPerMin > *steps[best].MBPerMin) {
			best = i
		}
	}
	if best < 0 {
		return []string{"no batch size loaded data"}
	}
	b := steps[best]
	out := []string{fmt.Sprintf("most loaded: %s MB/min with %d-row batches", num(*b.MBPerMin), *b.Batch)}
	if b.RowsPerSec != nil {
		out = append(out, num(*b.RowsPerSec)+" rows/s there")
	}
	return out
}

// kneeLoadText describes a knee search's load: its probes and their rates.
func kneeLoadText(r *report.Result) string {
	k := r.Knee
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, p := range k.Probes {
		lo, hi = math.Min(lo, p.Rate), math.Max(hi, p.Rate)
	}
	s := fmt.Sprintf("knee search for %s: %d open-loop probes of %s s", k.SLOApplied, len(k.Probes), strconv.FormatFloat(k.StepS, 'f', -1, 64))
	if k.StepWarmupS > 0 {
		s += fmt.Sprintf(" (after %s s warm-up)", strconv.FormatFloat(k.StepWarmupS, 'f', -1, 64))
	}
	if n := countLonger(k); n > 0 {
		s += fmt.Sprintf(", %d of them longer to measure a percentile", n)
	}
	if len(k.Probes) > 0 {
		s += fmt.Sprintf(", %s to %s req/s", rate(lo), rate(hi))
	}
	return s
}

// countLonger counts the probes run longer than the search's step.
func countLonger(k *report.Knee) int {
	n := 0
	for _, p := range k.Probes {
		if p.DurationS > 0 {
			n++
		}
	}
	return n
}

// kneeBlocks are the answer of a knee search and its probes in the order
// run.
func kneeBlocks(r *report.Result) []Block {
	k := r.Knee
	blocks := []Block{{Para: report.Answer(r)}}
	var rows, marks [][]string
	for i, p := range k.Probes {
		outcome := "pass"
		switch {
		case p.Partial:
			outcome = "interrupted"
		case !p.Pass:
			outcome = "FAIL"
		}
		run := "first"
		switch {
		case p.Retry > 0:
			run = fmt.Sprintf("re-run %d", p.Retry)
		case p.Rate != k.Start && slices.Contains(k.FailsBelow, p.Rate):
			run = "once, above a start rate that failed while kept up with"
		}
		if p.DurationS > 0 {
			run += fmt.Sprintf(", %s s long to measure a percentile", strconv.FormatFloat(p.DurationS, 'f', -1, 64))
		}
		m := make([]string, 5)
		if outcome == "FAIL" {
			m[2] = "sat"
		}
		rows = append(rows, []string{strconv.Itoa(i + 1), rate(p.Rate), outcome, run, strings.Join(p.FailedTerms, "; ")})
		marks = append(marks, m)
	}
	retries := "a rate failed at its first failing probe (--retries 0)"
	if k.Retries > 0 {
		retries = "a probe that broke the SLO was run again once, and its rate failed only if both runs did"
		if k.Retries > 1 {
			retries = fmt.Sprintf("a probe that broke the SLO was run again up to %d times, and its rate failed only if every run did", k.Retries)
		}
	}
	blocks = append(blocks, Block{Table: &Table{
		Caption: fmt.Sprintf("Probes in the order run (SLO %s; ramp ×2 from %s req/s, then bisection to within %g%%; %s; search ended: %s)",
			k.SLOApplied, rate(k.Start), k.PrecisionPct, retries, k.Stop),
		Head: []string{"probe", "requested req/s", "outcome", "run at this rate", "SLO terms broken"}, Rows: rows, Marks: marks, Align: "rrlll"}})
	if head, items, tail, ok := report.Transients(r); ok {
		blocks = append(blocks, Block{Para: head}, Block{List: items}, Block{Note: tail})
	}
	return blocks
}
