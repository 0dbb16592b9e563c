package engines

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-db/ceiling/internal/target"
	"github.com/ceiling-db/ceiling/internal/testenv"
)

// bulkTargets returns a DSN per engine: SQLite always, the servers when
// their test DSN is set (in CI, a missing one fails).
func bulkTargets(t *testing.T) map[string]string {
	t.Helper()
	m := map[string]string{"sqlite": "sqlite:" + filepath.Join(t.TempDir(), "bulk.db")}
	for engine, env := range map[string]string{"postgres": testenv.PostgresEnv, "mysql": testenv.MySQLEnv} {
		if dsn := testenv.Optional(t, env); dsn != "" {
			m[engine] = dsn
		}
	}
	return m
}

// openWithTable opens dsn, creates table (in ceiling's namespace) with
// body and connects; the test's cleanup drops the table and closes both.
func openWithTable(ctx context.Context, t *testing.T, dsn, table, body string) (target.Target, target.Conn) {
	t.Helper()
	tg, err := Open(ctx, target.Options{DSN: dsn, MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close(context.Background()) })
	if err := tg.Schema().CreateTable(ctx, table, body); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// The table, and ceiling's namespace when nothing else of
		// ceiling's is in it: the test server is left as found.
		bg := context.Background()
		tg.Schema().DropTable(bg, table)
		if left, err := tg.Schema().Tables(bg); err == nil && len(left) == 0 {
			_ = tg.Schema().DropAll(bg)
		}
	})
	c, err := tg.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return tg, c
}

// genRows yields n rows (id, note, amount, at, nothing) without holding
// them all in memory.
type genRows struct {
	n, i int
	pad  string
	vals []any
	at   time.Time
}

func (g *genRows) Next() bool { g.i++; return g.i <= g.n }
func (g *genRows) Values() ([]any, error) {
	note := fmt.Sprintf("row %d: it's a \\ backslash %s", g.i, g.pad)
	g.vals = append(g.vals[:0], int64(g.i), note, float64(g.i)/4, g.at, nil)
	return g.vals, nil
}
func (g *genRows) Err() error { return nil }

// TestBulkInsert loads rows through each engine's bulk path (COPY,
// multi-row INSERT split under max_allowed_packet, prepared inserts in one
// transaction) and reads them back: count, sums, quoting, NULLs, and that a
// bulk insert inside the caller's rolled-back transaction leaves nothing.
func TestBulkInsert(t *testing.T) {
	for engine, dsn := range bulkTargets(t) {
		t.Run(engine, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			body := map[string]string{
				"postgres": "id bigint PRIMARY KEY, note text NOT NULL, amount numeric(12,2), at timestamp, spare integer",
				"mysql":    "id BIGINT PRIMARY KEY, note TEXT NOT NULL, amount DECIMAL(12,2), at DATETIME(6), spare INT",
				"sqlite":   "id INTEGER PRIMARY KEY, note TEXT NOT NULL, amount REAL, at TEXT, spare INTEGER",
			}[engine]
			const table = "bulk_test"
			tg, c := openWithTable(ctx, t, dsn, table, body)
			bi, ok := c.(target.BulkInserter)
			if !ok {
				t.Fatalf("%s conn does not implement target.BulkInserter", engine)
			}
			cols := []string{"id", "note", "amount", "at", "spare"}
			// 3000 rows of ~4 KB: 12 MB, more than one MySQL statement.
			const n = 3000
			src := &genRows{n: n, pad: strings.Repeat("x", 4000), at: time.Date(2026, 11, 22, 10, 30, 0, 0, time.UTC)}
			got, err := bi.BulkInsert(ctx, table, cols, src)
			if err != nil {
				t.Fatal(err)
			}
			if got != n {
				t.Fatalf("BulkInsert returned %d, want %d", got, n)
			}
			q := fmt.Sprintf("SELECT COUNT(*), SUM(id), SUM(amount), COUNT(spare), MAX(LENGTH(note)) FROM %s", tg.Dialect().Table(table))
			r, err := c.Query(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			var count, sumID, nonNull, maxLen int64
			var sumAmount float64
			if !r.Next() {
				t.Fatal("no row")
			}
			if err := r.Scan(&count, &sumID, &sumAmount, &nonNull, &maxLen); err != nil {
				t.Fatal(err)
			}
			r.Close()
			if count != n || sumID != n*(n+1)/2 || nonNull != 0 {
				t.Errorf("count %d sum(id) %d non-null %d, want %d %d 0", count, sumID, nonNull, n, n*(n+1)/2)
			}
			if want := float64(n*(n+1)/2) / 4; sumAmount < want-1 || sumAmount > want+1 {
				t.Errorf("sum(amount) %.2f, want %.2f", sumAmount, want)
			}
			var note string
			r, err = c.Query(ctx, "SELECT note FROM "+tg.Dialect().Table(table)+" WHERE id = "+tg.Dialect().Placeholder(1), int64(7))
			if err != nil {
				t.Fatal(err)
			}
			if !r.Next() {
				t.Fatal("row 7 missing")
			}
			if err := r.Scan(&note); err != nil {
				t.Fatal(err)
			}
			r.Close()
			if want := fmt.Sprintf("row 7: it's a \\ backslash %s", src.pad); note != want {
				t.Errorf("note of row 7 did not round-trip: got %.40q…", note)
			}

			// Inside the caller's transaction: a rollback undoes the batch.
			if err := c.Begin(ctx); err != nil {
				t.Fatal(err)
			}
			more := &target.SliceRows{Rows: [][]any{{int64(n + 1), "a", 1.0, src.at, nil}, {int64(n + 2), "b", 2.0, src.at, nil}}}
			if got, err := bi.BulkInsert(ctx, table, cols, more); err != nil || got != 2 {
				t.Fatalf("BulkInsert in a transaction: %d, %v", got, err)
			}
			if err := c.Rollback(ctx); err != nil {
				t.Fatal(err)
			}
			r, err = c.Query(ctx, "SELECT COUNT(*) FROM "+tg.Dialect().Table(table))
			if err != nil {
				t.Fatal(err)
			}
			r.Next()
			_ = r.Scan(&count)
			r.Close()
			if count != n {
				t.Errorf("after a rolled-back bulk insert: %d rows, want %d", count, n)
			}
		})
	}
}
