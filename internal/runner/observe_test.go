package runner

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ceiling-db/ceiling/internal/target"
	"github.com/ceiling-db/ceiling/internal/workload"
)

// observedWorkload counts its requests and pauses, reports the request
// count through workload.Observer, and pauses (forever, if block) before
// each request through workload.Pauser.
type observedWorkload struct {
	fakeWorkload
	block    bool
	dos      atomic.Int64
	pauses   atomic.Int64
	observes atomic.Int64
}

func (w *observedWorkload) NewWorker(context.Context, target.Target, target.Conn, int) (workload.Worker, error) {
	return &observedWorker{w: w}, nil
}

func (w *observedWorkload) Observe(context.Context, target.Target) (map[string]float64, error) {
	w.observes.Add(1)
	return map[string]float64{"dos": float64(w.dos.Load())}, nil
}

func (w *observedWorkload) Figures(s workload.Span) map[string]float64 {
	return map[string]float64{"dos_per_sec": s.Delta["dos"] / s.Seconds}
}

type observedWorker struct{ w *observedWorkload }

func (k *observedWorker) Do(context.Context) (workload.Result, error) {
	k.w.dos.Add(1)
	return workload.Result{Rows: 1}, nil
}

func (k *observedWorker) Pause(ctx context.Context) error {
	k.w.pauses.Add(1)
	if k.w.block && k.w.dos.Load() > 0 {
		<-ctx.Done() // only the run's stop ends this pause
		return ctx.Err()
	}
	return nil
}

func TestObserverAndPauseClosedLoop(t *testing.T) {
	w := &observedWorkload{}
	res, err := Run(context.Background(), Config{Threads: 2, Duration: 200 * time.Millisecond, Warmup: 50 * time.Millisecond}, &fakeTarget{}, w)
	if err != nil {
		t.Fatal(err)
	}
	if got := w.observes.Load(); got != 2 {
		t.Errorf("Observe called %d times, want 2 (start and end of the measured phase)", got)
	}
	d, ok := res.Observed["dos"]
	if !ok || d <= 0 || d > float64(w.dos.Load()) {
		t.Errorf("observed %v requests over the measured phase; %d in all", res.Observed, w.dos.Load())
	}
	// Every request was preceded by a pause (the last pauses may not be
	// followed by a request).
	if p, n := w.pauses.Load(), w.dos.Load(); p < n || p > n+2 {
		t.Errorf("%d pauses for %d requests", p, n)
	}
}

func TestPauseEndsWhenTheRunStops(t *testing.T) {
	w := &observedWorkload{block: true}
	// A grace period far longer than the test: only the pause context
	// being cancelled at the stop lets Run return.
	res, err := Run(context.Background(), Config{Threads: 2, Duration: 100 * time.Millisecond, Grace: time.Hour}, &fakeTarget{}, w)
	if err != nil {
		t.Fatal(err)
	}
	if res.Partial {
		t.Error("run marked partial")
	}
}

func TestObserverOpenLoopSteps(t *testing.T) {
	w := &observedWorkload{}
	cfg := Config{Threads: 2, Steps: []Step{{Rate: 200, Duration: 100 * time.Millisecond}, {Rate: 400, Duration: 100 * time.Millisecond}}}
	res, err := Run(context.Background(), cfg, &fakeTarget{}, w)
	if err != nil {
		t.Fatal(err)
	}
	if got := w.observes.Load(); got != 4 {
		t.Errorf("Observe called %d times, want 4 (two per step)", got)
	}
	if w.pauses.Load() != 0 {
		t.Error("the open loop called Pause")
	}
	sum := 0.0
	for i, st := range res.Steps {
		if st.Observed == nil {
			t.Fatalf("step %d has no observation", i)
		}
		sum += st.Observed["dos"]
	}
	if res.Observed["dos"] != sum || sum <= 0 {
		t.Errorf("run observed %v, steps sum to %v", res.Observed["dos"], sum)
	}
}

// TestEvidenceLevels: a level (the host's cores) keeps its latest value in
// a delta and in a sum of intervals; counters are differenced and summed.
func TestEvidenceLevels(t *testing.T) {
	t0 := time.Now()
	a := &target.Sample{At: t0, Counters: map[string]float64{target.CtrHostCores: 2, target.CtrLogBytes: 100}}
	b := &target.Sample{At: t0.Add(time.Second), Counters: map[string]float64{target.CtrHostCores: 2, target.CtrLogBytes: 350}}
	d := Delta(a, b)
	if d.Counters[target.CtrHostCores] != 2 || d.Counters[target.CtrLogBytes] != 250 {
		t.Fatalf("delta %v: want host_cores 2 (a level), log_bytes 250", d.Counters)
	}
	var sum Evidence
	sum.Add(d)
	sum.Add(d)
	if sum.Counters[target.CtrHostCores] != 2 || sum.Counters[target.CtrLogBytes] != 500 {
		t.Fatalf("sum %v: want host_cores 2, log_bytes 500", sum.Counters)
	}
}
