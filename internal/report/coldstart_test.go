package report

import (
	"strings"
	"testing"

	"github.com/ceiling-db/ceiling/internal/metrics"
)

// coldRun is a result's load and intervals: (requests, p99 ms) per second.
func coldRun(warmup float64, ivs ...[2]float64) *Result {
	res := &Result{Load: Load{Model: "open", Threads: 8, WarmupS: warmup, Repeat: 1}}
	for i, v := range ivs {
		step := 0
		res.Intervals = append(res.Intervals, IntervalPoint{T: float64(i + 1), Seconds: 1, Requests: int64(v[0]),
			LatencyMs: &metrics.Latency{P99: v[1]}, Step: &step})
	}
	return res
}

// TestColdStartNote: the intervals of a PostgreSQL open loop of direct
// selects, 8 workers at 4,000/s without a warm-up (pgbench -R 4000 -c 8
// showed the same first second: p99 22.8 ms, then 1.5-3.1 ms).
func TestColdStartNote(t *testing.T) {
	pg := [][2]float64{{4018, 33.055}, {4007, 2.015}, {3981, 1.774}, {3999, 2.155}, {3998, 2.253}, {3997, 2.111}}
	note := coldStartNote(coldRun(0, pg...))
	for _, want := range []string{"cold start: the first second had a latency p99 of 33.1 ms against 2.11 ms",
		"its 4,018 requests (of 24,000) are in the summary's percentiles", "--warmup"} {
		if !strings.Contains(note, want) {
			t.Errorf("note lacks %q: %q", want, note)
		}
	}
	if n := coldStartNote(coldRun(2, pg...)); n != "" {
		t.Errorf("with a warm-up: %q", n)
	}
	if n := coldStartNote(coldRun(0, pg[:4]...)); n != "" {
		t.Errorf("four intervals only: %q", n)
	}
	// A closed loop of direct selects, 8 workers: no slower start.
	closed := [][2]float64{{17705, 2.329}, {21374, 1.761}, {22471, 1.916}, {28089, 1.331}, {27450, 1.026}, {27654, 1.062}}
	if n := coldStartNote(coldRun(0, closed...)); n != "" {
		t.Errorf("steady p99: %q", n)
	}
	// Ten times the later p99 but under 1 ms above it: noise at this scale.
	fast := [][2]float64{{5000, 0.9}, {5000, 0.09}, {5000, 0.08}, {5000, 0.09}, {5000, 0.1}}
	if n := coldStartNote(coldRun(0, fast...)); n != "" {
		t.Errorf("0.9 ms against 0.09 ms: %q", n)
	}
	// A first interval of a few requests says nothing.
	// A first interval of under 100 requests says nothing: its p99 is
	// its slowest (a custom file with think times, 4 workers: 54).
	few := append([][2]float64{{54, 2.2}}, [][2]float64{{58, 0.44}, {59, 0.43}, {57, 0.5}, {60, 0.45}}...)
	if n := coldStartNote(coldRun(0, few...)); n != "" {
		t.Errorf("54 requests in the first second: %q", n)
	}
	// A ramp: only the first step's intervals are compared.
	ramp := coldRun(0, pg[:5]...)
	for i := range ramp.Intervals[3:] {
		s := 1
		ramp.Intervals[3+i].Step = &s
	}
	if n := coldStartNote(ramp); n != "" {
		t.Errorf("three intervals in the first step: %q", n)
	}
	ramp = coldRun(0, pg...)
	ramp.Load.Rates = []float64{4000, 8000}
	if n := coldStartNote(ramp); !strings.Contains(n, "in the first step's and the summary's percentiles; --step-warmup (e.g. --step-warmup 5s)") {
		t.Errorf("ramp: %q", n)
	}
	// --repeat: run 1's first second.
	rep := coldRun(0, pg...)
	rep.Load.Repeat = 3
	for i := range rep.Intervals {
		r := 1
		rep.Intervals[i].Run = &r
	}
	if n := coldStartNote(rep); !strings.HasPrefix(n, "cold start: run 1's first second had") {
		t.Errorf("repeat: %q", n)
	}
}
