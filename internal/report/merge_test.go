package report

import (
	"math"
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/ceiling-db/ceiling/internal/metrics"
	"github.com/ceiling-db/ceiling/internal/target"
)

func shardDoc(i, n int, key string) *Result {
	return &Result{Workload: Workload{Name: "w"}, Load: Load{Shard: &Shard{I: i, N: n, Key: key}},
		Summary: Summary{ByOp: map[string]OpResult{}}, Histograms: map[string]string{}}
}

// TestMergeRefuses: Merge takes every shard of one run, each once.
func TestMergeRefuses(t *testing.T) {
	plain := shardDoc(0, 2, "k")
	plain.Load.Shard = nil
	other := shardDoc(1, 2, "other")
	for _, tc := range []struct {
		name string
		in   []*Result
		want string
	}{
		{"not a shard", []*Result{plain}, "a.json is not a shard's result"},
		{"missing", []*Result{shardDoc(0, 3, "k"), shardDoc(2, 3, "k")}, "shard 1 of 3 missing (run k)"},
		{"twice", []*Result{shardDoc(0, 2, "k"), shardDoc(0, 2, "k")}, "b.json: shard 0/2 given twice"},
		{"another run", []*Result{shardDoc(0, 2, "k"), other}, "b.json is shard 1/2 of run other, a.json shard 0/2 of run k: not one run"},
		{"merged", []*Result{shardDoc(-1, 2, "k")}, "is not a shard's result"},
	} {
		_, err := Merge(tc.in, []string{"a.json", "b.json"})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestMergeNotes: a merge says when the shards ran different versions
// or did not start together.
func TestMergeNotes(t *testing.T) {
	a, b := shardDoc(0, 2, "k"), shardDoc(1, 2, "k")
	a.Tool.Version, b.Tool.Version = "v1", "v2"
	b.StartedAt = a.StartedAt.Add(5 * time.Second)
	m, err := Merge([]*Result{b, a}, nil)
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(m.Notes, "\n")
	if !strings.Contains(notes, "shard 1 ran ceiling v2, shard 0 v1") || !strings.Contains(notes, "shard 1 started 5.0s after the first") || m.Tool.Version != "v1" {
		t.Fatalf("notes:\n%s", notes)
	}
}

// TestMergeFigures: figures counted from the database are one shard's,
// the others the sum; one a shard lacks is left out.
func TestMergeFigures(t *testing.T) {
	got := mergeFigures([]map[string]float64{
		{"nopm": 600, "retries": 2, "only0": 1},
		{"nopm": 601, "retries": 3},
	}, []string{"nopm"})
	if len(got) != 2 || got["nopm"] != 600 || got["retries"] != 5 {
		t.Fatalf("merged figures %v, want nopm 600 (shard 0's), retries 5, no only0", got)
	}
}

// TestScaleCosts: a shard's costs per its own requests become costs per
// all shards' requests; the weighted mean of per-process costs likewise.
func TestScaleCosts(t *testing.T) {
	c := scaleCosts(Costs{LogBytesPerOp: f64(300), CommitsPerOp: f64(3)}, 100, 300)
	if *c.LogBytesPerOp != 100 || *c.CommitsPerOp != 1 || c.LogSyncsPerOp != nil {
		t.Fatalf("scaled %+v", c)
	}
	m := meanCosts([]Costs{{LogSyncsPerOp: f64(1), DataReadsPerOp: f64(2)}, {LogSyncsPerOp: f64(4)}}, []int64{100, 200})
	if *m.LogSyncsPerOp != 3 || m.DataReadsPerOp != nil {
		t.Fatalf("mean %+v: log syncs (1×100 + 4×200)/300 = 3, data reads n/a (one shard lacks it)", m)
	}
}

// TestShardsDeviceLatency: the lowest mean data-file time per IO over the
// shards' measured intervals with enough IOs (the merged verdict's device
// latency), warm-up and thin intervals passed over.
func TestShardsDeviceLatency(t *testing.T) {
	iv := func(warm bool, reads, writes int64, ms float64) IntervalPoint {
		return IntervalPoint{Warmup: warm, Files: []File{{Role: "data", Reads: reads, Writes: writes, ReadMs: ms / 2, WriteMs: ms / 2}, {Role: "log", Writes: 1000, WriteMs: 1}}}
	}
	a := &Result{Intervals: []IntervalPoint{iv(true, 100, 0, 1), iv(false, 50, 50, 20)}}   // warm-up 0.01 ms/IO: not counted
	b := &Result{Intervals: []IntervalPoint{iv(false, 5, 0, 0.01), iv(false, 80, 20, 10)}} // 5 IOs: too few
	got := shardsDeviceLatency([]*Result{a, b})
	if got == nil || *got != 0.1 {
		t.Fatalf("device latency %v, want 0.1 ms (shard 1's second interval)", got)
	}
	if shardsDeviceLatency([]*Result{{}}) != nil {
		t.Fatal("no data-file IO: no estimate")
	}
}

// kneeShard is shard i of 2 of a knee search that probed rates (each
// shard half of each) and passed them all; each probe's step holds n
// requests of the shard's, at latency i+1 ms.
func kneeShard(t *testing.T, i int, rates []float64, n int64) *Result {
	t.Helper()
	r := shardDoc(i, 2, "k")
	top := rates[len(rates)-1]
	r.Knee = &Knee{Rate: &top, Stop: "max-passed"}
	for j, rate := range rates {
		h := hdr.New(1, 60_000_000, 3)
		for range n {
			if err := h.RecordValue(int64(1000 * (i + 1))); err != nil {
				t.Fatal(err)
			}
		}
		enc, err := metrics.EncodeHist(h)
		if err != nil {
			t.Fatal(err)
		}
		step := j
		r.Knee.Probes = append(r.Knee.Probes, KneeProbe{Rate: rate, Pass: true, Step: &step})
		r.Steps = append(r.Steps, Step{Index: j, Rate: rate / 2, Scheduled: n, Completed: n, AchievedPerSec: f64(rate / 2), Histogram: enc,
			SchedLagSlow: f64i(int64(i + j))})
		r.Load.Rates = append(r.Load.Rates, rate/2)
	}
	return r
}

// TestMergeKnee: the shards of one knee search merge into the search's
// result, each probe's step at the rate probed with every shard's
// requests; shards whose searches ended apart, or a search and a run,
// do not merge; an interrupted search keeps the probes every shard ran.
func TestMergeKnee(t *testing.T) {
	rates := []float64{100, 200, 300}
	m, err := Merge([]*Result{kneeShard(t, 0, rates, 10), kneeShard(t, 1, rates, 30)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if m.Knee == nil || *m.Knee.Rate != 300 || len(m.Steps) != 3 || m.Partial {
		t.Fatalf("merged knee %+v, %d steps, partial %v", m.Knee, len(m.Steps), m.Partial)
	}
	for j, s := range m.Steps {
		// 10 requests at 1 ms and 30 at 2 ms: the median is 2 ms.
		if s.Rate != rates[j] || s.Completed != 40 || s.LatencyMs == nil || s.LatencyMs.P50 < 1.99 || s.LatencyMs.P50 > 2.01 || m.Load.Rates[j] != rates[j] {
			t.Fatalf("merged step %d: rate %g (load %g), %d completed, latency %+v; want %g, 40, p50 2 ms", j, s.Rate, m.Load.Rates[j], s.Completed, s.LatencyMs, rates[j])
		}
		// Late starts add up over the shards: j of shard 0's, j+1 of shard 1's.
		if s.SchedLagSlow == nil || *s.SchedLagSlow != int64(2*j+1) {
			t.Fatalf("merged step %d: %v late starts, want %d", j, s.SchedLagSlow, 2*j+1)
		}
	}
	old := kneeShard(t, 1, rates, 30)
	old.Steps[0].SchedLagSlow = nil // a shard's result written before they were counted
	if m, err := Merge([]*Result{kneeShard(t, 0, rates, 10), old}, nil); err != nil {
		t.Fatal(err)
	} else if m.Steps[0].SchedLagSlow != nil {
		t.Fatalf("a shard without the count: %d late starts merged, want null", *m.Steps[0].SchedLagSlow)
	}

	apart := kneeShard(t, 1, []float64{100, 200, 250}, 30)
	if _, err := Merge([]*Result{kneeShard(t, 0, rates, 10), apart}, nil); err == nil || !strings.Contains(err.Error(), "not the shards of one search") {
		t.Fatalf("searches that went apart: %v", err)
	}
	run := shardDoc(1, 2, "k")
	if _, err := Merge([]*Result{kneeShard(t, 0, rates, 10), run}, nil); err == nil || !strings.Contains(err.Error(), "result 2 is a run's result, result 1 a knee search's") {
		t.Fatalf("a search and a run: %v", err)
	}

	// Shard 1 was interrupted before the third probe started.
	cut := kneeShard(t, 1, rates, 30)
	cut.Steps = cut.Steps[:2]
	cut.Knee.Probes[2].Step = nil
	m, err = Merge([]*Result{kneeShard(t, 0, rates, 10), cut}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Steps) != 2 || !m.Partial || !strings.Contains(strings.Join(m.Notes, "\n"), "its last probe ran on some shards only") {
		t.Fatalf("interrupted search: %d steps (want 2), partial %v, notes %q", len(m.Steps), m.Partial, m.Notes)
	}
}

// TestMergeEvidenceCPUPressure: embedded shards' counters add up, but the
// host's CPU pressure, a time span each shard on the host counts whole,
// is the largest of theirs (summed, two shards' 3 s of pressure in a 5 s
// span would read 120%).
func TestMergeEvidenceCPUPressure(t *testing.T) {
	a, b := shardDoc(0, 2, "k"), shardDoc(1, 2, "k")
	a.Evidence = &Evidence{Seconds: 5, Counters: map[string]float64{target.CtrHostCPUPressure: 3, target.CtrLogBytes: 100, target.CtrHostCores: 2}}
	b.Evidence = &Evidence{Seconds: 5, Counters: map[string]float64{target.CtrHostCPUPressure: 2.5, target.CtrLogBytes: 50, target.CtrHostCores: 2}}
	m := &Result{}
	mergeEvidence(m, []*Result{a, b}, true)
	c := m.Evidence.Counters
	if c[target.CtrHostCPUPressure] != 3 || c[target.CtrLogBytes] != 150 || c[target.CtrHostCores] != 2 {
		t.Fatalf("merged counters %v: want pressure 3 (the largest), log bytes 150 (summed), cores 2", c)
	}
}

// TestMergeClientQueues: a server's shards keep one shard's server
// evidence, but ceiling's own threads' run-queue time is each shard's and
// is summed; where a shard lacks it, the merged run has none. The shards'
// own results are left alone.
func TestMergeClientQueues(t *testing.T) {
	a, b := shardDoc(0, 2, "k"), shardDoc(1, 2, "k")
	a.Evidence = &Evidence{Seconds: 5, Counters: map[string]float64{target.CtrClientRunQueueSec: 0.1, target.CtrLogBytes: 100}}
	b.Evidence = &Evidence{Seconds: 5, Counters: map[string]float64{target.CtrClientRunQueueSec: 0.3, target.CtrLogBytes: 100}}
	m := &Result{}
	mergeEvidence(m, []*Result{a, b}, false)
	c := m.Evidence.Counters
	if math.Abs(c[target.CtrClientRunQueueSec]-0.4) > 1e-9 || c[target.CtrLogBytes] != 100 || a.Evidence.Counters[target.CtrClientRunQueueSec] != 0.1 {
		t.Fatalf("merged %v (shard a now %v): want client run queue 0.4 summed, log bytes 100 (one shard's)", c, a.Evidence.Counters)
	}
	delete(b.Evidence.Counters, target.CtrClientRunQueueSec)
	m = &Result{}
	mergeEvidence(m, []*Result{a, b}, false)
	if _, ok := m.Evidence.Counters[target.CtrClientRunQueueSec]; ok {
		t.Fatalf("merged %v: a shard lacked the client's run queue", m.Evidence.Counters)
	}
}
