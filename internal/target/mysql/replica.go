package mysql

import (
	"context"
	"database/sql"
	"strconv"

	"github.com/ceiling-db/ceiling/internal/target"
)

// replicaPos follows a replica's execution position in its primary's
// binary log (SHOW REPLICA STATUS), adding up the bytes of it applied as
// target.CtrReplayBytes: the primary's changes the replica applied beside
// a run's reads, with whose work the reads competed. Used by the sampler
// only (under sampleMu).
type replicaPos struct {
	file     string
	pos      float64
	total    float64
	started  bool
	showStmt string // the statement this server takes
}

// replicaStatus finds whether the server of c is a replica: a row of
// SHOW REPLICA STATUS (MySQL 8.0.22+, MariaDB 10.5+) or SHOW SLAVE STATUS
// (older ones). It returns nil when it is none, or may not be asked
// (REPLICATION CLIENT, SLAVE MONITOR).
func replicaStatus(ctx context.Context, c *sql.Conn) *replicaPos {
	for _, stmt := range []string{"SHOW REPLICA STATUS", "SHOW SLAVE STATUS"} {
		r := &replicaPos{showStmt: stmt}
		found, err := r.read(ctx, c, nil)
		if err == nil {
			if found {
				return r
			}
			return nil
		}
	}
	return nil
}

// read takes the replica's position now and, with out, stores the bytes
// applied since the first reading there. found is false when the server
// has no replication set up (any more).
func (r *replicaPos) read(ctx context.Context, c *sql.Conn, out map[string]float64) (found bool, err error) {
	rows, err := c.QueryContext(ctx, r.showStmt)
	if err != nil {
		return false, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return false, err
	}
	if !rows.Next() {
		return false, rows.Err()
	}
	vals := make([]sql.RawBytes, len(cols))
	dest := make([]any, len(cols))
	for i := range vals {
		dest[i] = &vals[i]
	}
	if err := rows.Scan(dest...); err != nil {
		return false, err
	}
	file, pos, have := "", 0.0, 0
	for i, col := range cols {
		switch col {
		case "Relay_Master_Log_File", "Relay_Source_Log_File":
			file, have = string(vals[i]), have+1
		case "Exec_Master_Log_Pos", "Exec_Source_Log_Pos":
			pos, _ = strconv.ParseFloat(string(vals[i]), 64)
			have++
		}
	}
	if have < 2 {
		return false, rows.Err()
	}
	if out != nil {
		switch {
		case !r.started:
			r.started = true
		case file == r.file:
			r.total += max(pos-r.pos, 0)
		default: // the next binary log: from its start (the last one's tail is not counted)
			r.total += pos
		}
		r.file, r.pos = file, pos
		out[target.CtrReplayBytes] = r.total
	}
	return true, rows.Err()
}
