package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/ceiling-db/ceiling/internal/target"
)

// conn is one worker's session. It is used by one goroutine at a time.
type conn struct {
	c *pgx.Conn
}

var _ target.Conn = (*conn)(nil)

// Exec implements target.Conn.
func (c *conn) Exec(ctx context.Context, sql string, args ...any) (int64, error) {
	tag, err := c.c.Exec(ctx, sql, args...)
	if err != nil {
		return 0, fmt.Errorf("postgres: exec: %w", err)
	}
	return tag.RowsAffected(), nil
}

// Query implements target.Conn.
func (c *conn) Query(ctx context.Context, sql string, args ...any) (target.Rows, error) {
	r, err := c.c.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: query: %w", err)
	}
	return rows{r: r}, nil
}

// Begin implements target.Conn.
func (c *conn) Begin(ctx context.Context) error {
	if _, err := c.c.Exec(ctx, "BEGIN"); err != nil {
		return fmt.Errorf("postgres: begin: %w", err)
	}
	return nil
}

// Commit implements target.Conn. Like pgx.Tx, it reports a COMMIT that
// the server turned into a ROLLBACK (the transaction had failed) as an
// error: pgx.ErrTxCommitRollback.
func (c *conn) Commit(ctx context.Context) error {
	tag, err := c.c.Exec(ctx, "COMMIT")
	if err != nil {
		return fmt.Errorf("postgres: commit: %w", err)
	}
	if tag.String() == "ROLLBACK" {
		return fmt.Errorf("postgres: commit: %w", pgx.ErrTxCommitRollback)
	}
	return nil
}

// Rollback implements target.Conn.
func (c *conn) Rollback(ctx context.Context) error {
	if _, err := c.c.Exec(ctx, "ROLLBACK"); err != nil {
		return fmt.Errorf("postgres: rollback: %w", err)
	}
	return nil
}

// Close implements target.Conn. It is safe to call more than once.
func (c *conn) Close() error {
	// Conn.Close has no context; bound the goodbye message instead.
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	if err := c.c.Close(ctx); err != nil {
		return fmt.Errorf("postgres: close: %w", err)
	}
	return nil
}

// rows adapts pgx.Rows to target.Rows.
type rows struct {
	r pgx.Rows
}

func (r rows) Next() bool { return r.r.Next() }

func (r rows) Scan(dest ...any) error {
	if err := r.r.Scan(dest...); err != nil {
		return fmt.Errorf("postgres: scan: %w", err)
	}
	return nil
}

func (r rows) Err() error {
	if err := r.r.Err(); err != nil {
		return fmt.Errorf("postgres: query: %w", err)
	}
	return nil
}

// Close releases the rows. Errors met while reading are reported by Err,
// not here, so they are not counted twice.
func (r rows) Close() error {
	r.r.Close()
	return nil
}
