package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/ceiling-db/ceiling/internal/metrics"
	"github.com/ceiling-db/ceiling/internal/target"
	"github.com/ceiling-db/ceiling/internal/workload"
)

// fakeTarget is an in-memory target whose connections do nothing; it lets
// the runner's own logic and overhead be tested without a database.
type fakeTarget struct {
	connects atomic.Int64
	samples  atomic.Int64
}

var errLost = errors.New("fake: connection lost")

func (f *fakeTarget) Info() target.Info           { return target.Info{Engine: "fake"} }
func (f *fakeTarget) Dialect() target.Dialect     { return target.Dialect{Engine: "fake"} }
func (f *fakeTarget) Schema() target.Schema       { return nil }
func (f *fakeTarget) Close(context.Context) error { return nil }
func (f *fakeTarget) Connect(context.Context) (target.Conn, error) {
	f.connects.Add(1)
	return fakeConn{}, nil
}
func (f *fakeTarget) Classify(err error) metrics.ErrClass {
	if errors.Is(err, errLost) {
		return metrics.ErrConnLost
	}
	return metrics.ErrOther
}
func (f *fakeTarget) Sample(context.Context) (target.Sample, error) {
	n := f.samples.Add(1)
	return target.Sample{At: time.Now(), Counters: map[string]float64{target.CtrLogSyncs: float64(n * 10)}}, nil
}

type fakeConn struct{}

func (fakeConn) Exec(context.Context, string, ...any) (int64, error)        { return 1, nil }
func (fakeConn) Query(context.Context, string, ...any) (target.Rows, error) { return nil, nil }
func (fakeConn) Begin(context.Context) error                                { return nil }
func (fakeConn) Commit(context.Context) error                               { return nil }
func (fakeConn) Rollback(context.Context) error                             { return nil }
func (fakeConn) Close() error                                               { return nil }

// fakeWorkload performs no I/O; every failEvery-th request of a worker fails
// with a lost connection, and each request optionally sleeps.
type fakeWorkload struct {
	failEvery int
	sleep     time.Duration
}

func (w *fakeWorkload) Flags(*pflag.FlagSet)   {}
func (w *fakeWorkload) Validate() error        { return nil }
func (w *fakeWorkload) Params() map[string]any { return nil }
func (w *fakeWorkload) Ops() []string          { return []string{"a", "b"} }
func (w *fakeWorkload) Tables() []string       { return nil }
func (w *fakeWorkload) Prepare(context.Context, target.Target, io.Writer) error {
	return nil
}
func (w *fakeWorkload) NewWorker(context.Context, target.Target, target.Conn, int) (workload.Worker, error) {
	return &fakeWorker{w: w}, nil
}

type fakeWorker struct {
	w *fakeWorkload
	n int
}

func (k *fakeWorker) Do(ctx context.Context) (workload.Result, error) {
	k.n++
	if k.w.sleep > 0 {
		time.Sleep(k.w.sleep)
	}
	if k.w.failEvery > 0 && k.n%k.w.failEvery == 0 {
		return workload.Result{Op: 1}, errLost
	}
	return workload.Result{Op: k.n & 1, Rows: 1, Bytes: 400}, nil
}

func TestOpsQuotaIsExact(t *testing.T) {
	for _, threads := range []int{1, 3, 7} {
		res, err := Run(context.Background(), Config{Threads: threads, Ops: 10001}, &fakeTarget{}, &fakeWorkload{})
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Total.Total().Requests; got != 10001 {
			t.Fatalf("threads=%d: got %d requests, want 10001", threads, got)
		}
		if res.Partial {
			t.Fatalf("threads=%d: run marked partial", threads)
		}
	}
}

func TestSplitOps(t *testing.T) {
	q := splitOps(10, 4)
	var sum int64
	for _, v := range q {
		sum += v
	}
	if sum != 10 || q[0] != 3 || q[3] != 2 {
		t.Fatalf("splitOps(10,4) = %v", q)
	}
}

func TestReconnectAfterLostConnection(t *testing.T) {
	ft := &fakeTarget{}
	res, err := Run(context.Background(), Config{Threads: 2, Ops: 1000}, ft, &fakeWorkload{failEvery: 50})
	if err != nil {
		t.Fatal(err)
	}
	tot := res.Total.Total()
	lost := tot.Errors[metrics.ErrConnLost]
	if lost == 0 || res.Total.Reconnects != lost {
		t.Fatalf("lost %d, reconnects %d: want equal and non-zero", lost, res.Total.Reconnects)
	}
	if ft.connects.Load() != 2+lost {
		t.Fatalf("connects %d, want %d", ft.connects.Load(), 2+lost)
	}
	if res.Total.FirstErr[metrics.ErrConnLost] != errLost.Error() {
		t.Fatalf("first error %q", res.Total.FirstErr[metrics.ErrConnLost])
	}
	if tot.Requests+lost != 1000 {
		t.Fatalf("requests %d + errors %d, want 1000", tot.Requests, lost)
	}
}

func TestWarmupExcludedAndEvidenceDelta(t *testing.T) {
	cfg := Config{Threads: 2, Duration: 300 * time.Millisecond, Warmup: 200 * time.Millisecond, Interval: 50 * time.Millisecond}
	res, err := Run(context.Background(), cfg, &fakeTarget{}, &fakeWorkload{sleep: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	var warm, measured int64
	for _, iv := range res.Intervals {
		if iv.Warmup {
			warm += iv.Snap.Total().Requests
		} else {
			measured += iv.Snap.Total().Requests
		}
	}
	if warm == 0 {
		t.Fatalf("no warm-up requests recorded in the series")
	}
	if got := res.Total.Total().Requests; got != measured {
		t.Fatalf("total %d, want the measured intervals' %d (warm-up %d excluded)", got, measured, warm)
	}
	if res.Evidence == nil || res.Evidence.Counters[target.CtrLogSyncs] <= 0 {
		t.Fatalf("evidence over the measured phase: %+v", res.Evidence)
	}
	// ceiling's own threads' waits for a core come with every sample
	// where the kernel keeps schedstats.
	if _, err := os.Stat("/proc/self/schedstat"); err == nil {
		if v, ok := res.Evidence.Counters[target.CtrClientRunQueueSec]; !ok || v < 0 || v > 10 {
			t.Fatalf("client run-queue seconds %v (present %v) over the measured phase", v, ok)
		}
	}
}

// doneTarget's counter is the number of requests its workers have done,
// as a server's commit counter would be.
type doneTarget struct {
	fakeTarget
	done atomic.Int64
}

func (d *doneTarget) Sample(context.Context) (target.Sample, error) {
	return target.Sample{At: time.Now(), Counters: map[string]float64{target.CtrCommits: float64(d.done.Load())}}, nil
}

type doneWorkload struct {
	fakeWorkload
	t *doneTarget
}

func (w *doneWorkload) NewWorker(context.Context, target.Target, target.Conn, int) (workload.Worker, error) {
	return doneWorker{w.t}, nil
}

type doneWorker struct{ t *doneTarget }

func (k doneWorker) Do(context.Context) (workload.Result, error) {
	k.t.done.Add(1)
	return workload.Result{Rows: 1}, nil
}

// With no warm-up, the server's counters are read before the first
// request: a short run's evidence covers every request it counted. (Read
// after the workers started, they missed the requests done meanwhile, and
// a bulk load of a few batches could show no log written at all.)
func TestEvidenceCoversEveryRequestWithoutWarmup(t *testing.T) {
	for _, threads := range []int{1, 4} {
		d := &doneTarget{}
		res, err := Run(context.Background(), Config{Threads: threads, Ops: 5000, Interval: time.Second}, d, &doneWorkload{t: d})
		if err != nil {
			t.Fatal(err)
		}
		n := res.Total.Total().Requests
		if n != 5000 {
			t.Fatalf("threads=%d: %d requests, want 5000", threads, n)
		}
		if res.Evidence == nil {
			t.Fatalf("threads=%d: no evidence", threads)
		}
		if got := res.Evidence.Counters[target.CtrCommits]; got != float64(n) {
			t.Fatalf("threads=%d: evidence counts %v requests of the %d counted", threads, got, n)
		}
	}
}

func TestCancelMarksPartial(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	res, err := Run(ctx, Config{Threads: 2, Duration: time.Hour}, &fakeTarget{}, &fakeWorkload{sleep: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Partial || res.Total.Total().Requests == 0 || res.Elapsed > 5*time.Second {
		t.Fatalf("partial %v, requests %d, elapsed %v", res.Partial, res.Total.Total().Requests, res.Elapsed)
	}
}

func TestConfigValidate(t *testing.T) {
	bad := []Config{{Threads: 0, Ops: 1}, {Threads: 1}, {Threads: 1, Duration: -1}, {Threads: 1, Ops: 1, Warmup: -1}}
	for _, c := range bad {
		if c.Validate() == nil {
			t.Errorf("Validate(%+v) = nil, want an error", c)
		}
	}
	if err := (Config{Threads: 1, Ops: 1}).Validate(); err != nil {
		t.Errorf("valid config: %v", err)
	}
}

// BenchmarkClosedLoopOverhead measures the runner's own cost per request on
// a no-op workload: the clock reads, the recorder and the loop.
func BenchmarkClosedLoopOverhead(b *testing.B) {
	b.ReportAllocs()
	res, err := Run(context.Background(), Config{Threads: 1, Ops: int64(b.N)}, &fakeTarget{}, &fakeWorkload{})
	if err != nil {
		b.Fatal(err)
	}
	if got := res.Total.Total().Requests; got != int64(b.N) {
		b.Fatalf("requests %d, want %d", got, b.N)
	}
}

// restartTarget's server counters start again from zero at its fifth
// sample, as after a server restart; the log device's counter (host side)
// runs on.
type restartTarget struct {
	fakeTarget
}

func (r *restartTarget) Sample(context.Context) (target.Sample, error) {
	n := r.samples.Add(1)
	commits := n * 100
	if n >= 5 {
		commits = (n - 4) * 7
	}
	return target.Sample{At: time.Now(), Counters: map[string]float64{target.CtrCommits: float64(commits), target.CtrLogBytes: float64(commits * 50), target.CtrLogDevFlushes: float64(n * 3)}}, nil
}

// TestServerRestartDropsServerCounters: across a restart no delta of the
// server's counters is known (they went back): the interval and the run
// that span it have none (never a negative one), keep the host's, and say
// they restarted; intervals on either side keep theirs.
func TestServerRestartDropsServerCounters(t *testing.T) {
	for _, cfg := range []Config{
		{Threads: 1, Duration: 400 * time.Millisecond, Interval: 50 * time.Millisecond},
		{Threads: 1, Steps: []Step{{Rate: 200, Duration: 200 * time.Millisecond}, {Rate: 400, Duration: 200 * time.Millisecond}}, Interval: 50 * time.Millisecond},
	} {
		res, err := Run(context.Background(), cfg, &restartTarget{}, &fakeWorkload{})
		if err != nil {
			t.Fatal(err)
		}
		restarted, whole := 0, 0
		for _, iv := range res.Intervals {
			if iv.Evidence == nil {
				continue
			}
			if v, ok := iv.Evidence.Counters[target.CtrCommits]; ok && v < 0 {
				t.Fatalf("interval %v: commits %v", iv.End, v)
			}
			if iv.Evidence.Restarted {
				restarted++
				if _, ok := iv.Evidence.Counters[target.CtrCommits]; ok || iv.Evidence.Counters[target.CtrLogDevFlushes] != 3 {
					t.Errorf("restarted interval keeps %v, want the log device's flushes (3) alone", iv.Evidence.Counters)
				}
			} else if iv.Evidence.Counters[target.CtrCommits] > 0 {
				whole++
			}
		}
		if restarted != 1 || whole == 0 {
			t.Fatalf("%d intervals across the restart (want 1), %d with their commits", restarted, whole)
		}
		ev := res.Evidence
		if ev == nil || !ev.Restarted || ev.Counters[target.CtrLogBytes] != 0 || ev.Counters[target.CtrLogDevFlushes] <= 0 {
			t.Fatalf("run evidence %+v: want restarted, no log bytes, the device's flushes", ev)
		}
		if _, ok := ev.Counters[target.CtrCommits]; ok {
			t.Fatalf("run evidence keeps commits %v across the restart", ev.Counters[target.CtrCommits])
		}
		// ceiling's own threads are this host's, not the server's.
		if _, err := os.Stat("/proc/self/schedstat"); err == nil {
			if _, ok := ev.Counters[target.CtrClientRunQueueSec]; !ok {
				t.Fatalf("run evidence lost the client's run-queue time across the restart: %v", ev.Counters)
			}
		}
	}
}

// TestIntervalKeepsGenericCounters: a stored interval keeps the generic
// counters its chart point needs and drops the engine's own (MariaDB's
// ~150 "mysql.innodb_…"), which kept per interval grew a run's memory by
// ~30 KB a tick; the run's and steps' evidence keep every counter.
func TestIntervalKeepsGenericCounters(t *testing.T) {
	var res Result
	res.addInterval(Interval{Evidence: &Evidence{Seconds: 1, Counters: map[string]float64{
		target.CtrLogBytes: 100, target.CtrLogDevFlushes: 3, "mysql.innodb_buffer_pool_pages_dirty": 7, "pg.xact_commit": 9}}})
	got := res.Intervals[0].Evidence.Counters
	if len(got) != 2 || got[target.CtrLogBytes] != 100 || got[target.CtrLogDevFlushes] != 3 {
		t.Errorf("interval counters %v, want log_bytes and log_dev_flushes alone", got)
	}
	res2, err := Run(context.Background(), Config{Threads: 1, Ops: 200, Interval: 10 * time.Millisecond}, &extraTarget{}, &fakeWorkload{})
	if err != nil {
		t.Fatal(err)
	}
	if res2.Evidence == nil || res2.Evidence.Counters["pg.extra"] <= 0 {
		t.Errorf("run evidence lost the engine's counter: %+v", res2.Evidence)
	}
}

// extraTarget samples one generic and one engine-specific counter.
type extraTarget struct{ fakeTarget }

func (x *extraTarget) Sample(context.Context) (target.Sample, error) {
	n := float64(x.samples.Add(1))
	return target.Sample{At: time.Now(), Counters: map[string]float64{target.CtrCommits: n, "pg.extra": 2 * n}}, nil
}

// TestRestartedNeedsSeveralCounters: a restart starts every server counter
// from zero; one counter that dips alone (PostgreSQL's commits, less
// ceiling's own transactions counted before the server publishes its
// statistics) is no restart.
func TestRestartedNeedsSeveralCounters(t *testing.T) {
	s := func(kv ...float64) *target.Sample {
		c := map[string]float64{}
		for i, k := range []string{target.CtrCommits, target.CtrLogBytes, target.CtrDataReads, target.CtrCacheReads} {
			if i < len(kv) && kv[i] >= 0 {
				c[k] = kv[i]
			}
		}
		return &target.Sample{Counters: c}
	}
	for _, c := range []struct {
		a, b *target.Sample
		want bool
	}{
		{s(100, 5000, 10, 900), s(98, 5100, 10, 950), false},  // commits dip alone
		{s(100, 5000, 10, 900), s(100, 4900, 10, 950), false}, // one of three
		{s(100, 5000, 10, 900), s(3, 40, 1, 20), true},        // all from zero
		{s(100, 5000, -1, -1), s(3, 40, -1, -1), true},        // the only one there
		{s(100, 5000, 10, 900), s(100, 5000, 10, 900), false},
	} {
		if got := restarted(c.a, c.b); got != c.want {
			t.Errorf("%v → %v: restarted %v, want %v", c.a.Counters, c.b.Counters, got, c.want)
		}
	}
}

// frozenTarget's server stops answering from the moment frozen closes:
// its samples and its workers' requests wait until thaw closes (the
// requests also end when their context does, as a driver's cancel would).
type frozenTarget struct {
	fakeTarget
	frozen, thaw chan struct{}
}

func (f *frozenTarget) Sample(ctx context.Context) (target.Sample, error) {
	select {
	case <-f.frozen:
		select {
		case <-f.thaw:
		case <-ctx.Done():
			return target.Sample{}, ctx.Err()
		}
	default:
	}
	return f.fakeTarget.Sample(ctx)
}

// frozenDo is a request to ft: 1 ms, or, once frozen, until thaw or until
// its context ends (as a driver's cancel would end it).
func frozenDo(ft *frozenTarget) func(context.Context) error {
	return func(ctx context.Context) error {
		select {
		case <-ft.frozen:
			select {
			case <-ft.thaw:
			case <-ctx.Done():
				return ctx.Err()
			}
		default:
			time.Sleep(time.Millisecond)
		}
		return nil
	}
}

// TestFrozenServer: a server that stops answering mid-run. The measured
// phase still ends at its duration (the interval tick waiting on the
// server's sample does not hold it up), the requests left waiting are
// counted with their age, and those not back within Grace are cancelled
// and counted too. Before, the end waited for the tick (here up to 2 s)
// and the waiting requests were dropped without a trace.
func TestFrozenServer(t *testing.T) {
	for _, rate := range []float64{0, 100} { // closed loop, open loop
		ft := &frozenTarget{frozen: make(chan struct{}), thaw: make(chan struct{})}
		time.AfterFunc(300*time.Millisecond, func() { close(ft.frozen) })
		res, err := Run(context.Background(), Config{Threads: 3, Rate: rate, Duration: time.Second, Interval: 100 * time.Millisecond,
			Grace: 200 * time.Millisecond, SampleTimeout: 2 * time.Second}, ft, &funcWorkload{do: frozenDo(ft)})
		close(ft.thaw)
		if err != nil {
			t.Fatal(err)
		}
		if res.Elapsed > 1800*time.Millisecond {
			t.Errorf("rate %v: measured %v of a 1 s run: the end waited for the stuck tick", rate, res.Elapsed)
		}
		in := res.InFlight
		if in.Requests != 3 || in.Oldest < 400*time.Millisecond || in.Unfinished != 3 {
			t.Errorf("rate %v: in flight at the end %+v, want 3 requests, the oldest waiting since the freeze, all 3 cancelled after Grace", rate, in)
		}
		if res.Total.Total().Requests == 0 {
			t.Errorf("rate %v: no request counted before the freeze", rate)
		}
		var last Interval
		for _, iv := range res.Intervals {
			last = iv
		}
		if last.End > time.Second+50*time.Millisecond {
			t.Errorf("rate %v: the last interval ends at %v, after the measured phase", rate, last.End)
		}
		// The intervals after the freeze had a request waiting through
		// them (all but the moment between the interval's start and the
		// first stuck request's, as report.stallsOf allows): stalls, not
		// idle workers.
		if last.OldestInFlight < (last.End-last.Start)*9/10 || last.OldestInFlight < 400*time.Millisecond {
			t.Errorf("rate %v: the last interval (%v-%v) had its oldest request in flight for %v", rate, last.Start, last.End, last.OldestInFlight)
		}
	}
}

// downTarget's server goes away at down: every request then fails with a
// lost connection, and every reconnect is refused.
type downTarget struct {
	fakeTarget
	down chan struct{}
}

var errRefused = errors.New("fake: connection refused")

func (d *downTarget) Connect(ctx context.Context) (target.Conn, error) {
	select {
	case <-d.down:
		return nil, errRefused
	default:
	}
	return d.fakeTarget.Connect(ctx)
}

// TestServerDown: a server that goes away mid-run leaves the workers
// reconnecting, not requesting: the end counts them with how long they
// have been at it, and the intervals since carry that wait, as they would
// a request's (a stall, not idle workers).
func TestServerDown(t *testing.T) {
	dt := &downTarget{down: make(chan struct{})}
	time.AfterFunc(300*time.Millisecond, func() { close(dt.down) })
	do := func(context.Context) error { // 1 ms, or a lost connection once down
		select {
		case <-dt.down:
			return errLost
		default:
			time.Sleep(time.Millisecond)
		}
		return nil
	}
	res, err := Run(context.Background(), Config{Threads: 2, Duration: time.Second, Interval: 100 * time.Millisecond}, dt, &funcWorkload{do: do})
	if err != nil {
		t.Fatal(err)
	}
	in := res.InFlight
	if in.Reconnecting != 2 || in.ReconnectingFor < 500*time.Millisecond || in.Requests != 0 {
		t.Errorf("at the end %+v, want 2 workers reconnecting for about 0.7 s and no request in flight", in)
	}
	last := res.Intervals[len(res.Intervals)-1]
	if last.Snap.Total().Requests != 0 || last.OldestInFlight < (last.End-last.Start)*9/10 {
		t.Errorf("last interval %v-%v: %d requests, longest wait %v: want none, and the reconnection covering it",
			last.Start, last.End, last.Snap.Total().Requests, last.OldestInFlight)
	}
}

// busySettleTarget burns CPU when asked to settle, as closing connections
// and waiting for a server's statistics cost after the measured phase.
type busySettleTarget struct {
	fakeTarget
	burn time.Duration
}

func (b *busySettleTarget) Settle(context.Context) error {
	for start := time.Now(); time.Since(start) < b.burn; {
	}
	return nil
}

// cancelSettleTarget, asked to settle, cancels the run's context (a
// Ctrl-C during the wait) and records how its own context ended.
type cancelSettleTarget struct {
	fakeTarget
	cancelRun context.CancelFunc
	ended     error
}

func (c *cancelSettleTarget) Settle(ctx context.Context) error {
	c.cancelRun()
	<-ctx.Done()
	c.ended = ctx.Err()
	return ctx.Err()
}

// A Ctrl-C while a run waits for its target to settle (through a
// connection pooler, 10 s) ends the wait at once rather than at its bound.
func TestSettleEndsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tg := &cancelSettleTarget{cancelRun: cancel}
	if _, err := Run(ctx, Config{Threads: 1, Ops: 20}, tg, &fakeWorkload{}); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(tg.ended, context.Canceled) {
		t.Errorf("the settle's context ended with %v, want canceled by the run's (not its %v bound)", tg.ended, settleBound)
	}
}

// The last interval of a timed run ends with it and lasts about an
// interval: a tick due just before the end no longer leaves a sliver of a
// few milliseconds (whose rates and CPU share were noise, e.g. a console
// line at 3090% CPU), and the CPU ceiling used after the end (waiting for
// the workers, closing connections, settling) counts neither in the last
// interval nor in the run.
func TestLastIntervalEndsWithTheRun(t *testing.T) {
	const interval = 100 * time.Millisecond
	tg := &busySettleTarget{burn: 600 * time.Millisecond}
	// 1.02 s: the tick at 1.0 s is 20 ms before the end.
	cfg := Config{Threads: 1, Duration: 1020 * time.Millisecond, Interval: interval}
	res, err := Run(context.Background(), cfg, tg, &fakeWorkload{sleep: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	n := len(res.Intervals)
	if n < 5 {
		t.Fatalf("%d intervals", n)
	}
	for i, iv := range res.Intervals {
		if d := iv.End - iv.Start; d < interval/2-15*time.Millisecond {
			t.Errorf("interval %d of %d lasts %v (%v-%v), want at least about half of %v", i+1, n, d, iv.Start, iv.End, interval)
		}
	}
	last := res.Intervals[n-1]
	if last.End < cfg.Duration || last.End > cfg.Duration+interval {
		t.Errorf("last interval ends at %v, want the run's end (%v)", last.End, cfg.Duration)
	}
	if last.ClientCPU > 0.3 {
		t.Errorf("last interval's client CPU %.3f s includes the %v burnt settling after the end", last.ClientCPU, tg.burn)
	}
	if res.ClientCPUSeconds > 0.3 || res.ClientCPUSeconds < 0 { // the workload mostly sleeps
		t.Errorf("run's client CPU %.3f s over %v measured: includes what was burnt after the end", res.ClientCPUSeconds, res.Elapsed)
	}
}

// The open loop's steps (and their warm-ups) likewise end without a
// sliver: a tick due within half an interval of a phase's end is left to
// the end.
func TestOpenLoopStepsEndWithoutSliver(t *testing.T) {
	const interval = 100 * time.Millisecond
	cfg := Config{Threads: 2, Interval: interval, Steps: []Step{
		{Rate: 200, Duration: 520 * time.Millisecond, Warmup: 220 * time.Millisecond},
		{Rate: 400, Duration: 520 * time.Millisecond},
	}}
	res, err := Run(context.Background(), cfg, &fakeTarget{}, &fakeWorkload{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Steps) != 2 || len(res.Intervals) < 8 {
		t.Fatalf("%d steps, %d intervals", len(res.Steps), len(res.Intervals))
	}
	for i, iv := range res.Intervals {
		if d := iv.End - iv.Start; d < interval/2-15*time.Millisecond {
			t.Errorf("interval %d (step %d, warm-up %v) lasts %v (%v-%v), want at least about half of %v", i+1, iv.Step+1, iv.Warmup, d, iv.Start, iv.End, interval)
		}
	}
}

// TestWidener: an unplanned series keeps max/2 points of one tick, max/4
// of two, max/8 of four … and at least minPointsPerWidth at each width,
// so a run of any length keeps about max points, each width covering
// about the same time.
func TestWidener(t *testing.T) {
	w := newWidener(7200)
	points, ticks := 0, 0
	widthAt := map[int]int{} // width -> points kept at it
	for ticks < 365*24*3600 {
		ticks++
		if w.point() {
			points++
			widthAt[w.last]++
		}
	}
	if widthAt[1] != 3600 || widthAt[2] != 1800 || widthAt[4] != 900 || widthAt[32] != 112 || widthAt[64] != 60 || widthAt[128] != 60 {
		t.Errorf("points per width %v: want 3600 of 1 tick, 1800 of 2, 900 of 4, 112 of 32, then 60 each", widthAt)
	}
	if points > 8000 {
		t.Errorf("a year of 1 s ticks kept %d points, want about 7,200", points)
	}
	for width, n := range widthAt {
		if width <= 32 && n*width < 3500 {
			t.Errorf("width %d: %d points cover %d ticks, want about 3,600 (an hour of 1 s ticks)", width, n, n*width)
		}
	}
	off := newWidener(0)
	for range 10000 {
		if !off.point() || off.last != 1 {
			t.Fatal("max 0: every tick must be a point of one tick")
		}
	}
}

// TestUnplannedRunWidensSeries: a closed loop of Ops with MaxPoints
// keeps fewer, wider points as it goes on, and they still hold every
// request; Result.Stride says how wide they became. A run of Duration
// ignores MaxPoints.
func TestUnplannedRunWidensSeries(t *testing.T) {
	old := minPointsPerWidth
	minPointsPerWidth = 2
	defer func() { minPointsPerWidth = old }()
	const interval = 20 * time.Millisecond
	// 8 points: 4 of one tick, 2 of two, 2 of four, 2 of eight …; 2,000
	// requests of at least 1 ms last at least 100 ticks.
	cfg := Config{Threads: 1, Ops: 2000, Interval: interval, MaxPoints: 8}
	res, err := Run(context.Background(), cfg, &fakeTarget{}, &fakeWorkload{sleep: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	var sum int64
	for _, iv := range res.Intervals {
		sum += iv.Snap.Total().Requests
	}
	if sum != 2000 || res.Total.Total().Requests != 2000 {
		t.Fatalf("the points hold %d requests, the total %d, want 2000 each", sum, res.Total.Total().Requests)
	}
	ticks := int(res.Elapsed / interval)
	n := len(res.Intervals)
	if res.Stride < 8 || n > 16 || n >= ticks/2 {
		t.Fatalf("%d points over %v (%d ticks), stride %d: want at most 16 points, widened to 8 ticks or more", n, res.Elapsed, ticks, res.Stride)
	}
	// The 7th point (the first of four ticks) spans about four.
	if d := res.Intervals[6].End - res.Intervals[6].Start; d < 3*interval {
		t.Errorf("point 7 spans %v, want about 4 × %v", d, interval)
	}
	cfg = Config{Threads: 1, Duration: 400 * time.Millisecond, Interval: interval, MaxPoints: 8}
	res, err = Run(context.Background(), cfg, &fakeTarget{}, &fakeWorkload{sleep: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(res.Intervals); n < 15 || res.Stride != 1 {
		t.Errorf("a planned run of 400 ms at %v kept %d points, stride %d: want about 20 of one tick", interval, n, res.Stride)
	}
}

// TestFilesByRole: a point of the series keeps up to maxIntervalFiles
// files one by one, more added up by role; what a target did not measure
// stays marked.
func TestFilesByRole(t *testing.T) {
	few := []target.FileStat{{Name: "ceiling.db", Role: "data", Reads: 1}, {Name: "ceiling.db-wal", Role: "log", Syncs: 2}}
	if got := filesByRole(few); len(got) != 2 || got[0].Name != "ceiling.db" {
		t.Errorf("two files: %+v", got)
	}
	var many []target.FileStat
	for i := range 9 {
		many = append(many, target.FileStat{Name: fmt.Sprintf("test/ceiling_t%d.ibd", i), Role: "data", Reads: 10, Writes: 2, ReadNs: 1000, NoSyncs: true, NoWriteTime: true})
	}
	many = append(many, target.FileStat{Name: "ibtmp1", Role: "other", Writes: 3})
	got := filesByRole(many)
	if len(got) != 2 || got[0].Name != "data files" || got[0].Reads != 90 || got[0].Writes != 18 || got[0].ReadNs != 9000 ||
		!got[0].NoSyncs || !got[0].NoWriteTime || got[1].Name != "other files" || got[1].Writes != 3 || got[1].NoSyncs {
		t.Errorf("ten files: %+v, want data files (90 reads, 18 writes, 9000 ns, not measured marks kept) and other files (3 writes)", got)
	}
}

// TestDeltaFileStartedAgain: a file whose counts went back (a server that
// restarted, a file made anew) counts from zero, never negative.
func TestDeltaFileStartedAgain(t *testing.T) {
	a := &target.Sample{At: time.Now(), Files: []target.FileStat{{Name: "t.ibd", Role: "data", Reads: 500, Writes: 40}}}
	b := &target.Sample{At: a.At.Add(time.Second), Files: []target.FileStat{{Name: "t.ibd", Role: "data", Reads: 7, Writes: 45}}}
	e := Delta(a, b)
	if len(e.Files) != 1 || e.Files[0].Reads != 7 || e.Files[0].Writes != 45 {
		t.Errorf("delta %+v, want the later counts (7 reads, 45 writes)", e.Files)
	}
	b.Files[0].Reads = 520
	if e := Delta(a, b); e.Files[0].Reads != 20 || e.Files[0].Writes != 5 {
		t.Errorf("delta %+v, want 20 reads, 5 writes", e.Files)
	}
}

// TestDeltaLockTables: a table's lock-wait counter appears with its first
// wait; absent from the earlier sample it counts from zero, while other
// counters present in only one sample are left out.
func TestDeltaLockTables(t *testing.T) {
	hot := target.CtrLockTablePrefix + "ceiling.hot"
	a := &target.Sample{At: time.Now(), Counters: map[string]float64{target.CtrWaitLockMs: 100, target.CtrLockTablePrefix + "ceiling.old": 40}}
	b := &target.Sample{At: a.At.Add(time.Second), Counters: map[string]float64{target.CtrWaitLockMs: 400, target.CtrLockTablePrefix + "ceiling.old": 90, hot: 250, target.CtrLogBytes: 7}}
	e := Delta(a, b)
	if e.Counters[hot] != 250 || e.Counters[target.CtrLockTablePrefix+"ceiling.old"] != 50 || e.Counters[target.CtrWaitLockMs] != 300 {
		t.Errorf("delta %v, want ceiling.hot 250 (from zero), ceiling.old 50, wait_lock_ms 300", e.Counters)
	}
	if _, ok := e.Counters[target.CtrLogBytes]; ok {
		t.Errorf("log_bytes, absent from the first sample, has a delta: %v", e.Counters)
	}
}

// TestEndCountsEveryRequestRun: at the end of a timed closed loop, every
// request a worker ran is counted or in flight (result InFlight), never
// neither. The count of requests in flight used to be taken before the
// workers were told to stop, so a worker that finished a request in
// between started another that no figure had: two sharded bulk loads on
// SQLite left 200 rows more in the table than their merged results and
// in-flight allowance held.
func TestEndCountsEveryRequestRun(t *testing.T) {
	for i := 0; i < 40; i++ {
		var ran atomic.Int64
		w := &funcWorkload{do: func(context.Context) error { ran.Add(1); return nil }}
		res, err := Run(context.Background(), Config{Threads: 4, Duration: 20 * time.Millisecond, Interval: 10 * time.Millisecond}, &fakeTarget{}, w)
		if err != nil {
			t.Fatal(err)
		}
		counted := res.Total.Total().Requests
		if got := ran.Load(); got > counted+int64(res.InFlight.Requests) {
			t.Fatalf("run %d: %d requests ran, %d counted and %d in flight at the end", i, got, counted, res.InFlight.Requests)
		}
	}
}
