package directsel

import (
	"context"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/ceiling-db/ceiling/internal/target"
	"github.com/ceiling-db/ceiling/internal/target/engines"
	"github.com/ceiling-db/ceiling/internal/testenv"
	"github.com/ceiling-db/ceiling/internal/workload/rowdata"
)

// scanOnly hides a target's RawRows, so RowReader decodes every value.
type scanOnly struct{ target.Conn }

func (c scanOnly) Query(ctx context.Context, sql string, args ...any) (target.Rows, error) {
	r, err := c.Conn.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	return struct{ target.Rows }{r}, nil
}

// TestRowReaderRaw: on the server engines, RowReader reads the rows
// undecoded (target.RawRows) and counts the same rows and bytes as decoding
// every value does: over the whole table (MySQL's text protocol, no
// arguments) and over a range (its binary protocol, a prepared statement).
func TestRowReaderRaw(t *testing.T) {
	testenv.EachEngine(t, "sqlite:"+filepath.Join(t.TempDir(), "r.db"), func(t *testing.T, dsn string) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		tg, err := engines.Open(ctx, target.Options{DSN: dsn, Durability: target.DurabilityServer, MaxConns: 1})
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = tg.Close(context.Background()) }()
		const rows = 300
		w := &DirectSel{Base: rowdata.Base{Rows: rows, NTables: 1, Seed: 3, MinRows: 1}}
		if err := w.Prepare(ctx, tg, io.Discard); err != nil {
			t.Fatal(err)
		}
		defer func() {
			// Leave the server as found: the table, and ceiling's
			// namespace when nothing else of ceiling's is in it.
			bg := context.Background()
			if err := tg.Schema().DropTable(bg, rowdata.Table); err != nil {
				t.Errorf("drop %s: %v", rowdata.Table, err)
			}
			if left, err := tg.Schema().Tables(bg); err == nil && len(left) == 0 {
				_ = tg.Schema().DropAll(bg)
			}
		}()
		conn, err := tg.Connect(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = conn.Close() }()
		d := tg.Dialect()
		all := SelectSQL(d, rowdata.Table, "row_id > 0")
		rng := SelectSQL(d, rowdata.Table, "row_id BETWEEN "+d.Placeholder(1)+" AND "+d.Placeholder(2))
		probe, err := conn.Query(ctx, all)
		if err != nil {
			t.Fatal(err)
		}
		_, raw := probe.(target.RawRows)
		_ = probe.Close()
		if raw != (tg.Dialect().Engine != "sqlite") {
			t.Fatalf("rows implement RawRows: %v", raw)
		}
		for _, q := range []struct {
			sql  string
			args []any
			want int64
		}{{all, nil, rows}, {rng, []any{int64(11), int64(60)}, 50}} {
			var fast, slow RowReader
			n, b, err := fast.Query(ctx, conn, q.sql, q.args...)
			if err != nil {
				t.Fatal(err)
			}
			sn, sb, err := slow.Query(ctx, scanOnly{conn}, q.sql, q.args...)
			if err != nil {
				t.Fatal(err)
			}
			if n != q.want || sn != n || sb != b || b < n*360 || b > n*440 {
				t.Errorf("%s %v: raw %d rows %d bytes, decoded %d rows %d bytes; want %d rows of 400 ± 40 bytes alike", q.sql, q.args, n, b, sn, sb, q.want)
			}
		}
	})
}

// TestRawBytes: a row read back undecoded counts as Row.Bytes counts it
// (the varchars by their length, NULL as nothing).
func TestRawBytes(t *testing.T) {
	r := rowdata.Row{Short: "abc", Mid: "hello world", Long: ""}
	lens := []int{8, 1, 1, 2, 4, 8, 8, 8, 8, 3, 11, 0}
	if got, want := rowdata.RawBytes(lens), r.Bytes(); got != want {
		t.Errorf("RawBytes = %d, want %d", got, want)
	}
	lens[11] = -1 // NULL
	if got, want := rowdata.RawBytes(lens), r.Bytes(); got != want {
		t.Errorf("with a NULL: RawBytes = %d, want %d", got, want)
	}
}
