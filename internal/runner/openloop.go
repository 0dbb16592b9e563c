package runner

// The open loop ("LT" load model, DESIGN.md section 4).
//
// Schedule. Before the run starts, plan fixes the whole schedule: each step
// s is a sequence of tickets k = 0, 1, … with intended start times at(k)
// (uniform: origin + k/R; poisson: origin + a prefix sum of exponential gaps
// of mean 1/R). Steps follow each other on one time line: step s+1 begins
// where step s ends. Nothing is queued in memory: a ticket is just an index,
// and its time is computed from it, so the schedule takes O(1) memory
// however long the run or deep the overload.
//
// Dispatch. There is no dispatcher goroutine. A free worker claims the
// oldest unclaimed ticket of the current step with a CAS on the step's
// counter (sched.next), waits until the ticket's time if it is in the future
// and runs one request. Latency is measured from at(k), the intended start,
// never from the actual start, so a stalled target shows the stall in the
// latency of every request scheduled during it (no coordinated omission).
//
// Backlog and lateness. The backlog at time t is the number of tickets that
// are due (at(k) <= t) but not yet claimed. A ticket is late — skipped,
// counted with Recorder.RecordLate and in StepResult.Late, never run — when
//   - its start would be more than LateAfter after its intended time, or
//   - the backlog holds more than BacklogCap = floor(Rate*LateAfter)+1
//     tickets: the oldest are skipped (with uniform arrivals the first rule
//     already implies this bound; with poisson bursts the cap can bind), or
//   - it is still unclaimed when its step ends (the next step does not
//     inherit a backlog).
// Expiry is done by whoever looks: a worker about to claim, and the driving
// goroutine every reapEvery (so lateness is counted promptly even when every
// worker is stuck in a long request) and at each step end. Skipping is one
// CAS that moves the counter past all expired tickets at once.
//
// Lag. Each started request records two figures in the lag registry:
//   - start lag = actual start - intended start: queueing behind busy
//     workers plus the load generator's own delay;
//   - scheduling lag = actual start - max(intended start, the moment the
//     worker was free to claim it): the load generator's own delay only
//     (timer overshoot, CPU starvation, claim cost). When it grows, ceiling
//     itself is the bottleneck, not the target.
//
// Concurrency. plan runs before any goroutine starts; afterwards a sched's
// fixed fields are read-only. next, late and maxBacklog are atomics updated
// by the workers and the driver. A worker records only into its own
// metrics.Recorder and lag recorder; the driver has its own recorder for the
// tickets it expires. Per request a worker makes two clock reads (three if
// it waits), one atomic load and one CAS, and no allocation and no lock
// (waits use a reused timer and, on the real clock, nanosleep). Measured on
// the 2-core reference machine: a contended claim costs ~40 ns (uniform) to
// ~80 ns (poisson); see BenchmarkClaim and BenchmarkOpenLoop.

import (
	"context"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ceiling-db/ceiling/internal/metrics"
	"github.com/ceiling-db/ceiling/internal/target"
)

// StepResult is what one open-loop step measured. Requests are counted by
// when they completed (Completed, Failed, Snap) except Scheduled and Late,
// which count the requests whose intended start fell in the measured part:
// so Late + Completed + Failed equals Scheduled up to the requests in flight
// across the step's boundaries (at most a few per worker).
type StepResult struct {
	Rate      float64       // requested rate, requests/s
	Achieved  float64       // Completed / Elapsed seconds
	Scheduled int64         // requests intended to start in the measured part
	Completed int64         // successful requests completed in the measured part
	Late      int64         // scheduled requests skipped: see the package comment
	Failed    int64         // requests that failed in the measured part
	Warmup    time.Duration // planned warm-up, excluded from every figure here
	Elapsed   time.Duration // measured part as it ran, from tick to tick
	Partial   bool          // interrupted before the step's planned end
	Snap      *metrics.Snapshot
	Evidence  *Evidence // server counters over the measured part; nil if unavailable
	// SchedLag is the load generator's own delay in starting requests;
	// StartLag is intended to actual start, queueing included (see the
	// package comment). Milliseconds, like all latencies; nil if nothing started.
	SchedLag, StartLag *metrics.Latency
	// SchedLagSlow counts the requests whose scheduling lag (SchedLag)
	// exceeded SlowSchedLagMs: with few requests a lag p99 is one of
	// the slowest few, and this says how many there were.
	SchedLagSlow int64
	// Service is actual start to end of the successful requests: the
	// target's time without the wait for a free worker.
	Service *metrics.Latency
	// MaxBacklog is the largest backlog seen (due, unclaimed requests, counted
	// before expiry by the workers and every reapEvery by the driver; warm-up
	// included). It stays within BacklogCap + Rate*reapEvery + 1 unless the
	// load generator itself stalls.
	MaxBacklog int64
	BacklogCap int64
	// ClientCPUSeconds is ceiling's own CPU time over the measured part; <0 if unknown.
	ClientCPUSeconds float64
	// Observed is the change of the workload's own counters over the
	// measured part (workload.Observer); nil when not available.
	Observed map[string]float64
}

// SlowSchedLagMs is the scheduling lag (ms) above which a request counts
// in StepResult.SchedLagSlow; the diagnosis suspects the load generator
// from the same threshold (diagnose.MaxSchedLagP99Ms).
const SlowSchedLagMs = 10

// Lag histogram operations (the lag registry's ops).
const (
	lagSched = iota
	lagStart
	lagService
)

var lagOps = []string{"sched", "start", "service"}

// sched is the schedule of one step. Times are nanoseconds since run.origin.
type sched struct {
	rate    float64
	unit    float64 // ns per mean gap: 1e9/rate
	origin  int64   // start of the step, warm-up included
	measure int64   // start of the measured part
	end     int64   // end of the step: its tickets are due before end
	first   int64   // first ticket due at or after measure
	total   int64   // number of tickets in the step
	lateNs  int64   // LateAfter
	cap     int64   // BacklogCap
	warmup  time.Duration

	// poisson only: the shared ring of gaps and where this step starts in it.
	ring     *ring
	ringOff  int64
	ringBase float64 // ring.cum(ringOff)

	next       atomic.Int64 // next ticket to claim
	late       atomic.Int64 // tickets >= first skipped as late
	maxBacklog atomic.Int64
}

// at returns the intended start of ticket k (k >= 0; k may be total).
func (s *sched) at(k int64) int64 {
	if s.ring == nil {
		return s.origin + int64(float64(k)*s.unit)
	}
	return s.origin + int64((s.ring.cum(s.ringOff+k)-s.ringBase)*s.unit)
}

// count returns the number of tickets due at t, i.e. the least k >= 0 with
// at(k) > t, ignoring total. at is non-decreasing; count starts from the
// expected answer, gallops to bracket it and bisects, using at itself so
// that count and at always agree.
func (s *sched) count(t int64) int64 {
	if t < s.origin {
		return 0
	}
	g := int64(float64(t-s.origin)/s.unit) + 1
	var lo, hi int64 // at(lo) <= t < at(hi); lo == -1 stands for "none"
	if s.at(g) > t {
		hi, lo = g, g-1
		for step := int64(1); lo >= 0 && s.at(lo) > t; step *= 2 {
			hi, lo = lo, lo-step
		}
		lo = max(lo, -1)
	} else {
		lo, hi = g, g+1
		for step := int64(1); s.at(hi) <= t; step *= 2 {
			lo, hi = hi, hi+step
		}
	}
	for hi-lo > 1 {
		m := lo + (hi-lo)/2
		if s.at(m) > t {
			hi = m
		} else {
			lo = m
		}
	}
	return hi
}

// due returns the number of the step's tickets due at t.
func (s *sched) due(t int64) int64 { return min(s.count(t), s.total) }

// claim takes the next ticket that can still start in time at now, first
// expiring (as late, into rec) the tickets that cannot. It reports false
// when the step has no ticket left. The common case is one atomic load, two
// calls to at and one CAS.
func (s *sched) claim(now int64, rec *metrics.Recorder) (int64, bool) {
	for {
		cur := s.next.Load()
		if cur >= s.total {
			return 0, false
		}
		if s.at(cur) < now-s.lateNs || (cur+s.cap < s.total && s.at(cur+s.cap) <= now) {
			s.expire(now, rec)
			continue
		}
		if s.next.CompareAndSwap(cur, cur+1) {
			return cur, true
		}
	}
}

// expire skips as late every ticket that is too old at now or beyond the
// backlog cap, and notes the backlog it found.
func (s *sched) expire(now int64, rec *metrics.Recorder) {
	due := s.due(now)
	floor := max(s.due(now-s.lateNs-1), due-s.cap)
	s.skipTo(floor, due, rec)
}

// closeAt ends the step at t (its end, or earlier if interrupted): every
// unclaimed ticket due before t is skipped.
func (s *sched) closeAt(t int64, rec *metrics.Recorder) {
	due := s.due(t - 1)
	s.skipTo(due, due, rec)
}

// skipTo moves next up to floor, counting the tickets skipped as late, and
// notes the backlog (due - next) it found.
func (s *sched) skipTo(floor, due int64, rec *metrics.Recorder) {
	for {
		cur := s.next.Load()
		s.noteBacklog(due - cur)
		if cur >= floor {
			return
		}
		if s.next.CompareAndSwap(cur, floor) {
			s.countLate(cur, floor, rec)
			return
		}
	}
}

// countLate counts tickets [a, b) as late. The metrics recorder gets them
// against operation 0: the workload picks the operation inside Do, so a
// request that never ran has none; StepResult.Late is the authoritative count.
func (s *sched) countLate(a, b int64, rec *metrics.Recorder) {
	if n := b - max(a, s.first); n > 0 {
		s.late.Add(n)
	}
	for i := a; i < b; i++ {
		rec.RecordLate(0)
	}
}

func (s *sched) noteBacklog(n int64) {
	for {
		m := s.maxBacklog.Load()
		if n <= m || s.maxBacklog.CompareAndSwap(m, n) {
			return
		}
	}
}

// ringSize is the number of poisson gaps drawn per run. The sequence repeats
// after ringSize arrivals (with each step starting where the previous one
// stopped); the gaps are normalised so that every full ring has exactly the
// requested mean rate.
const ringSize = 1 << 16

// ring holds prefix sums of ringSize exponential gaps of mean 1, so that the
// time of arrival j, cum(j), is computed in O(1) from j.
type ring struct {
	prefix [ringSize]float64 // prefix[i] = sum of gaps 0..i-1; the total is ringSize
}

func newRing(seed uint64) *ring {
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	g := new(ring)
	var sum float64
	for i := range g.prefix {
		g.prefix[i] = sum
		sum += rng.ExpFloat64()
	}
	scale := ringSize / sum
	for i := range g.prefix {
		g.prefix[i] *= scale
	}
	return g
}

// cum returns the arrival time of arrival j, in mean gaps.
func (g *ring) cum(j int64) float64 {
	return float64(j/ringSize)*ringSize + g.prefix[j%ringSize]
}

// reapEvery is how often the driver expires late tickets: a tenth of
// LateAfter, within [1 ms, 100 ms].
func reapEvery(lateAfter time.Duration) time.Duration {
	return min(max(lateAfter/10, time.Millisecond), 100*time.Millisecond)
}

// plan builds the schedule of every step. cfg has been validated and has
// its defaults.
func plan(cfg Config) []*sched {
	steps, ops := cfg.Steps, int64(0)
	if len(steps) == 0 {
		steps, ops = []Step{{Rate: cfg.Rate, Duration: cfg.Duration, Warmup: cfg.Warmup}}, cfg.Ops
	}
	var rg *ring
	if cfg.Arrival == ArrivalPoisson {
		rg = newRing(cfg.Seed)
	}
	var origin, ringOff int64
	out := make([]*sched, 0, len(steps))
	for _, st := range steps {
		s := &sched{
			rate:    st.Rate,
			unit:    1e9 / st.Rate,
			origin:  origin,
			measure: origin + int64(st.Warmup),
			lateNs:  int64(cfg.LateAfter),
			cap:     int64(math.Floor(st.Rate*cfg.LateAfter.Seconds())) + 1,
			warmup:  st.Warmup,
			ring:    rg,
			ringOff: ringOff,
		}
		if rg != nil {
			s.ringBase = rg.cum(ringOff)
		}
		s.first = s.count(s.measure - 1)
		s.total = math.MaxInt64
		if st.Duration > 0 {
			s.end = s.measure + int64(st.Duration)
			s.total = s.count(s.end - 1)
		}
		if ops > 0 && (st.Duration == 0 || s.first+ops < s.total) {
			s.total = s.first + ops
			s.end = s.at(s.total)
		}
		out = append(out, s)
		origin, ringOff = s.end, ringOff+s.total
	}
	return out
}

// since returns the time elapsed since the schedule's origin, in ns.
func (r *run) since() int64 { return int64(r.cfg.clock.Now().Sub(r.origin)) }

// driveOpen runs the open loop: it starts the workers on the schedule, takes
// the interval ticks, expires late tickets every reapEvery, closes each step
// at its end and assembles the step results.
func (r *run) driveOpen(ctx context.Context) *Result {
	res := &Result{Started: time.Now(), ClientCPUSeconds: -1, intervalHists: r.cfg.IntervalHists}
	wctx, cancel := context.WithCancel(ctx)
	r.cancel = cancel
	defer cancel()

	lateRec := r.reg.NewRecorder() // the driver's, for the tickets it expires
	r.stopCh = make(chan struct{})
	r.done = make(chan struct{})
	// The opening sample first: taken after the origin, its round trip
	// would make the first tickets late before any worker ran.
	sr := r.newSeries(ctx, res, time.Time{})
	r.origin = r.cfg.clock.Now()
	sr.begin = r.origin // interval times are schedule times
	for _, wk := range r.workers {
		r.wg.Add(1)
		go wk.openLoop(wctx)
	}
	go func() { r.wg.Wait(); close(r.done) }()

	// The end: at the last step's scheduled end (from a timer, so that a
	// tick held up by the server's sample does not move it), or where the
	// run is interrupted. What is in flight then is counted, and nothing
	// finishing later.
	var endOnce sync.Once
	end := func(at int64, measured bool) {
		endOnce.Do(func() {
			if measured {
				res.InFlight = r.inFlightAt(at)
			}
			r.stop.Store(true)
			close(r.stopCh)
		})
	}
	if len(r.steps) > 0 {
		last := r.steps[len(r.steps)-1].end
		tm := time.AfterFunc(r.origin.Add(time.Duration(last)).Sub(r.cfg.clock.Now()), func() { end(last, true) })
		defer tm.Stop()
	}
	ph := &phase{r: r, ctx: ctx, sr: sr, rec: lateRec, reap: reapEvery(r.cfg.LateAfter)}
	total := metrics.NewSnapshot(r.reg.Ops())
	cpuTotal, cpuKnown := 0.0, true
	interrupted := false
	var lastStart *target.Sample // the last measured step's opening sample
	for i, s := range r.steps {
		sr.step = i
		if s.measure > s.origin {
			if interrupted = !ph.until(s, s.measure, true, nil); interrupted {
				break
			}
			res.addInterval(ph.tick(true, nil))
			r.lagReg.Tick() // drop the warm-up's lag
		}
		// The measured part runs from the last tick (or the origin) to the
		// step's closing tick: exactly what the snapshots merged into snap cover.
		startSample, cpuStart, mStart := sr.prev, processCPU(), ph.lastEnd
		lastStart = startSample
		obsStart := r.observe(ctx, res)
		snap := metrics.NewSnapshot(r.reg.Ops())
		interrupted = !ph.until(s, s.end, false, snap)
		observed := observedDelta(obsStart, r.observe(ctx, res))
		now := min(r.since(), s.end) // the schedule's measured part is [s.measure, now)
		if interrupted || i == len(r.steps)-1 {
			// Completions from here on are not counted (as in closed loop).
			end(now, true)
		}
		s.closeAt(now, lateRec)
		// The step's closing tick ends with its schedule, even when a
		// tick held up by the server (its sample) returned later.
		sr.until = time.Duration(now)
		last := ph.tick(false, snap)
		sr.until = 0
		res.addInterval(last)
		lag := r.lagReg.Tick()

		st := StepResult{
			Rate:             s.rate,
			Scheduled:        max(s.due(now-1)-s.first, 0),
			Warmup:           s.warmup,
			Elapsed:          last.End - mStart,
			Partial:          interrupted,
			Snap:             snap,
			SchedLag:         metrics.LatencyOf(lag.Ops[lagSched].Hist),
			SchedLagSlow:     metrics.CountAbove(lag.Ops[lagSched].Hist, SlowSchedLagMs*1000),
			StartLag:         metrics.LatencyOf(lag.Ops[lagStart].Hist),
			Service:          metrics.LatencyOf(lag.Ops[lagService].Hist),
			BacklogCap:       s.cap,
			ClientCPUSeconds: -1,
			Observed:         observed,
		}
		tot := snap.Total()
		st.Completed, st.Failed = tot.Requests, tot.ErrorCount()
		if sec := st.Elapsed.Seconds(); sec > 0 {
			st.Achieved = float64(st.Completed) / sec
		}
		if startSample != nil && sr.prev != nil && sr.prev != startSample {
			st.Evidence = sr.delta(startSample, sr.prev)
		}
		if c := processCPU(); c >= 0 && cpuStart >= 0 {
			st.ClientCPUSeconds = c - cpuStart
		}
		res.Steps = append(res.Steps, st)
		addObserved(&res.Observed, observed)
		total.Merge(snap)
		res.Elapsed += st.Elapsed
		cpuTotal += st.ClientCPUSeconds
		cpuKnown = cpuKnown && st.ClientCPUSeconds >= 0
		if st.Evidence != nil {
			if res.Evidence == nil {
				res.Evidence = &Evidence{}
			}
			res.Evidence.Add(st.Evidence)
		}
		if interrupted {
			break
		}
	}
	for _, st := range res.Steps {
		if st.Observed == nil { // a step without its readings: no total either
			res.Observed = nil
		}
	}
	end(r.since(), false) // interrupted in a warm-up, if not ended yet
	r.waitWorkers(res, cancel)
	r.closeWorkers()
	r.settleLastStep(ctx, sr, res, lastStart)
	// The workers are gone: the late and backlog counters are final.
	for i := range res.Steps {
		res.Steps[i].Late = r.steps[i].late.Load()
		res.Steps[i].MaxBacklog = r.steps[i].maxBacklog.Load()
	}
	res.Total = total
	res.Partial = interrupted || ctx.Err() != nil
	if len(res.Steps) > 0 && cpuKnown {
		res.ClientCPUSeconds = cpuTotal
	}
	return res
}

// phase runs the driver's part of one phase (a warm-up or a measured part).
type phase struct {
	r       *run
	ctx     context.Context
	sr      *series
	rec     *metrics.Recorder
	reap    time.Duration
	lastEnd time.Duration
}

// until ticks the series every Interval and expires s's late tickets every
// reap, until the schedule time end. Ticks of a measured part are merged into
// snap. It reports false if ctx was cancelled first.
func (p *phase) until(s *sched, end int64, warm bool, snap *metrics.Snapshot) bool {
	r := p.r
	endT := time.NewTimer(time.Duration(end - r.since()))
	defer endT.Stop()
	// No interval of the phase ends after it, even one whose tick waited
	// for the server past it.
	p.sr.until = time.Duration(end)
	defer func() { p.sr.until = 0 }()
	tk := time.NewTicker(r.cfg.Interval)
	defer tk.Stop()
	reap := time.NewTicker(p.reap)
	defer reap.Stop()
	for {
		select {
		case <-reap.C:
			s.expire(r.since(), p.rec)
		case <-tk.C:
			if time.Duration(end-r.since()) < r.cfg.Interval/2 {
				continue // the phase's end, due soon, closes this interval
			}
			p.sr.res.addInterval(p.tick(warm, snap))
		case <-endT.C:
			return true
		case <-p.ctx.Done():
			return false
		}
	}
}

// tick closes an interval at the current time.
func (p *phase) tick(warm bool, snap *metrics.Snapshot) Interval {
	iv := p.sr.tick(warm, p.lastEnd)
	p.lastEnd = iv.End
	if snap != nil {
		snap.Merge(iv.Snap)
	}
	return iv
}

// openLoop is a worker's loop in the open loop: claim a ticket, wait for its
// time, run it, record its latency from the intended start. Tickets are
// claimed step by step; the worker returns when the last step has no ticket
// left, or when the run stops.
func (k *worker) openLoop(ctx context.Context) {
	defer k.run.wg.Done()
	r := k.run
	sl := r.cfg.clock.newSleeper(r.stopCh)
	for i := 0; i < len(r.steps); {
		if r.stop.Load() || ctx.Err() != nil {
			return
		}
		s := r.steps[i]
		now := r.since()
		tk, ok := s.claim(now, k.rec)
		if !ok {
			i++
			continue
		}
		at, start := s.at(tk), now
		if at > now {
			if !sl.sleepUntil(r.origin.Add(time.Duration(at)), k.holdsP()) || r.stop.Load() {
				return
			}
			start = r.since()
			if start-at > s.lateNs { // the load generator itself stalled
				s.countLate(tk, tk+1, k.rec)
				continue
			}
		}
		k.lag.Record(lagSched, time.Duration(start-max(at, now)), 0, 0)
		k.lag.Record(lagStart, time.Duration(start-at), 0, 0)
		k.busy.Store(start + 1)
		res, err := k.wk.Do(ctx)
		k.busy.Store(0)
		end := r.since()
		if r.stop.Load() || ctx.Err() != nil {
			return // finished after the end or cancelled: not counted
		}
		rts := k.roundTrips()
		if err != nil {
			class := r.t.Classify(err)
			k.rec.RecordError(res.Op, class, err)
			if class == metrics.ErrConnLost && !k.reconnect(ctx) {
				return
			}
			continue
		}
		k.rec.RecordExamined(res.Op, time.Duration(end-at), res.Rows, res.Bytes, res.Examined, rts)
		k.lag.Record(lagService, time.Duration(end-start), 0, 0)
	}
}

// settleLastStep lets a target whose statistics lag (target.Settler) catch
// up once the workers are gone, and recounts the last step's evidence up to
// that point, keeping the step's measured duration for the rates. Earlier
// steps' lagging statistics land in the step after them.
func (r *run) settleLastStep(ctx context.Context, sr *series, res *Result, start *target.Sample) {
	if _, ok := r.t.(target.Settler); !ok || len(res.Steps) == 0 || start == nil {
		return
	}
	r.settle(ctx)
	cur := sr.sample()
	if cur == nil {
		return
	}
	last := &res.Steps[len(res.Steps)-1]
	ev := sr.delta(start, cur)
	if last.Evidence != nil {
		ev.Seconds = last.Evidence.Seconds
	}
	last.Evidence = ev
	res.Evidence = nil
	for _, st := range res.Steps {
		if st.Evidence != nil {
			if res.Evidence == nil {
				res.Evidence = &Evidence{}
			}
			res.Evidence.Add(st.Evidence)
		}
	}
}

// holdsP reports whether the worker's connection holds its goroutine's P
// while it waits for the server (target.PHolder): the process then has a
// P for it, which the worker may keep through its precise sleeps too.
func (k *worker) holdsP() bool {
	h, ok := k.conn.(target.PHolder)
	return ok && h.HoldsP()
}
