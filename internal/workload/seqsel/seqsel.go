// Package seqsel implements the sequential-selects workload of the source
// tests: each request reads a whole row table, every column, with no WHERE
// and no ORDER BY, and counts the rows and their data bytes (by SQL type
// sizes, like the other row workloads). With --tables N each request reads
// one of the N tables, picked at random.
//
// --cold makes a best effort to start the run (not each request) with a
// cold cache: the eviction runs once, after the data is loaded and before
// the workers connect. Doing it before every request would put the
// eviction's own time inside the measured latency, and on a server the OS
// cache drop is host-wide. What could and could not be evicted on the
// engine is printed and recorded in the parameters (cold_cache). Reads from
// disk per request come from the server evidence (costs.data_reads_per_op).
// A table larger than the server's cache is read from disk on every request
// whatever --cold does; that is the reliable way to measure cold reads.
package seqsel

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"

	"github.com/spf13/pflag"

	"github.com/ceiling-db/ceiling/internal/target"
	"github.com/ceiling-db/ceiling/internal/workload"
	"github.com/ceiling-db/ceiling/internal/workload/directsel"
	"github.com/ceiling-db/ceiling/internal/workload/rowdata"
)

// Meta registers the workload.
var Meta = workload.Meta{
	Name:        "sequential-selects",
	Description: "whole-table reads (every row and column, no ORDER BY) of the ~400-byte row table; --cold tries to start from a cold cache",
	New: func() workload.Workload {
		return &SeqSel{Base: rowdata.Base{Workload: "sequential-selects", MinRows: 1, ReadOnly: true}}
	},
}

// OpScan is the only operation.
const OpScan = 0

// SeqSel is the sequential-selects workload.
type SeqSel struct {
	rowdata.Base
	Cold bool

	// cold is what --cold did, filled by Prepare: "engine_cache" and
	// "os_cache", each a sentence.
	cold map[string]string
}

var _ workload.Workload = (*SeqSel)(nil)

// Flags implements workload.Workload.
func (w *SeqSel) Flags(fs *pflag.FlagSet) {
	w.Base.Flags(fs)
	fs.BoolVar(&w.Cold, "cold", false, "best effort to start the run with a cold cache (says per engine what it could and could not evict)")
}

// Shard implements workload.Sharder: the tables as prepared, each shard
// scanning them whole; not with --cold, whose evictions would hit the
// other shards' scans.
func (w *SeqSel) Shard(i, n int) error {
	if w.Cold {
		return errors.New("--cold evicts the caches under the other shards' scans: run sequential-selects --cold unsharded")
	}
	return w.Base.Shard(i, n)
}

// Params implements workload.Workload.
func (w *SeqSel) Params() map[string]any {
	p := w.ParamsWith(map[string]any{"cold": w.Cold})
	if w.cold != nil {
		p["cold_cache"] = w.cold
	}
	return p
}

// Ops implements workload.Workload.
func (w *SeqSel) Ops() []string { return []string{"scan"} }

// Prepare implements workload.Workload: it loads the tables, then with
// --cold evicts what it can.
func (w *SeqSel) Prepare(ctx context.Context, t target.Target, progress io.Writer) error {
	if err := w.Base.Prepare(ctx, t, progress); err != nil {
		return err
	}
	w.cold = nil
	if !w.Cold {
		return nil
	}
	w.cold = evict(ctx, t)
	if progress != nil {
		fmt.Fprintf(progress, "cold cache (%s): engine cache: %s; OS cache: %s\n", t.Info().Engine, w.cold["engine_cache"], w.cold["os_cache"])
	}
	return nil
}

// ScanSQL returns "SELECT <all columns> FROM <table>".
func ScanSQL(d target.Dialect, table string) string {
	return "SELECT " + strings.Join(rowdata.Columns, ", ") + " FROM " + d.Table(table)
}

// NewWorker implements workload.Workload.
func (w *SeqSel) NewWorker(_ context.Context, t target.Target, conn target.Conn, id int) (workload.Worker, error) {
	if err := w.Ready("sequential-selects"); err != nil {
		return nil, err
	}
	k := &worker{w: w, conn: conn, rng: w.WorkerRand(id)}
	for _, name := range w.Tables() {
		k.sqls = append(k.sqls, ScanSQL(t.Dialect(), name))
	}
	return k, nil
}

type worker struct {
	w    *SeqSel
	conn target.Conn
	rng  *rand.Rand
	sqls []string // per table
	rr   directsel.RowReader
}

func (k *worker) Do(ctx context.Context) (workload.Result, error) {
	ti := k.w.PickTable(k.rng)
	n, b, err := k.rr.Query(ctx, k.conn, k.sqls[ti])
	if err == nil && n == 0 {
		err = errors.New("sequential-selects: the table is empty")
	}
	return workload.Result{Op: OpScan, Rows: n, Bytes: b}, err
}
