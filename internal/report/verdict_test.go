package report

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-db/ceiling/internal/diagnose"
	"github.com/ceiling-db/ceiling/internal/metrics"
	"github.com/ceiling-db/ceiling/internal/runner"
	"github.com/ceiling-db/ceiling/internal/target"
)

// A closed-loop run of single-row inserts bound by log flushes (seed 002):
// 1 thread, 3,400 req/s, one WAL sync per request of 0.22 ms, 0.29 ms each.
func TestBuildFillsVerdict(t *testing.T) {
	const n = 3400
	ev := &runner.Evidence{Seconds: 1, Counters: map[string]float64{target.CtrLogBytes: n * 4200, target.CtrLogSyncs: n},
		Files: []target.FileStat{
			{Name: "db-wal", Role: "log", Writes: n, BytesWritten: n * 4200, Syncs: n, WriteNs: n * 10_000, SyncNs: n * 220_000},
			{Name: "db", Role: "data", Writes: 20, BytesWritten: 20 * 4096, WriteNs: 20 * 50_000},
		}}
	r := &runner.Result{Started: time.Now(), Total: snapWith(n, 290*time.Microsecond, 0), Elapsed: time.Second, Evidence: ev, ClientCPUSeconds: 0.1,
		Intervals: []runner.Interval{{End: time.Second, Snap: snapWith(n, 290*time.Microsecond, 0), Evidence: ev, ClientCPU: 0.1}}}
	res, err := Build(Params{Workload: "single-inserts", Load: runner.Config{Threads: 1, Duration: time.Second}, Cores: 4}, r)
	if err != nil {
		t.Fatal(err)
	}
	v := res.Verdict
	if v == nil || v.Bottleneck != diagnose.CommitFlush {
		t.Fatalf("verdict %+v", v)
	}
	if g := v.Suggestions[0].PredictedGain; g == nil || *g < 3.5 || *g > 4.5 {
		t.Fatalf("predicted gain %v", g)
	}
	b, _ := json.Marshal(res)
	if !bytes.Contains(b, []byte(`"verdict":{"bottleneck":"commit-flush","evidence":["1.00 log syncs per commit, 0.220 ms per sync, = 7`)) {
		t.Fatalf("JSON verdict:\n%s", b)
	}
	var buf bytes.Buffer
	PrintSummary(&buf, res)
	out := buf.String()
	for _, want := range []string{"\nverdict: commit-flush — 1.00 log syncs per commit, 0.220 ms per sync", "assuming one transaction per request",
		"try --durability relaxed: predicted ×4.", " req/s)", "try batch 10 rows per commit: predicted ×"} {
		if !strings.Contains(out, want) {
			t.Fatalf("console lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "the summary puts") {
		t.Fatalf("a closed loop's summary is of one load:\n%s", out)
	}

	// The same run relaxed: hardly any syncs → not commit-flush.
	ev.Counters[target.CtrLogSyncs] = 7
	ev.Files[0].Syncs, ev.Files[0].SyncNs = 7, 7*220_000
	res, _ = Build(Params{Workload: "single-inserts", Load: runner.Config{Threads: 1, Duration: time.Second}, Cores: 4}, r)
	if res.Verdict == nil || res.Verdict.Bottleneck != diagnose.None {
		t.Fatalf("relaxed verdict %+v", res.Verdict)
	}
}

// A ramp whose second step queues while the log rate stays flat (seed 000).
func TestRampStepVerdicts(t *testing.T) {
	cfg := runner.Config{Threads: 8, Steps: []runner.Step{{Rate: 1000, Duration: time.Second}, {Rate: 2000, Duration: time.Second}}}
	r := openRun(time.Now(), []int{1000, 1050}, 0)
	r.Steps[0].Scheduled, r.Steps[1].Scheduled = 1000, 2000
	r.Steps[0].Rate, r.Steps[1].Rate = 1000, 2000
	r.Steps[1].Late = 950
	r.Steps[0].Evidence = &runner.Evidence{Seconds: 1, Counters: map[string]float64{target.CtrLogBytes: 2 * MB}}
	r.Steps[1].Evidence = &runner.Evidence{Seconds: 1, Counters: map[string]float64{target.CtrLogBytes: 2.1 * MB}}
	res, err := Build(Params{Workload: "inserts-deletes", Load: cfg, Cores: 2}, r)
	if err != nil {
		t.Fatal(err)
	}
	if res.Steps[0].Verdict == nil || res.Steps[0].Verdict.Bottleneck != diagnose.None {
		t.Fatalf("step 1 verdict %+v", res.Steps[0].Verdict)
	}
	if v := res.Steps[1].Verdict; v == nil || v.Bottleneck != diagnose.LogRate {
		t.Fatalf("step 2 verdict %+v", v)
	}
	if v := res.Verdict; v == nil || v.Bottleneck != diagnose.LogRate || !strings.Contains(strings.Join(v.Evidence, "|"), "from step 2 (2000/s)") {
		t.Fatalf("run verdict %+v", v)
	}
	var buf bytes.Buffer
	PrintSummary(&buf, res)
	out := buf.String()
	for _, want := range []string{"   the summary puts the 2 steps' requests together, made at different rates: each step's own figures are in the steps' table\n", "verdict per step:", "    1 none — no clear bottleneck", "    2 log-rate — log 2.10 MB/s, flat (+5%)", "\nverdict: log-rate — log 2.10 MB/s"} {
		if !strings.Contains(out, want) {
			t.Fatalf("console lacks %q:\n%s", want, out)
		}
	}
}

// TestStatsLagScale: PostgreSQL publishes its backends' statistics up to a
// second late, so a step's counters can miss its last second and hold the
// step before's (a real 5 s ramp of single inserts: 0.80, 0.96 and 1.17
// commits and log syncs per request at 1.00 per commit). The step verdicts
// take the counters per commit, against the run's commits per request;
// the step's figures stay as counted. Not for another engine.
func TestStatsLagScale(t *testing.T) {
	build := func(engine string) *Result {
		t.Helper()
		cfg := runner.Config{Threads: 1, Steps: []runner.Step{{Rate: 100, Duration: time.Second}, {Rate: 200, Duration: time.Second}, {Rate: 300, Duration: time.Second}}}
		r := openRun(time.Now(), []int{100, 200, 300}, 0)
		counted := []float64{100, 160, 340} // commits and log syncs as published: 1.00, 0.80, 1.13 per request
		for i, n := range counted {
			r.Steps[i].Evidence = &runner.Evidence{Seconds: 1, Counters: map[string]float64{
				target.CtrCommits: n, target.CtrLogSyncs: n, target.CtrLogSyncMs: 1.5 * n, target.CtrLogBytes: 100 * n}}
		}
		r.Evidence = &runner.Evidence{Seconds: 3, Counters: map[string]float64{
			target.CtrCommits: 600, target.CtrLogSyncs: 600, target.CtrLogSyncMs: 900, target.CtrLogBytes: 60000}}
		res, err := Build(Params{Workload: "single-inserts", Load: cfg, Cores: 2, Info: target.Info{Engine: engine}}, r)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	res := build("postgres")
	want := []float64{0, 1.25, 0.882}
	for i, s := range res.Steps {
		got := 0.0
		if s.StatsLagScale != nil {
			got = *s.StatsLagScale
		}
		if got != want[i] {
			t.Errorf("step %d: stats_lag_scale %g, want %g", i+1, got, want[i])
		}
	}
	s := res.Steps[1]
	ev := strings.Join(s.Verdict.Evidence, "|")
	// 1.5 ms per sync at 1.00 sync per request of 2 ms: 75%, not the
	// 60% of the 0.80 counted.
	if s.Verdict.Bottleneck != diagnose.CommitFlush || !strings.Contains(ev, "1.00 log syncs per commit, 1.500 ms per sync, = 75% of each request's time") ||
		!strings.Contains(ev, "the step's counters held 0.80 commits per request against the run's 1.00, so its server figures were taken per commit (×1.25)") {
		t.Fatalf("step 2: %s: %s", s.Verdict.Bottleneck, ev)
	}
	if *s.Costs.LogSyncsPerOp != 0.8 || *s.LogSyncsPerSec != 160 {
		t.Errorf("step 2's own figures changed: %g syncs per request, %g/s", *s.Costs.LogSyncsPerOp, *s.LogSyncsPerSec)
	}
	var buf bytes.Buffer
	PrintSummary(&buf, res)
	if !strings.Contains(buf.String(), "PostgreSQL publishes its statistics up to a second late, so steps 2, 3 count part of a neighbour's") {
		t.Errorf("console lacks the note:\n%s", buf.String())
	}
	for _, s := range build("mysql").Steps {
		if s.StatsLagScale != nil {
			t.Errorf("mysql step %d scaled ×%g", s.Index+1, *s.StatsLagScale)
		}
	}

	// More commits than a second's lag could move: other sessions' (a real
	// knee probe at 10/s for 50 s after one at 10/s: 1.52 commits per
	// request, 1.02 log syncs). Not scaled: each commit still flushes.
	cfg := runner.Config{Threads: 8, Steps: []runner.Step{{Rate: 10, Duration: 10 * time.Second}, {Rate: 10, Duration: 50 * time.Second}}}
	r := openRun(time.Now(), []int{100, 500}, 0)
	for i, n := range [][2]float64{{100, 102}, {760, 510}} {
		r.Steps[i].Elapsed = cfg.Steps[i].Duration
		r.Steps[i].Evidence = &runner.Evidence{Seconds: cfg.Steps[i].Duration.Seconds(), Counters: map[string]float64{
			target.CtrCommits: n[0], target.CtrLogSyncs: n[1], target.CtrLogSyncMs: 0.3 * n[1], target.CtrLogBytes: 100 * n[1]}}
	}
	r.Evidence = &runner.Evidence{Seconds: 60, Counters: map[string]float64{target.CtrCommits: 600, target.CtrLogSyncs: 612, target.CtrLogSyncMs: 184, target.CtrLogBytes: 61200}}
	res, err := Build(Params{Workload: "updates", Load: cfg, Cores: 2, Info: target.Info{Engine: "postgres"}}, r)
	if err != nil {
		t.Fatal(err)
	}
	if s := res.Steps[1]; s.StatsLagScale != nil || strings.Contains(strings.Join(s.Verdict.Evidence, "|"), "commits per request against the run's") {
		t.Errorf("other sessions' commits taken for lag: ×%v, %q", s.StatsLagScale, s.Verdict.Evidence)
	}
}

func TestNoRequestsNoVerdict(t *testing.T) {
	r := &runner.Result{Started: time.Now(), Total: snapWith(0, 0, 0), ClientCPUSeconds: -1}
	res, err := Build(Params{Workload: "w", Load: runner.Config{Threads: 1, Duration: time.Second}}, r)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res)
	if res.Verdict != nil || !bytes.Contains(b, []byte(`"verdict":null`)) {
		t.Fatalf("nothing measured: verdict must be null: %+v", res.Verdict)
	}
}

// TestForeignWorkNote: server-wide counters that show far more commits than
// requests must be flagged, and a normal run must not be.
func TestForeignWorkNote(t *testing.T) {
	build := func(requests int, commits float64) *Result {
		t.Helper()
		ev := &runner.Evidence{Seconds: 1, Counters: map[string]float64{target.CtrCommits: commits, target.CtrLogSyncs: 1000}}
		r := &runner.Result{Started: time.Now(), Total: snapWith(requests, time.Millisecond, 0), Elapsed: time.Second, Evidence: ev, ClientCPUSeconds: -1}
		res, err := Build(Params{Workload: "single-inserts", Load: runner.Config{Threads: 1, Duration: time.Second}, Cores: 2}, r)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if n := build(1000, 1003).Notes; len(n) != 0 {
		t.Fatalf("a run with one commit per request got notes %q", n)
	}
	// ceiling's own samplers on PostgreSQL: ~100 read-only commits a second,
	// which at 10 requests/s is a ratio of 11 but no foreign work.
	if n := build(10, 110).Notes; len(n) != 0 {
		t.Fatalf("a run with ceiling's own sampler commits got notes %q", n)
	}
	n := build(1000, 4000).Notes
	if len(n) != 1 || !strings.Contains(n[0], "4.0 transactions per request") {
		t.Fatalf("a run with 4 commits per request: notes %q", n)
	}
}

// TestRowLockShare: a MySQL run without sampled waits (performance_schema
// off) has its row-lock share from the server's row-lock time over the
// workers' time; with sampled waits it has none (they hold the row locks).
func TestRowLockShare(t *testing.T) {
	res := &Result{
		Target:   target.Info{Engine: "mysql"},
		Load:     Load{Model: "closed", Threads: 16},
		Evidence: &Evidence{Seconds: 15, Counters: map[string]float64{target.CtrRowLockMs: 174723}},
	}
	f := runFigures(res, nil)
	if f.RowLockShare == nil || math.Abs(*f.RowLockShare-0.728) > 0.001 {
		t.Errorf("row-lock share %v, want 174,723 ms / (16 × 15 s) = 0.728", f.RowLockShare)
	}
	res.Evidence.Counters[target.CtrWaitLockMs] = 174723
	res.Evidence.Counters[target.CtrWaitClientMs] = 60000
	if f := runFigures(res, nil); f.RowLockShare != nil {
		t.Errorf("with sampled waits: row-lock share %v, want none", *f.RowLockShare)
	}
}

// TestDiscountIdle: in an open loop, the workers' idle time leaves the
// server's client category. Counters of a PostgreSQL run at 1000/s on 4
// workers whose table was locked by hand for 3 of its 10 s: 7,999 requests
// at a mean service time of 1.65 ms, so the workers were busy 13.2 of
// their 40 s; the sampled client 27,437 ms, lock 11,911, cpu 554. The lock
// share goes from 30% (no verdict) to 90% (contention). A closed loop and
// SQLite keep their figures.
func TestDiscountIdle(t *testing.T) {
	waits := func() map[string]float64 {
		return map[string]float64{"client": 27437, "lock": 11911, "cpu": 554, "log_io": 0}
	}
	f := diagnose.Figures{Threads: 4, Requests: 7999, ServiceMs: f64(1.6493), WaitMs: waits()}
	discountIdle(&f, "postgres", false, 10.0046)
	lock := f.WaitMs["lock"] / (f.WaitMs["client"] + f.WaitMs["lock"] + f.WaitMs["cpu"])
	if math.Abs(lock-0.90) > 0.01 {
		t.Errorf("lock share %.3f after taking out the idle time (client now %.0f ms), want 0.90", lock, f.WaitMs["client"])
	}
	if v := diagnose.Diagnose(f); v.Bottleneck != diagnose.Contention {
		t.Errorf("verdict %s %q, want contention", v.Bottleneck, v.Evidence)
	}
	for _, c := range []struct {
		engine string
		closed bool
	}{{"postgres", true}, {"sqlite", false}} {
		f := diagnose.Figures{Threads: 4, Requests: 7999, ServiceMs: f64(1.6493), WaitMs: waits()}
		discountIdle(&f, c.engine, c.closed, 10.0046)
		if f.WaitMs["client"] != 27437 {
			t.Errorf("%s closed=%v: client %.0f ms, want it left at 27437", c.engine, c.closed, f.WaitMs["client"])
		}
	}
	// Busy all the time (a saturated step): nothing is idle.
	f = diagnose.Figures{Threads: 4, Requests: 40000, ServiceMs: f64(1.2), WaitMs: waits()}
	discountIdle(&f, "postgres", false, 10)
	if f.WaitMs["client"] != 27437 {
		t.Errorf("saturated: client %.0f ms, want 27437", f.WaitMs["client"])
	}
}

// TestInProcessCPU: SQLite's wait categories are VFS time only; in a closed
// loop the rest of the workers' time counts as CPU, so the shares are of
// the sessions' time, not of the IO time alone.
func TestInProcessCPU(t *testing.T) {
	res := &Result{
		Target:   target.Info{Engine: "sqlite"},
		Load:     Load{Model: "closed", Threads: 2},
		Evidence: &Evidence{Seconds: 1, Counters: map[string]float64{target.CtrWaitLogMs: 300, target.CtrWaitDataReadMs: 100}},
	}
	f := runFigures(res, nil)
	if got := f.WaitMs["cpu"]; got != 1600 {
		t.Errorf("sqlite closed loop: cpu %.0f ms, want 2 threads × 1000 ms − 400 ms = 1600", got)
	}
	res.Target.Engine = "postgres"
	if _, ok := runFigures(res, nil).WaitMs["cpu"]; ok {
		t.Error("postgres: cpu category invented")
	}
	// Open loop: workers idle between requests; 1000 requests of 1 ms
	// mean are 1000 ms in requests, of which 400 in the VFS.
	res.Target.Engine, res.Load.Model = "sqlite", "open"
	res.Summary = Summary{Requests: 1000, ElapsedS: 1, LatencyMs: &metrics.Latency{Mean: 1}}
	if got := runFigures(res, nil).WaitMs["cpu"]; got != 600 {
		t.Errorf("sqlite open loop: cpu %.0f ms, want 1000 × 1 ms − 400 ms = 600", got)
	}
	res.Summary.LatencyMs = nil
	if _, ok := runFigures(res, nil).WaitMs["cpu"]; ok {
		t.Error("sqlite open loop without latency: cpu category invented")
	}
}

// TestForeignWorkPerStep: other work during one step of a ramp is flagged
// for that step, even when the run as a whole looks clean.
func TestForeignWorkPerStep(t *testing.T) {
	cfg := runner.Config{Threads: 8, Steps: []runner.Step{{Rate: 1000, Duration: time.Second}, {Rate: 2000, Duration: time.Second}}}
	r := openRun(time.Now(), []int{1000, 2000}, 0)
	r.Steps[0].Scheduled, r.Steps[1].Scheduled = 1000, 2000
	r.Steps[0].Rate, r.Steps[1].Rate = 1000, 2000
	r.Steps[0].Evidence = &runner.Evidence{Seconds: 1, Counters: map[string]float64{target.CtrCommits: 3000}}
	r.Steps[1].Evidence = &runner.Evidence{Seconds: 1, Counters: map[string]float64{target.CtrCommits: 2010}}
	r.Evidence = &runner.Evidence{Seconds: 2, Counters: map[string]float64{target.CtrCommits: 5010}}
	res, err := Build(Params{Workload: "inserts-deletes", Load: cfg, Cores: 2}, r)
	if err != nil {
		t.Fatal(err)
	}
	var stepNotes []string
	for _, n := range res.Notes {
		if strings.HasPrefix(n, "step ") {
			stepNotes = append(stepNotes, n)
		}
	}
	if len(stepNotes) != 1 || !strings.HasPrefix(stepNotes[0], "step 1 (1000/s): the server committed 3.0 transactions") {
		t.Fatalf("step notes %q (all notes %q)", stepNotes, res.Notes)
	}
}

// TestApproxRate: predicted rates are shown to three significant digits,
// the same on the console and in the HTML report (which showed "486.0"
// and "39,016" where the console said "486" and "39,000").
func TestApproxRate(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want string
	}{{39016.2, "39,000"}, {486.04, "486"}, {713.4, "713"}, {42.66, "42.7"}, {4.274, "4.27"}, {0.5, "0.5"}} {
		if got := ApproxRate(c.v); got != c.want {
			t.Errorf("ApproxRate(%v) = %q, want %q", c.v, got, c.want)
		}
	}
}

// TestLockTables: the per-table lock-wait counters become shares of the
// attributed waits, the most waited-for first (ties by name); tables with
// no wait in the period are left out.
func TestLockTables(t *testing.T) {
	c := map[string]float64{target.CtrWaitLockMs: 900, target.CtrLockTablePrefix + "ceiling.district": 200,
		target.CtrLockTablePrefix + "ceiling.warehouse": 600, target.CtrLockTablePrefix + "ceiling.b": 100,
		target.CtrLockTablePrefix + "ceiling.a": 100, target.CtrLockTablePrefix + "ceiling.idle": 0}
	got := lockTables(c)
	want := []diagnose.TableShare{{Table: "ceiling.warehouse", Share: 0.6}, {Table: "ceiling.district", Share: 0.2}, {Table: "ceiling.a", Share: 0.1}, {Table: "ceiling.b", Share: 0.1}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("lockTables = %+v, want %+v", got, want)
	}
	if got := lockTables(map[string]float64{target.CtrWaitLockMs: 5}); got != nil {
		t.Errorf("no table counters: %+v, want nil", got)
	}
}

// TestFullPagesVerdict: PostgreSQL's full-page images (pg.wal_fpi) reach
// a log verdict with the server's checkpoint settings, per request as the
// log's bytes are taken.
func TestFullPagesVerdict(t *testing.T) {
	r := &runner.Result{Started: time.Now(), Total: snapWith(1000, 2*time.Millisecond, 0), Elapsed: 2 * time.Second, ClientCPUSeconds: 0.1,
		Evidence: &runner.Evidence{Seconds: 2, Counters: map[string]float64{
			target.CtrCommits: 1000, target.CtrLogSyncs: 1000, target.CtrLogSyncMs: 1500, target.CtrLogBytes: 5000 * 1000, ctrFullPages: 600}}}
	info := target.Info{Engine: "postgres", Settings: map[string]string{"block_size": "8192", "max_wal_size": "1GB", "checkpoint_timeout": "5min", "wal_compression": "off"}}
	res, err := Build(Params{Workload: "updates", Load: runner.Config{Threads: 1, Duration: 2 * time.Second}, Cores: 2, Info: info}, r)
	if err != nil {
		t.Fatal(err)
	}
	v := res.Verdict
	if v.Bottleneck != diagnose.CommitFlush || !strings.Contains(strings.Join(v.Evidence, "|"), "0.6 full-page images per request (pg_stat_wal.wal_fpi), up to 4915 of its 5000 WAL bytes (98%)") {
		t.Fatalf("%s: %q", v.Bottleneck, v.Evidence)
	}
	if !slices.ContainsFunc(v.Suggestions, func(s diagnose.Suggestion) bool {
		return strings.Contains(s.Action, "(now max_wal_size 1GB, checkpoint_timeout 5min, wal_compression off)")
	}) {
		t.Errorf("suggestions %+v", v.Suggestions)
	}
}

// TestSQLiteCheckpointsVerdict: SQLite's per-file syncs at NORMAL, its
// page size and checkpoint threshold reach the verdict (a real run's
// counts: 15,000 single inserts in 6 s on 2 workers, 4,350 WAL syncs and
// 2,025 database-file syncs); at FULL, where every commit syncs, nothing
// is said.
func TestSQLiteCheckpointsVerdict(t *testing.T) {
	build := func(during string) *Result {
		t.Helper()
		r := &runner.Result{Started: time.Now(), Total: snapWith(15000, 300*time.Microsecond, 0), Elapsed: 6 * time.Second, ClientCPUSeconds: 2,
			Evidence: &runner.Evidence{Seconds: 6, Counters: map[string]float64{target.CtrLogBytes: 15000 * 4150, target.CtrLogSyncs: 4350, target.CtrLogSyncMs: 1400},
				Files: []target.FileStat{
					{Name: "ceiling.db", Role: "data", Writes: 4700, Syncs: 2025, SyncNs: 700e6},
					{Name: "ceiling.db-wal", Role: "log", Writes: 30000, Syncs: 4350, SyncNs: 1400e6},
				}}}
		info := target.Info{Engine: "sqlite", Durability: target.DurabilityInfo{Setting: "synchronous", During: during},
			Settings: map[string]string{"page_size": "4096", "wal_autocheckpoint": "1000"}}
		res, err := Build(Params{Workload: "single-inserts", Load: runner.Config{Threads: 2, Duration: 6 * time.Second}, Cores: 2, Info: info}, r)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if ev := strings.Join(build("NORMAL").Verdict.Evidence, "|"); !strings.Contains(ev, "SQLite synced its WAL 0.29 times per request and completed 0.135 checkpoints per request, where its threshold (wal_autocheckpoint 1000 pages) calls for about 0.001") ||
		!strings.Contains(ev, "the syncs took 18% of the connections' time") {
		t.Errorf("NORMAL: %q", ev)
	}
	if ev := strings.Join(build("FULL").Verdict.Evidence, "|"); strings.Contains(ev, "checkpoints per request") {
		t.Errorf("FULL: %q", ev)
	}
}
