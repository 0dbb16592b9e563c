package runner

import (
	"context"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/spf13/pflag"

	"github.com/ceiling-db/ceiling/internal/metrics"
	"github.com/ceiling-db/ceiling/internal/target"
	"github.com/ceiling-db/ceiling/internal/workload"
)

// The open-loop tests run inside a synctest bubble with timerClock: time
// is virtual, so a 10-minute schedule takes milliseconds, and every figure
// is deterministic. No test here sleeps on the real clock.

// funcWorkload runs do for every request; do sees the virtual clock.
type funcWorkload struct {
	do func(ctx context.Context) error
}

func (w *funcWorkload) Flags(*pflag.FlagSet)   {}
func (w *funcWorkload) Validate() error        { return nil }
func (w *funcWorkload) Params() map[string]any { return nil }
func (w *funcWorkload) Ops() []string          { return []string{"a"} }
func (w *funcWorkload) Tables() []string       { return nil }
func (w *funcWorkload) Prepare(context.Context, target.Target, io.Writer) error {
	return nil
}
func (w *funcWorkload) NewWorker(context.Context, target.Target, target.Conn, int) (workload.Worker, error) {
	return w, nil
}
func (w *funcWorkload) Do(ctx context.Context) (workload.Result, error) {
	if w.do != nil {
		if err := w.do(ctx); err != nil {
			return workload.Result{}, err
		}
	}
	return workload.Result{Op: 0, Rows: 1}, nil
}

// sleepFor is a target that takes d per request.
func sleepFor(d time.Duration) func(context.Context) error {
	return func(context.Context) error { time.Sleep(d); return nil }
}

// runVirtual runs cfg in a synctest bubble on the timer clock.
func runVirtual(t *testing.T, cfg Config, w workload.Workload) *Result {
	t.Helper()
	var res *Result
	synctest.Test(t, func(t *testing.T) {
		cfg.clock = timerClock{}
		var err error
		res, err = Run(context.Background(), cfg, &fakeTarget{}, w)
		if err != nil {
			t.Fatal(err)
		}
	})
	return res
}

func near(got, want, tol float64) bool { return math.Abs(got-want) <= tol*math.Abs(want) }

func oneStep(t *testing.T, res *Result) StepResult {
	t.Helper()
	if len(res.Steps) != 1 {
		t.Fatalf("got %d steps, want 1", len(res.Steps))
	}
	return res.Steps[0]
}

func TestOpenLoopRateAccuracy(t *testing.T) {
	res := runVirtual(t, Config{Threads: 2, Rate: 1000, Duration: 10 * time.Second}, &funcWorkload{})
	st := oneStep(t, res)
	if !near(st.Achieved, 1000, 0.01) {
		t.Errorf("achieved %.1f/s, want 1000 ± 1%%", st.Achieved)
	}
	if st.Late != 0 || st.Failed != 0 {
		t.Errorf("late %d, failed %d: want 0", st.Late, st.Failed)
	}
	if st.Scheduled != 10000 || st.Completed != 10000 {
		t.Errorf("scheduled %d, completed %d: want 10000 each", st.Scheduled, st.Completed)
	}
	if st.Elapsed != 10*time.Second || res.Elapsed != st.Elapsed {
		t.Errorf("elapsed %v (run %v), want 10s", st.Elapsed, res.Elapsed)
	}
	if got := res.Total.Total().Requests; got != st.Completed {
		t.Errorf("run total %d, want the step's %d", got, st.Completed)
	}
	// On a virtual clock nothing is ever late to start.
	if st.StartLag == nil || st.StartLag.Max != 0.001 || st.SchedLag.Max != 0.001 {
		t.Errorf("lag: start %+v sched %+v, want max 1 µs (the histogram floor)", st.StartLag, st.SchedLag)
	}
}

func TestOpenLoopOverloadCountsLate(t *testing.T) {
	cfg := Config{Threads: 2, Rate: 1000, Duration: 10 * time.Second}
	res := runVirtual(t, cfg, &funcWorkload{do: sleepFor(10 * time.Millisecond)})
	st := oneStep(t, res)
	if res.Partial {
		t.Fatal("run marked partial")
	}
	sec := st.Elapsed.Seconds()
	if !near(st.Achieved, 200, 0.02) {
		t.Errorf("achieved %.1f/s, want 200 (2 workers × 10 ms)", st.Achieved)
	}
	if late := float64(st.Late) / sec; !near(late, 800, 0.02) {
		t.Errorf("late %.1f/s, want 800", late)
	}
	if sum := st.Late + st.Completed + st.Failed; math.Abs(float64(sum-st.Scheduled)) > 2*float64(cfg.Threads) {
		t.Errorf("late %d + completed %d + failed %d = %d, want scheduled %d ± %d",
			st.Late, st.Completed, st.Failed, sum, st.Scheduled, 2*cfg.Threads)
	}
	// Each started request had waited in the backlog for about LateAfter.
	if st.Snap.Total().Hist == nil || metrics.LatencyOf(st.Snap.Total().Hist).P50 < 900 {
		t.Errorf("p50 %+v, want ≈ 1 s of queueing", metrics.LatencyOf(st.Snap.Total().Hist))
	}
	if got := st.Snap.Total().Late; got == 0 {
		t.Errorf("late not recorded in the snapshot")
	}
}

func TestOpenLoopLatencyIncludesQueueing(t *testing.T) {
	var t0 time.Time
	stall := func(context.Context) error {
		// The target stalls once: a request arriving in [2 s, 3 s) waits until 3 s.
		if now := time.Now(); now.Sub(t0) >= 2*time.Second && now.Sub(t0) < 3*time.Second {
			time.Sleep(t0.Add(3 * time.Second).Sub(now))
		}
		return nil
	}
	var res *Result
	synctest.Test(t, func(t *testing.T) {
		t0 = time.Now()
		var err error
		res, err = Run(context.Background(), Config{Threads: 2, Rate: 1000, Duration: 5 * time.Second, clock: timerClock{}},
			&fakeTarget{}, &funcWorkload{do: stall})
		if err != nil {
			t.Fatal(err)
		}
	})
	st := oneStep(t, res)
	lat := metrics.LatencyOf(st.Snap.Total().Hist)
	// 1000 of 5000 requests were scheduled during the stall, with latencies
	// spread from 1 s down to 0: the top 1% is at least 0.9 s.
	if lat.P99 < 900 || lat.Max < 990 || lat.Max > 1001 {
		t.Errorf("p99 %.1f ms, max %.1f ms: want p99 ≥ 900, max ≈ 1000", lat.P99, lat.Max)
	}
	if lat.P50 > 1 {
		t.Errorf("p50 %.3f ms, want ≈ 0 outside the stall", lat.P50)
	}
	if st.Late != 0 || st.Completed != 5000 {
		t.Errorf("late %d, completed %d: want 0 and 5000", st.Late, st.Completed)
	}
	if st.StartLag.P99 < 900 {
		t.Errorf("start lag p99 %.1f ms, want the queueing (≥ 900)", st.StartLag.P99)
	}
	if st.SchedLag.Max > 0.001 || st.SchedLagSlow != 0 {
		t.Errorf("sched lag max %.3f ms, %d started > %d ms late: want ≈ 0 and none, the load generator was never late (the queueing is start lag)",
			st.SchedLag.Max, st.SchedLagSlow, SlowSchedLagMs)
	}
	if st.MaxBacklog < 890 || st.MaxBacklog > st.BacklogCap {
		t.Errorf("max backlog %d, want ≈ 1000 (one second of arrivals) and ≤ cap %d", st.MaxBacklog, st.BacklogCap)
	}
}

func TestOpenLoopBoundedUnderSustainedOverload(t *testing.T) {
	const rate = 10000
	var counts []int
	cfg := Config{
		Threads: 2, Rate: rate, Duration: 10 * time.Minute, Interval: 10 * time.Second,
		OnInterval: func(Interval) { counts = append(counts, runtime.NumGoroutine()) },
	}
	res := runVirtual(t, cfg, &funcWorkload{do: sleepFor(time.Second)})
	st := oneStep(t, res)
	if st.Scheduled != rate*600 {
		t.Fatalf("scheduled %d, want %d", st.Scheduled, rate*600)
	}
	// The last two intervals are ticked around the stop, when workers are
	// leaving (the end's timer fires with the last regular tick).
	counts = counts[:len(counts)-2]
	if slices.Min(counts) != slices.Max(counts) || len(counts) < 58 {
		t.Errorf("goroutines over %d intervals varied from %d to %d, want constant", len(counts), slices.Min(counts), slices.Max(counts))
	}
	slack := int64(math.Ceil(rate*reapEvery(time.Second).Seconds())) + 1
	if st.BacklogCap != rate+1 || st.MaxBacklog > st.BacklogCap+slack || st.MaxBacklog < rate/2 {
		t.Errorf("backlog max %d, cap %d: want deep but ≤ cap + %d", st.MaxBacklog, st.BacklogCap, slack)
	}
	if sum := st.Late + st.Completed + st.Failed; math.Abs(float64(sum-st.Scheduled)) > 4 {
		t.Errorf("late %d + completed %d + failed %d = %d, want scheduled %d", st.Late, st.Completed, st.Failed, sum, st.Scheduled)
	}
	if !near(st.Achieved, 2, 0.01) {
		t.Errorf("achieved %.2f/s, want 2", st.Achieved)
	}
}

func TestOpenLoopRamp(t *testing.T) {
	cfg := Config{Threads: 2, Interval: time.Second, Steps: []Step{
		{Rate: 100, Duration: 5 * time.Second},
		{Rate: 200, Duration: 5 * time.Second, Warmup: time.Second},
		{Rate: 300, Duration: 5 * time.Second},
	}}
	res := runVirtual(t, cfg, &funcWorkload{do: sleepFor(time.Millisecond)})
	if len(res.Steps) != 3 {
		t.Fatalf("got %d steps, want 3", len(res.Steps))
	}
	var sum int64
	for i, st := range res.Steps {
		want := cfg.Steps[i].Rate
		if st.Rate != want || !near(st.Achieved, want, 0.01) || st.Late != 0 {
			t.Errorf("step %d: rate %g achieved %.1f late %d, want %g achieved, 0 late", i, st.Rate, st.Achieved, st.Late, want)
		}
		if st.Scheduled != int64(want)*5 {
			t.Errorf("step %d: scheduled %d, want %d", i, st.Scheduled, int64(want)*5)
		}
		sum += st.Completed
	}
	if got := res.Total.Total().Requests; got != sum || res.Elapsed != 15*time.Second {
		t.Errorf("total %d over %v, want %d over 15s", got, res.Elapsed, sum)
	}
	var warm int64
	steps := map[int]int{}
	for _, iv := range res.Intervals {
		steps[iv.Step]++
		if iv.Warmup {
			warm += iv.Snap.Total().Requests
			if iv.Step != 1 {
				t.Errorf("warm-up interval in step %d", iv.Step)
			}
		}
	}
	if warm < 190 || len(steps) != 3 {
		t.Errorf("warm-up requests %d (want ≈ 200, excluded), steps in the series %v", warm, steps)
	}
}

func TestOpenLoopWarmupOpsAndEvidence(t *testing.T) {
	cfg := Config{Threads: 3, Rate: 500, Ops: 1234, Warmup: 2 * time.Second}
	res := runVirtual(t, cfg, &funcWorkload{})
	st := oneStep(t, res)
	// The first measured request is due exactly when the warm-up ends: on
	// the virtual clock it may complete on either side of that tick.
	if st.Scheduled != 1234 || st.Completed < 1234-int64(cfg.Threads) || st.Completed > 1234 {
		t.Errorf("scheduled %d, completed %d: want 1234", st.Scheduled, st.Completed)
	}
	if st.Warmup != 2*time.Second || st.Evidence == nil || st.Evidence.Counters[target.CtrLogSyncs] <= 0 || res.Evidence == nil {
		t.Errorf("warmup %v, evidence %+v", st.Warmup, st.Evidence)
	}
}

func TestOpenLoopPoissonRun(t *testing.T) {
	cfg := Config{Threads: 2, Rate: 1000, Arrival: ArrivalPoisson, Duration: 200 * time.Second, Interval: 10 * time.Second, Seed: 7}
	st := oneStep(t, runVirtual(t, cfg, &funcWorkload{}))
	if !near(st.Achieved, 1000, 0.02) || st.Late != 0 {
		t.Errorf("achieved %.1f/s, late %d: want 1000 ± 2%%, 0", st.Achieved, st.Late)
	}
}

func TestOpenLoopCancelMarksPartial(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 2505*time.Millisecond)
		defer cancel()
		cfg := Config{Threads: 2, Steps: []Step{{Rate: 100, Duration: 2 * time.Second}, {Rate: 100, Duration: time.Hour}}, clock: timerClock{}}
		res, err := Run(ctx, cfg, &fakeTarget{}, &funcWorkload{})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Partial || len(res.Steps) != 2 || res.Steps[0].Partial || !res.Steps[1].Partial {
			t.Fatalf("partial %v, steps %d", res.Partial, len(res.Steps))
		}
		// Requests due at 2.000 … 2.500 s; the one due at the step boundary
		// may complete on either side of it on the virtual clock.
		if st := res.Steps[1]; st.Scheduled != 51 || st.Completed < 50 || st.Completed > 51 || st.Elapsed != 505*time.Millisecond {
			t.Errorf("interrupted step: scheduled %d completed %d over %v, want 51, 50-51, 505ms", st.Scheduled, st.Completed, st.Elapsed)
		}
	})
}

// planOne plans a single step of cfg with its defaults applied.
func planOne(cfg Config) *sched {
	if cfg.LateAfter == 0 {
		cfg.LateAfter = time.Second
	}
	return plan(cfg)[0]
}

func TestPoissonArrivals(t *testing.T) {
	const rate = 1000
	cfg := Config{Rate: rate, Arrival: ArrivalPoisson, Duration: 500 * time.Second, Seed: 42}
	s := planOne(cfg)
	if got := float64(s.total) / 500; !near(got, rate, 0.02) {
		t.Errorf("mean rate %.1f/s, want %d ± 2%%", got, rate)
	}
	var sum, sum2 float64
	for k := int64(0); k < s.total-1; k++ {
		g := float64(s.at(k+1) - s.at(k))
		sum += g
		sum2 += g * g
	}
	n := float64(s.total - 1)
	mean := sum / n
	cv := math.Sqrt(sum2/n-mean*mean) / mean
	if !near(mean, 1e9/rate, 0.02) || !near(cv, 1, 0.03) {
		t.Errorf("inter-arrival mean %.0f ns, cv %.3f: want %.0f ns and 1", mean, cv, 1e9/rate)
	}
	// Deterministic per seed.
	again, other := planOne(cfg), planOne(Config{Rate: rate, Arrival: ArrivalPoisson, Duration: 500 * time.Second, Seed: 43})
	if again.at(12345) != s.at(12345) || other.at(12345) == s.at(12345) {
		t.Errorf("seed: same %d/%d, other %d", s.at(12345), again.at(12345), other.at(12345))
	}
}

func TestScheduleCountMatchesAt(t *testing.T) {
	for _, arrival := range []string{ArrivalUniform, ArrivalPoisson} {
		s := planOne(Config{Rate: 333, Arrival: arrival, Duration: time.Hour, Warmup: time.Second})
		for _, k := range []int64{0, 1, 2, 332, 333, 334, 65535, 65536, 65537, 1000003} {
			at := s.at(k)
			if c := s.count(at); c <= k || s.at(c) <= at || s.at(c-1) > at {
				t.Errorf("%s: count(at(%d)=%d) = %d", arrival, k, at, c)
			}
			if c := s.count(at - 1); c > k {
				t.Errorf("%s: count(at(%d)-1) = %d, want ≤ %d", arrival, k, c, k)
			}
		}
		if s.first != s.count(s.measure-1) || s.at(s.first) < s.measure || s.at(s.total-1) >= s.end {
			t.Errorf("%s: first %d total %d do not match measure %d end %d", arrival, s.first, s.total, s.measure, s.end)
		}
	}
}

func TestClaimExpiresLateTickets(t *testing.T) {
	s := planOne(Config{Rate: 1000, Duration: 10 * time.Second})
	rec := metrics.NewRegistry([]string{"a"}).NewRecorder()
	// Nothing claimed until 5 s: the tickets older than 1 s are skipped.
	k, ok := s.claim(int64(5*time.Second), rec)
	if !ok || s.at(k) != int64(4*time.Second) || s.late.Load() != 4000 {
		t.Fatalf("claimed %d at %d, late %d: want the ticket due at 4 s, 4000 late", k, s.at(k), s.late.Load())
	}
	if s.maxBacklog.Load() != 5001 {
		t.Errorf("max backlog %d, want 5001 (tickets due at 0..5 s)", s.maxBacklog.Load())
	}
	// A ticket exactly LateAfter old may still start.
	if k, _ := s.claim(int64(5*time.Second)+int64(time.Millisecond), rec); s.at(k) != int64(4*time.Second)+int64(time.Millisecond) {
		t.Errorf("claimed the ticket due at %d", s.at(k))
	}
	s.closeAt(int64(20*time.Second), rec)
	if s.next.Load() != s.total || s.late.Load() != 10000-2 {
		t.Errorf("after close: next %d late %d, want %d and %d", s.next.Load(), s.late.Load(), s.total, 10000-2)
	}
	if _, ok := s.claim(int64(20*time.Second), rec); ok {
		t.Error("claimed a ticket after the step closed")
	}
}

func TestClaimDoesNotAllocate(t *testing.T) {
	for _, arrival := range []string{ArrivalUniform, ArrivalPoisson} {
		s := planOne(Config{Rate: 1e6, Arrival: arrival, Duration: time.Hour})
		rec := metrics.NewRegistry([]string{"a"}).NewRecorder()
		now := int64(0)
		if n := testing.AllocsPerRun(10000, func() {
			now += 3000 // fall behind: claims expire tickets too
			k, _ := s.claim(now, rec)
			_ = s.at(k)
		}); n != 0 {
			t.Errorf("%s: %.1f allocations per claim, want 0", arrival, n)
		}
	}
}

func TestOpenLoopConfigValidate(t *testing.T) {
	bad := []Config{
		{Threads: 1, Rate: -1, Duration: 1},
		{Threads: 1, Rate: math.NaN(), Duration: 1},
		{Threads: 1, Rate: 1, Duration: 1, Arrival: "bursty"},
		{Threads: 1, Rate: 1, Duration: 1, LateAfter: -1},
		{Threads: 1, Rate: 1, Steps: []Step{{Rate: 1, Duration: 1}}},
		{Threads: 1, Duration: 1, Steps: []Step{{Rate: 1, Duration: 1}}},
		{Threads: 1, Steps: []Step{{Rate: 0, Duration: 1}}},
		{Threads: 1, Steps: []Step{{Rate: 1}}},
		{Threads: 1, Steps: []Step{{Rate: 1, Duration: 1, Warmup: -1}}},
	}
	for _, c := range bad {
		if c.Validate() == nil {
			t.Errorf("Validate(%+v) = nil, want an error", c)
		}
	}
	for _, c := range []Config{
		{Threads: 1, Rate: 10, Ops: 5, Arrival: ArrivalPoisson},
		{Threads: 1, Steps: []Step{{Rate: 1, Duration: 1}}},
	} {
		if err := c.Validate(); err != nil {
			t.Errorf("Validate(%+v): %v", c, err)
		}
	}
}

// BenchmarkOpenLoop runs a no-op target on the real clock at 1k, 10k and
// 50k requests/s for 3 s each with 2 workers, and reports how close the
// achieved rate is to the requested one, the scheduling and start lag, and
// allocations per scheduled request. It is a measurement, not a pass/fail
// test: go test -run XXX -bench OpenLoop ./internal/runner/
func BenchmarkOpenLoop(b *testing.B) {
	for _, rate := range []float64{1000, 10000, 50000} {
		for _, arrival := range []string{ArrivalUniform, ArrivalPoisson} {
			b.Run(fmt.Sprintf("rate=%g/%s", rate, arrival), func(b *testing.B) {
				var ms0, ms1 runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&ms0)
				cfg := Config{Threads: 2, Rate: rate, Arrival: arrival, Duration: 3 * time.Second}
				res, err := Run(context.Background(), cfg, &fakeTarget{}, &fakeWorkload{})
				if err != nil {
					b.Fatal(err)
				}
				runtime.ReadMemStats(&ms1)
				st := res.Steps[0]
				b.ReportMetric(100*(st.Achieved-rate)/rate, "achieved_err_%")
				// Poisson arrivals vary by themselves (±1/√n): this one
				// compares with what was actually scheduled.
				b.ReportMetric(100*float64(st.Completed-st.Scheduled)/float64(st.Scheduled), "vs_scheduled_%")
				b.ReportMetric(float64(st.Late), "late")
				b.ReportMetric(st.SchedLag.P50*1000, "p50_sched_lag_µs")
				b.ReportMetric(st.SchedLag.P99*1000, "p99_sched_lag_µs")
				b.ReportMetric(st.StartLag.P99*1000, "p99_start_lag_µs")
				b.ReportMetric(st.SchedLag.Max*1000, "max_sched_lag_µs")
				b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/float64(st.Scheduled), "allocs/req")
				b.ReportMetric(st.ClientCPUSeconds/st.Elapsed.Seconds(), "client_cpu_cores")
			})
		}
	}
}

// BenchmarkClaim measures the cost of claiming a ticket with 2 goroutines
// contending for the same step, as the workers do (no waiting: the clock is
// far ahead, so every claim is immediate).
func BenchmarkClaim(b *testing.B) {
	for _, arrival := range []string{ArrivalUniform, ArrivalPoisson} {
		b.Run(arrival, func(b *testing.B) {
			s := planOne(Config{Rate: 1e8, Arrival: arrival, Duration: 24 * time.Hour, LateAfter: 24 * time.Hour})
			reg := metrics.NewRegistry([]string{"a"})
			b.SetParallelism(1) // GOMAXPROCS goroutines: 2 on the reference machine
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				rec := reg.NewRecorder()
				now := int64(time.Hour)
				for pb.Next() {
					if _, ok := s.claim(now, rec); !ok {
						b.Error("ran out of tickets")
						return
					}
				}
			})
		})
	}
}

func TestOpenLoopCancelInWarmup(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		cfg := Config{Threads: 2, Rate: 100, Duration: time.Hour, Warmup: time.Second, clock: timerClock{}}
		res, err := Run(ctx, cfg, &fakeTarget{}, &funcWorkload{})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Partial || len(res.Steps) != 0 || res.Total.Total().Requests != 0 {
			t.Fatalf("partial %v, steps %d, requests %d: want partial, nothing measured", res.Partial, len(res.Steps), res.Total.Total().Requests)
		}
	})
}

func TestOpenLoopReconnectsAndCountsFailures(t *testing.T) {
	cfg := Config{Threads: 2, Rate: 1000, Duration: 5 * time.Second}
	res := runVirtual(t, cfg, &fakeWorkload{failEvery: 50})
	st := oneStep(t, res)
	lost := st.Snap.Total().Errors[metrics.ErrConnLost]
	if lost == 0 || st.Failed != lost || st.Snap.Reconnects != lost {
		t.Errorf("failed %d, lost %d, reconnects %d: want equal and non-zero", st.Failed, lost, st.Snap.Reconnects)
	}
	if st.Late+st.Completed+st.Failed != st.Scheduled || st.Late != 0 {
		t.Errorf("late %d + completed %d + failed %d, want scheduled %d and no late", st.Late, st.Completed, st.Failed, st.Scheduled)
	}
}
