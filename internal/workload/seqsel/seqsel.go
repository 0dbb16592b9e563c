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
// engine is printed and recorded in the parameters (cold_cache). With
// --cold the workers also time their scans, each worker's first (the one
// the eviction left cold) apart from the rest: the figures first_scan_ms
// and later_scan_ms (workload.Observer). A warm-up or a ramp would warm
// the caches before the measured scans, so the command line refuses them
// (workload.ColdStarter). Reads from
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
	"sync/atomic"
	"time"

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
	// scans counts the timed scans with --cold, new at each Prepare.
	scans *scanCounts
}

// scanCounts are the --cold scans' counts and summed times, each worker's
// first scan apart from its later ones.
type scanCounts struct {
	firstN, firstNs, laterN, laterNs atomic.Int64
}

// Observation counter and figure names.
const (
	obsFirstScans  = "first_scans"
	obsFirstScanMs = "first_scans_ms"
	obsLaterScans  = "later_scans"
	obsLaterScanMs = "later_scans_ms"

	FigFirstScans  = "first_scans"   // each worker's first scan, after the eviction
	FigFirstScanMs = "first_scan_ms" // their mean time
	FigLaterScans  = "later_scans"   // the scans after them
	FigLaterScanMs = "later_scan_ms" // their mean time
)

var (
	_ workload.Workload    = (*SeqSel)(nil)
	_ workload.Observer    = (*SeqSel)(nil)
	_ workload.ColdStarter = (*SeqSel)(nil)
)

// ColdStart implements workload.ColdStarter.
func (w *SeqSel) ColdStart() bool { return w.Cold }

// Observe implements workload.Observer: with --cold, the scans timed so
// far; nothing without it.
func (w *SeqSel) Observe(context.Context, target.Target) (map[string]float64, error) {
	if !w.Cold || w.scans == nil {
		return nil, nil
	}
	c := w.scans
	return map[string]float64{
		obsFirstScans:  float64(c.firstN.Load()),
		obsFirstScanMs: float64(c.firstNs.Load()) / 1e6,
		obsLaterScans:  float64(c.laterN.Load()),
		obsLaterScanMs: float64(c.laterNs.Load()) / 1e6,
	}, nil
}

// Figures implements workload.Observer: the mean time of the workers'
// first scans (cold) and of the scans after them, each with its count.
func (w *SeqSel) Figures(s workload.Span) map[string]float64 {
	out := map[string]float64{}
	for _, f := range []struct{ n, ms, figN, figMs string }{
		{obsFirstScans, obsFirstScanMs, FigFirstScans, FigFirstScanMs},
		{obsLaterScans, obsLaterScanMs, FigLaterScans, FigLaterScanMs},
	} {
		n, ok1 := s.Delta[f.n]
		ms, ok2 := s.Delta[f.ms]
		if ok1 && ok2 && n > 0 {
			out[f.figN] = n
			out[f.figMs] = ms / n
		}
	}
	return out
}

// Flags implements workload.Workload.
func (w *SeqSel) Flags(fs *pflag.FlagSet) {
	w.Base.Flags(fs)
	fs.BoolVar(&w.Cold, "cold", false, "best effort to start the run with a cold cache (says per engine what it could and could not evict); times each worker's first scan apart from the later ones; not with --warmup or a ramp")
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
	w.cold, w.scans = nil, nil
	if !w.Cold {
		return nil
	}
	w.scans = new(scanCounts)
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
	k := &worker{w: w, conn: conn, rng: w.WorkerRand(id), counts: w.scans, first: true}
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
	// counts, with --cold, times the scans; first until the worker's
	// first scan is done.
	counts *scanCounts
	first  bool
}

func (k *worker) Do(ctx context.Context) (workload.Result, error) {
	ti := k.w.PickTable(k.rng)
	var start time.Time
	if k.counts != nil {
		start = time.Now()
	}
	n, b, err := k.rr.Query(ctx, k.conn, k.sqls[ti])
	if err == nil && n == 0 {
		err = errors.New("sequential-selects: the table is empty")
	}
	if k.counts != nil {
		k.count(time.Since(start), err == nil)
	}
	return workload.Result{Op: OpScan, Rows: n, Bytes: b}, err
}

// count adds a scan of duration d to the --cold counts; a failed scan is
// left out, but a failed first scan still ends the worker's cold one.
func (k *worker) count(d time.Duration, ok bool) {
	first := k.first
	k.first = false
	switch {
	case !ok:
	case first:
		k.counts.firstN.Add(1)
		k.counts.firstNs.Add(int64(d))
	default:
		k.counts.laterN.Add(1)
		k.counts.laterNs.Add(int64(d))
	}
}
