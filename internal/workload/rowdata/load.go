package rowdata

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"time"

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
