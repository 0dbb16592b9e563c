package report

// Each operation type of a mixed workload run alone after the measured mix
// (ceiling run --isolate): its own rate, latency, per-request server costs
// and verdict, and its estimated share of what the mix costs the server.

import (
	"fmt"
	"io"
	"strings"

	"github.com/ceiling-db/ceiling/internal/diagnose"
	"github.com/ceiling-db/ceiling/internal/metrics"
	"github.com/ceiling-db/ceiling/internal/runner"
)

// Isolated is one operation type run alone (result key "isolated").
type Isolated struct {
	Op             string            `json:"op"`
	Seconds        float64           `json:"seconds"` // measured duration
	Threads        int               `json:"threads"`
	Requests       int64             `json:"requests"`
	RequestsPerSec float64           `json:"requests_per_sec"`
	Errors         int64             `json:"errors"`
	ErrorsByClass  map[string]int64  `json:"errors_by_class"`
	LatencyMs      *metrics.Latency  `json:"latency_ms"`
	Costs          Costs             `json:"costs"`
	Verdict        *diagnose.Verdict `json:"verdict"`
	Partial        bool              `json:"partial,omitempty"` // interrupted
	// Note says how the run alone was bounded or why it did not run
	// (e.g. TPC-C Delivery: by the undelivered orders).
	Note string `json:"note,omitempty"`
	// Figures are the workload's own figures over the run alone (tpcc:
	// new_orders, delivery_empty_districts, ...); absent when it has none.
	Figures map[string]float64 `json:"figures,omitempty"`
	// Notes are the remarks on the run alone (other work on the server,
	// incomplete evidence), as in the result's notes.
	Notes []string `json:"notes,omitempty"`
	// MixPct is the operation's share of the requests of the measured mix, %.
	MixPct *float64 `json:"mix_pct"`
	// SharePct estimates the operation's share of what the mix costs, % per
	// resource (ShareKeys): for "time", its share of the mix's request time
	// (requests × mean latency, both measured in the mix); for the server
	// resources, its mix share × its cost per request alone, over the same
	// product summed over all operations. A resource is absent when any
	// operation's cost for it was not measured, or all are zero.
	SharePct map[string]float64 `json:"share_pct,omitempty"`
}

// Share keys of Isolated.SharePct, in display order.
const (
	ShareTime       = "time"
	ShareLogBytes   = "log_bytes"
	ShareLogSyncs   = "log_syncs"
	ShareDataReads  = "data_reads"
	ShareDataWrites = "data_writes"
	ShareCPU        = "cpu"
)

// shareCosts are the server resources whose shares are estimated, with the
// per-request cost each comes from.
//
// floor is the least the mix's cost per request (the operations' costs
// alone weighted by the mix) must come to for shares to be given: below
// it they would split next to nothing (MariaDB's mixed: inserts at 1
// data read in 30,000 requests, no other operation reading, were "100%"
// of the data reads).
var shareCosts = []struct {
	key   string
	name  string
	cost  func(Costs) *float64
	floor float64
}{
	{ShareLogBytes, "log bytes", func(c Costs) *float64 { return c.LogBytesPerOp }, 1},
	{ShareLogSyncs, "log syncs", func(c Costs) *float64 { return c.LogSyncsPerOp }, 0.001},
	{ShareDataReads, "data reads", func(c Costs) *float64 { return c.DataReadsPerOp }, 0.001},
	{ShareDataWrites, "data writes", func(c Costs) *float64 { return c.DataWritesPerOp }, 0.001},
	{ShareCPU, "server CPU", func(c Costs) *float64 { return c.CPUusPerOp }, 0.1},
}

// IsolatedOf summarises the run of operation op alone. p describes that
// run (its load is the isolation's closed loop).
func IsolatedOf(p Params, op string, r *runner.Result) (Isolated, error) {
	d, err := Build(p, r)
	if err != nil {
		return Isolated{}, err
	}
	s := d.Summary
	out := Isolated{
		Op: op, Seconds: s.ElapsedS, Threads: p.Load.Threads, Requests: s.Requests,
		RequestsPerSec: s.RequestsPerSec, Errors: s.Errors, ErrorsByClass: s.ErrorsByClass,
		LatencyMs: s.LatencyMs, Costs: d.Costs, Verdict: d.Verdict, Partial: d.Partial, Figures: d.Figures,
		Notes: d.Notes,
	}
	if o, ok := s.ByOp[op]; ok {
		// Only op ran; its own histogram is the run's.
		out.LatencyMs = o.LatencyMs
	}
	return out, nil
}

// SetIsolatedShares fills each isolated operation's mix share and its share
// of the mix's costs from the measured mix (r.Summary) and the costs alone.
func SetIsolatedShares(r *Result) {
	iso := r.Isolated
	if len(iso) == 0 {
		return
	}
	total := r.Summary.Requests
	mix := make([]float64, len(iso)) // requests share, 0..1
	for i := range iso {
		o := r.Summary.ByOp[iso[i].Op]
		if total > 0 {
			mix[i] = float64(o.Requests) / float64(total)
			iso[i].MixPct = f64(100 * mix[i])
		}
		iso[i].SharePct = nil
	}
	set := func(key string, floor float64, part func(i int) *float64) {
		var sum float64
		parts := make([]float64, len(iso))
		for i := range iso {
			v := part(i)
			if v == nil {
				return
			}
			parts[i] = *v
			sum += *v
		}
		if sum <= 0 || sum < floor {
			return
		}
		for i := range iso {
			if iso[i].SharePct == nil {
				iso[i].SharePct = map[string]float64{}
			}
			iso[i].SharePct[key] = 100 * parts[i] / sum
		}
	}
	// Time: measured in the mix itself (requests × mean latency), over all
	// the mix's operations, whether or not each ran alone.
	var mixTime float64
	for _, o := range r.Summary.ByOp {
		if o.LatencyMs != nil {
			mixTime += float64(o.Requests) * o.LatencyMs.Mean
		}
	}
	if mixTime > 0 {
		for i := range iso {
			if o := r.Summary.ByOp[iso[i].Op]; o.LatencyMs != nil {
				if iso[i].SharePct == nil {
					iso[i].SharePct = map[string]float64{}
				}
				iso[i].SharePct[ShareTime] = 100 * float64(o.Requests) * o.LatencyMs.Mean / mixTime
			}
		}
	}
	// Only when every operation of the mix was run alone can the shares of
	// the server's costs be estimated.
	if len(iso) != len(r.Summary.OpOrder) || total == 0 {
		return
	}
	for _, sc := range shareCosts {
		set(sc.key, sc.floor, func(i int) *float64 {
			c := sc.cost(iso[i].Costs)
			if c == nil || iso[i].Requests == 0 {
				return nil
			}
			return f64(mix[i] * *c)
		})
	}
}

// isolatedModel is the cost per request of the mix predicted from the
// operations' costs alone weighted by the mix (nil when any is unknown).
func isolatedModel(r *Result, cost func(Costs) *float64) *float64 {
	if len(r.Isolated) != len(r.Summary.OpOrder) {
		return nil
	}
	var sum float64
	for _, o := range r.Isolated {
		c := cost(o.Costs)
		if c == nil || o.MixPct == nil || o.Requests == 0 {
			return nil
		}
		sum += *o.MixPct / 100 * *c
	}
	return &sum
}

// printIsolated prints the operations run alone: a table of rates,
// latencies and costs, their shares of the mix, and each one's verdict.
func printIsolated(w io.Writer, r *Result) {
	iso := r.Isolated
	if len(iso) == 0 {
		return
	}
	nameW := 10
	for _, o := range iso {
		nameW = max(nameW, len(o.Op))
	}
	fmt.Fprintf(w, "\neach operation alone, after the mix (closed loop, %s; server costs per request)\n", diagnose.Threads(iso[0].Threads))
	fmt.Fprintf(w, "%-*s %6s %10s %9s %9s %10s %9s %9s %9s %9s %7s  %s\n", nameW, "operation", "secs", "req/s", "mean ms", "p99 ms",
		"log B", "log syncs", "reads", "writes", "CPU µs", "errors", "bottleneck alone")
	for _, o := range iso {
		mean, p99 := "n/a", "n/a"
		if o.LatencyMs != nil {
			mean, p99 = fmt.Sprintf("%.3f", o.LatencyMs.Mean), fmt.Sprintf("%.3f", o.LatencyMs.P99)
		}
		b := "n/a"
		if o.Verdict != nil {
			b = o.Verdict.Bottleneck
		}
		if o.Partial {
			b += " (interrupted)"
		}
		c := o.Costs
		fmt.Fprintf(w, "%-*s %6.1f %10.1f %9s %9s %10s %9s %9s %9s %9s %7d  %s\n", nameW, o.Op, o.Seconds, o.RequestsPerSec, mean, p99,
			opt(c.LogBytesPerOp, "%.0f"), opt(c.LogSyncsPerOp, "%.3f"), opt(c.DataReadsPerOp, "%.3f"), opt(c.DataWritesPerOp, "%.3f"),
			opt(c.CPUusPerOp, "%.0f"), o.Errors, b)
	}

	cols := ShareColumns(iso)
	if len(cols) > 0 {
		fmt.Fprintf(w, "\nshare of the mix, %% (time: measured in the mix; server costs: mix share × cost alone)\n%-*s %8s", nameW, "operation", "requests")
		for _, c := range cols {
			fmt.Fprintf(w, " %11s", c.Name)
		}
		fmt.Fprintln(w)
		for _, o := range iso {
			fmt.Fprintf(w, "%-*s %8s", nameW, o.Op, opt(o.MixPct, "%.1f"))
			for _, c := range cols {
				if v, ok := o.SharePct[c.Key]; ok {
					fmt.Fprintf(w, " %11.1f", v)
				} else {
					fmt.Fprintf(w, " %11s", "n/a")
				}
			}
			fmt.Fprintln(w)
		}
	}
	if fit := IsolatedFit(r); fit != "" {
		fmt.Fprintln(w, fit)
	}
	for _, o := range iso {
		if o.Note != "" {
			fmt.Fprintf(w, "  %s alone: %s\n", o.Op, o.Note)
		}
		for _, n := range o.Notes {
			fmt.Fprintf(w, "  %s alone: note: %s\n", o.Op, n)
		}
	}
	for _, o := range iso {
		if o.Verdict == nil || len(o.Verdict.Evidence) == 0 {
			continue
		}
		ev := o.Verdict.Evidence
		if len(ev) > 3 {
			ev = ev[:3]
		}
		fmt.Fprintf(w, "  %s alone: %s — %s\n", o.Op, o.Verdict.Bottleneck, strings.Join(ev, "; "))
	}
}

// ShareColumn is one resource of Isolated.SharePct, with its display name.
type ShareColumn struct{ Key, Name string }

// ShareColumns lists the share resources at least one operation has, in
// display order.
func ShareColumns(iso []Isolated) []ShareColumn {
	all := []ShareColumn{{ShareTime, "time"}}
	for _, sc := range shareCosts {
		all = append(all, ShareColumn{sc.key, sc.name})
	}
	var out []ShareColumn
	for _, c := range all {
		for _, o := range iso {
			if _, ok := o.SharePct[c.Key]; ok {
				out = append(out, c)
				break
			}
		}
	}
	return out
}

// IsolatedFit compares the mix's measured costs per request with the
// operations' costs alone weighted by the mix, as one sentence ("" when
// nothing compares). Far from 100%, the operations cost differently
// together than alone (caching, batching of log flushes, contention), or
// other work was counted.
func IsolatedFit(r *Result) string {
	var fit, far []string
	for _, sc := range shareCosts {
		model, mixed := isolatedModel(r, sc.cost), sc.cost(r.Costs)
		if model == nil || mixed == nil || *mixed <= 0 {
			continue
		}
		ratio := *model / *mixed
		fit = append(fit, fmt.Sprintf("%s %.0f%%", sc.name, 100*ratio))
		if ratio < 0.5 || ratio > 2 {
			far = append(far, sc.name)
		}
	}
	if len(fit) == 0 {
		return ""
	}
	s := "the operations' costs alone, weighted by the mix, come to " + strings.Join(fit, ", ") + " of the mix's measured cost per request"
	if len(far) > 0 {
		s += "; " + strings.Join(far, ", ") + " far from 100%: the operations cost differently together than alone (shared log flushes, background page writes, caching), so those shares are rough"
	}
	return s
}
