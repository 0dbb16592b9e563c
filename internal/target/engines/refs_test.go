package engines

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ceiling-db/ceiling/internal/workload/rowdata"
)

// TestInsertByReference inserts rows through rowdata.Writer, whose
// arguments point into one row that is refilled for every insert
// (rowdata.Row.Refs), and reads them back on each engine: every row must
// hold its own values, not the last row's, and each type must arrive as
// the value it points to.
func TestInsertByReference(t *testing.T) {
	for engine, dsn := range bulkTargets(t) {
		t.Run(engine, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			const table = "refs_test"
			tg, c := openWithTable(ctx, t, dsn, table, rowdata.TableBody(engine))

			const n = 5
			var w rowdata.Writer
			live := rowdata.NewLiveSet(0)
			ins := rowdata.InsertSQL(tg.Dialect(), table)
			rng := rand.New(rand.NewPCG(7, 7))
			for i := 0; i < n; i++ {
				if _, _, err := w.Insert(ctx, c, rng, live, ins); err != nil {
					t.Fatalf("insert %d: %v", i+1, err)
				}
			}
			// The same seed regenerates the rows the writer inserted.
			want := make([]rowdata.Row, n)
			rng = rand.New(rand.NewPCG(7, 7))
			for i := range want {
				rowdata.Fill(&want[i], rng, int64(i+1))
			}
			rows, err := c.Query(ctx, "SELECT row_id, bit_col, smallint_col, int_col, bigint_col, float_col, money_col, vc_short, vc_mid, vc_long FROM "+
				tg.Dialect().Table(table)+" ORDER BY row_id")
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			i := 0
			for rows.Next() {
				var got rowdata.Row
				var bit int64
				var boolBit bool
				bitDest := any(&bit)
				if engine == "postgres" {
					bitDest = &boolBit
				}
				if err := rows.Scan(&got.ID, bitDest, &got.Smallint, &got.Int, &got.Bigint, &got.Float, &got.Money, &got.Short, &got.Mid, &got.Long); err != nil {
					t.Fatalf("scan row %d: %v", i+1, err)
				}
				got.Bit = boolBit || bit != 0
				if i >= n {
					t.Fatalf("more than %d rows", n)
				}
				e := want[i]
				if got.ID != e.ID || got.Bit != e.Bit || got.Smallint != e.Smallint || got.Int != e.Int || got.Bigint != e.Bigint ||
					got.Short != e.Short || got.Mid != e.Mid || got.Long != e.Long ||
					math.Abs(got.Float-e.Float) > 1e-6*math.Abs(e.Float)+1e-9 || math.Abs(got.Money-e.Money) > 0.005 {
					t.Fatalf("row %d: got %+v\nwant %+v", i+1, got, e)
				}
				i++
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			if i != n {
				t.Fatalf("read %d rows, want %d", i, n)
			}
		})
	}
}
