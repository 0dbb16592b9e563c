package mysql

// LOAD DATA LOCAL INFILE as the bulk path: the rows are streamed to the
// server as tab-separated text from a reader registered with the driver,
// which the server parses with less work than multi-row INSERT statements.
// Where the server refuses it (local_infile off), BulkInsert falls back to
// multi-row INSERTs for the rest of the process.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/ceiling-db/ceiling/internal/target"
	"github.com/ceiling-db/ceiling/internal/target/blockio"
)

// loadDataOff is set once a server refused LOAD DATA LOCAL: every later
// bulk insert of the process uses multi-row INSERTs.
var loadDataOff atomic.Bool

// loadSeq names each stream registered with the driver.
var loadSeq atomic.Int64

// useLoadData reports whether BulkInsert tries LOAD DATA LOCAL first.
// CEILING_MYSQL_BULK=insert forces multi-row INSERTs (=load, the default,
// tries LOAD DATA).
func useLoadData() bool {
	return os.Getenv("CEILING_MYSQL_BULK") != "insert" && !loadDataOff.Load()
}

// errLoadRefused wraps the server's refusal of LOAD DATA LOCAL.
var errLoadRefused = errors.New("LOAD DATA LOCAL refused")

// loadRefused reports whether err is the server refusing LOAD DATA LOCAL
// (local_infile off: ER_NOT_ALLOWED_COMMAND 1148, MySQL 8's
// ER_CLIENT_LOCAL_FILES_DISABLED 3948, MariaDB's
// ER_LOAD_INFILE_CAPABILITY_DISABLED 4166).
func loadRefused(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && (me.Number == 1148 || me.Number == 3948 || me.Number == 4166)
}

// loadData streams rows into table with LOAD DATA LOCAL INFILE, in the
// current transaction. It returns the rows sent; any warning (LOAD DATA
// LOCAL turns data errors into warnings: a truncated value, a bad date) is
// an error, as a failed INSERT would be.
func (c *conn) loadData(ctx context.Context, table string, cols []string, rows target.RowSource) (int64, error) {
	name := "ceiling-" + strconv.FormatInt(loadSeq.Add(1), 10)
	pr, pw := io.Pipe()
	var (
		sent    int64
		started bool
	)
	gen := make(chan error, 1)
	// The rows are read only once the server asks for the file: a server
	// that refuses LOAD DATA LOCAL leaves them all for the fallback.
	mysql.RegisterReaderHandler(name, func() io.Reader {
		started = true
		go func() {
			err := writeTSV(pw, rows, len(cols), &sent)
			pw.CloseWithError(err)
			gen <- err
		}()
		return pr
	})
	defer mysql.DeregisterReaderHandler(name)
	wait := func() error {
		if !started {
			return nil
		}
		return <-gen
	}
	// The separators are sent as the characters themselves inside the
	// quotes, which reads the same whether or not NO_BACKSLASH_ESCAPES is
	// on; only the escape character itself must be written per mode.
	esc := `'\\'`
	if c.bulk.noBackslash {
		esc = `'\'`
	}
	q := "LOAD DATA LOCAL INFILE 'Reader::" + name + "' INTO TABLE `" + Prefix + table +
		"` CHARACTER SET utf8mb4 FIELDS TERMINATED BY '\t' ESCAPED BY " + esc +
		" LINES TERMINATED BY '\n' (`" + strings.Join(cols, "`, `") + "`)"
	res, err := c.c.ExecContext(ctx, q)
	if err != nil {
		// Unblock the generator if the server stopped reading early.
		pr.CloseWithError(err)
		_ = wait()
		if !started && loadRefused(err) {
			return 0, fmt.Errorf("%w: %w", errLoadRefused, err)
		}
		return 0, fmt.Errorf("mysql: load data into %s: %w", table, err)
	}
	if gerr := wait(); gerr != nil {
		return 0, fmt.Errorf("mysql: load data into %s: %w", table, gerr)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("mysql: load data into %s: %w", table, err)
	}
	if n != sent {
		return n, fmt.Errorf("mysql: load data into %s: the server took %d of %d rows", table, n, sent)
	}
	var warnings int64
	if err := c.c.QueryRowContext(ctx, "SELECT @@warning_count").Scan(&warnings); err != nil {
		return n, fmt.Errorf("mysql: load data into %s: read warnings: %w", table, err)
	}
	if warnings > 0 {
		var level, msg string
		var code int
		_ = c.c.QueryRowContext(ctx, "SHOW WARNINGS LIMIT 1").Scan(&level, &code, &msg)
		return n, fmt.Errorf("mysql: load data into %s: %d warnings, first: %s %d: %s", table, warnings, level, code, msg)
	}
	return n, nil
}

// writeTSV writes rows as LOAD DATA's default text format: fields
// separated by tabs, rows by newlines, NULL as \N, and backslash, tab,
// newline, carriage return and NUL escaped with a backslash.
func writeTSV(w io.Writer, rows target.RowSource, ncols int, sent *int64) error {
	bw := bufio.NewWriterSize(w, 256<<10)
	var b []byte
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			return err
		}
		if len(vals) != ncols {
			return fmt.Errorf("row has %d values for %d columns", len(vals), ncols)
		}
		b = b[:0]
		for i, v := range vals {
			if i > 0 {
				b = append(b, '\t')
			}
			if b, err = appendTSV(b, v); err != nil {
				return fmt.Errorf("column %d: %w", i+1, err)
			}
		}
		b = append(b, '\n')
		if _, err := bw.Write(b); err != nil {
			return err
		}
		*sent++
	}
	if err := rows.Err(); err != nil {
		return err
	}
	return bw.Flush()
}

// appendTSV appends one field value.
func appendTSV(b []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(b, '\\', 'N'), nil
	case string:
		return appendEscaped(b, x), nil
	case []byte:
		return appendEscaped(b, string(x)), nil
	case time.Time:
		return x.UTC().AppendFormat(b, "2006-01-02 15:04:05.999999"), nil
	}
	// Numbers and booleans: the same text as their SQL literals.
	return appendLiteral(b, v, false)
}

func appendEscaped(b []byte, s string) []byte {
	b, _ = target.AppendTextEscaped(b, s)
	return b
}

// LoadRows loads rows into table with LOAD DATA LOCAL INFILE, in one
// transaction of its own unless one is open (Begin). Where the server
// refuses LOAD DATA LOCAL (local_infile off), or with
// CEILING_MYSQL_BULK=insert, it uses BulkInsert's multi-row INSERTs. It is
// the TPC-C loader's path: about 1.6 times as fast as the INSERTs on
// MariaDB 10.11 for whole tables; bulk-load keeps BulkInsert, whose small
// batches would pay LOAD DATA's extra round trips.
func (c *conn) LoadRows(ctx context.Context, table string, cols []string, rows target.RowSource) (n int64, err error) {
	// A raw session blocked in a long transfer would stall the garbage
	// collector (blockio.OrdinaryIO).
	defer blockio.OrdinaryIO(c.nc)()
	if !useLoadData() {
		return c.BulkInsert(ctx, table, cols, rows)
	}
	if _, err := c.bulkInit(ctx); err != nil {
		return 0, err
	}
	own := !c.inTx
	if own {
		if err := c.Begin(ctx); err != nil {
			return 0, err
		}
		defer func() {
			if err != nil && c.inTx {
				_ = c.Rollback(context.WithoutCancel(ctx))
			}
		}()
	}
	n, err = c.loadData(ctx, table, cols, rows)
	if errors.Is(err, errLoadRefused) {
		// No row was read: insert them all instead, in the same
		// transaction, and never try LOAD DATA again in this process.
		loadDataOff.Store(true)
		n, err = c.BulkInsert(ctx, table, cols, rows)
	}
	if err != nil {
		return n, err
	}
	if own {
		if err := c.Commit(ctx); err != nil {
			return n, err
		}
	}
	return n, nil
}
