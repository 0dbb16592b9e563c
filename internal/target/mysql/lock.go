package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/ceiling-db/ceiling/internal/target"
)

// LockNamespace implements target.Exclusive with a named lock (GET_LOCK)
// on the admin session, released when it ends (Close, or a lost session).
// Named locks are server-wide: the name carries the database, so runs on
// two databases of one server do not exclude each other. Holding it, a
// target that changed the durability setting records the value to put
// back (restore.go). Shards hold slot locks instead (LockNamespaceShared):
// the lock is not had while any slot is held.
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
		if !got.Valid || got.Int64 != 1 {
			return target.NamespaceBusy(lockHolder(ctx, c, name))
		}
		// Shards take a slot, then look at the lock; this takes the lock,
		// then looks at the slots: one of the two sees the other.
		var shardConn sql.NullInt64
		if err := c.QueryRowContext(ctx, slotsUsedSQL, slotArgs(name)...).Scan(&shardConn); err != nil {
			_, _ = c.ExecContext(ctx, "SELECT RELEASE_LOCK(?)", name)
			return fmt.Errorf("mysql: lock ceiling's namespace: %w", err)
		}
		if shardConn.Valid {
			_, _ = c.ExecContext(ctx, "SELECT RELEASE_LOCK(?)", name)
			return target.NamespaceBusy(holderText(ctx, c, shardConn.Int64) + ", a shard of a sharded run")
		}
		t.lockName = name
		t.recordDurability(ctx, c)
		return nil
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
	return holderText(ctx, c, id.Int64)
}

// holderText describes the session id: "connection 12 from host:port".
func holderText(ctx context.Context, c *sql.Conn, id int64) string {
	s := fmt.Sprintf("connection %d", id)
	var host sql.NullString
	if c.QueryRowContext(ctx, "SELECT HOST FROM information_schema.PROCESSLIST WHERE ID = ?", id).Scan(&host) == nil && host.Valid {
		s += " from " + host.String
	}
	return s
}

// lockSlots is how many shards can hold the namespace together.
const lockSlots = 128

// slotName is the k-th shard slot of the namespace lock name.
func slotName(name string, k int) string {
	s := strings.Replace(name, "ceiling.", fmt.Sprintf("ceiling#%d.", k), 1)
	if len(s) > 64 { // the longest lock name; the slot number comes first
		s = s[:64]
	}
	return s
}

// slotArgs are the slots' names, for slotsUsedSQL.
func slotArgs(name string) []any {
	args := make([]any, lockSlots)
	for k := range args {
		args[k] = slotName(name, k)
	}
	return args
}

// slotsUsedSQL returns the session holding the first slot held, NULL when
// none is.
var slotsUsedSQL = "SELECT COALESCE(" + strings.TrimSuffix(strings.Repeat("IS_USED_LOCK(?), ", lockSlots), ", ") + ")"

// LockNamespaceShared implements target.ShardLocker. MySQL's named locks
// have no shared mode: each shard holds a slot of its own (a named lock
// of lockSlots), then checks that no ceiling holds the namespace alone,
// and LockNamespace, having taken the lock, checks that no slot is held.
func (t *myTarget) LockNamespaceShared(ctx context.Context) error {
	return target.RetryBusy(ctx, func() error {
		return t.withAdmin(ctx, func(c *sql.Conn) error {
			name, err := nsLockName(ctx, c)
			if err != nil {
				return fmt.Errorf("mysql: lock ceiling's namespace for a shard: %w", err)
			}
			slot := ""
			for k := range lockSlots {
				var got sql.NullInt64
				if err := c.QueryRowContext(ctx, "SELECT GET_LOCK(?, 0)", slotName(name, k)).Scan(&got); err != nil {
					return fmt.Errorf("mysql: lock ceiling's namespace for a shard: %w", err)
				}
				if got.Valid && got.Int64 == 1 {
					slot = slotName(name, k)
					break
				}
			}
			if slot == "" {
				return fmt.Errorf("mysql: %d shards already run on this database: at most %d can", lockSlots, lockSlots)
			}
			var free sql.NullInt64
			if err := c.QueryRowContext(ctx, "SELECT IS_FREE_LOCK(?)", name).Scan(&free); err != nil || !free.Valid || free.Int64 == 0 {
				_, _ = c.ExecContext(ctx, "SELECT RELEASE_LOCK(?)", slot)
				if err != nil {
					return fmt.Errorf("mysql: check ceiling's namespace lock: %w", err)
				}
				return target.NamespaceBusy(lockHolder(ctx, c, name))
			}
			t.lockName = slot
			return nil
		})
	})
}

var (
	_ target.Exclusive   = (*myTarget)(nil)
	_ target.ShardLocker = (*myTarget)(nil)
)
