// Package directsel implements the direct-selects workload of the source
// tests: each request selects one row, all columns, by a random live id.
//
// It also exports the row reading helpers the mixed and indirect-selects
// workloads share: SelectSQL and RowReader.
package directsel

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/ceiling-db/ceiling/internal/target"
	"github.com/ceiling-db/ceiling/internal/workload"
	"github.com/ceiling-db/ceiling/internal/workload/rowdata"
)

// Meta registers the workload.
var Meta = workload.Meta{
	Name:        "direct-selects",
	Description: "single-row selects (all columns) of a ~400-byte row by a random live id",
	New: func() workload.Workload {
		return &DirectSel{Base: rowdata.Base{Workload: "direct-selects", MinRows: 1, ReadOnly: true}}
	},
}

// OpSelect is the only operation.
const OpSelect = 0

// DirectSel is the direct-selects workload.
type DirectSel struct {
	rowdata.Base
}

var _ workload.Workload = (*DirectSel)(nil)

// Params implements workload.Workload.
func (w *DirectSel) Params() map[string]any {
	return w.BaseParams()
}

// Ops implements workload.Workload.
func (w *DirectSel) Ops() []string { return []string{"select"} }

// NewWorker implements workload.Workload.
func (w *DirectSel) NewWorker(_ context.Context, t target.Target, conn target.Conn, id int) (workload.Worker, error) {
	if err := w.Ready("direct-selects"); err != nil {
		return nil, err
	}
	d := t.Dialect()
	k := &worker{w: w, conn: conn, rng: w.WorkerRand(id)}
	for _, name := range w.Tables() {
		k.sqls = append(k.sqls, SelectSQL(d, name, "row_id = "+d.Placeholder(1)))
	}
	return k, nil
}

type worker struct {
	w    *DirectSel
	conn target.Conn
	rng  *rand.Rand
	sqls []string // per table
	rr   RowReader
}

func (k *worker) Do(ctx context.Context) (workload.Result, error) {
	ti := k.w.PickTable(k.rng)
	id, _, ok := k.w.Live[ti].Peek(k.rng)
	if !ok {
		return workload.Result{Op: OpSelect}, errors.New("direct-selects: no live rows")
	}
	n, b, err := k.rr.Query(ctx, k.conn, k.sqls[ti], id)
	return workload.Result{Op: OpSelect, Rows: n, Bytes: b}, err
}

// size reads the current row and returns its data bytes: from the
// lengths of its values as sent where the target gives them (no value is
// looked at, so none is decoded), else by scanning it.
func (r *RowReader) size(rows target.Rows, raw target.RawRows) (int64, error) {
	if raw == nil {
		if err := rows.Scan(r.dest...); err != nil {
			return 0, err
		}
		return r.row.Bytes(), nil
	}
	var err error
	if r.lens, err = raw.RawLens(r.lens[:0]); err != nil {
		return 0, err
	}
	if len(r.lens) != rowdata.NumColumns {
		return 0, fmt.Errorf("read rows: %d columns, want %d", len(r.lens), rowdata.NumColumns)
	}
	return rowdata.RawBytes(r.lens), nil
}

// SelectSQL returns "SELECT <all columns> FROM <table> WHERE <where>".
func SelectSQL(d target.Dialect, table, where string) string {
	return "SELECT " + strings.Join(rowdata.Columns, ", ") + " FROM " + d.Table(table) + " WHERE " + where
}

// RowReader scans rows of the shared row table (all columns, in
// rowdata.Columns order) and counts their data bytes by SQL type sizes: the
// fixed-width columns by their type's size, varchars by their length. It
// reuses its scan destinations; one per worker.
type RowReader struct {
	row  rowdata.Row
	dest []any
	lens []int
}

// Query runs sql with args and reads every returned row, returning the
// number of rows and their data bytes.
func (r *RowReader) Query(ctx context.Context, conn target.Conn, sql string, args ...any) (n, bytes int64, err error) {
	if r.dest == nil {
		x := &r.row
		r.dest = []any{&x.ID, &x.Bit, &x.Tinyint, &x.Smallint, &x.Int, &x.Bigint,
			&x.Datetime, &x.Float, &x.Money, &x.Short, &x.Mid, &x.Long}
	}
	rows, err := conn.Query(ctx, sql, args...)
	if err != nil {
		return 0, 0, err
	}
	raw, _ := rows.(target.RawRows) // nil: the target gives no raw values
	for rows.Next() {
		size, err := r.size(rows, raw)
		if err != nil {
			_ = rows.Close()
			return n, bytes, err
		}
		n++
		bytes += size
	}
	err = rows.Err()
	if cerr := rows.Close(); err == nil {
		err = cerr
	}
	return n, bytes, err
}
