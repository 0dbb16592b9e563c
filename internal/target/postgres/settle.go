package postgres

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/ceiling-db/ceiling/internal/target"
)

// WorkerAppName is the application_name of this process's worker sessions
// (unless the DSN sets its own): "ceiling-worker-PID", so that the wait
// sampler, the settling at the end and the split of the server's CPU tell
// this run's sessions from another ceiling's on the same server.
var WorkerAppName = fmt.Sprintf("ceiling-worker-%d", os.Getpid())

var _ target.Settler = (*pgTarget)(nil)

// pooledStatsWait is how long Settle waits, through a connection pooler,
// for the backends that served the workers to publish their statistics.
const pooledStatsWait = 10500 * time.Millisecond

// Settle implements target.Settler: it waits (up to two seconds) until the
// closed worker sessions have left pg_stat_activity. A PostgreSQL backend
// publishes its pending statistics (WAL, commits, blocks) when it exits, so
// after this the final sample covers the whole run. The wait sampler's
// session is ended the same way (the next Sample resumes it), so that its
// rounds, which the commits counter leaves out, are all in the server's
// count too.
func (t *pgTarget) Settle(ctx context.Context) error {
	app := t.wcfg.RuntimeParams["application_name"]
	if app != WorkerAppName {
		return nil // cannot tell our workers apart: do not wait on others
	}
	var waitsPid uint32
	if w := t.runningWaits(); w != nil {
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		waitsPid, _ = w.pause(pctx) // best effort, as below
		cancel()
	}
	if t.pooled {
		// A pooler keeps the server connections open after the sessions
		// end: a backend publishes what it gathered since its last
		// publication (at most a second's worth, PGSTAT_MIN_INTERVAL)
		// once it has idled for PGSTAT_IDLE_INTERVAL, 10 s, not at exit
		// (seen through PgBouncer: a quarter of the commits of a 4 s run
		// arrived 9-11 s after it).
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pooledStatsWait):
		}
		return t.flushSampler(ctx)
	}
	deadline := time.Now().Add(2 * time.Second)
	for {
		n, err := t.countBackends(ctx, app, waitsPid)
		if err != nil {
			return fmt.Errorf("postgres: settle: %w", err)
		}
		if n == 0 || time.Now().After(deadline) {
			return t.flushSampler(ctx)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// countBackends counts this database's sessions named app, and the backend
// pid if it is not 0, over the sampler's session.
func (t *pgTarget) countBackends(ctx context.Context, app string, pid uint32) (int64, error) {
	t.sampleMu.Lock()
	defer t.sampleMu.Unlock()
	if t.sampler == nil || t.sampler.IsClosed() {
		c, err := t.connect(ctx, t.scfg)
		if err != nil {
			return 0, err
		}
		t.sampler = c
	}
	var n int64
	err := t.sampler.QueryRow(ctx, `SELECT count(*) FROM pg_catalog.pg_stat_activity
		WHERE (application_name = $1 AND datname = current_database()) OR pid = $2`, app, int64(pid)).Scan(&n)
	if err == nil {
		t.own.Add(1)
	}
	return n, err
}

// flushSampler has the sampler's own session publish its statistics now
// (PostgreSQL 15+: pg_stat_force_next_flush; the backend flushes before it
// answers), so that its transactions, which the commits counter leaves
// out, are in the final sample's server count too. Older servers publish
// within about a second.
func (t *pgTarget) flushSampler(ctx context.Context) error {
	t.mu.Lock()
	v, _ := strconv.Atoi(t.info.Settings["server_version_num"])
	t.mu.Unlock()
	if v < 150000 {
		return nil
	}
	t.sampleMu.Lock()
	defer t.sampleMu.Unlock()
	if t.sampler == nil || t.sampler.IsClosed() {
		return nil
	}
	if _, err := t.sampler.Exec(ctx, "SELECT pg_catalog.pg_stat_force_next_flush()"); err != nil {
		return fmt.Errorf("postgres: settle: %w", err)
	}
	t.own.Add(1)
	return nil
}
