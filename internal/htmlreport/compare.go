package htmlreport

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ceiling-db/ceiling/internal/diagnose"
	"github.com/ceiling-db/ceiling/internal/metrics"
	"github.com/ceiling-db/ceiling/internal/report"
	"github.com/ceiling-db/ceiling/internal/target"
)

// Spread verdicts of a change (Cell.Spread).
const (
	Beyond = "beyond"
	Within = "within"
)

// Comparison is several results side by side; the first is the baseline.
type Comparison struct {
	Inputs []Input
	Rows   []Row
	// Checks set a prediction of one result's verdict against what another
	// result, which applied the suggestion, measured.
	Checks []Check
}

// Row is one figure of every result.
type Row struct {
	Key, Label string
	Group      string // "headline", "cost", "figure" (workload), "context"
	Cells      []Cell
	// Higher tells which way is better: +1 higher, -1 lower, 0 neither.
	Higher int
}

// Cell is one result's value of a row, and its change against the
// baseline.
type Cell struct {
	Text  string   // the value as shown
	Value *float64 // nil: not measured (or a text row)
	Stat  *report.Stat
	// Change is value ÷ baseline value (nil for the baseline itself, or
	// when either was not measured or the baseline is 0).
	Change *float64
	// Spread is Beyond or Within when repeats give a run-to-run spread,
	// "" otherwise; SpreadWhy says how it was decided.
	Spread    string
	SpreadWhy string
	// Better is "better" or "worse" for a change beyond the spread of a
	// row whose better direction is known (Row.Higher), else "".
	Better string
}

// SpreadText is the cell's "vs spread" entry: "beyond, better", "beyond",
// "within", or "-" when no spread is known.
func (cl Cell) SpreadText() string {
	switch {
	case cl.Spread == "":
		return "-"
	case cl.Better != "":
		return cl.Spread + ", " + cl.Better
	}
	return cl.Spread
}

// Check is a verdict's predicted gain set against the measured one.
type Check struct {
	From, To  int // From's verdict suggested it; To applied it
	Action    string
	Predicted float64  // 0: the suggestion came without a predicted gain
	Measured  *float64 // To's req/s ÷ From's (Unit); nil when not measured
	Applied   string   // what differs, e.g. "durability full → relaxed"
	// Unit is what Measured divides: "req/s", or "rows/s" for batching,
	// whose requests carry more rows each (its gain is per row).
	Unit string
}

// Text is the one-line statement of the check, e.g. "predicted ×8.2
// (--durability relaxed), measured ×6.9 — within a factor of 2".
func (c Check) Text() string {
	pred := "predicted " + gain(c.Predicted)
	if c.Predicted <= 0 {
		pred = "no gain predicted"
	}
	s := fmt.Sprintf("%s → %s (%s): %s by %s's verdict (try %s), measured ", Label(c.From), Label(c.To), c.Applied, pred, Label(c.From), c.Action)
	if c.Measured == nil {
		return s + "n/a"
	}
	s += gain(*c.Measured) + " (" + cmp.Or(c.Unit, "req/s") + " " + Label(c.To) + " ÷ " + Label(c.From) + ")"
	if c.Predicted > 0 {
		s += " — " + c.Agreement()
	}
	return s
}

// Agreement says how close the prediction came: within a factor of 2, or
// how far over or under it was. A lower bound ("(at least)") holds when
// the measured gain reaches it.
func (c Check) Agreement() string {
	if c.Measured == nil || *c.Measured <= 0 || c.Predicted <= 0 {
		return "not comparable"
	}
	r := *c.Measured / c.Predicted
	if strings.Contains(c.Action, "(at least)") {
		if r >= 1 {
			return "the lower bound held"
		}
		return fmt.Sprintf("under the predicted lower bound (%.0f%% of it)", 100*r)
	}
	switch {
	case r >= 0.5 && r <= 2:
		return "within a factor of 2"
	case r < 0.5:
		return fmt.Sprintf("the prediction was %.1f× too high", 1/r)
	}
	return fmt.Sprintf("the prediction was %.1f× too low", r)
}

// figure is one comparable figure of a result, with its repeat spread.
type figure struct {
	key, label, group string
	higher            int
	get               func(*report.Result) *float64
}

func sumLat(f func(*metrics.Latency) float64) func(*report.Result) *float64 {
	return func(r *report.Result) *float64 {
		if r.Summary.LatencyMs == nil {
			return nil
		}
		return f64(f(r.Summary.LatencyMs))
	}
}

func costOf(get func(report.Costs) *float64) func(*report.Result) *float64 {
	return func(r *report.Result) *float64 { return get(r.Costs) }
}

// figures are compared in this order; the keys of repeat_stats share
// their names so repeats give the spread.
var figures = []figure{
	{"requests_per_sec", "req/s", "headline", 1, func(r *report.Result) *float64 { return f64(r.Summary.RequestsPerSec) }},
	{"rows_per_sec", "rows/s", "headline", 1, func(r *report.Result) *float64 { return f64(r.Summary.RowsPerSec) }},
	{"mb_per_min", "MB/min", "headline", 1, func(r *report.Result) *float64 { return r.Summary.MBPerMin }},
	{"latency_p50_ms", "p50 ms", "headline", -1, sumLat(func(l *metrics.Latency) float64 { return l.P50 })},
	{"latency_p95_ms", "p95 ms", "headline", -1, sumLat(func(l *metrics.Latency) float64 { return l.P95 })},
	{"latency_p99_ms", "p99 ms", "headline", -1, sumLat(func(l *metrics.Latency) float64 { return l.P99 })},
	{"errors", "errors", "headline", -1, func(r *report.Result) *float64 { return f64(float64(r.Summary.Errors)) }},
	{"late_pct", "late %", "headline", -1, func(r *report.Result) *float64 {
		if r.Summary.Scheduled == nil {
			return nil
		}
		return pct(r.Summary.Late, *r.Summary.Scheduled)
	}},
	// A server on another host: the round trip timed before the run.
	{"round_trip_ms", "round trip ms", "headline", -1, func(r *report.Result) *float64 {
		if r.Network == nil || r.Network.N == 0 {
			return nil
		}
		return f64(r.Network.RoundTripMs.P50)
	}},
	{"log_bytes_per_op", "log bytes/req", "cost", -1, costOf(func(c report.Costs) *float64 { return c.LogBytesPerOp })},
	{"log_syncs_per_op", "log syncs/req", "cost", -1, costOf(func(c report.Costs) *float64 { return c.LogSyncsPerOp })},
	{"log_writes_per_op", "log writes/req", "cost", -1, costOf(func(c report.Costs) *float64 { return c.LogWritesPerOp })},
	{"data_reads_per_op", "data reads/req", "cost", -1, costOf(func(c report.Costs) *float64 { return c.DataReadsPerOp })},
	{"data_writes_per_op", "data writes/req", "cost", -1, costOf(func(c report.Costs) *float64 { return c.DataWritesPerOp })},
	{"data_syncs_per_op", "data-file syncs/req", "cost", -1, costOf(func(c report.Costs) *float64 { return c.DataSyncsPerOp })},
	// The log device's cache flushes per request, from the kernel's
	// counters: what a durability change moves where the server does not
	// count its log syncs apart (MariaDB).
	{"log_device_flushes_per_op", "log dev flushes/req", "cost", -1, func(r *report.Result) *float64 {
		if r.LogDevice == nil {
			return nil
		}
		return r.LogDevice.FlushesPerOp
	}},
	{"commits_per_op", "commits/req", "cost", 0, costOf(func(c report.Costs) *float64 { return c.CommitsPerOp })},
	{"cpu_us_per_op", "CPU µs/req", "cost", -1, costOf(func(c report.Costs) *float64 { return c.CPUusPerOp })},
	{"round_trips_per_op", "round trips/req", "cost", -1, func(r *report.Result) *float64 { return r.Summary.RoundTripsPerRequest }},
}

// Compare puts the results side by side, the first as the baseline.
func Compare(ins []Input) *Comparison {
	c := &Comparison{Inputs: ins}
	text := func(key, label string, get func(*report.Result) string) {
		row := Row{Key: key, Label: label, Group: "context"}
		for _, in := range ins {
			row.Cells = append(row.Cells, Cell{Text: get(in.Result)})
		}
		c.Rows = append(c.Rows, row)
	}
	text("engine", "engine", func(r *report.Result) string { return r.Target.Engine })
	text("durability", "durability", func(r *report.Result) string { return string(r.Target.Durability.Mode) })
	text("threads", "threads", func(r *report.Result) string { return fmt.Sprint(r.Load.Threads) })
	text("runs", "runs", func(r *report.Result) string { return fmt.Sprint(max(r.Load.Repeat, 1)) })
	if anyKnee(ins) {
		// A knee search's answer is its headline: the highest rate meeting
		// the SLO (its overall req/s mixes the probes).
		text("knee_slo", "knee SLO", func(r *report.Result) string {
			if r.Knee == nil {
				return "n/a"
			}
			return r.Knee.SLOApplied
		})
		c.addFigure("knee_rate", "knee req/s", "headline", 1, func(r *report.Result) *float64 {
			if r.Knee == nil || r.Knee.Rate == nil {
				return nil
			}
			return f64(*r.Knee.Rate)
		}, false)
	}
	for _, f := range figures {
		c.addFigure(f.key, f.label, f.group, f.higher, f.get, true)
	}
	keys := map[string]bool{}
	for _, in := range ins {
		for k := range in.Result.Figures {
			keys[k] = true
		}
	}
	for _, k := range sortedKeys(keys) {
		if rate, higher, ok := report.CountFigure(k); ok {
			// A count over the run: compared per minute, so that a longer
			// run (or repeats, whose counts add up) does not look like
			// more; left out where another figure rates it (NOPM).
			if rate == "" || !keys[rate] {
				c.addFigure("figure."+k+"_per_min", k+"/min", "figure", higher, func(r *report.Result) *float64 {
					return report.PerMinute(r, k)
				}, false)
			}
			continue
		}
		c.addFigure("figure."+k, k, "figure", report.FigureHigher(k), func(r *report.Result) *float64 {
			if v, ok := r.Figures[k]; ok {
				return f64(v)
			}
			return nil
		}, false)
	}
	text("verdict", "verdict", func(r *report.Result) string {
		if r.Verdict == nil {
			return "n/a"
		}
		return r.Verdict.Bottleneck
	})
	c.Checks = checks(ins)
	return c
}

// counts are the figures that count things (a repeat's mean of them can
// still have decimals).
var counts = map[string]bool{"errors": true}

// addFigure adds a row unless no result measured the figure. Repeats give
// the mean (as the value) and the spread.
func (c *Comparison) addFigure(key, label, group string, higher int, get func(*report.Result) *float64, stats bool) {
	row := Row{Key: key, Label: label, Group: group, Higher: higher}
	any := false
	for _, in := range c.Inputs {
		v := get(in.Result)
		var st *report.Stat
		if stats && in.Result.RepeatStats != nil {
			st = in.Result.RepeatStats[key]
			if st != nil {
				v = f64(st.Mean)
			}
		}
		any = any || v != nil
		text := opt(v)
		if counts[key] && v != nil && *v == math.Trunc(*v) && math.Abs(*v) < 1000 {
			text = strconv.FormatFloat(*v, 'f', 0, 64) // a count: 3, not 3.000 (num has no decimals from 1,000)
		}
		row.Cells = append(row.Cells, Cell{Text: text, Value: v, Stat: st})
	}
	if !any {
		return
	}
	base := row.Cells[0]
	for i := 1; i < len(row.Cells); i++ {
		cl := &row.Cells[i]
		switch {
		case base.Value == nil || cl.Value == nil:
		case *base.Value == *cl.Value:
			cl.Change = f64(1)
		case *base.Value != 0:
			cl.Change = f64(*cl.Value / *base.Value)
		}
		if base.Value != nil && cl.Value != nil {
			cl.Spread, cl.SpreadWhy = spreadTest(*base.Value, *cl.Value, base.Stat, cl.Stat)
			cl.Better = betterOf(cl.Spread, *base.Value, *cl.Value, higher)
		}
	}
	c.Rows = append(c.Rows, row)
}

// sd returns the standard deviation and count of st, or ok=false when st
// does not give a spread (fewer than two runs).
func sd(st *report.Stat) (s float64, n int, ok bool) {
	if st == nil || st.StdDev == nil || st.N < 2 {
		return 0, 1, false
	}
	return *st.StdDev, st.N, true
}

// spreadTest decides whether b differs from a beyond the run-to-run spread
// at the 95% level:
//   - both repeated: Welch's t-test on the two means;
//   - one repeated (n runs, mean m, sd s), the other a single run x: x is
//     beyond when it falls outside the 95% prediction interval of one more
//     run, |x − m| > t(n−1) · s · √(1 + 1/n);
//   - neither repeated: no spread is known, "".
func spreadTest(a, b float64, sa, sb *report.Stat) (string, string) {
	s1, n1, ok1 := sd(sa)
	s2, n2, ok2 := sd(sb)
	d := math.Abs(b - a)
	decide := func(limit float64, how string) (string, string) {
		if d > limit || (limit == 0 && d > 0) {
			return Beyond, how
		}
		return Within, how
	}
	switch {
	case ok1 && ok2:
		v1, v2 := s1*s1/float64(n1), s2*s2/float64(n2)
		se := math.Sqrt(v1 + v2)
		df := 1.0
		if den := v1*v1/float64(n1-1) + v2*v2/float64(n2-1); den > 0 {
			df = (v1 + v2) * (v1 + v2) / den
		}
		return decide(report.TQuantile975(max(1, int(df)))*se, fmt.Sprintf("Welch t-test, %d and %d runs", n1, n2))
	case ok1:
		return decide(report.TQuantile975(n1-1)*s1*math.Sqrt(1+1/float64(n1)), fmt.Sprintf("95%% prediction interval of the baseline's %d runs", n1))
	case ok2:
		return decide(report.TQuantile975(n2-1)*s2*math.Sqrt(1+1/float64(n2)), fmt.Sprintf("95%% prediction interval of the %d runs", n2))
	}
	return "", "no repeats: spread unknown"
}

// checks finds, for the baseline and every other result (either way
// round), a suggestion of one's verdict that the other applied, and sets
// the predicted gain against the measured one.
func checks(ins []Input) []Check {
	var out []Check
	for j := 1; j < len(ins); j++ {
		for _, pair := range [][2]int{{0, j}, {j, 0}} {
			from, to := ins[pair[0]].Result, ins[pair[1]].Result
			if from.Verdict == nil {
				continue
			}
			for _, s := range from.Verdict.Suggestions {
				applied := appliedChange(s, from, to)
				if applied == "" {
					continue
				}
				ch := Check{From: pair[0], To: pair[1], Action: s.Action, Applied: applied}
				if s.PredictedGain != nil {
					ch.Predicted = *s.PredictedGain
				}
				switch {
				case strings.HasPrefix(strings.ToLower(s.Action), "batch"):
					// A batch's gain is per row: its requests carry
					// more rows each.
					ch.Unit = "rows/s"
					if rowsPerSec(from) > 0 && to.Summary.ElapsedS > 0 {
						ch.Measured = f64(rowsPerSec(to) / rowsPerSec(from))
					}
				case from.Summary.RequestsPerSec > 0 && to.Summary.ElapsedS > 0:
					ch.Unit = "req/s"
					ch.Measured = f64(reqPerSec(to) / reqPerSec(from))
				}
				out = append(out, ch)
			}
		}
	}
	return out
}

// rowsPerSec is the mean rows/s over the repeats, else the summary's.
func rowsPerSec(r *report.Result) float64 {
	if st := r.RepeatStats["rows_per_sec"]; st != nil {
		return st.Mean
	}
	return r.Summary.RowsPerSec
}

// reqPerSec is the mean requests/s over the repeats, else the summary's.
func reqPerSec(r *report.Result) float64 {
	if st := r.RepeatStats["requests_per_sec"]; st != nil {
		return st.Mean
	}
	return r.Summary.RequestsPerSec
}

// appliedChange says what to changed that suggestion s (of from's verdict)
// asked for, or "" when to did not apply it (or it cannot tell): relaxed
// durability, batching (a batch-size parameter grew), connections
// without TLS, a workload's own switch ("--procedures: …"), or the next
// size up of an emulated profile at the same thread count.
func appliedChange(s diagnose.Suggestion, from, to *report.Result) string {
	if from.Workload.Name != to.Workload.Name {
		return ""
	}
	a := strings.ToLower(s.Action)
	switch {
	case strings.Contains(a, "durability relaxed") || strings.Contains(a, "relaxed durability"):
		fm, tm := from.Target.Durability.Mode, to.Target.Durability.Mode
		if tm == target.DurabilityRelaxed && fm != tm {
			return fmt.Sprintf("durability %s → %s", fm, tm)
		}
	case strings.Contains(a, "(--emulate ") && strings.Contains(a, " measures it)"):
		// The next size up of the profile from's files were held to.
		_, rest, _ := strings.Cut(s.Action, "(--emulate ")
		name, _, _ := strings.Cut(rest, " ")
		fe, te := from.Target.Emulation, to.Target.Emulation
		if te != nil && te.Profile == name && fe != nil && fe.Profile != name && from.Load.Threads == to.Load.Threads {
			return fmt.Sprintf("--emulate %s → %s", fe.Profile, name)
		}
	case strings.HasPrefix(a, "unencrypted connections"):
		// Suggested without a predicted gain: the pair measures it.
		if from.Target.Encrypted() && to.Target.TLS == target.TLSOff {
			return "connections " + from.Target.TLSProtocol() + " → unencrypted"
		}
	case strings.HasPrefix(a, "--"):
		// A workload's own setting (workload.Advisor): "--name: …" names
		// the boolean workload parameter that to turned on.
		name, _, _ := strings.Cut(a[2:], ":")
		k := strings.ReplaceAll(strings.TrimSpace(name), "-", "_")
		if tv, _ := to.Workload.Params[k].(bool); tv {
			if fv, _ := from.Workload.Params[k].(bool); !fv {
				return k + " false → true"
			}
		}
	case strings.HasPrefix(a, "batch"):
		for _, k := range sortedKeys(to.Workload.Params) {
			if !strings.Contains(strings.ToLower(k), "batch") && k != "rows_per_transaction" {
				continue
			}
			fb, fok := report.ParamNumber(from.Workload.Params[k])
			tb, tok := report.ParamNumber(to.Workload.Params[k])
			if tok && tb > 1 && (!fok || tb > fb) {
				return fmt.Sprintf("%s %v → %v", k, from.Workload.Params[k], to.Workload.Params[k])
			}
		}
	}
	return ""
}

// changeText formats a change: ×N for a large rise, ÷N for a large fall,
// ±% otherwise.
func changeText(c *float64) string {
	if c == nil {
		return "n/a"
	}
	v := *c
	switch {
	case v == 1:
		return "="
	case v == 0:
		return "→ 0"
	case v >= 2:
		return gain(v)
	case v <= 0.5:
		return "÷" + strings.TrimPrefix(gain(1/v), "×")
	}
	if math.Abs(v-1) < 0.0005 {
		// Below a twentieth of a percent: "-0.0%" read as a fall.
		return "≈"
	}
	return fmt.Sprintf("%+.1f%%", 100*(v-1))
}

// writeColumns prints rows as columns: the first left-aligned, the others
// right-aligned; a nil row is a blank line.
func writeColumns(w io.Writer, rows [][]string) {
	var width []int
	for _, r := range rows {
		for i, c := range r {
			if i >= len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	for _, r := range rows {
		var b strings.Builder
		for i, c := range r {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			if i == 0 {
				b.WriteString(c + pad)
				continue
			}
			b.WriteString("  " + pad + c)
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}

// MixedWorkloads says, when the results ran different workloads, that
// their per-request figures are not like for like, e.g. "the results ran
// different workloads (A bulk-load; B tpcc): …"; "" when they ran one.
func (c *Comparison) MixedWorkloads() string {
	var parts []string
	seen := map[string][]string{}
	var order []string
	for i, in := range c.Inputs {
		n := in.Result.Workload.Name
		if _, ok := seen[n]; !ok {
			order = append(order, n)
		}
		seen[n] = append(seen[n], Label(i))
	}
	if len(order) < 2 {
		return ""
	}
	for _, n := range order {
		parts = append(parts, strings.Join(seen[n], ", ")+" "+n)
	}
	return "the results ran different workloads (" + strings.Join(parts, "; ") + "): a request is different work in each, so their per-request figures, and the changes between them, do not compare like for like"
}

// differentSetups names what the results' setups differ in (target,
// engine, durability, threads, load, emulated profile, workload
// settings), nil when they are runs of one setup: a mean and spread across
// results are those of repeated measurements, and mean nothing across
// different setups. Workloads are MixedWorkloads' to name.
func (c *Comparison) differentSetups() []string {
	if len(c.Inputs) < 2 {
		return nil
	}
	key := func(r *report.Result) []string {
		emu, rate := "", ""
		if e := r.Target.Emulation; e != nil {
			emu = e.Profile
		}
		if r.Load.Rate != nil {
			rate = strconv.FormatFloat(*r.Load.Rate, 'g', -1, 64)
		}
		return []string{r.Target.DSN + " " + r.Target.Engine, string(r.Target.Durability.Mode), strconv.Itoa(r.Load.Threads),
			r.Load.Model + " " + rate + " " + fmt.Sprint(r.Load.Rates), emu}
	}
	names := []string{"target", "durability", "threads", "load", "emulated profile"}
	base := key(c.Inputs[0].Result)
	var out []string
	for k, name := range names {
		for _, in := range c.Inputs[1:] {
			if key(in.Result)[k] != base[k] {
				out = append(out, name)
				break
			}
		}
	}
	for _, in := range c.Inputs[1:] {
		if SettingsDiff(c.Inputs[0].Result, in.Result) != "" {
			out = append(out, "workload settings")
			break
		}
	}
	return out
}

// WriteText prints the comparison as a console table.
func (c *Comparison) WriteText(w io.Writer) error {
	for i, in := range c.Inputs {
		fmt.Fprintf(w, "%s  %s\n   %s\n", Label(i), in.Path, Describe(in.Result))
		if d := SettingsDiff(c.Inputs[0].Result, in.Result); d != "" {
			fmt.Fprintf(w, "   workload settings that differ from %s: %s\n", Label(0), d)
		}
	}
	if m := c.MixedWorkloads(); m != "" {
		fmt.Fprintf(w, "note: %s\n", m)
	}
	fmt.Fprintln(w)
	head := []string{"figure", Label(0)}
	for i := 1; i < len(c.Inputs); i++ {
		head = append(head, Label(i), Label(i)+"/"+Label(0), "vs spread")
	}
	lines := [][]string{head}
	group := ""
	for _, row := range c.Rows {
		if row.Group == "context" {
			continue // described above the table
		}
		if row.Group != group && group != "" {
			lines = append(lines, nil)
		}
		group = row.Group
		cells := []string{row.Label, row.Cells[0].Text}
		for _, cl := range row.Cells[1:] {
			cells = append(cells, cl.Text, changeText(cl.Change), cl.SpreadText())
		}
		lines = append(lines, cells)
	}
	writeColumns(w, lines)
	for _, row := range c.Rows {
		if row.Key == "verdict" {
			var vs []string
			for i, cl := range row.Cells {
				vs = append(vs, Label(i)+" "+cl.Text)
			}
			fmt.Fprintf(w, "\nverdict: %s\n", strings.Join(vs, ", "))
		}
	}
	fmt.Fprintln(w, spreadNote(c))
	if st := c.StepTable(); st != nil {
		fmt.Fprintln(w, "\nstep by step (matched by thread count, batch size or requested rate):")
		writeColumns(w, st)
	}
	if len(c.Checks) > 0 {
		fmt.Fprintln(w, "\nprediction vs measurement:")
		for _, ch := range c.Checks {
			fmt.Fprintf(w, "   %s\n", ch.Text())
		}
	}
	return nil
}

// stepKey is what a step of a ramp is matched by across results: its
// thread count, batch size or requested rate, with its label ("4
// threads", "100 rows", "200/s"); "" for a knee probe (knees have their
// own answer).
func stepKey(r *report.Result, s report.Step) (key, label string) {
	switch {
	case r.Knee != nil:
		return "", ""
	case s.Threads != nil:
		return "threads:" + strconv.Itoa(*s.Threads), diagnose.Threads(*s.Threads)
	case s.Batch != nil:
		return "batch:" + strconv.Itoa(*s.Batch), strconv.Itoa(*s.Batch) + " rows"
	}
	return "rate:" + rate(s.Rate), rate(s.Rate) + "/s"
}

// StepTable compares ramps step by step: one row per step of the
// baseline (matched by thread count, batch size or requested rate), each
// result's achieved req/s and p99 with its change against the baseline,
// and its verdict. Nil unless the baseline and another result both have
// steps of the same kind.
func (c *Comparison) StepTable() [][]string {
	base := c.Inputs[0].Result
	if len(base.Steps) < 2 {
		return nil
	}
	index := make([]map[string]report.Step, len(c.Inputs))
	matched := false
	for i, in := range c.Inputs {
		index[i] = map[string]report.Step{}
		for _, s := range in.Result.Steps {
			if k, _ := stepKey(in.Result, s); k != "" {
				if _, dup := index[i][k]; !dup { // a rate run twice: its first run
					index[i][k] = s
				}
			}
		}
		if i > 0 {
			for k := range index[i] {
				if _, ok := index[0][k]; ok {
					matched = true
				}
			}
		}
	}
	if !matched {
		return nil
	}
	head := []string{"step", Label(0) + " req/s", Label(0) + " p99 ms"}
	for i := 1; i < len(c.Inputs); i++ {
		l := Label(i)
		head = append(head, l+" req/s", l+"/"+Label(0), l+" p99 ms", l+"/"+Label(0))
	}
	head = append(head, "verdicts")
	rows := [][]string{head}
	p99 := func(s report.Step) *float64 {
		if s.LatencyMs == nil {
			return nil
		}
		return f64(s.LatencyMs.P99)
	}
	ratio := func(a, b *float64) string {
		if a == nil || b == nil || *a <= 0 {
			return "n/a"
		}
		return changeText(f64(*b / *a))
	}
	seen := map[string]bool{}
	for _, bs := range base.Steps {
		k, label := stepKey(base, bs)
		if k == "" || seen[k] {
			continue
		}
		seen[k] = true
		row := []string{label, optText(bs.AchievedPerSec), fixedMs(p99(bs))}
		var verdicts []string
		add := func(i int, s report.Step, ok bool) {
			v := "n/a"
			if ok && s.Verdict != nil {
				v = s.Verdict.Bottleneck
			}
			verdicts = append(verdicts, Label(i)+" "+v)
		}
		add(0, bs, true)
		for i := 1; i < len(c.Inputs); i++ {
			s, ok := index[i][k]
			if !ok {
				row = append(row, "n/a", "n/a", "n/a", "n/a")
				add(i, s, false)
				continue
			}
			row = append(row, optText(s.AchievedPerSec), ratio(bs.AchievedPerSec, s.AchievedPerSec)+stepSpread(bs, s, "achieved_per_sec", 1),
				fixedMs(p99(s)), ratio(p99(bs), p99(s))+stepSpread(bs, s, "p99_ms", -1))
			add(i, s, true)
		}
		rows = append(rows, append(row, strings.Join(verdicts, ", ")))
	}
	return rows
}

// stepSpread tells whether step b's figure key (steps[].repeat_stats)
// differs from baseline step a's beyond the run-to-run spread, as the
// headline rows do: " (within)", " (beyond, better)" or " (beyond,
// worse)" by higher (+1: higher is better, -1: lower); "" when neither
// step was repeated.
func stepSpread(a, b report.Step, key string, higher int) string {
	sa, sb := a.RepeatStats[key], b.RepeatStats[key]
	if sa == nil && sb == nil {
		return ""
	}
	va, vb := stepValue(a, key, sa), stepValue(b, key, sb)
	if va == nil || vb == nil {
		return ""
	}
	sp, _ := spreadTest(*va, *vb, sa, sb)
	if sp == "" {
		return ""
	}
	return " (" + Cell{Spread: sp, Better: betterOf(sp, *va, *vb, higher)}.SpreadText() + ")"
}

// betterOf is "better" or "worse" for a change from a to b beyond the
// spread where higher gives the better direction (+1 higher, -1 lower),
// else "".
func betterOf(spread string, a, b float64, higher int) string {
	if spread != Beyond || higher == 0 || a == b {
		return ""
	}
	if (b > a) == (higher > 0) {
		return "better"
	}
	return "worse"
}

// stepValue is a step's figure for the spread test: the mean over its
// runs when repeated, else the step's own value.
func stepValue(s report.Step, key string, st *report.Stat) *float64 {
	if st != nil {
		return f64(st.Mean)
	}
	switch key {
	case "achieved_per_sec":
		return s.AchievedPerSec
	case "p99_ms":
		if s.LatencyMs != nil {
			return f64(s.LatencyMs.P99)
		}
	}
	return nil
}

// optText prints a rate with thousands separators, "n/a" without one.
func optText(v *float64) string {
	if v == nil {
		return "n/a"
	}
	return diagnose.Thousands(math.Round(*v))
}

// fixedMs prints a latency in ms, "n/a" without one.
func fixedMs(v *float64) string {
	if v == nil {
		return "n/a"
	}
	return strconv.FormatFloat(*v, 'f', 3, 64)
}

func spreadNote(c *Comparison) string {
	rep := 0
	for _, in := range c.Inputs {
		if in.Result.Load.Repeat > 1 {
			rep++
		}
	}
	if rep == 0 {
		return "vs spread: - without repeats (run with --repeat 3 to tell a change from run-to-run noise); values of repeated results are their means"
	}
	return "vs spread: beyond = the change exceeds the run-to-run spread at 95% (Welch t-test when both are repeated, else the repeats' 95% prediction interval), better or worse where the figure has a better direction; - = no run-to-run figure for that row (neither result repeated, or not measured per run); values of repeated results are their means"
}

// SettingsDiff lists the workload settings (workload.params) in which r
// differs from base, e.g. "procedures false → true, rows 1000 → 5000", in
// key order; "" when they agree or the workloads differ (their settings
// then do not compare).
func SettingsDiff(base, r *report.Result) string {
	if base == r || base.Workload.Name != r.Workload.Name {
		return ""
	}
	keys := map[string]any{}
	maps.Copy(keys, base.Workload.Params)
	maps.Copy(keys, r.Workload.Params)
	var diffs []string
	for _, k := range sortedKeys(keys) {
		a, aok := base.Workload.Params[k]
		b, bok := r.Workload.Params[k]
		if aok && bok && reflect.DeepEqual(a, b) {
			continue
		}
		diffs = append(diffs, k+" "+paramText(a, aok)+" → "+paramText(b, bok))
	}
	return strings.Join(diffs, ", ")
}

// paramText shows a workload setting as read from a result.
func paramText(v any, ok bool) string {
	switch v := v.(type) {
	case nil:
		if !ok {
			return "(unset)"
		}
		return "none"
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case string:
		if v == "" {
			return `""`
		}
		return v
	}
	return fmt.Sprint(v)
}

// comparisonSections are the HTML sections of a comparison.
func comparisonSections(c *Comparison) ([]Section, error) {
	var legend [][]string
	for i, in := range c.Inputs {
		what := Describe(in.Result)
		if d := SettingsDiff(c.Inputs[0].Result, in.Result); d != "" {
			what += "; workload settings that differ from " + Label(0) + ": " + d
		}
		legend = append(legend, []string{Label(i), filepath.Base(in.Path), what})
	}
	blocks := []Block{{Table: &Table{Caption: "Results (the first is the baseline)", Head: []string{"", "file", "what it measured"}, Rows: legend, Align: "lll"}}}
	mixed := c.MixedWorkloads()
	if mixed != "" {
		blocks = append(blocks, Block{Note: mixed})
	}
	if len(c.Checks) > 0 {
		vb := &VerdictBlock{Headline: "prediction vs measurement"}
		for _, ch := range c.Checks {
			vb.Checks = append(vb.Checks, ch.Text())
		}
		blocks = append(blocks, Block{Verdict: vb})
	}
	head := []string{"figure", Label(0)}
	for i := 1; i < len(c.Inputs); i++ {
		head = append(head, Label(i), Label(i)+" ÷ "+Label(0), "vs spread")
	}
	var rows, marks [][]string
	for _, row := range c.Rows {
		r := []string{row.Label, row.Cells[0].Text}
		m := make([]string, 2)
		for _, cl := range row.Cells[1:] {
			sp, ch := "", ""
			if row.Group != "context" {
				sp, ch = cl.SpreadText(), changeText(cl.Change)
			}
			r = append(r, cl.Text, ch, sp)
			m = append(m, "", "", markOf(cl))
		}
		rows = append(rows, r)
		marks = append(marks, m)
	}
	blocks = append(blocks, Block{Table: &Table{Caption: "Side by side", Head: head, Rows: rows, Marks: marks}}, Block{Note: spreadNote(c)})
	if st := c.StepTable(); st != nil {
		blocks = append(blocks, Block{Table: &Table{Caption: "Step by step (matched by thread count, batch size or requested rate; the baseline's steps)",
			Head: st[0], Rows: st[1:], Align: "l" + strings.Repeat("r", len(st[0])-2) + "l"}})
	}

	// The appendix-like table: one column per result, mean and spread
	// (not across different workloads: a mean of unlike figures means
	// nothing).
	ahead := []string{"figure"}
	for i := range c.Inputs {
		ahead = append(ahead, Label(i))
	}
	caption := "One column per result, then the mean and spread across them"
	noStats := mixed != ""
	if d := c.differentSetups(); mixed != "" {
		caption = "One column per result (no mean or spread across different workloads)"
	} else if len(d) > 0 {
		caption = "One column per result (no mean or spread across different setups: " + strings.Join(d, ", ") + ")"
		noStats = true
	} else {
		ahead = append(ahead, "mean", "stddev", "min–max")
	}
	var arows [][]string
	for _, row := range c.Rows {
		if row.Group == "context" {
			continue
		}
		r := []string{row.Label}
		var xs []*float64
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, cl := range row.Cells {
			r = append(r, cl.Text)
			xs = append(xs, cl.Value)
			if cl.Value != nil {
				lo, hi = math.Min(lo, *cl.Value), math.Max(hi, *cl.Value)
			}
		}
		if noStats {
			arows = append(arows, r)
			continue
		}
		st := report.StatOf(xs)
		rng := "n/a"
		if st != nil {
			rng = num(lo) + " – " + num(hi)
		}
		cells := statCells(st)
		arows = append(arows, append(r, cells[0], cells[1], rng))
	}
	blocks = append(blocks, Block{Table: &Table{Caption: caption, Head: ahead, Rows: arows}})

	var labels []string
	for i := range c.Inputs {
		labels = append(labels, Label(i))
	}
	for _, key := range []string{"requests_per_sec", "latency_p99_ms", "log_syncs_per_op", "log_bytes_per_op"} {
		for _, row := range c.Rows {
			if row.Key != key {
				continue
			}
			if !slices.ContainsFunc(row.Cells, func(cl Cell) bool { return cl.Value != nil && *cl.Value != 0 }) {
				continue // nothing to draw: every result 0 or not measured
			}
			bc := BarChart{Title: row.Label + " by result", YLabel: row.Label, Labels: labels}
			for _, cl := range row.Cells {
				bc.Values = append(bc.Values, nan(cl.Value))
				e := math.NaN()
				if s, _, ok := sd(cl.Stat); ok {
					e = s
				}
				bc.Err = append(bc.Err, e)
			}
			b, err := chartBlock(bc.Title, bc.SVG, "")
			if err != nil {
				return nil, err
			}
			blocks = append(blocks, b)
		}
	}
	return []Section{{ID: "comparison", Title: "Comparison", Blocks: blocks}}, nil
}

func markOf(cl Cell) string {
	switch cl.Spread {
	case Beyond:
		if cl.Better != "" {
			return cl.Better
		}
		return "beyond"
	case Within:
		return "within"
	}
	return ""
}

func anyKnee(ins []Input) bool {
	for _, in := range ins {
		if in.Result.Knee != nil {
			return true
		}
	}
	return false
}
