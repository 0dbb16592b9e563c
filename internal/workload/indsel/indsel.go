// Package indsel implements the indirect-selects workload of the source
// tests: each request runs
//
//	SELECT <all columns> FROM rows
//	WHERE row_id BETWEEN a AND b AND <column> BETWEEN p AND q
//
// where b-a+1, the key range examined, is 100 (30%), 200 (20%), 300 (15%),
// 400 (10%) or 600/800/1200/2500/5000 (5% each), a mean of 660 rows; a is a
// random live id; <column> is a random non-key numeric column and p..q a
// random window covering 90% of that column's value domain, so about 90% of
// the examined rows match (the generated values are uniform over the
// domain). It reports the rows examined (the key range, clipped at the end
// of the table), the rows returned and their data bytes.
//
// It also exports Ranger, which the mixed workload shares.
package indsel

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"

	"github.com/ceiling-db/ceiling/internal/target"
	"github.com/ceiling-db/ceiling/internal/workload"
	"github.com/ceiling-db/ceiling/internal/workload/directsel"
	"github.com/ceiling-db/ceiling/internal/workload/rowdata"
)

// Meta registers the workload.
var Meta = workload.Meta{
	Name:        "indirect-selects",
	Description: "range selects: row_id BETWEEN a AND b (mean 660 rows examined) AND a random numeric column in a wide range",
	New: func() workload.Workload {
		return &IndSel{Base: rowdata.Base{Workload: "indirect-selects", MinRows: 1, ReadOnly: true}}
	},
}

// OpSelect is the only operation.
const OpSelect = 0

// Range lengths and their weights in percent (DESIGN.md section 3).
var (
	RangeLengths = []int64{100, 200, 300, 400, 600, 800, 1200, 2500, 5000}
	RangeWeights = []int{30, 20, 15, 10, 5, 5, 5, 5, 5}
)

// MeanRangeLength is the expected key range examined per request.
const MeanRangeLength = 660

// Selectivity is the fraction of a filter column's domain the p..q window covers.
const Selectivity = 0.9

// RangeLength draws a key range length from the distribution.
func RangeLength(rng *rand.Rand) int64 {
	x := rng.IntN(100)
	for i, w := range RangeWeights {
		if x < w {
			return RangeLengths[i]
		}
		x -= w
	}
	return RangeLengths[len(RangeLengths)-1]
}

// filterCol is a non-key numeric column with the domain its generated values
// are uniform over (rowdata.Fill).
type filterCol struct {
	name     string
	float    bool
	min, max float64
}

var filterCols = []filterCol{
	{"tinyint_col", false, 0, 255},
	{"smallint_col", false, -32768, 32767},
	{"int_col", false, 0, math.MaxInt32},
	{"bigint_col", false, math.MinInt64, math.MaxInt64},
	{"float_col", true, 0, 1e6},
	{"money_col", true, 0, 1e6},
}

// IndSel is the indirect-selects workload.
type IndSel struct {
	rowdata.Base
}

var _ workload.Workload = (*IndSel)(nil)

// Params implements workload.Workload.
func (w *IndSel) Params() map[string]any {
	return w.ParamsWith(map[string]any{"range_rows_mean": MeanRangeLength, "filter_selectivity": Selectivity})
}

// Ops implements workload.Workload.
func (w *IndSel) Ops() []string { return []string{"select"} }

// NewWorker implements workload.Workload.
func (w *IndSel) NewWorker(_ context.Context, t target.Target, conn target.Conn, id int) (workload.Worker, error) {
	if err := w.Ready("indirect-selects"); err != nil {
		return nil, err
	}
	k := &worker{w: w, rng: w.WorkerRand(id)}
	for _, name := range w.Tables() {
		k.rs = append(k.rs, NewRanger(t.Dialect(), name, conn))
	}
	return k, nil
}

type worker struct {
	w   *IndSel
	rng *rand.Rand
	rs  []*Ranger // per table
}

func (k *worker) Do(ctx context.Context) (workload.Result, error) {
	ti := k.w.PickTable(k.rng)
	n, b, ok, err := k.rs[ti].Select(ctx, k.w.Live[ti], k.rng)
	if !ok {
		return workload.Result{Op: OpSelect}, errors.New("indirect-selects: no live rows")
	}
	return workload.Result{Op: OpSelect, Rows: n.Returned, Bytes: b, Examined: n.Examined}, err
}

// Ranger performs indirect (range) selects for one worker.
type Ranger struct {
	conn target.Conn
	sqls []string // one statement per filter column
	rr   directsel.RowReader
}

// NewRanger returns a Ranger of table on conn.
func NewRanger(d target.Dialect, table string, conn target.Conn) *Ranger {
	r := &Ranger{conn: conn}
	for _, c := range filterCols {
		where := "row_id BETWEEN " + d.Placeholder(1) + " AND " + d.Placeholder(2) +
			" AND " + c.name + " BETWEEN " + d.Placeholder(3) + " AND " + d.Placeholder(4)
		r.sqls = append(r.sqls, directsel.SelectSQL(d, table, where))
	}
	return r
}

// Rows is what one range select examined and returned.
type Rows struct {
	// Examined is the key range scanned, b-a+1 clipped at the highest id
	// the table has had (it cannot hold rows beyond it): every row of the
	// range is examined against the column predicate. Where rows of the
	// range were deleted (mixed), fewer rows exist to examine.
	Examined int64
	Returned int64 // rows matching both predicates
}

// Select runs one range select starting at a random live id and returns the
// rows examined and returned and the returned data bytes (ok=false when
// live is empty).
func (r *Ranger) Select(ctx context.Context, live *rowdata.LiveSet, rng *rand.Rand) (rows Rows, bytes int64, ok bool, err error) {
	a, _, ok := live.Peek(rng)
	if !ok {
		return Rows{}, 0, false, nil
	}
	b := a + RangeLength(rng) - 1
	rows.Examined = min(b, live.MaxID()) - a + 1
	ci := rng.IntN(len(filterCols))
	c := filterCols[ci]
	span := c.max - c.min
	lo := c.min + rng.Float64()*(1-Selectivity)*span
	hi := lo + Selectivity*span
	var p, q any
	if c.float {
		p, q = lo, hi
	} else {
		p, q = c.clampInt(lo), c.clampInt(hi)
	}
	rows.Returned, bytes, err = r.rr.Query(ctx, r.conn, r.sqls[ci], a, b, p, q)
	return rows, bytes, true, err
}

// clampInt converts f to an int64 inside the column's domain, so the bind
// value fits the column's SQL type (PostgreSQL rejects an int4 parameter
// outside int4, for example).
func (c filterCol) clampInt(f float64) int64 {
	if f >= c.max {
		if c.max >= math.MaxInt64 {
			return math.MaxInt64
		}
		return int64(c.max)
	}
	if f <= c.min {
		return int64(c.min)
	}
	return int64(f)
}
