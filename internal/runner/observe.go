package runner

import (
	"context"
	"time"

	"github.com/ceiling-db/ceiling/internal/workload"
)

// observeTimeout bounds one workload.Observer reading.
const observeTimeout = 30 * time.Second

// observe reads the workload's own counters (workload.Observer) at the edge
// of a measured part. It returns nil when the workload has none or the
// reading failed; the first failure is kept in res.ObserveErr.
func (r *run) observe(ctx context.Context, res *Result) map[string]float64 {
	o, ok := r.w.(workload.Observer)
	if !ok {
		return nil
	}
	// Detached from ctx: an interrupted run still gets its closing reading.
	octx, cancel := context.WithTimeout(context.WithoutCancel(ctx), observeTimeout)
	defer cancel()
	m, err := o.Observe(octx, r.t)
	if err != nil {
		if res.ObserveErr == "" {
			res.ObserveErr = err.Error()
		}
		return nil
	}
	return m
}

// observedDelta returns end - start for the counters present in both, or
// nil when either reading is missing.
func observedDelta(start, end map[string]float64) map[string]float64 {
	if start == nil || end == nil {
		return nil
	}
	d := make(map[string]float64, len(end))
	for k, v := range end {
		if s, ok := start[k]; ok {
			d[k] = v - s
		}
	}
	return d
}

// addObserved adds the deltas d into *acc (allocating it).
func addObserved(acc *map[string]float64, d map[string]float64) {
	if d == nil {
		return
	}
	if *acc == nil {
		*acc = make(map[string]float64, len(d))
	}
	for k, v := range d {
		(*acc)[k] += v
	}
}

// pause runs the worker's deliberate pause (workload.Pauser) before a
// closed-loop request, outside the timed region. It reports whether the
// worker should go on with the request.
func (k *worker) pause() bool {
	p, ok := k.wk.(workload.Pauser)
	if !ok {
		return true
	}
	start := time.Now()
	err := p.Pause(k.run.pauseCtx)
	if k.run.measuring.Load() {
		k.paused.Add(int64(time.Since(start)))
	}
	return err == nil && !k.run.stop.Load()
}
