package postgres

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/ceiling-db/ceiling/internal/target"
)

// WorkerAppName is the application_name of this process's worker sessions
// (unless the DSN sets its own): "ceiling-worker-PID", so that the wait
// sampler, the settling at the end and the split of the server's CPU tell
// this run's sessions from another ceiling's on the same server.
var WorkerAppName = fmt.Sprintf("ceiling-worker-%d", os.Getpid())

var _ target.Settler = (*pgTarget)(nil)

// Settle implements target.Settler: it waits (up to two seconds) until the
// closed worker sessions have left pg_stat_activity. A PostgreSQL backend
// publishes its pending statistics (WAL, commits, blocks) when it exits, so
// after this the final sample covers the whole run.
func (t *pgTarget) Settle(ctx context.Context) error {
	app := t.wcfg.RuntimeParams["application_name"]
	if app != WorkerAppName {
		return nil // cannot tell our workers apart: do not wait on others
	}
	deadline := time.Now().Add(2 * time.Second)
	for {
		n, err := t.countBackends(ctx, app)
		if err != nil {
			return fmt.Errorf("postgres: settle: %w", err)
		}
		if n == 0 || time.Now().After(deadline) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// countBackends counts this database's sessions named app, over the
// sampler's session.
func (t *pgTarget) countBackends(ctx context.Context, app string) (int64, error) {
	t.sampleMu.Lock()
	defer t.sampleMu.Unlock()
	if t.sampler == nil || t.sampler.IsClosed() {
		c, err := t.connect(ctx, t.cfg)
		if err != nil {
			return 0, err
		}
		t.sampler = c
	}
	var n int64
	err := t.sampler.QueryRow(ctx, `SELECT count(*) FROM pg_catalog.pg_stat_activity
		WHERE application_name = $1 AND datname = current_database()`, app).Scan(&n)
	return n, err
}
