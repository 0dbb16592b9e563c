// Package runner drives a workload against a target: it opens one connection
// per worker, runs the warm-up (measured but excluded), then the measured
// phase, ticks the metrics registry and samples server evidence once per
// interval, and returns everything it measured.
//
// The hot path of a worker is: call Worker.Do, read the clock, record into
// its own metrics.Recorder. It takes no lock and does not allocate.
package runner

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ceiling-db/ceiling/internal/metrics"
	"github.com/ceiling-db/ceiling/internal/target"
	"github.com/ceiling-db/ceiling/internal/workload"
)

// Config is the load model of one run.
type Config struct {
	Threads  int           // workers, each with its own connection
	Duration time.Duration // measured phase; 0 means until Ops are done
	Ops      int64         // measured requests in total; 0 means until Duration
	Warmup   time.Duration // run before measuring; excluded from the figures
	Interval time.Duration // granularity of the series (default 1 s)
	// Grace is how long to wait for in-flight requests after the end before
	// cancelling them (default 5 s).
	Grace time.Duration
	// OnInterval, if set, is called from the ticker goroutine after each interval.
	OnInterval func(Interval)
}

// Validate checks the configuration.
func (c Config) Validate() error {
	var errs []error
	if c.Threads <= 0 {
		errs = append(errs, fmt.Errorf("threads must be at least 1, got %d", c.Threads))
	}
	if c.Duration < 0 {
		errs = append(errs, fmt.Errorf("duration must be positive, got %v", c.Duration))
	}
	if c.Ops < 0 {
		errs = append(errs, fmt.Errorf("ops must be positive, got %d", c.Ops))
	}
	if c.Duration == 0 && c.Ops == 0 {
		errs = append(errs, errors.New("give a duration or a number of ops"))
	}
	if c.Warmup < 0 {
		errs = append(errs, fmt.Errorf("warmup must be zero or more, got %v", c.Warmup))
	}
	if c.Interval < 0 {
		errs = append(errs, fmt.Errorf("interval must be positive, got %v", c.Interval))
	}
	return errors.Join(errs...)
}

// Interval is what happened during one tick of the run.
type Interval struct {
	Start, End time.Duration // since the run started (warm-up included)
	Warmup     bool
	Snap       *metrics.Snapshot
	Evidence   *Evidence // nil when the target has no sampler
	ClientCPU  float64   // the load generator's CPU seconds in the interval; <0 if unknown
}

// Result is everything a run measured.
type Result struct {
	Started   time.Time
	Elapsed   time.Duration // measured phase only
	Partial   bool          // interrupted before its planned end
	Total     *metrics.Snapshot
	Intervals []Interval
	Evidence  *Evidence // over the measured phase; nil when not available
	SampleErr string    // first error reading server evidence, if any
	// ClientCPUSeconds is the CPU time ceiling itself used in the measured
	// phase (user+system); negative when it could not be read.
	ClientCPUSeconds float64
}

// Run runs workload w (already prepared) on t. Cancelling ctx stops the run
// early: the result is then marked Partial and holds what was measured.
func Run(ctx context.Context, cfg Config, t target.Target, w workload.Workload) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Interval == 0 {
		cfg.Interval = time.Second
	}
	if cfg.Grace == 0 {
		cfg.Grace = 5 * time.Second
	}
	r := &run{cfg: cfg, t: t, w: w, reg: metrics.NewRegistry(w.Ops())}
	if s, ok := t.(target.Sampler); ok {
		r.sampler = s
	}
	if err := r.startWorkers(ctx); err != nil {
		return nil, err
	}
	return r.drive(ctx), nil
}

type run struct {
	cfg     Config
	t       target.Target
	w       workload.Workload
	reg     *metrics.Registry
	sampler target.Sampler

	workers   []*worker
	wg        sync.WaitGroup
	done      chan struct{} // closed when all workers have returned
	measuring atomic.Bool
	stop      atomic.Bool
	cancel    context.CancelFunc
}

// startWorkers connects every worker before anything is measured, so
// connection set-up is not part of the figures.
func (r *run) startWorkers(ctx context.Context) error {
	quota := splitOps(r.cfg.Ops, r.cfg.Threads)
	for i := 0; i < r.cfg.Threads; i++ {
		conn, err := r.t.Connect(ctx)
		if err != nil {
			r.closeWorkers()
			return fmt.Errorf("worker %d: %w", i, err)
		}
		wk, err := r.w.NewWorker(ctx, r.t, conn, i)
		if err != nil {
			conn.Close()
			r.closeWorkers()
			return fmt.Errorf("worker %d: %w", i, err)
		}
		r.workers = append(r.workers, &worker{run: r, id: i, conn: conn, wk: wk, rec: r.reg.NewRecorder(), quota: quota[i]})
	}
	return nil
}

func (r *run) closeWorkers() {
	for _, wk := range r.workers {
		if wk.conn != nil {
			wk.conn.Close()
		}
	}
}

// splitOps divides a total number of requests among workers deterministically.
func splitOps(total int64, threads int) []int64 {
	q := make([]int64, threads)
	for i := range q {
		if total == 0 {
			q[i] = math.MaxInt64
			continue
		}
		q[i] = total / int64(threads)
		if int64(i) < total%int64(threads) {
			q[i]++
		}
	}
	return q
}

func (r *run) drive(ctx context.Context) *Result {
	res := &Result{Started: time.Now(), ClientCPUSeconds: -1}
	wctx, cancel := context.WithCancel(ctx)
	r.cancel = cancel
	defer cancel()

	begin := time.Now()
	if r.cfg.Warmup == 0 {
		r.measuring.Store(true) // every request counts towards --ops from the first
	}
	r.done = make(chan struct{})
	for _, wk := range r.workers {
		r.wg.Add(1)
		go wk.loop(wctx)
	}
	go func() { r.wg.Wait(); close(r.done) }()

	var prev *target.Sample
	sample := func() *target.Sample {
		if r.sampler == nil {
			return nil
		}
		sctx, c := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer c()
		s, err := r.sampler.Sample(sctx)
		if err != nil {
			if res.SampleErr == "" {
				res.SampleErr = err.Error()
			}
			return nil
		}
		return &s
	}
	var cpuPrev = processCPU()
	tick := func(warm bool, lastEnd time.Duration) Interval {
		iv := Interval{Start: lastEnd, End: time.Since(begin), Warmup: warm, Snap: r.reg.Tick(), ClientCPU: -1}
		cur := sample()
		if prev != nil && cur != nil {
			iv.Evidence = Delta(prev, cur)
		}
		if cur != nil {
			prev = cur
		}
		if c := processCPU(); c >= 0 && cpuPrev >= 0 {
			iv.ClientCPU = c - cpuPrev
			cpuPrev = c
		}
		if r.cfg.OnInterval != nil {
			r.cfg.OnInterval(iv)
		}
		return iv
	}
	prev = sample()

	// Warm-up: ticks are shown but excluded from the figures.
	var lastEnd time.Duration
	interrupted := false
	if r.cfg.Warmup > 0 {
		warmEnd := time.NewTimer(r.cfg.Warmup)
		tk := time.NewTicker(r.cfg.Interval)
	warm:
		for {
			select {
			case <-tk.C:
				iv := tick(true, lastEnd)
				lastEnd = iv.End
				res.Intervals = append(res.Intervals, iv)
			case <-warmEnd.C:
				break warm
			case <-ctx.Done():
				interrupted = true
				break warm
			case <-r.done:
				break warm
			}
		}
		tk.Stop()
		warmEnd.Stop()
		if lastEnd < time.Since(begin) {
			iv := tick(true, lastEnd)
			lastEnd = iv.End
			res.Intervals = append(res.Intervals, iv)
		}
	}

	total := metrics.NewSnapshot(r.reg.Ops())
	startSample := prev
	cpuStart := processCPU()
	measureStart := time.Now()
	r.measuring.Store(true)
	var deadline <-chan time.Time
	if r.cfg.Duration > 0 {
		tm := time.NewTimer(r.cfg.Duration)
		defer tm.Stop()
		deadline = tm.C
	}
	tk := time.NewTicker(r.cfg.Interval)
	defer tk.Stop()
	var measureEnd time.Time
	workersDone := false
loop:
	for !interrupted {
		select {
		case <-tk.C:
			iv := tick(false, lastEnd)
			lastEnd = iv.End
			total.Merge(iv.Snap)
			res.Intervals = append(res.Intervals, iv)
		case <-deadline:
			measureEnd = time.Now()
			break loop
		case <-r.done:
			measureEnd = time.Now()
			workersDone = true
			break loop
		case <-ctx.Done():
			interrupted = true
		}
	}
	if interrupted {
		measureEnd = time.Now()
	}
	// Stop the workers: requests finishing after the end are not counted.
	r.stop.Store(true)
	if !workersDone {
		select {
		case <-r.done:
		case <-time.After(r.cfg.Grace):
			cancel()
			<-r.done
		}
	}
	iv := tick(false, lastEnd)
	total.Merge(iv.Snap)
	res.Intervals = append(res.Intervals, iv)
	r.closeWorkers()

	res.Elapsed = measureEnd.Sub(measureStart)
	res.Total = total
	res.Partial = interrupted || ctx.Err() != nil
	if startSample != nil && prev != nil && prev != startSample {
		res.Evidence = Delta(startSample, prev)
	}
	if c := processCPU(); c >= 0 && cpuStart >= 0 {
		res.ClientCPUSeconds = c - cpuStart
	}
	return res
}

type worker struct {
	run   *run
	id    int
	conn  target.Conn
	wk    workload.Worker
	rec   *metrics.Recorder
	quota int64
}

func (k *worker) loop(ctx context.Context) {
	defer k.run.wg.Done()
	var measured int64
	for !k.run.stop.Load() && ctx.Err() == nil && measured < k.quota {
		start := time.Now()
		res, err := k.wk.Do(ctx)
		d := time.Since(start)
		if k.run.stop.Load() || ctx.Err() != nil {
			return // finished after the end or cancelled: not counted
		}
		if err != nil {
			class := k.run.t.Classify(err)
			k.rec.RecordError(res.Op, class, err)
			if class == metrics.ErrConnLost && !k.reconnect(ctx) {
				return
			}
		} else {
			k.rec.Record(res.Op, d, res.Rows, res.Bytes)
		}
		if k.run.measuring.Load() {
			measured++
		}
	}
}

// reconnect replaces a lost connection, backing off from 50 ms to 2 s, until
// it succeeds or the run ends. It reports whether the worker can go on.
func (k *worker) reconnect(ctx context.Context) bool {
	k.conn.Close()
	k.conn = nil
	backoff := 50 * time.Millisecond
	for !k.run.stop.Load() && ctx.Err() == nil {
		conn, err := k.run.t.Connect(ctx)
		if err == nil {
			wk, werr := k.run.w.NewWorker(ctx, k.run.t, conn, k.id)
			if werr == nil {
				k.conn, k.wk = conn, wk
				k.rec.RecordReconnect()
				return true
			}
			conn.Close()
			err = werr
		}
		select {
		case <-time.After(backoff):
		case <-ctx.Done():
			return false
		}
		if backoff < 2*time.Second {
			backoff *= 2
		}
	}
	return false
}
