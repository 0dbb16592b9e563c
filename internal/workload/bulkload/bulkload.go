// Package bulkload implements the bulk-load workload of the source tests:
// each request inserts one batch of --batch rows of the ~400-byte row, with
// sequential ids, through the engine's bulk path (target.BulkInserter: COPY
// on PostgreSQL, multi-row INSERT statements on MySQL/MariaDB, one
// transaction of prepared inserts on SQLite) into a table that starts empty
// and has only its primary key. Data volume (MB/min) counts the rows' data
// bytes by SQL type sizes; the server evidence gives the log bytes, so the
// result also has the log write rate the load implies and the ratio of log
// bytes to data bytes.
//
// After the measured run, a separate timed phase builds secondary indexes
// on the loaded table (as import tools do: load first, index after), unless
// --no-index. `ceiling run bulk-load --batches 1:5000:x2` ramps the batch
// size (internal/cli/batches.go runs one measured step per size).
package bulkload

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"time"

	"github.com/spf13/pflag"

	"github.com/ceiling-db/ceiling/internal/target"
	"github.com/ceiling-db/ceiling/internal/workload"
	"github.com/ceiling-db/ceiling/internal/workload/rowdata"
)

// Meta registers the workload.
var Meta = workload.Meta{
	Name:        "bulk-load",
	Description: "batches of --batch ~400-byte rows (sequential ids) through the engine's bulk path (COPY, multi-row INSERT, one transaction of prepared inserts); MB/min and the log write rate",
	New:         func() workload.Workload { return &BulkLoad{} },
}

// Table is the loaded table (namespaced by the target).
const Table = "bulk_rows"

// OpBatch is the only operation: one batch.
const OpBatch = 0

// MaxBatch bounds --batch.
const MaxBatch = 1_000_000

// Indexes are the secondary indexes built after the load: name and columns.
var Indexes = [][2]string{
	{"bulk_rows_int", "int_col"},
	{"bulk_rows_dt_short", "dt_col, vc_short"},
}

// BulkLoad is the bulk-load workload.
type BulkLoad struct {
	Batch   int
	Seed    uint64
	NoIndex bool
	// BatchesSpec is --batches as given ("" without a ramp); the CLI parses
	// and runs it.
	BatchesSpec string

	lastID   atomic.Int64 // last id handed out (a shard: rows handed out)
	prepared bool

	// shardI and shardN (run --shard I/N): the shard takes the batches
	// ≡ shardI (mod shardN) of ids, blocks of --batch; shardN 0 when not
	// sharded. blocks counts the shard's batches handed out.
	shardI, shardN int
	blocks         atomic.Int64
}

// Shard implements workload.Sharder: the shards load the empty table
// `ceiling prepare bulk-load` made, each batch a block of --batch ids,
// shard I taking blocks I, I+N, I+2N …, so that the shards' ids never
// meet (where one shard loaded fewer batches than another, its blocks
// leave gaps). No shard builds the indexes after the load (each
// would, under the others' loads): time that unsharded. Not with
// --batches, whose steps change the batch size one after another.
func (w *BulkLoad) Shard(i, n int) error {
	if w.BatchesSpec != "" {
		return errors.New("--batches ramps the batch size one step at a time: run it unsharded, or give the shards one --batch")
	}
	w.shardI, w.shardN, w.NoIndex = i, n, true
	return nil
}

var _ workload.Workload = (*BulkLoad)(nil)

// Flags implements workload.Workload.
func (w *BulkLoad) Flags(fs *pflag.FlagSet) {
	fs.IntVar(&w.Batch, "batch", 1000, "rows per request (one batch through the engine's bulk path)")
	fs.StringVar(&w.BatchesSpec, "batches", "", "ramp the batch size, one measured step per size (each --step long, or --ops requests): START:STOP:xF (1:4096:x4), START:STOP:STEP or a list (1,10,100)")
	fs.BoolVar(&w.NoIndex, "no-index", false, "skip the timed phase that builds secondary indexes after the load")
	fs.Uint64Var(&w.Seed, "seed", 1, "random seed for the generated rows")
}

// Validate implements workload.Workload.
func (w *BulkLoad) Validate() error {
	if w.Batch < 1 || w.Batch > MaxBatch {
		return fmt.Errorf("--batch must be between 1 and %d rows, got %d", MaxBatch, w.Batch)
	}
	return nil
}

// Params implements workload.Workload.
func (w *BulkLoad) Params() map[string]any {
	p := map[string]any{"batch": w.Batch, "seed": w.Seed, "row_bytes_mean": rowdata.MeanRowBytes,
		"table": Table, "secondary_indexes": !w.NoIndex}
	if w.BatchesSpec != "" {
		p["batches"] = w.BatchesSpec
	}
	return p
}

// Ops implements workload.Workload.
func (w *BulkLoad) Ops() []string { return []string{"batch"} }

// Tables implements workload.Workload.
func (w *BulkLoad) Tables() []string { return []string{Table} }

// Prepare implements workload.Workload: it (re)creates the empty table,
// with its primary key only.
func (w *BulkLoad) Prepare(ctx context.Context, t target.Target, progress io.Writer) error {
	if w.shardN > 0 {
		if err := w.attach(ctx, t); err != nil {
			return err
		}
		if progress != nil {
			fmt.Fprintf(progress, "  shard %d of %d: batches %d, %d, … of %d ids each into the empty table; no index build after the load (time it unsharded)\n", w.shardI, w.shardN, w.shardI, w.shardI+w.shardN, w.Batch)
		}
		return nil
	}
	if err := t.Schema().CreateTable(ctx, Table, rowdata.TableBody(t.Dialect().Engine)); err != nil {
		return fmt.Errorf("create table %s: %w", Table, err)
	}
	w.lastID.Store(0)
	w.prepared = true
	return nil
}

// attach is a shard's Prepare: the table must be there, empty (the
// shards' batches fill ids from 1).
func (w *BulkLoad) attach(ctx context.Context, t target.Target) error {
	again := "run `ceiling prepare bulk-load` before the shards: they load an empty table together"
	have, err := t.Schema().Tables(ctx)
	if err != nil {
		return err
	}
	if !slices.Contains(have, Table) {
		return fmt.Errorf("no ceiling table %s: %s", t.Dialect().Table(Table), again)
	}
	n, err := countRows(ctx, t)
	if err != nil {
		return err
	}
	if n != 0 {
		return fmt.Errorf("%s holds %d rows: %s", t.Dialect().Table(Table), n, again)
	}
	w.lastID.Store(0)
	w.blocks.Store(0)
	w.prepared = true
	return nil
}

// SetBatch sets the batch size of the requests that follow (the CLI's
// batch ramp calls it between steps, with no worker running).
func (w *BulkLoad) SetBatch(n int) { w.Batch = n }

// Batches returns --batches as given.
func (w *BulkLoad) Batches() string { return w.BatchesSpec }

// Loaded is the number of ids handed out so far: the rows in the table
// when every batch succeeded.
func (w *BulkLoad) Loaded() int64 { return w.lastID.Load() }

// NewWorker implements workload.Workload.
func (w *BulkLoad) NewWorker(_ context.Context, _ target.Target, conn target.Conn, id int) (workload.Worker, error) {
	if !w.prepared {
		return nil, errors.New("bulk-load: Prepare was not run")
	}
	bi, ok := conn.(target.BulkInserter)
	if !ok {
		return nil, fmt.Errorf("bulk-load: this target's connections have no bulk insert path (%T)", conn)
	}
	return &worker{w: w, bi: bi, src: &Source{rng: rand.New(rand.NewPCG(w.Seed, uint64(id)+1))}}, nil
}

type worker struct {
	w   *BulkLoad
	bi  target.BulkInserter
	src *Source
}

// Do inserts one batch of ids taken as one block, so concurrent workers
// never clash and the table's ids stay sequential.
func (k *worker) Do(ctx context.Context) (workload.Result, error) {
	n := int64(k.w.Batch)
	first := k.w.lastID.Add(n) - n + 1
	if N := int64(k.w.shardN); N > 0 {
		b := k.w.blocks.Add(1) - 1 // this shard's b-th block: the (b×N + I)-th of all
		first = (b*N+int64(k.w.shardI))*n + 1
	}
	k.src.Reset(first, n)
	got, err := k.bi.BulkInsert(ctx, Table, rowdata.Columns, k.src)
	if err != nil {
		return workload.Result{Op: OpBatch}, err
	}
	if got != n {
		return workload.Result{Op: OpBatch}, fmt.Errorf("bulk-load: inserted %d of %d rows", got, n)
	}
	return workload.Result{Op: OpBatch, Rows: got, Bytes: k.src.Bytes()}, nil
}

// Source is a target.RowSource generating rows with sequential ids. It
// reuses one row and one values slice for every row (the driver must copy
// or send the values before asking for the next row, as
// pgx.CopyFromSource's contract has it); boxing the values into the slice
// is its only allocation.
type Source struct {
	rng   *rand.Rand
	row   rowdata.Row
	vals  []any
	next  int64 // id of the next row
	left  int64
	bytes int64
}

// NewSource returns a source seeded with seed.
func NewSource(seed uint64) *Source { return &Source{rng: rand.New(rand.NewPCG(seed, 0))} }

// Reset makes s produce n rows with ids first, first+1, …
func (s *Source) Reset(first, n int64) {
	s.next, s.left, s.bytes = first, n, 0
}

// Next implements target.RowSource.
func (s *Source) Next() bool {
	if s.left <= 0 {
		return false
	}
	rowdata.Fill(&s.row, s.rng, s.next)
	s.vals = s.row.Args(s.vals[:0])
	s.bytes += s.row.Bytes()
	s.next++
	s.left--
	return true
}

// Values implements target.RowSource.
func (s *Source) Values() ([]any, error) { return s.vals, nil }

// Err implements target.RowSource.
func (s *Source) Err() error { return nil }

// Bytes is the data bytes of the rows produced since Reset.
func (s *Source) Bytes() int64 { return s.bytes }

// IndexBuild is what the secondary-index phase did.
type IndexBuild struct {
	Indexes int
	Rows    int64 // rows in the table when the build started
	Elapsed time.Duration
}

// BuildIndexes runs the timed phase after the load: it creates the
// secondary indexes on the loaded table, one after the other, and says how
// long they took. With --no-index it does nothing and returns ok=false.
func (w *BulkLoad) BuildIndexes(ctx context.Context, t target.Target) (b IndexBuild, ok bool, err error) {
	if w.NoIndex || !w.prepared {
		return IndexBuild{}, false, nil
	}
	rows, err := countRows(ctx, t)
	if err != nil {
		return IndexBuild{}, false, err
	}
	start := time.Now()
	for _, ix := range Indexes {
		if err := t.Schema().CreateIndex(ctx, Table, ix[0], ix[1]); err != nil {
			return IndexBuild{}, false, fmt.Errorf("bulk-load: create index %s: %w", ix[0], err)
		}
	}
	return IndexBuild{Indexes: len(Indexes), Rows: rows, Elapsed: time.Since(start)}, true, nil
}

func countRows(ctx context.Context, t target.Target) (int64, error) {
	c, err := t.Connect(ctx)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	var n int64
	if _, err := target.QueryRow(ctx, c, "SELECT COUNT(*) FROM "+t.Dialect().Table(Table), []any{&n}); err != nil {
		return 0, fmt.Errorf("bulk-load: count rows: %w", err)
	}
	return n, nil
}
