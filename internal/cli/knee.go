package cli

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ceiling-db/ceiling/internal/diagnose"
	"github.com/ceiling-db/ceiling/internal/knee"
	"github.com/ceiling-db/ceiling/internal/metrics"
	"github.com/ceiling-db/ceiling/internal/report"
	"github.com/ceiling-db/ceiling/internal/runner"
	"github.com/ceiling-db/ceiling/internal/target"
	"github.com/ceiling-db/ceiling/internal/workload"
	"github.com/ceiling-db/ceiling/internal/workload/all"
)

type kneeFlags struct {
	targetFlags
	threads    int
	threadsSet bool // -c given (not the default)
	interval   time.Duration
	out        string
	open       openFlags
	slo        string
	start      float64
	max        float64
	stepDur    time.Duration
	stepWarmup time.Duration
	precision  string
	retries    int
	noProbe    bool              // --no-probe: no round-trip probe of a server on another host
	emulate    string            // --emulate, as run's
	emulation  *target.Emulation // parsed from emulate
	shard      shardFlags        // --shard: one of several processes (kneeshard.go)
	// runArgs are the flags given that `run` takes as well and that
	// kneeRunCommand does not write itself (workload and arrival flags).
	runArgs []string
}

// aliasFlag makes --alias another name of fs's flag --name, where other
// commands call the same thing alias (run's --out and --step).
func aliasFlag(fs *pflag.FlagSet, alias, name string) {
	prev := fs.GetNormalizeFunc()
	fs.SetNormalizeFunc(func(f *pflag.FlagSet, n string) pflag.NormalizedName {
		if n == alias {
			n = name
		}
		return prev(f, n)
	})
}

// kneeOnly are knee's flags that `run` does not take or that the run
// command a knee result suggests sets on its own (-c, --durability, --db).
var kneeOnly = map[string]bool{
	"slo": true, "start": true, "max": true, "step-duration": true, "step-warmup": true, "precision": true,
	"retries": true, "out": true, "interval": true, "threads": true, "durability": true, "db": true, "help": true,
	"shard": true, "shard-wait": true, "shard-key": true,
}

// runArgsOf lists the flags set on fs that a run at the knee must repeat
// to load the same data the same way (--rows, --tables, --arrival, ...).
func runArgsOf(fs *pflag.FlagSet) []string {
	var args []string
	fs.Visit(func(fl *pflag.Flag) {
		if !kneeOnly[fl.Name] {
			args = append(args, "--"+fl.Name+"="+fl.Value.String())
		}
	})
	return args
}

// Defaults of the knee search.
const (
	kneeStart = 10
	kneeMax   = 1e6
)

func (e *env) kneeCmd() *cobra.Command {
	return e.workloadParent("knee", "Search the highest request rate that meets a latency/lateness objective", `  ceiling knee single-inserts --slo 'p99<50ms,late<1%'
  ceiling knee direct-selects --slo 'p99<5ms' -c 8 --step-duration 5s --db postgres://postgres@localhost/postgres`, e.kneeWorkloadCmd)
}

func (e *env) kneeWorkloadCmd(name string) *cobra.Command {
	meta, _ := all.Registry().Lookup(name)
	w := meta.New()
	f := &kneeFlags{}
	cmd := &cobra.Command{
		Use:   name + " --slo SLO [flags]",
		Short: "knee search on " + name,
		Long: `Find the highest open-loop request rate at which ` + name + ` meets the SLO.

The data is prepared once. Each probe is one open-loop step of
--step-duration at one rate (latency from the scheduled start, requests that
cannot start within --late-after counted late). The search ramps up ×2 from
--start until a probe breaks the SLO or --max passes, then bisects between the
highest passing and the lowest failing rate until they are within --precision.

A probe that breaks the SLO is run again at the same rate (--retries times,
1 by default) and the rate fails only if every run does: a stall that does
not recur (a checkpoint, a paused VM) is not the rate's limit, and should
not stop the search at whatever rate it hit. Rates that failed and then
passed are named at the end and in the result (knee.transient_rates);
--retries 0 counts the first failure. Each re-run costs one more
--step-duration; a re-run after a failure only by percentiles measured from
too few requests (p99 of 100 requests is their 2nd slowest) lasts long
enough to hold the requests they need (p99: 1,000), at most 10 times
--step-duration.

With few workers (-c, 1 by default) the knee may be ceiling's: the rate an
open loop reaches is at most workers ÷ service time. The verdict, printed
last, says so (client) when the workers were busy most of the time while
the database served requests as fast as at the lower rates. Against a
server on another host, ceiling first times up to 200 round trips to it
(at most 2 s; result key "network"): each connection makes at most
1000 ÷ (round-trip ms × round trips per request) requests/s, and the
verdict says so (network) when those round trips are most of a request.

SLO terms, comma-separated, all must hold:
  p50|p90|p95|p99|p999|max|mean < DURATION    e.g. p99<50ms
  late < PERCENT       of scheduled requests   e.g. late<1%
  errors < PERCENT     of finished requests    e.g. errors<0.1%
  achieved > PERCENT   of the requested rate   e.g. achieved>95%
  OPERATION.LATENCY < DURATION  one operation's requests only
                                               e.g. new_order.p90<5s
Unless the SLO says otherwise, late<1% (when it bounds neither late nor
achieved) and errors<1% are implied: a rate where requests are skipped or
fail is not sustained.

When one load generator cannot reach the database's knee, several can search
it together: give each the same flags and --shard I/N (after ceiling
prepare; a shard loads no data). -c and each probe's rate are the whole
search's, split between the shards; the shards meet in the database before
every probe (about 2 s each) and start it together, then each tells the
others its figures and latency histogram, so that all judge the probe by
every shard's requests and take the same next rate. Each writes its result;
ceiling merge makes the search's.`,
		Example: fmt.Sprintf(`  ceiling knee %[1]s --slo 'p99<50ms,late<1%%'
  ceiling knee %[1]s --slo 'p99<20ms' --step-duration 3s -c 4
  ceiling knee %[1]s --slo 'p95<10ms,achieved>98%%' --start 100 --max 20000 --precision 2%%
  ceiling knee %[1]s --slo 'p99<50ms' --db 'postgres://postgres@localhost/postgres'
  ceiling knee %[1]s --slo 'p99<50ms' -c 16 --shard 0/2 --out shards   # one of 2 generators; then ceiling merge shards/`, name),
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := phaseFlags(cmd.Flags(), "knee"); err != nil {
				return err
			}
			slo, sp, cfg, err := f.config(cmd.Flags(), w)
			if err != nil {
				return err
			}
			f.threadsSet = cmd.Flags().Changed("threads")
			if cmd.Flags().Changed("emulate") {
				if f.emulation, err = emulationOf(f.emulate); err != nil {
					return &UsageError{Err: err}
				}
				if !isSQLite(e.dsn(&f.targetFlags)) {
					return &UsageError{Err: errEmulateServer}
				}
			}
			if err := f.shard.check(cmd.Flags(), name, w, e.dsn(&f.targetFlags), f.durability, f.emulate != "", nil); err != nil {
				return err
			}
			if f.shard.s != nil {
				if err := f.shard.splitConfig(&cfg); err != nil {
					return err
				}
				f.threads = cfg.Threads
				f.targetFlags.shared = true
			}
			f.runArgs = runArgsOf(cmd.Flags())
			if e.checkOnly {
				return nil
			}
			return e.knee(cmd.Context(), name, w, f, slo, sp, cfg)
		},
	}
	fs := cmd.Flags()
	f.bind(fs)
	fs.StringVar(&f.durability, "durability", "server", "commit durability: server (leave the setting alone), full, or relaxed")
	fs.IntVarP(&f.threads, "threads", "c", 1, "worker threads, each with its own connection (at most this many requests in flight)")
	f.interval = time.Second
	fs.Var(durationValue{&f.interval}, "interval", "granularity of the time series in the result")
	fs.StringVar(&f.out, "out", "results", outUsage)
	fs.StringVar(&f.slo, "slo", "", "service-level objective, e.g. 'p99<50ms,late<1%' (required)")
	f.start, f.max = kneeStart, kneeMax
	fs.Var(rateValue{&f.start}, "start", "first rate probed, requests/s")
	fs.Var(rateValue{&f.max}, "max", "highest rate probed, requests/s")
	f.stepDur = 10 * time.Second
	fs.Var(durationValue{&f.stepDur}, "step-duration", "measured duration of each probe (--step, as run --rates calls it, is taken too)")
	// run's ramp calls a step's duration --step: a user going from a
	// ramp to a knee search keeps the name.
	aliasFlag(fs, "step", "step-duration")
	fs.Var(durationValue{&f.stepWarmup}, "step-warmup", "warm-up at each probe's rate before measuring it")
	fs.StringVar(&f.precision, "precision", "5%", "stop when the lowest failing rate is within this of the highest passing one")
	fs.IntVar(&f.retries, "retries", 1, "run a probe that breaks the SLO again up to this many times; its rate fails only if every run does (0: the first failure counts)")
	fs.BoolVar(&f.noProbe, "no-probe", false, "skip the round-trip probe of a server on another host before the search (its round trip is then not known, and the network rule cannot apply)")
	fs.StringVar(&f.emulate, "emulate", "", "SQLite: hold the database's files to a profile's log and data-file limits while probing (as run --emulate): the knee of a tier, locally")
	f.shard.bind(fs, kneeShardUsage)
	fs.BoolVar(&e.printResult, "print-result", false, "also print the JSON result on the console, one line between "+report.FramedBegin+" and "+report.FramedEnd+" (where only the log is kept, as a Kubernetes pod's: ceiling merge reads such logs)")
	w.Flags(fs)
	f.open.bind(fs)
	return cmd
}

// config checks the flags and returns the SLO (with its implied terms), the
// search parameters and the load model of one probe (without its step).
func (f *kneeFlags) config(fs *pflag.FlagSet, w workload.Workload) (knee.SLO, knee.Params, runner.Config, error) {
	var errs []error
	var slo knee.SLO
	if !fs.Changed("slo") {
		errs = append(errs, errors.New("--slo is required, e.g. --slo 'p99<50ms,late<1%'"))
	} else if s, err := knee.ParseSLO(f.slo); err != nil {
		errs = append(errs, fmt.Errorf("--slo: %w", err))
	} else {
		slo = s.WithImplied()
	}
	if f.threads <= 0 {
		errs = append(errs, fmt.Errorf("--threads must be at least 1, got %d", f.threads))
	}
	if !(f.start > 0 && f.start <= maxRate) {
		errs = append(errs, fmt.Errorf("--start must be above 0 and at most %.0f requests/s, got %g", maxRate, f.start))
	}
	if !(f.max > 0 && f.max <= maxRate) {
		errs = append(errs, fmt.Errorf("--max must be above 0 and at most %.0f requests/s, got %g", maxRate, f.max))
	} else if f.max < f.start {
		errs = append(errs, fmt.Errorf("--max %g is below --start %g", f.max, f.start))
	}
	if batchesSpec(w) != "" {
		errs = append(errs, errors.New("--batches ramps the batch size in `ceiling run`; knee searches a rate at one --batch"))
	}
	if f.stepDur < MinStep {
		errs = append(errs, fmt.Errorf("--step-duration must be at least %v (a probe measures a rate over its duration), got %v", MinStep, f.stepDur))
	}
	if f.stepWarmup < 0 {
		errs = append(errs, fmt.Errorf("--step-warmup must be zero or more, got %v", f.stepWarmup))
	}
	if f.retries < 0 || f.retries > knee.MaxRetries {
		errs = append(errs, fmt.Errorf("--retries must be between 0 and %d, got %d", knee.MaxRetries, f.retries))
	}
	prec, err := parsePercent(f.precision)
	if err != nil {
		errs = append(errs, fmt.Errorf("--precision %w", err))
	}
	if f.interval < MinInterval {
		errs = append(errs, fmt.Errorf("--interval must be at least %v (the kernel counts CPU time in 10 ms ticks, and each interval samples the server), got %v", MinInterval, f.interval))
	}
	errs = append(errs, f.open.validate(fs, true)...)
	if err := w.Validate(); err != nil {
		errs = append(errs, err)
	} else if err := workload.CheckThreads(w, f.threads); err != nil {
		errs = append(errs, err)
	} else if err := slo.CheckOps(w.Ops()); err != nil {
		errs = append(errs, fmt.Errorf("--slo: %w", err))
	} else if err := workload.ColdStartError(w, "a knee search's probes"); err != nil {
		errs = append(errs, err)
	} else if err := workload.OpenLoopError(w, "a knee search's open-loop probes"); err != nil {
		errs = append(errs, err)
	}
	seed, err := f.open.seedOf()
	if err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return nil, knee.Params{}, runner.Config{}, joinUsage(errs)
	}
	sp := knee.Params{Start: f.start, Max: f.max, Precision: prec / 100, Retries: f.retries}
	cfg := runner.Config{Threads: f.threads, Interval: f.interval, Arrival: f.open.arrival, LateAfter: f.open.lateAfter, Seed: seed}
	return slo, sp, cfg, nil
}

// parsePercent parses "5%" (or "5") as 5; it must be above 0 and below 100.
func parsePercent(s string) (float64, error) {
	num := strings.TrimSuffix(strings.TrimSpace(s), "%")
	v, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil || math.IsNaN(v) {
		return 0, fmt.Errorf("%q is not a percentage (e.g. 5%%)", s)
	}
	if !(v > 0 && v < 100) {
		return 0, fmt.Errorf("%q must be above 0%% and below 100%%", s)
	}
	return v, nil
}

func (e *env) knee(ctx context.Context, name string, w workload.Workload, f *kneeFlags, slo knee.SLO, sp knee.Params, cfg runner.Config) (err error) {
	t, closeOnce, err := e.openForRun(ctx, f.out, &f.targetFlags, target.Options{MaxConns: f.threads, OpenLoop: true}, "knee of "+name)
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
	if err := e.prepareWorkload(ctx, t, name, w); err != nil {
		return err
	}
	var netw *report.Network // a server on another host: the round trip to it
	if !info.Local && !f.noProbe {
		netw = e.probeNetwork(ctx, t)
	}
	e.printKneePlan(f, slo, sp, info)
	defer e.holdLimits(t, f.emulation, true)()

	var (
		probes []*runner.Result
		key    string // a sharded search's
		hosts  []string
		steps  []runner.StepResult
		durs   []time.Duration // each probe's planned duration, as knee.Search lists them
		last   knee.Outcome    // the last probe's
		noted  bool            // the in-flight note was printed (kneeInFlightNote)
	)
	if f.shard.s != nil {
		key = f.shard.kneeKey(name, w, f)
	}
	probe := func(ctx context.Context, rate float64, retry int) (knee.Outcome, error) {
		dur, longer := f.stepDur, ""
		if retry > 0 { // a re-run of the last probe's rate
			dur, longer = thinRetry(last, rate, f.stepDur)
		}
		durs = append(durs, dur)
		if e.isTTY {
			again := ""
			if retry > 0 {
				again = " again"
			}
			fmt.Fprintf(e.stdout, "\r\033[Kprobe %d: %s/s%s for %v …", len(probes)+1, fmtRate(rate), again, f.stepWarmup+dur)
		}
		var (
			res     *runner.Result
			fig     knee.Figures
			partial bool
			err     error
		)
		if f.shard.s != nil {
			res, fig, partial, err = e.shardProbe(ctx, t, w, f, cfg, key, len(probes)+1, rate, dur)
			if hosts == nil {
				hosts = f.shard.lastHosts
			}
		} else {
			pc := cfg
			pc.Steps = []runner.Step{{Rate: rate, Duration: dur, Warmup: f.stepWarmup}}
			res, err = runner.Run(ctx, pc, t, w)
		}
		if e.isTTY {
			fmt.Fprint(e.stdout, "\r\033[K")
		}
		if err != nil {
			return knee.Outcome{}, err
		}
		if res == nil { // a shard interrupted before its probe started
			return knee.Outcome{Partial: true}, nil
		}
		probes = append(probes, res)
		if len(res.Steps) == 0 {
			return knee.Outcome{Partial: true}, nil
		}
		st := res.Steps[0]
		steps = append(steps, res.Steps...)
		if f.shard.s == nil {
			fig = figuresOf(st)
		}
		out := knee.Outcome{Partial: st.Partial || res.Partial || partial}
		out.Failed = slo.Check(fig)
		out.Thin = slo.Thin(fig)
		out.Need = slo.Need(fig)
		out.Pass = len(out.Failed) == 0
		out.KeptUp, out.Over = report.KeptUp(fig), slo.Over(fig)
		last = out
		line := probeLine(len(probes), fig, slo.Shown(), st.Elapsed > 0, out, retry)
		if longer != "" {
			line += "  [" + longer + "]"
		}
		if f.shard.s != nil {
			line += fmt.Sprintf("  (%d shards)", f.shard.s.N)
		}
		fmt.Fprintln(e.stdout, line)
		if !noted && f.shard.s == nil && st.Service != nil && st.Completed >= minServiceProbe && st.Elapsed > 0 {
			achieved := float64(st.Completed) / st.Elapsed.Seconds()
			if n := kneeInFlightNote(f.threads, achieved, st.Service.Mean, f.max); n != "" {
				fmt.Fprintln(e.stdout, "note: "+n)
				noted = true
			}
		}
		return out, nil
	}
	kr, serr := knee.Search(ctx, sp, probe)
	cerr := closeOnce()
	if len(probes) == 0 {
		if kr.Stop == knee.StopInterrupted {
			return errors.New("knee search interrupted before the first probe ran: no result written")
		}
		if serr != nil {
			return serr
		}
		return errors.New("no probe ran")
	}
	kp := report.Params{Version: version(), Workload: name, WParams: w.Params(), Definition: workload.DefinitionOf(w), Load: cfg, Info: t.Info(), Cores: runtime.NumCPU(), NoBytes: workload.NoBytes(w), Network: netw}
	if a, ok := w.(workload.Advisor); ok {
		kp.Advice = a.Advice
	}
	doc, err := report.BuildKnee(kp,
		probes, kneeDoc(f, slo, sp, kr, probes, durs))
	if err != nil {
		return err
	}
	if serr != nil || kr.Stop == knee.StopInterrupted {
		doc.Partial = true
	}
	f.shard.apply(doc, steps, w, key, hosts)
	suggestLarger(doc)
	path, err := e.writeResult(f.out, doc, report.PrintKnee)
	if err != nil {
		return err
	}
	if cerr != nil {
		return fmt.Errorf("restore settings: %w", cerr)
	}
	switch {
	case kr.Stop == knee.StopInterrupted && ctx.Err() == nil && f.shard.s != nil:
		return errors.New("knee search stopped: another shard was interrupted; partial result written to " + path)
	case kr.Stop == knee.StopInterrupted:
		return errors.New("knee search interrupted; partial result written to " + path)
	case serr != nil:
		return fmt.Errorf("knee search stopped: %w (partial result written to %s)", serr, path)
	}
	return nil
}

// printKneePlan says, before the first probe, what each probe is and when
// the search stops.
func (e *env) printKneePlan(f *kneeFlags, slo knee.SLO, sp knee.Params, info target.Info) {
	var given, implied []string
	for _, t := range slo {
		if t.Implied {
			implied = append(implied, t.String())
		} else {
			given = append(given, t.String())
		}
	}
	fmt.Fprintf(e.stdout, "SLO: %s", strings.Join(given, ","))
	if len(implied) > 0 {
		fmt.Fprintf(e.stdout, " (implied: %s)", strings.Join(implied, ","))
	}
	fmt.Fprintln(e.stdout)
	warm := "no warm-up"
	if f.stepWarmup > 0 {
		warm = fmt.Sprintf("after %v warm-up", f.stepWarmup)
	}
	fmt.Fprintf(e.stdout, "each probe: one open-loop step of %v (%s), %s arrivals, late after %v, %s, durability %s\n",
		f.stepDur, warm, f.open.arrival, f.open.lateAfter, diagnose.Threads(f.threads), info.Durability.Mode)
	if s := f.shard.s; s != nil {
		fmt.Fprintf(e.stdout, "shard %s: workers %d to %d of %d and 1/%d of each probe's rate; the shards meet before every probe and judge it by all their requests\n",
			s, f.shard.first, f.shard.first+f.threads-1, f.shard.total, s.N)
	}
	fmt.Fprintf(e.stdout, "stop rule: ramp ×2 from %s/s until a probe breaks the SLO or %s/s passes, then bisect until the failing rate is within %s of the passing one; if the start rate breaks it while kept up with, the ramp goes on (one probe a rate, at most %d) for a rate where the latency is lower\n",
		fmtRate(sp.Start), fmtRate(sp.Max), strings.TrimSpace(f.precision), knee.MaxLowScan)
	if note := thinPlan(slo, sp.Start, f.stepDur); note != "" {
		fmt.Fprintln(e.stdout, "note: "+note)
	}
	if note := oneWorkerNote(f.threads, f.threadsSet, info.Engine); note != "" {
		fmt.Fprintln(e.stdout, "note: "+note)
	}
	if note := poolerNote(info, "each probe"); note != "" {
		fmt.Fprintln(e.stdout, "note: "+note)
	}
	switch sp.Retries {
	case 0:
		fmt.Fprintln(e.stdout, "re-runs: none (--retries 0): a rate fails at its first failing probe")
	case 1:
		fmt.Fprintln(e.stdout, "re-runs: a probe that breaks the SLO is run once more; its rate fails only if both runs do")
	default:
		fmt.Fprintf(e.stdout, "re-runs: a probe that breaks the SLO is run up to %d more times; its rate fails only if every run does\n", sp.Retries)
	}
	if sp.Retries > 0 && slo.HasPercentile() {
		fmt.Fprintf(e.stdout, "re-runs of a probe that broke the SLO only by percentiles of too few requests last long enough to measure them (at most %d× --step-duration)\n", maxThinStretch)
	}
}

// thinPlan says, before the search, below which rate a probe of step
// holds too few requests for the SLO's percentiles to be measured
// (knee.ThinRequests above them), when the search starts below it; "".
func thinPlan(slo knee.SLO, start float64, step time.Duration) string {
	var worst string
	var need int64
	for _, t := range slo {
		// An operation's term needs more in all, by its share, which
		// is not known before the first probe.
		if n := knee.RequestsFor(t.Metric); n > need && t.Operation == "" {
			worst, need = t.Metric, n
		}
	}
	if need == 0 || step <= 0 {
		return ""
	}
	below := float64(need) / step.Seconds()
	if start >= below {
		return ""
	}
	return fmt.Sprintf("a %v probe below %s/s holds fewer than the %d requests %s needs to be measured (10 above it): there it is one of the probe's few slowest, and one stray slow request can fail the SLO (--step-duration %s measures it from %s/s)",
		step, fmtRate(below), need, worst, report.ProbeSecs(float64(need)/start), fmtRate(start))
}

// maxThinStretch bounds how much longer than --step-duration a re-run is
// made to measure a percentile (thinRetry).
const maxThinStretch = 10

// thinRetry is the duration of a re-run at rate after the outcome prev:
// when prev broke the SLO only by percentiles measured from too few
// requests (knee.Outcome.Thin), long enough for them to be measured (at
// most maxThinStretch × step, in whole seconds), and why; else step.
// The failure is then the percentile's or a stray slow request's, and
// one more run as short would say no more.
func thinRetry(prev knee.Outcome, rate float64, step time.Duration) (time.Duration, string) {
	if prev.Pass || len(prev.Thin) == 0 || len(prev.Thin) != len(prev.Failed) || prev.Need <= 0 || rate <= 0 {
		return step, ""
	}
	d := time.Duration(math.Ceil(float64(prev.Need)/rate)) * time.Second
	if d <= step {
		return step, ""
	}
	d = min(d, maxThinStretch*step)
	return d, fmt.Sprintf("run for %v: %s failed on too few requests; %v at %s/s holds %.0f", d, strings.Join(prev.Thin, ", "), d, fmtRate(rate), d.Seconds()*rate)
}

// figuresOf extracts what the SLO looks at from a probe's step.
func figuresOf(st runner.StepResult) knee.Figures {
	fig := knee.Figures{Rate: st.Rate, Achieved: st.Achieved, Scheduled: st.Scheduled, Completed: st.Completed, Late: st.Late, Failed: st.Failed}
	fig.Latency = metricsLatency(st)
	if st.Snap != nil {
		fig.ByOp = make(map[string]knee.OpFigures, len(st.Snap.Ops))
		for _, o := range st.Snap.Ops {
			fig.ByOp[o.Name] = knee.OpFigures{Completed: o.Requests, Latency: metrics.LatencyOf(o.Hist)}
		}
	}
	return fig
}

// minServiceProbe is how many requests a probe needs before its mean
// service time is taken for kneeInFlightNote.
const minServiceProbe = 20

// kneeBusyNote is how busy a probe keeps ceiling's workers (achieved rate
// × mean service time ÷ workers) before kneeInFlightNote speaks.
const kneeBusyNote = 0.5

// kneeInFlightNote says, once a probe keeps the workers at least
// kneeBusyNote busy, the rate above which threads workers cannot keep up
// at that probe's mean service time (ms; Little's law: threads ÷ service
// time), when the search may go above it (searchMax); "" otherwise. Above
// it a probe measures -c, not the database.
func kneeInFlightNote(threads int, achieved, serviceMs, searchMax float64) string {
	if threads <= 0 || serviceMs <= 0 || achieved*serviceMs/1000/float64(threads) < kneeBusyNote {
		return ""
	}
	top := float64(threads) / (serviceMs / 1000)
	if top >= searchMax {
		return ""
	}
	were := "were"
	if threads == 1 {
		were = "was"
	}
	return fmt.Sprintf("at %s/s ceiling's %s %s busy %.0f%% of the time (%s per request): above ≈ %s/s requests queue in ceiling, and a probe measures -c, not the database (raise -c to search higher)",
		report.ApproxRate(achieved), diagnose.WorkersText(threads), were, 100*achieved*serviceMs/1000/float64(threads),
		fmtBudget(time.Duration(serviceMs*float64(time.Millisecond))), report.ApproxRate(top))
}

// probeLine is a probe's line on the console, from the figures the SLO
// judged (measured: the probe ran a while), with the latency term shown.
func probeLine(n int, st knee.Figures, shown knee.Term, measured bool, out knee.Outcome, retry int) string {
	late, lat, ach := "n/a", "n/a", "n/a"
	if st.Scheduled > 0 {
		late = fmt.Sprintf("%.2f%%", 100*float64(st.Late)/float64(st.Scheduled))
	}
	if v, ok := shown.Value(st); ok {
		lat = fmt.Sprintf("%.3f ms", v)
	}
	if st.Rate > 0 && measured {
		ach = fmt.Sprintf("%.1f/s (%.1f%%)", st.Achieved, 100*st.Achieved/st.Rate)
	}
	verdict := "pass"
	switch {
	case out.Partial:
		verdict = "interrupted"
	case !out.Pass && retry > 0:
		verdict = "FAIL again: " + strings.Join(out.Failed, "; ")
	case !out.Pass:
		verdict = "FAIL: " + strings.Join(out.Failed, "; ")
	case retry > 0:
		verdict = fmt.Sprintf("pass (run %d at this rate: the failure did not recur)", retry+1)
	}
	return fmt.Sprintf("probe %2d: %10s/s  achieved %-22s late %-8s %s %-12s errors %-6d %s", n, fmtRate(st.Rate), ach, late, shown.Name(), lat, st.Failed, verdict)
}

// kneeDoc turns the search's answer into the result's knee object.
func kneeDoc(f *kneeFlags, slo knee.SLO, sp knee.Params, kr knee.Result, probes []*runner.Result, durs []time.Duration) report.Knee {
	k := report.Knee{SLO: f.slo, SLOApplied: slo.String(), Start: sp.Start, Max: sp.Max, PrecisionPct: 100 * sp.Precision,
		StepS: f.stepDur.Seconds(), StepWarmupS: f.stepWarmup.Seconds(), Retries: sp.Retries, Stop: string(kr.Stop),
		Probes: []report.KneeProbe{}, TransientRates: append([]float64{}, kr.Transient...), FailsBelow: kr.FailsBelow, RunArgs: f.runArgs}
	if kr.Knee > 0 {
		v := kr.Knee
		k.Rate = &v
	}
	if kr.FirstFailing > 0 {
		v := kr.FirstFailing
		k.FirstFailingRate = &v
	}
	step := 0
	for i, p := range kr.Probes {
		kp := report.KneeProbe{Rate: p.Rate, Pass: p.Pass && !p.Partial, Partial: p.Partial, FailedTerms: p.Failed, ThinTerms: p.Thin, NeedRequests: p.Need, Retry: p.Retry}
		if kp.FailedTerms == nil {
			kp.FailedTerms = []string{}
		}
		if i < len(durs) && durs[i] != f.stepDur {
			kp.DurationS = durs[i].Seconds()
		}
		if i < len(probes) && len(probes[i].Steps) > 0 {
			s := step
			kp.Step = &s
			step++
		}
		k.Probes = append(k.Probes, kp)
	}
	return k
}

// metricsLatency is the latency of a step's completed requests, nil if none.
func metricsLatency(st runner.StepResult) *metrics.Latency {
	if st.Snap == nil {
		return nil
	}
	return metrics.LatencyOf(st.Snap.Total().Hist)
}

func fmtRate(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// oneWorkerNote warns, before a knee search on a server with the default
// single worker, that one worker keeps one request in flight: its knee is
// at most 1 ÷ a request's service time, whatever the server could do
// (PostgreSQL inserts/deletes: 6,720/s with -c 1, where -c 8 reached
// 20,000/s). SQLite takes one writer at a time, so there -c 1 is no such
// limit for writes; an explicit -c 1 is the user's choice.
func oneWorkerNote(threads int, given bool, engine string) string {
	if threads != 1 || given || engine == "sqlite" {
		return ""
	}
	return "one worker (-c 1, the default) keeps one request in flight, so this search finds at most 1 ÷ a request's service time, and the verdict then names ceiling's worker (client), not the server; give -c (e.g. -c 8) for the server's knee"
}
