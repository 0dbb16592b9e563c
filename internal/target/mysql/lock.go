package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/ceiling-db/ceiling/internal/target"
)

// LockNamespace implements target.Exclusive with a named lock (GET_LOCK)
// on the admin session, released when it ends (Close, or a lost session).
// Named locks are server-wide: the name carries the database, so runs on
// two databases of one server do not exclude each other. Holding it, a
// target that changed the durability setting records the value to put
// back (restore.go).
func (t *myTarget) LockNamespace(ctx context.Context) error {
	return target.RetryBusy(ctx, func() error { return t.lockNamespace(ctx) })
}

func (t *myTarget) lockNamespace(ctx context.Context) error {
	return t.withAdmin(ctx, func(c *sql.Conn) error {
		name, err := nsLockName(ctx, c)
		if err != nil {
			return fmt.Errorf("mysql: lock ceiling's namespace: %w", err)
		}
		var got sql.NullInt64
		if err := c.QueryRowContext(ctx, "SELECT GET_LOCK(?, 0)", name).Scan(&got); err != nil {
			return fmt.Errorf("mysql: lock ceiling's namespace: %w", err)
		}
		if got.Valid && got.Int64 == 1 {
			t.lockName = name
			t.recordDurability(ctx, c)
			return nil
		}
		return target.NamespaceBusy(lockHolder(ctx, c, name))
	})
}

// recheckLock makes sure the admin session still holds the namespace
// lock, after the sampler's session was found lost: if the admin session
// went too, the lock went with it, and it is taken again on a new one
// (withAdmin reconnects), or, when another session took it meanwhile, the
// target's info says so. Nothing is noted while the lock is held.
func (t *myTarget) recheckLock(ctx context.Context) {
	var note string
	_ = t.withAdmin(ctx, func(c *sql.Conn) error {
		if t.lockName == "" {
			return nil
		}
		var mine sql.NullInt64
		if err := c.QueryRowContext(ctx, "SELECT IS_USED_LOCK(?) = CONNECTION_ID()", t.lockName).Scan(&mine); err != nil || mine.Int64 == 1 {
			return err
		}
		var got sql.NullInt64
		if err := c.QueryRowContext(ctx, "SELECT GET_LOCK(?, 0)", t.lockName).Scan(&got); err != nil {
			return err
		}
		note = target.LockNote(time.Now(), got.Valid && got.Int64 == 1, func() string { return lockHolder(ctx, c, t.lockName) })
		return nil
	})
	if note != "" {
		t.mu.Lock()
		t.info.NamespaceLock = note
		t.mu.Unlock()
	}
}

// unlockNamespace lets go of the namespace lock on the admin session c
// before it closes, so the next ceiling finds it free at once.
func (t *myTarget) unlockNamespace(ctx context.Context, c *sql.Conn) {
	if t.lockName != "" {
		_, _ = c.ExecContext(ctx, "SELECT RELEASE_LOCK(?)", t.lockName)
		t.lockName = ""
	}
}

// lockHolder describes the session holding the lock name, or "" when it
// cannot be told.
func lockHolder(ctx context.Context, c *sql.Conn, name string) string {
	var id sql.NullInt64
	if err := c.QueryRowContext(ctx, "SELECT IS_USED_LOCK(?)", name).Scan(&id); err != nil || !id.Valid {
		return ""
	}
	s := fmt.Sprintf("connection %d", id.Int64)
	var host sql.NullString
	if c.QueryRowContext(ctx, "SELECT HOST FROM information_schema.PROCESSLIST WHERE ID = ?", id.Int64).Scan(&host) == nil && host.Valid {
		s += " from " + host.String
	}
	return s
}

// LockNamespaceShared implements target.ShardLocker as far as MySQL's
// named locks allow: they have no shared mode, so a shard only checks
// that no other ceiling holds the database now (a ceiling that starts
// while the shards run is not kept off).
func (t *myTarget) LockNamespaceShared(ctx context.Context) error {
	return target.RetryBusy(ctx, func() error {
		return t.withAdmin(ctx, func(c *sql.Conn) error {
			name, err := nsLockName(ctx, c)
			if err != nil {
				return fmt.Errorf("mysql: check ceiling's namespace lock: %w", err)
			}
			var free sql.NullInt64
			if err := c.QueryRowContext(ctx, "SELECT IS_FREE_LOCK(?)", name).Scan(&free); err != nil {
				return fmt.Errorf("mysql: check ceiling's namespace lock: %w", err)
			}
			if free.Valid && free.Int64 == 0 {
				return target.NamespaceBusy(lockHolder(ctx, c, name))
			}
			return nil
		})
	})
}

var (
	_ target.Exclusive   = (*myTarget)(nil)
	_ target.ShardLocker = (*myTarget)(nil)
)
