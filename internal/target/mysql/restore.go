package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"time"
)

// durabilityTable holds, while a run has innodb_flush_log_at_trx_commit
// changed, the value to put back: one row per setting, written once the
// run holds the namespace lock and dropped when Close has restored the
// value. A process that is killed (SIGKILL, the OOM killer, a crashed
// client host) leaves the row behind, and the next ceiling opening the
// same database with the lock free puts the value back (recoverDurability).
// It is one of ceiling's marked tables, so cleanup may drop it.
const durabilityTable = Prefix + "durability"

// nsLockName is the namespace lock's name for the session's database: the
// lock is server-wide, so the name carries the database.
func nsLockName(ctx context.Context, c *sql.Conn) (string, error) {
	var db sql.NullString
	if err := c.QueryRowContext(ctx, "SELECT DATABASE()").Scan(&db); err != nil {
		return "", err
	}
	name := "ceiling." + db.String
	if len(name) > 64 { // the longest lock name
		name = name[:64]
	}
	return name, nil
}

// recoverDurability puts innodb_flush_log_at_trx_commit back where a
// ceiling that ended without restoring it left it, and returns what it did
// ("" when there was nothing to do). A marker row is stale when no session
// holds the database's namespace lock (the run that wrote it holds the
// lock until it ends); the value is restored only when it is still what
// that run set, since a value changed since is someone's choice. The
// marker is dropped either way. Failures to read the marker are not an
// error: it is a safety net, and Open goes on without it.
func (t *myTarget) recoverDurability(ctx context.Context) (note string) {
	_ = t.withAdmin(ctx, func(c *sql.Conn) error {
		if st, err := tableState(ctx, c, durabilityTable); err != nil || st != ours {
			return err
		}
		name, err := nsLockName(ctx, c)
		if err != nil {
			return err
		}
		var holder sql.NullInt64
		if err := c.QueryRowContext(ctx, "SELECT IS_USED_LOCK(?)", name).Scan(&holder); err != nil || holder.Valid {
			return err // a ceiling is running on this database: its marker
		}
		var before, during, by string
		var at sql.NullString
		err = c.QueryRowContext(ctx, "SELECT before_value, during_value, set_by, CAST(set_at AS CHAR) FROM "+durabilityTable+
			" WHERE setting = ?", durabilitySetting).Scan(&before, &during, &by, &at)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		if err == nil {
			now, err := t.readDurability(ctx, c)
			if err != nil {
				return err
			}
			who := fmt.Sprintf("a ceiling run (%s, at %s UTC) that ended without restoring it", by, at.String)
			switch {
			case now == before:
				// Restored, and the marker's drop was what failed.
			case now != during:
				note = fmt.Sprintf("%s was set to %s by %s; it is %s now, changed since, and was left as it is", durabilitySetting, during, who, now)
			default:
				if _, err := c.ExecContext(ctx, "SET GLOBAL "+durabilitySetting+" = "+before); err != nil {
					note = fmt.Sprintf("%s was left at %s by %s; putting back %s failed: %v (run SET GLOBAL %s = %s by hand)",
						durabilitySetting, during, who, before, err, durabilitySetting, before)
					return nil // keep the marker for a later try
				}
				note = fmt.Sprintf("%s was left at %s by %s; ceiling put back its value from before, %s", durabilitySetting, during, who, before)
			}
		}
		return dropTables(ctx, c, []string{durabilityTable})
	})
	return note
}

// recordDurability writes the marker row of durabilityTable on the admin
// session c, which holds the namespace lock; called when the lock is taken
// and Open changed the setting. A failure (no CREATE privilege) is a
// note: the run goes on, with the restore resting on Close alone.
func (t *myTarget) recordDurability(ctx context.Context, c *sql.Conn) {
	t.mu.Lock()
	changed, before, during := t.changed, t.info.Durability.Before, t.info.Durability.During
	t.mu.Unlock()
	if !changed {
		return
	}
	err := func() error {
		switch st, err := tableState(ctx, c, durabilityTable); {
		case err != nil:
			return err
		case st == foreign:
			return foreignTable(durabilityTable)
		case st == missing:
			q := "CREATE TABLE " + durabilityTable + " (setting VARCHAR(64) PRIMARY KEY, before_value VARCHAR(64) NOT NULL, " +
				"during_value VARCHAR(64) NOT NULL, set_by VARCHAR(255) NOT NULL, set_at DATETIME NOT NULL) COMMENT = '" + tableComment + "'"
			if _, err := c.ExecContext(ctx, q); err != nil {
				return err
			}
		}
		host, _ := os.Hostname()
		by := fmt.Sprintf("pid %d on %s", os.Getpid(), host)
		_, err := c.ExecContext(ctx, "REPLACE INTO "+durabilityTable+" VALUES (?, ?, ?, ?, ?)",
			durabilitySetting, before, during, by, time.Now().UTC().Format(time.DateTime))
		return err
	}()
	t.mu.Lock()
	defer t.mu.Unlock()
	if err != nil {
		t.addDurabilityNote(fmt.Sprintf("the value to restore could not be recorded on the server (%v): if ceiling is killed, run SET GLOBAL %s = %s by hand", oneLine(err.Error()), durabilitySetting, before))
		return
	}
	t.recorded = true
}

// forgetDurability drops the marker once Close has restored the setting.
func (t *myTarget) forgetDurability(ctx context.Context, c *sql.Conn) error {
	t.mu.Lock()
	recorded := t.recorded
	t.mu.Unlock()
	if !recorded {
		return nil
	}
	if err := dropTables(ctx, c, []string{durabilityTable}); err != nil {
		return err
	}
	t.mu.Lock()
	t.recorded = false
	t.mu.Unlock()
	return nil
}

// addDurabilityNote appends to the durability's note; t.mu is held.
func (t *myTarget) addDurabilityNote(note string) {
	if t.info.Durability.Note != "" {
		note = t.info.Durability.Note + "; " + note
	}
	t.info.Durability.Note = note
}
