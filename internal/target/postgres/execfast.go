package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
)

// execPrepared runs the prepared statement name with text parameters as
// Bind, Execute and Sync on the session's protocol frontend, and reads the
// replies up to ReadyForQuery. It is pgconn's ExecPrepared without its
// result reader and without the Describe of the portal, which a statement
// whose rows nobody reads does not need (libpq and pgconn send one for
// every execution: a NoData or RowDescription reply the server builds and
// the client parses). The session must be idle, as for any pgconn call;
// the caller watches the context (conn.watch).
//
// A failure to send or receive leaves the protocol state unknown: the
// session is closed, and the error (a network error, EOF or timeout) is
// classified as a lost connection or a timeout like pgconn's own.
func (c *conn) execPrepared(name string, params [][]byte) (int64, error) {
	pc := c.c.PgConn()
	fe := pc.Frontend()
	c.bind.PreparedStatement = name
	c.bind.Parameters = params
	fe.SendBind(&c.bind)
	fe.SendExecute(&c.execute)
	fe.SendSync(&c.sync)
	if err := fe.Flush(); err != nil {
		return 0, c.broken(err)
	}
	var (
		rows   int64
		pgErr  *pgconn.PgError
		closed bool
	)
	for {
		msg, err := fe.Receive()
		if err != nil {
			return 0, c.broken(err)
		}
		switch m := msg.(type) {
		case *pgproto3.CommandComplete:
			rows = tagRows(m.CommandTag)
		case *pgproto3.ErrorResponse:
			pgErr = pgconn.ErrorResponseToPgError(m)
			// FATAL: the server ends the session after this message.
			closed = pgErr.Severity == "FATAL" || pgErr.Severity == "PANIC"
		case *pgproto3.ReadyForQuery:
			if pgErr != nil {
				return 0, pgErr
			}
			return rows, nil
		}
		if closed {
			_ = pc.Close(context.Background())
			return 0, pgErr
		}
		// BindComplete, DataRow (a statement returning rows: read and
		// dropped), EmptyQueryResponse, NoticeResponse and ParameterStatus
		// need nothing.
	}
}

// brokenTimeout bounds the cancel request and the close after an I/O
// error in the middle of a request.
const brokenTimeout = 2 * time.Second

// broken ends the session after an I/O error in the middle of a request
// (the context's cancellation set a deadline in the past, or the network
// failed) and returns the error. As pgconn does in that case, it first asks
// the server to cancel the statement on another connection, so that a
// statement still running there (a lock wait, a long sleep) does not
// outlive the session.
func (c *conn) broken(err error) error {
	pc := c.c.PgConn()
	ctx, cancel := context.WithTimeout(context.Background(), brokenTimeout)
	defer cancel()
	_ = pc.CancelRequest(ctx)
	_ = pc.Close(ctx)
	if errors.Is(err, pgconn.ErrConnClosed) {
		return err
	}
	return fmt.Errorf("postgres: session lost: %w", err)
}

// tagRows is the row count at the end of a command tag ("INSERT 0 1",
// "DELETE 3", "UPDATE 10"), 0 when it has none.
func tagRows(tag []byte) int64 {
	i := len(tag)
	for i > 0 && tag[i-1] >= '0' && tag[i-1] <= '9' {
		i--
	}
	if i == len(tag) || (i > 0 && tag[i-1] != ' ') {
		return 0
	}
	var n int64
	for _, ch := range tag[i:] {
		n = n*10 + int64(ch-'0')
	}
	return n
}
