package mysql

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"github.com/ceiling-db/ceiling/internal/target"
)

// lockTablesQuery lists the tables InnoDB's waiting row-lock requests are
// for, with how many transactions wait on each (MariaDB and MySQL 5.7:
// information_schema; MySQL 8 moved them to performance_schema.data_locks,
// not read here). A transaction waiting behind two holders has two rows.
const lockTablesQuery = `SELECT l.lock_table, COUNT(DISTINCT w.requesting_trx_id)
	FROM information_schema.INNODB_LOCK_WAITS w
	JOIN information_schema.INNODB_LOCKS l ON l.lock_id = w.requested_lock_id
	GROUP BY l.lock_table`

// lockTables attributes InnoDB's row-lock waits to ceiling's tables: at
// each sample (once per interval, unlike PostgreSQL's sampler) the waits
// at that moment, each credited with the time since the previous sample
// (target.CtrLockTablePrefix). A rough share, taken at one instant per
// interval; the lock-wait time itself comes from the server's counters.
type lockTables struct {
	prefix string // "`db`.`ceiling_": the lock_table of ceiling's tables
	ms     map[string]float64
	last   time.Time
}

// probeLockTables returns a lockTables when the server lists its lock
// waits (and the user may read them: PROCESS), or nil and what is missing.
func probeLockTables(ctx context.Context, c *sql.Conn, db string) (*lockTables, string) {
	rows, err := c.QueryContext(ctx, lockTablesQuery)
	switch {
	case denied(err):
		return nil, "the tables of row-lock waits (information_schema.INNODB_LOCK_WAITS needs the PROCESS privilege)"
	case err != nil:
		return nil, "the tables of row-lock waits (information_schema.INNODB_LOCK_WAITS: " + firstLine(err.Error()) + ")"
	}
	rows.Close()
	return &lockTables{prefix: "`" + db + "`.`" + Prefix, ms: map[string]float64{}}, ""
}

// read adds the cumulative per-table lock-wait counters to out. A failed
// read skips this sample's credit (the next covers its time).
func (l *lockTables) read(ctx context.Context, c *sql.Conn, out map[string]float64) {
	now := time.Now()
	rows, err := c.QueryContext(ctx, lockTablesQuery)
	if err == nil {
		var tb string
		var n float64
		for rows.Next() {
			if rows.Scan(&tb, &n) != nil || !strings.HasPrefix(tb, l.prefix) || l.last.IsZero() {
				continue
			}
			name := strings.Trim(tb[len(l.prefix)-len(Prefix):], "`")
			l.ms[name] += n * float64(now.Sub(l.last).Milliseconds())
		}
		err = rows.Close()
	}
	if err == nil {
		l.last = now
	}
	for tb, ms := range l.ms {
		out[target.CtrLockTablePrefix+tb] = ms
	}
}

// firstLine is s up to its first newline.
func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
