// Package insdel implements the inserts-deletes workload of the source tests:
// each request inserts one row with the next sequential id or deletes one
// random live row, with equal probability, each in its own transaction.
package insdel

import (
	"context"
	"math/rand/v2"

	"github.com/ceiling-db/ceiling/internal/target"
	"github.com/ceiling-db/ceiling/internal/workload"
	"github.com/ceiling-db/ceiling/internal/workload/rowdata"
)

// Meta registers the workload.
var Meta = workload.Meta{
	Name:        "inserts-deletes",
	Description: "50/50 single-row inserts (sequential ids) and deletes (random live ids) of a ~400-byte row",
	New:         func() workload.Workload { return &InsDel{Base: rowdata.Base{Workload: "inserts-deletes"}} },
}

// Operation indexes.
const (
	OpInsert = iota
	OpDelete
)

// InsDel is the inserts-deletes workload.
type InsDel struct {
	rowdata.Base
}

var _ workload.Workload = (*InsDel)(nil)

// Params implements workload.Workload.
func (w *InsDel) Params() map[string]any {
	return w.ParamsWith(map[string]any{"insert_pct": 50, "delete_pct": 50})
}

// Ops implements workload.Workload.
func (w *InsDel) Ops() []string { return []string{"insert", "delete"} }

// NewWorker implements workload.Workload.
func (w *InsDel) NewWorker(_ context.Context, t target.Target, conn target.Conn, id int) (workload.Worker, error) {
	if err := w.Ready("inserts-deletes"); err != nil {
		return nil, err
	}
	d := t.Dialect()
	k := &worker{
		w:    w,
		conn: conn,
		rng:  w.WorkerRand(id),
	}
	for i, name := range w.Tables() {
		k.tabs = append(k.tabs, tab{
			live:      w.Live[i],
			insertSQL: rowdata.InsertSQL(d, name),
			deleteSQL: "DELETE FROM " + d.Table(name) + " WHERE row_id = " + d.Placeholder(1),
		})
	}
	return k, nil
}

// tab is one row table's live set and statements.
type tab struct {
	live      *rowdata.LiveSet
	insertSQL string
	deleteSQL string
}

type worker struct {
	w    *InsDel
	conn target.Conn
	rng  *rand.Rand
	wr   rowdata.Writer
	tabs []tab
}

func (k *worker) Do(ctx context.Context) (workload.Result, error) {
	tb := &k.tabs[k.w.PickTable(k.rng)]
	if k.rng.IntN(2) == 0 {
		if id, size, ok := tb.live.Take(k.rng); ok {
			return k.delete(ctx, tb, id, size)
		}
	}
	return k.insert(ctx, tb)
}

func (k *worker) insert(ctx context.Context, tb *tab) (workload.Result, error) {
	n, b, err := k.wr.Insert(ctx, k.conn, k.rng, tb.live, tb.insertSQL)
	return workload.Result{Op: OpInsert, Rows: n, Bytes: b}, err
}

func (k *worker) delete(ctx context.Context, tb *tab, id, size int64) (workload.Result, error) {
	n, b, err := k.wr.Delete(ctx, k.conn, tb.live, tb.deleteSQL, id, size)
	return workload.Result{Op: OpDelete, Rows: n, Bytes: b}, err
}
