package report

import (
	"fmt"
	"sort"

	"github.com/ceiling-db/ceiling/internal/diagnose"
)

// Cold start: a run without a warm-up measures its sessions' first
// requests, which may be much slower than the rest (new server processes
// or threads, their catalog and plan caches, pages not yet in cache). The
// summary's percentiles then include that start. A PostgreSQL open loop of
// direct selects with 32 workers at 4,000/s: p90 58 ms and p99 98 ms in
// the first second, 7-17 ms p99 in each second after it.
const (
	coldMinIntervals = 5   // the first interval and at least 4 to compare it with
	coldMinRequests  = 100 // an interval's p99 from fewer is its maximum
	coldRatio        = 3.0 // the first interval's p99 ≥ 3× the later ones' median
	coldMinGapMs     = 1.0 // and at least 1 ms above it
)

// coldStartNote returns a note when res ran without a warm-up and its
// first measured interval's p99 latency was at least coldRatio times (and
// coldMinGapMs above) the median p99 of the intervals after it, in the
// same run and step; "" otherwise. Only the first run (of a --repeat) and
// the first step (of a ramp) are looked at: the later ones follow another
// run's or step's load.
func coldStartNote(res *Result) string {
	if res.Load.WarmupS > 0 || (res.Load.StepWarmupS != nil && *res.Load.StepWarmupS > 0) {
		return ""
	}
	var group []IntervalPoint
	for _, iv := range res.Intervals {
		if iv.Warmup {
			return "" // a warm-up ran after all
		}
		if (iv.Run != nil && *iv.Run != 1) || (iv.Step != nil && *iv.Step != 0) {
			break
		}
		group = append(group, iv)
	}
	if len(group) < coldMinIntervals {
		return ""
	}
	first := group[0]
	if first.LatencyMs == nil || first.Requests < coldMinRequests {
		return ""
	}
	var later []float64
	var total int64
	for _, iv := range group[1:] {
		total += iv.Requests
		if iv.LatencyMs != nil && iv.Requests >= coldMinRequests {
			later = append(later, iv.LatencyMs.P99)
		}
	}
	if len(later) < coldMinIntervals-1 {
		return ""
	}
	sort.Float64s(later)
	med := later[len(later)/2]
	if len(later)%2 == 0 {
		med = (later[len(later)/2-1] + later[len(later)/2]) / 2
	}
	p99 := first.LatencyMs.P99
	if p99 < coldRatio*med || p99-med < coldMinGapMs {
		return ""
	}
	where := "the first second"
	if first.Seconds > 0 && (first.Seconds < 0.95 || first.Seconds > 1.05) {
		where = fmt.Sprintf("the first %.1f s", first.Seconds)
	}
	if res.Load.Repeat > 1 {
		where = "run 1's " + where[len("the "):]
	}
	// A ramp takes no --warmup: its steps' own warm-up does it.
	fix, in := "--warmup (e.g. --warmup 5s)", "the summary's percentiles"
	if len(res.Load.Rates) > 1 {
		fix, in = "--step-warmup (e.g. --step-warmup 5s)", "the first step's and the summary's percentiles"
	}
	return fmt.Sprintf("cold start: %s had a latency p99 of %s ms against %s ms in the intervals after it (their median); its %s requests (of %s) are in %s; %s leaves such a start out of the figures",
		where, diagnose.MsText(p99), diagnose.MsText(med), diagnose.Thousands(float64(first.Requests)), diagnose.Thousands(float64(first.Requests+total)), in, fix)
}
