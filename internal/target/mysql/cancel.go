package mysql

import (
	"context"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/ceiling-db/ceiling/internal/target/blockio"
)

// Cancelling a worker's statement without go-sql-driver's watcher.
//
// go-sql-driver watches the context of each call from a goroutine of its
// own per connection: every statement under a cancellable context hands
// the context to that goroutine and takes it back (two channel operations,
// each waking a thread when the goroutine is parked), and database/sql adds
// a goroutine per result set. On the 2-core development VM that was about
// a quarter of the client's CPU per single-row insert (MariaDB 10.11,
// innodb_flush_log_at_trx_commit=2, two alternated 8 s runs each: 86-94
// µs per request with it against 63-72 µs without at 1 connection, 49-50
// against 34-36 µs at 4 connections, where requests per second rose by
// 14-18%). So worker sessions hand the driver a context that cannot be
// cancelled and cancel a call themselves: when the caller's context ends
// during a call, the statement is killed on the server (KILL QUERY, from
// another session) and the session's network connection is closed, which
// ends the call and the session. The driver's watcher only closed the
// connection, and the server then went on with the statement: an update
// waiting for a row lock was still applied once the lock was released.

// dialSlot asks for a worker session's network connection (in the I/O
// mode workerIO chose) and receives the one dialed.
type dialSlot struct {
	io ioMode
	nc net.Conn
}

type dialSlotKey struct{}

// recordDial is the driver's dial function: for a Connect it dials in the
// I/O mode its dialSlot asks for (blockio), otherwise as the driver would,
// and it hands the connection to the dialSlot in ctx, if any.
func recordDial(ctx context.Context, network, addr string) (net.Conn, error) {
	s, _ := ctx.Value(dialSlotKey{}).(*dialSlot)
	var (
		nc  net.Conn
		err error
	)
	mode := ioNetpoll
	if s != nil && blockio.Supported {
		mode = s.io
	}
	switch mode {
	case ioRaw:
		nc, err = blockio.DialRaw(ctx, network, addr)
	case ioMux:
		nc, err = blockio.DialMux(ctx, network, addr)
	case ioMuxPoll:
		nc, err = blockio.DialMuxPoll(ctx, network, addr)
	default:
		var d net.Dialer
		nc, err = d.DialContext(ctx, network, addr)
	}
	if err != nil {
		return nil, err
	}
	if s != nil && s.nc == nil {
		s.nc = nc
	}
	return nc, nil
}

// watch prepares a call on c under ctx. It returns the context to hand
// the driver and the function to pass the call's error to once the call
// is over (for a query, once its rows are closed), which returns the
// error to report: ctx's own error when ctx ended during the call and cut
// the connection. It returns an error when ctx has already ended. A
// session whose network connection is not known (one the pool had open)
// leaves the watching to the driver.
func (c *conn) watch(ctx context.Context) (context.Context, func(error) error, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	if c.nc == nil || ctx.Done() == nil {
		return ctx, unwatched, nil
	}
	stop := context.AfterFunc(ctx, c.cancel)
	return context.WithoutCancel(ctx), func(err error) error {
		if !stop() && err != nil && ctx.Err() != nil {
			return ctx.Err()
		}
		return err
	}, nil
}

func unwatched(err error) error { return err }

// cancel ends the statement c is running: KILL QUERY on another session
// (within killTimeout; a server that cannot be reached is not waited for
// longer), then closing c's network connection, which ends the call on the
// client whatever the server did.
func (c *conn) cancel() {
	if c.t != nil && c.id != 0 {
		ctx, stop := context.WithTimeout(context.Background(), killTimeout)
		_, _ = c.t.db.ExecContext(ctx, "KILL QUERY "+strconv.FormatInt(c.id, 10))
		stop()
	}
	_ = c.nc.Close()
}

// killTimeout bounds how long cancel waits for KILL QUERY.
const killTimeout = 2 * time.Second

// ioMode is how a worker session's connection waits for the server.
type ioMode int

const (
	// ioNetpoll: Go's netpoller, as any Go program.
	ioNetpoll ioMode = iota
	// ioRaw: blocking send and recv on the worker's own thread, holding
	// its P (blockio.DialRaw).
	ioRaw
	// ioMux: raw, and the session turns cooperative (target.Cooperative)
	// when the runner serves several workers from one thread
	// (blockio.DialMux, runner/mux.go).
	ioMux
	// ioMuxPoll: like ioMux, but until it turns cooperative the session
	// waits in poll(2), holding no P (blockio.DialMuxPoll).
	ioMuxPoll
)

// workerIO picks how worker sessions wait for the server in a run of
// workers sessions, as the PostgreSQL target does: up to maxRawWorkers
// the sessions are raw and may turn cooperative (ioMux); more of them are
// ioMuxPoll when the run will be multiplexed (target.Options.Multiplexed)
// and go through the netpoller otherwise (TPC-C's pausing virtual users,
// an open loop of more than maxOpenLoopRaw), where a thread blocked per
// session costs more; an open loop keeps them raw up to maxOpenLoopRaw,
// as the PostgreSQL target does (its workerDial says why).
// CEILING_MYSQL_IO=netpoll|raw|mux|muxpoll forces one.
//
// Raw against the netpoller, measured on the 2-core development VM,
// single-row inserts on MariaDB 10.11 with
// innodb_flush_log_at_trx_commit=2, two alternated 8 s runs each, client
// CPU per request: 72.2 and 64.5 against 26.6 and 28.5 µs at 1
// connection, 36.6/36.8 against 24.2/23.5 at 4, 27.6/30.0 against
// 21.6/20.7 at 16; TPC-C at 8 connections, NOPM 16,258 and 18,030 against
// 21,366 and 21,478. An open loop of 64 workers (direct selects at
// 2,000 and 5,000/s, three alternated 6 s runs each): service time p90
// 0.25-0.37 ms raw against 0.39-2.6 ms, 116-165 against 136-272 µs of
// client CPU per request.
func workerIO(workers int, multiplexed, openLoop bool) ioMode {
	switch os.Getenv("CEILING_MYSQL_IO") {
	case "raw":
		return ioRaw
	case "mux":
		return ioMux
	case "muxpoll":
		return ioMuxPoll
	case "netpoll":
		return ioNetpoll
	}
	switch {
	case workers <= 0:
		return ioNetpoll
	case workers <= maxRawWorkers, openLoop && workers <= maxOpenLoopRaw:
		return ioMux
	case multiplexed:
		return ioMuxPoll
	}
	return ioNetpoll
}

// maxRawWorkers bounds the worker count for which sessions are raw until
// they turn cooperative: a raw session holds a P (and a thread) while it
// waits.
const maxRawWorkers = 16

// maxOpenLoopRaw is maxRawWorkers for an open loop (workerIO).
const maxOpenLoopRaw = 64
