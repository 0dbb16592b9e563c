package postgres

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync/atomic"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
)

// A worker's prepared statement runs straight on the socket: Bind, Execute
// and Sync written as one buffer, the replies parsed in place up to
// ReadyForQuery (execWire). It replaces pgproto3's Frontend for that one
// exchange, whose reading path (a chunk reader over pgconn's background
// reader, with a mutex per read, then a decoded message per reply) took
// about a fifth of the client's user-space time per request: measured with
// perf on the 2-core development VM, single-row inserts at 8 connections,
// every commit waiting for its flush. Everything else (preparing,
// transactions, queries, COPY) still goes through pgx on the same session.
//
// The two readers of one socket must not lose each other's bytes:
//
//   - pgconn buffers what it reads, and may have a background goroutine
//     blocked in a read (started when a write of its was slow). sessConn
//     notes every read pgconn makes (dirty); before reading the socket
//     itself, the exchange asks pgconn to drain its buffer and stop that
//     goroutine (PgConn.SyncConn, which returns at once when there is
//     nothing to do).
//   - execWire reads in chunks, so it may read past the ReadyForQuery
//     (an asynchronous notice or parameter report that arrived with the
//     reply). Those bytes stay in sessConn's buffer, which serves them
//     before the socket to whichever reads next, execWire or pgconn.
//   - The asynchronous messages within the exchange (ParameterStatus,
//     NoticeResponse, NotificationResponse) are pgconn's: execWire keeps
//     them whole (fwd), and sessConn hands them to pgconn first when it
//     next reads, as if they had waited in the socket. So pgconn's
//     parameter map, and pgx's notifications and notice handler, see
//     what a statement run on the wire path set off (a set_config of a
//     reported parameter, a NOTIFY to a session that listens, a RAISE
//     NOTICE). Past wireMaxFwd bytes waiting, further ones are dropped.
//
// A session under TLS has no sessConn at the top (pgconn wraps it), so it
// keeps the Frontend path; CEILING_PG_WIRE=pgproto3 forces that path for
// comparisons.

// wireOff selects the pgproto3 Frontend path for every session.
var wireOff = os.Getenv("CEILING_PG_WIRE") == "pgproto3"

// sessConn is the network connection under a worker session's pgconn.
type sessConn struct {
	net.Conn

	// dirty: pgconn read from this connection since execWire last made
	// sure pgconn holds no unread bytes (set by pgconn's goroutines,
	// cleared by the worker's).
	dirty atomic.Bool

	// Bytes read from the socket and not consumed yet: buf[r:w]. execWire
	// reads into buf; Read serves what is left before the socket.
	buf  []byte
	r, w int

	// Asynchronous messages execWire read for pgconn: fwd[fr:], served
	// by Read before anything else.
	fwd []byte
	fr  int
}

// wrapDial makes dial's connections sessConns; nil dials as pgconn would
// by default.
func wrapDial(dial pgconn.DialFunc) pgconn.DialFunc {
	if dial == nil {
		var d net.Dialer
		dial = d.DialContext
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		nc, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &sessConn{Conn: nc}, nil
	}
}

// netConn is the connection under nc (nc itself when it is no sessConn),
// for the blockio functions that recognise their own connections.
func netConn(nc net.Conn) net.Conn {
	if s, ok := nc.(*sessConn); ok {
		return s.Conn
	}
	return nc
}

// Read serves pgconn: bytes execWire read past its reply first, then the
// socket.
func (s *sessConn) Read(p []byte) (int, error) {
	if !s.dirty.Load() {
		s.dirty.Store(true)
	}
	if s.fr < len(s.fwd) {
		n := copy(p, s.fwd[s.fr:])
		s.fr += n
		if s.fr == len(s.fwd) {
			s.fwd, s.fr = s.fwd[:0], 0
		}
		return n, nil
	}
	if s.r < s.w {
		n := copy(p, s.buf[s.r:s.w])
		s.r += n
		return n, nil
	}
	return s.Conn.Read(p)
}

// wireBufSize is the initial size of a session's read buffer; a reply
// message that does not fit (a long error message) grows it, up to
// wireMaxMsg.
const (
	wireBufSize = 4096
	wireMaxMsg  = 1 << 24
)

// wireMaxFwd bounds the asynchronous messages kept for pgconn (fwd) while
// pgconn does not read: a statement that raises notices in a loop, run
// on the wire path again and again, would otherwise grow them without end.
const wireMaxFwd = 1 << 20

// errProtocol is a reply execWire cannot parse: the session is dropped.
var errProtocol = errors.New("postgres: protocol error in the server's reply")

// fill reads from the socket until at least n bytes are buffered (n <=
// len(s.buf) after a grow).
func (s *sessConn) fill(n int) error {
	if s.w-s.r >= n {
		return nil
	}
	if n > len(s.buf)-s.r {
		// Move the unread bytes to the front, growing the buffer if even
		// that leaves too little room.
		if n > len(s.buf) {
			nb := make([]byte, max(n, 2*len(s.buf)))
			s.w = copy(nb, s.buf[s.r:s.w])
			s.buf = nb
		} else {
			s.w = copy(s.buf, s.buf[s.r:s.w])
		}
		s.r = 0
	}
	for s.w-s.r < n {
		m, err := s.Conn.Read(s.buf[s.w:])
		s.w += m
		if err != nil {
			if err == io.EOF && s.w-s.r > 0 {
				err = io.ErrUnexpectedEOF
			}
			return err
		}
	}
	return nil
}

// skip consumes n bytes of a message body, reading them from the socket
// as needed without buffering them all.
func (s *sessConn) skip(n int) error {
	for {
		k := min(n, s.w-s.r)
		s.r += k
		n -= k
		if n == 0 {
			return nil
		}
		s.r, s.w = 0, 0
		m, err := s.Conn.Read(s.buf)
		s.w = m
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return err
		}
	}
}

// appendExchange appends Bind (unnamed portal, prepared statement name,
// text parameters, default result formats), Execute (all rows) and Sync.
func appendExchange(b []byte, name string, params [][]byte) []byte {
	start := len(b)
	b = append(b, 'B', 0, 0, 0, 0, 0) // length patched below; portal ""
	b = append(b, name...)
	b = append(b, 0, 0, 0) // name's NUL; no parameter format codes (all text)
	b = binary.BigEndian.AppendUint16(b, uint16(len(params)))
	for _, p := range params {
		if p == nil {
			b = binary.BigEndian.AppendUint32(b, 0xFFFFFFFF) // NULL
			continue
		}
		b = binary.BigEndian.AppendUint32(b, uint32(len(p)))
		b = append(b, p...)
	}
	b = append(b, 0, 0) // no result format codes (all text)
	binary.BigEndian.PutUint32(b[start+1:], uint32(len(b)-start-1))
	b = append(b, 'E', 0, 0, 0, 9, 0, 0, 0, 0, 0) // portal "", no row limit
	return append(b, 'S', 0, 0, 0, 4)
}

// execWire runs the prepared statement name with text parameters on the
// session's socket (see the top of this file) and returns the rows the
// command tag reports. Like execPrepared, it sends no Describe, and a
// failure to send or receive drops the session.
func (c *conn) execWire(ctx context.Context, name string, params [][]byte) (int64, error) {
	s := c.sess
	pc := c.c.PgConn()
	if pc.IsClosed() {
		return 0, pgconn.ErrConnClosed // as pgconn reports a call on a closed session
	}
	if s.dirty.Load() {
		// pgconn read since the last exchange: make sure it holds nothing
		// unread (at once when it holds nothing, else through a ping).
		if err := pc.SyncConn(ctx); err != nil {
			return 0, c.broken(err)
		}
		s.dirty.Store(false)
	}
	c.out = appendExchange(c.out[:0], name, params)
	if _, err := s.Conn.Write(c.out); err != nil {
		return 0, c.broken(err)
	}
	if s.buf == nil {
		s.buf = make([]byte, wireBufSize)
	}
	var (
		rows  int64
		pgErr *pgconn.PgError
	)
	for {
		if err := s.fill(5); err != nil {
			return 0, c.broken(err)
		}
		typ := s.buf[s.r]
		n := int(binary.BigEndian.Uint32(s.buf[s.r+1:])) - 4
		if n < 0 || n > wireMaxMsg {
			return 0, c.broken(fmt.Errorf("%w: message %q of %d bytes", errProtocol, typ, n+4))
		}
		switch typ {
		case 'Z', 'C', 'E':
			if err := s.fill(5 + n); err != nil {
				return 0, c.broken(err)
			}
			body := s.buf[s.r+5 : s.r+5+n]
			s.r += 5 + n
			switch typ {
			case 'Z':
				if pgErr != nil {
					return 0, pgErr
				}
				return rows, nil
			case 'C':
				if n > 0 && body[n-1] == 0 {
					body = body[:n-1]
				}
				rows = tagRows(body)
			case 'E':
				var m pgproto3.ErrorResponse
				if err := m.Decode(body); err != nil {
					return 0, c.broken(fmt.Errorf("%w: %w", errProtocol, err))
				}
				pgErr = pgconn.ErrorResponseToPgError(&m)
				if pgErr.Severity == "FATAL" || pgErr.Severity == "PANIC" {
					// The server ends the session after this message.
					_ = pc.Close(context.Background())
					return 0, pgErr
				}
			}
		case 'N', 'S', 'A':
			// NoticeResponse, ParameterStatus, NotificationResponse:
			// pgconn's (see the top of this file), skipped past the cap.
			if len(s.fwd)+5+n <= wireMaxFwd {
				if err := s.fill(5 + n); err != nil {
					return 0, c.broken(err)
				}
				s.fwd = append(s.fwd, s.buf[s.r:s.r+5+n]...)
				s.r += 5 + n
				continue
			}
			fallthrough
		case '2', 'D', 'I', 'n', 's':
			// BindComplete, DataRow (a statement returning rows: read and
			// dropped), EmptyQueryResponse, NoData, PortalSuspended need
			// nothing.
			s.r += 5
			if err := s.skip(n); err != nil {
				return 0, c.broken(err)
			}
		default:
			return 0, c.broken(fmt.Errorf("%w: unexpected message %q", errProtocol, typ))
		}
	}
}
