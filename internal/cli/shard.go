package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ceiling-db/ceiling/internal/htmlreport"
	"github.com/ceiling-db/ceiling/internal/metrics"
	"github.com/ceiling-db/ceiling/internal/report"
	"github.com/ceiling-db/ceiling/internal/runner"
	"github.com/ceiling-db/ceiling/internal/shard"
	"github.com/ceiling-db/ceiling/internal/target"
	"github.com/ceiling-db/ceiling/internal/workload"
	"github.com/ceiling-db/ceiling/internal/workload/all"
)

// shardFlags are run's --shard, --shard-wait and --shard-key, and what
// the shard learnt.
type shardFlags struct {
	spec string
	wait time.Duration
	key  string

	s       *shard.Spec // nil: not sharded
	total   int         // the workers of all shards (-c)
	first   int         // this shard's first worker among them
	meeting *shard.Meeting
	// lastHosts are the hosts of the last meeting, kept past its leave.
	lastHosts []string
}

func (sf *shardFlags) bind(fs *pflag.FlagSet, usage string) {
	fs.StringVar(&sf.spec, "shard", "", usage)
	sf.wait = 10 * time.Minute
	fs.Var(durationValue{&sf.wait}, "shard-wait", "with --shard: how long a shard waits for the others to join")
	fs.StringVar(&sf.key, "shard-key", "", "with --shard: the name the shards meet under (default: made from the workload and load flags, so that shards started with different ones never meet)")
}

// Usages of --shard. pflag shows the first `quoted` word as the value's
// name in --help ("--shard I/N"), so no other word is quoted.
const (
	runShardUsage  = "run as shard `I/N` (I from 0 to N-1) of a run several ceiling processes make together, on one machine or many, each with the same flags but --shard; -c, --ops and the rates are the whole run's, split between the shards; the shards meet in the database and start together; ceiling merge reads their results"
	kneeShardUsage = "search as shard `I/N` (I from 0 to N-1) of a knee search several ceiling processes make together, on one machine or many, each with the same flags but --shard; -c and each probe's rate are the whole search's, split between the shards; the shards meet in the database before each probe, judge it by all the shards' requests and take the same next step; ceiling merge reads their results"
)

// shardable lists the workloads that can run sharded, for errors.
func shardable() string {
	var names []string
	for _, m := range all.Registry() {
		if _, ok := m.New().(workload.Sharder); ok {
			names = append(names, m.Name)
		}
	}
	return strings.Join(names, ", ")
}

// setup checks --shard against run's other flags and makes w the shard.
func (sf *shardFlags) setup(fs *pflag.FlagSet, name string, w workload.Workload, f *runFlags, dsn string) error {
	var own []error
	if f.repeat > 1 {
		own = append(own, fmt.Errorf("--repeat and --shard are exclusive: run the shards again for another run"))
	}
	if fs.Changed("isolate") && f.isolate > 0 {
		own = append(own, fmt.Errorf("--isolate and --shard are exclusive: the shards cannot run one operation alone together"))
	}
	if err := sf.check(fs, name, w, dsn, f.durability, f.emulate != "", own); err != nil || sf.s == nil {
		return err
	}
	f.isolate = 0
	f.targetFlags.shared = true
	return nil
}

// check checks --shard against the flags every sharded command shares
// (own: the command's own refusals) and makes w the shard; it leaves sf.s
// nil when --shard is not given.
func (sf *shardFlags) check(fs *pflag.FlagSet, name string, w workload.Workload, dsn, durability string, emulate bool, own []error) error {
	for _, n := range []string{"shard-wait", "shard-key"} {
		if fs.Changed(n) && !fs.Changed("shard") {
			return usagef("--%s needs --shard", n)
		}
	}
	if !fs.Changed("shard") {
		return nil
	}
	s, err := shard.Parse(sf.spec)
	if err != nil {
		return &UsageError{Err: err}
	}
	sh, ok := w.(workload.Sharder)
	if !ok {
		return usagef("--shard: %s cannot run sharded yet (these can: %s)", name, shardable())
	}
	errs := own
	if emulate {
		errs = append(errs, fmt.Errorf("--emulate and --shard are exclusive: the limits are one process's"))
	}
	if sf.wait <= 0 {
		errs = append(errs, fmt.Errorf("--shard-wait must be positive, got %v", sf.wait))
	}
	if len(sf.key) > 100 {
		errs = append(errs, fmt.Errorf("--shard-key is longer than 100 characters"))
	}
	if scheme, _, _ := strings.Cut(dsn, ":"); (strings.EqualFold(scheme, "mysql") || strings.Contains(dsn, "@tcp(")) && durability != "server" {
		errs = append(errs, fmt.Errorf("--durability %s changes innodb_flush_log_at_trx_commit for the whole server, and each shard would put it back as it ends: set it on the server before the shards start and run them with --durability server", durability))
	}
	if len(errs) > 0 {
		return joinUsage(errs)
	}
	if err := sh.Shard(s.I, s.N); err != nil {
		return usagef("--shard %s: %v", s, err)
	}
	sf.s = &s
	return nil
}

// split makes cfg this shard's part of the whole run (splitConfig) and
// f's threads and requests its own.
func (sf *shardFlags) split(f *runFlags, cfg *runner.Config) error {
	if err := sf.splitConfig(cfg); err != nil {
		return err
	}
	f.threads = cfg.Threads
	if cfg.Ops > 0 {
		f.ops = cfg.Ops
	}
	return nil
}

// splitConfig makes cfg this shard's part of the whole run: its workers
// (the first numbered after the earlier shards'), requests and rates, and
// its own poisson arrivals.
func (sf *shardFlags) splitConfig(cfg *runner.Config) error {
	if sf.s == nil {
		return nil
	}
	s := *sf.s
	// Every shard refuses what leaves any shard empty: a shard that
	// started would wait for one that never comes.
	if cfg.Threads < s.N {
		return usagef("--shard %s with -c %d: shards would have no worker; give at least %d workers in total (-c is the whole run's)", s, cfg.Threads, s.N)
	}
	count, first := s.Share(int64(cfg.Threads))
	sf.total, sf.first = cfg.Threads, int(first)
	cfg.Threads, cfg.FirstWorker = int(count), int(first)
	if cfg.Ops > 0 {
		if cfg.Ops < int64(s.N) {
			return usagef("--shard %s with --ops %d: shards would have no request; give at least %d in total (--ops is the whole run's)", s, cfg.Ops, s.N)
		}
		cfg.Ops, _ = s.Share(cfg.Ops)
	}
	cfg.Rate /= float64(s.N)
	for i := range cfg.Steps {
		cfg.Steps[i].Rate /= float64(s.N)
	}
	// Shards with one seed would make the same poisson gaps, their
	// arrivals bunched together.
	cfg.Seed += uint64(s.I) * 0x9e3779b97f4a7c15
	// Each interval's histogram, for the merged run's latency over time.
	cfg.IntervalHists = true
	return nil
}

// runKey is the name the shards meet under: --shard-key, else one made
// from the workload, its parameters and the whole run's load, so that
// only shards of the same run meet.
func (sf *shardFlags) runKey(name string, w workload.Workload, f *runFlags) string {
	return sf.keyOf(name, "", w, fmt.Sprintf("%d %v %d %v %g %q %v %v %s %v %s", sf.total, f.duration, f.ops, f.warmup, f.rate, f.rates, f.step, f.stepWarmup, f.open.arrival, f.open.lateAfter, f.durability))
}

// keyOf is --shard-key, else a key made from the command (kind: "" for
// run), the workload and load, the flags that must agree.
func (sf *shardFlags) keyOf(name, kind string, w workload.Workload, load string) string {
	if sf.key != "" {
		return sf.key
	}
	h := fnv.New64a()
	params, _ := json.Marshal(w.Params()) // map keys sorted
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00", name, params, workload.DefinitionOf(w))
	h.Write([]byte(load))
	if kind != "" {
		name += "-" + kind
	}
	return fmt.Sprintf("%s-%d-%016x", name, sf.s.N, h.Sum64())
}

// beforeStart returns the runner hook that meets the other shards under
// key, then waits this shard's place in the first rate's schedule (shard
// I of N starts I/N of a gap late, so that the shards' uniform arrivals
// interleave instead of coming N at once).
func (sf *shardFlags) beforeStart(e *env, t target.Target, key string, cfg runner.Config) func(context.Context) error {
	return func(ctx context.Context) error {
		m, err := shard.Meet(ctx, t, key, *sf.s, sf.wait, e.stdout)
		if m != nil {
			sf.meeting = m // left by the caller, also after an interruption at the start
			sf.lastHosts = m.Hosts
		}
		if err != nil {
			return err
		}
		rate := cfg.Rate
		if len(cfg.Steps) > 0 {
			rate = cfg.Steps[0].Rate
		}
		if rate > 0 && sf.s.I > 0 {
			lag := time.Duration(float64(sf.s.I) / float64(sf.s.N) / rate * float64(time.Second))
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(min(lag, time.Second)):
			}
		}
		return nil
	}
}

// leave removes the shard from the meeting table.
func (sf *shardFlags) leave() {
	if sf.meeting != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		sf.meeting.Leave(ctx)
		sf.meeting = nil
	}
}

// apply records the shard in the result: its place among the shards, an
// id of its own (shards on one host write to one --out in the same
// second), and no verdict: the server's counters count every shard's
// requests, so only the merged result can tell what each request cost.
func (sf *shardFlags) apply(doc *report.Result, steps []runner.StepResult, w workload.Workload, key string, hosts []string) {
	if sf.s == nil {
		return
	}
	for i, st := range steps {
		if i < len(doc.Steps) && st.Snap != nil {
			if enc, err := metrics.EncodeHist(st.Snap.Total().Hist); err == nil {
				doc.Steps[i].Histogram = enc
			}
		}
	}
	s := *sf.s
	doc.ID += fmt.Sprintf("-shard%dof%d", s.I, s.N)
	doc.Load.Shard = &report.Shard{I: s.I, N: s.N, Key: key, Threads: sf.total, FirstWorker: sf.first, Hosts: hosts}
	if df, ok := w.(workload.DatabaseFigurer); ok {
		doc.Load.Shard.DatabaseFigures = df.DatabaseFigures()
	}
	doc.Verdict = nil
	report.DropForeignWork(doc)
	for i := range doc.Steps {
		doc.Steps[i].Verdict = nil
	}
	why := "the server's counters count every shard's requests, so this result's per-request costs are overstated"
	if doc.Target.Engine == "sqlite" {
		why = "its file IO and costs are this process's own, but the other shards' work on the same database weighs on its latency"
	}
	doc.Notes = append(doc.Notes, fmt.Sprintf("shard %s: workers %d to %d of %d; %s, and it has no verdict of its own: `ceiling merge` the %d shards' results for the run's figures and verdict",
		s, sf.first, sf.first+doc.Load.Threads-1, sf.total, why, s.N))
}

// hostsOf is the meeting's hosts, or nil.
func (sf *shardFlags) hostsOf() []string {
	if sf.meeting == nil {
		return nil
	}
	h := append([]string(nil), sf.meeting.Hosts...)
	return h
}

func (e *env) mergeCmd() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "merge SHARD.json... | DIR [flags]",
		Short: "Merge the results of a sharded run's shards (run or knee --shard I/N) into one result",
		Long: `merge makes one result of the results of the shards of one run (run --shard
I/N, or knee --shard I/N; each shard's result given once; a directory stands
for the shard results in it, which must be of one run; a pod log holding
results printed with --print-result stands for them). The merged result adds
up the shards' requests, rows, errors and rates, merges their latency
histograms (exact percentiles over every request, and per interval), takes
the server's counters from one shard (they count every shard's requests; an
embedded database's are each process's own and are added up), computes the
per-request costs over all the shards' requests, and makes the verdict again
from the merged figures. Of a knee search, it checks that the shards'
answers and probes agree and merges each probe's step. It is written to
--out and summarised on the console, like a run's.

A sharded run, three processes on one machine standing in for three clients:
  ceiling prepare inserts-deletes --db postgres://postgres@db/postgres
  for i in 0 1 2; do
    ceiling run inserts-deletes --db postgres://postgres@db/postgres -c 12 -T 60s --shard $i/3 --out shards &
  done; wait
  ceiling merge shards/`,
		Example: `  ceiling merge shards/
  ceiling merge r/run-shard0of2.json r/run-shard1of2.json --out merged.json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("merge needs the shards' result files (or a directory holding them)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			ins, err := readShardInputs(args)
			if err != nil {
				return err
			}
			rs := make([]*report.Result, len(ins))
			files := make([]string, len(ins))
			for i, in := range ins {
				rs[i], files[i] = in.Result, in.Path
			}
			doc, err := report.Merge(rs, files)
			if err != nil {
				return &UsageError{Err: err}
			}
			if err := checkOutDir(out); err != nil {
				return err
			}
			path, err := report.Write(out, doc)
			if doc.Knee != nil {
				report.PrintKnee(e.stdout, doc)
			} else {
				report.PrintSummary(e.stdout, doc)
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "\nresult: %s\n", path)
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "results", outUsage)
	return cmd
}

// readShardInputs reads the files and directories given to merge: a
// directory's shard results (a merged result there is passed over), which
// must all be of one run.
func readShardInputs(args []string) ([]htmlreport.Input, error) {
	var out []htmlreport.Input
	for _, a := range args {
		ins, err := readInputs([]string{a})
		if err != nil {
			// Not a result: a log holding results (run --print-result)?
			b, rerr := os.ReadFile(a)
			if rerr != nil {
				return nil, err
			}
			framed, ferr := report.ReadFramed(b)
			if ferr != nil {
				return nil, usagef("%s: %v", a, ferr)
			}
			if len(framed) == 0 {
				return nil, err
			}
			for k, r := range framed {
				out = append(out, htmlreport.Input{Path: fmt.Sprintf("%s (result %d)", a, k+1), Result: r})
			}
			continue
		}
		fi, err := os.Stat(a)
		if err != nil || !fi.IsDir() {
			out = append(out, ins...)
			continue
		}
		keys := map[string]bool{}
		var kept []htmlreport.Input
		for _, in := range ins {
			if sh := in.Result.Load.Shard; sh != nil && sh.I >= 0 {
				kept = append(kept, in)
				keys[sh.Key] = true
			}
		}
		if len(kept) == 0 {
			return nil, usagef("%s holds no shard's result (run --shard I/N)", a)
		}
		if len(keys) > 1 {
			names := make([]string, 0, len(keys))
			for k := range keys {
				names = append(names, k)
			}
			sort.Strings(names)
			return nil, usagef("%s holds the shards of %d runs (%s): give one run's files", a, len(keys), strings.Join(names, ", "))
		}
		out = append(out, kept...)
	}
	return out, nil
}

// shardReadOnly refuses a sharded run or knee search on a server that
// takes no writes (info.ReadOnly): the shards meet in a table there.
func shardReadOnly(info target.Info) error {
	if info.ReadOnly == "" {
		return nil
	}
	return fmt.Errorf("--shard: %s takes no writes (%s), and the shards meet in a table there: run one ceiling without --shard (-c sets its workers), or shard against the primary", info.DSN, info.ReadOnly)
}
