package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ceiling-db/ceiling/internal/report"
	"github.com/ceiling-db/ceiling/internal/shard"
	"github.com/ceiling-db/ceiling/internal/target"
	"github.com/ceiling-db/ceiling/internal/workload"
	"github.com/ceiling-db/ceiling/internal/workload/all"
	"github.com/ceiling-db/ceiling/internal/workload/tpcc"
)

func (e *env) prepareCmd() *cobra.Command {
	return e.workloadParent("prepare", "Create a workload's tables and load its data, without running it", `  ceiling prepare tpcc --warehouses 10 --db postgres://postgres@localhost/postgres
  ceiling prepare tpcc --warehouses 2 --load-threads 4 --db mysql://root@127.0.0.1:3306/test`, func(name string) *cobra.Command {
		meta, _ := all.Registry().Lookup(name)
		w := meta.New()
		f := &targetFlags{durability: "server"}
		_, reused := w.(workload.Attacher)
		r, ok := w.(interface{ Reusable() bool }) // a row workload when read-only; custom
		reusable := ok && r.Reusable()
		same := " (with the same --rows and --tables)"  // what --reuse checks
		if _, ok := w.(workload.CleanupValidator); ok { // custom: the tables are the file's
			same = " (with the same --file)"
		}
		long := "Create the tables of " + name + " and load their data, without running anything.\n\n"
		switch {
		case reused:
			long += "`ceiling run " + name + "` and `ceiling knee " + name + "` use this dataset as it is (and refuse to run without one)."
		case reusable:
			long += "`ceiling run " + name + "` and `ceiling knee " + name + "` load a fresh copy of their own before measuring,\n" +
				"unless given --reuse" + same + ": then they check and use these tables,\n" +
				"which saves the load on a large table; `ceiling cleanup " + name + "` drops them."
		default:
			long += "`ceiling run " + name + "` and `ceiling knee " + name + "` load a fresh copy of their own before measuring\n" +
				"(runs change rows, and each starts from the same data), so this copy is for\n" +
				"looking at the tables or using them with other tools; `ceiling cleanup " + name + "` drops them."
		}
		if _, ok := w.(workload.Sharder); ok {
			long += "\n\nA sharded run (run --shard I/N: several ceiling processes, see run --help) uses\n" +
				"the prepared data as it is: prepare it once before the shards start."
		}
		cmd := &cobra.Command{
			Use:     name + " [flags]",
			Short:   "prepare " + name,
			Long:    long + docSection(meta),
			Example: fmt.Sprintf("  ceiling prepare %s --db sqlite:/tmp/bench.db", name),
			Args:    noArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				if err := phaseFlags(cmd.Flags(), "prepare"); err != nil {
					return err
				}
				if err := w.Validate(); err != nil {
					return &UsageError{Err: err}
				}
				if cmd.Flags().Changed("reuse") {
					return usagef("--reuse applies to run and knee, which then use the tables prepare made")
				}
				ctx := cmd.Context()
				t, err := e.openTarget(ctx, f, target.Options{MaxConns: 1})
				if err != nil {
					return err
				}
				defer closeTarget(t)
				if info := t.Info(); info.ReadOnly != "" {
					then := ""
					if reusable {
						then = fmt.Sprintf("; then `ceiling run %s --reuse` here reads the tables it made", name)
					}
					return fmt.Errorf("%s takes no writes (%s): prepare %s on the primary%s", info.DSN, info.ReadOnly, name, then)
				}
				start := time.Now()
				if err := w.Prepare(ctx, t, e.stdout); err != nil {
					if ctx.Err() != nil {
						// The driver's "context canceled" in the middle of
						// some table says less than what the user needs.
						again := "ceiling prepare " + name + changedArgs(cmd.Flags(), "db", "force")
						if cmd.Flags().Lookup("force") != nil {
							again += " --force"
						}
						return fmt.Errorf("prepare %s interrupted after %.1fs: the data loaded so far is incomplete; `%s` loads it again, `ceiling cleanup %s` drops it",
							name, time.Since(start).Seconds(), again, name)
					}
					return fmt.Errorf("prepare %s: %w", name, err)
				}
				fmt.Fprintf(e.stdout, "prepared %s on %s in %.1fs\n", name, t.Info().DSN, time.Since(start).Seconds())
				switch {
				case reusable:
					// The flags --reuse checks, as given here.
					fmt.Fprintln(e.stdout, e.withDB(fmt.Sprintf("note: `ceiling run %s --reuse%s` uses these tables; without --reuse it loads a fresh copy",
						name, flagArgs(cmd.Flags(), "rows", "tables", "file"))))
				case !reused:
					fmt.Fprintln(e.stdout, e.withDB(fmt.Sprintf("note: `ceiling run %s` loads a fresh copy of its own (run --shard I/N uses these tables); these stay until `ceiling cleanup %s`", name, name)))
				}
				return nil
			},
		}
		f.bind(cmd.Flags())
		w.Flags(cmd.Flags())
		return cmd
	})
}

func (e *env) cleanupCmd() *cobra.Command {
	parent := e.workloadParent("cleanup", "Drop a workload's tables (only objects ceiling created)", `  ceiling cleanup tpcc --db postgres://postgres@localhost/postgres
  ceiling cleanup inserts-deletes                  # sqlite:ceiling.db; the file goes when nothing of ceiling's is left
  ceiling cleanup all --db mysql://root@127.0.0.1:3306/test   # every table and routine ceiling made there`, e.cleanupWorkloadCmd)
	parent.AddCommand(e.cleanupAllCmd())
	return parent
}

// cleanupAllCmd is `ceiling cleanup all`: every object ceiling made in
// the database (any workload's tables, TPC-C's routines, the shards'
// meeting tables) and its namespace, nothing else.
func (e *env) cleanupAllCmd() *cobra.Command {
	f := &targetFlags{durability: "server"}
	cmd := &cobra.Command{
		Use:   "all [flags]",
		Short: "drop every table and routine ceiling made in the database, and its namespace",
		Long: `Drops every object ceiling made in the database, whatever workload made it:
the tables it marked as its own (any workload's, custom files' included),
TPC-C's server-side routines (--procedures), the shards' meeting tables, then
ceiling's namespace: the PostgreSQL schema "ceiling" (if ceiling created it
and nothing else is in it), and on SQLite the bookkeeping table and, if
ceiling created the file, the file. An object of the same name that ceiling
did not make is never touched.`,
		Example: "  ceiling cleanup all --db postgres://postgres@localhost/postgres\n  ceiling cleanup all --db sqlite:/tmp/bench.db",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return e.withExisting(cmd.Context(), f, e.cleanupAll)
		},
	}
	f.bind(cmd.Flags())
	return cmd
}

// cleanupAll drops the extras of every workload that makes some, then
// every ceiling table (TPC-C's dataset marker first, so that a cleanup cut
// short leaves the dataset marked incomplete rather than whole), then the
// namespace.
func (e *env) cleanupAll(ctx context.Context, t target.Target) error {
	for _, m := range all.Registry() {
		x, ok := m.New().(workload.ExtraDropper)
		if !ok {
			continue
		}
		dropped, err := x.DropExtras(ctx, t)
		for _, d := range dropped {
			fmt.Fprintf(e.stdout, "dropped %s\n", d)
		}
		if err != nil {
			return fmt.Errorf("cleanup all: %w", err)
		}
	}
	have, err := t.Schema().Tables(ctx)
	if err != nil {
		return fmt.Errorf("cleanup all: %w", err)
	}
	slices.SortStableFunc(have, func(a, b string) int {
		switch {
		case a == tpcc.TMeta && b != tpcc.TMeta:
			return -1
		case b == tpcc.TMeta && a != tpcc.TMeta:
			return 1
		}
		return 0
	})
	for _, tb := range have {
		if err := t.Schema().DropTable(ctx, tb); err != nil {
			return fmt.Errorf("cleanup all: %w", err)
		}
		fmt.Fprintf(e.stdout, "dropped %s\n", t.Dialect().Table(tb))
	}
	if len(have) == 0 {
		fmt.Fprintln(e.stdout, "no ceiling table to drop")
	}
	return e.dropNamespace(ctx, t, "cleanup all")
}

// withExisting opens the target of f for a cleanup and runs clean on it;
// a database file that does not exist has nothing to clean up.
func (e *env) withExisting(ctx context.Context, f *targetFlags, clean func(context.Context, target.Target) error) error {
	t, err := e.openExisting(ctx, f)
	if errors.Is(err, target.ErrNoDatabase) {
		fmt.Fprintf(e.stdout, "nothing to clean up: %s\n", oneLine(err.Error()))
		return nil
	}
	if err != nil {
		return err
	}
	defer closeTarget(t)
	if info := t.Info(); info.ReadOnly != "" {
		return fmt.Errorf("%s takes no writes (%s): clean up on the primary, from which the drops reach its replicas", info.DSN, info.ReadOnly)
	}
	return clean(ctx, t)
}

// cleanupWorkloadCmd is `ceiling cleanup WORKLOAD`.
func (e *env) cleanupWorkloadCmd(name string) *cobra.Command {
	meta, _ := all.Registry().Lookup(name)
	w := meta.New()
	f := &targetFlags{durability: "server"}
	cmd := &cobra.Command{
		Use:   name + " [flags]",
		Short: "drop the tables of " + name,
		Long: "Drops the tables " + name + ` made (only tables ceiling created; a foreign
table of the same name is an error, never dropped). When no ceiling table is
left, ceiling's namespace goes too: the PostgreSQL schema "ceiling" (if
ceiling created it and nothing else is in it), and on SQLite the bookkeeping
table and, if ceiling created the file, the database file itself.`,
		Example: fmt.Sprintf("  ceiling cleanup %s --db sqlite:/tmp/bench.db", name),
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := phaseFlags(cmd.Flags(), "cleanup"); err != nil {
				return err
			}
			if v, ok := w.(workload.CleanupValidator); ok {
				if err := v.ValidateCleanup(); err != nil {
					return &UsageError{Err: err}
				}
			}
			return e.withExisting(cmd.Context(), f, func(ctx context.Context, t target.Target) error {
				return e.cleanup(ctx, t, name, w)
			})
		},
	}
	f.bind(cmd.Flags())
	w.Flags(cmd.Flags()) // e.g. --tables N names the tables to drop
	return cmd
}

// phaseFlags refuses a workload flag given to a command it does nothing
// for: a workload marks the flags of one phase by their help text's
// start, "run: " (run and knee), "run and knee: " or "prepare: ".
// Accepted silently, `prepare tpcc --procedures` looked like it set
// something up.
func phaseFlags(fs *pflag.FlagSet, command string) error {
	var errs []error
	fs.Visit(func(fl *pflag.Flag) {
		phase, _, ok := strings.Cut(fl.Usage, ": ")
		if !ok {
			return
		}
		var applies bool
		switch phase {
		case "run", "run and knee":
			applies = command == "run" || command == "knee"
		case "prepare":
			applies = command == "prepare"
		default:
			return // a usage text with a colon, not a phase
		}
		if !applies {
			if phase == "run" {
				phase = "run and knee"
			}
			errs = append(errs, fmt.Errorf("--%s applies to %s only (%s does nothing with it)", fl.Name, phase, command))
		}
	})
	if len(errs) > 0 {
		return joinUsage(errs)
	}
	return nil
}

// cleanup drops the tables of workload w (those it names now, and for a
// workload.TableOwner every existing ceiling table it owns), then, when no
// ceiling table is left, ceiling's namespace (Schema.DropAll).
func (e *env) cleanup(ctx context.Context, t target.Target, name string, w workload.Workload) error {
	if x, ok := w.(workload.ExtraDropper); ok {
		dropped, err := x.DropExtras(ctx, t)
		for _, d := range dropped {
			fmt.Fprintf(e.stdout, "dropped %s\n", d)
		}
		if err != nil {
			return fmt.Errorf("cleanup %s: %w", name, err)
		}
	}
	have, err := t.Schema().Tables(ctx)
	if err != nil {
		return fmt.Errorf("cleanup %s: %w", name, err)
	}
	// The workload's tables in its order (TPC-C drops its meta table
	// first), then any other it owns; only those that exist.
	var drop []string
	for _, tb := range w.Tables() {
		if slices.Contains(have, tb) {
			drop = append(drop, tb)
		}
	}
	if o, ok := w.(workload.TableOwner); ok {
		for _, tb := range have {
			if o.OwnsTable(tb) && !slices.Contains(drop, tb) {
				drop = append(drop, tb)
			}
		}
	}
	if len(drop) == 0 {
		fmt.Fprintf(e.stdout, "no table of %s to drop\n", name)
	}
	for _, tb := range drop {
		if err := t.Schema().DropTable(ctx, tb); err != nil {
			return fmt.Errorf("cleanup %s: %w", name, err)
		}
		fmt.Fprintf(e.stdout, "dropped %s\n", t.Dialect().Table(tb))
	}
	left, err := t.Schema().Tables(ctx)
	if err != nil {
		return fmt.Errorf("cleanup %s: %w", name, err)
	}
	if len(left) > 0 && !slices.ContainsFunc(left, func(tb string) bool { return !slices.Contains(shard.Tables, tb) }) {
		// The sharded runs' meeting tables, and nothing for them to
		// serve: cleanup holds the namespace lock, so no shard is running.
		for _, tb := range left {
			if err := t.Schema().DropTable(ctx, tb); err != nil {
				return fmt.Errorf("cleanup %s: %w", name, err)
			}
			fmt.Fprintf(e.stdout, "dropped %s (the shards' meeting table)\n", t.Dialect().Table(tb))
		}
		left = nil
	}
	if len(left) > 0 {
		fmt.Fprintf(e.stdout, "kept ceiling's other tables: %s\n", strings.Join(left, ", "))
		return nil
	}
	return e.dropNamespace(ctx, t, "cleanup "+name)
}

// dropNamespace drops ceiling's namespace once no ceiling table is left
// (DropAll), and says what went.
func (e *env) dropNamespace(ctx context.Context, t target.Target, what string) error {
	hadNamespace := true
	if nh, ok := t.Schema().(target.NamespaceHolder); ok {
		var err error
		if hadNamespace, err = nh.HasNamespace(ctx); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
	}
	if err := t.Schema().DropAll(ctx); err != nil {
		// Someone else's objects in ceiling's namespace: keep it.
		fmt.Fprintf(e.stdout, "kept ceiling's namespace: %s\n", oneLine(err.Error()))
		return nil
	}
	switch info := t.Info(); info.Engine {
	case "mysql":
		fmt.Fprintln(e.stdout, "no ceiling table left")
	case "postgres":
		if hadNamespace {
			fmt.Fprintln(e.stdout, "no ceiling table left: dropped schema ceiling")
		} else {
			fmt.Fprintln(e.stdout, "no ceiling table left, and no schema ceiling")
		}
	case "sqlite":
		path := strings.TrimPrefix(info.DSN, "sqlite:")
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			fmt.Fprintf(e.stdout, "no ceiling table left: removed %s (ceiling created it)\n", path)
		} else {
			fmt.Fprintln(e.stdout, "no ceiling table left: dropped ceiling_meta (the file was not created by ceiling: kept)")
		}
	}
	return nil
}

// flagArgs renders the flags of names that were given on the command line
// as arguments (" --rows 100"), quoted for the shell where needed.
func flagArgs(fs *pflag.FlagSet, names ...string) string {
	var b strings.Builder
	for _, n := range names {
		f := fs.Lookup(n)
		if f == nil || !f.Changed {
			continue
		}
		switch v := f.Value.(type) {
		case pflag.SliceValue:
			for _, e := range v.GetSlice() {
				b.WriteString(" --" + n + " " + report.ShellWord(e))
			}
		default:
			if f.Value.Type() == "bool" {
				if f.Value.String() == "true" {
					b.WriteString(" --" + n)
				} else {
					b.WriteString(" --" + n + "=false")
				}
				continue
			}
			b.WriteString(" --" + n + " " + report.ShellWord(f.Value.String()))
		}
	}
	return b.String()
}

// changedArgs renders every flag given on the command line but skip's as
// arguments, in the flag set's order: the command again.
func changedArgs(fs *pflag.FlagSet, skip ...string) string {
	var names []string
	fs.Visit(func(f *pflag.Flag) {
		if !slices.Contains(skip, f.Name) {
			names = append(names, f.Name)
		}
	})
	return flagArgs(fs, names...)
}
