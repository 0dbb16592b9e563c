package cli

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/ceiling-db/ceiling/internal/diagnose"
	"github.com/ceiling-db/ceiling/internal/report"
	"github.com/ceiling-db/ceiling/internal/runner"
	"github.com/ceiling-db/ceiling/internal/target"
	"github.com/ceiling-db/ceiling/internal/workload"
	"github.com/ceiling-db/ceiling/internal/workload/bulkload"
)

// batchRamper is implemented by workloads whose request size can be ramped
// with --batches (bulk-load).
type batchRamper interface {
	// Batches returns --batches as given, "" without a ramp.
	Batches() string
	// SetBatch sets the rows per request of the requests that follow.
	SetBatch(n int)
}

// indexBuilder is implemented by workloads with a timed index-build phase
// after the measured run (bulk-load).
type indexBuilder interface {
	BuildIndexes(ctx context.Context, t target.Target) (bulkload.IndexBuild, bool, error)
}

// batchesSpec returns w's --batches, or "" when w has none or it was not given.
func batchesSpec(w workload.Workload) string {
	if b, ok := w.(batchRamper); ok {
		return b.Batches()
	}
	return ""
}

// defaultBatchStep is each batch-size step's measured duration without --step.
const defaultBatchStep = 10 * time.Second

// parseBatches parses a --batches spec (the --rates syntax) into batch
// sizes: whole numbers of rows from 1 to bulkload.MaxBatch. A geometric
// ramp's sizes are rounded to whole rows, duplicates dropped.
func parseBatches(spec string) ([]int, error) {
	return parseCounts(spec, "batch size", "rows", bulkload.MaxBatch)
}

// parseCounts parses a ramp of whole numbers of unit, from 1 to most, in
// the --rates syntax: a geometric ramp's values rounded, duplicates
// dropped. what names one value in errors.
func parseCounts(spec, what, unit string, most int) ([]int, error) {
	vals, err := parseRates(spec)
	if err != nil {
		// The parser speaks of rates; here the numbers are counts.
		msg := strings.NewReplacer("rate ", what+" ", " requests/s", " "+unit).Replace(err.Error())
		return nil, errors.New(msg)
	}
	geometric := strings.Contains(strings.ToLower(spec), "x")
	var out []int
	for _, v := range vals {
		r := math.Round(v)
		if !geometric && r != v {
			return nil, fmt.Errorf("%g is not a whole number of %s", v, unit)
		}
		if r < 1 || r > float64(most) {
			return nil, fmt.Errorf("%s %g: must be between 1 and %d %s", what, v, most, unit)
		}
		if n := len(out); n > 0 && out[n-1] == int(r) {
			continue
		}
		out = append(out, int(r))
	}
	return out, nil
}

// MaxRampThreads is the most threads a --threads-ramp step may have.
const MaxRampThreads = 10000

// parseThreads parses a --threads-ramp spec (the --rates syntax) into
// thread counts from 1 to MaxRampThreads, rounded (a geometric ramp) and
// without duplicates.
func parseThreads(spec string) ([]int, error) {
	return parseCounts(spec, "thread count", "threads", MaxRampThreads)
}

// sweepConfig checks the flags of a closed-loop ramp (--batches, or
// --threads-ramp when threads) and returns its values and the load of one
// step (with threads, of the step with the most).
func (f *runFlags) sweepConfig(fs *pflag.FlagSet, w workload.Workload, spec string, threads bool) ([]int, runner.Config, error) {
	var errs []error
	flag, parse, each, own := "--batches", parseBatches, "batch size", "batch"
	if threads {
		flag, parse, each, own = "--threads-ramp", parseThreads, "thread count", "threads"
	}
	vals, err := parse(spec)
	if err != nil {
		errs = append(errs, fmt.Errorf("%s %s", flag, err))
	}
	for _, name := range []string{"rate", "rates", "step-warmup", "duration", "arrival", "late-after", own, "shard", "isolate"} {
		if name == "isolate" && f.isolate == 0 {
			continue // --isolate 0: skipped, as it is in a ramp
		}
		if fs.Lookup(name) != nil && fs.Changed(name) {
			errs = append(errs, fmt.Errorf("--%s does not apply to a %s ramp: each %s runs closed loop for --step (or --ops requests), after --warmup", name, flag, each))
		}
	}
	if f.threads <= 0 && !threads {
		errs = append(errs, fmt.Errorf("--threads must be at least 1, got %d", f.threads))
	}
	if f.repeat < 1 {
		errs = append(errs, fmt.Errorf("--repeat must be at least 1, got %d", f.repeat))
	}
	if f.ops < 0 || (f.ops == 0 && fs.Changed("ops")) {
		errs = append(errs, fmt.Errorf("--ops must be positive, got %d", f.ops))
	}
	if fs.Changed("step") && f.ops > 0 {
		errs = append(errs, errors.New("--step and --ops are exclusive: a batch step runs for a duration or a number of requests"))
	}
	if f.step < MinStep {
		errs = append(errs, fmt.Errorf("--step must be at least %v (a step measures a rate over its duration), got %v", MinStep, f.step))
	}
	if f.warmup < 0 {
		errs = append(errs, fmt.Errorf("--warmup must be zero or more, got %v", f.warmup))
	}
	if f.interval < MinInterval {
		errs = append(errs, fmt.Errorf("--interval must be at least %v (the kernel counts CPU time in 10 ms ticks, and each interval samples the server), got %v", MinInterval, f.interval))
	}
	if f.reportEvery <= 0 {
		errs = append(errs, fmt.Errorf("--report-every must be positive, got %v", f.reportEvery))
	}
	if err := w.Validate(); err != nil {
		errs = append(errs, err)
	} else if err := workload.ColdStartError(w, flag+"'s steps"); err != nil {
		errs = append(errs, err)
	}
	if fs.Changed("emulate") {
		if f.emulation, err = emulationOf(f.emulate); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return nil, runner.Config{}, joinUsage(errs)
	}
	cfg := runner.Config{Threads: f.threads, Interval: f.interval, Warmup: f.warmup}
	if threads {
		cfg.Threads = slices.Max(vals)
	}
	switch {
	case f.ops > 0:
		cfg.Ops = f.ops
	case fs.Changed("step"):
		cfg.Duration = f.step
	default:
		cfg.Duration = defaultBatchStep
	}
	return vals, cfg, nil
}

// runSweep runs a closed-loop ramp: the data is prepared once, then each
// step runs as its own closed-loop measured run on it, one after the
// other; the result has one step each. A bulk-load batch-size ramp
// (--batches, like the sources' limited bulk tests) varies the rows per
// request, and its index-build phase follows the last step; a thread ramp
// (--threads-ramp, like HammerDB's autopilot) varies the workers.
func (e *env) runSweep(ctx context.Context, name string, w workload.Workload, f *runFlags, fs *pflag.FlagSet) (err error) {
	rb, _ := w.(batchRamper)
	threads := f.threadRamp != ""
	spec := f.threadRamp
	if !threads {
		spec = rb.Batches()
	}
	vals, cfg, err := f.sweepConfig(fs, w, spec, threads)
	if err != nil {
		return err
	}
	if f.emulation != nil && !isSQLite(e.dsn(&f.targetFlags)) {
		return &UsageError{Err: errEmulateServer}
	}
	if e.checkOnly {
		return nil
	}
	t, closeOnce, err := e.openForRun(ctx, f.out, &f.targetFlags, target.Options{MaxConns: cfg.Threads, Multiplexed: runner.Multiplexes(cfg, w)}, name)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := closeOnce(); cerr != nil && err == nil {
			err = fmt.Errorf("restore settings: %w", cerr)
		}
	}()
	if err := e.prepareWorkload(ctx, t, name, w); err != nil {
		return err
	}
	info := t.Info()
	cores := runtime.NumCPU()
	params := runParams(name, w, cfg, info, cores)
	e.probe(ctx, t, f, &params)
	each := fmt.Sprintf("%v each", cfg.Duration)
	if cfg.Ops > 0 {
		each = fmt.Sprintf("%d requests each", cfg.Ops)
	}
	if cfg.Warmup > 0 {
		each += fmt.Sprintf(" after %v warm-up", cfg.Warmup)
	}
	if threads {
		fmt.Fprintf(e.stdout, "running %s: %d thread counts %v, %s, closed loop, durability %s\n",
			name, len(vals), vals, each, info.Durability.Mode)
	} else {
		fmt.Fprintf(e.stdout, "running %s: %d batch sizes %v, %s, %s, closed loop, durability %s\n",
			name, len(vals), vals, diagnose.Threads(f.threads), each, info.Durability.Mode)
	}
	if note := poolerNote(info, "each step"); note != "" {
		fmt.Fprintln(e.stdout, "note: "+note)
	}

	var (
		reps     [][]*runner.Result // each run's steps
		stopErr  error
		stopped  bool
		stopRun  int // the run the error stopped, and how many of its steps it measured
		stopDone int
	)
	// Held while measuring only: the data is loaded at full speed, and
	// the index build after the steps runs without them. Released on
	// every way out (releasing twice is harmless): the limits are the
	// VFS's, kept by file name beyond this target.
	release := func() {}
	defer func() { release() }()
	for k := 1; k <= f.repeat && !stopped; k++ {
		if f.repeat > 1 {
			fmt.Fprintf(e.stdout, "\n== run %d of %d\n", k, f.repeat)
		}
		if k > 1 {
			// Each run on data prepared afresh (or, for a dataset
			// loaded by prepare, as the run before left it), like a
			// repeated run's.
			if err := e.prepareWorkload(ctx, t, name, w); err != nil {
				stopErr, stopRun = err, k
				break
			}
		}
		release = e.holdLimits(t, f.emulation, true)
		var results []*runner.Result
		for _, v := range vals {
			step := cfg
			if threads {
				step.Threads = v
				fmt.Fprintf(e.stdout, "\n-- %s\n", diagnose.Threads(v))
			} else {
				rb.SetBatch(v)
				fmt.Fprintf(e.stdout, "\n-- batch %d rows\n", v)
			}
			live := &report.Live{W: e.stdout, TTY: e.isTTY, Every: f.reportEvery, Cores: cores, NoBytes: workload.NoBytes(w)}
			step.OnInterval = live.Interval
			res, err := runner.Run(ctx, step, t, w)
			live.Done()
			if err != nil {
				if len(results) == 0 && len(reps) == 0 {
					return err
				}
				stopErr, stopped, stopRun, stopDone = err, true, k, len(results)
				break
			}
			results = append(results, res)
			if res.Partial {
				stopped = true
				break
			}
		}
		release()
		if len(results) > 0 {
			reps = append(reps, results)
		}
		if f.repeat > 1 && len(results) > 0 && !stopped {
			fmt.Fprintf(e.stdout, "run %d: %s\n", k, sweepLine(vals, results, threads))
		}
	}
	if len(reps) == 0 {
		return stopErr
	}
	post := e.afterLoad(ctx, t, w)
	results := reps[0]

	wp := w.Params()
	if threads {
		wp["threads_ramp"] = vals[:len(results)]
	} else {
		delete(wp, "batch")
		wp["batch_sizes"] = vals[:len(results)]
	}
	params.WParams = wp
	cerr := closeOnce()
	params.Info = t.Info()
	build, what := report.BuildBatches, "batch sizes"
	if threads {
		build, what = report.BuildThreads, "thread counts"
	}
	var doc *report.Result
	if f.repeat > 1 {
		buildRep := report.BuildBatchesRepeat
		if threads {
			buildRep = report.BuildThreadsRepeat
		}
		doc, err = buildRep(params, vals, reps)
	} else {
		doc, err = build(params, vals, results)
	}
	if err != nil {
		return err
	}
	post.apply(doc)
	switch {
	case stopErr != nil && f.repeat > 1:
		doc.Partial = true
		doc.Notes = append(doc.Notes, fmt.Sprintf("stopped in run %d of %d, after %d of its %d %s: %s", stopRun, f.repeat, stopDone, len(vals), what, oneLine(stopErr.Error())))
	case stopErr != nil:
		doc.Partial = true
		doc.Notes = append(doc.Notes, fmt.Sprintf("stopped after %d of %d %s: %s", len(results), len(vals), what, oneLine(stopErr.Error())))
	}
	return e.finish(f.out, doc, cerr, stopErr)
}

// postLoad is what happened after the measured run of a bulk load: the
// index-build phase, and whether the log/data ratio applies.
type postLoad struct {
	bulk   bool
	ib     bulkload.IndexBuild
	built  bool
	errMsg string
}

// afterLoad runs the timed index-build phase of a workload that has one
// (bulk-load, unless --no-index) and prints how long it took. A failed
// build is reported in the result, not fatal: the load was measured.
func (e *env) afterLoad(ctx context.Context, t target.Target, w workload.Workload) *postLoad {
	_, bulk := w.(batchRamper)
	p := &postLoad{bulk: bulk}
	ib, ok := w.(indexBuilder)
	if !ok || ctx.Err() != nil {
		return p
	}
	fmt.Fprintf(e.stdout, "\nbuilding secondary indexes (timed, after the load) ...\n")
	b, built, err := ib.BuildIndexes(ctx, t)
	switch {
	case err != nil:
		p.errMsg = oneLine(err.Error())
		fmt.Fprintf(e.stdout, "index build failed: %s\n", p.errMsg)
	case built:
		p.ib, p.built = b, true
		fmt.Fprintf(e.stdout, "built %d secondary indexes on %d rows in %.2f s\n", b.Indexes, b.Rows, b.Elapsed.Seconds())
	default:
		fmt.Fprintln(e.stdout, "index build skipped (--no-index)")
	}
	return p
}

// apply records the post-load figures in doc: the log/data ratio of a bulk
// load and the index build.
func (p *postLoad) apply(doc *report.Result) {
	if p == nil || !p.bulk {
		return
	}
	fig := func(k string, v float64) {
		if doc.Figures == nil {
			doc.Figures = map[string]float64{}
		}
		doc.Figures[k] = v
	}
	if doc.Evidence != nil && doc.Summary.Bytes != nil {
		if r := report.LogRatio(doc.Evidence.Counters, *doc.Summary.Bytes); r != nil {
			fig("log_bytes_per_data_byte", *r)
			logMBs := "n/a"
			if v, ok := doc.Evidence.PerSec[target.CtrLogBytes]; ok {
				logMBs = fmt.Sprintf("%.2f", v/report.MB)
			}
			mb := "n/a"
			if v := doc.Summary.MBPerMin; v != nil {
				mb = fmt.Sprintf("%.2f", *v)
			}
			doc.Notes = append(doc.Notes, fmt.Sprintf("bulk load: %s MB/min of row data, log %s MB/s; the server wrote %.2f bytes of log per byte of row data",
				mb, logMBs, *r))
		}
	}
	switch {
	case p.built:
		fig("index_build_s", p.ib.Elapsed.Seconds())
		fig("index_build_rows", float64(p.ib.Rows))
		fig("index_build_indexes", float64(p.ib.Indexes))
		doc.Notes = append(doc.Notes, fmt.Sprintf("built %d secondary indexes on %d rows in %.2f s, after the load (not in the figures above)",
			p.ib.Indexes, p.ib.Rows, p.ib.Elapsed.Seconds()))
	case p.errMsg != "":
		doc.Notes = append(doc.Notes, "secondary index build failed: "+p.errMsg)
	}
}

// sweepLine summarises one run of a closed-loop sweep in a line (printed
// after each repeat): each step's requests/s (thread counts) or MB/min
// loaded (batch sizes).
func sweepLine(vals []int, rs []*runner.Result, threads bool) string {
	parts := make([]string, 0, len(rs))
	for i, r := range rs {
		tot, sec := r.Total.Total(), r.Elapsed.Seconds()
		v := math.NaN()
		if sec > 0 {
			v = float64(tot.Requests) / sec
			if !threads {
				v = float64(tot.Bytes) / (1 << 20) / sec * 60
			}
		}
		parts = append(parts, fmt.Sprintf("%d→%.1f", vals[i], v))
	}
	if threads {
		return "req/s by thread count: " + strings.Join(parts, ", ")
	}
	return "MB/min by batch size: " + strings.Join(parts, ", ")
}
