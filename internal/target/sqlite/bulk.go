package sqlite

import (
	"context"
	"fmt"
	"strings"

	"github.com/ceiling-db/ceiling/internal/target"
)

var _ target.BulkInserter = (*conn)(nil)

// BulkInsert implements target.BulkInserter: one prepared INSERT executed
// per row, all inside one transaction (the caller's when one is open, else
// its own), so the batch costs one commit.
func (c *conn) BulkInsert(ctx context.Context, table string, cols []string, rows target.RowSource) (n int64, err error) {
	var sb strings.Builder
	sb.WriteString(`INSERT INTO "ceiling_` + table + `" ("` + strings.Join(cols, `", "`) + `") VALUES (`)
	for i := range cols {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteByte('?')
	}
	sb.WriteByte(')')
	c.setCtx(ctx)
	s, err := c.prepare(sb.String())
	if err != nil {
		return 0, fmt.Errorf("sqlite: bulk insert into %s: %w", table, err)
	}
	own := c.c.GetAutocommit()
	if own {
		if err := c.Begin(ctx); err != nil {
			return 0, fmt.Errorf("sqlite: bulk insert into %s: %w", table, err)
		}
		defer func() {
			if err != nil {
				_ = c.Rollback(context.WithoutCancel(ctx))
			}
		}()
	}
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			return n, err
		}
		if len(vals) != len(cols) {
			return n, fmt.Errorf("sqlite: bulk insert into %s: row has %d values for %d columns", table, len(vals), len(cols))
		}
		if err := bind(s, vals); err != nil {
			return n, fmt.Errorf("sqlite: bulk insert into %s: %w", table, err)
		}
		if err := s.Exec(); err != nil {
			return n, fmt.Errorf("sqlite: bulk insert into %s: %w", table, err)
		}
		n++
	}
	if err := rows.Err(); err != nil {
		return n, err
	}
	if own {
		if err := c.Commit(ctx); err != nil {
			return n, fmt.Errorf("sqlite: bulk insert into %s: %w", table, err)
		}
	}
	return n, nil
}
