package diagnose

import (
	"fmt"
	"strings"
)

// Stall is the verdict of a run in which no request completed for a large
// part of the measured time (MinStallShare): the server, or something
// between it and ceiling, stopped answering, and the run's figures
// describe the time around that, not a ceiling.
const Stall = "stall"

// MinStallShare is the share of the measured time without a completed
// request from which the run's verdict is "stall".
const MinStallShare = 0.2

// StallInfo is what a run's series showed of the time without a completed
// request: Seconds in all, Spans naming them ("3.0-18.0 s into the
// run"), the requests still waiting when the measured phase ended
// (InFlight, the oldest waiting OldestS, Unfinished of them still not back
// GraceS later), and the workers still getting a new connection then
// (Reconnecting, the first for ReconnectingS). ElapsedS is the measured
// time.
type StallInfo struct {
	Seconds       float64
	Spans         []string
	ElapsedS      float64
	InFlight      int
	OldestS       float64
	Unfinished    int
	GraceS        float64
	Reconnecting  int
	ReconnectingS float64
	// Starved: requests kept completing until the end (some in the last
	// second), so the oldest request's wait is no stall of the
	// database: its worker was not served in turn (a lock granted to
	// others first). Its wait then counts for no stall time.
	Starved bool
	// LastCompleted is how many requests completed in the last second
	// (with Starved).
	LastCompleted int64
	// RunShare is, of repeated runs, the largest part of one run's own
	// measured time that its stall took (its spans, or what it left
	// waiting at its end while nothing completed); 0 when not repeated.
	// A run that stood still for a fifth of its time stalls the
	// repeats, however many ran.
	RunShare float64
	// Deadlocks: the run's own transactions deadlocked (its first
	// serialization error was a deadlock), so requests waiting on row
	// locks were waiting on each other, not on a database that stopped.
	Deadlocks bool
}

// stalled says whether anything in st is worth a word.
func (st StallInfo) stalled() bool { return st.Seconds > 0 || st.OldestS > 0 || st.ReconnectingS > 0 }

// Evidence describes st in a line or two.
func (st StallInfo) Evidence() []string {
	var out []string
	if st.Seconds > 0 {
		out = append(out, fmt.Sprintf("no request completed for %.1f s of the %.1f s measured (%s)", st.Seconds, st.ElapsedS, strings.Join(st.Spans, ", ")))
	}
	if st.OldestS > 0 && st.Starved {
		out = append(out, fmt.Sprintf("%d %s still waiting when the run ended, the oldest for %.1f s while the others kept completing (%d in the last second): that worker was starved, not served in turn (a lock granted to the others first), while the database answered; its request is not in the counts or the latencies",
			st.InFlight, plural(st.InFlight, "request was", "requests were"), st.OldestS, st.LastCompleted))
	} else if st.OldestS > 0 {
		line := fmt.Sprintf("%d %s still waiting for the database when the run ended, the oldest for %.1f s: not in the counts or the latencies",
			st.InFlight, plural(st.InFlight, "request was", "requests were"), st.OldestS)
		if st.Unfinished > 0 {
			line += fmt.Sprintf("; %d had not returned %.0f s later and were cancelled", st.Unfinished, st.GraceS)
		}
		out = append(out, line)
	}
	if st.ReconnectingS > 0 {
		out = append(out, fmt.Sprintf("%d %s still trying to reconnect when the run ended, the first since %.1f s before it: the database could not be reached",
			st.Reconnecting, plural(st.Reconnecting, "worker was", "workers were"), st.ReconnectingS))
	}
	return out
}

// share is the part of the measured time the stall took: the spans
// without a completion, the oldest request left waiting at the end (unless
// the others kept completing: Starved), or the longest reconnection going
// on then, whichever is longest.
func (st StallInfo) share() float64 {
	if st.ElapsedS <= 0 {
		return 0
	}
	oldest := st.OldestS
	if st.Starved {
		oldest = 0
	}
	return max(max(st.Seconds, oldest, st.ReconnectingS)/st.ElapsedS, st.RunShare)
}

// WithStall returns v adjusted for st: when no request completed for at
// least MinStallShare of the measured time, a "stall" verdict whose
// runner-up is v's (unless v is Errors, which stays); otherwise v with a
// line of evidence per stall. v itself is not changed. Without a stall it
// returns v.
func WithStall(v *Verdict, st StallInfo) *Verdict {
	if v == nil || !st.stalled() {
		return v
	}
	share := st.share()
	ev := st.Evidence()
	out := *v
	cmp := "<"
	if share >= MinStallShare {
		cmp = "≥"
	}
	out.Rules = append(append([]Rule{}, v.Rules...), Rule{Name: Stall, Matched: share >= MinStallShare, Score: round(share, 3),
		Why: fmt.Sprintf("no request completed for %.0f%% of the measured time (%s %.0f%%)", 100*share, cmp, 100*MinStallShare)})
	if share < MinStallShare || v.Bottleneck == Errors {
		// A short stall is a detail of the verdict; a run whose requests
		// failed is about its errors first.
		out.Evidence = append(append([]string{}, v.Evidence...), ev...)
		return &out
	}
	if v.Bottleneck == Contention && st.Deadlocks {
		// The sessions waited on each other's row locks, deadlocking
		// (PostgreSQL resolves each after deadlock_timeout): nothing
		// completed because of the run's own transactions.
		out.Evidence = append(append(append([]string{}, v.Evidence...), ev...),
			"the requests were waiting on each other's row locks, with deadlocks among them: the run's own transactions held it up, not a database that stopped answering")
		out.Rules[len(out.Rules)-1].Why += "; but the waits were on the run's own row locks (deadlocks): contention"
		return &out
	}
	out.Bottleneck = Stall
	for i, r := range out.Rules {
		if r.Name == None && r.Matched {
			out.Rules[i].Matched, out.Rules[i].Why = false, "no other rule matched, but the run stalled"
		}
	}
	out.Evidence = append(ev, "the database (or the path to it) stopped answering: the figures describe the time around the stall, not its ceiling")
	if v.Bottleneck != None && len(v.Evidence) > 0 {
		out.Evidence = append(out.Evidence, fmt.Sprintf("runner-up: %s: %s", v.Bottleneck, v.Evidence[0]))
	}
	out.Suggestions = []Suggestion{{Action: "finding what held the database up (its log: a checkpoint or a full disk; a lock taken outside the run; a paused VM or process; the network), then running again"}}
	return &out
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
