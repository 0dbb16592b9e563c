package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ceiling-db/ceiling/internal/osstat"
	"github.com/ceiling-db/ceiling/internal/target"
)

// Connection poolers (PgBouncer, Pgpool-II, Odyssey, pgcat, cloud
// providers' proxies) sit between ceiling and the server. A session
// through one announces the pooler's own process id at start-up
// (BackendKeyData), not the server backend's: the two differ where a
// pooler is there, and agree where ceiling talks to the server itself.
//
// In session mode a client session keeps one server connection for its
// whole life, and everything ceiling does works as it does directly. In
// transaction or statement mode the pooler hands each transaction to
// whichever server connection is free: ceiling's statements, prepared
// once per session, meet sessions that never prepared them or that
// already have them ("prepared statement \"ceiling_0\" already exists",
// nearly half of the requests of single inserts through PgBouncer at 4
// connections), the namespace lock is taken on one server connection and
// left there, and no session's waits can be told apart. Open refuses
// those modes with a one-line error.

// backendPID is the pid of the server backend that runs c's queries,
// asked with the simple protocol (no statement prepared, whatever the
// pooler's mode).
func backendPID(ctx context.Context, c *pgx.Conn) (int64, error) {
	var pid int64
	err := c.QueryRow(ctx, "SELECT pg_backend_pid()", pgx.QueryExecModeSimpleProtocol).Scan(&pid)
	return pid, err
}

// checkPooler finds whether admin's session goes through a pooler and,
// if so, whether the pooler keeps a server connection per session. Up to
// poolerHolders more sessions each open a transaction, which holds a
// server connection, and admin asks for its backend after each. Directly,
// or in session mode, admin keeps its own backend all along and no other
// session gets it. In transaction mode admin's backend is free between
// its queries, so a holder gets it (PgBouncer hands out the server
// connection freed last, or with server_round_robin the one idle
// longest: the holders take the idle ones until admin's comes round) and
// admin's next query runs elsewhere; in statement mode the pooler refuses
// the transaction. It returns admin's backend pid and whether a pooler is
// there, or an error naming the problem.
func (t *pgTarget) checkPooler(ctx context.Context, admin *pgx.Conn) (pid int64, pooled bool, err error) {
	pid, err = backendPID(ctx, admin)
	if err != nil {
		return 0, false, fmt.Errorf("postgres: read the server backend's pid: %w", err)
	}
	if pid == int64(admin.PgConn().PID()) {
		return pid, false, nil
	}
	var holders []*pgx.Conn
	defer func() {
		for _, h := range holders {
			closeSession(ctx, h) // ends its transaction too
		}
	}()
	for range poolerHolders {
		h, err := t.connect(ctx, t.scfg)
		if err != nil {
			return 0, false, err
		}
		holders = append(holders, h)
		// In session mode with every server connection of the pool held
		// (a small pool, ceiling's admin session among them), a new
		// session waits for one until another session ends: the holders
		// then stop, in transaction mode they would have had admin's.
		hctx, cancel := context.WithTimeout(ctx, poolerHoldWait)
		_, err = h.Exec(hctx, "BEGIN", pgx.QueryExecModeSimpleProtocol)
		full := err != nil && ctx.Err() == nil && hctx.Err() != nil
		cancel()
		if full {
			break
		}
		if err != nil {
			var pgErr *pgconn.PgError
			if errors.As(err, &pgErr) {
				// PgBouncer in statement mode: "transaction blocks not
				// allowed in statement pooling mode".
				return 0, false, t.poolerRefusal("a transaction block was refused: " + oneLine(target.Scrub(err.Error(), t.dsn)))
			}
			return 0, false, fmt.Errorf("postgres: check the connection pooler: %w", err)
		}
		held, err := backendPID(ctx, h)
		if err != nil {
			return 0, false, fmt.Errorf("postgres: check the connection pooler: %w", err)
		}
		now, err := backendPID(ctx, admin)
		if err != nil {
			return 0, false, fmt.Errorf("postgres: check the connection pooler: %w", err)
		}
		if held == pid || now != pid {
			return 0, false, t.poolerRefusal(fmt.Sprintf("another session's transaction got the server backend one session had run on (%d), which then ran on %d", pid, now))
		}
	}
	return pid, true, nil
}

// poolerHolders is how many sessions checkPooler opens, at most, to find
// a pooler in transaction mode; poolerHoldWait how long each waits for a
// server connection.
const (
	poolerHolders  = 4
	poolerHoldWait = 2 * time.Second
)

// poolerRefusal is Open's error for a pooler in transaction or statement
// mode (why: what showed it).
func (t *pgTarget) poolerRefusal(why string) error {
	return &openError{msg: "postgres: connect to " + t.redactedDSN() + ": the sessions go through a connection pooler in transaction or statement mode (" + why +
		"): ceiling's sessions need a server connection each for their whole life (statements prepared once, the namespace lock, each session's waits); connect to the server itself, or through the pooler in session mode (PgBouncer: pool_mode = session)"}
}

// sharedStatements says whether err is the server not finding a statement
// the session prepared (SQLSTATE 26000), as through a pooler that runs a
// session's transactions on other server connections.
func sharedStatements(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "26000"
}

// localBackend says whether pid is a PostgreSQL backend on this host: the
// server behind a pooler on this host may be on another.
func localBackend(pid int64) bool {
	st, err := osstat.ReadPidStat(int(pid))
	return err == nil && st.Comm == "postgres"
}

// checkDurability makes sure c's session runs with the synchronous_commit
// the run asked for (want). The setting goes in the start-up packet (no
// extra round trip per request), but a pooler may drop start-up
// parameters it does not know (PgBouncer's ignore_startup_parameters) or
// refuse them; there, or where the value read back differs, it is set
// with SET on the session, and a session that still differs is an
// error: ceiling never reports a durability the server did not run. It
// returns whether SET was needed.
func checkDurability(ctx context.Context, c *pgx.Conn, want string) (set bool, err error) {
	var got string
	if err := c.QueryRow(ctx, "SHOW synchronous_commit", pgx.QueryExecModeSimpleProtocol).Scan(&got); err != nil {
		return false, fmt.Errorf("postgres: read the session's synchronous_commit: %w", err)
	}
	if got == want {
		return false, nil
	}
	if _, err := c.Exec(ctx, "SET synchronous_commit = "+want, pgx.QueryExecModeSimpleProtocol); err != nil {
		return true, fmt.Errorf("postgres: set synchronous_commit = %s on a session (it had %s): %w", want, got, err)
	}
	if err := c.QueryRow(ctx, "SHOW synchronous_commit", pgx.QueryExecModeSimpleProtocol).Scan(&got); err != nil {
		return true, fmt.Errorf("postgres: read the session's synchronous_commit: %w", err)
	}
	if got != want {
		return true, fmt.Errorf("postgres: a session's synchronous_commit is %s after SET synchronous_commit = %s", got, want)
	}
	return true, nil
}

// startupRefused returns a pooler's refusal of the start-up parameter
// param (PgBouncer: "unsupported startup parameter: synchronous_commit"),
// or "" where err is none.
func startupRefused(err error, param string) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && strings.Contains(pgErr.Message, "startup parameter") && strings.Contains(pgErr.Message, param) {
		return pgErr.Message
	}
	return ""
}

// setDurabilityNote records what happened to the durability setting (the
// result's target.durability.note).
func (t *pgTarget) setDurabilityNote(note string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.info.Durability.Note != "" {
		if strings.Contains(t.info.Durability.Note, note) {
			return
		}
		note = t.info.Durability.Note + "; " + note
	}
	t.info.Durability.Note = note
}

// sessionPID is the pid of c's server backend: the one its session
// announced, or through a pooler, the one the server names (0 if it
// cannot be read).
func (t *pgTarget) sessionPID(ctx context.Context, c *pgx.Conn) int64 {
	if !t.pooled {
		return int64(c.PgConn().PID())
	}
	pid, err := backendPID(ctx, c)
	if err != nil {
		return 0
	}
	return pid
}

// poolerAssignWait is how long a worker's session through a pooler may
// wait for its server connection before Connect gives up.
const poolerAssignWait = 5 * time.Second

// checkAssigned makes sure a worker's session through a pooler got a
// server connection. In session mode a pool whose server connections are
// all held by other sessions (ceiling's own included) makes a new session
// wait until one ends, which in a run is its end: the worker would wait
// the whole run (seen: -c 24 through PgBouncer's default pool of 20, 7
// workers never ran, and the result said 24 threads).
func (t *pgTarget) checkAssigned(ctx context.Context, c *pgx.Conn) error {
	actx, cancel := context.WithTimeout(ctx, poolerAssignWait)
	defer cancel()
	if _, err := backendPID(actx, c); err != nil {
		if ctx.Err() == nil && actx.Err() != nil {
			return fmt.Errorf("postgres: connect to %s: %w within %v: its pool is smaller than ceiling's sessions (the workers and ceiling's own 2-3), all holding theirs in session mode; raise the pool's size (PgBouncer: default_pool_size, max_db_connections) or lower -c", t.redactedDSN(), target.ErrPoolerFull, poolerAssignWait)
		}
		return fmt.Errorf("postgres: connect: %w", err)
	}
	return nil
}

// checkSession checks a new worker session before its first request:
// through a pooler, that it got a server connection (checkAssigned); at
// --durability full or relaxed, that it runs with the setting asked for
// (checkDurability), noting the first time SET had to put it there.
func (t *pgTarget) checkSession(ctx context.Context, c *pgx.Conn) error {
	if t.pooled {
		if err := t.checkAssigned(ctx, c); err != nil {
			return err
		}
	}
	if t.during == "" {
		return nil
	}
	set, err := checkDurability(ctx, c, t.during)
	if err != nil {
		return err
	}
	if set && !t.durBySET.Load() {
		t.setDurabilityNote("synchronous_commit=" + t.during + " sent in the sessions' start-up packets did not reach the server (a connection pooler that drops start-up parameters?): set with SET on each session")
		t.durBySET.Store(true)
	}
	return nil
}

// closeSession closes c within closeTimeout, also once ctx is done.
func closeSession(ctx context.Context, c *pgx.Conn) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), closeTimeout)
	defer cancel()
	_ = c.Close(cctx)
}
