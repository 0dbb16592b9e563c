package sqlite

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ncruces/go-sqlite3"

	"github.com/ceiling-db/ceiling/internal/target"
)

// conn is one SQLite connection with its own prepared-statement cache.
type conn struct {
	c     *sqlite3.Conn
	stmts map[string]*sqlite3.Stmt
	ctx   context.Context
}

func (c *conn) setCtx(ctx context.Context) {
	if c.ctx != ctx {
		c.c.SetInterrupt(ctx)
		c.ctx = ctx
	}
}

func (c *conn) prepare(sql string) (*sqlite3.Stmt, error) {
	if s, ok := c.stmts[sql]; ok {
		return s, nil
	}
	s, _, err := c.c.Prepare(sql)
	if err != nil {
		return nil, err
	}
	if s == nil {
		return nil, errors.New("empty statement")
	}
	c.stmts[sql] = s
	return s, nil
}

func bind(s *sqlite3.Stmt, args []any) error {
	for i, a := range args {
		p := i + 1
		var err error
		if target.NilPointer(a) {
			a = nil // as database/sql does: a nil pointer is NULL
		}
		switch v := a.(type) {
		case nil:
			err = s.BindNull(p)
		case int64:
			err = s.BindInt64(p, v)
		case *int64:
			err = s.BindInt64(p, *v)
		case int:
			err = s.BindInt64(p, int64(v))
		case int32:
			err = s.BindInt64(p, int64(v))
		case bool:
			err = s.BindBool(p, v)
		case *bool:
			err = s.BindBool(p, *v)
		case float64:
			err = s.BindFloat(p, v)
		case *float64:
			err = s.BindFloat(p, *v)
		case string:
			err = s.BindText(p, v)
		case *string:
			err = s.BindText(p, *v)
		case []byte:
			err = s.BindBlob(p, v)
		case time.Time:
			err = s.BindTime(p, v, sqlite3.TimeFormatDefault)
		case *time.Time:
			err = s.BindTime(p, *v, sqlite3.TimeFormatDefault)
		default:
			err = fmt.Errorf("unsupported argument type %T", a)
		}
		if err != nil {
			return fmt.Errorf("bind parameter %d: %w", p, err)
		}
	}
	return nil
}

// Exec implements target.Conn.
func (c *conn) Exec(ctx context.Context, sql string, args ...any) (int64, error) {
	c.setCtx(ctx)
	s, err := c.prepare(sql)
	if err != nil {
		return 0, err
	}
	if err := bind(s, args); err != nil {
		return 0, err
	}
	if err := s.Exec(); err != nil {
		return 0, err
	}
	return c.c.Changes(), nil
}

// Query implements target.Conn.
func (c *conn) Query(ctx context.Context, sql string, args ...any) (target.Rows, error) {
	c.setCtx(ctx)
	s, err := c.prepare(sql)
	if err != nil {
		return nil, err
	}
	if err := bind(s, args); err != nil {
		return nil, err
	}
	return &rows{s: s}, nil
}

func (c *conn) queryRow(ctx context.Context, sql string, dest ...any) error {
	r, err := c.Query(ctx, sql)
	if err != nil {
		return err
	}
	defer r.Close()
	if !r.Next() {
		if err := r.Err(); err != nil {
			return err
		}
		return errors.New("no rows")
	}
	return r.Scan(dest...)
}

// Begin implements target.Conn. It takes the write lock up front
// (BEGIN IMMEDIATE) so that two writers never deadlock on a lock upgrade.
func (c *conn) Begin(ctx context.Context) error {
	_, err := c.Exec(ctx, "BEGIN IMMEDIATE")
	return err
}

// Commit implements target.Conn.
func (c *conn) Commit(ctx context.Context) error {
	_, err := c.Exec(ctx, "COMMIT")
	return err
}

// Rollback implements target.Conn.
func (c *conn) Rollback(ctx context.Context) error {
	if c.c.GetAutocommit() {
		return nil
	}
	_, err := c.Exec(ctx, "ROLLBACK")
	return err
}

// Close implements target.Conn.
func (c *conn) Close() error {
	for _, s := range c.stmts {
		s.Close()
	}
	c.stmts = nil
	return c.c.Close()
}

type rows struct {
	s   *sqlite3.Stmt
	err error
}

func (r *rows) Next() bool {
	if r.s.Step() {
		return true
	}
	r.err = r.s.Err()
	return false
}

var _ target.ValueRows = (*rows)(nil)

// Values implements target.ValueRows.
func (r *rows) Values() ([]any, error) {
	vals := make([]any, r.s.ColumnCount())
	for i := range vals {
		vals[i] = r.value(i)
	}
	return vals, nil
}

// value is column i of the current row as a Go value (int64, float64,
// string, []byte or nil), which binds back as an argument: the driver's
// own Value only lives until the next step.
func (r *rows) value(i int) any {
	switch r.s.ColumnType(i) {
	case sqlite3.INTEGER:
		return r.s.ColumnInt64(i)
	case sqlite3.FLOAT:
		return r.s.ColumnFloat(i)
	case sqlite3.TEXT:
		return r.s.ColumnText(i)
	case sqlite3.BLOB:
		return r.s.ColumnBlob(i, nil)
	}
	return nil
}

func (r *rows) Scan(dest ...any) error {
	if len(dest) > r.s.ColumnCount() {
		return fmt.Errorf("scan: %d destinations for %d columns", len(dest), r.s.ColumnCount())
	}
	for i, d := range dest {
		switch p := d.(type) {
		case *int64:
			*p = r.s.ColumnInt64(i)
		case *int:
			*p = r.s.ColumnInt(i)
		case *float64:
			*p = r.s.ColumnFloat(i)
		case *string:
			*p = r.s.ColumnText(i)
		case *bool:
			*p = r.s.ColumnBool(i)
		case *[]byte:
			*p = r.s.ColumnBlob(i, (*p)[:0])
		case *time.Time:
			*p = r.s.ColumnTime(i, sqlite3.TimeFormatDefault)
		case *any:
			*p = r.value(i)
		default:
			return fmt.Errorf("scan: unsupported destination %T", d)
		}
	}
	return nil
}

func (r *rows) Err() error { return r.err }

func (r *rows) Close() error {
	err := r.s.Reset()
	_ = r.s.ClearBindings()
	if r.err != nil {
		return r.err
	}
	return err
}

var _ target.Conn = (*conn)(nil)
