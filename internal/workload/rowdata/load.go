package rowdata

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/spf13/pflag"

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

	rng := rand.New(rand.NewPCG(uint64(n), 0x5eed))
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

// Table is the name of the shared row table (namespaced by the target).
const Table = "rows"

// Base is what every row workload shares: the pre-populated row count, the
// seed, and the live-id set filled by Prepare. Workloads embed it, which
// gives them Flags, Validate, Tables and Prepare.
type Base struct {
	Rows int64
	Seed uint64
	// MinRows is the fewest --rows the workload accepts (1 for workloads
	// that read or change existing rows). Set by the workload's constructor.
	MinRows int64

	Live *LiveSet
}

// Flags binds --rows and --seed.
func (b *Base) Flags(fs *pflag.FlagSet) {
	fs.Int64Var(&b.Rows, "rows", 10000, "rows to pre-populate before the test (small enough to stay in cache)")
	fs.Uint64Var(&b.Seed, "seed", 1, "random seed for data and choices")
}

// Validate checks --rows.
func (b *Base) Validate() error {
	if b.Rows < b.MinRows {
		if b.MinRows > 0 {
			return fmt.Errorf("--rows must be at least %d (the workload needs existing rows), got %d", b.MinRows, b.Rows)
		}
		return fmt.Errorf("--rows must be zero or more, got %d", b.Rows)
	}
	return nil
}

// Tables lists the row table.
func (b *Base) Tables() []string { return []string{Table} }

// Prepare (re)creates the row table and loads --rows rows into it.
func (b *Base) Prepare(ctx context.Context, t target.Target, progress io.Writer) error {
	b.Live = NewLiveSet(b.Rows)
	return CreateAndLoad(ctx, t, Table, b.Rows, b.Live, progress)
}

// BaseParams returns the parameters every row workload records.
func (b *Base) BaseParams() map[string]any {
	return map[string]any{"rows": b.Rows, "seed": b.Seed, "row_bytes_mean": MeanRowBytes}
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
	if b.Live == nil {
		return fmt.Errorf("%s: Prepare was not run", workload)
	}
	return nil
}

// WorkerRand returns worker id's random source, seeded from --seed.
func (b *Base) WorkerRand(id int) *rand.Rand {
	return rand.New(rand.NewPCG(b.Seed, uint64(id)+1))
}
