package postgres

import (
	"context"
	"sync"

	"github.com/jackc/pgx/v5"

	"github.com/ceiling-db/ceiling/internal/osstat"
)

// foreignQuery lists the client backends on any database of the server
// but the sampler's own, each with whether it is another client's: not
// one of ceiling's workers, not one of its own sessions (application_name
// "ceiling").
const foreignQuery = `SELECT pid, coalesce(application_name, '') NOT IN ($1, 'ceiling')
	FROM pg_catalog.pg_stat_activity
	WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()`

// foreignCPU follows the CPU of other sessions' backends on a local
// server, so that their work is not taken for ceiling's: at each sample,
// the CPU each such backend used since the previous one (a backend first
// seen after the first sample counts from its start; one that exits
// between two samples loses its last stretch, which then shows as the
// server's own). Every client backend's CPU is kept from sample to
// sample, ceiling's too: through a connection pooler a server connection
// serves ceiling's sessions and then another client's (its
// application_name changes with them), and only the stretch since the
// previous sample is the other client's, not the connection's whole life.
type foreignCPU struct {
	mu      sync.Mutex
	started bool
	last    map[int]float64 // pid → CPU seconds at the previous sample
	sec     float64         // accumulated
}

var (
	foreignMu sync.Mutex
	foreigns  = map[*pgTarget]*foreignCPU{}
)

// foreign returns t's tracker, or nil when ceiling cannot tell its worker
// sessions apart (the DSN sets its own application_name).
func (t *pgTarget) foreign() *foreignCPU {
	if t.wcfg == nil || t.wcfg.RuntimeParams["application_name"] != WorkerAppName {
		return nil
	}
	foreignMu.Lock()
	defer foreignMu.Unlock()
	f := foreigns[t]
	if f == nil {
		f = &foreignCPU{last: map[int]float64{}}
		foreigns[t] = f
	}
	return f
}

// forgetForeign drops t's tracker (the target is closed).
func (t *pgTarget) forgetForeign() {
	foreignMu.Lock()
	defer foreignMu.Unlock()
	delete(foreigns, t)
}

// sample updates the tracker from the foreign backends listed on c and
// returns their cumulative CPU seconds.
func (f *foreignCPU) sample(ctx context.Context, c *pgx.Conn) (float64, error) {
	rows, err := c.Query(ctx, foreignQuery, WorkerAppName)
	if err != nil {
		return 0, err
	}
	type backend struct {
		pid   int32
		other bool
	}
	bs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (backend, error) {
		var b backend
		err := r.Scan(&b.pid, &b.other)
		return b, err
	})
	if err != nil {
		return 0, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	now := make(map[int]float64, len(bs))
	for _, b := range bs {
		cur, _, ok := osstat.PidCPU(int(b.pid))
		if !ok {
			continue // exited meanwhile
		}
		now[int(b.pid)] = cur
		if !f.started || !b.other {
			continue // the baseline, or ceiling's
		}
		if prev, ok := f.last[int(b.pid)]; ok {
			f.sec += max(cur-prev, 0)
		} else {
			f.sec += cur // new since the previous sample
		}
	}
	f.last, f.started = now, true
	return f.sec, nil
}
