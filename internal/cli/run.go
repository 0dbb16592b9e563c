package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ceiling-db/ceiling/internal/diagnose"
	"github.com/ceiling-db/ceiling/internal/hostprof"
	"github.com/ceiling-db/ceiling/internal/report"
	"github.com/ceiling-db/ceiling/internal/runner"
	"github.com/ceiling-db/ceiling/internal/target"
	"github.com/ceiling-db/ceiling/internal/workload"
	"github.com/ceiling-db/ceiling/internal/workload/all"
)

type runFlags struct {
	targetFlags
	threads  int
	duration time.Duration
	ops      int64
	warmup   time.Duration
	interval time.Duration
	// seriesNote says why the series' interval is not --interval's
	// default, or what a long run at the --interval given keeps (see
	// seriesInterval); "" otherwise.
	seriesNote  string
	reportEvery time.Duration
	out         string
	repeat      int
	open        openFlags
	probeDir    string        // --probe-dir: where the flush probe writes ("" = default)
	noProbe     bool          // --no-probe
	isolate     time.Duration // --isolate: each operation type alone after the mix (Isolator workloads)
	emulate     string        // --emulate: a profile whose limits the SQLite target's files are held to
	emulation   *target.Emulation

	// Open loop (LT): one rate, or a ramp of steps.
	rate       float64
	rates      string
	threadRamp string // --threads-ramp: closed-loop steps of these thread counts (batches.go)
	step       time.Duration
	stepWarmup time.Duration

	shard shardFlags // --shard: one of several processes (shard.go)
}

// openFlags are the open-loop flags shared by run and knee.
type openFlags struct {
	arrival   string
	lateAfter time.Duration
	seed      uint64
	// seedOf reads the seed: the workload's own --seed when it has one
	// (one flag seeds the data, the choices and the arrivals), else ours.
	seedOf func() (uint64, error)
}

// bind binds --arrival, --late-after and --seed. It must run after the
// workload's flags are bound, to share a workload's --seed.
func (o *openFlags) bind(fs *pflag.FlagSet) {
	fs.StringVar(&o.arrival, "arrival", runner.ArrivalUniform, "open loop: arrival process, uniform or poisson")
	o.lateAfter = time.Second
	fs.Var(durationValue{&o.lateAfter}, "late-after", "open loop: a request that cannot start this long after its scheduled time is skipped and counted late")
	if fl := fs.Lookup("seed"); fl != nil {
		fl.Usage += "; also seeds the poisson arrivals"
		o.seedOf = func() (uint64, error) {
			v, err := strconv.ParseUint(fl.Value.String(), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("--seed: %q is not a seed", fl.Value.String())
			}
			return v, nil
		}
		return
	}
	fs.Uint64Var(&o.seed, "seed", 1, "open loop: seed of the poisson arrivals (the same seed gives the same schedule)")
	o.seedOf = func() (uint64, error) { return o.seed, nil }
}

// validate checks the open-loop flags; open says whether the open loop
// was selected (--rate, --rates or knee).
func (o *openFlags) validate(fs *pflag.FlagSet, open bool) []error {
	var errs []error
	if !open {
		for _, name := range []string{"arrival", "late-after"} {
			if fs.Changed(name) {
				errs = append(errs, fmt.Errorf("--%s applies to the open loop: add --rate or --rates", name))
			}
		}
	}
	switch o.arrival {
	case runner.ArrivalUniform, runner.ArrivalPoisson:
	default:
		errs = append(errs, fmt.Errorf("--arrival must be %s or %s, got %q", runner.ArrivalUniform, runner.ArrivalPoisson, o.arrival))
	}
	if o.lateAfter <= 0 {
		errs = append(errs, fmt.Errorf("--late-after must be positive, got %v", o.lateAfter))
	}
	return errs
}

func (e *env) runCmd() *cobra.Command {
	return e.workloadParent("run", "Prepare a workload's data, run it, and report the result", `  ceiling run inserts-deletes -c 4 -T 20s          # sqlite:ceiling.db, closed loop
  ceiling run single-inserts --durability relaxed --db postgres://postgres@localhost/postgres
  ceiling run mixed --rates 100:1000:100 --step 20s -c 8   # open-loop ramp
  ceiling run updates --threads-ramp 1:32:x2 --step 20s    # throughput by thread count
  ceiling run tpcc -c 8 -T 60s --db mysql://root@127.0.0.1:3306/test   # after ceiling prepare tpcc`, e.runWorkloadCmd)
}

func (e *env) runWorkloadCmd(name string) *cobra.Command {
	meta, _ := all.Registry().Lookup(name)
	w := meta.New()
	f := &runFlags{}
	prepares := "The run prepares the workload's tables (dropping ceiling's previous copy),\n"
	repeat := `--repeat N runs the whole test N times, preparing the data afresh each time,
and reports each run, their mean, standard deviation and 95% confidence
interval, in one result.`
	if _, ok := w.(workload.Attacher); ok {
		prepares = "The run uses the dataset `ceiling prepare " + name + "` loaded (as it is),\n"
		repeat = `--repeat N runs the whole test N times on the prepared dataset (as each run
leaves it) and reports each run, their mean, standard deviation and 95%
confidence interval, in one result.`
	}
	example := fmt.Sprintf(`  ceiling run %[1]s
  ceiling run %[1]s -c 4 -T 20s
  ceiling run %[1]s --ops 10000 --durability full
  ceiling run %[1]s -R 200 -T 30s                    # open loop at 200 requests/s
  ceiling run %[1]s --rates 20:200:20 --step 30s     # open-loop ramp, 10 steps
  ceiling run %[1]s --rates 10:1000:x2 --step 10s --arrival poisson
  ceiling run %[1]s --ops 10000 --repeat 3           # UT1..UT3 with mean and spread
  ceiling run %[1]s --threads-ramp 1:32:x2 --step 20s  # closed loop at 1, 2, 4 … 32 threads
  ceiling run %[1]s --threads-ramp 4,8,16 --repeat 3   # is 16 really better than 8?
  ceiling run %[1]s --db postgres://localhost/db --probe-dir /var/lib/postgresql  # probe the WAL's disk
  ceiling run %[1]s --db sqlite:/tmp/bench.db --warmup 5s --out /tmp/results
  ceiling run %[1]s --emulate azure-2014-s1             # SQLite held to a tier's log rate
  ceiling run %[1]s -c 12 --shard 0/3 --out shards      # one of 3 load generators; then ceiling merge shards/`, name)
	if r, ok := w.(workload.Reader); ok && r.ReadsOnly() {
		example += fmt.Sprintf("\n  ceiling run %[1]s --reuse --db postgres://standby/db   # a hot standby or read replica: tables prepared on its primary", name)
	}
	if meta.RunExamples != "" {
		example = meta.RunExamples
	}
	cmd := &cobra.Command{
		Use:   name + " [flags]",
		Short: meta.Description,
		Long: meta.Description + `.

` + prepares + `runs the warm-up (excluded from the figures), then measures for --duration or
until --ops requests are done, printing a line per interval. It ends with a
summary on the console and a JSON result in --out. Ctrl-C stops the run
cleanly, still writes the (partial) result, and exits with status 130 (a
pipe on standard output whose reader went away, as in | head, stops it
the same way, with status 141).

By default the load is a closed loop: each of the -c workers sends its next
request as soon as the previous one returns. --threads-ramp runs one such
closed-loop step per thread count, one after the other on the same data,
and prints requests/s by thread count, the scaling against the first
step and each step's verdict (where adding workers stops paying, and
why); with --repeat the whole ramp runs that many times, and the best
count is checked against the run-to-run spread. --rate R runs an open loop
instead: R requests/s in total are scheduled whatever the completions,
latency is measured from each request's scheduled start, and a request that
cannot start within --late-after is skipped and counted late. --rates runs a
ramp of such steps, each --step long, and prints the ramp table (requested vs
achieved rate, late, failed, latency, log and data IO, saturation). In an
open loop -c bounds the requests in flight: when every worker is busy,
requests wait for one (start lag, counted in their latency), the step's
service time (steps[].service_ms) excludes that wait, and the verdict says
when the workers, not the database, set the rate (client: raise -c).

` + repeat + `

When the server runs on this host (SQLite always; PostgreSQL or MySQL over
a Unix socket, localhost or a loopback address), ceiling first times 200
writes of 4 KiB + fdatasync of a file in --probe-dir (result key "host"),
and, on Linux, reads the kernel's counters of the block device holding the
server's log directory while the test runs (result key "log_device": cache
flushes, writes and their times). Where the server does not time its log
syncs, the verdict takes a sync's time from that device (one write and one
cache flush, a lower bound of what a commit waits), else from its sampled
log-IO waits or the probe: syncs per request × that time ÷ the mean request
time. By default the probe writes next to the SQLite file, or, for a server
that names its log directory (PostgreSQL: to a superuser), in the temporary
directory or the --out directory, whichever is on the log's file system; a
probe known to be on another file system (a tmpfs /tmp) is not used for the
estimate. Point --probe-dir at the server's log device for a better
estimate; --no-probe skips it. For a server on another host it times up to
200 round trips to the server instead (empty queries, MySQL's COM_PING; at
most 2 s; result key "network"): every request waits at least one, and the network verdict
compares it with each request's time.` + docSection(meta),
		Example: example,
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fs := cmd.Flags()
			if err := phaseFlags(fs, "run"); err != nil {
				return err
			}
			if err := f.shard.setup(fs, name, w, f, e.dsn(&f.targetFlags)); err != nil {
				return err
			}
			if spec := batchesSpec(w); spec != "" || f.threadRamp != "" {
				if spec != "" && f.threadRamp != "" {
					return usagef("--batches and --threads-ramp are exclusive: a ramp varies one thing")
				}
				return e.runSweep(cmd.Context(), name, w, f, fs) // batches.go (checks its flags, then stops here under checkOnly)
			}
			if !fs.Changed("duration") && (f.ops > 0 || f.rates != "") {
				f.duration = 0
			}
			cfg, err := f.config(fs, w)
			if err != nil {
				return err
			}
			if f.emulation != nil && !isSQLite(e.dsn(&f.targetFlags)) {
				return &UsageError{Err: errEmulateServer}
			}
			if e.checkOnly {
				return nil
			}
			return e.run(cmd.Context(), name, w, f, cfg)
		},
	}
	fs := cmd.Flags()
	f.bind(fs)
	fs.StringVar(&f.durability, "durability", "server", "commit durability: server (leave the setting alone), full, or relaxed")
	fs.IntVarP(&f.threads, "threads", "c", 1, "worker threads, each with its own connection")
	f.duration = 60 * time.Second
	fs.VarP(durationValue{&f.duration}, "duration", "T", "measured duration (e.g. 30s, 5m; plain numbers are seconds)")
	fs.Int64Var(&f.ops, "ops", 0, "stop after this many measured requests in total (instead of --duration)")
	fs.Var(durationValue{&f.warmup}, "warmup", "warm-up run before measuring, excluded from the figures")
	f.interval = time.Second
	fs.Var(durationValue{&f.interval}, "interval", fmt.Sprintf("granularity of the time series in the result (left at its default, a run planned over %d of them keeps a point every few whole seconds instead, at most %d points)", MaxSeriesPoints, MaxSeriesPoints))
	f.reportEvery = 10 * time.Second
	fs.Var(durationValue{&f.reportEvery}, "report-every", "how often a progress line is kept on the console")
	fs.StringVar(&f.out, "out", "results", outUsage)
	fs.Float64VarP(&f.rate, "rate", "R", 0, "open loop: schedule this many requests/s in total (latency from the scheduled start)")
	fs.StringVar(&f.rates, "rates", "", "open-loop ramp: START:STOP:STEP (20:200:20), START:STOP:xFACTOR (10:1000:x2) or a list (50,100,200), requests/s")
	f.step = 30 * time.Second
	fs.Var(durationValue{&f.step}, "step", "with --rates: measured duration of each step (--threads-ramp, bulk-load --batches: default 10s)")
	fs.Var(durationValue{&f.stepWarmup}, "step-warmup", "with --rates: warm-up at each step's rate before measuring it")
	fs.StringVar(&f.threadRamp, "threads-ramp", "", "closed-loop ramp of thread counts: START:STOP:STEP (2:16:2), START:STOP:xFACTOR (1:64:x2) or a list (1,2,4,8); each count runs as its own step for --step (default 10s), one after the other on the same data, like HammerDB's autopilot")
	fs.IntVar(&f.repeat, "repeat", 1, "run the whole test this many times (re-preparing the data) and report mean, spread and 95% CI")
	fs.StringVar(&f.probeDir, "probe-dir", "", "local server: directory for the fsync probe before the run (default: the SQLite file's directory, else "+os.TempDir()+" or --out, whichever is on the server's log file system); put it on the server's log device")
	fs.BoolVar(&f.noProbe, "no-probe", false, "skip the probe before the run: the fsync probe of a local server's host, or the round-trip probe of a server on another host")
	fs.StringVar(&f.emulate, "emulate", "", "SQLite: hold the database's files to a profile's log and data-file limits while measuring (a shipped profile name, see ceiling profiles, or a YAML file), to reproduce a tier's ceiling locally and check predict against it")
	w.Flags(fs)
	if _, ok := w.(workload.Isolator); ok {
		f.isolate = defaultIsolate
		fs.Var(durationValue{&f.isolate}, "isolate", "after the measured mix, run each operation type alone for this long (closed loop, same threads, after a 1s warm-up) and report its own costs, verdict and share of the mix; 0 skips it")
	}
	f.open.bind(fs)
	f.shard.bind(fs, runShardUsage)
	fs.BoolVar(&e.printResult, "print-result", false, "also print the JSON result on the console, one line between "+report.FramedBegin+" and "+report.FramedEnd+" (where only the log is kept, as a Kubernetes pod's: ceiling merge reads such logs)")
	return cmd
}

// docSection is a workload's own help section (Meta.Doc), after a blank
// line, or "".
func docSection(m workload.Meta) string {
	if m.Doc == "" {
		return ""
	}
	return "\n\n" + m.Doc
}

// defaultIsolate is how long each operation type of a mixed workload runs
// alone after the mix by default.
const defaultIsolate = 5 * time.Second

// isolateWarmup is the warm-up before each operation runs alone.
const isolateWarmup = time.Second

// config checks the flags and builds the runner configuration. Every
// problem found is reported, in one line.
func (f *runFlags) config(fs *pflag.FlagSet, w workload.Workload) (runner.Config, error) {
	var errs []error
	if f.threads <= 0 {
		errs = append(errs, fmt.Errorf("--threads must be at least 1, got %d", f.threads))
	}
	ramp := fs.Changed("rates")
	open := ramp || fs.Changed("rate")
	switch {
	case fs.Changed("rate") && ramp:
		errs = append(errs, errors.New("--rate and --rates are exclusive: --rate runs one open-loop rate, --rates a ramp of steps"))
	case ramp:
		for _, name := range []string{"duration", "ops", "warmup"} {
			if fs.Changed(name) {
				errs = append(errs, fmt.Errorf("--%s does not apply to a --rates ramp: each step runs for --step, after --step-warmup", name))
			}
		}
	default:
		for _, name := range []string{"step", "step-warmup"} {
			if fs.Changed(name) {
				errs = append(errs, fmt.Errorf("--%s needs --rates", name))
			}
		}
	}
	if !ramp {
		if f.duration < 0 || (f.duration == 0 && f.ops == 0) {
			errs = append(errs, fmt.Errorf("--duration must be positive, got %v", f.duration))
		} else if f.duration > 0 && f.duration < MinStep {
			errs = append(errs, fmt.Errorf("--duration must be at least %v (a run measures rates over its duration; --ops N stops after N requests), got %v", MinStep, f.duration))
		}
		if f.ops < 0 || (f.ops == 0 && fs.Changed("ops")) {
			errs = append(errs, fmt.Errorf("--ops must be positive, got %d", f.ops))
		}
		if f.warmup < 0 {
			errs = append(errs, fmt.Errorf("--warmup must be zero or more, got %v", f.warmup))
		}
	}
	if fs.Changed("rate") && !(f.rate > 0 && f.rate <= maxRate) {
		errs = append(errs, fmt.Errorf("--rate must be above 0 and at most %.0f requests/s, got %g (leave it out for a closed loop)", maxRate, f.rate))
	}
	var rates []float64
	if ramp {
		var err error
		if rates, err = parseRates(f.rates); err != nil {
			errs = append(errs, fmt.Errorf("--rates %s", err))
		}
		if f.step < MinStep {
			errs = append(errs, fmt.Errorf("--step must be at least %v (a step measures a rate over its duration), got %v", MinStep, f.step))
		}
		if f.stepWarmup < 0 {
			errs = append(errs, fmt.Errorf("--step-warmup must be zero or more, got %v", f.stepWarmup))
		}
	}
	errs = append(errs, f.open.validate(fs, open)...)
	if f.repeat < 1 {
		errs = append(errs, fmt.Errorf("--repeat must be at least 1, got %d", f.repeat))
	}
	if f.interval < MinInterval {
		errs = append(errs, fmt.Errorf("--interval must be at least %v (the kernel counts CPU time in 10 ms ticks, and each interval samples the server), got %v", MinInterval, f.interval))
	}
	if f.isolate < 0 || (f.isolate > 0 && f.isolate < MinStep) {
		errs = append(errs, fmt.Errorf("--isolate must be 0 (skip) or at least %v, got %v", MinStep, f.isolate))
	}
	if f.reportEvery <= 0 {
		errs = append(errs, fmt.Errorf("--report-every must be positive, got %v", f.reportEvery))
	}
	if err := w.Validate(); err != nil {
		errs = append(errs, err)
	} else if err := workload.OpenLoopError(w, "--rate or --rates"); open && err != nil {
		errs = append(errs, err)
	} else if err := workload.CheckThreads(w, f.threads); err != nil {
		errs = append(errs, err)
	} else if len(w.Ops()) < 2 {
		f.isolate = 0 // one operation (a custom file's only request): the run measured it alone
	}
	switch {
	case ramp:
		if err := workload.ColdStartError(w, "--rates' steps"); err != nil {
			errs = append(errs, err)
		}
	case f.warmup > 0:
		if err := workload.ColdStartError(w, "--warmup "+f.warmup.String()); err != nil {
			errs = append(errs, err)
		}
	}
	if fs.Changed("probe-dir") {
		if f.noProbe {
			errs = append(errs, errors.New("--probe-dir and --no-probe are exclusive"))
		} else if err := checkDir(f.probeDir); err != nil {
			errs = append(errs, fmt.Errorf("--probe-dir %s", err))
		}
	}
	seed, err := f.open.seedOf()
	if err != nil {
		errs = append(errs, err)
	}
	if fs.Changed("emulate") {
		if f.emulation, err = emulationOf(f.emulate); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return runner.Config{}, joinUsage(errs)
	}
	cfg := runner.Config{Threads: f.threads, Interval: f.interval}
	switch {
	case ramp:
		for _, r := range rates {
			cfg.Steps = append(cfg.Steps, runner.Step{Rate: r, Duration: f.step, Warmup: f.stepWarmup})
		}
	default:
		cfg.Duration, cfg.Ops, cfg.Warmup, cfg.Rate = f.duration, f.ops, f.warmup, f.rate
	}
	if open {
		cfg.Arrival, cfg.LateAfter, cfg.Seed = f.open.arrival, f.open.lateAfter, seed
	}
	if err := f.shard.split(f, &cfg); err != nil {
		return runner.Config{}, err
	}
	cfg.Interval, f.seriesNote = seriesInterval(cfg, fs.Changed("interval"))
	if unplanned(cfg) && !fs.Changed("interval") {
		cfg.MaxPoints = MaxSeriesPoints
	}
	if err := cfg.Validate(); err != nil { // a flag combination missed above
		return runner.Config{}, &UsageError{Err: err}
	}
	return cfg, nil
}

// MaxSeriesPoints bounds the points a run's series keeps when --interval
// is left at its default: each holds ~3 KB of memory while the run goes on
// and ~2 KB of the JSON result, so two hours at 1 s keep ~20 MB and write
// ~15 MB; a longer planned run keeps a point every few seconds instead.
const MaxSeriesPoints = 7200

// seriesInterval is the series' interval for cfg, planned to last
// (warm-up included) over MaxSeriesPoints intervals of cfg.Interval: the
// default widened to whole seconds that keep at most MaxSeriesPoints, with
// a note; a --interval the user gave is kept, with a note of the points
// it keeps. An open loop of --ops lasts --ops ÷ --rate. A closed loop of
// --ops has no planned length: its series widens as it grows instead
// (unplanned, runner.Config.MaxPoints).
func seriesInterval(cfg runner.Config, given bool) (time.Duration, string) {
	planned := cfg.Warmup + cfg.Duration
	if cfg.Duration == 0 && cfg.Rate > 0 {
		planned += time.Duration(float64(cfg.Ops) / cfg.Rate * float64(time.Second))
	}
	for _, st := range cfg.Steps {
		planned += st.Warmup + st.Duration
	}
	if unplanned(cfg) || cfg.Interval <= 0 || planned <= cfg.Interval*MaxSeriesPoints {
		return cfg.Interval, ""
	}
	points := int64(planned / cfg.Interval)
	if given {
		return cfg.Interval, fmt.Sprintf("--interval %v over %v keeps %s points (~%d MB of memory, ~%d MB of JSON)",
			cfg.Interval, planned, diagnose.Thousands(float64(points)), points*3/1000, points*2/1000)
	}
	iv := (planned + MaxSeriesPoints*time.Second - 1) / (MaxSeriesPoints * time.Second) * time.Second
	return iv, fmt.Sprintf("the series keeps a point every %v (%v at %v would be %s points; --interval sets it)",
		iv, planned, cfg.Interval, diagnose.Thousands(float64(points)))
}

// unplanned says whether cfg runs until its --ops are done, however long
// that takes: a closed loop without --duration.
func unplanned(cfg runner.Config) bool {
	return cfg.Duration == 0 && cfg.Rate == 0 && len(cfg.Steps) == 0
}

// widenedNote says how an unplanned run's series widened (Result.Stride,
// runner.Config.MaxPoints), or "" when it kept one width.
func widenedNote(interval time.Duration, results []*runner.Result) string {
	stride := 1
	for _, r := range results {
		stride = max(stride, r.Stride)
	}
	if stride <= 1 {
		return ""
	}
	return fmt.Sprintf("the series widened its points as the run went on (a closed loop of --ops has no planned length, and the series keeps about %s points): %v each for the first %s, then twice as long for half as many, up to %v (--interval keeps one width)",
		diagnose.Thousands(MaxSeriesPoints), interval, diagnose.Thousands(MaxSeriesPoints/2), interval*time.Duration(stride))
}

// checkDir checks that dir is an existing directory; the error is
// "DIR: reason".
func checkDir(dir string) error {
	if dir == "" {
		return errors.New("is empty")
	}
	st, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("%s: %v", dir, unwrapPath(err))
	}
	if !st.IsDir() {
		return fmt.Errorf("%s: not a directory", dir)
	}
	return nil
}

// joinUsage joins errors into one usage error of one line.
func joinUsage(errs []error) error {
	msgs := make([]string, len(errs))
	for i, err := range errs {
		msgs[i] = err.Error()
	}
	return usagef("%s", strings.Join(msgs, "; "))
}

// outUsage is the --out flag's help.
const outUsage = "directory for the JSON result (file named after the run), or the result file itself when it ends in .json"

// checkOutDir fails early when the result could not be written: out is a
// directory, or a result file ending in .json (report.OutFile).
func checkOutDir(out string) error {
	_, err := makeOutDir(out)
	return err
}

// makeOutDir is checkOutDir, also returning a function that removes the
// directories it made while they are still empty: a run that fails before
// it writes a result leaves no empty results directory behind.
func makeOutDir(out string) (undo func(), err error) {
	undo = func() {}
	if out == "" {
		return undo, usagef("--out is empty: give a directory or a file name ending in .json")
	}
	dir := out
	if report.OutFile(out) {
		dir = filepath.Dir(out)
	}
	var made []string // deepest first
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil || !errors.Is(err, fs.ErrNotExist) {
			break
		}
		made = append(made, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	undo = func() {
		for _, d := range made {
			if os.Remove(d) != nil { // not empty (a result), or gone
				return
			}
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		undo()
		return func() {}, usagef("--out %s: %v", out, unwrapPath(err))
	}
	f, err := os.CreateTemp(dir, ".ceiling-probe-*")
	if err != nil {
		undo()
		return func() {}, usagef("--out %s is not writable: %v", out, unwrapPath(err))
	}
	name := f.Name()
	f.Close()
	return undo, os.Remove(name)
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func (e *env) run(ctx context.Context, name string, w workload.Workload, f *runFlags, cfg runner.Config) (err error) {
	t, closeOnce, err := e.openForRun(ctx, f.out, &f.targetFlags, runHint(f.threads, cfg, w), name)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := closeOnce(); cerr != nil && err == nil {
			err = fmt.Errorf("restore settings: %w", cerr)
		}
	}()
	info := t.Info()
	if f.shard.s != nil {
		if err := shardReadOnly(info); err != nil {
			return err
		}
	}

	cores := runtime.NumCPU()
	params := runParams(name, w, cfg, info, cores)
	var (
		results []*runner.Result
		stopErr error // why the repeats stopped early, if they did
		key     string
	)
	if f.shard.s != nil {
		key = f.shard.runKey(name, w, f)
		cfg.BeforeStart = f.shard.beforeStart(e, t, key, cfg)
		defer f.shard.leave()
	}
	for k := 1; k <= f.repeat; k++ {
		if f.repeat > 1 {
			fmt.Fprintf(e.stdout, "\n== run %d of %d\n", k, f.repeat)
		}
		res, err := e.runOnce(ctx, t, name, w, f, cfg, cores, &params)
		if err != nil {
			if len(results) == 0 {
				return err
			}
			stopErr = err
			break
		}
		results = append(results, res)
		if res.Partial {
			break
		}
		if f.repeat > 1 {
			if d, err := report.Build(params, res); err == nil {
				fmt.Fprintf(e.stdout, "run %d: %s\n", k, report.RunLine(d))
			}
		}
	}
	var (
		iso    []report.Isolated
		isoErr error
	)
	if f.isolate > 0 && !results[len(results)-1].Partial && stopErr == nil && ctx.Err() == nil {
		release := e.holdLimits(t, f.emulation, false) // each operation alone is measured under the limits too
		iso, isoErr = e.runIsolated(ctx, t, w, f, params)
		release()
	}
	checks, failedChecks := e.postCheck(ctx, t, w, results[len(results)-1].Partial || stopErr != nil)
	var post *postLoad
	if f.shard.s == nil {
		post = e.afterLoad(ctx, t, w) // bulk-load's index build (batches.go)
	} else {
		_, bulk := w.(batchRamper)
		post = &postLoad{bulk: bulk} // a shard builds no index: the others still load
	}
	// Prepare may have learnt parameters (seqsel's --cold outcome).
	params.WParams = w.Params()
	// Close now, so the result records the setting as restored.
	cerr := closeOnce()
	params.Info = t.Info()
	var doc *report.Result
	if f.repeat > 1 {
		doc, err = report.BuildRepeat(params, results)
	} else {
		doc, err = report.Build(params, results[0])
	}
	if err != nil {
		return err
	}
	hosts := f.shard.hostsOf()
	f.shard.leave()
	f.shard.apply(doc, results[0].Steps, w, key, hosts)
	post.apply(doc)
	suggestLarger(doc)
	if len(iso) > 0 {
		doc.Isolated = iso
		report.SetIsolatedShares(doc)
		if iso[len(iso)-1].Partial {
			doc.Partial = true
			doc.Notes = append(doc.Notes, fmt.Sprintf("interrupted while running %s alone, after the measured mix", iso[len(iso)-1].Op))
		}
	}
	if isoErr != nil {
		doc.Notes = append(doc.Notes, "running each operation alone stopped: "+oneLine(isoErr.Error()))
	}
	if stopErr != nil {
		doc.Partial = true
		doc.Notes = append(doc.Notes, fmt.Sprintf("stopped after %d of %d runs: %s", len(results), f.repeat, oneLine(stopErr.Error())))
	}
	for _, c := range checks {
		doc.Notes = append(doc.Notes, "check after the run: "+c)
	}
	if f.seriesNote != "" {
		doc.Notes = append(doc.Notes, f.seriesNote)
	}
	if n := widenedNote(cfg.Interval, results); n != "" {
		doc.Notes = append(doc.Notes, n)
	}
	if err := e.finish(f.out, doc, cerr, stopErr); err != nil {
		return err
	}
	if failedChecks > 0 {
		return fmt.Errorf("%d of %d checks failed after the run (the result is written)", failedChecks, len(checks))
	}
	return nil
}

// postCheck runs a workload's checks (workload.PostChecker) on the data
// as the run left it, unless the run was cut short; it returns their
// lines and how many failed.
func (e *env) postCheck(ctx context.Context, t target.Target, w workload.Workload, cut bool) ([]string, int) {
	pc, ok := w.(workload.PostChecker)
	if !ok || cut || ctx.Err() != nil {
		return nil, 0
	}
	lines, failed, err := pc.PostCheck(ctx, t)
	if err != nil {
		lines = append(lines, "could not run: "+oneLine(err.Error()))
		failed++
	}
	return lines, failed // the summary's notes show them
}

// writeResult writes doc to out, prints it with show (the summary, or a
// knee's answer), the framed JSON too with --print-result, and the line
// naming the result file; it returns the file's path.
func (e *env) writeResult(out string, doc *report.Result, show func(io.Writer, *report.Result)) (string, error) {
	replaced := replacesFile(out)
	path, err := report.Write(out, doc)
	show(e.stdout, doc)
	if e.printResult {
		fmt.Fprintln(e.stdout)
		if perr := report.WriteFramed(e.stdout, doc); perr != nil && err == nil {
			err = perr
		}
	}
	if err != nil {
		return "", err
	}
	fmt.Fprintf(e.stdout, "\nresult: %s%s\n", path, replaced)
	return path, nil
}

// finish writes the result document, prints the summary and turns what
// went wrong (restoring settings, a stop part-way, an interruption) into
// the command's error, naming the partial result.
func (e *env) finish(out string, doc *report.Result, closeErr, stopErr error) error {
	path, err := e.writeResult(out, doc, report.PrintSummary)
	if err != nil {
		return err
	}
	if closeErr != nil {
		return fmt.Errorf("restore settings: %w", closeErr)
	}
	if stopErr != nil {
		return fmt.Errorf("%w (partial result written to %s)", stopErr, path)
	}
	if doc.Partial {
		return errors.New("run interrupted; partial result written to " + path)
	}
	return nil
}

// runOnce prepares the workload's data and runs the test once, with live
// lines on the console. The first time, it probes the host or the network
// (params.Host, params.Network).
func (e *env) runOnce(ctx context.Context, t target.Target, name string, w workload.Workload, f *runFlags, cfg runner.Config, cores int, params *report.Params) (*runner.Result, error) {
	if _, ok := t.(target.Emulator); f.emulation != nil && !ok {
		return nil, &UsageError{Err: errEmulateServer}
	}
	if err := e.prepareWorkload(ctx, t, name, w); err != nil {
		return nil, err
	}

	info := t.Info()
	e.probe(ctx, t, f, params)
	var plan string
	if cfg.Rate > 0 || len(cfg.Steps) > 0 {
		plan = fmt.Sprintf("%s, %s", diagnose.Threads(f.threads), report.OpenLoopPlan(report.LoadOf(cfg)))
	} else {
		plan = diagnose.Threads(f.threads)
		if f.ops > 0 {
			plan += fmt.Sprintf(", %d requests", f.ops)
		}
		if f.duration > 0 {
			plan += fmt.Sprintf(", %v", f.duration)
		}
		if f.warmup > 0 {
			plan += fmt.Sprintf(" after %v warm-up", f.warmup)
		}
		plan += ", closed loop"
	}

	if s := f.shard.s; s != nil {
		plan = fmt.Sprintf("shard %s, %s (workers %d to %d of %d)", s, plan, f.shard.first, f.shard.first+f.threads-1, f.shard.total)
	}
	fmt.Fprintf(e.stdout, "running %s: %s, durability %s", name, plan, info.Durability.Mode)
	if d := info.Durability; d.Setting != "" {
		fmt.Fprintf(e.stdout, " (%s %s -> %s)", d.Setting, d.Before, d.During)
	}
	if _, ok := w.(workload.Isolator); ok && f.isolate > 0 {
		fmt.Fprintf(e.stdout, "; then each operation alone for %v (--isolate)", f.isolate)
	}
	fmt.Fprintln(e.stdout)
	if f.seriesNote != "" {
		fmt.Fprintf(e.stdout, "note: %s\n", f.seriesNote)
	}
	if note := inFlightNote(f.threads, cfg); note != "" {
		fmt.Fprintf(e.stdout, "note: %s\n", note)
	}
	what := "the run"
	if _, ok := w.(workload.Isolator); ok && f.isolate > 0 {
		what = "the run, and each operation run alone after it,"
	}
	if note := poolerNote(info, what); note != "" {
		fmt.Fprintln(e.stdout, "note: "+note)
	}

	live := &report.Live{W: e.stdout, TTY: e.isTTY, Every: f.reportEvery, Cores: cores, NoBytes: workload.NoBytes(w)}
	switch {
	case len(cfg.Steps) > 0:
		for _, st := range cfg.Steps {
			live.Rates = append(live.Rates, st.Rate)
		}
	case cfg.Rate > 0:
		live.Rates = []float64{cfg.Rate}
	}
	cfg.OnInterval = live.Interval
	// Held while measuring only: the data is loaded at full speed.
	defer e.holdLimits(t, f.emulation, true)()
	res, err := runner.Run(ctx, cfg, t, w)
	live.Done()
	return res, err
}

// inFlightBudget: an open loop whose threads allow each request less
// than this at its top rate gets inFlightNote's warning.
const inFlightBudget = 10 * time.Millisecond

// poolerNote says, before a run through a connection pooler, that each
// of its runs (what: "the run", "each probe") ends with a wait for the
// server's statistics (see the postgres target's Settle); "" without one.
func poolerNote(info target.Info, what string) string {
	if info.Pooler == "" {
		return ""
	}
	return fmt.Sprintf("the sessions go through a connection pooler (%s mode): %s ends with a wait of about 10 s for the server's pooled backends to publish their statistics, which they do once idle that long, not when ceiling's sessions end", info.Pooler, what)
}

// inFlightNote says, for an open loop whose top rate leaves each request
// less than inFlightBudget on the given threads (Little's law: threads ÷
// rate), how long a request may take for ceiling to keep up; "" otherwise.
func inFlightNote(threads int, cfg runner.Config) string {
	top := cfg.Rate
	for _, st := range cfg.Steps {
		top = max(top, st.Rate)
	}
	if top <= 0 || threads <= 0 {
		return ""
	}
	budget := time.Duration(float64(threads) / top * float64(time.Second))
	if budget >= inFlightBudget {
		return ""
	}
	inFlight := "at most 1 request"
	if threads > 1 {
		inFlight = fmt.Sprintf("at most %d requests", threads)
	}
	return fmt.Sprintf("%s in flight (-c %d): %s/s is kept up only while each request takes under %s; a slower one queues in ceiling, and the step then measures -c, not the database (raise -c for more in flight)",
		inFlight, threads, fmtRate(top), fmtBudget(budget))
}

// fmtBudget writes a short duration in ms or µs with three significant
// digits.
func fmtBudget(d time.Duration) string {
	if d < time.Millisecond {
		return fmt.Sprintf("%.3g µs", float64(d)/float64(time.Microsecond))
	}
	return fmt.Sprintf("%.3g ms", float64(d)/float64(time.Millisecond))
}

// probe runs, once per run command and unless --no-probe, the probe that
// fits the target: the flush probe of a local server's host, the
// round-trip probe of a server on another host.
func (e *env) probe(ctx context.Context, t target.Target, f *runFlags, params *report.Params) {
	if f.noProbe || params.Host != nil || params.Network != nil {
		return
	}
	if t.Info().Local {
		params.Host = e.probeHost(ctx, t, f.probeDir, f.out)
	} else {
		params.Network = e.probeNetwork(ctx, t)
	}
}

// pingRuns is how many round trips the network probe times, within
// pingBudget (but at least target.MinPings).
const (
	pingRuns   = 200
	pingBudget = 2 * time.Second
)

// probeNetwork times round trips to a server on another host and prints
// one line; nil (and the run goes on) when the target cannot or the probe
// fails.
func (e *env) probeNetwork(ctx context.Context, t target.Target) *report.Network {
	p, ok := t.(target.Pinger)
	if !ok {
		return nil
	}
	// A server that stops answering must not hold the run up: the
	// probe gives up (and the run goes on to find out) well after its
	// budget.
	pctx, cancel := context.WithTimeout(ctx, pingBudget+10*time.Second)
	defer cancel()
	times, what, err := p.Pings(pctx, pingRuns, pingBudget)
	if err != nil {
		fmt.Fprintf(e.stdout, "round-trip probe skipped: %s\n", oneLine(err.Error()))
		return nil
	}
	ms := make([]float64, len(times))
	for i, d := range times {
		ms[i] = float64(d.Nanoseconds()) / 1e6
	}
	l := hostprof.Summarize(ms)
	fmt.Fprintf(e.stdout, "round trip to the server (%d × %s, one at a time): p50 %.3f ms, p99 %.3f ms, mean %.3f ms — each request waits at least this long, whatever the server does\n",
		l.N, what, l.P50Ms, l.P99Ms, l.MeanMs)
	return &report.Network{RoundTripMs: report.HostLatency{P50: round3(l.P50Ms), P99: round3(l.P99Ms), Mean: round3(l.MeanMs)}, N: l.N, What: what}
}

// probeRuns is how many write+fdatasync pairs the pre-run probe times.
const probeRuns = 200

// probeHost times the flush latency of this host's storage in dir (by
// default the SQLite file's directory, else see defaultProbeDir) and prints
// one line. A failed probe is reported and gives nil: the run goes on.
func (e *env) probeHost(ctx context.Context, t target.Target, dir, out string) *report.Host {
	if dir == "" {
		dir = os.TempDir()
		if p, ok := t.(interface{ Path() string }); ok {
			dir = filepath.Dir(p.Path())
		} else if logDir := t.Info().LogDir; logDir != "" {
			dir = defaultProbeDir(logDir, out)
		}
	}
	r, err := hostprof.FsyncProbe(ctx, dir, probeRuns)
	if err != nil {
		fmt.Fprintf(e.stdout, "fsync probe skipped: %s\n", oneLine(err.Error()))
		return nil
	}
	h := &report.Host{
		FsyncMs:      report.HostLatency{P50: round3(r.P50Ms), P99: round3(r.P99Ms), Mean: round3(r.MeanMs)},
		FsyncsPerSec: math.Round(r.SyncsPerSec),
		N:            r.N,
		Dir:          dir,
		Note:         report.HostNote(dir),
	}
	fmt.Fprintf(e.stdout, "fsync probe (%d × 4 KiB write+%s in %s): p50 %.3f ms, p99 %.3f ms, mean %.3f ms, %.0f/s — an estimate of the device's flush latency\n",
		r.N, r.SyncCallName, dir, r.P50Ms, r.P99Ms, r.MeanMs, r.SyncsPerSec)
	var same, known bool
	if logDir := t.Info().LogDir; logDir != "" {
		same, known = sameFS(dir, logDir)
	}
	note := func(msg string) {
		h.Note += "; " + msg
		fmt.Fprintf(e.stdout, "note: %s\n", msg)
	}
	switch {
	case known:
		h.SameFSAsLog = &same
		if !same {
			note(fmt.Sprintf("%s is not on the file system of the server's log (%s), so the verdict does not use this probe: --probe-dir on that file system gives an estimate", dir, t.Info().LogDir))
		}
	default:
		// Where the log is cannot be told (e.g. PostgreSQL's data
		// directory is hidden from this role): at least say so when the
		// probe measured memory.
		if name, ok := hostprof.InMemory(dir); ok {
			note(fmt.Sprintf("%s is on a %s, kept in memory: the probe does not describe a disk; --probe-dir on the server's log disk gives an estimate", dir, name))
		}
	}
	return h
}

// sameFS says whether dir is on the file system of the server's log
// directory; known is false when that cannot be told. Without the right to
// look inside the server's directory, the directory that holds the log's
// is the next best (a pg_wal linked to another disk then goes unseen; a
// tmpfs /tmp against a data directory on disk is still told apart).
func sameFS(dir, logDir string) (same, known bool) {
	if same, known = hostprof.SameDevice(dir, logDir); known {
		return same, known
	}
	return hostprof.SameDevice(dir, filepath.Dir(logDir))
}

// defaultProbeDir picks the probe's directory for a local server whose log
// is in logDir: the temporary directory, or else ceiling's own --out
// directory, whichever is on the log's file system (a tmpfs /tmp is not);
// the temporary directory when neither is, or it cannot be told.
func defaultProbeDir(logDir, out string) string {
	tmp := os.TempDir()
	if same, known := sameFS(tmp, logDir); !known || same {
		return tmp
	}
	outDir := out
	if report.OutFile(out) {
		outDir = filepath.Dir(out)
	}
	if same, known := sameFS(outDir, logDir); known && same {
		return outDir
	}
	return tmp
}

func round3(v float64) float64 { return math.Round(v*1e4) / 1e4 }

// runIsolated runs each operation type of w alone for --isolate (closed
// loop, the run's threads, after a short warm-up) and summarises each run.
// It stops at the first interruption, returning what was run (the last
// entry then partial), or at the first error.
func (e *env) runIsolated(ctx context.Context, t target.Target, w workload.Workload, f *runFlags, params report.Params) ([]report.Isolated, error) {
	is, ok := w.(workload.Isolator)
	if !ok {
		return nil, nil
	}
	defer is.Isolate(-1)
	cfg := runner.Config{Threads: f.threads, Interval: f.interval, Duration: f.isolate, Warmup: isolateWarmup}
	ops := w.Ops()
	fmt.Fprintf(e.stdout, "\nrunning each operation alone: %s, %v each after %v warm-up\n", diagnose.Threads(f.threads), f.isolate, isolateWarmup)
	var out []report.Isolated
	for op, name := range ops {
		budget, why, err := is.IsolationBudget(ctx, t, op, f.threads)
		if err != nil {
			return out, fmt.Errorf("%s alone: %w", name, err)
		}
		if budget < 0 {
			out = append(out, report.Isolated{Op: name, Threads: f.threads, Note: "not run: " + why})
			fmt.Fprintf(e.stdout, "  %-14s not run: %s\n", name, why)
			continue
		}
		c := cfg
		if budget > 0 {
			// A bounded operation: no warm-up (it would spend the budget).
			c.Ops, c.Warmup = budget, 0
		}
		is.Isolate(op)
		res, err := runner.Run(ctx, c, t, w)
		if err != nil {
			return out, fmt.Errorf("%s alone: %w", name, err)
		}
		p := params
		p.Load = c
		one, err := report.IsolatedOf(p, name, res)
		if err != nil {
			return out, fmt.Errorf("%s alone: %w", name, err)
		}
		one.Note = why
		out = append(out, one)
		b := "n/a"
		if one.Verdict != nil {
			b = one.Verdict.Bottleneck
		}
		mean := "n/a"
		if one.LatencyMs != nil {
			mean = fmt.Sprintf("%.3f ms", one.LatencyMs.Mean)
		}
		fmt.Fprintf(e.stdout, "  %-14s %10.1f req/s, mean %s, %d errors, bottleneck alone: %s\n", name, one.RequestsPerSec, mean, one.Errors, b)
		if res.Partial {
			break
		}
	}
	return out, nil
}

// replacesFile says, for an --out naming a file that exists, that the
// result replaces it ("" otherwise): a result file of an earlier run is
// gone once the new one is written.
func replacesFile(out string) string {
	if !report.OutFile(out) {
		return ""
	}
	if st, err := os.Stat(out); err == nil && st.Mode().IsRegular() {
		return " (replaced the file that was there)"
	}
	return ""
}

// runParams are the result's parameters of a run of w with load cfg: its
// definition, whether it counts bytes, its figures and advice.
func runParams(name string, w workload.Workload, cfg runner.Config, info target.Info, cores int) report.Params {
	params := report.Params{Version: version(), Workload: name, WParams: w.Params(), Definition: workload.DefinitionOf(w), Load: cfg, Info: info, Cores: cores, NoBytes: workload.NoBytes(w)}
	if o, ok := w.(workload.Observer); ok {
		params.Figures = o.Figures
	}
	if a, ok := w.(workload.Advisor); ok {
		params.Advice = a.Advice
	}
	return params
}

// runHint is what a run tells the target of its worker sessions when
// opening it: how many, whether the runner multiplexes them (a closed
// loop), and whether they run an open loop (--rate, --rates).
func runHint(threads int, cfg runner.Config, w workload.Workload) target.Options {
	return target.Options{MaxConns: threads, Multiplexed: runner.Multiplexes(cfg, w), OpenLoop: cfg.Rate > 0 || len(cfg.Steps) > 0}
}
