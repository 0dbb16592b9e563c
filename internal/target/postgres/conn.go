package postgres

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/ceiling-db/ceiling/internal/target"
)

// conn is one worker's session. It is used by one goroutine at a time.
type conn struct {
	c  *pgx.Conn
	rt int64 // round trips made (target.RoundTripCounter)
	// viaPgx are the statements run through pgx's Query or Exec with
	// arguments: pgx prepares each on its first use (its statement
	// cache), a round trip more.
	viaPgx  map[string]struct{}
	lastPgx string // the last of them: checked first, without hashing

	// Statements Exec prepared at the protocol level, by SQL text.
	prepared map[string]string // SQL → statement name
	params   [][]byte          // reused parameter slices
	buf      []byte            // reused encoding buffer

	// The socket under the session when execWire can use it (nil under
	// TLS, or with CEILING_PG_WIRE=pgproto3), and its reused output buffer.
	sess *sessConn
	out  []byte

	// The statements Exec ran last, looked up before prepared (a string
	// comparison of the same constant is a pointer check; the map hashes
	// the whole text).
	recent [recentStmts]struct{ sql, name string }

	// Protocol messages execPrepared reuses.
	bind    pgproto3.Bind
	execute pgproto3.Execute
	sync    pgproto3.Sync

	// Cancellation of Exec's context, watched once per context (see watch).
	watched   context.Context
	stopWatch func() bool
	fired     chan struct{} // closed once the watcher has interrupted the session
}

var _ target.Conn = (*conn)(nil)

// Exec implements target.Conn. The statement is prepared on this session
// the first time and then executed with text-encoded parameters straight on
// the wire protocol (pgconn), skipping pgx's per-call type mapping: measured
// 25-35% more requests/s at 16 connections on a 2-core machine. Arguments of
// a type encodeText does not handle go through pgx's Exec instead.
func (c *conn) Exec(ctx context.Context, sql string, args ...any) (int64, error) {
	c.rt++
	params, ok := c.encode(args)
	if !ok {
		c.pgxPrepares(sql)
		tag, err := c.c.Exec(ctx, sql, args...)
		if err != nil {
			return 0, fmt.Errorf("postgres: exec: %w", err)
		}
		return tag.RowsAffected(), nil
	}
	name, err := c.prepare(ctx, sql)
	if err != nil {
		return 0, fmt.Errorf("postgres: prepare: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("postgres: exec: %w", err)
	}
	c.watch(ctx)
	// ctx is watched by c (a deadline in the past interrupts the I/O).
	var n int64
	if c.sess != nil {
		n, err = c.execWire(ctx, name, params)
	} else {
		n, err = c.execPrepared(name, params)
	}
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return 0, fmt.Errorf("postgres: exec: %w: %w", cerr, err)
		}
		return 0, fmt.Errorf("postgres: exec: %w", err)
	}
	return n, nil
}

// watch makes a cancellation of ctx interrupt the session's I/O, as pgx
// does (a deadline in the past: the session is then lost), but registers
// the watcher once per context instead of once per request: pgconn's own
// watcher costs four allocations and two lock round trips on the run's
// shared context per request.
func (c *conn) watch(ctx context.Context) {
	if ctx == c.watched {
		return
	}
	c.unwatch()
	c.watched = ctx
	if ctx.Done() == nil {
		return
	}
	nc := c.c.PgConn().Conn()
	fired := make(chan struct{})
	c.fired = fired
	c.stopWatch = context.AfterFunc(ctx, func() {
		_ = nc.SetDeadline(time.Now())
		close(fired)
	})
}

// unwatch stops watching the current context; if its cancellation already
// interrupted the session, the deadline is cleared again.
func (c *conn) unwatch() {
	if c.stopWatch != nil && !c.stopWatch() {
		<-c.fired
		_ = c.c.PgConn().Conn().SetDeadline(time.Time{})
	}
	c.watched, c.stopWatch, c.fired = nil, nil, nil
}

// recentStmts is how many statements prepare remembers before its map:
// the row workloads run one to four.
const recentStmts = 4

func (c *conn) prepare(ctx context.Context, sql string) (string, error) {
	for _, e := range c.recent {
		if e.sql == sql && e.name != "" {
			return e.name, nil
		}
	}
	if name, ok := c.prepared[sql]; ok {
		c.remember(sql, name)
		return name, nil
	}
	if c.prepared == nil {
		c.prepared = map[string]string{}
	}
	name := "ceiling_" + strconv.Itoa(len(c.prepared))
	c.rt++
	if _, err := c.c.PgConn().Prepare(ctx, name, sql, nil); err != nil {
		return "", err
	}
	c.prepared[sql] = name
	c.remember(sql, name)
	return name, nil
}

// remember puts a statement first among the recent ones.
func (c *conn) remember(sql, name string) {
	copy(c.recent[1:], c.recent[:recentStmts-1])
	c.recent[0].sql, c.recent[0].name = sql, name
}

// encode renders args in PostgreSQL's text format into reused buffers. It
// reports false for a type it does not handle.
func (c *conn) encode(args []any) ([][]byte, bool) {
	if c.buf == nil {
		c.buf = make([]byte, 0, 1024) // non-nil: an empty value must not read as NULL
	}
	c.buf = c.buf[:0]
	ends := c.params[:0]
	// Append every value to buf, remembering where each ends; slice buf
	// only afterwards, since appending may move it.
	var offsArr [32]int
	offs := offsArr[:0]
	var null uint64
	ok := true
	for i, a := range args {
		if target.NilPointer(a) {
			return nil, false // pgx sends it as NULL
		}
		switch v := a.(type) {
		case nil:
			if i < 64 {
				null |= 1 << i
			} else {
				return nil, false
			}
		case int64:
			c.buf = strconv.AppendInt(c.buf, v, 10)
		case *int64:
			c.buf = strconv.AppendInt(c.buf, *v, 10)
		case int:
			c.buf = strconv.AppendInt(c.buf, int64(v), 10)
		case int32:
			c.buf = strconv.AppendInt(c.buf, int64(v), 10)
		case bool:
			c.buf = appendBool(c.buf, v)
		case *bool:
			c.buf = appendBool(c.buf, *v)
		case float64:
			if c.buf, ok = appendFloat(c.buf, v); !ok {
				return nil, false
			}
		case *float64:
			if c.buf, ok = appendFloat(c.buf, *v); !ok {
				return nil, false
			}
		case string:
			if c.buf, ok = appendText(c.buf, v); !ok {
				return nil, false
			}
		case *string:
			if c.buf, ok = appendText(c.buf, *v); !ok {
				return nil, false
			}
		case time.Time:
			c.buf = appendTime(c.buf, v)
		case *time.Time:
			c.buf = appendTime(c.buf, *v)
		default:
			return nil, false
		}
		offs = append(offs, len(c.buf))
	}
	prev := 0
	for i, end := range offs {
		if i < 64 && null&(1<<i) != 0 {
			ends = append(ends, nil)
		} else {
			ends = append(ends, c.buf[prev:end:end])
		}
		prev = end
	}
	c.params = ends
	return ends, true
}

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 't')
	}
	return append(b, 'f')
}

// appendFloat reports false for NaN and infinities, which go through pgx.
func appendFloat(b []byte, v float64) ([]byte, bool) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return b, false
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64), true
}

// appendText reports false for a string with a NUL byte, which PostgreSQL
// text cannot hold.
func appendText(b []byte, v string) ([]byte, bool) {
	if strings.IndexByte(v, 0) >= 0 {
		return b, false
	}
	return append(b, v...), true
}

// timeLayout is how appendTime renders a time (in UTC): microseconds,
// without trailing zeros.
const timeLayout = "2006-01-02 15:04:05.999999"

// appendTime appends v as AppendFormat with timeLayout would, digit by
// digit for years 1-9999: the generic formatter parses the layout at every
// call, which was 7% of the client's user time in insert/delete runs.
func appendTime(b []byte, v time.Time) []byte {
	v = v.UTC()
	y, mo, d := v.Date()
	if y < 1 || y > 9999 {
		return v.AppendFormat(b, timeLayout)
	}
	h, mi, s := v.Clock()
	b = append(b, byte('0'+y/1000), byte('0'+y/100%10), byte('0'+y/10%10), byte('0'+y%10), '-',
		byte('0'+int(mo)/10), byte('0'+int(mo)%10), '-', byte('0'+d/10), byte('0'+d%10), ' ',
		byte('0'+h/10), byte('0'+h%10), ':', byte('0'+mi/10), byte('0'+mi%10), ':', byte('0'+s/10), byte('0'+s%10))
	us := v.Nanosecond() / 1000
	if us == 0 {
		return b
	}
	var frac [7]byte
	frac[0] = '.'
	for i := 6; i >= 1; i-- {
		frac[i] = byte('0' + us%10)
		us /= 10
	}
	n := 7
	for frac[n-1] == '0' {
		n--
	}
	return append(b, frac[:n]...)
}

// RoundTrips implements target.RoundTripCounter.
func (c *conn) RoundTrips() int64 { return c.rt }

// pgxCacheSize is the size of pgx's statement cache (its default).
const pgxCacheSize = 512

// pgxPrepares counts the round trip pgx makes to prepare sql the first
// time it runs it (its statement cache; Exec without arguments goes
// unprepared, and does not come here).
func (c *conn) pgxPrepares(sql string) {
	if sql == c.lastPgx { // a workload's constant: a pointer comparison
		return
	}
	c.lastPgx = sql
	if _, ok := c.viaPgx[sql]; ok {
		return
	}
	if c.viaPgx == nil || len(c.viaPgx) >= pgxCacheSize {
		// pgx's cache keeps its last pgxCacheSize statements; one
		// that cycles through more SQL texts prepares them again.
		c.viaPgx = map[string]struct{}{}
	}
	c.viaPgx[sql] = struct{}{}
	c.rt++
}

// Query implements target.Conn.
func (c *conn) Query(ctx context.Context, sql string, args ...any) (target.Rows, error) {
	c.rt++
	c.pgxPrepares(sql)
	r, err := c.c.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: query: %w", err)
	}
	return rows{r: r}, nil
}

// Begin implements target.Conn.
func (c *conn) Begin(ctx context.Context) error {
	c.rt++
	if _, err := c.c.Exec(ctx, "BEGIN"); err != nil {
		return fmt.Errorf("postgres: begin: %w", err)
	}
	return nil
}

// Commit implements target.Conn. Like pgx.Tx, it reports a COMMIT that
// the server turned into a ROLLBACK (the transaction had failed) as an
// error: pgx.ErrTxCommitRollback.
func (c *conn) Commit(ctx context.Context) error {
	c.rt++
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
	c.rt++
	if _, err := c.c.Exec(ctx, "ROLLBACK"); err != nil {
		return fmt.Errorf("postgres: rollback: %w", err)
	}
	return nil
}

// Close implements target.Conn. It is safe to call more than once.
func (c *conn) Close() error {
	c.unwatch()
	// Conn.Close has no context; bound the goodbye message instead.
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	if err := c.c.Close(ctx); err != nil {
		return fmt.Errorf("postgres: close: %w", err)
	}
	return nil
}

var _ target.ValueRows = rows{}

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

// Values implements target.ValueRows.
func (r rows) Values() ([]any, error) {
	v, err := r.r.Values()
	if err != nil {
		return nil, fmt.Errorf("postgres: scan: %w", err)
	}
	return v, nil
}

// RawLens implements target.RawRows from the DataRow's values.
func (r rows) RawLens(dst []int) ([]int, error) {
	for _, v := range r.r.RawValues() {
		if v == nil {
			dst = append(dst, -1)
		} else {
			dst = append(dst, len(v))
		}
	}
	return dst, nil
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
