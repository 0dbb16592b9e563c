package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/ceiling-db/ceiling/internal/knee"
	"github.com/ceiling-db/ceiling/internal/metrics"
	"github.com/ceiling-db/ceiling/internal/report"
	"github.com/ceiling-db/ceiling/internal/testenv"
)

// histOf is an encoded histogram of n requests at ms each.
func histOf(t *testing.T, n int64, ms int64) string {
	t.Helper()
	h := hdr.New(1, 60_000_000, 3)
	for range n {
		if err := h.RecordValue(ms * 1000); err != nil {
			t.Fatal(err)
		}
	}
	enc, err := metrics.EncodeHist(h)
	if err != nil {
		t.Fatal(err)
	}
	return enc
}

// post is a shard's word on a probe, as JSON: n requests at ms each.
func post(t *testing.T, w probeWord, n int64, ms int64) []byte {
	t.Helper()
	if n > 0 {
		w.Hist = histOf(t, n, ms)
	}
	b, err := json.Marshal(w)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestJudgeRound: a probe is judged by every shard's requests (counts
// added, latency from the merged histograms); a shard that failed stops
// the search with its error, an interrupted one makes the probe partial,
// and shards that probed different rates are an error.
func TestJudgeRound(t *testing.T) {
	a := post(t, probeWord{Rate: 50, Achieved: 50, Scheduled: 100, Completed: 90, Late: 10}, 90, 1)
	b := post(t, probeWord{Rate: 50, Achieved: 49, Scheduled: 100, Completed: 100, Failed: 2}, 100, 9)
	fig, partial, err := judgeRound([][]byte{a, b}, 1, 100)
	if err != nil || partial {
		t.Fatal(partial, err)
	}
	// 90 requests at 1 ms and 100 at 9 ms: the median is 9 ms, which
	// neither shard's own figures would say of the other's.
	if fig.Rate != 100 || fig.Achieved != 99 || fig.Scheduled != 200 || fig.Completed != 190 || fig.Late != 10 || fig.Failed != 2 ||
		fig.Latency == nil || fig.Latency.P50 < 8.9 || fig.Latency.P50 > 9.1 || fig.Latency.Mean < 5.1 || fig.Latency.Mean > 5.3 { // mean (90×1 + 100×9) ÷ 190
		t.Fatalf("judged %+v, latency %+v", fig, fig.Latency)
	}
	if got := (knee.SLO{{Metric: "p50", Op: "<", Limit: 5}}).Check(fig); len(got) != 1 {
		t.Fatalf("p50<5ms on the whole probe: %v, want it broken (shard 0 alone meets it)", got)
	}
	// Each operation's requests and latency are merged too, for the
	// terms that name one.
	opA := post(t, probeWord{Rate: 50, Scheduled: 10, Completed: 10, Ops: map[string]opWord{"insert": {Completed: 10, Hist: histOf(t, 10, 1)}}}, 10, 1)
	opB := post(t, probeWord{Rate: 50, Scheduled: 30, Completed: 30, Ops: map[string]opWord{"insert": {Completed: 20, Hist: histOf(t, 20, 9)}, "delete": {Completed: 10}}}, 30, 9)
	fig, _, err = judgeRound([][]byte{opA, opB}, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	if ins := fig.ByOp["insert"]; ins.Completed != 30 || ins.Latency == nil || ins.Latency.P50 < 8.9 || ins.Latency.Max < 8.9 || fig.ByOp["delete"].Completed != 10 || fig.ByOp["delete"].Latency != nil {
		t.Fatalf("by operation: %+v", fig.ByOp)
	}

	for _, tc := range []struct {
		name    string
		b       []byte
		partial bool
		err     string
	}{
		{"failed", post(t, probeWord{Err: "connect: refused"}, 0, 0), false, "shard 1 stopped: connect: refused"},
		{"interrupted", post(t, probeWord{Partial: true}, 0, 0), true, ""},
		{"apart", post(t, probeWord{Rate: 60, Scheduled: 1}, 1, 1), false, "the shards' searches went apart"},
	} {
		_, partial, err := judgeRound([][]byte{a, tc.b}, 0, 100)
		if partial != tc.partial || (tc.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%s: partial %v, err %v; want %v, %q", tc.name, partial, err, tc.partial, tc.err)
		}
	}
}

// TestThinRetry: a re-run after a failure only by percentiles of too few
// requests lasts long enough to hold what they need, in whole seconds, at
// most maxThinStretch steps; after any other failure it lasts a step.
func TestThinRetry(t *testing.T) {
	thin := knee.Outcome{Failed: []string{"p99 1ms ≥ 0.5ms (of 100 requests: the 2nd slowest)"}, Thin: []string{"p99"}, Need: 1000}
	mixed := knee.Outcome{Failed: []string{"p99 …", "late 5% ≥ 1%"}, Thin: []string{"p99"}, Need: 1000}
	for _, tc := range []struct {
		name string
		prev knee.Outcome
		rate float64
		step time.Duration
		want time.Duration
	}{
		{"thin p99 at 100/s", thin, 100, time.Second, 10 * time.Second},
		{"thin p99 at 300/s", thin, 300, time.Second, 4 * time.Second}, // 1,000 ÷ 300 = 3.3 s
		{"capped", thin, 1, time.Second, maxThinStretch * time.Second},
		{"the step holds enough", thin, 2000, time.Second, time.Second},
		{"late failed too", mixed, 100, time.Second, time.Second},
		{"passed", knee.Outcome{Pass: true}, 100, time.Second, time.Second},
	} {
		got, why := thinRetry(tc.prev, tc.rate, tc.step)
		if got != tc.want || (got != tc.step) != (why != "") {
			t.Errorf("%s: %v %q, want %v", tc.name, got, why, tc.want)
		}
	}
}

// runKneeShards runs `ceiling knee ARGS --shard I/2` for both shards at
// once, as two processes would, and returns each one's exit code and
// console output.
func runKneeShards(t *testing.T, ctx context.Context, args ...string) (codes [2]int, outs [2]string) {
	t.Helper()
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var stderr string
			codes[i], outs[i], stderr = runCLI(t, ctx, append(append([]string{"knee"}, args...), "--shard", fmt.Sprintf("%d/2", i), "--shard-wait", "60s")...)
			outs[i] += stderr
		}()
	}
	wg.Wait()
	return codes, outs
}

// readShardResults reads the two shards' results in dir, by shard.
func readShardResults(t *testing.T, dir string) [2]*report.Result {
	t.Helper()
	var rs [2]*report.Result
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		r := readDoc(t, filepath.Join(dir, e.Name()))
		if r.Load.Shard == nil || r.Load.Shard.I < 0 || r.Load.Shard.I > 1 || rs[r.Load.Shard.I] != nil {
			t.Fatalf("%s: shard %+v", e.Name(), r.Load.Shard)
		}
		rs[r.Load.Shard.I] = r
	}
	if rs[0] == nil || rs[1] == nil {
		t.Fatalf("%d results in %s, want the 2 shards'", len(entries), dir)
	}
	return rs
}

// TestShardedKnee: two shards search the knee together on each engine:
// they meet before every probe, each runs half of its rate with half the
// workers, and they take the same steps (the same probes, outcomes and
// answer); ceiling merge makes the search's result, each probe's step at
// the rate probed with both shards' requests. On SQLite, a search whose
// SLO fails shows the probes judged by both shards' requests together:
// the broken term's value is the merged probe's, the same in both shards'
// results, though each shard's own requests differ.
func TestShardedKnee(t *testing.T) {
	testenv.EachEngine(t, "sqlite:"+filepath.Join(t.TempDir(), "k.db"), func(t *testing.T, dsn string) {
		ctx := context.Background()
		defer runCLI(t, ctx, "cleanup", "inserts-deletes", "--db", dsn)
		if code, stdout, stderr := runCLI(t, ctx, "prepare", "inserts-deletes", "--rows", "1000", "--db", dsn); code != 0 {
			t.Fatalf("prepare: exit %d\n%s%s", code, stdout, stderr)
		}
		out := t.TempDir()
		codes, outs := runKneeShards(t, ctx, "inserts-deletes", "--rows", "1000", "--db", dsn, "-c", "2", "--slo", "p999<30s",
			"--start", "100", "--max", "400", "--step-duration", "500ms", "--retries", "0", "--out", out)
		for i := range 2 {
			if codes[i] != 0 || strings.Count(outs[i], "all 2 shards joined") != 3 || !strings.Contains(outs[i], "(2 shards)") {
				t.Fatalf("shard %d/2: exit %d, want 3 meetings (one per probe)\n%s\nthe other shard:\n%s", i, codes[i], outs[i], outs[1-i])
			}
		}
		rs := readShardResults(t, out)
		for i, r := range rs {
			k := r.Knee
			if k == nil || k.Rate == nil || *k.Rate != 400 || k.Stop != "max-passed" || len(k.Probes) != 3 || len(r.Steps) != 3 || r.Verdict != nil || r.Load.Threads != 1 {
				t.Fatalf("shard %d: knee %+v, %d steps, verdict %v, %d threads: want 100, 200, 400/s probed, passing, no verdict, 1 of the 2 threads", i, k, len(r.Steps), r.Verdict, r.Load.Threads)
			}
			for j, p := range k.Probes {
				if st := r.Steps[j]; p.Rate != 100*float64(int(1)<<j) || st.Rate != p.Rate/2 || st.Histogram == "" {
					t.Fatalf("shard %d probe %d: rate %g, its step's %g (want half), histogram %q", i, j, p.Rate, st.Rate, st.Histogram)
				}
			}
		}
		merged := filepath.Join(t.TempDir(), "m.json")
		code, stdout, stderr := runCLI(t, ctx, "merge", out, "--out", merged)
		if code != 0 || !strings.Contains(stdout, "knee: at least 400/s") || !strings.Contains(stdout, "verdict:") {
			t.Fatalf("merge: exit %d\n%s%s", code, stdout, stderr)
		}
		m := readDoc(t, merged)
		for j, s := range m.Steps {
			a, b := rs[0].Steps[j], rs[1].Steps[j]
			if s.Rate != m.Knee.Probes[j].Rate || s.Scheduled != a.Scheduled+b.Scheduled || s.Completed != a.Completed+b.Completed {
				t.Fatalf("merged step %d: rate %g, %d scheduled, %d completed; shards %d+%d, %d+%d", j, s.Rate, s.Scheduled, s.Completed, a.Scheduled, b.Scheduled, a.Completed, b.Completed)
			}
		}

		if !strings.HasPrefix(dsn, "sqlite:") {
			return
		}
		if code, stdout, stderr := runCLI(t, ctx, "prepare", "inserts-deletes", "--rows", "1000", "--db", dsn); code != 0 {
			t.Fatalf("prepare again: exit %d\n%s%s", code, stdout, stderr)
		}
		out = t.TempDir()
		codes, outs = runKneeShards(t, ctx, "inserts-deletes", "--rows", "1000", "--db", dsn, "-c", "2", "--slo", "p50<1us",
			"--start", "100", "--step-duration", "500ms", "--out", out)
		for i := range 2 {
			if codes[i] != 0 || !strings.Contains(outs[i], "FAIL again: p50") {
				t.Fatalf("shard %d/2: exit %d, want the start rate failed twice\n%s", i, codes[i], outs[i])
			}
		}
		rs = readShardResults(t, out)
		merged = filepath.Join(t.TempDir(), "f.json")
		if code, stdout, stderr := runCLI(t, ctx, "merge", out, "--out", merged); code != 0 {
			t.Fatalf("merge: exit %d\n%s%s", code, stdout, stderr)
		}
		m = readDoc(t, merged)
		slo, err := knee.ParseSLO("p50<1us")
		if err != nil {
			t.Fatal(err)
		}
		slo = slo.WithImplied()
		for j, p := range m.Knee.Probes {
			s := m.Steps[*p.Step]
			want := slo.Check(knee.Figures{Rate: p.Rate, Scheduled: s.Scheduled, Completed: s.Completed, Late: s.Late, Failed: s.Failed, Latency: s.LatencyMs})
			got0, got1 := rs[0].Knee.Probes[j].FailedTerms, rs[1].Knee.Probes[j].FailedTerms
			if p.Pass || strings.Join(got0, ";") != strings.Join(want, ";") || strings.Join(got1, ";") != strings.Join(want, ";") {
				t.Fatalf("probe %d: the shards broke %q and %q, the merged probe %q: each shard must judge by both shards' requests", j+1, got0, got1, want)
			}
		}
	})
}

// TestKneeInFlightNote: once a probe keeps the workers half busy, the
// search is told the rate above which -c, not the database, would set the
// pace (SQLite single inserts, 1 worker: at 40,960/s, 16.4 µs each, 67%
// busy, ≈ 61,000/s; the next probe, at 81,920/s, achieved 61,516/s).
func TestKneeInFlightNote(t *testing.T) {
	n := kneeInFlightNote(1, 40960, 0.0164, 1e6)
	for _, want := range []string{"at 41,000/s ceiling's 1 worker was busy 67% of the time (16.4 µs per request)", "above ≈ 61,000/s requests queue in ceiling"} {
		if !strings.Contains(n, want) {
			t.Errorf("note %q lacks %q", n, want)
		}
	}
	if n := kneeInFlightNote(8, 10240, 0.5, 1e6); !strings.Contains(n, "ceiling's 8 workers were busy 64%") || !strings.Contains(n, "≈ 16,000/s") {
		t.Errorf("8 workers: %q", n)
	}
	for _, tc := range []struct {
		threads             int
		achieved, svc, maxR float64
	}{
		{1, 20480, 0.0164, 1e6}, // 34% busy: too early to say
		{1, 40960, 0.0164, 5e4}, // the search stops below ≈ 61,000/s
		{0, 40960, 0.0164, 1e6},
	} {
		if n := kneeInFlightNote(tc.threads, tc.achieved, tc.svc, tc.maxR); n != "" {
			t.Errorf("%+v: %q", tc, n)
		}
	}
}
