package mysql

import (
	"context"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ceiling-db/ceiling/internal/target"
	"github.com/ceiling-db/ceiling/internal/target/blockio"
)

var _ target.BulkInserter = (*conn)(nil)

// maxBulkStmt caps one multi-row INSERT statement, below the server's
// max_allowed_packet: larger statements gain little and cost memory.
const maxBulkStmt = 8 << 20

// bulkState is what BulkInsert learns about the session once.
type bulkState struct {
	limit       int  // statement size limit in bytes
	noBackslash bool // sql_mode has NO_BACKSLASH_ESCAPES
	buf         []byte
}

func (c *conn) bulkInit(ctx context.Context) (*bulkState, error) {
	if c.bulk != nil {
		return c.bulk, nil
	}
	var (
		maxPacket int64
		mode      string
	)
	if err := c.c.QueryRowContext(ctx, "SELECT @@max_allowed_packet, @@sql_mode").Scan(&maxPacket, &mode); err != nil {
		return nil, fmt.Errorf("mysql: read max_allowed_packet: %w", err)
	}
	limit := int(maxPacket) - 64<<10 // room for the last row and protocol headers
	if limit > maxBulkStmt {
		limit = maxBulkStmt
	}
	if limit < 16<<10 {
		limit = 16 << 10
	}
	c.bulk = &bulkState{limit: limit, noBackslash: strings.Contains(mode, "NO_BACKSLASH_ESCAPES")}
	return c.bulk, nil
}

// BulkInsert implements target.BulkInserter with multi-row INSERT statements
// whose values are sent as literals, each statement kept under the
// session's max_allowed_packet. Outside an explicit transaction the whole
// batch runs in one transaction, so it commits (and flushes the log) once.
func (c *conn) BulkInsert(ctx context.Context, table string, cols []string, rows target.RowSource) (n int64, err error) {
	// A raw session blocked in a long transfer would stall the garbage
	// collector (blockio.OrdinaryIO).
	defer blockio.OrdinaryIO(c.nc)()
	st, err := c.bulkInit(ctx)
	if err != nil {
		return 0, err
	}
	head := "INSERT INTO `" + Prefix + table + "` (`" + strings.Join(cols, "`, `") + "`) VALUES "
	own := !c.inTx
	if own {
		if err := c.Begin(ctx); err != nil {
			return 0, err
		}
		defer func() {
			if err != nil {
				_ = c.Rollback(context.WithoutCancel(ctx))
			}
		}()
	}
	b := append(st.buf[:0], head...)
	pending := 0
	flush := func() error {
		if pending == 0 {
			return nil
		}
		if _, err := c.c.ExecContext(ctx, string(b)); err != nil {
			return fmt.Errorf("mysql: bulk insert into %s: %w", table, err)
		}
		n += int64(pending)
		pending = 0
		b = append(b[:0], head...)
		return nil
	}
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			return n, err
		}
		if len(vals) != len(cols) {
			return n, fmt.Errorf("mysql: bulk insert into %s: row has %d values for %d columns", table, len(vals), len(cols))
		}
		mark := len(b)
		if pending > 0 {
			b = append(b, ',')
		}
		b = append(b, '(')
		for i, v := range vals {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = appendLiteral(b, v, st.noBackslash); err != nil {
				return n, fmt.Errorf("mysql: bulk insert into %s, column %s: %w", table, cols[i], err)
			}
		}
		b = append(b, ')')
		if len(b) > st.limit && pending > 0 {
			// This row overflows: send the statement without it, then
			// start the next one with it.
			row := append([]byte(nil), b[mark:]...)
			b = b[:mark]
			if err := flush(); err != nil {
				return n, err
			}
			if row[0] == ',' {
				row = row[1:]
			}
			b = append(b, row...)
		}
		pending++
	}
	if err := rows.Err(); err != nil {
		return n, err
	}
	if err := flush(); err != nil {
		return n, err
	}
	st.buf = b[:0]
	if own {
		if err := c.Commit(ctx); err != nil {
			return n, err
		}
	}
	return n, nil
}

// appendLiteral appends v as an SQL literal.
func appendLiteral(b []byte, v any, noBackslash bool) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(b, "NULL"...), nil
	case float32:
		return strconv.AppendFloat(b, float64(x), 'f', -1, 32), nil
	case float64:
		return strconv.AppendFloat(b, x, 'f', -1, 64), nil
	case bool:
		if x {
			return append(b, '1'), nil
		}
		return append(b, '0'), nil
	case string:
		return appendString(b, x, noBackslash), nil
	case []byte:
		b = append(b, "X'"...)
		b = hex.AppendEncode(b, x)
		return append(b, '\''), nil
	case time.Time:
		b = append(b, '\'')
		b = x.UTC().AppendFormat(b, "2006-01-02 15:04:05.999999")
		return append(b, '\''), nil
	}
	if b, ok := target.AppendInteger(b, v); ok {
		return b, nil
	}
	return b, fmt.Errorf("unsupported value type %T", v)
}

// appendString appends s as a quoted string literal: quotes are doubled, and
// unless NO_BACKSLASH_ESCAPES is on, backslashes and NUL bytes are escaped.
func appendString(b []byte, s string, noBackslash bool) []byte {
	b = append(b, '\'')
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch == '\'':
			b = append(b, '\'', '\'')
		case ch == '\\' && !noBackslash:
			b = append(b, '\\', '\\')
		case ch == 0 && !noBackslash:
			b = append(b, '\\', '0')
		default:
			b = append(b, ch)
		}
	}
	return append(b, '\'')
}
