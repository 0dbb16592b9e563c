package report

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ceiling-db/ceiling/internal/target"
)

func TestPerOp(t *testing.T) {
	v := func(x float64) *float64 { return &x }
	for _, c := range []struct {
		v    *float64
		want string
	}{{nil, "n/a"}, {v(0), "0.000"}, {v(1.0027), "1.003"}, {v(0.0138), "0.014"}, {v(0.00138), "0.00138"}, {v(0.000939), "0.000939"}, {v(0.0000123), "1.23e-05"}} {
		if got := perOp(c.v); got != c.want {
			t.Errorf("perOp(%v) = %q, want %q", c.v, got, c.want)
		}
	}
}

func TestOneLine(t *testing.T) {
	if got := oneLine("a\nb"); got != "a b" {
		t.Errorf("oneLine = %q", got)
	}
	long := "postgres: sample: postgres: connect to postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable: failed to connect to `user=postgres database=postgres`: 127.0.0.1:5432 (127.0.0.1): server error: FATAL: the database system is shutting down (SQLSTATE 57P03)"
	got := oneLine(long)
	if len(got) > 210 || !strings.HasPrefix(got, "postgres: sample:") || !strings.HasSuffix(got, "FATAL: the database system is shutting down (SQLSTATE 57P03)") || !strings.Contains(got, " … ") {
		t.Errorf("oneLine(long) = %q (%d bytes): want its start and its end", got, len(got))
	}
	// Cut between runes, never inside one.
	wide := strings.Repeat("é", 150)
	if got := oneLine(wide); !utf8.ValidString(got) {
		t.Errorf("oneLine cut a rune: %q", got)
	}
}

// TestEvidenceErrorText: failed samples of server evidence are counted,
// with when the first failed and why; a result written before they were
// counted shows its error alone.
func TestEvidenceErrorText(t *testing.T) {
	at := 12.3
	ev := &Evidence{Error: "the sampler's session: postgres: connect to postgres://u@h/db: connection refused", FailedSamples: 3, FirstFailedS: &at}
	if got := EvidenceErrorText(ev); got != "3 samples failed (the first 12.3 s into the run): the sampler's session: postgres: connect to postgres://u@h/db: connection refused" {
		t.Errorf("three: %q", got)
	}
	ev.FailedSamples = 1
	if got := EvidenceErrorText(ev); !strings.HasPrefix(got, "1 sample failed (the first 12.3 s into the run): ") {
		t.Errorf("one: %q", got)
	}
	if got := EvidenceErrorText(&Evidence{Error: "x\ny"}); got != "x y" {
		t.Errorf("uncounted: %q", got)
	}
}

// The repeats table prints per-request counts as the summary does.
func TestRepeatsPerOpDigits(t *testing.T) {
	v := func(x float64) *float64 { return &x }
	r := &Result{Load: Load{Repeat: 2}, Runs: []RunSummary{
		{Run: 1, Costs: Costs{DataSyncsPerOp: v(0.00107)}},
		{Run: 2, Costs: Costs{DataSyncsPerOp: v(0.00102)}},
	}}
	var b strings.Builder
	printRepeats(&b, r)
	if !strings.Contains(b.String(), "0.00107") || !strings.Contains(b.String(), "0.00102") {
		t.Errorf("repeats table:\n%s\nwant 0.00107 and 0.00102", b.String())
	}
}

// Files open but idle over the measured phase are left out of the file
// table; when every one was idle, one line says so instead of an empty
// table.
func TestIdleFiles(t *testing.T) {
	files := []File{{Name: "ibdata1", Role: "data"}, {Name: "ibtmp1", Role: "other"}, {Name: "test/ceiling_rows.ibd", Role: "data"},
		{Name: "test/ceiling_u_orders.ibd", Role: "data"}, {Name: "test/ceiling_u_customers.ibd", Role: "data"}}
	want := "none of the 5 files measured (ibdata1, ibtmp1, test/ceiling_rows.ibd, and 2 more) was read or written"
	if got := IdleFilesNote(files); !strings.HasPrefix(got, want) {
		t.Errorf("IdleFilesNote = %q, want it to start %q", got, want)
	}
	var b strings.Builder
	PrintSummary(&b, &Result{Files: files})
	if !strings.Contains(b.String(), "file IO (measured phase): "+want) || strings.Contains(b.String(), "KB/write") {
		t.Errorf("summary of idle files: want the one line, no table:\n%s", b.String())
	}

	files[3].Writes = 7
	if got := IdleFilesNote(files); got != "" {
		t.Errorf("IdleFilesNote with a written file = %q, want none", got)
	}
	if got := TouchedFiles(files); len(got) != 1 || got[0].Name != "test/ceiling_u_orders.ibd" {
		t.Errorf("TouchedFiles = %+v, want the written file alone", got)
	}
	b.Reset()
	PrintSummary(&b, &Result{Files: files})
	if !strings.Contains(b.String(), "ceiling_u_orders.ibd data") || strings.Contains(b.String(), "ibtmp1") {
		t.Errorf("summary: want the written file's row and no idle one:\n%s", b.String())
	}
	if IdleFilesNote(nil) != "" {
		t.Error("IdleFilesNote(nil): want none (no file statistics at all)")
	}
}

// TestWaitEventsLine: the wait events, largest first (ties by name), six
// of them and the rest together; shares below one half of a percent
// print as <1%.
func TestWaitEventsLine(t *testing.T) {
	c := map[string]float64{"wait_lock_ms": 5000}
	if got := WaitEventsLine(c); got != "" {
		t.Errorf("no events: %q", got)
	}
	for i, ms := range []float64{380, 300, 200, 80, 20, 10, 6, 4, 0} {
		c[target.CtrWaitEventPrefix+string(rune('a'+i))] = ms
	}
	want := "a 38%, b 30%, c 20%, d 8%, e 2%, f 1% and 2 more 1%"
	if got := WaitEventsLine(c); got != want {
		t.Errorf("WaitEventsLine = %q, want %q", got, want)
	}
	c = map[string]float64{target.CtrWaitEventPrefix + "IO:WALSync": 999, target.CtrWaitEventPrefix + "CPU": 1}
	if got, want := WaitEventsLine(c), "IO:WALSync 100% and CPU <1%"; got != want {
		t.Errorf("WaitEventsLine = %q, want %q", got, want)
	}
	// How they were measured; an open loop's idle time is the client's.
	r := &Result{Target: target.Info{Engine: "postgres"}, Load: Load{Model: "closed"}}
	if got := WaitEventsHow(r); got != "share of the sessions' time, sampled from pg_stat_activity" {
		t.Errorf("closed loop: %q", got)
	}
	r.Target.Engine, r.Load.Model = "mysql", "open"
	if got := WaitEventsHow(r); !strings.HasPrefix(got, "share of the sessions' time, from performance_schema; the client's events hold the time idle between scheduled requests") {
		t.Errorf("open loop: %q", got)
	}
}

// TestThreadsSummary: the count with the most requests/s, and the fewest
// threads that did 90% of it.
func TestThreadsSummary(t *testing.T) {
	step := func(n int, rps float64) Step { return Step{Threads: &n, AchievedPerSec: &rps} }
	steps := []Step{step(1, 6402), step(2, 6740), step(4, 12749), step(8, 18955), step(16, 22199)}
	if got, want := ThreadsSummary(steps), "most requests/s: 22,199 at 16 threads"; got != want {
		t.Errorf("ThreadsSummary = %q, want %q (8 threads did 85%%)", got, want)
	}
	steps[3] = step(8, 20500)
	if got, want := ThreadsSummary(steps), "most requests/s: 22,199 at 16 threads; 90% of it from 8 threads (20,500)"; got != want {
		t.Errorf("ThreadsSummary = %q, want %q", got, want)
	}
	if got := ThreadsSummary([]Step{{Rate: 100}}); got != "" {
		t.Errorf("a rate step: %q", got)
	}
	// TPC-C: the NOPM peak is named too, which can be at another count.
	for i, nopm := range []float64{6100, 6500, 12000, 19000, 18400} {
		steps[i].Figures = map[string]float64{"nopm": nopm}
	}
	if got, want := ThreadsSummary(steps), "most requests/s: 22,199 at 16 threads; 90% of it from 8 threads (20,500); most NOPM: 19,000 at 8 threads"; got != want {
		t.Errorf("TPC-C: ThreadsSummary = %q, want %q", got, want)
	}
}

// TestThreadsTableNOPM: a TPC-C thread ramp's table has NOPM by thread
// count (HammerDB's curve); other workloads' tables have no such column.
func TestThreadsTableNOPM(t *testing.T) {
	step := func(n int, rps, nopm float64) Step {
		s := Step{Threads: &n, AchievedPerSec: &rps}
		if nopm > 0 {
			s.Figures = map[string]float64{"nopm": nopm}
		}
		return s
	}
	var b strings.Builder
	printThreads(&b, []Step{step(1, 220.4, 6207), step(4, 604.7, 16042)})
	if !strings.Contains(b.String(), " NOPM ") || !strings.Contains(b.String(), "16,042") {
		t.Errorf("TPC-C ramp without NOPM by thread count:\n%s", b.String())
	}
	b.Reset()
	printThreads(&b, []Step{step(1, 6402, 0), step(2, 6740, 0)})
	if strings.Contains(b.String(), "NOPM") {
		t.Errorf("a NOPM column without TPC-C:\n%s", b.String())
	}
}
