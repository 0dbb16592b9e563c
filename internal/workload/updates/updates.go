// Package updates implements the updates workload of the source tests: each
// request updates every non-key column of one random live row with freshly
// generated values, in its own transaction.
//
// It also exports UpdateSQL and Updater, which the mixed workload shares.
package updates

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"

	"github.com/ceiling-db/ceiling/internal/target"
	"github.com/ceiling-db/ceiling/internal/workload"
	"github.com/ceiling-db/ceiling/internal/workload/rowdata"
)

// Meta registers the workload.
var Meta = workload.Meta{
	Name:        "updates",
	Description: "single-row updates of every non-key column of a ~400-byte row, by a random live id",
	New:         func() workload.Workload { return &Updates{Base: rowdata.Base{Workload: "updates", MinRows: 1}} },
}

// OpUpdate is the only operation.
const OpUpdate = 0

// Updates is the updates workload.
type Updates struct {
	rowdata.Base
}

var _ workload.Workload = (*Updates)(nil)

// CheckThreads implements workload.ThreadsChecker. A worker takes its row
// out of the live set for the update's duration (no two workers update
// one row at a time), so a table with fewer rows than workers leaves some
// with no row to update: their requests would fail before reaching the
// database.
func (w *Updates) CheckThreads(threads int) error {
	return w.RowsPerWorker(threads, "each update holds its row until it returns")
}

// Params implements workload.Workload.
func (w *Updates) Params() map[string]any {
	return w.BaseParams()
}

// Ops implements workload.Workload.
func (w *Updates) Ops() []string { return []string{"update"} }

// NewWorker implements workload.Workload.
func (w *Updates) NewWorker(_ context.Context, t target.Target, conn target.Conn, id int) (workload.Worker, error) {
	if err := w.Ready("updates"); err != nil {
		return nil, err
	}
	k := &worker{w: w, rng: w.WorkerRand(id)}
	for _, name := range w.Tables() {
		k.ups = append(k.ups, NewUpdater(t.Dialect(), name, conn))
	}
	return k, nil
}

type worker struct {
	w   *Updates
	rng *rand.Rand
	ups []*Updater // per table
}

func (k *worker) Do(ctx context.Context) (workload.Result, error) {
	ti := k.w.PickTable(k.rng)
	n, b, ok, err := k.ups[ti].Update(ctx, k.w.Live[ti], k.rng)
	if !ok {
		return workload.Result{Op: OpUpdate}, errors.New("updates: no live rows")
	}
	return workload.Result{Op: OpUpdate, Rows: n, Bytes: b}, err
}

// UpdateSQL returns "UPDATE <table> SET <every non-key column> = ? … WHERE
// row_id = ?", with the key as the last placeholder.
func UpdateSQL(d target.Dialect, table string) string {
	var b strings.Builder
	b.WriteString("UPDATE ")
	b.WriteString(d.Table(table))
	b.WriteString(" SET ")
	for i, c := range rowdata.Columns[1:] {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(c)
		b.WriteString(" = ")
		b.WriteString(d.Placeholder(i + 1))
	}
	b.WriteString(" WHERE row_id = ")
	b.WriteString(d.Placeholder(rowdata.NumColumns))
	return b.String()
}

// Updater performs single-row updates for one worker.
type Updater struct {
	conn target.Conn
	sql  string
	row  rowdata.Row
	args []any
}

// NewUpdater returns an Updater of table on conn.
func NewUpdater(d target.Dialect, table string, conn target.Conn) *Updater {
	return &Updater{conn: conn, sql: UpdateSQL(d, table), args: make([]any, 0, rowdata.NumColumns)}
}

// Update rewrites every non-key column of a random live row with fresh
// values and returns the rows affected and the new row's data bytes
// (ok=false when the set is empty). The row is taken out of live for the
// duration of the statement, so no other worker deletes or updates it
// meanwhile, and put back with its new size (its old one on error), so later
// deletes account exact bytes.
func (u *Updater) Update(ctx context.Context, live *rowdata.LiveSet, rng *rand.Rand) (rows, bytes int64, ok bool, err error) {
	id, old, ok := live.Take(rng)
	if !ok {
		return 0, 0, false, nil
	}
	rowdata.Fill(&u.row, rng, id)
	r := &u.row
	u.args = append(u.args[:0], r.Bit, r.Tinyint, r.Smallint, r.Int, r.Bigint,
		r.Datetime, r.Float, r.Money, r.Short, r.Mid, r.Long, id) // non-key columns, then the key
	n, err := u.conn.Exec(ctx, u.sql, u.args...)
	if err != nil {
		live.Add(id, old)
		return 0, 0, true, err
	}
	size := u.row.Bytes()
	live.Add(id, size)
	return n, n * size, true, nil
}
