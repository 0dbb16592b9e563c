// Package mixed implements the mixed workload of the source tests: each
// request is, at random, an insert (20%), a select (30%: direct 75%,
// indirect 25%, i.e. 22.5% and 7.5% of requests), an update (30%) or a
// delete (20%) on the shared row table, each in its own transaction.
//
// With no live row left, a request that needs one (select, update, delete)
// inserts instead.
//
// --hot-rows N sets the N lowest ids of each table apart for the updates,
// which all workers share and so wait for each other's row locks; the
// other operations leave them alone (no delete removes them).
package mixed

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"

	"github.com/spf13/pflag"

	"github.com/ceiling-db/ceiling/internal/target"
	"github.com/ceiling-db/ceiling/internal/workload"
	"github.com/ceiling-db/ceiling/internal/workload/directsel"
	"github.com/ceiling-db/ceiling/internal/workload/indsel"
	"github.com/ceiling-db/ceiling/internal/workload/rowdata"
	"github.com/ceiling-db/ceiling/internal/workload/updates"
)

// Meta registers the workload.
var Meta = workload.Meta{
	Name:        "mixed",
	Description: "insert 20% / select 30% (direct 75%, indirect 25%) / update 30% / delete 20% of a ~400-byte row",
	New:         func() workload.Workload { return &Mixed{Base: rowdata.Base{Workload: "mixed"}} },
}

// Operation indexes.
const (
	OpInsert = iota
	OpSelectDirect
	OpSelectIndirect
	OpUpdate
	OpDelete
)

// Mix in per mille of requests, in operation order.
var Mix = [...]int{OpInsert: 200, OpSelectDirect: 225, OpSelectIndirect: 75, OpUpdate: 300, OpDelete: 200}

// Mixed is the mixed workload.
type Mixed struct {
	rowdata.Base
	// Hot (--hot-rows) is how many of each table's lowest ids the updates
	// share, set apart from the other operations; 0: none.
	Hot  int64
	solo int // 1 + the only operation workers made now run (Isolate); 0 = the mix
}

var (
	_ workload.Workload = (*Mixed)(nil)
	_ workload.Isolator = (*Mixed)(nil)
)

// Isolate implements workload.Isolator.
func (w *Mixed) Isolate(op int) {
	if op < 0 || op >= len(Mix) {
		op = -1
	}
	w.solo = op + 1
}

// IsolationBudget implements workload.Isolator: deletes alone are bounded
// by the live rows (80% of the smallest table's, times the tables, as each
// delete picks a table at random), so that none runs out and turns into an
// insert; the other operations are unbounded (selects and updates leave
// the live rows as they are, inserts add to them).
func (w *Mixed) IsolationBudget(_ context.Context, _ target.Target, op, _ int) (int64, string, error) {
	if op != OpDelete {
		return 0, "", nil
	}
	least := int64(-1)
	for _, l := range w.Live {
		if n := l.Len(); least < 0 || n < least {
			least = n
		}
	}
	budget := least * 8 / 10 * int64(len(w.Live))
	if budget < 1 {
		return -1, "no live rows left to delete", nil
	}
	return budget, fmt.Sprintf("bounded by the live rows: at most %d deletes", budget), nil
}

// Flags implements workload.Workload: the row flags and --hot-rows.
func (w *Mixed) Flags(fs *pflag.FlagSet) {
	w.Base.Flags(fs)
	fs.Int64Var(&w.Hot, "hot-rows", 0, "send every update to one of the N lowest ids of its table, drawn uniformly and shared by all workers, which the other operations leave alone: workers wait for each other's row locks (contention); 0: updates take any live row, never one another worker is updating")
}

// Validate implements workload.Workload: each table needs its hot rows.
func (w *Mixed) Validate() error {
	if err := w.Base.Validate(); err != nil {
		return err
	}
	return w.CheckHotRows(w.Hot)
}

// Prepare implements workload.Workload: the rows' load, then the hot rows
// set apart from the live sets, so that no delete or select takes them.
func (w *Mixed) Prepare(ctx context.Context, t target.Target, progress io.Writer) error {
	if err := w.Base.Prepare(ctx, t, progress); err != nil {
		return err
	}
	if w.Hot > 0 {
		for _, l := range w.Live {
			l.RemoveUpTo(w.Hot) // a shard's set holds its own ids only
		}
	}
	return nil
}

// Params implements workload.Workload.
func (w *Mixed) Params() map[string]any {
	p := map[string]any{"insert_pct": 20.0, "select_direct_pct": 22.5, "select_indirect_pct": 7.5, "update_pct": 30.0, "delete_pct": 20.0,
		"range_rows_mean": indsel.MeanRangeLength, "filter_selectivity": indsel.Selectivity}
	if w.Hot > 0 {
		p["hot_rows"] = w.Hot
	}
	return w.ParamsWith(p)
}

// Ops implements workload.Workload.
func (w *Mixed) Ops() []string {
	return []string{"insert", "select-direct", "select-indirect", "update", "delete"}
}

// NewWorker implements workload.Workload.
func (w *Mixed) NewWorker(_ context.Context, t target.Target, conn target.Conn, id int) (workload.Worker, error) {
	if err := w.Ready("mixed"); err != nil {
		return nil, err
	}
	d := t.Dialect()
	k := &worker{
		w:    w,
		conn: conn,
		rng:  w.WorkerRand(id),
		solo: w.solo,
	}
	for i, name := range w.Tables() {
		k.tabs = append(k.tabs, tab{
			live:      w.Live[i],
			insertSQL: rowdata.InsertSQL(d, name),
			deleteSQL: "DELETE FROM " + d.Table(name) + " WHERE row_id = " + d.Placeholder(1),
			selectSQL: directsel.SelectSQL(d, name, "row_id = "+d.Placeholder(1)),
			up:        updates.NewUpdater(d, name, conn),
			ranger:    indsel.NewRanger(d, name, conn),
		})
	}
	return k, nil
}

// tab is one row table's live set and statements.
type tab struct {
	live      *rowdata.LiveSet
	insertSQL string
	deleteSQL string
	selectSQL string
	up        *updates.Updater
	ranger    *indsel.Ranger
}

type worker struct {
	w    *Mixed
	conn target.Conn
	rng  *rand.Rand
	wr   rowdata.Writer
	rr   directsel.RowReader
	tabs []tab
	solo int // 1 + the only operation this worker runs (Isolate); 0 = the mix
}

// pick draws an operation from Mix (or returns the isolated one).
func (k *worker) pick() int {
	if k.solo > 0 {
		return k.solo - 1
	}
	x := k.rng.IntN(1000)
	for op, w := range Mix {
		if x < w {
			return op
		}
		x -= w
	}
	return OpDelete
}

func (k *worker) Do(ctx context.Context) (workload.Result, error) {
	op := k.pick()
	tb := &k.tabs[k.w.PickTable(k.rng)]
	switch op {
	case OpSelectDirect:
		if id, _, ok := tb.live.Peek(k.rng); ok {
			n, b, err := k.rr.Query(ctx, k.conn, tb.selectSQL, id)
			return workload.Result{Op: OpSelectDirect, Rows: n, Bytes: b}, err
		}
	case OpSelectIndirect:
		if n, b, ok, err := tb.ranger.Select(ctx, tb.live, k.rng); ok {
			return workload.Result{Op: OpSelectIndirect, Rows: n.Returned, Bytes: b, Examined: n.Examined}, err
		}
	case OpUpdate:
		if k.w.Hot > 0 {
			n, b, err := tb.up.UpdateID(ctx, 1+k.rng.Int64N(k.w.Hot), k.rng)
			return workload.Result{Op: OpUpdate, Rows: n, Bytes: b}, err
		}
		if n, b, ok, err := tb.up.Update(ctx, tb.live, k.rng); ok {
			return workload.Result{Op: OpUpdate, Rows: n, Bytes: b}, err
		}
	case OpDelete:
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
