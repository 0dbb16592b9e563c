// Package runner drives a workload against a target: it opens one connection
// per worker, runs the warm-up (measured but excluded), then the measured
// phase, ticks the metrics registry and samples server evidence once per
// interval, and returns everything it measured.
//
// Two load models are offered (DESIGN.md section 4):
//
//   - Closed loop (Config.Rate == 0 and no Config.Steps): each worker issues
//     its next request as soon as the previous one returns.
//   - Open loop (Config.Rate > 0, or Config.Steps for a ramp): requests are
//     scheduled at the target rate whatever the completions, latency is
//     measured from the scheduled start, and a request that cannot start in
//     time is counted late and skipped. See openloop.go for the contract.
//
// Who calls what: Run is called once per run from one goroutine. It starts
// one goroutine per worker (each owns its connection, workload.Worker and
// metrics.Recorder) and drives the phases, ticks and evidence sampling from
// the calling goroutine; Config.OnInterval is called from that goroutine too.
// In the closed loop with several workers, the workers' loops may instead
// run as coroutines, several per goroutine and OS thread, when their
// connections can give way (mux.go).
//
// The hot path of a worker is: call Worker.Do, read the clock, record into
// its own metrics.Recorder (the open loop adds an atomic ticket claim and a
// wait until the ticket's time). It takes no lock and does not allocate.
package runner

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/ceiling-db/ceiling/internal/metrics"
	"github.com/ceiling-db/ceiling/internal/osstat"
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
	// SampleTimeout bounds each reading of the server's evidence (default
	// 5 s): a server that stops answering holds an interval's tick up to
	// this long.
	SampleTimeout time.Duration
	// OnInterval, if set, is called from the ticker goroutine after each interval.
	OnInterval func(Interval)

	// Rate, when above zero, selects the open loop: the total number of
	// requests per second scheduled across all workers, independently of
	// completions. 0 means closed loop. With Rate, Duration or Ops bound the
	// measured phase (Ops then counts scheduled requests, not completed ones)
	// and Warmup is the step's warm-up: it is a single-step ramp.
	Rate float64
	// Arrival is the open loop's arrival process: "uniform" (the default;
	// request i is due at t0 + i/Rate) or "poisson" (exponential gaps of mean
	// 1/Rate, from a deterministic sequence seeded by Seed).
	Arrival string
	// LateAfter is how long past its scheduled time a request may still start
	// (open loop; default 1 s). A request that cannot start within it is not
	// run: it is counted late. It also sizes the backlog (StepResult.BacklogCap).
	LateAfter time.Duration
	// Steps, if not empty, runs an open-loop ramp: each step in turn on the
	// same connections, each with its own rate, duration and warm-up. Rate,
	// Duration, Ops and Warmup must then be zero.
	Steps []Step
	// Seed seeds the poisson arrival sequence; the same seed gives the same
	// schedule.
	Seed uint64
	// FirstWorker is the id the workload's NewWorker gets for the first
	// worker (0 unless this run is a shard of several: run --shard, whose
	// workers are numbered after the earlier shards').
	FirstWorker int
	// BeforeStart, if set, is called once every worker is connected and
	// before anything runs (run --shard: the shards meet there, so that
	// they start together); an error ends the run before it starts.
	BeforeStart func(ctx context.Context) error
	// IntervalHists keeps each interval's latency histogram in
	// Result.Intervals, encoded (Interval.Hist): a shard's series, for a
	// merge to make the run's latency over time (run --shard).
	IntervalHists bool
	// MaxPoints, when above zero, bounds the series of a closed loop that
	// runs until Ops are done (no planned length): as it grows, its points
	// widen, each spanning 2, 4, 8 … Intervals (see widener), so that a
	// run of any length keeps about MaxPoints of them. Result.Stride says
	// how wide they became. Other runs plan their Interval instead.
	MaxPoints int

	// clock is the open loop's source of time and sleep; nil means the real
	// clock. Tests put a timer-only clock here and run inside a synctest bubble.
	clock clock
}

// Step is one step of an open-loop ramp.
type Step struct {
	Rate     float64       // requests/s scheduled across all workers
	Duration time.Duration // measured part of the step
	Warmup   time.Duration // run at Rate before measuring; excluded from the step's figures
}

// Arrival processes.
const (
	ArrivalUniform = "uniform"
	ArrivalPoisson = "poisson"
)

// maxRate bounds Rate: above it the schedule's nanosecond resolution is too coarse.
const maxRate = 1e8

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
	if c.Duration == 0 && c.Ops == 0 && len(c.Steps) == 0 {
		errs = append(errs, errors.New("give a duration or a number of ops"))
	}
	if c.Warmup < 0 {
		errs = append(errs, fmt.Errorf("warmup must be zero or more, got %v", c.Warmup))
	}
	if c.MaxPoints < 0 {
		errs = append(errs, fmt.Errorf("max points must be zero or more, got %d", c.MaxPoints))
	}
	if c.Interval < 0 {
		errs = append(errs, fmt.Errorf("interval must be positive, got %v", c.Interval))
	}
	if !(c.Rate >= 0 && c.Rate <= maxRate) { // also rejects NaN
		errs = append(errs, fmt.Errorf("rate must be between 0 and %g requests/s, got %g", float64(maxRate), c.Rate))
	}
	switch c.Arrival {
	case "", ArrivalUniform, ArrivalPoisson:
	default:
		errs = append(errs, fmt.Errorf("arrival must be %s or %s, got %q", ArrivalUniform, ArrivalPoisson, c.Arrival))
	}
	if c.LateAfter < 0 {
		errs = append(errs, fmt.Errorf("late-after must be positive, got %v", c.LateAfter))
	}
	if len(c.Steps) > 0 {
		if c.Rate != 0 || c.Duration != 0 || c.Ops != 0 || c.Warmup != 0 {
			errs = append(errs, errors.New("with steps, give the rate, duration and warm-up per step, not for the run"))
		}
		for i, st := range c.Steps {
			if !(st.Rate > 0 && st.Rate <= maxRate) {
				errs = append(errs, fmt.Errorf("step %d: rate must be above 0 and at most %g requests/s, got %g", i+1, float64(maxRate), st.Rate))
			}
			if st.Duration <= 0 {
				errs = append(errs, fmt.Errorf("step %d: duration must be positive, got %v", i+1, st.Duration))
			}
			if st.Warmup < 0 {
				errs = append(errs, fmt.Errorf("step %d: warmup must be zero or more, got %v", i+1, st.Warmup))
			}
		}
	}
	return errors.Join(errs...)
}

// openLoop reports whether the configuration selects the open loop.
func (c Config) openLoop() bool { return c.Rate > 0 || len(c.Steps) > 0 }

// Interval is what happened during one tick of the run.
type Interval struct {
	Start, End time.Duration // since the run started (warm-up included)
	Warmup     bool
	Step       int               // open loop: index into Result.Steps of the step it belongs to; 0 in closed loop
	Snap       *metrics.Snapshot // in Result.Intervals, counters only (histograms dropped)
	Latency    *metrics.Latency  // latency over the interval; set in Result.Intervals
	Hist       string            // the interval's latency histogram, encoded; Config.IntervalHists only
	Evidence   *Evidence         // nil when the target has no sampler
	ClientCPU  float64           // the load generator's CPU seconds in the interval; <0 if unknown
	// OldestInFlight is, at the interval's end, how long the longest wait
	// for the database then going on had lasted: a request's, or a worker's
	// getting a new connection after losing its own (0: none). An interval
	// without a completion that such a wait covered is a stall; one whose
	// workers were idle (think times, an open loop between arrivals) is not.
	OldestInFlight time.Duration
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
	// SampleErrs is how many samples of server evidence failed, the first
	// SampleErrAt into the run (from its start, warm-up included).
	SampleErrs  int
	SampleErrAt time.Duration
	// ClientCPUSeconds is the CPU time ceiling itself used in the measured
	// phase (user+system); negative when it could not be read.
	ClientCPUSeconds float64
	// PausedSeconds is the time the closed loop's workers spent in
	// deliberate pauses (workload.Pauser: think times) in the measured
	// phase, summed over the workers; 0 when they did not pause.
	PausedSeconds float64
	// WorkerGroups is how many threads the closed loop's workers shared,
	// a few coroutines per thread (mux.go); 0 when each worker had a
	// goroutine of its own.
	WorkerGroups int
	// WorkerIO is how those groups waited for their sockets: "io_uring"
	// (mux_ring.go) or "ppoll"; empty without groups.
	WorkerIO string
	// Stride is how many Intervals the last measured point of the series
	// spanned: above 1 when the series widened (Config.MaxPoints), 0 or 1
	// otherwise.
	Stride int
	// Steps holds one entry per open-loop step that reached its measured
	// part (a plain Rate is one step); nil in closed loop. In open loop,
	// Total, Elapsed, Evidence and ClientCPUSeconds sum the steps' measured parts.
	Steps []StepResult
	// Observed is the change of the workload's own counters over the
	// measured phase (workload.Observer; open loop: summed over the steps'
	// measured parts); nil when the workload has none or a reading failed.
	Observed   map[string]float64
	ObserveErr string // first error reading them, if any
	// InFlight is what was still waiting for the database when the measured
	// phase ended: those requests never finished in it, so they are in no
	// count and no latency.
	InFlight InFlight

	intervalHists bool // Config.IntervalHists
}

// DefaultGrace is Config.Grace when it is not set.
const DefaultGrace = 5 * time.Second

// InFlight describes the requests in flight when the measured phase ended.
type InFlight struct {
	Requests int           // in flight at the end
	Oldest   time.Duration // how long the oldest of them had been waiting
	// Unfinished is how many had still not returned Grace after the end
	// (they were then cancelled).
	Unfinished int
	// Reconnecting is how many workers were getting a new connection
	// after losing theirs, and ReconnectingFor how long the first of them
	// had been at it.
	Reconnecting    int
	ReconnectingFor time.Duration
}

// waiting is how long the longest wait for the database had lasted: a
// request's, or a lost connection's.
func (in InFlight) waiting() time.Duration { return max(in.Oldest, in.ReconnectingFor) }

// now is the time in the workers' clock: the schedule's in the open loop,
// the run's base otherwise (worker.busy, worker.lost).
func (r *run) now() int64 {
	if r.steps != nil {
		return r.since()
	}
	return int64(time.Since(r.base))
}

// inFlight is inFlightAt now.
func (r *run) inFlight() InFlight { return r.inFlightAt(r.now()) }

// inFlightAt counts the workers' requests in flight and the workers
// reconnecting as of time at (in the workers' clock), with the longest
// waits; what started after at is not counted.
func (r *run) inFlightAt(at int64) (in InFlight) {
	for _, wk := range r.workers {
		if b := wk.busy.Load(); b != 0 && b-1 <= at {
			in.Requests++
			in.Oldest = max(in.Oldest, time.Duration(at-(b-1)))
		}
		if l := wk.lost.Load(); l != 0 && l-1 <= at {
			in.Reconnecting++
			in.ReconnectingFor = max(in.ReconnectingFor, time.Duration(at-(l-1)))
		}
	}
	return in
}

// waitWorkers waits up to Grace for the workers to return after the end,
// then cancels what they still run (cancel) and waits for that.
func (r *run) waitWorkers(res *Result, cancel context.CancelFunc) {
	select {
	case <-r.done:
	case <-time.After(r.cfg.Grace):
		res.InFlight.Unfinished = r.inFlight().Requests
		cancel()
		<-r.done
	}
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
		cfg.Grace = DefaultGrace
	}
	if cfg.SampleTimeout == 0 {
		cfg.SampleTimeout = 5 * time.Second
	}
	if cfg.LateAfter == 0 {
		cfg.LateAfter = time.Second
	}
	if cfg.clock == nil {
		cfg.clock = realClock{}
	}
	r := &run{cfg: cfg, t: t, w: w, reg: metrics.NewRegistry(w.Ops()), base: time.Now()}
	if s, ok := t.(target.Sampler); ok {
		r.sampler = s
	}
	if cfg.openLoop() {
		r.steps = plan(cfg)
		r.lagReg = metrics.NewRegistry(lagOps)
	}
	if err := r.startWorkers(ctx); err != nil {
		return nil, err
	}
	if cfg.BeforeStart != nil {
		if err := cfg.BeforeStart(ctx); err != nil {
			r.closeWorkers()
			return nil, err
		}
	}
	if cfg.openLoop() {
		return r.driveOpen(ctx), nil
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
	// pauseCtx is given to workload.Pauser; it is cancelled when the run stops.
	pauseCtx    context.Context
	pauseCancel context.CancelFunc

	// Open loop only (openloop.go).
	steps  []*sched          // the whole schedule, fixed before the run starts
	lagReg *metrics.Registry // scheduling lag histograms, one recorder per worker
	origin time.Time         // time zero of the schedule
	stopCh chan struct{}     // closed with stop, to wake sleeping workers

	procs [2]int // GOMAXPROCS before and after setupMux raised it (mux.go)

	// base is the closed loop workers' clock: their requests' start times
	// (worker.busy) are offsets from it.
	base time.Time
	// endAt is when the closed loop's measured phase ended, since the
	// series' begin, plus one (0 before): an interval closed after it ends
	// there, since nothing finishing later is counted.
	endAt atomic.Int64
	// endOldest is how long the longest wait for the database at that
	// end had lasted (Interval.OldestInFlight of an interval closed later).
	endOldest atomic.Int64
	// afterEnd counts the closed loop's requests that returned after the
	// end (or were cancelled): not counted, so in flight at the end. The
	// count of the workers busy when the end came can miss one that
	// returned just then (it had cleared its mark, but not yet seen the
	// end), and one could start in between and run (a sharded bulk load
	// left 200 rows in the table that neither its counts nor its requests
	// in flight had): a worker marks itself busy before it looks at stop,
	// and the result's in-flight count is at least afterEnd.
	afterEnd atomic.Int64
	// endCPU is the process's CPU seconds (math.Float64bits) when the
	// closed loop's measured phase ended, stored before endAt: the last
	// interval's and the run's CPU stop there, not after the workers were
	// waited for, the connections closed and the server's statistics
	// settled (the last tick comes after all that). 0 when not read.
	endCPU atomic.Uint64
}

// ConnectError is a worker's failure to connect before the run: Worker of
// Workers (0-based), the ones before it connected.
type ConnectError struct {
	Worker, Workers int
	Err             error
}

func (e *ConnectError) Error() string { return fmt.Sprintf("worker %d: %v", e.Worker, e.Err) }
func (e *ConnectError) Unwrap() error { return e.Err }

// startWorkers connects every worker before anything is measured, so
// connection set-up is not part of the figures.
func (r *run) startWorkers(ctx context.Context) error {
	quota := splitOps(r.cfg.Ops, r.cfg.Threads)
	for i := 0; i < r.cfg.Threads; i++ {
		conn, err := r.t.Connect(ctx)
		if err != nil {
			r.closeWorkers()
			return &ConnectError{Worker: i, Workers: r.cfg.Threads, Err: err}
		}
		wk, err := r.w.NewWorker(ctx, r.t, conn, r.cfg.FirstWorker+i)
		if err != nil {
			conn.Close()
			r.closeWorkers()
			return fmt.Errorf("worker %d: %w", i, err)
		}
		wr := &worker{run: r, id: i, wk: wk, rec: r.reg.NewRecorder(), quota: quota[i]}
		wr.setConn(conn)
		if r.lagReg != nil {
			wr.lag = r.lagReg.NewRecorder()
		}
		r.workers = append(r.workers, wr)
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
	res := &Result{Started: time.Now(), ClientCPUSeconds: -1, intervalHists: r.cfg.IntervalHists}
	wctx, cancel := context.WithCancel(ctx)
	r.cancel = cancel
	defer cancel()
	r.pauseCtx, r.pauseCancel = context.WithCancel(wctx)
	defer r.pauseCancel()

	// The opening readings (the server's counters, the observer's, the
	// process's CPU) come before the first request when there is no
	// warm-up: taken after the workers started, as they once were, a short
	// run's first requests counted in its figures but not in the server's
	// counters or in the elapsed time.
	sr := r.newSeries(ctx, res, time.Time{})
	var (
		startSample  *target.Sample
		obsStart     map[string]float64
		cpuStart     float64
		measureStart time.Time
	)
	if r.cfg.Warmup == 0 {
		startSample, obsStart = sr.prev, r.observe(ctx, res)
		cpuStart = processCPU()
		r.measuring.Store(true) // every request counts towards --ops from the first
	}
	begin := time.Now()
	sr.begin, measureStart = begin, begin
	r.done = make(chan struct{})
	r.wg.Add(len(r.workers))
	if groups := r.setupMux(); groups != nil {
		res.WorkerGroups, res.WorkerIO = len(groups), workerIO(groups)
		for _, g := range groups {
			go g.drive(wctx)
		}
	} else {
		for _, wk := range r.workers {
			go wk.loop(wctx)
		}
	}
	go func() { r.wg.Wait(); close(r.done) }()

	tick := func(warm bool, lastEnd time.Duration) Interval { return sr.tick(warm, lastEnd) }

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
				if time.Until(begin.Add(r.cfg.Warmup)) < r.cfg.Interval/2 {
					continue // the warm-up's end closes this interval (no sliver after it)
				}
				iv := tick(true, lastEnd)
				lastEnd = iv.End
				res.addInterval(iv)
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
			res.addInterval(iv)
		}
	}

	total := metrics.NewSnapshot(r.reg.Ops())
	if r.cfg.Warmup > 0 {
		// The measured part starts where the warm-up's last interval
		// ended: the requests done since count in the first measured one.
		startSample, cpuStart = sr.prev, processCPU()
		obsStart = r.observe(ctx, res)
		measureStart = begin.Add(lastEnd)
		r.measuring.Store(true)
	}
	// The end of the measured phase: its time, what is still in flight,
	// and the workers told to stop (requests finishing after it are not
	// counted). At --duration it comes from a timer, so that a tick held
	// up by a server that stopped answering (its sample waits up to 5 s)
	// does not stretch the measured phase.
	var (
		measureEnd time.Time
		endOnce    sync.Once
		ended      = make(chan struct{})
	)
	endMeasure := func() {
		endOnce.Do(func() {
			measureEnd = time.Now()
			// stop first, then the count: see loop.
			r.stop.Store(true)
			res.InFlight = r.inFlight()
			if c := processCPU(); c >= 0 {
				r.endCPU.Store(math.Float64bits(c))
			}
			r.endOldest.Store(int64(res.InFlight.waiting()))
			r.endAt.Store(int64(measureEnd.Sub(begin)) + 1)
			close(ended)
		})
	}
	if r.cfg.Duration > 0 {
		tm := time.AfterFunc(r.cfg.Duration-time.Since(measureStart), endMeasure)
		defer tm.Stop()
	}
	tk := time.NewTicker(r.cfg.Interval)
	defer tk.Stop()
	wide := newWidener(r.cfg.MaxPoints)
	if r.cfg.Duration > 0 {
		wide = newWidener(0) // planned: its Interval was chosen for its length
	}
	workersDone := false
loop:
	for !interrupted {
		select {
		case <-ended: // first: a tick held up by the server is not repeated
			break loop
		default:
		}
		select {
		case <-tk.C:
			if r.cfg.Duration > 0 && time.Until(measureStart.Add(r.cfg.Duration)) < r.cfg.Interval/2 {
				// The end, due within half an interval, closes this one: a
				// tick just before it left an interval of a few
				// milliseconds, whose rates (and CPU share) were noise.
				continue
			}
			if !wide.point() {
				continue // a wider point: the ticks until it ends merge into it
			}
			iv := tick(false, lastEnd)
			lastEnd = iv.End
			total.Merge(iv.Snap)
			res.addInterval(iv)
			res.Stride = wide.last
		case <-ended:
			break loop
		case <-r.done:
			workersDone = true
			break loop
		case <-ctx.Done():
			interrupted = true
		}
	}
	endMeasure()
	res.Observed = observedDelta(obsStart, r.observe(ctx, res))
	r.pauseCancel()
	if !workersDone {
		r.waitWorkers(res, cancel)
	}
	if n := int(r.afterEnd.Load()); n > res.InFlight.Requests {
		res.InFlight.Requests = n
	}
	r.restoreProcs()
	// Close the connections first and let the target publish what its
	// sessions did (PostgreSQL flushes a backend's statistics at exit), so
	// the final sample covers the whole run.
	r.closeWorkers()
	r.settle(ctx)
	iv := tick(false, lastEnd)
	total.Merge(iv.Snap)
	if t := iv.Snap.Total(); iv.End > iv.Start || t.Requests > 0 || t.ErrorCount() > 0 {
		res.addInterval(iv)
	}

	res.Elapsed = measureEnd.Sub(measureStart)
	res.Total = total
	res.Partial = interrupted || ctx.Err() != nil
	if startSample != nil && sr.prev != nil && sr.prev != startSample {
		res.Evidence = sr.delta(startSample, sr.prev)
	}
	if c := sr.cpuNow(); c >= 0 && cpuStart >= 0 {
		res.ClientCPUSeconds = c - cpuStart
	}
	for _, k := range r.workers {
		res.PausedSeconds += float64(k.paused.Load()) / 1e9
	}
	return res
}

// settle lets a target whose statistics lag catch up (see target.Settler).
func (r *run) settle(ctx context.Context) {
	s, ok := r.t.(target.Settler)
	if !ok {
		return
	}
	// A Settler bounds its own wait (PostgreSQL: 2 s, or 10.5 s through a
	// connection pooler, whose backends publish late); an interrupted run
	// waits 3 s at most, and a Ctrl-C during a longer wait ends it, so
	// that Ctrl-C ends the run promptly.
	bound := settleBound
	if ctx.Err() != nil {
		bound = 3 * time.Second
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), bound)
	defer cancel()
	if bound > 3*time.Second {
		stop := context.AfterFunc(ctx, cancel)
		defer stop()
	}
	_ = s.Settle(sctx) // best effort: the evidence is then up to a second short
}

// settleBound is the longest a run waits for a Settler.
const settleBound = 15 * time.Second

// addInterval appends iv to the series with its latency summarised and its
// histograms dropped: a run keeps one point per interval for the charts,
// and the merged histograms only for the totals, so memory stays bounded
// on hours-long runs.
func (res *Result) addInterval(iv Interval) {
	if iv.Snap != nil {
		tot := iv.Snap.Total()
		iv.Latency = metrics.LatencyOf(tot.Hist)
		if res.intervalHists && tot.Hist != nil {
			iv.Hist, _ = metrics.EncodeHist(tot.Hist) // "" on failure: no series merged
		}
		for i := range iv.Snap.Ops {
			iv.Snap.Ops[i].Hist = nil
		}
	}
	if e := iv.Evidence; e != nil {
		// The points keep the generic counters (target.Ctr*); the
		// engine's own ("mysql.innodb_…", "pg.…": MariaDB has some 150)
		// are read over runs and steps only, and kept per interval made
		// an hour of 1 s intervals cost about 50 MB.
		kept := make(map[string]float64, 24)
		for k, v := range e.Counters {
			if !strings.Contains(k, ".") {
				kept[k] = v
			}
		}
		e.Counters = kept
		e.Files = filesByRole(e.Files)
	}
	res.Intervals = append(res.Intervals, iv)
}

// minPointsPerWidth is the fewest points a widening series keeps at each
// width (see widener); a variable for the tests.
var minPointsPerWidth = 60

// widener spaces out the points of a series with no planned length
// (Config.MaxPoints): the first max/2 points span one tick each, the next
// max/4 two ticks, the next max/8 four, and so on, each width keeping at
// least minPointsPerWidth points, so every width covers about the same
// time and the series keeps about max points however long the run goes
// on (7,200: an hour at each width up to 32 ticks, ~8,000 points over a
// year).
type widener struct {
	max   int // 0: every tick is a point
	width int // ticks per point
	ticks int // since the last point
	left  int // points still to keep at this width
	last  int // ticks the last point spanned
}

func newWidener(limit int) widener { return widener{max: limit, width: 1, left: limit / 2} }

// point counts a tick and says whether it closes a point.
func (w *widener) point() bool {
	if w.max <= 0 {
		w.last = 1
		return true
	}
	w.ticks++
	if w.ticks < w.width {
		return false
	}
	w.ticks = 0
	w.last = w.width
	w.left--
	if w.left <= 0 {
		w.width *= 2
		w.left = max(w.max/(2*w.width), minPointsPerWidth)
	}
	return true
}

// maxIntervalFiles is how many files a point of the series keeps one by
// one; beyond it they are added up by role (filesByRole).
const maxIntervalFiles = 4

// filesByRole returns files, or, when there are more than
// maxIntervalFiles of them (a server's tables: TPC-C's nine on
// MySQL/MariaDB, and InnoDB's shared files), one entry per role named
// "ROLE files", adding up their counts: the series' charts read them by
// role, and each file of each point cost ~300 bytes of JSON. The run's
// and steps' totals keep every file.
func filesByRole(files []target.FileStat) []target.FileStat {
	if len(files) <= maxIntervalFiles {
		return files
	}
	var out []target.FileStat
	for _, f := range files {
		i := slices.IndexFunc(out, func(g target.FileStat) bool { return g.Role == f.Role })
		if i < 0 {
			out = append(out, target.FileStat{Name: f.Role + " files", Role: f.Role})
			i = len(out) - 1
		}
		out[i].Add(f)
	}
	return out
}

// series takes the ticks of a run: it merges the workers' recorders, samples
// the server's evidence and the client's CPU, and calls OnInterval. It is
// used from the driving goroutine only.
type series struct {
	r       *run
	ctx     context.Context
	res     *Result
	begin   time.Time
	prev    *target.Sample // latest successful sample
	cpuPrev float64
	step    int // stamped on each Interval
	// restarts are the times of the first samples after a server
	// restart (its counters went back since the sample before): a delta
	// across one has no server counters (delta). Times, not the samples
	// themselves, so that a long run keeps no sample alive.
	restarts []time.Time
	// until, when set, is where the next interval ends at the latest
	// (the open loop's step end, in schedule time).
	until time.Duration
	// rq accumulates ceiling's own threads' waits for a core, added to
	// each sample (target.CtrClientRunQueueSec).
	rq osstat.RunQueue
}

// delta is Delta(a, b), without the server's counters when the server
// restarted between the two samples.
func (sr *series) delta(a, b *target.Sample) *Evidence {
	e := Delta(a, b)
	for _, at := range sr.restarts {
		if at.After(a.At) && !at.After(b.At) {
			e.dropServer()
			break
		}
	}
	return e
}

func (r *run) newSeries(ctx context.Context, res *Result, begin time.Time) *series {
	sr := &series{r: r, ctx: ctx, res: res, begin: begin, cpuPrev: processCPU()}
	sr.prev = sr.sample()
	return sr
}

func (sr *series) sample() *target.Sample {
	if sr.r.sampler == nil {
		return nil
	}
	sctx, c := context.WithTimeout(context.WithoutCancel(sr.ctx), sr.r.cfg.SampleTimeout)
	defer c()
	s, err := sr.r.sampler.Sample(sctx)
	if err != nil {
		if sr.res.SampleErr == "" {
			sr.res.SampleErr = err.Error()
			if !sr.begin.IsZero() { // 0: the opening sample, before the workers start
				sr.res.SampleErrAt = time.Since(sr.begin)
			}
		}
		sr.res.SampleErrs++
		return nil
	}
	if sec, ok := sr.rq.Read([]int{os.Getpid()}); ok {
		// A copy: the target may hand out a map it keeps.
		c := make(map[string]float64, len(s.Counters)+1)
		maps.Copy(c, s.Counters)
		c[target.CtrClientRunQueueSec] = sec
		s.Counters = c
	}
	if sr.prev != nil && restarted(sr.prev, &s) {
		sr.restarts = append(sr.restarts, s.At)
	}
	return &s
}

// cpuNow is the process's CPU seconds now, or when the closed loop's
// measured phase ended if it has (negative when unknown).
func (sr *series) cpuNow() float64 {
	if sr.r.endAt.Load() != 0 {
		if b := sr.r.endCPU.Load(); b != 0 {
			return math.Float64frombits(b)
		}
	}
	return processCPU()
}

// tick closes the interval that began at lastEnd (since begin).
func (sr *series) tick(warm bool, lastEnd time.Duration) Interval {
	end := time.Since(sr.begin)
	if e := sr.r.endAt.Load(); e != 0 {
		end = max(min(end, time.Duration(e-1)), lastEnd)
	}
	if sr.until > 0 {
		end = max(min(end, sr.until), lastEnd)
	}
	iv := Interval{Start: lastEnd, End: end, Warmup: warm, Step: sr.step, Snap: sr.r.reg.Tick(), ClientCPU: -1}
	if sr.r.endAt.Load() != 0 {
		// Closed after the closed loop's end, so ending there: what was
		// in flight then (the workers may be gone by now).
		iv.OldestInFlight = time.Duration(sr.r.endOldest.Load())
	} else {
		iv.OldestInFlight = sr.r.inFlight().waiting()
	}
	cur := sr.sample()
	if sr.prev != nil && cur != nil {
		iv.Evidence = sr.delta(sr.prev, cur)
	}
	if cur != nil {
		sr.prev = cur
	}
	if c := sr.cpuNow(); c >= 0 && sr.cpuPrev >= 0 {
		iv.ClientCPU = max(c-sr.cpuPrev, 0)
		sr.cpuPrev = c
	}
	if sr.r.cfg.OnInterval != nil {
		sr.r.cfg.OnInterval(iv)
	}
	return iv
}

type worker struct {
	run  *run
	id   int
	conn target.Conn
	// rtc is conn's round-trip counter (nil when it keeps none), and
	// rtLast its count after the worker's previous request.
	rtc    target.RoundTripCounter
	rtLast int64
	wk     workload.Worker
	rec    *metrics.Recorder
	lag    *metrics.Recorder // open loop: scheduling lag (op lagSched, lagStart)
	quota  int64
	// busy is when the request the worker is running started (in its
	// loop's clock, see run.inFlight), plus one; 0 between requests. lost
	// is likewise when it lost its connection, while it reconnects.
	busy, lost atomic.Int64
	// paused is the time (ns) the worker spent in deliberate pauses
	// (workload.Pauser: think times) while the run measured.
	paused atomic.Int64

	// Multiplexed closed loop (mux.go): the connection's waiter, and the
	// yield of the coroutine running loop.
	waiter func(fd int, write bool) bool
	yield  func(muxWait) bool
	self   atomic.Uintptr // curg of the coroutine running loop; 0 outside it
	// suspends counts the coroutine's suspensions for I/O, so that a
	// request that never suspended (one that failed before reaching the
	// server) hands the group on to its other workers (see loop).
	suspends uint32
	streak   int // requests in a row that did not suspend
	// With the group's I/O on a ring (mux_ring.go): the connection's ring
	// I/O, and the result of its last request.
	ringIO  func(fd int, write bool, p []byte) (int, syscall.Errno, bool)
	ringRes int32
}

// setConn makes conn the worker's connection; the round trips it made so
// far (setting up the worker) are no request's.
func (k *worker) setConn(conn target.Conn) {
	k.conn = conn
	k.rtc, _ = conn.(target.RoundTripCounter)
	if k.rtc != nil {
		k.rtLast = k.rtc.RoundTrips()
	}
}

// roundTrips is how many round trips to the server the worker's connection
// made since the previous call (the request just done's); 0 when it does
// not count them.
func (k *worker) roundTrips() int64 {
	if k.rtc == nil {
		return 0
	}
	n := k.rtc.RoundTrips()
	d := n - k.rtLast
	k.rtLast = n
	return d
}

func (k *worker) loop(ctx context.Context) {
	defer k.run.wg.Done()
	var measured int64
	// Request times are read as offsets from base: time.Since reads the
	// monotonic clock only, time.Now the wall clock too (25 against 47 ns
	// on the development VM).
	base := k.run.base
	for !k.run.stop.Load() && ctx.Err() == nil && measured < k.quota {
		if !k.pause() {
			return
		}
		start := time.Since(base)
		suspends := k.suspends
		k.busy.Store(int64(start) + 1)
		if k.run.stop.Load() {
			// The end came first: the request is not run (see afterEnd).
			k.busy.Store(0)
			return
		}
		res, err := k.wk.Do(ctx)
		k.busy.Store(0)
		d := time.Since(base) - start
		if k.run.stop.Load() || ctx.Err() != nil {
			k.run.afterEnd.Add(1)
			return // finished after the end or cancelled: not counted
		}
		if k.yield != nil {
			k.takeTurns(k.suspends != suspends, err != nil)
		}
		rts := k.roundTrips()
		if err != nil {
			class := k.run.t.Classify(err)
			k.rec.RecordError(res.Op, class, err)
			if class == metrics.ErrConnLost && !k.reconnect(ctx) {
				return
			}
		} else {
			k.rec.RecordExamined(res.Op, d, res.Rows, res.Bytes, res.Examined, rts)
		}
		if k.run.measuring.Load() {
			measured++
		}
	}
}

// muxStreak is how many requests in a row a coroutine may complete
// without suspending before it gives its group's other workers a turn.
// A request whose reply was already there when it asked does not suspend
// (a quarter of them with 4 CPU-bound workers on PostgreSQL): running the
// next one at once is cheaper than a poll, but not forever.
const muxStreak = 8

// takeTurns runs after each request of a worker in a group: a coroutine
// that never suspends keeps the thread, and the group's other workers
// would not run again until the run ended (a workload failing before it
// reaches the server, every request). After a failure that did not
// suspend, or muxStreak requests in a row that did not, it yields a turn.
func (k *worker) takeTurns(suspended, failed bool) {
	if suspended {
		k.streak = 0
		return
	}
	if k.streak++; failed || k.streak >= muxStreak {
		k.streak = 0
		k.yield(muxAgain)
	}
}

// reconnect replaces a lost connection, backing off from 50 ms to 2 s, until
// it succeeds or the run ends. It reports whether the worker can go on.
func (k *worker) reconnect(ctx context.Context) bool {
	k.lost.Store(k.run.now() + 1)
	defer k.lost.Store(0)
	k.conn.Close()
	k.conn = nil
	backoff := 50 * time.Millisecond
	for !k.run.stop.Load() && ctx.Err() == nil {
		conn, err := k.run.t.Connect(ctx)
		if err == nil && k.waiter != nil {
			// Best effort: a connection that does not cooperate blocks
			// its group while it waits, but works.
			if c, ok := conn.(target.Cooperative); ok && c.SetWaiter(k.waiter) && k.ringIO != nil {
				if rc, ok := conn.(target.RingCooperative); ok {
					rc.SetRingIO(k.ringIO)
				}
			}
		}
		if err == nil {
			wk, werr := k.run.w.NewWorker(ctx, k.run.t, conn, k.run.cfg.FirstWorker+k.id)
			if werr == nil {
				k.setConn(conn)
				k.wk = wk
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
