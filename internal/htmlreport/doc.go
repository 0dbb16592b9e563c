// Package htmlreport turns ceiling results into things people would rather
// look at than JSON: a self-contained HTML report with charts (Render), a
// side-by-side comparison of runs (Compare), and CSV and compact JSON
// exports (WriteCSV, Summaries).
//
// The HTML works offline: styles are inline, charts are SVG drawn by
// gonum.org/v1/plot and inlined, and nothing is fetched from anywhere. The
// body holds nothing that changes from one rendering to the next (no
// generation time), so the same results give the same file.
//
// A figure the run did not measure is "n/a" in tables and a gap in charts,
// never 0.
package htmlreport

import (
	"fmt"
	"html/template"
	"math"
	"strconv"
	"strings"

	"github.com/ceiling-db/ceiling/internal/report"
)

// Input is one result to report, with the name it was read from.
type Input struct {
	Path   string // as given on the command line
	Result *report.Result
}

// Doc is a report ready to render: a title and sections of blocks.
type Doc struct {
	Title    string
	Subtitle string
	Glance   string // the verdict and headline figures in one line (one result)
	Sections []Section
}

// Section is one part of the report (an <h2>, or <h3> when Sub is set).
type Section struct {
	ID     string
	Title  string
	Sub    bool
	Blocks []Block
}

// Block is one element of a section; exactly one field is set.
type Block struct {
	Para    string
	Verdict *VerdictBlock
	List    []string
	Table   *Table
	Chart   *Chart
	Note    string // a muted remark
	// Pre is preformatted text (a custom workload's file), shown folded
	// under its summary PreTitle.
	Pre, PreTitle string
}

// VerdictBlock is a verdict: the bottleneck in large type, the evidence,
// and what to try.
type VerdictBlock struct {
	Headline    string
	Evidence    []string
	Suggestions []string
	// Checks are predictions set against measurements (compare only).
	Checks []string
}

// Table is a table of text cells; the first column is a label, the others
// are figures (right-aligned).
type Table struct {
	Caption string
	Head    []string
	Rows    [][]string
	// Marks holds an optional CSS class per cell ("better", "worse", "beyond", "within",
	// "sat"); nil for none.
	Marks [][]string
	// Align has one letter per column, l (text) or r (figures); by
	// default the first column is l and the others r.
	Align string
}

// cellClass is the CSS class of cell (i, j) of t: its alignment and mark.
func (t *Table) cellClass(i, j int) string {
	var cls []string
	if j < len(t.Align) && t.Align[j] == 'l' && j > 0 {
		cls = append(cls, "l")
	}
	if i >= 0 && i < len(t.Marks) && j < len(t.Marks[i]) && t.Marks[i][j] != "" {
		cls = append(cls, t.Marks[i][j])
	}
	return strings.Join(cls, " ")
}

// hasHead reports whether the table has a header worth a row.
func (t *Table) hasHead() bool {
	for _, h := range t.Head {
		if h != "" {
			return true
		}
	}
	return false
}

// Chart is one rendered chart.
type Chart struct {
	Title string
	SVG   template.HTML
	Note  string
}

// num formats a figure for reading: about four significant digits,
// thousands grouped.
func num(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "n/a"
	case v == 0:
		return "0"
	}
	a := math.Abs(v)
	switch {
	case a >= 1000:
		return group(strconv.FormatFloat(v, 'f', 0, 64))
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 2, 64)
	case a >= 0.01:
		return strconv.FormatFloat(v, 'f', 3, 64)
	}
	// Three significant digits: 0.00138, 0.000939 (three decimals made
	// 0.00138 "0.001", next to 0.000939 in a comparison).
	return report.Small(v)
}

// group puts thousands separators into an integer string.
func group(s string) string {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// opt formats a figure that may not have been measured.
func opt(v *float64) string {
	if v == nil {
		return "n/a"
	}
	return num(*v)
}

// fixed formats v with d decimals ("n/a" for nil).
func fixed(v *float64, d int) string {
	if v == nil || math.IsNaN(*v) {
		return "n/a"
	}
	return strconv.FormatFloat(*v, 'f', d, 64)
}

func f64(v float64) *float64 { return &v }

// nan returns *v, or NaN for a figure not measured (a gap in a chart).
func nan(v *float64) float64 {
	if v == nil {
		return math.NaN()
	}
	return *v
}

// gain formats a ratio as ×N.
func gain(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "n/a"
	case v >= 10:
		return fmt.Sprintf("×%.1f", v)
	}
	return fmt.Sprintf("×%.2f", v)
}

// Describe says in one line what a result measured.
func Describe(r *report.Result) string {
	s := fmt.Sprintf("%s on %s %s, %d thread", r.Workload.Name, r.Target.Engine, r.Target.Version, r.Load.Threads)
	if r.Load.Threads != 1 {
		s += "s"
	}
	if tr := report.ThreadCounts(r.Steps); tr != "" {
		s = fmt.Sprintf("%s on %s %s, %s", r.Workload.Name, r.Target.Engine, r.Target.Version, tr)
	}
	if sh := r.Load.Shard; sh != nil && sh.I < 0 {
		s += fmt.Sprintf(" over %d shards (merged)", sh.N)
	} else if sh != nil {
		s += fmt.Sprintf(" (shard %d of %d: its part only)", sh.I, sh.N)
	}
	s += ", " + loadText(r)
	if d := durabilityText(r); d != "" {
		s += ", durability " + d
	}
	if r.Target.Encrypted() {
		// The protocol alone: the cipher suite is in the test definition.
		s += ", encrypted (" + r.Target.TLSProtocol() + ")"
	}
	if e := r.Target.Emulation; e != nil {
		s += ", files held to " + e.Profile + "'s limits (--emulate)"
	}
	if r.Load.Repeat > 1 {
		s += fmt.Sprintf(", %d repeats", r.Load.Repeat)
	}
	if r.Partial {
		s += " (partial: interrupted)"
	}
	return s
}

// loadText describes the load model.
func loadText(r *report.Result) string {
	l := r.Load
	switch {
	case r.Knee != nil:
		return kneeLoadText(r)
	case l.Model != "open":
		s := "closed loop"
		if l.DurationS != nil {
			s += " for " + strconv.FormatFloat(*l.DurationS, 'f', -1, 64) + " s"
		} else if l.Ops != nil {
			s += fmt.Sprintf(" for %d requests", *l.Ops)
		}
		return s
	case len(l.Rates) > 0:
		s := fmt.Sprintf("open-loop ramp of %d steps, %s to %s req/s", len(l.Rates), rate(l.Rates[0]), rate(l.Rates[len(l.Rates)-1]))
		if l.StepS != nil {
			s += " (" + strconv.FormatFloat(*l.StepS, 'f', -1, 64) + " s each)"
		}
		return s
	case l.Rate != nil:
		return "open loop at " + rate(*l.Rate) + " req/s"
	}
	return "open loop"
}

func rate(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// durabilityText is the durability mode and the setting as it ran.
func durabilityText(r *report.Result) string {
	d := r.Target.Durability
	if d.Mode == "" {
		return ""
	}
	s := string(d.Mode)
	if d.Setting != "" && d.During != "" {
		s += fmt.Sprintf(" (%s=%s)", d.Setting, d.During)
	}
	return s
}
