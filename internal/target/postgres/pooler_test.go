package postgres

import (
	"context"
	"errors"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ceiling-db/ceiling/internal/target"
	"github.com/ceiling-db/ceiling/internal/testenv"
)

// TestPoolerSession runs ceiling through PgBouncer in session mode: Open
// tells the pooler apart from a direct connection (Info.Pooler), still
// finds the server on this host by its backend's pid, and the workers run
// with the durability asked for, whether the pooler refuses the
// synchronous_commit start-up parameter (PgBouncer's default) or drops it
// (ignore_startup_parameters), where before a refusal ended the run and a
// drop left the server's setting in force while the result said "off".
func TestPoolerSession(t *testing.T) {
	dsn := testDB(t, "ceiling_test_pg")
	if p := openTarget(t, dsn, target.DurabilityServer).Info().Pooler; p != "" {
		t.Errorf("direct connection: Pooler %q, want none", p)
	}
	for _, tc := range []struct {
		name  string
		extra []string
		note  string
	}{
		{"parameter refused", nil, "synchronous_commit could not go in the sessions' start-up packets (unsupported startup parameter: synchronous_commit): set with SET on each session"},
		{"parameter dropped", []string{"ignore_startup_parameters = extra_float_digits,synchronous_commit"}, "synchronous_commit=off sent in the sessions' start-up packets did not reach the server"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pooled := testenv.PgBouncer(t, dsn, "session", tc.extra...)
			tg := openTarget(t, pooled, target.DurabilityRelaxed)
			info := tg.Info()
			if info.Pooler != target.PoolerSession || !info.Local {
				t.Errorf("through PgBouncer: Pooler %q, Local %v; want %q, true (the backend's pid is a local postgres process)", info.Pooler, info.Local, target.PoolerSession)
			}
			for i := range 2 {
				if got := queryString(t, connect(t, tg), "SHOW synchronous_commit"); got != "off" {
					t.Errorf("worker %d: synchronous_commit %q, want off", i, got)
				}
			}
			if note := tg.Info().Durability.Note; !strings.Contains(note, tc.note) || strings.Count(note, "synchronous_commit") != strings.Count(tc.note, "synchronous_commit") {
				t.Errorf("durability note %q, want once %q", note, tc.note)
			}
		})
	}
}

// TestPoolerRefused: through PgBouncer in transaction or statement mode,
// where ceiling's prepared statements met other sessions' server
// connections (nearly half the requests failed), Open refuses with one
// line that says why and what to do.
func TestPoolerRefused(t *testing.T) {
	dsn := testDB(t, "ceiling_test_pg")
	for _, tc := range []struct {
		name, mode string
		extra      []string
		idle       int // server connections left idle in the pool first
	}{
		{"transaction", "transaction", nil, 0},
		// The server connection idle longest first, not the one freed
		// last, with three idle before ceiling's sessions come.
		{"transaction round robin", "transaction", []string{"server_round_robin = 1"}, 3},
		{"statement", "statement", nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pooled := testenv.PgBouncer(t, dsn, tc.mode, tc.extra...)
			var open []*pgx.Conn
			for range tc.idle { // each holds a server connection at once
				c := otherClient(t, pooled)
				if _, err := c.Exec(testCtx(t), "BEGIN"); err != nil {
					t.Fatal(err)
				}
				open = append(open, c)
			}
			for _, c := range open {
				_ = c.Close(context.Background())
			}
			checkOpenError(t, pooled, "the sessions go through a connection pooler in transaction or statement mode")
		})
	}
}

// TestPoolerSettle: through a pooler the backends outlive ceiling's
// sessions and publish their last statistics only after idling 10 s;
// Settle waits for them, so the commits of a worker's inserts are all in
// the next sample (without the wait, at most the first second's were).
func TestPoolerSettle(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: waits 10 s for the pooled backends' statistics")
	}
	ctx := testCtx(t)
	dsn := testDB(t, "ceiling_test_pg")
	tg := openTarget(t, testenv.PgBouncer(t, dsn, "session"), target.DurabilityServer)
	s := tg.Schema()
	if err := s.CreateTable(ctx, "pooled", "id int PRIMARY KEY"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.DropTable(context.Background(), "pooled") })
	sampler := tg.(target.Sampler)
	before, err := sampler.Sample(ctx)
	if err != nil {
		t.Fatal(err)
	}
	w, err := tg.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const n = 500
	for i := range n {
		if _, err := w.Exec(ctx, "INSERT INTO "+tg.Dialect().Table("pooled")+" (id) VALUES ($1)", i); err != nil {
			t.Fatal(err)
		}
	}
	_ = w.Close()
	start := time.Now()
	sctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if err := tg.(target.Settler).Settle(sctx); err != nil {
		t.Fatalf("Settle: %v", err)
	}
	after, err := sampler.Sample(ctx)
	if err != nil {
		t.Fatal(err)
	}
	commits := after.Counters[target.CtrCommits] - before.Counters[target.CtrCommits]
	t.Logf("%d inserts: %.0f commits in the samples around them; Settle waited %v", n, commits, time.Since(start).Round(time.Millisecond))
	if commits < n {
		t.Errorf("%.0f commits counted for %d inserts through the pooler: the backend's last statistics were not waited for", commits, n)
	}
}

// TestPoolerForeignCPU: through a pooler a server connection serves one of
// ceiling's workers and then another client. The CPU it spent on the
// worker is ceiling's: only what it spends after it changed hands counts
// as the other client's (foreign_backends_cpu_s), where before the whole
// of its life did, since it was first seen as another client's.
func TestPoolerForeignCPU(t *testing.T) {
	if _, err := os.Stat("/proc/self/task"); err != nil || runtime.GOOS != "linux" {
		t.Skip("no /proc here")
	}
	ctx := testCtx(t)
	pooled := testenv.PgBouncer(t, testDB(t, "ceiling_test_pg"), "session")
	tg := openTarget(t, pooled, target.DurabilityServer)
	s := tg.(target.Sampler)
	if _, err := s.Sample(ctx); err != nil { // the baseline
		t.Fatal(err)
	}
	w, err := tg.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	workerPID := queryString(t, w, "SELECT pg_backend_pid()::text")
	burnCPU(t, ctx, func(ctx context.Context, q string) error { _, err := w.Exec(ctx, q); return err })
	before, err := s.Sample(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_ = w.Close()

	other := otherClient(t, pooled)
	var otherPID string
	if err := other.QueryRow(ctx, "SELECT pg_backend_pid()::text").Scan(&otherPID); err != nil {
		t.Fatal(err)
	}
	if otherPID != workerPID {
		t.Fatalf("the other client got server backend %s, the worker had %s: PgBouncer hands out the server connection freed last, which this test relies on", otherPID, workerPID)
	}
	after, err := s.Sample(ctx)
	if err != nil {
		t.Fatal(err)
	}
	d := delta(before, after)
	t.Logf("backend %s, the worker's then the other client's: foreign CPU %.3f s since", workerPID, d[target.CtrForeignCPUSec])
	if _, ok := after.Counters[target.CtrForeignCPUSec]; !ok || d[target.CtrForeignCPUSec] > 0.05 {
		t.Errorf("foreign CPU %.3f s (present %v) after the worker's backend passed to an idle client: want present and about 0, the worker's query being ceiling's", d[target.CtrForeignCPUSec], ok)
	}
}

// TestPoolerFull: a session mode pool smaller than ceiling's sessions left
// the last workers waiting for a server connection the whole run (-c 24
// through PgBouncer's default pool of 20: 7 never ran, while the result
// said 24 threads). Connect now gives up on such a session with an error
// that names the pool, not the server's connection limit.
func TestPoolerFull(t *testing.T) {
	pooled := testenv.PgBouncer(t, testDB(t, "ceiling_test_pg"), "session", "default_pool_size = 2")
	tg := openTarget(t, pooled, target.DurabilityServer) // the admin session holds one
	connect(t, tg)                                       // the second
	ctx := testCtx(t)
	c, err := tg.Connect(ctx)
	if err == nil {
		_ = c.Close()
		t.Fatal("a third session through a pool of 2 connected")
	}
	if !errors.Is(err, target.ErrPoolerFull) || !strings.Contains(err.Error(), "default_pool_size") {
		t.Errorf("error %q: want ErrPoolerFull, naming the pool's size", err)
	}
}
