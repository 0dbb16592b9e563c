package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/ceiling-db/ceiling/internal/target"
	"github.com/ceiling-db/ceiling/internal/target/blockio"
)

var _ target.BulkInserter = (*conn)(nil)

// BulkInsert implements target.BulkInserter with COPY FROM STDIN (binary
// format) into the ceiling schema. COPY is one statement: outside an explicit
// transaction the batch commits as one unit. A raw worker connection waits
// through ordinary system calls meanwhile (blockio.OrdinaryIO).
func (c *conn) BulkInsert(ctx context.Context, table string, cols []string, rows target.RowSource) (int64, error) {
	defer blockio.OrdinaryIO(netConn(c.c.PgConn().Conn()))()
	n, err := c.c.CopyFrom(ctx, pgx.Identifier{Schema, table}, cols, rows)
	if err != nil {
		return n, fmt.Errorf("postgres: copy into %s: %w", table, err)
	}
	return n, nil
}
