package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ceiling-db/ceiling/internal/target"
	"github.com/ceiling-db/ceiling/internal/target/blockio"
)

// LoadRows loads rows into table with COPY FROM STDIN in PostgreSQL's text
// format, encoding the values itself. It is the TPC-C loader's path: pgx's
// CopyFrom (BulkInsert) encodes every value through its type map in binary,
// and a float64 bound for a numeric column goes through a string and a
// big.Int; that took about three quarters of the client's CPU in a
// 2-warehouse load on the 2-core development VM, where the client shares
// the cores with the server. BulkInsert keeps the binary format for the
// bulk-load workload, whose figures measure it.
//
// Values may be nil (NULL), strings, []byte (bytea), signed and unsigned
// integers, float32/64, bool and time.Time (written with its offset, which
// a timestamp without time zone ignores: it keeps the wall clock, as pgx
// does). The count the server reports must match the rows sent.
func (c *conn) LoadRows(ctx context.Context, table string, cols []string, rows target.RowSource) (int64, error) {
	defer blockio.OrdinaryIO(netConn(c.c.PgConn().Conn()))()
	quoted := make([]string, len(cols))
	for i, col := range cols {
		quoted[i] = pgx.Identifier{col}.Sanitize()
	}
	sql := "COPY " + pgx.Identifier{Schema, table}.Sanitize() + " (" + strings.Join(quoted, ", ") + ") FROM STDIN"
	r := &copyText{rows: rows, ncols: len(cols)}
	tag, err := c.c.PgConn().CopyFrom(ctx, r, sql)
	if err != nil {
		if r.err != nil {
			// The server's error only echoes ours (COPY from stdin failed).
			return 0, fmt.Errorf("postgres: copy into %s: %w", table, r.err)
		}
		return 0, fmt.Errorf("postgres: copy into %s: %w", table, err)
	}
	if n := tag.RowsAffected(); n != r.sent {
		return n, fmt.Errorf("postgres: copy into %s: the server took %d of %d rows", table, n, r.sent)
	}
	return r.sent, nil
}

// copyText is an io.Reader over rows in COPY's text format: one line per
// row, fields separated by tabs, NULL as \N.
type copyText struct {
	rows  target.RowSource
	ncols int
	buf   []byte // encoded rows, read up to off
	off   int
	sent  int64
	done  bool
	err   error // the first error encoding or reading rows
}

// Read implements io.Reader; it encodes rows until p can be filled.
func (t *copyText) Read(p []byte) (int, error) {
	if t.err != nil {
		return 0, t.err
	}
	if t.off > 0 { // keep what is left of a row cut by the last read
		t.buf = append(t.buf[:0], t.buf[t.off:]...)
		t.off = 0
	}
	for len(t.buf) < len(p) && !t.done {
		if !t.rows.Next() {
			t.done = true
			if err := t.rows.Err(); err != nil {
				t.err = err
				return 0, err
			}
			break
		}
		if err := t.appendRow(); err != nil {
			t.err = fmt.Errorf("row %d: %w", t.sent+1, err)
			return 0, t.err
		}
		t.sent++
	}
	n := copy(p, t.buf)
	t.off = n
	if n == 0 && t.done {
		return 0, io.EOF
	}
	return n, nil
}

func (t *copyText) appendRow() error {
	vals, err := t.rows.Values()
	if err != nil {
		return err
	}
	if len(vals) != t.ncols {
		return fmt.Errorf("%d values for %d columns", len(vals), t.ncols)
	}
	for i, v := range vals {
		if i > 0 {
			t.buf = append(t.buf, '\t')
		}
		if t.buf, err = appendCopyText(t.buf, v); err != nil {
			return fmt.Errorf("column %d: %w", i+1, err)
		}
	}
	t.buf = append(t.buf, '\n')
	return nil
}

var errNUL = errors.New("a string holds a NUL byte, which PostgreSQL text cannot store")

// appendCopyText appends v as one field of COPY's text format.
func appendCopyText(b []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(b, '\\', 'N'), nil
	case string:
		return appendCopyEscaped(b, x)
	case []byte:
		// bytea's hex input, its backslash doubled for COPY.
		b = append(b, '\\', '\\', 'x')
		const hex = "0123456789abcdef"
		for _, c := range x {
			b = append(b, hex[c>>4], hex[c&15])
		}
		return b, nil
	case float32:
		return appendCopyFloat(b, float64(x), 32), nil
	case float64:
		return appendCopyFloat(b, x, 64), nil
	case bool:
		if x {
			return append(b, 't'), nil
		}
		return append(b, 'f'), nil
	case time.Time:
		return x.AppendFormat(b, "2006-01-02 15:04:05.999999-07:00"), nil
	}
	if b, ok := target.AppendInteger(b, v); ok {
		return b, nil
	}
	return b, fmt.Errorf("unsupported value type %T", v)
}

// appendCopyFloat writes f as float8 and numeric read it; NaN and the
// infinities in their SQL spelling.
func appendCopyFloat(b []byte, f float64, bits int) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, "NaN"...)
	case math.IsInf(f, 1):
		return append(b, "Infinity"...)
	case math.IsInf(f, -1):
		return append(b, "-Infinity"...)
	}
	return strconv.AppendFloat(b, f, 'g', -1, bits)
}

// appendCopyEscaped appends s with COPY's text escapes: backslash, tab,
// newline and carriage return; PostgreSQL text cannot hold a NUL byte.
func appendCopyEscaped(b []byte, s string) ([]byte, error) {
	b, nul := target.AppendTextEscaped(b, s)
	if nul {
		return b, errNUL
	}
	return b, nil
}
