// Package workload defines what a workload is and lists the ones ceiling has.
//
// A Workload prepares its tables and data once, then hands each worker a
// Worker whose Do method performs one request (the unit the runner measures,
// schedules and counts). Workloads declare their operation types up front so
// latency and counters are kept per operation without maps on the hot path.
package workload

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/ceiling-db/ceiling/internal/target"
)

// Meta names a workload and builds fresh instances of it.
type Meta struct {
	Name        string
	Description string
	// RunExamples, when set, replaces the generic examples of
	// `ceiling run NAME --help` (indented lines, as cobra prints them).
	RunExamples string
	// Doc, when set, is a further section of the help of `ceiling run
	// NAME` and `ceiling prepare NAME` (a custom workload's file format).
	Doc string
	New func() Workload
}

// Workload is one kind of test. An instance is configured through Flags,
// validated, prepared once and then shared by all workers of a run: its
// methods other than NewWorker are called from one goroutine.
type Workload interface {
	// Flags binds the workload's own flags to its configuration.
	Flags(fs *pflag.FlagSet)
	// Validate checks the configuration without changing it.
	Validate() error
	// Params describes the configuration for the result document.
	Params() map[string]any
	// Ops names the operation types; Result.Op indexes this slice.
	Ops() []string
	// Prepare creates the workload's tables and loads its initial data,
	// replacing any previous ceiling-made copy. Progress goes to progress.
	Prepare(ctx context.Context, t target.Target, progress io.Writer) error
	// Tables lists the tables the workload owns (unqualified), for cleanup.
	Tables() []string
	// NewWorker returns the request loop state of worker id on conn. It may be
	// called concurrently from several goroutines and again after a reconnect.
	NewWorker(ctx context.Context, t target.Target, conn target.Conn, id int) (Worker, error)
}

// Worker performs requests for one worker goroutine.
type Worker interface {
	// Do performs one request. It reports which operation it was and what it
	// touched; on error, Result.Op still names the operation attempted.
	Do(ctx context.Context) (Result, error)
}

// Result is what one request did.
type Result struct {
	Op    int   // index into Workload.Ops
	Rows  int64 // rows inserted, deleted, updated or returned
	Bytes int64 // data bytes by SQL type sizes
	// Examined is the rows the request examined (scanned) when the workload
	// knows it and it differs from Rows (indirect selects: the key range,
	// of which the predicate returns a part); 0 otherwise.
	Examined int64
}

// TableOwner is implemented by workloads whose table names depend on their
// flags (the row workloads' --tables N: rows_1 … rows_N). Cleanup drops
// every existing ceiling table the workload owns, besides Tables().
type TableOwner interface {
	OwnsTable(name string) bool
}

// CleanupValidator is implemented by workloads whose tables cleanup can
// only name after reading their configuration (a custom workload's file):
// cleanup calls ValidateCleanup before Tables.
type CleanupValidator interface {
	ValidateCleanup() error
}

// ExtraDropper is implemented by workloads that may leave objects other
// than their tables in ceiling's namespace (TPC-C's stored procedures on
// MySQL/MariaDB). DropExtras drops those ceiling made and names them;
// cleanup calls it before dropping the tables.
type ExtraDropper interface {
	DropExtras(ctx context.Context, t target.Target) ([]string, error)
}

// Advisor is implemented by workloads with a setting of their own that
// may move a verdict's bottleneck (TPC-C: --procedures). Advice returns
// the actions to add to the run's verdict as suggestions, without a
// predicted gain (the run's figures cannot predict them), or none.
type Advisor interface {
	Advice(engine, bottleneck string) []string
}

// PostChecker is implemented by workloads whose consistency checks are
// cheap enough to run after every run (a custom file's checks:).
// PostCheck runs them on the data as the run left it and returns one line
// per check and how many failed; none when there are no checks.
type PostChecker interface {
	PostCheck(ctx context.Context, t target.Target) (lines []string, failed int, err error)
}

// Definer is implemented by workloads defined by a text of the user's
// (a custom workload's YAML file): Definition returns it, kept in the
// result so that the run can be read and repeated without the file.
type Definer interface {
	Definition() string
}

// DefinitionOf is w's Definition, or "".
func DefinitionOf(w Workload) string {
	if d, ok := w.(Definer); ok {
		return d.Definition()
	}
	return ""
}

// ThreadsChecker is implemented by workloads whose configuration must fit
// the number of workers (updates: a row per worker in each table, as each
// update holds its row until it returns). CheckThreads reports the
// mismatch, naming the flags, or nil.
type ThreadsChecker interface {
	CheckThreads(threads int) error
}

// CheckThreads checks w against threads workers when w is a
// ThreadsChecker.
func CheckThreads(w Workload, threads int) error {
	if c, ok := w.(ThreadsChecker); ok && threads > 0 {
		return c.CheckThreads(threads)
	}
	return nil
}

// NoByteCounts is implemented by workloads that do not count the data bytes
// of their requests (Result.Bytes stays 0): their MB/min is not measured,
// and results and reports say so instead of showing 0 (TPC-C, whose figure
// is NOPM).
type NoByteCounts interface {
	NoByteCounts()
}

// NoBytes says whether w does not count data bytes (NoByteCounts).
func NoBytes(w Workload) bool {
	_, ok := w.(NoByteCounts)
	return ok
}

// Attacher is implemented by workloads whose dataset is loaded once by
// `ceiling prepare` and reused by every run (TPC-C, like HammerDB's schema
// build). `ceiling run` calls Attach instead of Prepare: it checks that a
// complete dataset exists, reads its configuration (e.g. the warehouse
// count) and fails with an error telling the user to prepare it otherwise.
type Attacher interface {
	Attach(ctx context.Context, t target.Target, progress io.Writer) error
}

// Sharder is implemented by workloads that can run as one of several
// shards (run --shard I/N: several ceiling processes, on one machine or
// many, loading one database together, their results merged afterwards).
// Shard makes the instance shard i of n (0 <= i < n) before Validate and
// Prepare: it then takes the dataset `ceiling prepare` left instead of
// loading one (the shards must not reload it under each other), and
// splits what the shards must not share: the ids it inserts and the rows
// it deletes or updates, deterministically by i and n. The workers'
// ids are global (the runner numbers the shard's first worker after the
// earlier shards'), so what is drawn per worker differs between shards.
type Sharder interface {
	Shard(i, n int) error
}

// DatabaseFigurer is implemented by workloads some of whose headline
// figures (Observer) are counted from the database, not from the
// process's own requests (TPC-C's NOPM: the districts' new orders). In
// a sharded run every shard counts all shards' work in them: merging
// the shards takes such figures from one shard and adds up the others.
type DatabaseFigurer interface {
	DatabaseFigures() []string
}

// ClosedLoopOnly is implemented by workloads that, as configured, pace
// their own workers (think times: TPC-C's --keying-thinking, a custom
// file's think:). ClosedLoopOnly names what paces them, "" when nothing
// does. An open loop's schedule sets the pace instead, so it is refused
// rather than run with the pauses ignored.
type ClosedLoopOnly interface {
	ClosedLoopOnly() string
}

// OpenLoopError returns a usage error for a self-pacing w (ClosedLoopOnly)
// run as an open loop (what: "--rate or --rates", "a knee search"), or nil.
func OpenLoopError(w Workload, what string) error {
	if c, ok := w.(ClosedLoopOnly); ok {
		if why := c.ClosedLoopOnly(); why != "" {
			return fmt.Errorf("%s apply to the closed loop: with %s the schedule sets the pace", why, what)
		}
	}
	return nil
}

// ColdStarter is implemented by workloads that can empty caches once
// before a run (sequential-selects --cold). Only the run's first requests
// find the caches cold: a warm-up, or every step of a ramp after the first,
// would measure a warm cache under the name of a cold one, so those are
// refused when ColdStart reports true.
type ColdStarter interface {
	ColdStart() bool
}

// ColdStartError returns a usage error for a cold-starting w run with a
// warm-up or as steps (what: "--warmup 10s", "a --rates ramp"), or nil.
func ColdStartError(w Workload, what string) error {
	if c, ok := w.(ColdStarter); ok && c.ColdStart() {
		return fmt.Errorf("--cold empties the caches once, before the run's first requests: with %s the measured requests would find them warm; drop one or the other (ceiling run --cold --repeat N gives several cold runs)", what)
	}
	return nil
}

// Reader is implemented by workloads that can say whether, as
// configured, they write nothing: ReadsOnly, their requests change no
// rows; Reusing, Prepare takes the tables a `ceiling prepare` left
// (--reuse, a shard) rather than loading them. Only a workload that does
// both runs on a server that takes no writes (a hot standby, a replica
// set read_only), on tables prepared on its primary.
type Reader interface {
	ReadsOnly() bool
	Reusing() bool
}

// ReadOnlyError returns why w (name) cannot run on a server that takes no
// writes for the reason why, with dsn its redacted DSN; nil when w only
// reads tables prepared before (Reader), or when the server takes writes
// (why == "").
func ReadOnlyError(w Workload, name, dsn, why string) error {
	if why == "" {
		return nil
	}
	r, ok := w.(Reader)
	switch {
	case !ok || !r.ReadsOnly():
		return fmt.Errorf("%s changes rows, and %s takes no writes (%s): run it on the primary; here run a workload that only reads "+
			"(direct-selects, indirect-selects, sequential-selects, or a custom file of SELECTs) with --reuse, on tables prepared on the primary", name, dsn, why)
	case !r.Reusing():
		return fmt.Errorf("%s takes no writes (%s), so the tables of %s cannot be loaded there: prepare them on the primary (`ceiling prepare %s --db PRIMARY`), then add --reuse here", dsn, why, name, name)
	}
	return nil
}
