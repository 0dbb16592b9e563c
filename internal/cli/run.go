package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ceiling-db/ceiling/internal/report"
	"github.com/ceiling-db/ceiling/internal/runner"
	"github.com/ceiling-db/ceiling/internal/workload"
	"github.com/ceiling-db/ceiling/internal/workload/all"
)

type runFlags struct {
	targetFlags
	threads     int
	duration    time.Duration
	ops         int64
	warmup      time.Duration
	interval    time.Duration
	reportEvery time.Duration
	out         string
}

func (e *env) runCmd() *cobra.Command {
	return e.workloadParent("run", "Prepare a workload's data, run it, and report the result", e.runWorkloadCmd)
}

func (e *env) runWorkloadCmd(name string) *cobra.Command {
	meta, _ := all.Registry().Lookup(name)
	w := meta.New()
	f := &runFlags{}
	cmd := &cobra.Command{
		Use:   name + " [flags]",
		Short: meta.Description,
		Long: meta.Description + `.

The run prepares the workload's tables (dropping ceiling's previous copy),
runs the warm-up (excluded from the figures), then measures for --duration or
until --ops requests are done, printing a line per interval. It ends with a
summary on the console and a JSON result in --out. Ctrl-C stops the run
cleanly and still writes the (partial) result.`,
		Example: fmt.Sprintf(`  ceiling run %[1]s
  ceiling run %[1]s -c 4 -T 20s
  ceiling run %[1]s --ops 10000 --durability full
  ceiling run %[1]s --db sqlite:/tmp/bench.db --warmup 5s --out /tmp/results`, name),
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !cmd.Flags().Changed("duration") && f.ops > 0 {
				f.duration = 0
			}
			return e.run(cmd.Context(), name, w, f)
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
	fs.Var(durationValue{&f.interval}, "interval", "granularity of the time series in the result")
	f.reportEvery = 10 * time.Second
	fs.Var(durationValue{&f.reportEvery}, "report-every", "how often a progress line is kept on the console")
	fs.StringVar(&f.out, "out", "results", "directory for the JSON result")
	w.Flags(fs)
	return cmd
}

func (f *runFlags) validate(w workload.Workload) error {
	var errs []error
	if f.threads <= 0 {
		errs = append(errs, fmt.Errorf("--threads must be at least 1, got %d", f.threads))
	}
	if f.duration < 0 || (f.duration == 0 && f.ops == 0) {
		errs = append(errs, fmt.Errorf("--duration must be positive, got %v", f.duration))
	}
	if f.ops < 0 {
		errs = append(errs, fmt.Errorf("--ops must be positive, got %d", f.ops))
	}
	if f.warmup < 0 {
		errs = append(errs, fmt.Errorf("--warmup must be zero or more, got %v", f.warmup))
	}
	if f.interval <= 0 {
		errs = append(errs, fmt.Errorf("--interval must be positive, got %v", f.interval))
	}
	if f.reportEvery <= 0 {
		errs = append(errs, fmt.Errorf("--report-every must be positive, got %v", f.reportEvery))
	}
	if err := w.Validate(); err != nil {
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		return nil
	}
	msgs := make([]string, len(errs))
	for i, err := range errs {
		msgs[i] = err.Error()
	}
	return usagef("%s", strings.Join(msgs, "; "))
}

// checkOutDir fails early when the result could not be written.
func checkOutDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return usagef("--out %s: %v", dir, unwrapPath(err))
	}
	f, err := os.CreateTemp(dir, ".ceiling-probe-*")
	if err != nil {
		return usagef("--out %s is not writable: %v", dir, unwrapPath(err))
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func (e *env) run(ctx context.Context, name string, w workload.Workload, f *runFlags) (err error) {
	if err := f.validate(w); err != nil {
		return err
	}
	if err := checkOutDir(f.out); err != nil {
		return err
	}
	t, err := e.openTarget(ctx, &f.targetFlags, f.threads)
	if err != nil {
		return err
	}
	closeOnce := onceCloser(t)
	defer func() {
		if cerr := closeOnce(); cerr != nil && err == nil {
			err = fmt.Errorf("restore settings: %w", cerr)
		}
	}()
	info := t.Info()
	fmt.Fprintf(e.stdout, "ceiling %s: %s on %s %s (%s)\n", version(), name, info.Engine, info.Version, info.DSN)
	fmt.Fprintf(e.stdout, "preparing %s ...\n", name)
	start := time.Now()
	if err := w.Prepare(ctx, t, e.stdout); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("interrupted while preparing %s", name)
		}
		return fmt.Errorf("prepare %s: %w", name, err)
	}
	fmt.Fprintf(e.stdout, "prepared in %.1fs\n", time.Since(start).Seconds())

	plan := fmt.Sprintf("%d threads", f.threads)
	if f.ops > 0 {
		plan += fmt.Sprintf(", %d requests", f.ops)
	}
	if f.duration > 0 {
		plan += fmt.Sprintf(", %v", f.duration)
	}
	if f.warmup > 0 {
		plan += fmt.Sprintf(" after %v warm-up", f.warmup)
	}
	fmt.Fprintf(e.stdout, "running %s: %s, closed loop, durability %s", name, plan, info.Durability.Mode)
	if d := info.Durability; d.Setting != "" {
		fmt.Fprintf(e.stdout, " (%s %s -> %s)", d.Setting, d.Before, d.During)
	}
	fmt.Fprintln(e.stdout)

	cores := runtime.NumCPU()
	live := &report.Live{W: e.stdout, TTY: e.isTTY, Every: f.reportEvery, Cores: cores}
	cfg := runner.Config{Threads: f.threads, Duration: f.duration, Ops: f.ops, Warmup: f.warmup, Interval: f.interval, OnInterval: live.Interval}
	res, err := runner.Run(ctx, cfg, t, w)
	live.Done()
	if err != nil {
		return err
	}
	// Close now, so the result records the setting as restored.
	cerr := closeOnce()
	doc, err := report.Build(report.Params{Version: version(), Workload: name, WParams: w.Params(), Load: cfg, Info: t.Info(), Cores: cores}, res)
	if err != nil {
		return err
	}
	path, err := report.Write(f.out, doc)
	report.PrintSummary(e.stdout, doc)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "\nresult: %s\n", path)
	if cerr != nil {
		return fmt.Errorf("restore settings: %w", cerr)
	}
	if doc.Partial {
		return errors.New("run interrupted; partial result written to " + path)
	}
	return nil
}
