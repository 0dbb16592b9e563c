package htmlreport

import (
	"math"
	"strconv"

	"github.com/ceiling-db/ceiling/internal/report"
)

// isolatedBlocks show each operation type run alone after the mix (run
// --isolate): its rate, latency, costs per request and verdict, then its
// share of the mix's time and server costs.
func isolatedBlocks(r *report.Result) ([]Block, error) {
	iso := r.Isolated
	head := []string{"operation", "seconds", "req/s", "mean ms", "p99 ms"}
	for _, c := range costRows {
		head = append(head, c.label)
	}
	head = append(head, "errors", "bottleneck alone")
	var rows [][]string
	for _, o := range iso {
		mean, p99 := "n/a", "n/a"
		if o.LatencyMs != nil {
			mean, p99 = num(o.LatencyMs.Mean), num(o.LatencyMs.P99)
		}
		row := []string{o.Op, num(o.Seconds), num(o.RequestsPerSec), mean, p99}
		for _, c := range costRows {
			row = append(row, opt(c.get(o.Costs)))
		}
		b := "n/a"
		if o.Verdict != nil {
			b = o.Verdict.Bottleneck
		}
		if o.Partial {
			b += " (interrupted)"
		}
		rows = append(rows, append(row, group(strconv.FormatInt(o.Errors, 10)), b))
	}
	align := "l"
	for range head[1 : len(head)-1] {
		align += "r"
	}
	blocks := []Block{
		{Para: "After the measured mix, each operation type ran alone on the same number of connections (closed loop), so that its own server costs and bottleneck are measured rather than inferred."},
		{Table: &Table{Caption: "Each operation alone (costs per request)", Head: head, Rows: rows, Align: align + "l"}},
	}
	if cols := report.ShareColumns(iso); len(cols) > 0 {
		head := []string{"operation", "requests"}
		for _, c := range cols {
			head = append(head, c.Name)
		}
		var rows [][]string
		for _, o := range iso {
			// Percentages to one decimal, as on the console: an
			// operation without log writes came to "1.77e-05" otherwise.
			row := []string{o.Op, fixed(o.MixPct, 1)}
			for _, c := range cols {
				if v, ok := o.SharePct[c.Key]; ok {
					row = append(row, fixed(&v, 1))
				} else {
					row = append(row, "n/a")
				}
			}
			rows = append(rows, row)
		}
		blocks = append(blocks, Block{Table: &Table{Caption: "Share of the mix, % (time: measured in the mix; server costs: mix share × cost alone)", Head: head, Rows: rows}})
		bc := BarChart{Title: "Share of the mix by resource", YLabel: "% of the mix's total", YMax: 100}
		for _, c := range cols {
			bc.Labels = append(bc.Labels, c.Name)
		}
		for _, o := range iso {
			s := Series{Name: o.Op}
			for _, c := range cols {
				v, ok := o.SharePct[c.Key]
				if !ok {
					v = math.NaN()
				}
				s.Y = append(s.Y, v)
			}
			bc.Stacks = append(bc.Stacks, s)
		}
		b, err := chartBlock(bc.Title, bc.SVG, "each bar is one resource of the mix, split by operation type: where the time goes, and which operation would move each resource if it were cheaper")
		if err != nil {
			return nil, err
		}
		blocks = append(blocks, b)
	}
	if fit := report.IsolatedFit(r); fit != "" {
		blocks = append(blocks, Block{Note: fit})
	}
	var lines []string
	for _, o := range iso {
		switch {
		case o.Verdict != nil && len(o.Verdict.Evidence) > 0:
			line := o.Op + " alone: " + o.Verdict.Bottleneck + " — " + o.Verdict.Evidence[0]
			for _, s := range o.Verdict.Suggestions {
				line += "; " + suggestionText(s)
			}
			if o.Note != "" {
				line += " (" + o.Note + ")"
			}
			lines = append(lines, line)
		case o.Note != "":
			lines = append(lines, o.Op+" alone: "+o.Note)
		}
		for _, n := range o.Notes {
			lines = append(lines, o.Op+" alone: note: "+n)
		}
	}
	if len(lines) > 0 {
		blocks = append(blocks, Block{List: lines})
	}
	return blocks, nil
}
