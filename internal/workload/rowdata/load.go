package rowdata

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/ceiling-db/ceiling/internal/metrics"
	"github.com/ceiling-db/ceiling/internal/target"
)

// InsertSQL returns the single-row insert statement for table (namespaced).
func InsertSQL(d target.Dialect, table string) string {
	return multiInsertSQL(d, table, 1)
}

func multiInsertSQL(d target.Dialect, table string, rows int) string {
	var b strings.Builder
	b.WriteString("INSERT INTO ")
	b.WriteString(d.Table(table))
	b.WriteString(" (")
	b.WriteString(strings.Join(Columns, ", "))
	b.WriteString(") VALUES ")
	n := 1
	for r := 0; r < rows; r++ {
		if r > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('(')
		for c := 0; c < NumColumns; c++ {
			if c > 0 {
				b.WriteString(", ")
			}
			b.WriteString(d.Placeholder(n))
			n++
		}
		b.WriteByte(')')
	}
	return b.String()
}

// loadBatch is the number of rows per multi-row INSERT while pre-populating.
const loadBatch = 100

// CreateAndLoad (re)creates the row table and loads rows 1..n into it with
// multi-row inserts, committing every few thousand rows, and records each
// row in live. Progress lines go to progress when the load takes a while.
func CreateAndLoad(ctx context.Context, t target.Target, table string, n int64, live *LiveSet, progress io.Writer) error {
	d := t.Dialect()
	if err := t.Schema().CreateTable(ctx, table, TableBody(d.Engine)); err != nil {
		return fmt.Errorf("create table %s: %w", table, err)
	}
	if n <= 0 {
		return nil
	}
	conn, err := t.Connect(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()

	rng := dataRand(n)
	if l, ok := conn.(rowsLoader); ok {
		return loadChunks(ctx, l, table, n, rng, live, progress)
	}
	full := multiInsertSQL(d, table, loadBatch)
	args := make([]any, 0, loadBatch*NumColumns)
	var row Row
	start, lastReport := time.Now(), time.Now()
	const perTxn = 50 * loadBatch
	inTxn := false
	for id := int64(1); id <= n; {
		if !inTxn {
			if err := conn.Begin(ctx); err != nil {
				return fmt.Errorf("load %s: begin: %w", table, err)
			}
			inTxn = true
		}
		k := int64(loadBatch)
		if rem := n - id + 1; rem < k {
			k = rem
		}
		sql := full
		if k != loadBatch {
			sql = multiInsertSQL(d, table, int(k))
		}
		args = args[:0]
		for i := int64(0); i < k; i++ {
			Fill(&row, rng, id+i)
			args = row.Args(args)
			live.Add(id+i, row.Bytes())
		}
		if _, err := conn.Exec(ctx, sql, args...); err != nil {
			_ = conn.Rollback(context.WithoutCancel(ctx))
			return fmt.Errorf("load %s at row %d: %w", table, id, err)
		}
		id += k
		if (id-1)%perTxn == 0 || id > n {
			if err := conn.Commit(ctx); err != nil {
				return fmt.Errorf("load %s: commit: %w", table, err)
			}
			inTxn = false
		}
		if progress != nil && time.Since(lastReport) >= 2*time.Second {
			lastReport = time.Now()
			done := id - 1
			rate := float64(done) / time.Since(start).Seconds()
			fmt.Fprintf(progress, "  loading %s: %d/%d rows (%.0f%%), %.0f rows/s\n", table, done, n, 100*float64(done)/float64(n), rate)
		}
	}
	return nil
}

// rowsLoader is a whole-table load path: PostgreSQL's COPY, MySQL's LOAD
// DATA LOCAL INFILE (with multi-row INSERTs where the server refuses it),
// as the TPC-C loader uses. Where a Conn has none (SQLite), CreateAndLoad
// sends multi-row INSERTs itself.
type rowsLoader interface {
	LoadRows(ctx context.Context, table string, cols []string, rows target.RowSource) (int64, error)
}

// loadChunk is how many rows one LoadRows call loads (one transaction, a
// progress line between calls).
const loadChunk = 100_000

// loadChunks fills table with rows 1..n through l, the same rows in the
// same order as the INSERT path (one generator, ids in sequence).
func loadChunks(ctx context.Context, l rowsLoader, table string, n int64, rng *rand.Rand, live *LiveSet, progress io.Writer) error {
	src := &genRows{rng: rng, live: live}
	start, lastReport := time.Now(), time.Now()
	for first := int64(1); first <= n; first += loadChunk {
		src.next, src.last = first, min(first+loadChunk-1, n)
		got, err := l.LoadRows(ctx, table, Columns, src)
		if err != nil {
			return fmt.Errorf("load %s at row %d: %w", table, src.next, err)
		}
		if want := src.last - first + 1; got != want {
			return fmt.Errorf("load %s: %d of %d rows from %d loaded", table, got, want, first)
		}
		if done := src.last; progress != nil && (time.Since(lastReport) >= 2*time.Second && done < n) {
			lastReport = time.Now()
			fmt.Fprintf(progress, "  loading %s: %d/%d rows (%.0f%%), %.0f rows/s\n", table, done, n, 100*float64(done)/float64(n), float64(done)/time.Since(start).Seconds())
		}
	}
	return nil
}

// genRows is a target.RowSource of the rows with ids next..last, filled
// from rng and added to live as they are produced. It reuses one row and
// one values slice.
type genRows struct {
	rng        *rand.Rand
	live       *LiveSet
	row        Row
	vals       []any
	next, last int64
}

func (g *genRows) Next() bool {
	if g.next > g.last {
		return false
	}
	Fill(&g.row, g.rng, g.next)
	g.live.Add(g.next, g.row.Bytes())
	g.vals = g.row.Args(g.vals[:0])
	g.next++
	return true
}

func (g *genRows) Values() ([]any, error) { return g.vals, nil }
func (g *genRows) Err() error             { return nil }

// Table is the name of the shared row table (namespaced by the target)
// when the workload runs on one table.
const Table = "rows"

// TableName is the name of table i (0-based) of n identical row tables:
// Table itself when n is 1, else rows_1 … rows_n.
func TableName(i, n int) string {
	if n <= 1 {
		return Table
	}
	return Table + "_" + strconv.Itoa(i+1)
}

// MaxTables bounds --tables.
const MaxTables = 1000

// Base is what every row workload shares: the pre-populated row count, the
// number of tables, the seed, and one live-id set per table filled by
// Prepare. Workloads embed it, which gives them Flags, Validate, Tables and
// Prepare.
//
// With --tables N the rows are spread over N identical tables (the sources
// used 51), each with its own ids 1..rows/N and its own live set; each
// request picks its table uniformly at random (PickTable).
type Base struct {
	// Workload is the workload's name, for the commands messages suggest.
	// Set by the workload's constructor.
	Workload string
	Rows     int64
	NTables  int
	Seed     uint64
	// MinRows is the fewest rows per table the workload accepts (1 for
	// workloads that read or change existing rows). Set by the workload's
	// constructor.
	MinRows int64
	// ReadOnly marks a workload that never changes the rows (the
	// selects): it offers --reuse. Set by the workload's constructor.
	ReadOnly bool
	// Reuse (--reuse): Prepare takes the tables a `ceiling prepare` left,
	// checked, instead of loading a fresh copy.
	Reuse bool
	// ShardI and ShardN (run --shard I/N, Shard): this instance is shard
	// ShardI of ShardN; 0 and 0 when not sharded.
	ShardI, ShardN int

	// Live holds one live-id set per table, in table order.
	Live []*LiveSet
}

// Flags binds --rows, --tables and --seed.
func (b *Base) Flags(fs *pflag.FlagSet) {
	fs.Int64Var(&b.Rows, "rows", 10000, "rows to pre-populate before the test, in total over the --tables (small enough to stay in cache)")
	fs.IntVar(&b.NTables, "tables", 1, "spread the rows over this many identical tables; each request picks one at random (the sources used 51)")
	fs.Uint64Var(&b.Seed, "seed", 1, "random seed for data and choices")
	if b.ReadOnly {
		fs.BoolVar(&b.Reuse, "reuse", false, "use the tables a `ceiling prepare` of this workload left (same --rows and --tables; checked) instead of loading a fresh copy")
	}
}

// Shard implements workload.Sharder: the shard takes the tables a
// `ceiling prepare` left (checked as --reuse checks them) and keeps to the
// rows whose id ≡ i (mod n), inserting ids of that class only, so that
// the shards never delete, update or insert one another's rows.
func (b *Base) Shard(i, n int) error {
	b.ShardI, b.ShardN, b.Reuse = i, n, true
	return nil
}

// Reusable says whether the workload offers --reuse (it never changes
// the rows).
func (b *Base) Reusable() bool { return b.ReadOnly }

// ReadsOnly implements workload.Reader: the selects change no rows.
func (b *Base) ReadsOnly() bool { return b.ReadOnly }

// Reusing implements workload.Reader: Prepare takes the tables there are
// (--reuse, a shard).
func (b *Base) Reusing() bool { return b.Reuse }

// tables returns the table count, 1 when unset.
func (b *Base) tables() int {
	if b.NTables <= 0 {
		return 1
	}
	return b.NTables
}

// Validate checks --rows and --tables.
func (b *Base) Validate() error {
	var errs []error
	if b.NTables < 1 || b.NTables > MaxTables {
		errs = append(errs, fmt.Errorf("--tables must be between 1 and %d, got %d", MaxTables, b.NTables))
	}
	n := int64(b.tables())
	switch {
	case b.Rows < 0:
		errs = append(errs, fmt.Errorf("--rows must be zero or more, got %d", b.Rows))
	case b.MinRows > 0 && b.Rows < b.MinRows*n:
		errs = append(errs, fmt.Errorf("--rows must be at least %d (the workload needs %d existing row(s) in each of %d table(s)), got %d", b.MinRows*n, b.MinRows, n, b.Rows))
	}
	return errors.Join(errs...)
}

// CheckHotRows checks a --hot-rows count: zero (off) or up to the rows
// of the table that holds the fewest (the last, TableRows).
func (b *Base) CheckHotRows(hot int64) error {
	least := b.TableRows(b.tables() - 1)
	switch {
	case hot < 0:
		return fmt.Errorf("--hot-rows must be zero (off) or more, got %d", hot)
	case hot > least:
		return fmt.Errorf("--hot-rows %d is more than the %d rows each table holds (--rows %d over %d table(s)): at most %d, or more --rows", hot, least, b.Rows, b.tables(), least)
	}
	return nil
}

// RowsPerWorker is a ThreadsChecker's check for workloads whose requests
// hold an existing row each (why says so): every table needs at least one
// row per worker, as a request may pick any table.
func (b *Base) RowsPerWorker(threads int, why string) error {
	n := int64(b.tables())
	if need := int64(threads) * n; b.Rows < need {
		tables := "the table needs"
		if n > 1 {
			tables = fmt.Sprintf("each of the %d tables needs", n)
		}
		return fmt.Errorf("--rows %d is too few for %d workers: %s, so %s a row per worker: --rows %d or more, or fewer workers (-c)", b.Rows, threads, why, tables, need)
	}
	return nil
}

// Tables lists the row tables.
func (b *Base) Tables() []string {
	n := b.tables()
	names := make([]string, n)
	for i := range names {
		names[i] = TableName(i, n)
	}
	return names
}

// OwnsTable implements workload.TableOwner: the row table and its
// --tables copies (rows, rows_1, rows_2, …), whatever --tables is now, so
// that cleanup finds them all.
func (b *Base) OwnsTable(name string) bool {
	if name == Table {
		return true
	}
	n, ok := strings.CutPrefix(name, Table+"_")
	if !ok || n == "" {
		return false
	}
	for _, ch := range n {
		if ch < '0' || ch > '9' {
			return false
		}
	}
	return true
}

// TableRows is how many of the --rows table i holds: an even share, the
// first tables taking one more row when --rows does not divide evenly.
func (b *Base) TableRows(i int) int64 {
	n := int64(b.tables())
	r := b.Rows / n
	if int64(i) < b.Rows%n {
		r++
	}
	return r
}

// Prepare (re)creates the row tables and loads --rows rows into them, or,
// with --reuse, takes the ones there are (reuse).
func (b *Base) Prepare(ctx context.Context, t target.Target, progress io.Writer) error {
	if b.Reuse {
		return b.reuse(ctx, t, progress)
	}
	names := b.Tables()
	b.Live = make([]*LiveSet, len(names))
	start, lastReport := time.Now(), time.Now()
	var done int64
	for i, name := range names {
		n := b.TableRows(i)
		b.Live[i] = NewLiveSet(n)
		if err := CreateAndLoad(ctx, t, name, n, b.Live[i], progress); err != nil {
			return err
		}
		done += n
		// Many small tables load quickly one by one: report the whole.
		if progress != nil && len(names) > 1 && time.Since(lastReport) >= 2*time.Second {
			lastReport = time.Now()
			fmt.Fprintf(progress, "  loaded %d of %d tables, %d/%d rows, %.0f rows/s\n", i+1, len(names), done, b.Rows, float64(done)/time.Since(start).Seconds())
		}
	}
	return nil
}

// reuse takes the row tables as a `ceiling prepare` left them, for a
// workload that only reads them: each must be ceiling's, hold exactly its
// share of --rows with ids 1 to that share (a count and a max over the
// table: one scan). The live ids and their sizes are generated again as
// the load made them (the data depends on the table's row count only),
// without touching the database.
func (b *Base) reuse(ctx context.Context, t target.Target, progress io.Writer) error {
	have, err := t.Schema().Tables(ctx)
	if err != nil {
		return err
	}
	conn, err := t.Connect(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	names := b.Tables()
	b.Live = make([]*LiveSet, len(names))
	// A shard reuses without --reuse: say so, and not to leave it out.
	prepare := fmt.Sprintf("`ceiling prepare %s --rows %d --tables %d`", b.Workload, b.Rows, b.tables())
	what, again := "--reuse", "run "+prepare+" first, or leave out --reuse"
	if t.Info().ReadOnly != "" { // a standby: its primary's tables come by replication
		prepare = fmt.Sprintf("`ceiling prepare %s --rows %d --tables %d --db PRIMARY` on the primary (this server takes no writes)", b.Workload, b.Rows, b.tables())
		again = "run " + prepare + " first (if it ran, this replica has not applied all of it yet: wait for it to catch up), or give the --rows and --tables the primary's tables were prepared with"
	}
	if b.ShardN > 0 {
		what, again = "sharded run", "the shards start from the dataset as prepared: run "+prepare+" once before starting them"
	}
	for i, name := range names {
		n := b.TableRows(i)
		if !slices.Contains(have, name) {
			return fmt.Errorf("%s: no ceiling table %s: %s", what, t.Dialect().Table(name), again)
		}
		var count, maxID int64
		// On a hot standby the primary's replayed changes may cancel the
		// count (a recovery conflict): it is tried again, a few times.
		for try := 1; ; try++ {
			_, err := target.QueryRow(ctx, conn, "SELECT count(*), coalesce(max(row_id), 0) FROM "+t.Dialect().Table(name), []any{&count, &maxID})
			if err == nil {
				break
			}
			if try < 5 && t.Classify(err) == metrics.ErrRecoveryConflict && ctx.Err() == nil {
				continue
			}
			return fmt.Errorf("%s: count the rows of %s: %w", what, t.Dialect().Table(name), err)
		}
		if count != n || maxID != n {
			return fmt.Errorf("%s: %s holds %d rows with ids up to %d, not the %d (ids 1 to %d) of --rows %d --tables %d: %s",
				what, t.Dialect().Table(name), count, maxID, n, n, b.Rows, b.tables(), again)
		}
		live := NewLiveSet(n)
		if b.ShardN > 0 {
			live = NewShardLiveSet(n, b.ShardI, b.ShardN)
		}
		EachRow(n, func(r *Row) {
			if b.ShardN == 0 || r.ID%int64(b.ShardN) == int64(b.ShardI) {
				live.Add(r.ID, r.Bytes())
			}
		})
		b.Live[i] = live
	}
	if progress != nil {
		what := "table"
		if len(names) > 1 {
			what = fmt.Sprintf("%d tables", len(names))
		}
		fmt.Fprintf(progress, "  reusing the prepared %s: %d rows (checked: count and highest id)\n", what, b.Rows)
		if b.ShardN > 0 {
			fmt.Fprintf(progress, "  shard %d of %d: the rows whose id mod %d is %d, and new ids likewise\n", b.ShardI, b.ShardN, b.ShardN, b.ShardI)
		}
	}
	return nil
}

// EachRow calls fn with each row of a table of n rows as prepare loads it,
// ids 1..n in order (fn must not keep the row: it is refilled).
func EachRow(n int64, fn func(*Row)) {
	rng := dataRand(n)
	var r Row
	for id := int64(1); id <= n; id++ {
		Fill(&r, rng, id)
		fn(&r)
	}
}

// dataRand is the source of a table's data: it depends on the table's row
// count only, so a reuse can generate the same rows again.
func dataRand(n int64) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(n), 0x5eed))
}

// PickTable draws a table index uniformly.
func (b *Base) PickTable(rng *rand.Rand) int {
	if len(b.Live) <= 1 {
		return 0
	}
	return rng.IntN(len(b.Live))
}

// BaseParams returns the parameters every row workload records.
func (b *Base) BaseParams() map[string]any {
	return map[string]any{"rows": b.Rows, "tables": b.tables(), "seed": b.Seed, "row_bytes_mean": MeanRowBytes}
}

// ParamsWith returns BaseParams plus the workload's own parameters.
func (b *Base) ParamsWith(extra map[string]any) map[string]any {
	p := b.BaseParams()
	for k, v := range extra {
		p[k] = v
	}
	return p
}

// Ready fails when Prepare has not run, naming the workload.
func (b *Base) Ready(workload string) error {
	if len(b.Live) == 0 {
		return fmt.Errorf("%s: Prepare was not run", workload)
	}
	return nil
}

// WorkerRand returns worker id's random source, seeded from --seed.
func (b *Base) WorkerRand(id int) *rand.Rand {
	return rand.New(rand.NewPCG(b.Seed, uint64(id)+1))
}
