package report

import (
	"strings"
	"testing"
	"time"

	"github.com/ceiling-db/ceiling/internal/diagnose"
	"github.com/ceiling-db/ceiling/internal/metrics"
	"github.com/ceiling-db/ceiling/internal/runner"
)

// TestStallsOf: consecutive measured intervals without a completed or
// failed request make a stall once they last a second, or ten times the
// run's p99 where requests are that slow; warm-up intervals, a failing
// interval and an open-loop step too slow to fill an interval are none;
// a --repeat's runs are apart.
func TestStallsOf(t *testing.T) {
	// An interval without completions had a request waiting through it
	// (a stuck one), unless said otherwise.
	pt := func(tEnd, secs float64, req, errs int64) IntervalPoint {
		p := IntervalPoint{T: tEnd, Seconds: secs, Requests: req, Errors: errs}
		if req == 0 {
			p.OldestInFlightMs = 1000 * tEnd
		}
		return p
	}
	res := &Result{Summary: Summary{LatencyMs: &metrics.Latency{P99: 2}}}
	res.Intervals = []IntervalPoint{
		pt(1, 1, 100, 0), pt(2, 1, 0, 0), pt(3, 1, 50, 0), // 1 s: a stall
		pt(3.5, 0.5, 0, 0), pt(4, 0.5, 0, 1), // 0.5 s, then a failure: none
		pt(5, 1, 0, 0), pt(6, 1, 0, 0), // to the end: 2 s
	}
	warm := pt(7, 1, 0, 0)
	warm.Warmup = true
	res.Intervals = append(res.Intervals, warm)
	st := stallsOf(res)
	if len(st) != 2 || st[0].FromS != 1 || st[0].ToS != 2 || st[1].FromS != 4 || st[1].ToS != 6 {
		t.Fatalf("stalls %+v, want 1-2 s and 4-6 s", st)
	}
	// Workers idle between requests (think times): no request was
	// waiting, so the silence is theirs, not the database's.
	res.Intervals[5].OldestInFlightMs, res.Intervals[6].OldestInFlightMs = 0, 0
	if st := stallsOf(res); len(st) != 1 || st[0].ToS != 2 {
		t.Fatalf("idle workers: stalls %+v, want only 1-2 s", st)
	}
	res.Intervals[5], res.Intervals[6] = pt(5, 1, 0, 0), pt(6, 1, 0, 0)
	// Requests of 300 ms at p99: a 2 s gap is no stall (10 × p99 = 3 s).
	res.Summary.LatencyMs.P99 = 300
	if st := stallsOf(res); len(st) != 0 {
		t.Fatalf("slow requests: stalls %+v, want none", st)
	}
	// A repeat's second run starts at t 0 again: silent ends of one run
	// and silent starts of the next are two stalls, not one.
	res.Summary.LatencyMs.P99 = 2
	res.Intervals = []IntervalPoint{pt(1, 1, 10, 0), pt(2, 1, 0, 0), pt(1, 1, 0, 0), pt(2, 1, 10, 0)}
	if st := stallsOf(res); len(st) != 2 || st[0].FromS != 1 || st[1].FromS != 0 {
		t.Fatalf("repeat: stalls %+v, want one at the end of run 1, one at the start of run 2", st)
	}
	// Open loop: a step of 2 requests/s leaves seconds empty by itself.
	step := 0
	slow := pt(2, 1, 0, 0)
	slow.Step = &step
	res.Steps = []Step{{Rate: 2}}
	res.Intervals = []IntervalPoint{pt(1, 1, 2, 0), slow}
	if st := stallsOf(res); len(st) != 0 {
		t.Fatalf("slow open-loop step: stalls %+v, want none", st)
	}
	res.Steps[0].Rate = 100
	if st := stallsOf(res); len(st) != 1 {
		t.Fatalf("open-loop step at 100/s: stalls %+v, want one", st)
	}
}

// TestApplyStalls: a run silent for most of its time gets the stall
// verdict with its former verdict as runner-up; a short stall is a line of
// evidence; requests left waiting at the end count even without a silent
// interval, and a run that completed nothing gets a verdict at all.
func TestApplyStalls(t *testing.T) {
	base := func() *Result {
		return &Result{Summary: Summary{ElapsedS: 10, LatencyMs: &metrics.Latency{P99: 2}},
			Verdict: &diagnose.Verdict{Bottleneck: diagnose.CPU, Evidence: []string{"CPU 90% of the cores"}}}
	}
	res := base()
	res.Summary.Stalls = []Stall{{FromS: 3, ToS: 9}}
	applyStalls(res, 0)
	v := res.Verdict
	if v.Bottleneck != diagnose.Stall || !strings.HasPrefix(v.Evidence[0], "no request completed for 6.0 s of the 10.0 s measured (3.0-9.0 s into the run)") ||
		!strings.Contains(strings.Join(v.Evidence, "|"), "runner-up: cpu: CPU 90% of the cores") {
		t.Errorf("long stall: %s %q", v.Bottleneck, v.Evidence)
	}
	res = base()
	res.Summary.Stalls = []Stall{{FromS: 3, ToS: 4}}
	applyStalls(res, 0)
	if v := res.Verdict; v.Bottleneck != diagnose.CPU || v.Evidence[len(v.Evidence)-1] != "no request completed for 1.0 s of the 10.0 s measured (3.0-4.0 s into the run)" {
		t.Errorf("short stall: %s %q", v.Bottleneck, v.Evidence)
	}
	res = base()
	res.Summary.InFlightAtEnd = InFlightAtEnd{Requests: 3, OldestMs: 4000, Unfinished: 3}
	applyStalls(res, 0)
	if v := res.Verdict; v.Bottleneck != diagnose.Stall ||
		v.Evidence[0] != "3 requests were still waiting for the database when the run ended, the oldest for 4.0 s: not in the counts or the latencies; 3 had not returned 5 s later and were cancelled" {
		t.Errorf("left waiting: %s %q", v.Bottleneck, v.Evidence)
	}
	// The same wait while the others kept completing to the end: one
	// worker starved (SQLite's lock under slow commits), no stall.
	res = base()
	res.Summary.InFlightAtEnd = InFlightAtEnd{Requests: 4, OldestMs: 9000}
	res.Intervals = []IntervalPoint{{T: 9, Seconds: 1, Requests: 30}, {T: 9.99, Seconds: 0.99, Requests: 35}, {T: 10, Seconds: 0.01}}
	applyStalls(res, 0)
	if v := res.Verdict; v.Bottleneck != diagnose.CPU || len(v.Evidence) != 2 ||
		!strings.HasPrefix(v.Evidence[1], "4 requests were still waiting when the run ended, the oldest for 9.0 s while the others kept completing (35 in the last second): that worker was starved") {
		t.Errorf("starved worker: %s %q", v.Bottleneck, v.Evidence)
	}
	// … and with a silent last interval it is a stall again.
	res = base()
	res.Summary.InFlightAtEnd = InFlightAtEnd{Requests: 4, OldestMs: 9000}
	res.Intervals = []IntervalPoint{{T: 9, Seconds: 1, Requests: 30}, {T: 10, Seconds: 1}}
	applyStalls(res, 0)
	if v := res.Verdict; v.Bottleneck != diagnose.Stall {
		t.Errorf("silent end: %s %q", v.Bottleneck, v.Evidence)
	}
	// The server gone: the workers reconnecting at the end.
	res = base()
	res.Summary.InFlightAtEnd = InFlightAtEnd{Reconnecting: 4, ReconnectingMs: 4000}
	applyStalls(res, 0)
	if v := res.Verdict; v.Bottleneck != diagnose.Stall ||
		v.Evidence[0] != "4 workers were still trying to reconnect when the run ended, the first since 4.0 s before it: the database could not be reached" {
		t.Errorf("reconnecting: %s %q", v.Bottleneck, v.Evidence)
	}
	// Waiting a little at the end is the normal end of a run.
	res = base()
	res.Summary.InFlightAtEnd = InFlightAtEnd{Requests: 3, OldestMs: 2}
	applyStalls(res, 0)
	if v := res.Verdict; v.Bottleneck != diagnose.CPU || len(v.Evidence) != 1 {
		t.Errorf("ordinary end: %s %q", v.Bottleneck, v.Evidence)
	}
	res = &Result{Summary: Summary{ElapsedS: 5, InFlightAtEnd: InFlightAtEnd{Requests: 4, OldestMs: 5000}}}
	applyStalls(res, 0)
	if res.Verdict == nil || res.Verdict.Bottleneck != diagnose.Stall {
		t.Errorf("nothing completed: verdict %+v", res.Verdict)
	}
}

// TestRepeatStalls: a --repeat whose second run stood still gathers that
// run's stall (with its run number) and the verdict says so over the
// runs' measured time.
func TestRepeatStalls(t *testing.T) {
	run := func(silentFrom int, inFlight runner.InFlight) *runner.Result {
		r := &runner.Result{Started: time.Now(), Total: metrics.NewSnapshot([]string{"insert"}), Elapsed: 10 * time.Second, ClientCPUSeconds: -1, InFlight: inFlight}
		for i := 0; i < 10; i++ {
			n := 100
			if i >= silentFrom {
				n = 0
			}
			iv := runner.Interval{Start: time.Duration(i) * time.Second, End: time.Duration(i+1) * time.Second, Snap: snapWith(n, time.Millisecond, 0)}
			if n == 0 {
				iv.OldestInFlight = time.Duration(i+1-silentFrom) * time.Second
			}
			r.Intervals = append(r.Intervals, iv)
			r.Total.Merge(iv.Snap)
		}
		return r
	}
	p := Params{Workload: "single-inserts", Load: runner.Config{Threads: 2, Duration: 10 * time.Second}, Cores: 2}
	res, err := BuildRepeat(p, []*runner.Result{run(10, runner.InFlight{}), run(3, runner.InFlight{Requests: 2, Oldest: 7 * time.Second})})
	if err != nil {
		t.Fatal(err)
	}
	st := res.Summary.Stalls
	if len(st) != 1 || st[0].Run == nil || *st[0].Run != 2 || st[0].FromS != 3 || st[0].ToS != 10 {
		t.Fatalf("stalls %+v, want 3-10 s of run 2", st)
	}
	if in := res.Summary.InFlightAtEnd; in.Requests != 2 || in.OldestMs != 7000 {
		t.Fatalf("in flight at the end %+v", in)
	}
	v := res.Verdict
	if v == nil || v.Bottleneck != diagnose.Stall || v.Evidence[0] != "no request completed for 7.0 s of the 20.0 s measured (3.0-10.0 s into run 2)" {
		t.Fatalf("verdict %+v", v)
	}
	if n := strings.Count(strings.Join(v.Evidence, "|"), "still waiting"); n != 1 {
		t.Fatalf("the requests left waiting said %d times: %q", n, v.Evidence)
	}
}

// TestRepeatStarved: of repeated runs, a request left waiting at a run's
// end while that run's requests kept completing is a starved worker, not
// a stall (the combined result has no intervals of its own: the runs'
// decide, each over its own last second); a run that left one waiting
// and completed nothing in its last second is a stall, judged against
// that run's own time.
func TestRepeatStarved(t *testing.T) {
	run := func(lastSilent bool, inFlight runner.InFlight) *runner.Result {
		r := &runner.Result{Started: time.Now(), Total: metrics.NewSnapshot([]string{"insert"}), Elapsed: 10 * time.Second, ClientCPUSeconds: -1, InFlight: inFlight}
		for i := 0; i < 10; i++ {
			n := 100
			if lastSilent && i == 9 {
				n = 0
			}
			iv := runner.Interval{Start: time.Duration(i) * time.Second, End: time.Duration(i+1) * time.Second, Snap: snapWith(n, time.Millisecond, 0)}
			r.Intervals = append(r.Intervals, iv)
			r.Total.Merge(iv.Snap)
		}
		return r
	}
	p := Params{Workload: "updates", Load: runner.Config{Threads: 4, Duration: 10 * time.Second}, Cores: 2}
	starved := runner.InFlight{Requests: 1, Oldest: 3 * time.Second}
	res, err := BuildRepeat(p, []*runner.Result{run(false, starved), run(false, runner.InFlight{})})
	if err != nil {
		t.Fatal(err)
	}
	if v := res.Verdict; v == nil || v.Bottleneck == diagnose.Stall || !strings.Contains(strings.Join(v.Evidence, "|"), "while the others kept completing (100 in the last second): that worker was starved") {
		t.Fatalf("starved worker in run 1: verdict %+v", v)
	}
	if r := res.Runs[0]; r.InFlightAtEnd == nil || r.InFlightAtEnd.OldestMs != 3000 || res.Runs[1].InFlightAtEnd != nil {
		t.Fatalf("runs' in_flight_at_end: %+v, %+v", res.Runs[0].InFlightAtEnd, res.Runs[1].InFlightAtEnd)
	}
	// Run 1 left one waiting for 3 s and completed nothing in its last
	// second: the database stopped answering for 30% of that run (15%
	// of the two runs' 20 s), whatever run 2 did after.
	res, err = BuildRepeat(p, []*runner.Result{run(true, starved), run(false, runner.InFlight{})})
	if err != nil {
		t.Fatal(err)
	}
	v := res.Verdict
	if v == nil || v.Bottleneck != diagnose.Stall || v.Rules[len(v.Rules)-1].Score != 0.3 {
		t.Fatalf("silent end of run 1: verdict %+v", v)
	}
}
