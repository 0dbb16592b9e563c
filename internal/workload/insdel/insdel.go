// Package insdel implements the inserts-deletes workload of the source tests:
// each request inserts one row with the next sequential id or deletes one
// random live row, with equal probability, each in its own transaction.
package insdel

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"

	"github.com/spf13/pflag"

	"github.com/ceiling-db/ceiling/internal/target"
	"github.com/ceiling-db/ceiling/internal/workload"
	"github.com/ceiling-db/ceiling/internal/workload/rowdata"
)

// Meta registers the workload.
var Meta = workload.Meta{
	Name:        "inserts-deletes",
	Description: "50/50 single-row inserts (sequential ids) and deletes (random live ids) of a ~400-byte row",
	New:         func() workload.Workload { return &InsDel{} },
}

const table = "rows"

// Operation indexes.
const (
	OpInsert = iota
	OpDelete
)

// InsDel is the inserts-deletes workload.
type InsDel struct {
	Rows int64
	Seed uint64

	live *rowdata.LiveSet
}

var _ workload.Workload = (*InsDel)(nil)

// Flags implements workload.Workload.
func (w *InsDel) Flags(fs *pflag.FlagSet) {
	fs.Int64Var(&w.Rows, "rows", 10000, "rows to pre-populate before the test (small enough to stay in cache)")
	fs.Uint64Var(&w.Seed, "seed", 1, "random seed for data and choices")
}

// Validate implements workload.Workload.
func (w *InsDel) Validate() error {
	if w.Rows < 0 {
		return fmt.Errorf("--rows must be zero or more, got %d", w.Rows)
	}
	return nil
}

// Params implements workload.Workload.
func (w *InsDel) Params() map[string]any {
	return map[string]any{"rows": w.Rows, "seed": w.Seed, "row_bytes_mean": rowdata.MeanRowBytes, "insert_pct": 50, "delete_pct": 50}
}

// Ops implements workload.Workload.
func (w *InsDel) Ops() []string { return []string{"insert", "delete"} }

// Tables implements workload.Workload.
func (w *InsDel) Tables() []string { return []string{table} }

// Prepare implements workload.Workload.
func (w *InsDel) Prepare(ctx context.Context, t target.Target, progress io.Writer) error {
	w.live = rowdata.NewLiveSet(w.Rows)
	return rowdata.CreateAndLoad(ctx, t, table, w.Rows, w.live, progress)
}

// NewWorker implements workload.Workload.
func (w *InsDel) NewWorker(_ context.Context, t target.Target, conn target.Conn, id int) (workload.Worker, error) {
	if w.live == nil {
		return nil, errors.New("inserts-deletes: Prepare was not run")
	}
	d := t.Dialect()
	return &worker{
		w:         w,
		conn:      conn,
		rng:       rand.New(rand.NewPCG(w.Seed, uint64(id)+1)),
		insertSQL: rowdata.InsertSQL(d, table),
		deleteSQL: "DELETE FROM " + d.Table(table) + " WHERE row_id = " + d.Placeholder(1),
		args:      make([]any, 0, rowdata.NumColumns),
	}, nil
}

type worker struct {
	w         *InsDel
	conn      target.Conn
	rng       *rand.Rand
	row       rowdata.Row
	args      []any
	insertSQL string
	deleteSQL string
}

func (k *worker) Do(ctx context.Context) (workload.Result, error) {
	if k.rng.IntN(2) == 0 {
		if id, size, ok := k.w.live.Take(k.rng); ok {
			return k.delete(ctx, id, size)
		}
	}
	return k.insert(ctx)
}

func (k *worker) insert(ctx context.Context) (workload.Result, error) {
	id := k.w.live.NextID()
	rowdata.Fill(&k.row, k.rng, id)
	k.args = k.row.Args(k.args[:0])
	n, err := k.conn.Exec(ctx, k.insertSQL, k.args...)
	if err != nil {
		return workload.Result{Op: OpInsert}, err
	}
	size := k.row.Bytes()
	k.w.live.Add(id, size)
	return workload.Result{Op: OpInsert, Rows: n, Bytes: n * size}, nil
}

func (k *worker) delete(ctx context.Context, id, size int64) (workload.Result, error) {
	n, err := k.conn.Exec(ctx, k.deleteSQL, id)
	if err != nil {
		// The row may still be there: keep it eligible for a later delete.
		k.w.live.Add(id, size)
		return workload.Result{Op: OpDelete}, err
	}
	return workload.Result{Op: OpDelete, Rows: n, Bytes: n * size}, nil
}
