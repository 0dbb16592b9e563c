package report

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/ceiling-db/ceiling/internal/diagnose"
	"github.com/ceiling-db/ceiling/internal/runner"
	"github.com/ceiling-db/ceiling/internal/workload"
)

// figuresOf computes the workload's headline figures (workload.Observer)
// of a run, and a note when they could not be measured.
func figuresOf(p Params, r *runner.Result) (map[string]float64, string) {
	if p.Figures == nil {
		return nil, ""
	}
	if r.Observed == nil {
		if r.ObserveErr != "" {
			return nil, "workload figures not measured: " + r.ObserveErr
		}
		return nil, ""
	}
	sp := workload.Span{Seconds: r.Elapsed.Seconds(), Delta: r.Observed}
	if r.Evidence != nil {
		sp.Server = r.Evidence.Counters
	}
	f := p.Figures(sp)
	if len(f) == 0 {
		return nil, ""
	}
	return f, ""
}

// addStepFigures computes each open-loop step's workload figures over its
// measured part.
func addStepFigures(p Params, r *runner.Result, res *Result) {
	if p.Figures == nil {
		return
	}
	for i, st := range r.Steps {
		if i >= len(res.Steps) || st.Observed == nil || st.Elapsed <= 0 {
			continue
		}
		sp := workload.Span{Seconds: st.Elapsed.Seconds(), Delta: st.Observed}
		if st.Evidence != nil {
			sp.Server = st.Evidence.Counters
		}
		if f := p.Figures(sp); len(f) > 0 {
			res.Steps[i].Figures = f
		}
	}
}

// combineObserved sums the runs' workload counters; nil if any run lacks them.
func combineObserved(rs []*runner.Result) map[string]float64 {
	var out map[string]float64
	for _, r := range rs {
		if r.Observed == nil {
			return nil
		}
		if out == nil {
			out = map[string]float64{}
		}
		for k, v := range r.Observed {
			out[k] += v
		}
	}
	return out
}

// figureLines describes the well-known figures on the console, in order.
// A line with a count key also prints that figure (a count of what the
// line's figure is the mean of) and stands for it.
var figureLines = []struct{ key, format, count string }{
	{"nopm", "NOPM       %10.0f   new orders committed per minute, counted from the database", ""},
	{"tpm", "TPM        %10.0f   the server's commits + rollbacks per minute (other sessions count too; ceiling's own monitoring does not)", ""},
	{"client_tpm", "client TPM %10.0f   transactions per minute ceiling itself committed or rolled back", ""},
	{"efficiency_pct", "efficiency %9.1f%%   of the specification's maximum, 12.86 NOPM per warehouse", ""},
	{"first_scan_ms", "first scans %9.1f ms   mean of %.0f, each worker's first scan: the one --cold's eviction left cold", "first_scans"},
	{"later_scan_ms", "later scans %9.1f ms   mean of the %.0f after them, on the caches as the scans before left them", "later_scans"},
}

// figureLabels name the well-known figures in reports, in display order.
var figureLabels = []struct{ key, label string }{
	{"nopm", "NOPM (new orders/min, counted from the database)"},
	{"tpm", "TPM (the server's commits + rollbacks/min)"},
	{"client_tpm", "client TPM (ceiling's commits + rollbacks/min)"},
	{"efficiency_pct", "efficiency (% of 12.86 NOPM per warehouse)"},
	{"log_bytes_per_data_byte", "log bytes per byte of row data"},
	{"index_build_indexes", "secondary indexes built after the load"},
	{"index_build_rows", "rows they indexed"},
	{"index_build_s", "index build seconds (not in the figures above)"},
	{"first_scan_ms", "first scan ms (each worker's first, after --cold's eviction; mean)"},
	{"first_scans", "first scans (one per worker)"},
	{"later_scan_ms", "later scan ms (the scans after the first; mean)"},
	{"later_scans", "later scans"},
}

// countFigures are workload figures that count events over the measured
// time (TPC-C's) rather than rate them or describe the data, each with the
// figure that already rates it ("" for none) and which way is better (+1
// higher, -1 lower, 0 neither: TPC-C rolls back 1% of New-Orders by
// design).
var countFigures = map[string]struct {
	rate   string
	higher int
}{
	"new_orders":               {"nopm", 1},
	"later_scans":              {"", 0},
	"new_order_rollbacks":      {"", 0},
	"retries":                  {"", -1},
	"delivery_empty_districts": {"", 0},
}

// figureHigher is which way is better for the workload figures that are
// not counts (+1 higher, -1 lower); those not listed (a custom
// workload's, settings like index_build_indexes) have no better
// direction.
var figureHigher = map[string]int{
	"nopm": 1, "tpm": 1, "client_tpm": 1, "efficiency_pct": 1,
	"first_scan_ms": -1, "later_scan_ms": -1,
	"log_bytes_per_data_byte": -1, "index_build_s": -1,
}

// FigureHigher says which way is better for workload figure key: +1
// higher, -1 lower, 0 neither or not known.
func FigureHigher(key string) int {
	if _, h, ok := CountFigure(key); ok {
		return h
	}
	return figureHigher[key]
}

// CountFigure says whether figure key counts events over the measured
// time, so that runs of different lengths, or repeats (whose counts add
// up), differ by their length alone; a comparison rates it per minute.
// rate names the figure that already gives that rate ("" for none);
// higher tells which way is better.
func CountFigure(key string) (rate string, higher int, ok bool) {
	c, ok := countFigures[key]
	return c.rate, c.higher, ok
}

// PerMinute is count figure key of r per minute of r's measured time (the
// span its figures were computed over), or nil.
func PerMinute(r *Result, key string) *float64 {
	v, ok := r.Figures[key]
	if !ok || r.Summary.ElapsedS <= 0 {
		return nil
	}
	pm := v * 60 / r.Summary.ElapsedS
	return &pm
}

// statedByNote are figures a note of the run states in words on the
// console (bulk-load's log ratio and index build), so they are not
// printed again as figure lines.
var statedByNote = map[string]bool{
	"log_bytes_per_data_byte": true, "index_build_indexes": true, "index_build_rows": true, "index_build_s": true,
}

// FigureKeys lists the keys of figures, the well-known ones first (in
// their order), then the others sorted.
func FigureKeys(figures map[string]float64) []string {
	var keys, rest []string
	known := map[string]bool{}
	for _, l := range figureLabels {
		known[l.key] = true
		if _, ok := figures[l.key]; ok {
			keys = append(keys, l.key)
		}
	}
	for k := range figures {
		if !known[k] {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	return append(keys, rest...)
}

// FigureLabel names a workload figure for a report: the well-known ones in
// words, the others by their key with spaces.
func FigureLabel(key string) string {
	for _, l := range figureLabels {
		if l.key == key {
			return l.label
		}
	}
	return strings.ReplaceAll(key, "_", " ")
}

// printFigures prints a run's workload figures, the well-known ones first;
// a well-known figure the run could not measure is shown as n/a.
func printFigures(w io.Writer, r *Result) {
	// One blank line before the figures, none when every figure is stated
	// by a note instead.
	var b strings.Builder
	writeFigures(&b, r)
	if b.Len() > 0 {
		fmt.Fprintf(w, "\n%s", b.String())
	}
}

// writeFigures writes printFigures' lines.
func writeFigures(w io.Writer, r *Result) {
	known := map[string]bool{}
	for _, l := range figureLines {
		known[l.key] = true
		v, ok := r.Figures[l.key]
		switch {
		case ok && l.count != "":
			known[l.count] = true
			fmt.Fprintf(w, l.format+"\n", v, r.Figures[l.count])
		case ok:
			fmt.Fprintf(w, l.format+"\n", v)
		case l.key == "tpm" && r.Figures["nopm"] != 0:
			fmt.Fprintf(w, "TPM        %10s   the server's commits + rollbacks: not available from this target\n", "n/a")
		}
	}
	if len(r.Steps) > 1 {
		var parts []string
		for _, st := range r.Steps {
			if v, ok := st.Figures["nopm"]; ok {
				at := strconv.FormatFloat(st.Rate, 'f', -1, 64) + "/s"
				if st.Threads != nil {
					at = diagnose.Threads(*st.Threads)
				}
				parts = append(parts, fmt.Sprintf("%s: %.0f", at, v))
			}
		}
		if len(parts) > 0 {
			fmt.Fprintf(w, "NOPM by step  %s\n", strings.Join(parts, ", "))
		}
	}
	var rest []string
	for k := range r.Figures {
		if !known[k] {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	for _, k := range rest {
		if !statedByNote[k] {
			fmt.Fprintf(w, "%s: %s\n", FigureLabel(k), figureText(r.Figures[k]))
		}
	}
}

// figureText formats a figure: counts without decimals, other values to
// three decimals at most.
func figureText(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(math.Round(v*1000)/1000, 'f', -1, 64)
}
