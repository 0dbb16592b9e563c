package mysql

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/ceiling-db/ceiling/internal/target"
)

// maxStmts caps the prepared statements one connection keeps. Workloads
// use a handful of SQL texts; past the cap (a workload building SQL text
// per request) statements run unprepared rather than piling up against
// the server's max_prepared_stmt_count.
const maxStmts = 256

// conn is one worker's session, pinned from the pool. It is used by one
// goroutine at a time.
type conn struct {
	c     *sql.Conn
	nc    net.Conn // the session's network connection, when known (see watch)
	stmts map[string]prepared
	inTx  bool // between Begin and Commit/Rollback
	bulk  *bulkState
	ps    *psWaits // non-nil: take a last wait reading before closing
	id    int64    // CONNECTION_ID()
	t     *myTarget
	raw   rawDest // RawLens' destinations, reused from query to query
	rt    int64   // round trips made (target.RoundTripCounter)
}

// prepared is a cached statement and whether it returns rows.
type prepared struct {
	s    *sql.Stmt // nil when the cache was full: run unprepared
	rows bool
}

var _ target.Conn = (*conn)(nil)

// stmt returns the prepared statement for query, preparing it on first
// use.
func (c *conn) stmt(ctx context.Context, query string) (prepared, error) {
	if p, ok := c.stmts[query]; ok {
		return p, nil
	}
	p := prepared{rows: returnsRows(query)}
	if len(c.stmts) >= maxStmts {
		return p, nil
	}
	c.rt++
	s, err := c.c.PrepareContext(ctx, query)
	if err != nil {
		return p, err
	}
	p.s = s
	c.stmts[query] = p
	return p, nil
}

// Exec implements target.Conn. For a statement that returns rows (SELECT,
// … RETURNING) the count is the number of rows returned, as PostgreSQL
// reports it.
//
// Such statements are read through Query even here: go-sql-driver v1.10
// hangs executing a prepared statement that returns rows when MariaDB
// skips the result metadata (MARIADB_CLIENT_CACHE_METADATA) and the
// result is empty or an error: its Exec path skips column definitions the
// server never sent and then waits for packets that never come.
func (c *conn) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	c.rt++
	dctx, done, err := c.watch(ctx)
	if err == nil {
		var n int64
		n, err = c.exec(dctx, query, args)
		if err = done(err); err == nil {
			return n, nil
		}
	}
	return 0, fmt.Errorf("mysql: exec: %w", err)
}

func (c *conn) exec(ctx context.Context, query string, args []any) (int64, error) {
	if len(args) == 0 {
		res, err := c.c.ExecContext(ctx, query)
		if err != nil {
			return 0, err
		}
		return res.RowsAffected()
	}
	p, err := c.stmt(ctx, query)
	if err != nil {
		return 0, err
	}
	if p.rows {
		r, err := c.query(ctx, p, query, args)
		if err != nil {
			return 0, err
		}
		var n int64
		for r.Next() {
			n++
		}
		if err := errors.Join(r.Err(), r.Close()); err != nil {
			return 0, err
		}
		return n, nil
	}
	var res sql.Result
	if p.s != nil {
		res, err = p.s.ExecContext(ctx, args...)
	} else {
		res, err = c.c.ExecContext(ctx, query, args...)
	}
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// Query implements target.Conn.
func (c *conn) Query(ctx context.Context, query string, args ...any) (target.Rows, error) {
	c.rt++
	dctx, done, err := c.watch(ctx)
	if err != nil {
		return nil, fmt.Errorf("mysql: query: %w", err)
	}
	var r *sql.Rows
	if len(args) == 0 {
		r, err = c.c.QueryContext(dctx, query)
	} else {
		var p prepared
		if p, err = c.stmt(dctx, query); err == nil {
			r, err = c.query(dctx, p, query, args)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("mysql: query: %w", done(err))
	}
	return rows{r: r, done: done, raw: &c.raw}, nil
}

func (c *conn) query(ctx context.Context, p prepared, query string, args []any) (*sql.Rows, error) {
	if p.s != nil {
		return p.s.QueryContext(ctx, args...)
	}
	return c.c.QueryContext(ctx, query, args...)
}

// returnsRows guesses from its text whether a statement returns a result
// set: it starts with SELECT, WITH, SHOW, VALUES, TABLE, EXPLAIN, DESCRIBE
// or DESC (after comments and opening parentheses), or it has a RETURNING
// clause (MariaDB).
func returnsRows(query string) bool {
	s := query
	for {
		s = strings.TrimLeft(s, " \t\r\n(")
		if strings.HasPrefix(s, "/*") {
			if end := strings.Index(s, "*/"); end >= 0 {
				s = s[end+2:]
				continue
			}
			return false
		}
		if strings.HasPrefix(s, "-- ") || strings.HasPrefix(s, "#") {
			if end := strings.IndexByte(s, '\n'); end >= 0 {
				s = s[end+1:]
				continue
			}
			return false
		}
		break
	}
	end := strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	})
	if end < 0 {
		end = len(s)
	}
	switch strings.ToUpper(s[:end]) {
	case "SELECT", "WITH", "SHOW", "VALUES", "TABLE", "EXPLAIN", "DESCRIBE", "DESC":
		return true
	}
	return containsWord(strings.ToUpper(query), "RETURNING")
}

// containsWord reports whether w occurs in s as a whole word.
func containsWord(s, w string) bool {
	for i := 0; ; {
		j := strings.Index(s[i:], w)
		if j < 0 {
			return false
		}
		j += i
		before := j == 0 || !isWordByte(s[j-1])
		after := j+len(w) == len(s) || !isWordByte(s[j+len(w)])
		if before && after {
			return true
		}
		i = j + 1
	}
}

func isWordByte(b byte) bool {
	return b == '_' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}

// Begin implements target.Conn.
func (c *conn) Begin(ctx context.Context) error {
	if err := c.run(ctx, "BEGIN"); err != nil {
		return fmt.Errorf("mysql: begin: %w", err)
	}
	c.inTx = true
	return nil
}

// Commit implements target.Conn.
func (c *conn) Commit(ctx context.Context) error {
	c.inTx = false
	if err := c.run(ctx, "COMMIT"); err != nil {
		return fmt.Errorf("mysql: commit: %w", err)
	}
	return nil
}

// Rollback implements target.Conn.
func (c *conn) Rollback(ctx context.Context) error {
	c.inTx = false
	if err := c.run(ctx, "ROLLBACK"); err != nil {
		return fmt.Errorf("mysql: rollback: %w", err)
	}
	return nil
}

// run executes a statement without arguments or results under watch.
// RoundTrips implements target.RoundTripCounter.
func (c *conn) RoundTrips() int64 { return c.rt }

func (c *conn) run(ctx context.Context, stmt string) error {
	c.rt++
	dctx, done, err := c.watch(ctx)
	if err != nil {
		return err
	}
	_, err = c.c.ExecContext(dctx, stmt)
	return done(err)
}

// Close implements target.Conn. It closes the prepared statements and the
// session itself rather than handing it back to the pool, so no open
// transaction or session state reaches the next Connect. It is safe to
// call more than once.
func (c *conn) Close() error {
	if c.ps != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		c.ps.final(ctx, c.c, c.id)
		cancel()
		c.ps = nil
	}
	var errs []error
	for q, p := range c.stmts {
		if err := p.s.Close(); err != nil && !isGone(err) {
			errs = append(errs, err)
		}
		delete(c.stmts, q)
	}
	// Returning driver.ErrBadConn from Raw makes database/sql discard
	// the connection instead of pooling it.
	_ = c.c.Raw(func(any) error { return driver.ErrBadConn })
	if err := c.c.Close(); err != nil && !errors.Is(err, sql.ErrConnDone) && !isGone(err) {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("mysql: close: %w", err)
	}
	return nil
}

// isGone reports an error that only says the connection is already gone.
func isGone(err error) bool {
	return errors.Is(err, driver.ErrBadConn) || errors.Is(err, sql.ErrConnDone)
}

// rows adapts *sql.Rows to target.Rows.
type rows struct {
	r    *sql.Rows
	done func(error) error // ends the watch of the query (conn.watch)
	raw  *rawDest          // RawLens' scan destinations, made on first use
}

// rawDest holds sql.RawBytes destinations, which take the driver's bytes
// without a copy or a conversion to Go values, for the rows of one query
// at a time.
type rawDest struct {
	of   *sql.Rows // the query they were sized for
	vals []sql.RawBytes
	dest []any
}

// RawLens implements target.RawRows by scanning into sql.RawBytes.
func (r rows) RawLens(dst []int) ([]int, error) {
	if r.raw.of != r.r {
		// A new query: as many destinations as it has columns.
		cols, err := r.r.Columns()
		if err != nil {
			return dst, fmt.Errorf("mysql: scan: %w", err)
		}
		if len(cols) != len(r.raw.vals) {
			r.raw.vals = make([]sql.RawBytes, len(cols))
			r.raw.dest = r.raw.dest[:0]
			for i := range r.raw.vals {
				r.raw.dest = append(r.raw.dest, &r.raw.vals[i])
			}
		}
		r.raw.of = r.r
	}
	if err := r.r.Scan(r.raw.dest...); err != nil {
		return dst, fmt.Errorf("mysql: scan: %w", err)
	}
	for _, v := range r.raw.vals {
		if v == nil {
			dst = append(dst, -1)
		} else {
			dst = append(dst, len(v))
		}
	}
	return dst, nil
}

func (r rows) Next() bool { return r.r.Next() }

func (r rows) Scan(dest ...any) error {
	if err := r.r.Scan(dest...); err != nil {
		return fmt.Errorf("mysql: scan: %w", err)
	}
	return nil
}

var _ target.ValueRows = rows{}

// Values implements target.ValueRows.
func (r rows) Values() ([]any, error) {
	cols, err := r.r.Columns()
	if err != nil {
		return nil, fmt.Errorf("mysql: scan: %w", err)
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := r.r.Scan(ptrs...); err != nil {
		return nil, fmt.Errorf("mysql: scan: %w", err)
	}
	return vals, nil
}

func (r rows) Err() error {
	if err := r.r.Err(); err != nil {
		return fmt.Errorf("mysql: query: %w", err)
	}
	return nil
}

func (r rows) Close() error {
	if err := r.done(r.r.Close()); err != nil {
		return fmt.Errorf("mysql: query: %w", err)
	}
	return nil
}
