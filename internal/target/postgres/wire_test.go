package postgres

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/ceiling-db/ceiling/internal/target"
)

// TestAppendExchange: the bytes execWire sends are the Bind, Execute and
// Sync that pgproto3 encodes for the same statement and parameters (NULL
// included), with no parameter or result format codes.
func TestAppendExchange(t *testing.T) {
	params := [][]byte{[]byte("42"), nil, []byte(""), []byte("some text")}
	got := appendExchange([]byte("prefix"), "ceiling_3", params)
	if !bytes.HasPrefix(got, []byte("prefix")) {
		t.Fatalf("appendExchange dropped what the buffer held: %q", got)
	}
	var want []byte
	var err error
	for _, m := range []pgproto3.FrontendMessage{
		&pgproto3.Bind{PreparedStatement: "ceiling_3", Parameters: params},
		&pgproto3.Execute{},
		&pgproto3.Sync{},
	} {
		if want, err = m.Encode(want); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(got[len("prefix"):], want) {
		t.Fatalf("appendExchange:\n got %q\nwant %q", got[len("prefix"):], want)
	}
}

// TestSessConnLeftover: bytes execWire read past its reply are served to
// the next reader before the socket, and any read marks the connection
// dirty; fill reassembles a message split across reads and grows the
// buffer for one larger than it; skip drops a body that spans reads.
func TestSessConnLeftover(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	s := &sessConn{Conn: a, buf: make([]byte, 8)}
	copy(s.buf, "leftover")
	s.r, s.w = 4, 8
	go func() { _, _ = b.Write([]byte("socket")) }()
	p := make([]byte, 16)
	n, err := s.Read(p)
	if err != nil || string(p[:n]) != "over" {
		t.Fatalf("first Read = %q, %v; want the leftover %q", p[:n], err, "over")
	}
	if !s.dirty.Load() {
		t.Fatal("a Read did not mark the connection dirty")
	}
	n, err = s.Read(p)
	if err != nil || string(p[:n]) != "socket" {
		t.Fatalf("second Read = %q, %v; want the socket's %q", p[:n], err, "socket")
	}

	// A 20-byte message arriving in pieces, into an 8-byte buffer.
	msg := append([]byte{'E', 0, 0, 0, 19}, bytes.Repeat([]byte{'x'}, 15)...)
	go func() {
		for _, part := range [][]byte{msg[:3], msg[3:11], msg[11:]} {
			_, _ = b.Write(part)
		}
	}()
	s.r, s.w = 0, 0
	if err := s.fill(5); err != nil {
		t.Fatal(err)
	}
	if err := s.fill(len(msg)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(s.buf[s.r:s.r+len(msg)], msg) || len(s.buf) < len(msg) {
		t.Fatalf("fill: buffer %q (len %d), want the whole message %q", s.buf[s.r:s.w], len(s.buf), msg)
	}
	s.r += len(msg)

	// A body of 30 bytes to skip, then the next message's first byte.
	go func() {
		_, _ = b.Write(bytes.Repeat([]byte{'y'}, 20))
		_, _ = b.Write(append(bytes.Repeat([]byte{'y'}, 10), 'Z'))
	}()
	if err := s.skip(30); err != nil {
		t.Fatal(err)
	}
	if err := s.fill(1); err != nil || s.buf[s.r] != 'Z' {
		t.Fatalf("after skip: %q, %v; want the next message's 'Z'", s.buf[s.r:s.w], err)
	}
	s.r++

	// The socket closing in the middle of a message.
	go func() { _, _ = b.Write([]byte{'C', 0}); b.Close() }()
	if err := s.fill(5); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("fill on a truncated message: %v, want io.ErrUnexpectedEOF", err)
	}
}

// TestExecWireSharesSession: the wire path and pgx take turns on one
// session without losing bytes: asynchronous notifications arriving while
// the session is idle are read by whichever comes next, bytes the wire
// path read past its reply reach pgx (a ParameterStatus placed there shows
// up in pgconn), so do the asynchronous messages within its exchange, and
// every result is right. The pgproto3 path
// (CEILING_PG_WIRE=pgproto3) runs the same sequence.
func TestExecWireSharesSession(t *testing.T) {
	dsn := testDB(t, "ceiling_test_pg")
	for _, path := range []string{"wire", "pgproto3"} {
		t.Run(path, func(t *testing.T) {
			defer func(old bool) { wireOff = old }(wireOff)
			wireOff = path == "pgproto3"
			tg := openTarget(t, dsn, target.DurabilityServer)
			ctx := testCtx(t)
			if err := tg.Schema().CreateTable(ctx, "wire", "id bigint PRIMARY KEY, v text"); err != nil {
				t.Fatal(err)
			}
			defer tg.Schema().DropTable(context.Background(), "wire")
			c := connect(t, tg).(*conn)
			if (c.sess != nil) != (path == "wire") {
				t.Fatalf("path %s: session has the wire path: %v", path, c.sess != nil)
			}
			admin := connect(t, tg).(*conn)
			table := tg.Dialect().Table("wire")
			ins := "INSERT INTO " + table + " VALUES ($1, $2)"
			if _, err := c.c.Exec(ctx, "LISTEN ceiling_wire_test"); err != nil {
				t.Fatal(err)
			}
			notify := func() {
				t.Helper()
				if _, err := admin.c.Exec(ctx, "NOTIFY ceiling_wire_test, 'payload'"); err != nil {
					t.Fatal(err)
				}
				time.Sleep(50 * time.Millisecond) // delivered to the idle listener's socket
			}
			for i := int64(1); i <= 6; i++ {
				notify()
				if n, err := c.Exec(ctx, ins, i, "row"); err != nil || n != 1 {
					t.Fatalf("insert %d after a notification: %d rows, %v", i, n, err)
				}
				notify()
				if got := queryString(t, c, "SELECT count(*)::text FROM "+table); got != strconv.FormatInt(i, 10) {
					t.Fatalf("pgx query after insert %d: %s rows", i, got)
				}
				if i%2 == 0 {
					if err := c.Begin(ctx); err != nil {
						t.Fatal(err)
					}
					if n, err := c.Exec(ctx, "UPDATE "+table+" SET v = $2 WHERE id <= $1", i, "upd"); err != nil || n != i {
						t.Fatalf("update in a transaction: %d rows, %v; want %d", n, err, i)
					}
					if err := c.Commit(ctx); err != nil {
						t.Fatal(err)
					}
				}
			}
			if got := queryString(t, c, "SELECT count(*)::text FROM "+table+" WHERE v = 'upd'"); got != "6" {
				t.Fatalf("updated rows: %s, want 6", got)
			}
			if c.sess == nil {
				return
			}

			// Bytes the wire path read past its reply: pgx must see them.
			if _, err := c.Exec(ctx, "DELETE FROM "+table+" WHERE id = $1", int64(1)); err != nil {
				t.Fatal(err)
			}
			ps := []byte{'S', 0, 0, 0, 0}
			ps = append(ps, "application_name\x00from-leftover\x00"...)
			binary.BigEndian.PutUint32(ps[1:], uint32(len(ps)-1))
			s := c.sess
			s.w = copy(s.buf, ps)
			s.r = 0
			if got := queryString(t, c, "SELECT count(*)::text FROM "+table); got != "5" {
				t.Fatalf("pgx query after the leftover: %s rows, want 5", got)
			}
			if got := c.c.PgConn().ParameterStatus("application_name"); got != "from-leftover" {
				t.Fatalf("pgconn's application_name = %q: the leftover ParameterStatus did not reach it", got)
			}
			if n, err := c.Exec(ctx, "DELETE FROM "+table+" WHERE id = $1", int64(2)); err != nil || n != 1 {
				t.Fatalf("wire delete after pgx read the leftover: %d, %v", n, err)
			}

			// Asynchronous messages the server sends within a wire exchange
			// (a reported parameter set by the statement, a notification to
			// the session itself, which listens) reach pgx when it next
			// reads; wire exchanges in between leave them alone.
			if n, err := c.Exec(ctx, "SELECT pg_notify('ceiling_wire_test', 'self'), set_config('application_name', 'via-wire', false)"); err != nil || n != 1 {
				t.Fatalf("wire statement raising a notification and a parameter report: %d rows, %v", n, err)
			}
			if len(s.fwd) == 0 {
				t.Fatal("the wire exchange kept nothing for pgconn")
			}
			if n, err := c.Exec(ctx, "DELETE FROM "+table+" WHERE id = $1", int64(3)); err != nil || n != 1 {
				t.Fatalf("wire delete with messages waiting for pgconn: %d, %v", n, err)
			}
			if got := queryString(t, c, "SELECT count(*)::text FROM "+table); got != "3" {
				t.Fatalf("pgx query after the forwarded messages: %s rows, want 3", got)
			}
			if got := c.c.PgConn().ParameterStatus("application_name"); got != "via-wire" {
				t.Errorf("pgconn's application_name = %q after set_config on the wire path, want via-wire", got)
			}
			for {
				wctx, cancel := context.WithTimeout(ctx, 2*time.Second)
				nt, err := c.c.WaitForNotification(wctx)
				cancel()
				if err != nil {
					t.Fatalf("the notification raised on the wire path did not reach pgx: %v", err)
				}
				if nt.Payload == "self" {
					break
				}
			}
			if n, err := c.Exec(ctx, "DELETE FROM "+table+" WHERE id = $1", int64(4)); err != nil || n != 1 {
				t.Fatalf("wire delete after pgx read the forwarded messages: %d, %v", n, err)
			}

			// A statement raising notices without end keeps at most
			// wireMaxFwd bytes of them for pgconn, whole messages only.
			if _, err := c.Exec(ctx, "DO $$ BEGIN FOR i IN 1..20000 LOOP RAISE NOTICE '%', repeat('x', 100); END LOOP; END $$"); err != nil {
				t.Fatalf("wire statement raising 20,000 notices: %v", err)
			}
			if len(s.fwd) > wireMaxFwd || len(s.fwd) < wireMaxFwd/2 {
				t.Errorf("kept %d bytes of notices for pgconn, want at most %d and most of it", len(s.fwd), wireMaxFwd)
			}
			if got := queryString(t, c, "SELECT count(*)::text FROM "+table); got != "2" {
				t.Fatalf("pgx query after the kept notices: %s rows, want 2", got)
			}
			if len(s.fwd) != 0 {
				t.Errorf("pgx left %d bytes of the kept notices unread", len(s.fwd))
			}
		})
	}
}
