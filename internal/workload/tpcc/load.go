package tpcc

// The loader: `ceiling prepare tpcc` creates the tables, loads ITEM once and
// the warehouses in parallel (one connection per load thread, each taking
// the next job: ITEM, or one of the three parts of a warehouse, see
// warehouseParts), through each engine's bulk path (rowsLoader: COPY in
// text format on PostgreSQL, LOAD DATA LOCAL INFILE on MySQL/MariaDB, with
// multi-row INSERT where the server refuses it; target.BulkInserter:
// prepared inserts in one transaction per job on SQLite), then finishes
// each table in parallel (finish): its primary key on PostgreSQL
// (keysAfterLoad), its secondary indexes and its planner statistics.
//
// The load state lives in tpcc_meta, a small ceiling-made table: "loading"
// when the load starts, "complete" (with the warehouse count and the NURand
// load constants) when it ends. prepare refuses to load over a complete or
// an interrupted dataset without --force; run (Attach) accepts only a
// complete one.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ceiling-db/ceiling/internal/target"
)

// Load states recorded in tpcc_meta.
const (
	stateLoading  = "loading"
	stateComplete = "complete"
)

// loadSeed seeds the data of each warehouse (with the warehouse number), so
// a load is reproducible; the NURand constants are drawn afresh per load.
const loadSeed = 0x7cc_10ad

// Validate implements workload.Workload.
func (w *Workload) Validate() error {
	if w.Warehouses < 1 {
		return fmt.Errorf("--warehouses must be at least 1, got %d", w.Warehouses)
	}
	if w.LoadThreads < 0 {
		return fmt.Errorf("--load-threads must not be negative, got %d", w.LoadThreads)
	}
	return w.validateRun()
}

// Params implements workload.Workload.
func (w *Workload) Params() map[string]any {
	p := w.runParams()
	p["warehouses"] = w.Warehouses
	return p
}

// Tables implements workload.Workload. tpcc_meta comes first, so a cleanup
// that is interrupted leaves tables without a "complete" marker, which
// prepare and run detect as an incomplete dataset.
func (w *Workload) Tables() []string {
	return append([]string{TMeta}, dataTables...)
}

// Dataset is what tpcc_meta records about the loaded data.
type Dataset struct {
	State      string // "loading" or "complete"
	Warehouses int
	Consts     Constants
	LoadedAt   string // RFC 3339, when the load finished
}

// ReadDataset reads the load state. It returns nil when there is no
// tpcc_meta table; tables lists the TPC-C tables (tpcc_meta included) that
// exist in ceiling's namespace.
func ReadDataset(ctx context.Context, t target.Target) (ds *Dataset, tables []string, err error) {
	all, err := t.Schema().Tables(ctx)
	if err != nil {
		return nil, nil, err
	}
	ours := append([]string{TMeta}, dataTables...)
	for _, name := range all {
		if slices.Contains(ours, name) {
			tables = append(tables, name)
		}
	}
	if !slices.Contains(tables, TMeta) {
		return nil, tables, nil
	}
	conn, err := t.Connect(ctx)
	if err != nil {
		return nil, tables, err
	}
	defer conn.Close()
	rows, err := conn.Query(ctx, "SELECT k, v FROM "+t.Dialect().Table(TMeta))
	if err != nil {
		return nil, tables, fmt.Errorf("read %s: %w", TMeta, err)
	}
	defer rows.Close()
	ds = &Dataset{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return nil, tables, fmt.Errorf("read %s: %w", TMeta, err)
		}
		n, _ := strconv.Atoi(v)
		switch k {
		case "state":
			ds.State = v
		case "warehouses":
			ds.Warehouses = n
		case "c_last":
			ds.Consts.CLast = n
		case "c_id":
			ds.Consts.CID = n
		case "ol_i_id":
			ds.Consts.OLIID = n
		case "loaded_at":
			ds.LoadedAt = v
		}
	}
	if err := rows.Err(); err != nil {
		return nil, tables, fmt.Errorf("read %s: %w", TMeta, err)
	}
	return ds, tables, nil
}

func writeDataset(ctx context.Context, t target.Target, ds *Dataset) error {
	conn, err := t.Connect(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	d := t.Dialect()
	if err := conn.Begin(ctx); err != nil {
		return err
	}
	kv := [][2]string{
		{"state", ds.State},
		{"warehouses", strconv.Itoa(ds.Warehouses)},
		{"c_last", strconv.Itoa(ds.Consts.CLast)},
		{"c_id", strconv.Itoa(ds.Consts.CID)},
		{"ol_i_id", strconv.Itoa(ds.Consts.OLIID)},
		{"loaded_at", ds.LoadedAt},
	}
	ins := "INSERT INTO " + d.Table(TMeta) + " (k, v) VALUES (" + d.Placeholder(1) + ", " + d.Placeholder(2) + ")"
	_, err = conn.Exec(ctx, "DELETE FROM "+d.Table(TMeta))
	for _, p := range kv {
		if err != nil {
			break
		}
		_, err = conn.Exec(ctx, ins, p[0], p[1])
	}
	if err != nil {
		_ = conn.Rollback(context.WithoutCancel(ctx))
		return fmt.Errorf("write %s: %w", TMeta, err)
	}
	return conn.Commit(ctx)
}

// Prepare implements workload.Workload: it loads the dataset, refusing to
// replace an existing one (complete or not) without --force.
func (w *Workload) Prepare(ctx context.Context, t target.Target, progress io.Writer) error {
	if progress == nil {
		progress = io.Discard
	}
	ds, tables, err := ReadDataset(ctx, t)
	if err != nil {
		return err
	}
	if !w.Force {
		switch {
		case ds != nil && ds.State == stateComplete:
			return fmt.Errorf("a TPC-C dataset of %d warehouses is already loaded (at %s); `ceiling run tpcc` reuses it: pass --force to load a new one, or run `ceiling cleanup tpcc` first", ds.Warehouses, ds.LoadedAt)
		case ds != nil || len(tables) > 0:
			return errors.New("an incomplete TPC-C dataset was found (an interrupted load?): pass --force to load over it, or run `ceiling cleanup tpcc` to remove it")
		}
	}
	return w.load(ctx, t, progress)
}

// Attach implements workload.Attacher: run reuses the prepared dataset. An
// explicit --warehouses may name fewer warehouses than were loaded (the run
// then uses warehouses 1..N) but not more; without it the run uses all of
// them.
func (w *Workload) Attach(ctx context.Context, t target.Target, progress io.Writer) error {
	if w.run.procedures {
		if err := ProceduresSupported(t.Dialect().Engine); err != nil {
			return err
		}
	}
	ds, tables, err := ReadDataset(ctx, t)
	if err != nil {
		return err
	}
	n := "N" // the warehouses to prepare: the run's when given
	if w.flags != nil && w.flags.Changed("warehouses") {
		n = fmt.Sprint(w.Warehouses)
	}
	switch {
	case ds == nil && len(tables) == 0:
		return fmt.Errorf("no TPC-C dataset: run `ceiling prepare tpcc --warehouses %s` first", n)
	case ds == nil || ds.State != stateComplete:
		return fmt.Errorf("the TPC-C dataset is incomplete (an interrupted load?): run `ceiling prepare tpcc --warehouses %s --force` to reload it, or `ceiling cleanup tpcc`", n)
	case len(tables) != len(dataTables)+1:
		return fmt.Errorf("the TPC-C dataset is incomplete: only tables %v exist; run `ceiling prepare tpcc --warehouses %s --force`", tables, n)
	}
	if w.flags != nil && w.flags.Changed("warehouses") {
		if w.Warehouses > ds.Warehouses {
			return fmt.Errorf("--warehouses %d: the prepared dataset has only %d; prepare %d with `ceiling prepare tpcc --warehouses %d --force`", w.Warehouses, ds.Warehouses, w.Warehouses, w.Warehouses)
		}
	} else {
		w.Warehouses = ds.Warehouses
	}
	w.consts = ds.Consts
	if w.run.procedures && t.Dialect().Engine == "mysql" {
		if err := installProcs(ctx, t, w.sharded); err != nil {
			return err
		}
	}
	if progress != nil {
		fmt.Fprintf(progress, "  TPC-C dataset: %d warehouses (loaded %s); running on %d\n", ds.Warehouses, ds.LoadedAt, w.Warehouses)
	}
	return nil
}

// loadThreads is the number of loader connections.
func (w *Workload) loadThreads(engine string) int {
	n := w.LoadThreads
	if n == 0 {
		n = runtime.NumCPU()
	}
	if engine == "sqlite" {
		// One writer at a time: more connections would only wait on the lock.
		n = 1
	}
	return max(1, min(n, 1+w.Warehouses*len(warehouseParts)))
}

// LoadSummary is what a load measured.
type LoadSummary struct {
	Rows         int64
	Bytes        int64 // data bytes by SQL type sizes
	Load         time.Duration
	Finish       time.Duration // primary keys (keysAfterLoad), secondary indexes and statistics
	Total        time.Duration
	Threads      int
	Warehouses   int
	PerWarehouse time.Duration // Total / Warehouses
}

func (w *Workload) load(ctx context.Context, t target.Target, progress io.Writer) error {
	_, err := w.loadSummary(ctx, t, progress)
	return err
}

func (w *Workload) loadSummary(ctx context.Context, t target.Target, progress io.Writer) (*LoadSummary, error) {
	start := time.Now()
	d := t.Dialect()
	sch := t.Schema()
	consts := NewConstants(rand.New(rand.NewPCG(uint64(start.UnixNano()), 0xc)))
	ds := &Dataset{State: stateLoading, Warehouses: w.Warehouses, Consts: consts}
	if err := sch.CreateTable(ctx, TMeta, TableBody(d.Engine, TMeta)); err != nil {
		return nil, fmt.Errorf("create table %s: %w", TMeta, err)
	}
	if err := writeDataset(ctx, t, ds); err != nil {
		return nil, err
	}
	for _, name := range dataTables {
		if err := sch.CreateTable(ctx, name, tableBody(d.Engine, name, !keysAfterLoad(d.Engine))); err != nil {
			return nil, fmt.Errorf("create table %s: %w", name, err)
		}
	}
	threads := w.loadThreads(d.Engine)
	fmt.Fprintf(progress, "  loading %s with %s (%s)\n", plural(w.Warehouses, "warehouse"), plural(threads, "thread"), bulkPath(d.Engine))

	stats := &loadStats{}
	var whDone atomic.Int64
	now := time.Now().UTC().Truncate(time.Second)
	stop := make(chan struct{})
	var progWG sync.WaitGroup
	progWG.Add(1)
	go func() {
		defer progWG.Done()
		tick := time.NewTicker(2 * time.Second)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				el := time.Since(start).Seconds()
				rows, bytes := stats.rows.Load(), stats.bytes.Load()
				fmt.Fprintf(progress, "  %d/%d warehouses, %d rows, %.0f rows/s, %.0f MB/min\n",
					whDone.Load(), w.Warehouses, rows, float64(rows)/el, float64(bytes)/mib/el*60)
			}
		}
	}()
	err := w.loadData(ctx, t, threads, consts, now, stats, &whDone)
	close(stop)
	progWG.Wait()
	if err != nil {
		return nil, err
	}
	sum := &LoadSummary{Load: time.Since(start), Threads: threads, Warehouses: w.Warehouses}

	finStart := time.Now()
	if err := finish(ctx, t, threads); err != nil {
		return nil, err
	}
	sum.Finish = time.Since(finStart)

	ds.State = stateComplete
	ds.LoadedAt = time.Now().UTC().Format(time.RFC3339)
	if err := writeDataset(ctx, t, ds); err != nil {
		return nil, err
	}
	w.consts = consts
	sum.Total = time.Since(start)
	sum.Rows, sum.Bytes = stats.rows.Load(), stats.bytes.Load()
	sum.PerWarehouse = sum.Total / time.Duration(w.Warehouses)
	sec := sum.Total.Seconds()
	fmt.Fprintf(progress, "  loaded %s: %d rows, %.0f MB in %.1fs (data %.1fs, %s %.1fs): %.0f rows/s, %.0f MB/min, %.1f s per warehouse\n",
		plural(w.Warehouses, "warehouse"), sum.Rows, float64(sum.Bytes)/mib, sec, sum.Load.Seconds(), finishWhat(d.Engine), sum.Finish.Seconds(),
		float64(sum.Rows)/sec, float64(sum.Bytes)/mib/sec*60, sum.PerWarehouse.Seconds())
	return sum, nil
}

// mib is the MB of the load's progress lines: 2^20 bytes, as in every
// other figure of ceiling's.
const mib = 1 << 20

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

// rowsLoader is a faster whole-table path than BulkInsert where an engine
// has one: MySQL/MariaDB's LOAD DATA LOCAL INFILE, which falls back to
// BulkInsert where the server refuses it.
type rowsLoader interface {
	LoadRows(ctx context.Context, table string, cols []string, rows target.RowSource) (int64, error)
}

// loadFunc is a load function as a target.BulkInserter.
type loadFunc func(ctx context.Context, table string, cols []string, rows target.RowSource) (int64, error)

func (f loadFunc) BulkInsert(ctx context.Context, table string, cols []string, rows target.RowSource) (int64, error) {
	return f(ctx, table, cols, rows)
}

func bulkPath(engine string) string {
	switch engine {
	case "postgres":
		return "COPY, primary keys after the data"
	case "mysql":
		if os.Getenv("CEILING_MYSQL_BULK") == "insert" {
			return "multi-row INSERT"
		}
		return "LOAD DATA LOCAL INFILE; multi-row INSERT if the server refuses it"
	}
	return "prepared inserts, one transaction per part of a warehouse"
}

// loadJob is one unit of loader work: ITEM (w == 0) or one part of
// warehouse w (warehouseParts).
type loadJob struct{ w, part int }

// loadData loads ITEM and every warehouse, a job per part of a warehouse.
// Each thread has its own connection; the first error cancels the others.
func (w *Workload) loadData(ctx context.Context, t target.Target, threads int, consts Constants, now time.Time, stats *loadStats, whDone *atomic.Int64) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	jobs := make(chan loadJob, 1+w.Warehouses*len(warehouseParts))
	jobs <- loadJob{}
	for wh := 1; wh <= w.Warehouses; wh++ {
		for p := range warehouseParts {
			jobs <- loadJob{w: wh, part: p}
		}
	}
	close(jobs)
	partsDone := make([]atomic.Int32, w.Warehouses+1)
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	fail := func(err error) {
		mu.Lock()
		if firstErr == nil {
			firstErr = err
		}
		mu.Unlock()
		cancel()
	}
	engine := t.Dialect().Engine
	for i := 0; i < threads; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, err := t.Connect(ctx)
			if err != nil {
				fail(err)
				return
			}
			defer conn.Close()
			bi, ok := conn.(target.BulkInserter)
			if !ok {
				fail(fmt.Errorf("%s connections have no bulk insert path", engine))
				return
			}
			if rl, ok := conn.(rowsLoader); ok {
				bi = loadFunc(rl.LoadRows)
			}
			for j := range jobs {
				if ctx.Err() != nil {
					return
				}
				if err := runLoadJob(ctx, engine, conn, bi, j, consts, now, stats); err != nil {
					fail(err)
					return
				}
				if j.w > 0 && int(partsDone[j.w].Add(1)) == len(warehouseParts) {
					whDone.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	return firstErr
}

// afterTable, when set (by tests), is called after each table a warehouse
// job loads.
var afterTable func(table string)

// runLoadJob loads ITEM or one part of a warehouse. On SQLite a job is one
// transaction; elsewhere each table's bulk insert commits on its own.
func runLoadJob(ctx context.Context, engine string, conn target.Conn, bi target.BulkInserter, j loadJob, consts Constants, now time.Time, stats *loadStats) (err error) {
	if engine == "sqlite" {
		if err := conn.Begin(ctx); err != nil {
			return err
		}
		defer func() {
			if err != nil {
				_ = conn.Rollback(context.WithoutCancel(ctx))
				return
			}
			err = conn.Commit(ctx)
		}()
	}
	if j.w == 0 {
		if _, err := bi.BulkInsert(ctx, TItem, Columns(TItem), itemSource(loadSeed, stats)); err != nil {
			return fmt.Errorf("load %s: %w", TItem, err)
		}
		return nil
	}
	g := newWHGen(loadSeed+uint64(j.part), j.w, consts, now, stats)
	for _, table := range warehouseParts[j.part] {
		if _, err := bi.BulkInsert(ctx, table, Columns(table), g.source(table)); err != nil {
			return fmt.Errorf("load %s of warehouse %d: %w", table, j.w, err)
		}
		if afterTable != nil {
			afterTable(table)
		}
	}
	return nil
}

// finishOrder is the order in which finish takes the tables: largest first,
// so that the threads end together.
var finishOrder = []string{TOrderLine, TStock, TCustomer, TItem, THistory, TOrders, TNewOrder, TDistrict, TWarehouse}

// finishWhat names what finish does on engine, for the summary line.
func finishWhat(engine string) string {
	switch {
	case keysAfterLoad(engine):
		return "keys, indexes and statistics"
	case engine == "sqlite":
		return "indexes"
	}
	return "indexes and statistics"
}

// finish completes each table after the data: its primary key where the
// engine adds keys after the load (keysAfterLoad), its secondary indexes
// (Indexes), then its planner statistics (PostgreSQL ANALYZE, MySQL
// ANALYZE TABLE; SQLite plans these key lookups well without them). The
// tables are done one per connection at a time over threads connections,
// largest first, so that one table's key build overlaps another's
// statistics. The tables are the ones this load just created in ceiling's
// namespace.
func finish(ctx context.Context, t target.Target, threads int) error {
	d := t.Dialect()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	tables := make(chan string, len(finishOrder))
	for _, name := range finishOrder {
		tables <- name
	}
	close(tables)
	errs := make(chan error, threads)
	for i := 0; i < threads; i++ {
		go func() {
			errs <- func() error {
				conn, err := t.Connect(ctx)
				if err != nil {
					return err
				}
				defer conn.Close()
				for name := range tables {
					if err := finishTable(ctx, t, conn, d, name); err != nil {
						cancel()
						return err
					}
				}
				return nil
			}()
		}()
	}
	var first error
	for i := 0; i < threads; i++ {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

func finishTable(ctx context.Context, t target.Target, conn target.Conn, d target.Dialect, name string) error {
	if pk := PrimaryKey(name); pk != "" && keysAfterLoad(d.Engine) {
		if _, err := conn.Exec(ctx, "ALTER TABLE "+d.Table(name)+" ADD PRIMARY KEY ("+pk+")"); err != nil {
			return fmt.Errorf("add the primary key of %s: %w", name, err)
		}
	}
	for _, ix := range Indexes {
		if ix.Table != name {
			continue
		}
		var err error
		if d.Engine == "sqlite" {
			// SQLite index names are global to the file: its Schema
			// namespaces them.
			err = t.Schema().CreateIndex(ctx, ix.Table, ix.Name, ix.Cols)
		} else {
			// The index lives in the table's own namespace (its schema on
			// PostgreSQL, the table itself on MySQL).
			_, err = conn.Exec(ctx, "CREATE INDEX "+ix.Name+" ON "+d.Table(name)+" ("+ix.Cols+")")
		}
		if err != nil {
			return fmt.Errorf("create index %s: %w", ix.Name, err)
		}
	}
	if d.Engine == "sqlite" {
		return nil
	}
	return analyzeTable(ctx, conn, d, name)
}

func analyzeTable(ctx context.Context, conn target.Conn, d target.Dialect, name string) error {
	if d.Engine != "mysql" {
		if _, err := conn.Exec(ctx, "ANALYZE "+d.Table(name)); err != nil {
			return fmt.Errorf("analyze %s: %w", name, err)
		}
		return nil
	}
	// ANALYZE TABLE returns a result set.
	rows, err := conn.Query(ctx, "ANALYZE TABLE "+d.Table(name))
	if err != nil {
		return fmt.Errorf("analyze %s: %w", name, err)
	}
	for rows.Next() {
	}
	err = rows.Err()
	rows.Close()
	if err != nil {
		return fmt.Errorf("analyze %s: %w", name, err)
	}
	return nil
}
