package postgres

import (
	"context"
	"os"
	"os/exec"
	"runtime"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/ceiling-db/ceiling/internal/osstat"
	"github.com/ceiling-db/ceiling/internal/target"
)

// burnCPU runs a CPU-bound query on c (about a second of backend CPU on
// the development VM; the assertions below need far less).
func burnCPU(t *testing.T, ctx context.Context, exec func(context.Context, string) error) {
	t.Helper()
	if err := exec(ctx, "SELECT sum(i::bigint * i) FROM generate_series(1, 4000000) i"); err != nil {
		t.Fatal(err)
	}
}

// TestForeignBackendsCPU loads the server from a session that is not
// ceiling's (its own application_name) and from one of ceiling's workers:
// the other session's backend CPU is counted in foreign_backends_cpu_s,
// the worker's is not, and both are in the server's CPU.
func TestForeignBackendsCPU(t *testing.T) {
	dsn := testDB(t, "ceiling_test_pg")
	tg := openTarget(t, dsn, target.DurabilityServer)
	ctx := testCtx(t)
	s := tg.(target.Sampler)
	first, err := s.Sample(ctx) // the baseline of the other sessions
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := first.Counters[target.CtrForeignCPUSec]; !ok {
		t.Fatalf("%s absent for a local server", target.CtrForeignCPUSec)
	}
	other := otherClient(t, dsn)

	// The other session, connected after the baseline: all its CPU counts.
	before, err := s.Sample(ctx)
	if err != nil {
		t.Fatal(err)
	}
	burnCPU(t, ctx, func(ctx context.Context, q string) error { _, err := other.Exec(ctx, q); return err })
	after, err := s.Sample(ctx)
	if err != nil {
		t.Fatal(err)
	}
	d := delta(before, after)
	t.Logf("other session: foreign %.2f s, server %.2f s", d[target.CtrForeignCPUSec], d[target.CtrServerCPUSec])
	if d[target.CtrForeignCPUSec] < 0.1 || d[target.CtrServerCPUSec] < d[target.CtrForeignCPUSec]-0.02 {
		t.Errorf("other session's query: foreign CPU %.2f s, server CPU %.2f s; want foreign ≥ 0.1 s and within the server's", d[target.CtrForeignCPUSec], d[target.CtrServerCPUSec])
	}

	// One of ceiling's workers: server CPU, not foreign.
	w := connect(t, tg)
	before, err = s.Sample(ctx)
	if err != nil {
		t.Fatal(err)
	}
	burnCPU(t, ctx, func(ctx context.Context, q string) error { _, err := w.Exec(ctx, q); return err })
	after, err = s.Sample(ctx)
	if err != nil {
		t.Fatal(err)
	}
	d = delta(before, after)
	t.Logf("worker: foreign %.2f s, server %.2f s", d[target.CtrForeignCPUSec], d[target.CtrServerCPUSec])
	if d[target.CtrServerCPUSec] < 0.1 || d[target.CtrForeignCPUSec] > d[target.CtrServerCPUSec]/4 {
		t.Errorf("worker's query: server CPU %.2f s, foreign CPU %.2f s; want server ≥ 0.1 s and foreign a small part", d[target.CtrServerCPUSec], d[target.CtrForeignCPUSec])
	}
}

// otherClient connects to dsn as another client would (its own
// application_name), until the test ends.
func otherClient(t *testing.T, dsn string) *pgx.Conn {
	t.Helper()
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg.RuntimeParams["application_name"] = "someone-else"
	other, err := pgx.ConnectConfig(testCtx(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = other.Close(context.Background()) })
	return other
}

// sampledLocal opens a target on the local test server, takes a sample,
// and returns the target, the postmaster it follows and its sampler's
// session; it skips where there is no /proc.
func sampledLocal(t *testing.T) (*pgTarget, int, *pgx.Conn) {
	t.Helper()
	if _, err := os.Stat("/proc/self/task"); err != nil || runtime.GOOS != "linux" {
		t.Skip("no /proc here")
	}
	tg := openTarget(t, testDB(t, "ceiling_test_pg"), target.DurabilityServer)
	if _, err := tg.(target.Sampler).Sample(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	pt := tg.(*pgTarget)
	pt.sampleMu.Lock()
	pm, sampler := pt.postmaster, pt.sampler
	pt.sampleMu.Unlock()
	if pm <= 0 {
		t.Fatalf("postmaster not found (%d) for a local server", pm)
	}
	return pt, pm, sampler
}

// TestServerCPUFromPostmaster: on a local server the sampler finds the
// postmaster (the parent of its backend) and reads only its tree, which
// holds every postgres process of this instance: the same ones a scan of
// the host finds when, as in CI, only one instance runs here.
func TestServerCPUFromPostmaster(t *testing.T) {
	pt, pm, sampler := sampledLocal(t)
	backend, err := osstat.ReadPidStat(int(sampler.PgConn().PID()))
	if err != nil || backend.PPid != pm {
		t.Fatalf("sampler's backend %+v (%v): want a child of the postmaster %d", backend, err, pm)
	}
	pt.sampleMu.Lock()
	sec, n, ok := pt.serverCPU(context.Background(), sampler)
	pt.sampleMu.Unlock()
	_, all, _ := osstat.ProcsCPU("postgres")
	t.Logf("postmaster %d: %d processes, %.2f s; host-wide %d", pm, n, sec, all)
	// The postmaster, its auxiliary processes and the sampler's backend at
	// least; no more than the host has (sessions may come and go between
	// the two reads, hence the slack).
	if !ok || n < 3 || sec <= 0 || n > all+2 {
		t.Fatalf("tree of the postmaster: %d processes, %.2f s (ok %v); host-wide %d", n, sec, ok, all)
	}
}

// TestServerCPUAfterRestart: when the postmaster it followed is gone (a
// restart; played here with the pid of a process that has exited), the
// sampler finds the postmaster again from its session's backend and the
// server CPU counter goes on from its last value instead of being left
// out for the rest of the run.
func TestServerCPUAfterRestart(t *testing.T) {
	pt, pm, sampler := sampledLocal(t)
	ctx := testCtx(t)
	pt.sampleMu.Lock()
	defer pt.sampleMu.Unlock()
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	const last = 1000.0 // the counter's value before the "restart"
	pt.postmaster, pt.cpuLast = gone.Process.Pid, last
	sec, n, ok := pt.serverCPU(context.Background(), sampler)
	if !ok || sec != last || n < 3 || pt.postmaster != pm {
		t.Fatalf("after the postmaster vanished: %.3f s, %d processes, ok %v, following %d; want %.0f s from the postmaster %d found again", sec, n, ok, pt.postmaster, last, pm)
	}
	if err := sampler.QueryRow(ctx, "SELECT count(*) FROM generate_series(1, 300000)").Scan(new(int64)); err != nil {
		t.Fatal(err)
	}
	sec2, _, ok := pt.serverCPU(context.Background(), sampler)
	if !ok || sec2 < last || sec2 > last+60 {
		t.Fatalf("next reading %.3f s (ok %v), want on from %.0f", sec2, ok, last)
	}
	t.Logf("counter %.3f → %.3f s across the re-found postmaster %d", sec, sec2, pm)
}
