// Package updates implements the updates workload of the source tests: each
// request updates every non-key column of one random live row with freshly
// generated values, in its own transaction.
//
// By default no two workers update one row at a time (a worker takes its
// row out of the live set), so the workload never waits for a row lock.
// --hot-rows N draws every update's row from the N lowest ids of its
// table instead, which workers share: they meet on rows and queue for
// each other's row locks, the contention the other row workloads cannot
// show.
//
// It also exports UpdateSQL and Updater, which the mixed workload shares.
package updates

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"

	"github.com/spf13/pflag"

	"github.com/ceiling-db/ceiling/internal/target"
	"github.com/ceiling-db/ceiling/internal/workload"
	"github.com/ceiling-db/ceiling/internal/workload/rowdata"
)

// Meta registers the workload.
var Meta = workload.Meta{
	Name:        "updates",
	Description: "single-row updates of every non-key column of a ~400-byte row, by a random live id",
	New:         func() workload.Workload { return &Updates{Base: rowdata.Base{Workload: "updates", MinRows: 1}} },
	RunExamples: `  ceiling run updates
  ceiling run updates -c 4 -T 20s
  ceiling run updates --ops 10000 --durability full
  ceiling run updates -c 8 --hot-rows 4 -T 20s          # 8 workers on 4 rows: row-lock contention
  ceiling run updates -R 200 -T 30s                    # open loop at 200 requests/s
  ceiling run updates --rates 20:200:20 --step 30s     # open-loop ramp, 10 steps
  ceiling run updates --ops 10000 --repeat 3           # UT1..UT3 with mean and spread
  ceiling run updates --threads-ramp 1:32:x2 --step 20s  # closed loop at 1, 2, 4 … 32 threads
  ceiling run updates --db postgres://localhost/db --probe-dir /var/lib/postgresql  # probe the WAL's disk
  ceiling run updates --db sqlite:/tmp/bench.db --warmup 5s --out /tmp/results
  ceiling run updates --emulate azure-2014-s1             # SQLite held to a tier's log rate
  ceiling run updates -c 12 --shard 0/3 --out shards      # one of 3 load generators; then ceiling merge shards/`,
}

// OpUpdate is the only operation.
const OpUpdate = 0

// Updates is the updates workload.
type Updates struct {
	rowdata.Base
	// Hot (--hot-rows) is how many of each table's lowest ids the updates
	// share; 0: any live row, one worker at a time.
	Hot int64
}

var _ workload.Workload = (*Updates)(nil)

// CheckThreads implements workload.ThreadsChecker. A worker takes its row
// out of the live set for the update's duration (no two workers update
// one row at a time), so a table with fewer rows than workers leaves some
// with no row to update: their requests would fail before reaching the
// database.
// With --hot-rows the workers share the rows: any number of them fits.
func (w *Updates) CheckThreads(threads int) error {
	if w.Hot > 0 {
		return nil
	}
	return w.RowsPerWorker(threads, "each update holds its row until it returns")
}

// Flags implements workload.Workload: the row flags and --hot-rows.
func (w *Updates) Flags(fs *pflag.FlagSet) {
	w.Base.Flags(fs)
	fs.Int64Var(&w.Hot, "hot-rows", 0, "update only the N lowest ids of each table, drawn uniformly, which all workers share: they meet on rows and wait for each other's row locks (contention); 0: any row, never one another worker is updating")
}

// Validate implements workload.Workload.
func (w *Updates) Validate() error {
	if err := w.Base.Validate(); err != nil {
		return err
	}
	return w.CheckHotRows(w.Hot)
}

// Params implements workload.Workload.
func (w *Updates) Params() map[string]any {
	if w.Hot > 0 {
		return w.ParamsWith(map[string]any{"hot_rows": w.Hot})
	}
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
	if k.w.Hot > 0 {
		// Prepared ids 1..rows stay (this workload deletes none).
		n, b, err := k.ups[ti].UpdateID(ctx, 1+k.rng.Int64N(k.w.Hot), k.rng)
		return workload.Result{Op: OpUpdate, Rows: n, Bytes: b}, err
	}
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
	n, bytes, err := u.UpdateID(ctx, id, rng)
	if err != nil {
		live.Add(id, old)
		return 0, 0, true, err
	}
	live.Add(id, u.row.Bytes())
	return n, bytes, true, nil
}

// UpdateID rewrites every non-key column of row id with fresh values and
// returns the rows affected and their data bytes, leaving the live set
// alone (--hot-rows: workers share the rows, and a row's size there is
// not kept up to date, which only deletes would read).
func (u *Updater) UpdateID(ctx context.Context, id int64, rng *rand.Rand) (rows, bytes int64, err error) {
	rowdata.Fill(&u.row, rng, id)
	r := &u.row
	u.args = append(u.args[:0], r.Bit, r.Tinyint, r.Smallint, r.Int, r.Bigint,
		r.Datetime, r.Float, r.Money, r.Short, r.Mid, r.Long, id) // non-key columns, then the key
	n, err := u.conn.Exec(ctx, u.sql, u.args...)
	if err != nil {
		return 0, 0, err
	}
	return n, n * u.row.Bytes(), nil
}
