// Package cli is ceiling's command line: it parses flags into configuration,
// runs commands, and maps errors to one-line messages and exit codes.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ceiling-db/ceiling/internal/predict"
	"github.com/ceiling-db/ceiling/internal/report"
	"github.com/ceiling-db/ceiling/internal/runner"
	"github.com/ceiling-db/ceiling/internal/suggest"
	"github.com/ceiling-db/ceiling/internal/target"
	"github.com/ceiling-db/ceiling/internal/target/engines"
	"github.com/ceiling-db/ceiling/internal/workload"
	"github.com/ceiling-db/ceiling/internal/workload/all"
)

// Version is set at build time with -ldflags "-X …/cli.Version=v1.2.3".
var Version = ""

func version() string {
	if Version != "" {
		return Version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

// env gives commands their I/O, so tests can run them in-process.
type env struct {
	stdout, stderr io.Writer
	getenv         func(string) string
	isTTY          bool
	dsnUsed        string // the DSN of the last target opened, to scrub errors
	dbArg          string // the --db of that target, redacted, when given by the flag
	maxConns       string // its server's max_connections, when it has one
	printResult    bool   // run --print-result: the result also on stdout, framed
	// checkOnly makes run and knee stop once their flags are checked,
	// before they touch a database (shard-job checks the pods' command).
	checkOnly bool
}

// Run runs ceiling with args (without the program name) and returns the exit code.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	isTTY := isTerminal(stdout)
	ctx, stdout, release := watchPipe(ctx, stdout)
	defer release()
	e := &env{stdout: stdout, stderr: stderr, getenv: os.Getenv, isTTY: isTTY}
	root := e.rootCmd()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err != nil {
		msg := err.Error()
		var ce *runner.ConnectError
		if errors.As(err, &ce) && ce.Worker > 0 && !errors.Is(err, target.ErrPoolerFull) {
			// The first workers connected, a later one could not: most
			// often the server's connection limit.
			limit := "the server's connection limit"
			if e.maxConns != "" {
				limit += " (max_connections = " + e.maxConns + ")"
			}
			msg += fmt.Sprintf(" — workers 0-%d had connected: -c %d plus ceiling's own sessions (2-3) may exceed %s", ce.Worker-1, ce.Workers, limit)
		}
		var sig Signal
		if errors.As(context.Cause(ctx), &sig) {
			switch {
			case errors.Is(err, context.Canceled):
				// Stopped before there was a result to write: say so
				// first, not as a failure of what was under way.
				msg = sig.Error() + ", before a result (" + msg + ")"
			case sig.Sig == syscall.SIGPIPE:
				// Not a signal the user sent: say why it stopped.
				msg = sig.Error() + ": " + msg
			}
		}
		if e.dsnUsed != "" {
			msg = target.Scrub(msg, e.dsnUsed)
		}
		fmt.Fprintf(stderr, "ceiling: %s\n", oneLine(e.withDB(msg)))
	}
	return exitCode(ctx, err)
}

// withDB adds --db to the ceiling commands a message suggests (in
// backquotes) when the target came from --db: copied as they are, they
// would otherwise act on $CEILING_DB or the default SQLite file. The DSN
// is the redacted one: a password reads xxxxx, for the user to put back.
func (e *env) withDB(msg string) string {
	if e.dbArg == "" {
		return msg
	}
	return report.WithDB(msg, e.dbArg)
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func (e *env) rootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "ceiling",
		Short: "Find how much load a SQL database sustains and which resource sets the ceiling",
		Long: `ceiling measures how much load a SQL database sustains, at what request rate it
saturates, and which resource sets that ceiling (log writes, data-file IO, CPU,
memory, locks). It runs on an embedded SQLite database by default: no server needed.`,
		Example: `  ceiling run inserts-deletes                       # 60 s on sqlite:ceiling.db
  ceiling run single-inserts --ops 10000 --durability full
  ceiling run inserts-deletes -c 4 -T 20s --db sqlite:/tmp/test.db
  ceiling run single-inserts --rates 20:200:20 --step 30s   # open-loop ramp
  ceiling knee single-inserts --slo 'p99<50ms,late<1%'     # highest rate meeting an SLO
  ceiling run single-inserts --emulate azure-2014-s1       # held to a 2014 S1 tier's log rate
  ceiling run custom --file examples/custom/orders.yaml    # your own tables and SQL (YAML)
  ceiling profile-host --out this-host.json               # this machine's flush latency
  ceiling workloads`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error { return &UsageError{Err: flagGuess(cmd, err)} })
	root.AddCommand(e.runCmd(), e.kneeCmd(), e.prepareCmd(), e.checkCmd(), e.cleanupCmd(), e.workloadsCmd(), e.profileHostCmd(), e.predictCmd(), e.profilesCmd(), e.reportCmd(), e.compareCmd(), e.mergeCmd(), e.shardJobCmd(), e.versionCmd())
	// Unknown subcommands are usage errors.
	root.Args = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return nil
		}
		var names []string
		for _, c := range cmd.Commands() {
			if c.IsAvailableCommand() {
				names = append(names, c.Name())
			}
		}
		if g := suggest.Names(strings.ToLower(args[0]), names); len(g) > 0 {
			return usagef("unknown command %q (did you mean %s?)", args[0], suggest.OrList(g))
		}
		return usagef("unknown command %q (see ceiling --help)", args[0])
	}
	root.RunE = func(cmd *cobra.Command, args []string) error { return cmd.Help() }
	registerCompletions(root)
	return root
}

// flagGuess adds "did you mean" to an unknown flag's error, from the
// command's flags ("--thread": --threads).
func flagGuess(cmd *cobra.Command, err error) error {
	name, ok := strings.CutPrefix(err.Error(), "unknown flag: --")
	if !ok {
		return err
	}
	if w, siblings := flagOwners(cmd, name); len(w) > 0 {
		owners := suggest.AndList(w) + " has"
		if len(w) > 1 {
			owners = suggest.AndList(w) + " have"
		}
		if siblings { // the workloads under run, knee, prepare …
			owners = "workload " + owners
			if len(w) > 1 {
				owners = "workloads " + owners[len("workload "):]
			}
		}
		return fmt.Errorf("%w: %s has no such flag; %s it", err, strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" "), owners)
	}
	var names []string
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			names = append(names, f.Name)
		}
	})
	g := suggest.Names(strings.ToLower(name), names)
	if len(g) == 0 {
		return err
	}
	for i := range g {
		g[i] = "--" + g[i]
	}
	return fmt.Errorf("%w (did you mean %s?)", err, suggest.OrList(g))
}

// flagOwners are the commands that have the flag cmd lacks: its siblings
// ("run direct-selects --isolate": mixed, tpcc and custom), else the other
// top-level commands under which some command has it ("run … --slo":
// knee). None when no command has it; siblings says which it found.
func flagOwners(cmd *cobra.Command, name string) (owners []string, siblings bool) {
	has := func(c *cobra.Command) bool {
		f := c.Flags().Lookup(name)
		return f != nil && !f.Hidden
	}
	var below func(c *cobra.Command) bool
	below = func(c *cobra.Command) bool {
		if has(c) {
			return true
		}
		for _, s := range c.Commands() {
			if below(s) {
				return true
			}
		}
		return false
	}
	var out []string
	if p := cmd.Parent(); p != nil && p != cmd.Root() {
		for _, s := range p.Commands() {
			if s != cmd && s.IsAvailableCommand() && has(s) {
				out = append(out, s.Name())
			}
		}
		if len(out) > 0 {
			return out, true
		}
	}
	top := cmd
	for top.Parent() != nil && top.Parent() != cmd.Root() {
		top = top.Parent()
	}
	for _, c := range cmd.Root().Commands() {
		if c != top && c.IsAvailableCommand() && below(c) {
			out = append(out, c.Name())
		}
	}
	return out, false
}

// flagCompletions are the values shell completion offers for flags of a
// fixed set ("" ends the list with the shell's file names too: a profile
// may be a YAML file).
var flagCompletions = map[string]func() ([]string, cobra.ShellCompDirective){
	"durability": fixed("server\tleave the server's setting alone", "full\tevery commit waits for its log flush", "relaxed\tcommits do not wait for the flush"),
	"arrival":    fixed("uniform\tevenly spaced requests", "poisson\trandom (exponential) gaps"),
	"profile":    profileNames,
	"emulate":    profileNames,
}

func fixed(vs ...string) func() ([]string, cobra.ShellCompDirective) {
	return func() ([]string, cobra.ShellCompDirective) { return vs, cobra.ShellCompDirectiveNoFileComp }
}

// profileNames are the shipped profiles, with their titles; files are
// offered too.
func profileNames() ([]string, cobra.ShellCompDirective) {
	ps, err := predict.Shipped()
	if err != nil {
		return nil, cobra.ShellCompDirectiveDefault
	}
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		out = append(out, p.Name+"\t"+p.Title)
	}
	return out, cobra.ShellCompDirectiveDefault
}

// registerCompletions gives every command's flags of flagCompletions
// their values, for `ceiling completion SHELL`.
func registerCompletions(c *cobra.Command) {
	for name, values := range flagCompletions {
		if c.Flags().Lookup(name) != nil {
			_ = c.RegisterFlagCompletionFunc(name, func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
				return values()
			})
		}
	}
	for _, sub := range c.Commands() {
		registerCompletions(sub)
	}
}

func (e *env) workloadsCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "workloads",
		Short: "List the workloads",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			for _, m := range all.Registry() {
				fmt.Fprintf(e.stdout, "%-18s %s\n", m.Name, m.Description)
			}
			return nil
		},
	}
}

func (e *env) versionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintf(e.stdout, "ceiling %s\n", version())
			return nil
		},
	}
}

func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usagef("%s takes no arguments, got %q", cmd.CommandPath(), args[0])
	}
	return nil
}

// workloadParent builds "run", "knee", "prepare" or "cleanup" with one
// subcommand per workload, so each workload's own flags appear in its
// --help; example shows the command's common forms in the parent's.
func (e *env) workloadParent(use, short, example string, sub func(name string) *cobra.Command) *cobra.Command {
	parent := &cobra.Command{
		Use:     use + " WORKLOAD [flags]",
		Short:   short,
		Example: example + "\n  ceiling " + use + " WORKLOAD --help                    # that workload's own flags",
		// Flags belong to the workload subcommands; an unknown workload
		// must be reported as such, not as an unknown flag.
		FParseErrWhitelist: cobra.FParseErrWhitelist{UnknownFlags: true},
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				_, err := all.Registry().Lookup(args[0])
				return &UsageError{Err: err}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			names := workloadNames()
			if use == "cleanup" {
				names += " (or all, for every one of them)"
			}
			return usagef("%s needs a workload: one of %s", cmd.CommandPath(), names)
		},
	}
	for _, m := range all.Registry() {
		c := sub(m.Name)
		if c.Flags().Lookup("file") != nil { // custom: shells complete YAML files
			_ = c.MarkFlagFilename("file", "yaml", "yml")
		}
		parent.AddCommand(c)
	}
	return parent
}

func workloadNames() string {
	var names []string
	for _, m := range all.Registry() {
		names = append(names, m.Name)
	}
	return strings.Join(names, ", ")
}

// targetFlags are the flags shared by every command that reaches a database.
type targetFlags struct {
	db         string
	durability string
	fs         *pflag.FlagSet // tells whether --db was given (bind)
	// shared: take ceiling's namespace lock shared (run --shard: the
	// shards hold it together), not alone.
	shared bool
}

func (f *targetFlags) bind(fs *pflag.FlagSet) {
	fs.StringVar(&f.db, "db", "", "database DSN: "+engines.Schemes+" (default $CEILING_DB, else "+engines.DefaultDSN+"); TLS with the server's certificate checked: postgres ?sslmode=verify-full[&sslrootcert=CA.pem], mysql ?tls=true or ?ssl-ca=CA.pem")
	f.fs = fs
}

// emptyDB says whether --db was given with nothing in it: in a script,
// `--db "$DSN"` with the variable unset, which must not quietly become the
// default SQLite file in the current directory.
func (f *targetFlags) emptyDB() bool {
	return f.fs != nil && f.fs.Changed("db") && strings.TrimSpace(f.db) == ""
}

func (e *env) dsn(f *targetFlags) string {
	if f.db != "" {
		return f.db
	}
	if v := e.getenv("CEILING_DB"); v != "" {
		return v
	}
	return engines.DefaultDSN
}

// openTarget opens the target for a run; hint carries the run's
// MaxConns, Multiplexed and OpenLoop.
func (e *env) openTarget(ctx context.Context, f *targetFlags, hint target.Options) (target.Target, error) {
	return e.open(ctx, f, target.Options{MaxConns: hint.MaxConns, Multiplexed: hint.Multiplexed, OpenLoop: hint.OpenLoop})
}

// openExisting opens the target for a command that only reads or removes
// what is there: an embedded database file that does not exist is an
// error wrapping target.ErrNoDatabase, not created.
func (e *env) openExisting(ctx context.Context, f *targetFlags) (target.Target, error) {
	return e.open(ctx, f, target.Options{MaxConns: 1, MustExist: true})
}

// open opens the target of f with opts (DSN and durability from f).
func (e *env) open(ctx context.Context, f *targetFlags, opts target.Options) (target.Target, error) {
	d, err := target.ParseDurability(f.durability)
	if err != nil {
		return nil, &UsageError{Err: err}
	}
	if f.emptyDB() {
		return nil, &UsageError{Err: fmt.Errorf("--db is empty (an unset variable?): give a DSN (%s), or leave --db out for $CEILING_DB, else %s", engines.Schemes, engines.DefaultDSN)}
	}
	e.dsnUsed = e.dsn(f)
	e.dbArg = ""
	if f.db != "" {
		e.dbArg = target.Redact(f.db)
	}
	opts.DSN, opts.Durability = e.dsnUsed, d
	t, err := engines.Open(ctx, opts)
	if err == nil {
		e.maxConns = t.Info().Settings["max_connections"]
		// One ceiling per database at a time: a second one's prepare
		// would drop the first one's tables under it.
		var lock func(context.Context) error
		if ex, ok := t.(target.Exclusive); ok {
			lock = ex.LockNamespace
		}
		if sl, ok := t.(target.ShardLocker); ok && f.shared {
			lock = sl.LockNamespaceShared
		}
		if lock != nil {
			if lerr := lock(ctx); lerr != nil {
				_ = closeTarget(t)
				return nil, lerr
			}
		}
		// A setting put back that an earlier ceiling left changed, or
		// one this run could not record (MySQL): said before anything
		// else, whatever the command.
		d := t.Info().Durability
		if d.Note != "" {
			fmt.Fprintf(e.stdout, "note: durability: %s\n", d.Note)
		}
		if d.Scope == "global" && d.During != d.Before {
			msg := fmt.Sprintf("%s is left at %s (it was %s): the next ceiling command on this database puts it back, or run SET GLOBAL %s = %s",
				d.Setting, d.During, d.Before, d.Setting, d.Before)
			unrestored.Store(&msg)
		}
	}
	if err != nil {
		if errors.Is(err, target.ErrBadDSN) {
			return nil, &UsageError{Err: err}
		}
		return nil, err
	}
	return t, nil
}

// closeTarget closes t with a fresh context, so settings are restored even
// after Ctrl-C.
func closeTarget(t target.Target) error {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	err := t.Close(ctx)
	if d := t.Info().Durability; d.After == d.Before {
		unrestored.Store(nil)
	}
	return err
}

// openForRun checks that the result can be written, opens the target and
// prints the header line. The returned function closes the target (restoring
// any setting) the first time it is called; callers defer it. multiplexed
// is runner.Multiplexes for the run's main configuration.
func (e *env) openForRun(ctx context.Context, out string, f *targetFlags, hint target.Options, what string) (target.Target, func() error, error) {
	undo, err := makeOutDir(out)
	if err != nil {
		return nil, nil, err
	}
	t, err := e.openTarget(ctx, f, hint)
	if err != nil {
		undo()
		return nil, nil, err
	}
	info := t.Info()
	fmt.Fprintf(e.stdout, "ceiling %s: %s on %s %s (%s)\n", version(), what, info.Engine, info.Version, info.DSN)
	closer := onceCloser(t)
	return t, func() error {
		// Run last by the callers' defer: a result written by then keeps
		// the directory (report.Write makes it again if it went earlier).
		defer undo()
		return closer()
	}, nil
}

// prepareWorkload runs w.Prepare with progress and timing on the console.
func (e *env) prepareWorkload(ctx context.Context, t target.Target, name string, w workload.Workload) error {
	prep, verb := w.Prepare, "preparing"
	if a, ok := w.(workload.Attacher); ok {
		prep, verb = a.Attach, "checking the prepared dataset of"
	}
	info := t.Info()
	if err := workload.ReadOnlyError(w, name, info.DSN, info.ReadOnly); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "%s %s ...\n", verb, name)
	start := time.Now()
	if err := prep(ctx, t, e.stdout); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("interrupted while preparing %s", name)
		}
		if verb != "preparing" {
			return fmt.Errorf("%s: %w", name, err)
		}
		return fmt.Errorf("prepare %s: %w", name, err)
	}
	fmt.Fprintf(e.stdout, "ready in %.1fs\n", time.Since(start).Seconds())
	return nil
}

// onceCloser returns a function that closes t the first time it is called
// and returns that first result ever after.
func onceCloser(t target.Target) func() error {
	var (
		done bool
		err  error
	)
	return func() error {
		if !done {
			done = true
			err = closeTarget(t)
		}
		return err
	}
}

// rateValue is a float64 flag of requests/s whose help shows its default
// as written (1000000, not pflag's 1e+06).
type rateValue struct{ v *float64 }

func (r rateValue) String() string {
	if r.v == nil {
		return "0"
	}
	return strconv.FormatFloat(*r.v, 'f', -1, 64)
}
func (r rateValue) Type() string { return "float" }
func (r rateValue) Set(s string) error {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return fmt.Errorf("%q is not a number of requests/s", s)
	}
	*r.v = v
	return nil
}

// durationValue is a time.Duration flag that also accepts plain seconds
// ("-T 60"), as pgbench and sysbench do.
type durationValue struct{ d *time.Duration }

func (v durationValue) String() string {
	if v.d == nil {
		return "0s"
	}
	return v.d.String()
}
func (v durationValue) Type() string { return "duration" }
func (v durationValue) Set(s string) error {
	if n, err := strconv.ParseFloat(s, 64); err == nil {
		*v.d = time.Duration(n * float64(time.Second))
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("%q is not a duration (e.g. 30s, 5m, or plain seconds)", s)
	}
	*v.d = d
	return nil
}
