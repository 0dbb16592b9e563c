package report

import (
	"fmt"
	"time"

	"github.com/ceiling-db/ceiling/internal/diagnose"
	"github.com/ceiling-db/ceiling/internal/runner"
)

// Stall is a span of the measured phase in which no request completed
// (and none failed): FromS to ToS seconds into the run (or into run Run of
// a --repeat).
type Stall struct {
	FromS float64 `json:"from_s"`
	ToS   float64 `json:"to_s"`
	Run   *int    `json:"run,omitempty"`
}

// Seconds is the stall's length.
func (s Stall) Seconds() float64 { return s.ToS - s.FromS }

// minStall is the shortest span without a completion that is called a
// stall: a second, or ten times the run's p99 latency where requests are
// that slow (a whole-table read of minutes completes rarely by nature).
func minStall(res *Result) float64 {
	thr := 1.0
	if l := res.Summary.LatencyMs; l != nil {
		thr = max(thr, 10*l.P99/1000)
	}
	return thr
}

// stallsOf finds the stalls in res's measured intervals: consecutive
// intervals without a completed or failed request whose oldest request in
// flight at their end had waited through them (workers idle in think
// times, or an open loop between arrivals, are no stall), together at
// least minStall long. In the open loop an interval counts only where its
// step scheduled at least 5 requests in it.
func stallsOf(res *Result) []Stall {
	thr := minStall(res)
	var out []Stall
	var cur *Stall
	var prevT float64
	flush := func() {
		if cur != nil && cur.Seconds() >= thr {
			out = append(out, *cur)
		}
		cur = nil
	}
	for _, pt := range res.Intervals {
		if pt.T < prevT { // the next run of a --repeat
			flush()
		}
		prevT = pt.T
		silent := !pt.Warmup && pt.Requests == 0 && pt.Errors == 0 && pt.Seconds > 0 && pt.OldestInFlightMs >= 900*pt.Seconds
		if silent && pt.Step != nil && *pt.Step < len(res.Steps) && res.Steps[*pt.Step].Rate*pt.Seconds < 5 {
			silent = false
		}
		if !silent {
			flush()
			continue
		}
		if cur == nil {
			cur = &Stall{FromS: pt.T - pt.Seconds, Run: pt.Run}
		}
		cur.ToS = pt.T
	}
	flush()
	return out
}

// lastCompleted is how many requests completed in the last second of the
// measured intervals (the last intervals up to a second in all: the very
// last may be a sliver the end clipped).
// Of repeated runs, it is the fewest of the runs that left a request
// waiting that long (minStall), each over its own last second.
func lastCompleted(res *Result) int64 {
	var least int64 = -1
	for _, r := range res.Runs {
		if in := r.InFlightAtEnd; in != nil && in.OldestMs/1000 >= minStall(res) {
			if n := lastCompletedIn(res.Intervals, r.Run); least < 0 || n < least {
				least = n
			}
		}
	}
	if least >= 0 {
		return least
	}
	return lastCompletedIn(res.Intervals, 0)
}

// runStallShare is, of a --repeat's runs, the largest part of one run's
// measured time its stall took: its spans without a completion, or what
// it left waiting at its end (the oldest request, unless that run's
// requests kept completing in its last second; the longest
// reconnection); 0 when not repeated.
func runStallShare(res *Result) float64 {
	var most float64
	for _, r := range res.Runs {
		if r.ElapsedS <= 0 {
			continue
		}
		var secs float64
		for _, s := range res.Summary.Stalls {
			if s.Run != nil && *s.Run == r.Run {
				secs += s.Seconds()
			}
		}
		if in := r.InFlightAtEnd; in != nil {
			if in.OldestMs/1000 >= minStall(res) && lastCompletedIn(res.Intervals, r.Run) == 0 {
				secs = max(secs, in.OldestMs/1000)
			}
			if in.ReconnectingMs/1000 >= minStall(res) {
				secs = max(secs, in.ReconnectingMs/1000)
			}
		}
		most = max(most, secs/r.ElapsedS)
	}
	return most
}

// lastCompletedIn is how many requests completed in the last second of
// run's measured intervals (run 0: of all of them).
func lastCompletedIn(ivs []IntervalPoint, run int) int64 {
	var n int64
	var secs float64
	for i := len(ivs) - 1; i >= 0 && secs < 1; i-- {
		pt := ivs[i]
		if pt.Warmup || (run > 0 && (pt.Run == nil || *pt.Run != run)) {
			continue
		}
		n += pt.Requests
		secs += pt.Seconds
	}
	return n
}

// applyStalls notes the stalls and the requests left waiting at the end,
// and adjusts the verdict (diagnose.WithStall): a run that stood still
// for a fifth of its time or more is a "stall", whatever its figures say.
func applyStalls(res *Result, grace time.Duration) {
	if grace == 0 {
		grace = runner.DefaultGrace
	}
	st := diagnose.StallInfo{ElapsedS: res.Summary.ElapsedS, GraceS: grace.Seconds(),
		Deadlocks: deadlocked(res.Summary)}
	for _, s := range res.Summary.Stalls {
		st.Seconds += s.Seconds()
		span := fmt.Sprintf("%.1f-%.1f s into the run", s.FromS, s.ToS)
		if s.Run != nil {
			span = fmt.Sprintf("%.1f-%.1f s into run %d", s.FromS, s.ToS, *s.Run)
		}
		st.Spans = append(st.Spans, span)
	}
	in := res.Summary.InFlightAtEnd
	if in.OldestMs/1000 >= minStall(res) {
		st.InFlight, st.OldestS, st.Unfinished = in.Requests, in.OldestMs/1000, in.Unfinished
		if n := lastCompleted(res); n > 0 {
			st.Starved, st.LastCompleted = true, n
		}
	}
	if in.ReconnectingMs/1000 >= minStall(res) {
		st.Reconnecting, st.ReconnectingS = in.Reconnecting, in.ReconnectingMs/1000
	}
	st.RunShare = runStallShare(res)
	if st.Seconds == 0 && st.OldestS == 0 && st.ReconnectingS == 0 {
		return
	}
	v := res.Verdict
	if v == nil {
		// Nothing completed in the measured phase: the stall is all
		// there is to say.
		v = &diagnose.Verdict{Bottleneck: diagnose.None, Evidence: []string{}, Suggestions: []diagnose.Suggestion{}, Rules: []diagnose.Rule{}}
	}
	res.Verdict = diagnose.WithStall(v, st)
}
