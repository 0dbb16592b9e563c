package workload

import (
	"context"
	"math"
	"math/rand/v2"
	"time"

	"github.com/ceiling-db/ceiling/internal/target"
)

// Observer is implemented by workloads whose headline figures are counted
// from the database rather than from the requests (TPC-C's NOPM: the new
// orders committed, read from the districts). The runner calls Observe
// just before each measured part starts and just after it ends (closed
// loop: around the measured phase, after the warm-up; open loop: around
// each step's measured part), on its own connection, and keeps the change
// of every counter. Figures then turns the changes into the figures
// reported in the result (report.Result.Figures) and on the console.
type Observer interface {
	// Observe reads cumulative counters (database counts, the workload's
	// own counters such as retries). A counter missing at either end is
	// left out of the span.
	Observe(ctx context.Context, t target.Target) (map[string]float64, error)
	// Figures computes the headline figures of a span. A figure that was
	// not measured is absent, never zero.
	Figures(s Span) map[string]float64
}

// Span is what changed over the measured part of a run.
type Span struct {
	Seconds float64            // measured duration
	Delta   map[string]float64 // Observe counters: end minus start
	// Server holds the server's counter deltas over the measured part
	// (target.Ctr* and engine-specific names); nil when not sampled.
	Server map[string]float64
}

// Pauser is implemented by workers that wait between requests on purpose
// (TPC-C keying and thinking times). In the closed loop the runner calls
// Pause before each Do, outside the timed region: the pause is neither
// latency nor a request. The context given to Pause is cancelled as soon
// as the run stops. The open loop never calls Pause: its schedule sets the
// pace.
type Pauser interface {
	Pause(ctx context.Context) error
}

// Wait is a Pauser's wait: d on *t (made at the first wait, reset at the
// next ones, so that a pause allocates nothing), or until ctx is done.
func Wait(ctx context.Context, t **time.Timer, d time.Duration) error {
	if *t == nil {
		*t = time.NewTimer(d)
	} else {
		(*t).Reset(d)
	}
	select {
	case <-(*t).C:
		return nil
	case <-ctx.Done():
		(*t).Stop() // since Go 1.23 a stopped timer needs no draining
		return ctx.Err()
	}
}

// ThinkTime draws a think time of the given mean: negative exponential,
// truncated at 10 times the mean (TPC-C clause 5.2.5).
func ThinkTime(rng *rand.Rand, mean time.Duration) time.Duration {
	x := -math.Log(1 - rng.Float64()) // in (0, +inf)
	return time.Duration(min(x, 10) * float64(mean))
}

// PauseDeclarer is implemented by workloads whose workers are Pausers, so
// that before any worker exists a run knows they will pause: the runner
// then gives each worker its own goroutine instead of multiplexing several
// on one thread, and the target dials its connections for that.
type PauseDeclarer interface {
	WorkersPause() bool
}

// Isolator is implemented by workloads whose requests mix several
// operation types (TPC-C's five transactions). After the measured run,
// `ceiling run` runs each type alone for a short while to measure what it
// costs the server by itself and what bounds it (run --isolate). Isolate
// makes the workers created from then on run only operation op (an index
// into Ops) as fast as they can, without pauses (Pauser); Isolate(-1)
// restores the configured mix. It is called between runs, never while
// workers run.
type Isolator interface {
	Isolate(op int)
	// IsolationBudget is how many requests of op alone the dataset can
	// serve while they stay representative (TPC-C's Delivery consumes the
	// undelivered orders; once they are gone, it finds nothing to do), or
	// 0 when there is no such bound, for a run with the given number of
	// workers. A budget below zero means op cannot run alone now; the
	// string says why (or how the budget was set).
	IsolationBudget(ctx context.Context, t target.Target, op, threads int) (int64, string, error)
}
