package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ceiling-db/ceiling/internal/target"
)

// NamespaceLockKey is the advisory lock of ceiling's namespace ("ceiling"
// in ASCII). PostgreSQL's advisory locks belong to a database, so runs on
// two databases of one server do not exclude each other.
const NamespaceLockKey int64 = 0x6365696c696e67

// LockNamespace implements target.Exclusive with a session advisory lock
// on the admin session, released when it ends (Close, or a lost session).
func (t *pgTarget) LockNamespace(ctx context.Context) error { return t.lockNamespace(ctx, false) }

// LockNamespaceShared implements target.ShardLocker with the same
// advisory lock, shared.
func (t *pgTarget) LockNamespaceShared(ctx context.Context) error { return t.lockNamespace(ctx, true) }

// lockFunc is the advisory lock function taking the lock as t holds it.
func (t *pgTarget) lockFunc(shared bool) string {
	if shared {
		return "pg_try_advisory_lock_shared"
	}
	return "pg_try_advisory_lock"
}

func (t *pgTarget) lockNamespace(ctx context.Context, shared bool) error {
	return target.RetryBusy(ctx, func() error {
		return t.withAdmin(ctx, func(c *pgx.Conn) error {
			var ok bool
			if err := c.QueryRow(ctx, "SELECT "+t.lockFunc(shared)+"($1)", NamespaceLockKey).Scan(&ok); err != nil {
				return fmt.Errorf("postgres: lock ceiling's namespace: %w", err)
			}
			if ok {
				t.locked, t.lockShared = true, shared
				return nil
			}
			return target.NamespaceBusy(lockHolder(ctx, c))
		})
	})
}

// recheckLock makes sure the admin session still holds the namespace
// lock, after the sampler's session was found lost: if the admin session
// went too, the lock went with it, and it is taken again on a new one
// (withAdmin reconnects), or, when another session took it meanwhile, the
// target's info says so. Nothing is noted while the lock is held.
func (t *pgTarget) recheckLock(ctx context.Context) {
	var note string
	_ = t.withAdmin(ctx, func(c *pgx.Conn) error {
		if !t.locked {
			return nil
		}
		var held, ok bool
		if err := c.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_locks
			WHERE locktype = 'advisory' AND granted AND pid = pg_backend_pid() AND objsubid = 1
			  AND classid::bigint = $1 AND objid::bigint = $2)`, NamespaceLockKey>>32, NamespaceLockKey&0xffffffff).Scan(&held); err != nil || held {
			return err
		}
		if err := c.QueryRow(ctx, "SELECT "+t.lockFunc(t.lockShared)+"($1)", NamespaceLockKey).Scan(&ok); err != nil {
			return err
		}
		note = target.LockNote(time.Now(), ok, func() string { return lockHolder(ctx, c) })
		return nil
	})
	if note != "" {
		t.mu.Lock()
		t.info.NamespaceLock = note
		t.mu.Unlock()
	}
}

// unlockNamespace lets go of the namespace lock on the admin session c
// before it closes, so the next ceiling finds it free at once (a closed
// session's backend lets go only as it exits, a moment later).
func (t *pgTarget) unlockNamespace(ctx context.Context, c *pgx.Conn) {
	if t.locked {
		unlock := "pg_advisory_unlock"
		if t.lockShared {
			unlock = "pg_advisory_unlock_shared"
		}
		_, _ = c.Exec(ctx, "SELECT "+unlock+"($1)", NamespaceLockKey)
		t.locked = false
	}
}

// lockHolder describes the session holding the namespace lock, or "" when
// it cannot be seen (another user's session, without pg_read_all_stats).
func lockHolder(ctx context.Context, c *pgx.Conn) string {
	var (
		pid       int32
		from, app *string
		since     *time.Time
	)
	err := c.QueryRow(ctx, `
		SELECT a.pid, host(a.client_addr), a.application_name, a.backend_start
		FROM pg_catalog.pg_locks l JOIN pg_catalog.pg_stat_activity a ON a.pid = l.pid
		WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
		  AND l.classid::bigint = $1 AND l.objid::bigint = $2
		  AND l.database = (SELECT oid FROM pg_catalog.pg_database WHERE datname = current_database())`,
		NamespaceLockKey>>32, NamespaceLockKey&0xffffffff).Scan(&pid, &from, &app, &since)
	if err != nil {
		return ""
	}
	s := fmt.Sprintf("backend pid %d", pid)
	if app != nil && *app != "" {
		s += ", " + *app
	}
	if from != nil {
		s += " from " + *from
	} else {
		s += " on a local socket"
	}
	if since != nil {
		s += ", connected " + since.UTC().Format("2006-01-02 15:04:05 UTC")
	}
	return s
}

var (
	_ target.Exclusive   = (*pgTarget)(nil)
	_ target.ShardLocker = (*pgTarget)(nil)
)
