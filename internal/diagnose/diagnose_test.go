package diagnose

import (
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func p(v float64) *float64 { return &v }

// Seed situations (shared/seeds): single-row commits bound by log flushes
// (002), the same relaxed, a log-write-bound insert/delete step (000), an
// IOPS-queued data file (001, 004), a saturated client, nothing.
var (
	commitBound = Figures{Threads: 1, Requests: 34000, ElapsedS: 10, RequestsPerSec: p(3400), MeanLatencyMs: p(0.29),
		SyncsPerReq: p(1.0), SyncMs: p(0.22), LogMBPerSec: p(3.4), ClientCPUPct: p(8)}
	relaxed = Figures{Threads: 1, Requests: 150000, ElapsedS: 10, RequestsPerSec: p(15000), MeanLatencyMs: p(0.066),
		SyncsPerReq: p(0.002), SyncMs: p(0.22), LogMBPerSec: p(12), ClientCPUPct: p(20)}
	logBoundStep = Figures{Scope: "step 4", Threads: 32, OpenLoop: true, RequestsPerSec: p(1900), MeanLatencyMs: p(400),
		LatePct: p(12), LogMBPerSec: p(1.9), PrevLogMBPerSec: p(1.85), SyncsPerReq: p(0.05), SyncMs: p(2), SchedLagP99Ms: p(0.3)}
	iopsQueued  = Figures{Threads: 50, RequestsPerSec: p(330), MeanLatencyMs: p(150), DataIOPS: p(500), DataLatencyMs: p(500), DeviceLatencyMs: p(3)}
	clientBound = Figures{Threads: 64, RequestsPerSec: p(90000), MeanLatencyMs: p(0.7), ClientCPUPct: p(95), SyncsPerReq: p(0.01), SyncMs: p(0.2)}
	nothing     = Figures{Threads: 4, RequestsPerSec: p(1000), MeanLatencyMs: p(4), ClientCPUPct: p(10)}
)

func TestDiagnoseSeeds(t *testing.T) {
	tests := []struct {
		name string
		f    Figures
		want string
		gain [2]float64 // bounds of the first suggestion's gain; zero: not checked
	}{
		{"a commit-bound single inserts", commitBound, CommitFlush, [2]float64{3.5, 4.5}},
		{"b the same relaxed", relaxed, None, [2]float64{}},
		{"c log-write-bound step", logBoundStep, LogRate, [2]float64{}},
		{"d IOPS-queued data file", iopsQueued, StorageQueue, [2]float64{}},
		{"e client CPU 95%", clientBound, Client, [2]float64{}},
		{"f nothing", nothing, None, [2]float64{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := Diagnose(tc.f)
			if v.Bottleneck != tc.want {
				t.Fatalf("bottleneck %s, want %s; rules %+v", v.Bottleneck, tc.want, v.Rules)
			}
			if len(v.Evidence) == 0 {
				t.Fatal("no evidence")
			}
			if len(v.Rules) < len(Rules) {
				t.Fatalf("rules %+v", v.Rules)
			}
			if tc.gain[1] > 0 {
				g := v.Suggestions[0].PredictedGain
				if g == nil || *g < tc.gain[0] || *g > tc.gain[1] {
					t.Fatalf("gain %v, want in %v", g, tc.gain)
				}
			}
		})
	}
}

func TestCommitFlushRule(t *testing.T) {
	c := CommitFlushRule(commitBound)
	if !c.Matched {
		t.Fatalf("not matched: %s", c.Why)
	}
	share := 0.22 / 0.29
	if math.Abs(c.Score-share) > 1e-9 {
		t.Fatalf("score %g, want %g", c.Score, share)
	}
	if !strings.Contains(c.Evidence[0], "1.00 log syncs per commit, 0.220 ms per sync, = 76% of each request's time") {
		t.Fatalf("evidence %q", c.Evidence)
	}
	s := c.Suggestions[0]
	if s.Action != "--durability relaxed" || math.Abs(*s.PredictedGain-4.14) > 0.01 || math.Abs(*s.PredictedRequestsPerSec-3400/(1-share)) > 1 {
		t.Fatalf("suggestion %+v gain %v rps %v", s, *s.PredictedGain, *s.PredictedRequestsPerSec)
	}
	b := c.Suggestions[1]
	if !strings.HasPrefix(b.Action, "batch") || *b.PredictedGain < 2.5 || *b.PredictedGain > *s.PredictedGain {
		t.Fatalf("batch suggestion %+v gain %v", b, *b.PredictedGain)
	}
	// TPC-C's transactions are set by its specification: no batching.
	fixed := commitBound
	fixed.FixedTx = "TPC-C's"
	if c := CommitFlushRule(fixed); !c.Matched || len(c.Suggestions) != 1 || c.Suggestions[0].Action != "--durability relaxed" {
		t.Fatalf("TPC-C: suggestions %+v, want relaxed durability alone", c.Suggestions)
	}

	tests := []struct {
		name    string
		f       Figures
		matched bool
		why     string
	}{
		{"relaxed: few syncs per commit", relaxed, false, "commits share flushes"},
		{"syncs a small share", Figures{Threads: 1, RequestsPerSec: p(100), MeanLatencyMs: p(10), SyncsPerReq: p(1), SyncMs: p(1)}, false, "10% of each request's time"},
		{"not measured", Figures{Threads: 1, RequestsPerSec: p(100)}, false, "not applicable"},
		{"commit counter: 2 syncs per commit of 2 requests", Figures{Threads: 1, RequestsPerSec: p(1000), MeanLatencyMs: p(1), SyncsPerReq: p(0.5), CommitsPerReq: p(0.5), SyncMs: p(1)}, true, ""},
		{"MariaDB: fsyncs and log wait share", Figures{Threads: 1, RequestsPerSec: p(1000), SyncsPerReq: p(2), SyncsAll: true,
			WaitMs: map[string]float64{WaitLog: 800, WaitCPU: 200}}, true, "fsyncs (log+data)"},
		{"no latency: threads / rate", Figures{Threads: 2, RequestsPerSec: p(2000), SyncsPerReq: p(1), SyncMs: p(0.8)}, true, "80%"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := CommitFlushRule(tc.f)
			if c.Matched != tc.matched || !strings.Contains(c.Why, tc.why) {
				t.Fatalf("matched %v why %q", c.Matched, c.Why)
			}
		})
	}
}

func TestLogRateRule(t *testing.T) {
	tests := []struct {
		name    string
		f       Figures
		matched bool
	}{
		{"flat while late", logBoundStep, true},
		{"not late", func() Figures { f := logBoundStep; f.LatePct = p(0.2); return f }(), false},
		{"still rising", func() Figures { f := logBoundStep; f.PrevLogMBPerSec = p(1.5); return f }(), false},
		{"no previous step, no waits", func() Figures { f := logBoundStep; f.PrevLogMBPerSec = nil; return f }(), false},
		{"closed loop, log waits dominate, group commit", Figures{Threads: 16, RequestsPerSec: p(5000), LogMBPerSec: p(20), SyncsPerReq: p(0.1),
			WaitMs: map[string]float64{WaitLog: 700, WaitCPU: 300}}, true},
		{"not measured", Figures{Threads: 1}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := LogRateRule(tc.f)
			if c.Matched != tc.matched {
				t.Fatalf("matched %v: %s", c.Matched, c.Why)
			}
			if c.Matched && (len(c.Suggestions) == 0 || !strings.Contains(c.Evidence[0], "MB/s")) {
				t.Fatalf("evidence %q suggestions %+v", c.Evidence, c.Suggestions)
			}
		})
	}
}

func TestStorageQueueRule(t *testing.T) {
	c := StorageQueueRule(iopsQueued)
	if !c.Matched || !strings.Contains(c.Why, "500 ms = 167× the device's 3 ms") || !strings.Contains(strings.Join(c.Evidence, "|"), "500 IOPS") {
		t.Fatalf("%+v", c)
	}
	// A device far faster than 0.01 ms keeps its figure (an emulated
	// 500-IOPS file on a VM disk: "= 2068× the device's 0.00 ms" before).
	emu := Figures{DataLatencyMs: p(7.97), DeviceLatencyMs: p(0.003854)}
	if c := StorageQueueRule(emu); !c.Matched || !strings.Contains(c.Why, "data-file latency 7.97 ms = 2068× the device's 0.00385 ms") {
		t.Fatalf("emulated: %+v", c)
	}
	// SQLite: the writers wait for the one write lock while its holder
	// waits on the data file (updates by 4 writers, 500 IOPS emulated):
	// those lock waits count as the data file's, and storage-queue wins
	// over contention. A holder mostly on CPU keeps them contention's.
	held := Figures{InProcess: true, DataLatencyMs: p(2.59), DeviceLatencyMs: p(0.0055), DataIOPS: p(499), DataIOPSLimit: p(500), Profile: "azure-mi-gp-file-128g",
		WaitMs: map[string]float64{WaitDataRead: 21, WaitDataWrite: 22, WaitLock: 52, WaitCPU: 5}}
	c = StorageQueueRule(held)
	ev := strings.Join(c.Evidence, "|")
	if !c.Matched || c.Score < 0.85 || !strings.Contains(ev, "data-file IO waits are 43% of the sessions' time, and waits for SQLite's one writer while it waited on the data file another 47%") ||
		!strings.Contains(ev, "data files at 499 IOPS: the 500 IOPS limit of azure-mi-gp-file-128g, held by --emulate") {
		t.Fatalf("held writer: %+v", c)
	}
	if v := Diagnose(held); v.Bottleneck != StorageQueue {
		t.Fatalf("held writer: verdict %s, want storage-queue", v.Bottleneck)
	}
	onCPU := held
	onCPU.WaitMs = map[string]float64{WaitDataRead: 10, WaitDataWrite: 10, WaitLock: 50, WaitCPU: 30}
	if c := StorageQueueRule(onCPU); !c.Matched || c.Score > 0.25 || strings.Contains(strings.Join(c.Evidence, "|"), "one writer") {
		t.Fatalf("holder on CPU: %+v", c)
	}
	// Below 90% of the limit, the rate is not said to be held at it.
	under := held
	under.DataIOPS = p(300)
	if c := StorageQueueRule(under); strings.Contains(strings.Join(c.Evidence, "|"), "held by --emulate") {
		t.Fatalf("300 of 500 IOPS: %+v", c.Evidence)
	}
	for _, f := range []Figures{
		{DataLatencyMs: p(500)},                        // device latency unknown
		{DataLatencyMs: p(5), DeviceLatencyMs: p(3)},   // no queue
		{DeviceLatencyMs: p(3), RequestsPerSec: p(10)}, // data latency unknown
	} {
		if c := StorageQueueRule(f); c.Matched {
			t.Fatalf("%+v matched: %s", f, c.Why)
		}
	}
}

// TestContentionNamesHotTable: the tables the lock waits were attributed
// to appear in the contention verdict (the hottest also on the rule's own
// line, which a runner-up shows), and the suggestion names the hottest
// when it holds half of them or more.
func TestContentionNamesHotTable(t *testing.T) {
	f := Figures{WaitMs: map[string]float64{WaitLock: 50, WaitCPU: 50}, LockTables: []TableShare{
		{"ceiling.warehouse", 0.71}, {"ceiling.district", 0.2}, {"ceiling.stock", 0.05}, {"ceiling.new_order", 0.03}, {"ceiling.customer", 0.01}}}
	c := ContentionRule(f)
	if !c.Matched || !strings.HasSuffix(c.Why, ", most on ceiling.warehouse (71% of those seen)") {
		t.Fatalf("matched %v, why %q: want the hottest table named", c.Matched, c.Why)
	}
	ev := strings.Join(c.Evidence, "\n")
	if !strings.Contains(ev, "the lock waits seen were on ceiling.warehouse 71%, ceiling.district 20%, ceiling.stock 5% and 2 more tables 4%") {
		t.Errorf("evidence:\n%s", ev)
	}
	if len(c.Suggestions) == 0 || !strings.Contains(c.Suggestions[len(c.Suggestions)-1].Action, "spread the hot rows of ceiling.warehouse (71% of the lock waits seen)") {
		t.Errorf("suggestions %+v: want the hot table's rows spread", c.Suggestions)
	}

	// TPC-C --procedures on PostgreSQL: the waiting statement is the
	// routine's call, not a table whose rows could be spread.
	f.LockTables = []TableShare{{"pg_temp.ceiling_tpcc_delivery()", 1}}
	c = ContentionRule(f)
	if !strings.Contains(c.Why, "most in calls of the routine pg_temp.ceiling_tpcc_delivery() (100% of those seen; which of its tables, the sample does not show)") ||
		strings.Contains(c.Suggestions[len(c.Suggestions)-1].Action, "hot rows of pg_temp") ||
		!strings.Contains(c.Suggestions[len(c.Suggestions)-1].Action, "spread the hot rows that pg_temp.ceiling_tpcc_delivery()'s statements change") {
		t.Errorf("a routine: why %q, suggestions %+v", c.Why, c.Suggestions)
	}

	f.LockTables = []TableShare{{"ceiling.a", 0.4}, {"ceiling.b", 0.35}, {"ceiling.c", 0.15}, {"ceiling.d", 0.1}}
	c = ContentionRule(f)
	if ev := strings.Join(c.Evidence, "\n"); !strings.Contains(ev, "ceiling.a 40%, ceiling.b 35%, ceiling.c 15% and ceiling.d 10%") {
		t.Errorf("four tables: evidence\n%s", ev)
	}
	if a := c.Suggestions[len(c.Suggestions)-1].Action; a != "fewer concurrent writers, or partition the hot rows/tables" {
		t.Errorf("no table with half the waits: suggestion %q", a)
	}

	f.LockTables = nil
	if c := ContentionRule(f); strings.Contains(c.Why, "most on") || strings.Contains(strings.Join(c.Evidence, " "), "lock waits seen") {
		t.Errorf("no tables: why %q, evidence %q", c.Why, c.Evidence)
	}
}

// TestContentionLocksUntilFlush: where the engine keeps row locks through
// the commit's flush (PostgreSQL) and commits wait for it, the contention
// verdict suggests relaxed durability first (figures of a real run: 8
// workers updating one row, 2,085/s, 13,260/s relaxed); not where commits
// do not wait, nor on an engine that releases its locks before the flush.
func TestContentionLocksUntilFlush(t *testing.T) {
	yes := true
	base := func() Figures {
		return Figures{Threads: 8, Requests: 20869, ElapsedS: 10, RequestsPerSec: p(2085), MeanLatencyMs: p(3.83),
			WaitMs: map[string]float64{WaitLock: 74, WaitLog: 10, WaitClient: 10, WaitCPU: 6}, LockTables: []TableShare{{"ceiling.rows", 1}},
			SyncsPerReq: p(1.0005), SyncMs: p(0.34), CommitsWait: &yes, LocksUntilFlush: true}
	}
	v := Diagnose(base())
	ev := strings.Join(v.Evidence, "\n")
	if v.Bottleneck != Contention || !strings.Contains(ev, "the lock holders kept their locks through their commits' log flushes (1.00 log syncs per request, 0.34 ms each)") {
		t.Fatalf("%s, evidence\n%s", v.Bottleneck, ev)
	}
	if len(v.Suggestions) < 2 || !strings.HasPrefix(v.Suggestions[0].Action, "--durability relaxed, which releases the locks without waiting for the flush") {
		t.Errorf("suggestions %+v: want relaxed durability first", v.Suggestions)
	}
	no := false
	for name, change := range map[string]func(*Figures){
		"commits do not wait":       func(f *Figures) { f.CommitsWait = &no },
		"locks released before":     func(f *Figures) { f.LocksUntilFlush = false },
		"hardly any syncs":          func(f *Figures) { f.SyncsPerReq = p(0.01) },
		"syncs per request unknown": func(f *Figures) { f.SyncsPerReq = nil },
	} {
		f := base()
		change(&f)
		v := Diagnose(f)
		if v.Bottleneck != Contention || slices.ContainsFunc(v.Suggestions, func(s Suggestion) bool { return strings.Contains(s.Action, "--durability relaxed") }) {
			t.Errorf("%s: %s, suggestions %+v", name, v.Bottleneck, v.Suggestions)
		}
	}
}

func TestMemoryCPUContentionRules(t *testing.T) {
	tests := []struct {
		name    string
		rule    func(Figures) Candidate
		f       Figures
		matched bool
		score   float64 // checked when > 0
	}{
		{"memory: misses", MemoryRule, Figures{CacheHitRatio: p(0.7), DataReadsPerReq: p(4)}, true, 0.3},
		{"memory: misses, data-read waits", MemoryRule, Figures{CacheHitRatio: p(0.7), DataReadsPerReq: p(4), WaitMs: map[string]float64{WaitDataRead: 60, WaitCPU: 40}}, true, 0.6},
		{"memory: cached", MemoryRule, Figures{CacheHitRatio: p(0.99), DataReadsPerReq: p(0.01)}, false, 0},
		{"memory: not measured", MemoryRule, Figures{DataReadsPerReq: p(4)}, false, 0},
		{"cpu: server busy", CPURule, Figures{ServerCPUCores: p(7.6), Cores: p(8)}, true, 0.95},
		{"cpu: host busy", CPURule, Figures{HostBusy: p(0.9)}, true, 0.9},
		{"cpu: on CPU, host 82%", CPURule, Figures{HostBusy: p(0.82), WaitMs: map[string]float64{WaitCPU: 70, WaitLog: 30}}, true, 0.82},
		{"cpu: idle", CPURule, Figures{ServerCPUCores: p(1), Cores: p(8), HostBusy: p(0.2)}, false, 0},
		{"cpu: not measured", CPURule, Figures{}, false, 0},
		{"cpu: in-process, host busy with other work", CPURule, Figures{InProcess: true, ClientCPUPct: p(10), HostBusy: p(0.95), Threads: 1, Cores: p(2), WaitMs: map[string]float64{WaitCPU: 90, WaitLog: 10}}, false, 0},
		{"cpu: in-process, one core busy", CPURule, Figures{InProcess: true, ClientCPUPct: p(48), HostBusy: p(0.95), Threads: 1, Cores: p(2), WaitMs: map[string]float64{WaitCPU: 90, WaitLog: 10}}, true, 0.9},
		{"cpu: host busy with other work", CPURule, Figures{ServerCPUCores: p(0.6), Cores: p(2), HostBusy: p(0.95), ClientCPUPct: p(10)}, true, 0.45},
		{"client: sessions wait on a busy client", ClientRule, Figures{Threads: 1, ClientCores: 2, ClientCPUPct: p(27), WaitMs: map[string]float64{WaitClient: 49, WaitCPU: 25, WaitLog: 26}}, true, 0.49},
		{"client: sessions wait on the network", ClientRule, Figures{Threads: 1, ClientCores: 2, ClientCPUPct: p(10), WaitMs: map[string]float64{WaitClient: 49, WaitCPU: 25, WaitLog: 26}}, false, 0},
		{"client: open loop idles by design", ClientRule, Figures{OpenLoop: true, Threads: 1, ClientCores: 2, ClientCPUPct: p(27), WaitMs: map[string]float64{WaitClient: 80, WaitCPU: 20}}, false, 0},
		{"cpu: one session per core", CPURule, Figures{Threads: 1, Cores: p(2), HostBusy: p(0.52), WaitMs: map[string]float64{WaitCPU: 90, WaitLog: 10}}, true, 0.9},
		{"cpu: one session, 1.5 cores busy", CPURule, Figures{Threads: 1, Cores: p(2), HostBusy: p(0.75), WaitMs: map[string]float64{WaitCPU: 90, WaitLog: 10}}, true, 0.9},
		{"cpu: one session, host idle", CPURule, Figures{Threads: 1, Cores: p(2), HostBusy: p(0.3), WaitMs: map[string]float64{WaitCPU: 90, WaitLog: 10}}, false, 0},
		{"cpu: one session mostly on IO", CPURule, Figures{Threads: 1, Cores: p(2), HostBusy: p(0.52), WaitMs: map[string]float64{WaitCPU: 30, WaitLog: 70}}, false, 0},
		{"contention: lock waits", ContentionRule, Figures{WaitMs: map[string]float64{WaitLock: 50, WaitCPU: 50}}, true, 0.5},
		{"contention: SQLite busy waits", ContentionRule, Figures{Threads: 8, BusyWaitsPerReq: p(0.5)}, true, 0.5},
		{"contention: one writer", ContentionRule, Figures{Threads: 1, BusyWaitsPerReq: p(0.5)}, false, 0},
		{"contention: few lock waits", ContentionRule, Figures{WaitMs: map[string]float64{WaitLock: 10, WaitCPU: 90}}, false, 0},
		{"client: scheduling lag", ClientRule, Figures{OpenLoop: true, SchedLagP99Ms: p(25), ClientCPUPct: p(40)}, true, 0.9},
		{"client: keeps up", ClientRule, Figures{OpenLoop: true, SchedLagP99Ms: p(0.5), ClientCPUPct: p(40)}, false, 0},
		{"client: scheduling lag over many requests", ClientRule, Figures{OpenLoop: true, SchedLagP99Ms: p(25), SchedLagSlow: pi(120), ClientCPUPct: p(40)}, true, 0.9},
		// One request of 50 started 31 ms late (PostgreSQL updates at
		// 10/s, a knee's first probe): a pause, not a generator at its limit.
		{"client: scheduling lag of one request", ClientRule, Figures{OpenLoop: true, Requests: 50, SchedLagP99Ms: p(31.3), SchedLagSlow: pi(1), ClientCPUPct: p(3)}, false, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.rule(tc.f)
			if c.Matched != tc.matched {
				t.Fatalf("matched %v: %s", c.Matched, c.Why)
			}
			if tc.score > 0 && math.Abs(c.Score-tc.score) > 1e-9 {
				t.Fatalf("score %g, want %g", c.Score, tc.score)
			}
			if c.Matched && (len(c.Evidence) == 0 || len(c.Suggestions) == 0) {
				t.Fatalf("matched without evidence or suggestion: %+v", c)
			}
			if c.Why == "" {
				t.Fatal("no why")
			}
		})
	}
}

func TestHighestScoreWinsRunnersUpKept(t *testing.T) {
	f := commitBound
	f.ClientCPUPct = p(88) // client matches with 0.88 > commit share 0.76
	v := Diagnose(f)
	if v.Bottleneck != Client {
		t.Fatalf("bottleneck %s", v.Bottleneck)
	}
	if !strings.Contains(strings.Join(v.Evidence, "|"), "runner-up: commit-flush (score 0.76)") {
		t.Fatalf("evidence %q", v.Evidence)
	}
	v = Diagnose(commitBound)
	if !strings.Contains(strings.Join(v.Evidence, "|"), "assuming one transaction per request") {
		t.Fatalf("no commit counter must be said: %q", v.Evidence)
	}
}

func TestVerdictJSON(t *testing.T) {
	v := Diagnose(commitBound)
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"bottleneck":"commit-flush"`, `"evidence":[`, `"suggestions":[{"action":"--durability relaxed","predicted_gain":4.14,"predicted_requests_per_sec":14`, `"rules":[{"name":"commit-flush","matched":true,"score":0.759`} {
		if !strings.Contains(string(b), key) {
			t.Fatalf("JSON lacks %s:\n%s", key, b)
		}
	}
	var back Verdict
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(&back, v) {
		t.Fatalf("round trip:\n%+v\n%+v", back, *v)
	}
	// An unknown gain is null, never 0.
	b, _ = json.Marshal(Diagnose(iopsQueued))
	if !strings.Contains(string(b), `"predicted_gain":null`) {
		t.Fatalf("unknown gain must be null:\n%s", b)
	}
	b, _ = json.Marshal(Diagnose(nothing))
	if !strings.Contains(string(b), `"bottleneck":"none"`) || !strings.Contains(string(b), `"suggestions":[]`) {
		t.Fatalf("none:\n%s", b)
	}
}

func TestThousands(t *testing.T) {
	for v, want := range map[float64]string{0: "0", 999: "999", 1000: "1,000", 14103: "14,103", 1234567: "1,234,567", -2500: "-2,500"} {
		if got := Thousands(v); got != want {
			t.Errorf("%g: %q, want %q", v, got, want)
		}
	}
}

// TestCommitFlushEstimated: without sync latency or log-IO waits, the
// commit-flush share is estimated from the local fsync probe.
func TestCommitFlushEstimated(t *testing.T) {
	one, mean, rps, dev := 1.0, 0.25, 4000.0, 0.13
	f := Figures{Scope: "run", Threads: 1, Requests: 12000, RequestsPerSec: &rps, MeanLatencyMs: &mean, SyncsPerReq: &one, SyncsAll: true}
	if v := Diagnose(f); v.Bottleneck != None {
		t.Fatalf("without a probe: %s, want none", v.Bottleneck)
	}
	f.DeviceSyncMs = &dev
	v := Diagnose(f)
	if v.Bottleneck != CommitFlush || !strings.Contains(v.Evidence[0], "estimated from a local fsync probe of 0.130 ms") {
		t.Fatalf("with a probe: %s %q", v.Bottleneck, v.Evidence)
	}
	if g := v.Suggestions[0].PredictedGain; g == nil || math.Abs(*g-1/(1-0.52)) > 0.01 {
		t.Fatalf("predicted gain %v, want %.2f", g, 1/(1-0.52))
	}
	// The server's CPU time per request caps the estimate: 0.5 cores at
	// 4000 req/s is 0.125 ms of each 0.25 ms request, which leaves 0.125 ms
	// (50%) off its CPU, not the probe's 0.13 ms; the prediction is then
	// called an estimate.
	f.ServerCPUCores = p(0.5)
	v = Diagnose(f)
	if v.Bottleneck != CommitFlush || !strings.Contains(v.Evidence[0], "the server's CPU takes 0.125 ms of each request's 0.250 ms: syncs ≈ 0.125 ms at most off its CPU, ≈ 50% of its time") {
		t.Fatalf("with server CPU: %s %q", v.Bottleneck, v.Evidence)
	}
	if g := v.Suggestions[0].PredictedGain; g == nil || math.Abs(*g-2) > 0.01 || v.Suggestions[0].Action != "--durability relaxed (estimate)" {
		t.Fatalf("suggestion %q, predicted gain %v with server CPU, want ×2, an estimate", v.Suggestions[0].Action, g)
	}
	// A bound above the estimate leaves it alone (0.05 ms of CPU).
	f.ServerCPUCores = p(0.2)
	if v := Diagnose(f); v.Bottleneck != CommitFlush || math.Abs(*v.Suggestions[0].PredictedGain-1/(1-0.52)) > 0.01 || v.Suggestions[0].Action != "--durability relaxed" {
		t.Fatalf("with little server CPU: %s %q", v.Bottleneck, v.Evidence)
	}
	// An embedded engine's CPU is ceiling's own: no bound from it.
	f.ServerCPUCores, f.InProcess = p(0.5), true
	if v := Diagnose(f); v.Bottleneck != CommitFlush || strings.Contains(v.Evidence[0], "server's CPU") {
		t.Fatalf("in process: %s %q", v.Bottleneck, v.Evidence)
	}
	f.ServerCPUCores, f.InProcess = nil, false
	// Server timing wins over the probe.
	sync := 0.02
	f.SyncMs = &sync
	if v := Diagnose(f); v.Bottleneck != None {
		t.Fatalf("with server sync timing of 0.02 ms: %s, want none (probe ignored)", v.Bottleneck)
	}
}

// TestCPUOtherWork: a host kept busy by other processes is named as such.
func TestCPUOtherWork(t *testing.T) {
	c := CPURule(Figures{ServerCPUCores: p(0.6), Cores: p(2), HostBusy: p(0.95), ClientCPUPct: p(10), RequestsPerSec: p(1000)})
	ev := strings.Join(c.Evidence, "|")
	if !strings.Contains(ev, "server's processes use 30%, ceiling 10% and other processes 55%") {
		t.Errorf("evidence %q", ev)
	}
	if len(c.Suggestions) == 0 || !strings.Contains(c.Suggestions[0].Action, "stopping the other work") || *c.Suggestions[0].PredictedGain != 2.22 {
		t.Errorf("suggestions %+v", c.Suggestions)
	}
	// The server's own load: no such line.
	c = CPURule(Figures{ServerCPUCores: p(1.7), Cores: p(2), HostBusy: p(0.95), ClientCPUPct: p(5)})
	if strings.Contains(strings.Join(c.Evidence, "|"), "other processes") {
		t.Errorf("server-bound run blamed on other work: %q", c.Evidence)
	}
}

// TestCPUSharedWithCeiling: on a local server's host ceiling's own share
// of the busy cores is named, and moving ceiling to another host is
// suggested first, at best giving the server those cores. Figures of a
// real run: MariaDB, mixed, 8 threads, 9,041 req/s, host 86% busy, mariadbd
// 1.064 cores, ceiling 28% of the 2 cores.
func TestCPUSharedWithCeiling(t *testing.T) {
	f := Figures{ServerCPUCores: p(1.064), Cores: p(2), HostBusy: p(0.862), ClientCPUPct: p(28.1), RequestsPerSec: p(9041.5), Threads: 8}
	c := CPURule(f)
	if !c.Matched || c.Why != "CPU 86% of the server host's cores ≥ 85%" {
		t.Fatalf("cpu: matched %v, %q", c.Matched, c.Why)
	}
	if ev := strings.Join(c.Evidence, "|"); !strings.Contains(ev, "ceiling runs on the server's host and uses 28% of its cores, the server's processes 53%") {
		t.Errorf("evidence %q", ev)
	}
	if len(c.Suggestions) != 2 || !strings.HasPrefix(c.Suggestions[0].Action, "ceiling on another host") ||
		c.Suggestions[0].PredictedGain == nil || *c.Suggestions[0].PredictedGain != 1.53 || *c.Suggestions[0].PredictedRequestsPerSec != 13817 {
		t.Errorf("suggestions %+v, want ceiling on another host first, ×1.53 (≈ 13,817 req/s)", c.Suggestions)
	}
	// A small share (10%): not named.
	f.ClientCPUPct = p(10)
	if c := CPURule(f); strings.Contains(strings.Join(c.Evidence, "|"), "ceiling runs on") || strings.HasPrefix(c.Suggestions[0].Action, "ceiling on another host") {
		t.Errorf("10%% share named: %q %+v", c.Evidence, c.Suggestions)
	}
	// Other work too: one line names all three, both moves are suggested.
	f.ClientCPUPct, f.HostBusy, f.ServerCPUCores = p(20), p(0.95), p(0.8)
	c = CPURule(f)
	ev := strings.Join(c.Evidence, "|")
	if strings.Contains(ev, "ceiling runs on") || !strings.Contains(ev, "the server's processes use 40%, ceiling 20% and other processes 35%") ||
		len(c.Suggestions) != 3 || !strings.HasPrefix(c.Suggestions[1].Action, "ceiling on another host") {
		t.Errorf("with other work: %q %+v", ev, c.Suggestions)
	}
	// Below the line, a "none" verdict's figures name the host's split.
	// Figures of a real run: MariaDB updates -c 8, host 83% busy, mariadbd
	// 1.21 cores, ceiling 16%.
	near := Figures{ServerCPUCores: p(1.206), Cores: p(2), HostBusy: p(0.829), ClientCPUPct: p(16), RequestsPerSec: p(8990), Threads: 8}
	if v := Diagnose(near); v.Bottleneck != None || !strings.Contains(strings.Join(v.Evidence, "|"), "the server host's cores 83% busy (the server's processes 60%, ceiling 16%)") {
		t.Errorf("near the line: %s %q", v.Bottleneck, v.Evidence)
	}
	// SQLite runs in ceiling's process: one CPU figure, named as such
	// (a real run: inserts-deletes, 1 thread, 42% of the 2 cores).
	sq := Figures{InProcess: true, ClientCPUPct: p(42.4), Cores: p(2), HostBusy: p(0.45), RequestsPerSec: p(46317), Threads: 1}
	ev = strings.Join(Diagnose(sq).Evidence, "|")
	if !strings.Contains(ev, "ceiling with the embedded engine: CPU 42% of the cores") || strings.Contains(ev, "server CPU") || strings.Contains(ev, "load generator CPU") {
		t.Errorf("embedded engine: %q", ev)
	}
	// A read-only run's "none" names its disk reads, not its (absent)
	// syncs and log (a real run: MariaDB direct-selects on 1M rows, 128 MB
	// buffer pool, 4 threads).
	rd := Figures{ServerCPUCores: p(1.12), Cores: p(2), HostBusy: p(0.81), ClientCPUPct: p(22), RequestsPerSec: p(14412), Threads: 4,
		MeanLatencyMs: p(0.277), SyncsPerReq: p(0), LogMBPerSec: p(0), DataReadsPerReq: p(0.798), CacheHitRatio: p(0.739)}
	v := Diagnose(rd)
	ev = strings.Join(v.Evidence, "|")
	if v.Bottleneck != None || !strings.Contains(ev, "0.798 data reads per request that the server's cache missed (hit ratio 0.739)") ||
		strings.Contains(ev, "fsyncs") || strings.Contains(ev, "syncs per request") || strings.Contains(ev, "log 0.00") {
		t.Errorf("read-only none: %s %q", v.Bottleneck, ev)
	}
	if c := CommitFlushRule(rd); c.Why != "not applicable: 0.000 log syncs per commit, the commits do not wait for flushes" {
		t.Errorf("commit-flush on a read-only run: %q", c.Why)
	}
	// The server's own processes the higher figure: its cores are named.
	if c := CPURule(Figures{ServerCPUCores: p(1.9), Cores: p(2), HostBusy: p(0.9), ClientCPUPct: p(4)}); c.Why != "CPU 95% of the server's cores ≥ 85%" {
		t.Errorf("server-bound: %q", c.Why)
	}
	// The embedded engine runs in ceiling's process: no such line.
	f.InProcess, f.ClientCPUPct = true, p(95)
	if c := CPURule(f); !c.Matched || strings.Contains(strings.Join(c.Evidence, "|"), "ceiling runs on") || len(c.Suggestions) != 1 {
		t.Errorf("in process: %q %+v", c.Evidence, c.Suggestions)
	}
}

// TestNearMisses: a closed loop with the host busy but under every rule's
// threshold (MariaDB single inserts at 8 threads: host CPU 74%, the log's
// syncs keeping its device 48% busy) names the rules it came nearest to
// and suggests more load, and relaxed durability to measure the commits'
// waits; one far from every threshold names none.
func TestNearMisses(t *testing.T) {
	commitsWait := true
	f := Figures{Threads: 8, RequestsPerSec: p(13003), MeanLatencyMs: p(0.614), ServerCPUCores: p(1.02), Cores: p(2), HostBusy: p(0.74), ClientCPUPct: p(16),
		SyncsPerReq: p(0.276), SyncsAll: true, LogDevName: "vda", LogDevFlushMs: p(0.062), LogDevWriteMs: p(0.0707), LogDirectIO: true, LogMBPerSec: p(2.34), CommitsWait: &commitsWait}
	v := Diagnose(f)
	ev := strings.Join(v.Evidence, "|")
	if v.Bottleneck != None || !strings.Contains(v.Evidence[0], "no rule matched") {
		t.Fatalf("verdict %s %q", v.Bottleneck, ev)
	}
	if !strings.Contains(ev, "|nearest: cpu — CPU 74% of the server host's cores < 85%|nearest: log-rate — the log's syncs kept its device busy 47.6% of the time < 60%") {
		t.Errorf("evidence lacks the near misses, CPU first: %q", ev)
	}
	// Commits wait for the flushes they share (0.276 per request): what
	// that costs is measured with relaxed durability, not predicted.
	if len(v.Suggestions) != 2 || !strings.Contains(v.Suggestions[0].Action, "16 threads (-c 16)") || v.Suggestions[0].PredictedGain != nil ||
		v.Suggestions[1].Action != "--durability relaxed, to measure what the commits' waits for log flushes (0.276 fsyncs (log+data) per request, shared by commits) cost here (gain not predicted)" ||
		v.Suggestions[1].PredictedGain != nil {
		t.Errorf("suggestions %+v", v.Suggestions)
	}
	// Nothing near a threshold (CPU not measured, few syncs): no near
	// miss, no suggestion.
	far := f
	far.HostBusy, far.ServerCPUCores, far.SyncsPerReq = nil, nil, p(0.05)
	v = Diagnose(far)
	if ev := strings.Join(v.Evidence, "|"); v.Bottleneck != None || strings.Contains(ev, "nearest") || len(v.Suggestions) != 0 {
		t.Errorf("far from every threshold: %s %q %+v", v.Bottleneck, ev, v.Suggestions)
	}
	// An open loop's step names the near misses but no thread count.
	f.OpenLoop = true
	v = Diagnose(f)
	if ev := strings.Join(v.Evidence, "|"); !strings.Contains(ev, "nearest: cpu") || len(v.Suggestions) != 0 {
		t.Errorf("open loop: %q %+v", ev, v.Suggestions)
	}
}

// TestUnsaturated: a closed loop that leaves the cores mostly idle with no
// bottleneck says so and suggests more threads (no predicted gain); an
// open loop, a busy host or an unmeasured one does not.
func TestUnsaturated(t *testing.T) {
	light := Figures{Threads: 2, RequestsPerSec: p(5000), MeanLatencyMs: p(0.4), ServerCPUCores: p(0.4), Cores: p(2), HostBusy: p(0.35), ClientCPUPct: p(10)}
	v := Diagnose(light)
	if v.Bottleneck != None || len(v.Suggestions) != 1 || !strings.Contains(v.Suggestions[0].Action, "-c 4") || v.Suggestions[0].PredictedGain != nil {
		t.Fatalf("light closed loop: %s %+v", v.Bottleneck, v.Suggestions)
	}
	if ev := strings.Join(v.Evidence, "|"); !strings.Contains(ev, "not saturated: 2 threads keep the cores 35% busy") {
		t.Errorf("evidence %q", ev)
	}
	if !strings.Contains(v.Evidence[0], "did not load the server") {
		t.Errorf("headline %q does not say the run did not load the server", v.Evidence[0])
	}
	open := light
	open.OpenLoop = true
	busyHost := light
	busyHost.HostBusy = p(0.8)
	for name, f := range map[string]Figures{"open loop": open, "not measured": nothing} {
		v := Diagnose(f)
		if v.Bottleneck == None && len(v.Suggestions) > 0 {
			t.Errorf("%s: suggestions %+v", name, v.Suggestions)
		}
		if v.Bottleneck == None && strings.Contains(v.Evidence[0], "did not load") {
			t.Errorf("%s: headline %q", name, v.Evidence[0])
		}
	}
}

// TestCommitFlushWaitShareBound: a sampled log-IO wait share above the part
// of each request the server spends off its CPU is cut to that part, and the
// suggestions say "estimate"; a share below it is kept.
func TestCommitFlushWaitShareBound(t *testing.T) {
	f := Figures{Scope: "run", Threads: 1, Requests: 100000, RequestsPerSec: p(10000), MeanLatencyMs: p(0.1),
		SyncsPerReq: p(1), CommitsPerReq: p(1), ServerCPUCores: p(0.5),
		WaitMs: map[string]float64{WaitLog: 800, WaitClient: 200}}
	v := Diagnose(f)
	if v.Bottleneck != CommitFlush || !strings.Contains(v.Evidence[0], "log-IO waits are 80% of the sessions' time (sync latency not measured), but the server's CPU takes 0.050 ms of each request's 0.100 ms: syncs ≈ 0.050 ms at most off its CPU, ≈ 50% of its time") {
		t.Fatalf("%s %q", v.Bottleneck, v.Evidence)
	}
	if s := v.Suggestions; len(s) != 2 || s[0].Action != "--durability relaxed (estimate)" || math.Abs(*s[0].PredictedGain-2) > 0.01 || !strings.HasSuffix(s[1].Action, "(estimate)") {
		t.Fatalf("suggestions %+v", s)
	}
	f.ServerCPUCores = p(0.1) // 0.01 ms of CPU: 0.09 ms left, above the 0.08 ms of waits
	v = Diagnose(f)
	if v.Bottleneck != CommitFlush || strings.Contains(v.Evidence[0], "server's CPU") || math.Abs(*v.Suggestions[0].PredictedGain-5) > 0.01 {
		t.Fatalf("%s %q %+v", v.Bottleneck, v.Evidence, v.Suggestions)
	}
}

// TestCommitFlushLogDevice: the log device's flush (and write) time
// measured over the run comes before sampled waits and the probe, is not
// capped by the server's CPU (it is time off the CPU), and gives a lower
// bound: suggestions say "at least". A log written with O_DIRECT counts the
// flush alone.
func TestCommitFlushLogDevice(t *testing.T) {
	// PostgreSQL at one connection, as measured: 0.203 ms a request, 96 µs
	// of server CPU, a write of 0.055 ms and a flush of 0.071 ms per sync,
	// 65% sampled log-IO waits; relaxed durability then ran x2.9.
	f := Figures{Scope: "run", Threads: 1, Requests: 39000, RequestsPerSec: p(4926), MeanLatencyMs: p(0.203),
		SyncsPerReq: p(1), CommitsPerReq: p(1.004), ServerCPUCores: p(0.473), DeviceSyncMs: p(0.118),
		LogDevName: "vda", LogDevFlushMs: p(0.071), LogDevWriteMs: p(0.055),
		WaitMs: map[string]float64{WaitLog: 650, WaitClient: 200, WaitCPU: 150}}
	v := Diagnose(f)
	want := "sync ≈ one write + one cache flush on the log device (vda), 0.055 + 0.071 ms measured by the kernel over the run, = 0.126 ms, ≥ 62% of each request's time (0.203 ms) (sampled log-IO waits: 65%)"
	if v.Bottleneck != CommitFlush || !strings.Contains(v.Evidence[0], want) || strings.Contains(v.Evidence[0], "server's CPU") {
		t.Fatalf("%s %q, want %q", v.Bottleneck, v.Evidence, want)
	}
	if s := v.Suggestions; len(s) != 2 || s[0].Action != "--durability relaxed (at least)" || math.Abs(*s[0].PredictedGain-1/(1-0.126/0.203*1)) > 0.02 {
		t.Fatalf("suggestions %+v", s)
	}
	// MariaDB: O_DIRECT log, the flush alone: 0.077 of 0.243 ms is 32%,
	// under the rule's share, so not commit-flush (relaxed ran x1.66).
	g := Figures{Scope: "run", Threads: 1, Requests: 32000, RequestsPerSec: p(4093), MeanLatencyMs: p(0.243),
		SyncsPerReq: p(1.003), SyncsAll: true, ServerCPUCores: p(0.48), DeviceSyncMs: p(0.106),
		LogDevName: "vda", LogDevFlushMs: p(0.077), LogDevWriteMs: p(0.060), LogDirectIO: true}
	c := CommitFlushRule(g)
	if c.Matched || c.Why != "log syncs are 32% of each request's time < 40%" {
		t.Fatalf("MariaDB: %+v", c.Rule)
	}
	// The same with a slow device's flush (2 ms in a 2.5 ms request):
	// commit-flush, from the flush alone, "the log is written with O_DIRECT".
	g.LogDevFlushMs, g.MeanLatencyMs, g.RequestsPerSec = p(2), p(2.5), p(400)
	v = Diagnose(g)
	if v.Bottleneck != CommitFlush || !strings.Contains(v.Evidence[0], "the log is written with O_DIRECT, so a sync waits for the log device's (vda) cache flush alone, measured by the kernel over the run: 2.000 ms, ≥ 80%") {
		t.Fatalf("slow flush: %s %q", v.Bottleneck, v.Evidence)
	}
	// No flushes counted (a write-through device): the probe again, 0.106
	// of 2.5 ms.
	g.LogDevFlushMs = nil
	if c := CommitFlushRule(g); c.Why != "log syncs are 4% of each request's time < 40%" {
		t.Fatalf("without device flushes: %+v", c.Rule)
	}
	// Server timing still comes first.
	g.LogDevFlushMs, g.SyncMs = p(2), p(0.1)
	if c := CommitFlushRule(g); c.Matched || !strings.Contains(c.Why, "< 40%") {
		t.Fatalf("with sync timing: %+v", c.Rule)
	}
}

// TestClientSpareCores: a single worker that keeps the sessions waiting
// while ceiling has cores to spare is told to add workers, not to move to a
// bigger machine; a client at its cores' limit is told the figures may
// understate the database.
func TestClientSpareCores(t *testing.T) {
	waits := map[string]float64{WaitClient: 49, WaitCPU: 25, WaitLog: 26}
	c := ClientRule(Figures{Threads: 1, ClientCores: 2, ClientCPUPct: p(27), WaitMs: waits})
	ev := strings.Join(c.Evidence, "|")
	if !c.Matched || !strings.Contains(ev, "ceiling's cores are not all busy (27% of 2)") || strings.Contains(ev, "understate") ||
		len(c.Suggestions) != 1 || !strings.HasPrefix(c.Suggestions[0].Action, "2 threads") {
		t.Fatalf("spare cores: %+v", c)
	}
	c = ClientRule(Figures{Threads: 2, ClientCores: 2, ClientCPUPct: p(90), WaitMs: waits})
	ev = strings.Join(c.Evidence, "|")
	if !c.Matched || !strings.Contains(ev, "understate") || !strings.Contains(c.Suggestions[len(c.Suggestions)-1].Action, "bigger") {
		t.Fatalf("busy client: %+v", c)
	}
}

// TestCommitFlushWaitsAndProbe: with both a sampled log-IO share and a
// local fsync probe, the larger estimate is taken (then capped by the CPU
// bound), and the evidence names both.
func TestCommitFlushWaitsAndProbe(t *testing.T) {
	// PostgreSQL, 2 s at one connection: 31% sampled, the probe's 0.088 ms
	// is 65% of a 0.135 ms request, 0.064 ms of it on the server's CPU.
	f := Figures{Scope: "run", Threads: 1, Requests: 14700, RequestsPerSec: p(7374), MeanLatencyMs: p(0.135),
		SyncsPerReq: p(1), CommitsPerReq: p(1), DeviceSyncMs: p(0.088), ServerCPUCores: p(0.064 * 7374 / 1000),
		WaitMs: map[string]float64{WaitLog: 31, WaitClient: 41, WaitCPU: 28}}
	v := Diagnose(f)
	if v.Bottleneck != CommitFlush || !strings.Contains(v.Evidence[0], "local fsync probe of 0.088 ms, ≈ 65% of each request's time (0.135 ms) (sampled log-IO waits: 31%), but the server's CPU takes 0.064 ms") {
		t.Fatalf("probe above the sampled share: %s %q", v.Bottleneck, v.Evidence)
	}
	if g := *v.Suggestions[0].PredictedGain; math.Abs(g-0.135/0.064) > 0.01 {
		t.Fatalf("predicted gain %.2f, want %.2f (the CPU bound)", g, 0.135/0.064)
	}
	// The sampled share above the probe's wins.
	f.WaitMs = map[string]float64{WaitLog: 45, WaitClient: 30, WaitCPU: 25}
	f.DeviceSyncMs = p(0.03) // 22%
	v = Diagnose(f)
	if v.Bottleneck != CommitFlush || !strings.Contains(v.Evidence[0], "log-IO waits are 45% of the sessions' time") {
		t.Fatalf("sampled share above the probe: %s %q", v.Bottleneck, v.Evidence)
	}
	// No log-IO waits sampled (MariaDB's uninstrumented redo log): the probe.
	f.WaitMs = map[string]float64{WaitOther: 90, WaitClient: 10}
	f.DeviceSyncMs = p(0.088)
	if v := Diagnose(f); v.Bottleneck != CommitFlush || !strings.Contains(v.Evidence[0], "fsync probe") || strings.Contains(v.Evidence[0], "sampled log-IO") {
		t.Fatalf("no log waits: %s %q", v.Bottleneck, v.Evidence)
	}
}

// TestLogRateLogDevice: without wait times (MariaDB without
// performance_schema), commits that share their flushes are called
// log-rate bound when the log's syncs keep its device busy most of the time,
// from the device's counters; figures as measured at 4 and 16 connections.
func TestLogRateLogDevice(t *testing.T) {
	// 4 connections, full durability: 0.526 fsyncs per request at 7,321
	// req/s, each a 0.076 ms write and a 0.100 ms flush: busy 68%.
	// Relaxed durability then ran x1.52.
	f := Figures{Scope: "run", Threads: 4, Requests: 43929, RequestsPerSec: p(7321.5), MeanLatencyMs: p(0.545),
		SyncsPerReq: p(0.526), SyncsAll: true, ServerCPUCores: p(0.857), Cores: p(2), LogMBPerSec: p(1.31),
		LogDevName: "vda", LogDevFlushMs: p(0.100), LogDevWriteMs: p(0.076), LogDirectIO: true, CommitsWait: yes}
	v := Diagnose(f)
	want := "log 1.31 MB/s; the log's syncs kept its device (vda) busy 68% of the time (3,851 fsyncs (log+data)/s × (0.076 ms write + 0.100 ms flush), kernel counters), although commits share their flushes"
	if v.Bottleneck != LogRate || v.Evidence[0] != want {
		t.Fatalf("%s %q, want log-rate %q", v.Bottleneck, v.Evidence, want)
	}
	// Each commit still waits for at least one flush (O_DIRECT: the flush
	// alone): 0.100 of 0.545 ms, x1.22 at least.
	if s := v.Suggestions; len(s) < 2 || s[0].Action != "--durability relaxed (at least)" || math.Abs(*s[0].PredictedGain-1/(1-0.1/0.545)) > 0.01 ||
		!strings.HasPrefix(s[1].Action, "a log device with faster cache flushes") {
		t.Fatalf("suggestions %+v", s)
	}
	// Deletes alone on MariaDB, 16 threads: 3,326 fsyncs/s (the data
	// file's among them) × 0.368 ms is more than the whole time; the
	// evidence says all of it, with the estimate.
	d := f
	d.Threads, d.RequestsPerSec, d.SyncsPerReq, d.LogDevWriteMs, d.LogDevFlushMs, d.LogMBPerSec = 16, p(15432.1), p(0.2155), p(0.311), p(0.057), p(4.57)
	if c := LogRateRule(d); !c.Matched || c.Score != 1 || !strings.Contains(c.Why, "busy all of the time (3,326 fsyncs (log+data)/s × (0.311 ms write + 0.057 ms flush) = 122%, more than the whole: some overlapped; kernel counters)") {
		t.Fatalf("busy over 100%%: matched %v score %v, %q", c.Matched, c.Score, c.Why)
	}
	// 16 connections: bigger groups, 0.151 fsyncs per request, busy 39%.
	g := f
	g.Threads, g.RequestsPerSec, g.MeanLatencyMs, g.SyncsPerReq, g.LogDevFlushMs, g.LogDevWriteMs = 16, p(12285.7), p(1.301), p(0.151), p(0.121), p(0.089)
	if c := LogRateRule(g); c.Matched || c.Why != "the log's syncs kept its device busy 39% of the time < 60%" {
		t.Fatalf("16 connections: %+v", c.Rule)
	}
	// Relaxed: a few background flushes.
	g.SyncsPerReq = p(0.001)
	if c := LogRateRule(g); c.Matched {
		t.Fatalf("relaxed: %+v", c.Rule)
	}
	// A flush per commit is commit-flush's, not log-rate's.
	g.SyncsPerReq, g.RequestsPerSec = p(1), p(4000)
	if c := LogRateRule(g); c.Matched || !strings.Contains(c.Why, "see commit-flush") {
		t.Fatalf("one flush per commit: %+v", c.Rule)
	}
	// Commits that do not wait for the syncs (SQLite at NORMAL in WAL
	// mode, whose syncs are its checkpoints'): no ceiling from them, as in
	// the README's main job (insert/delete, 4 connections: 283 syncs/s of
	// 1.3 ms writes and 0.9 ms flushes).
	h := Figures{Scope: "run", Threads: 4, Requests: 454404, RequestsPerSec: p(22719), MeanLatencyMs: p(0.175), InProcess: true,
		SyncsPerReq: p(0.0125), SyncMs: p(2.29), LogMBPerSec: p(112), LogDevName: "vda", LogDevFlushMs: p(0.874), LogDevWriteMs: p(1.31),
		CommitsWait: no, WaitMs: map[string]float64{WaitLog: 300, WaitLock: 340, WaitCPU: 360}}
	if c := LogRateRule(h); c.Matched {
		t.Fatalf("commits that do not wait: %+v", c.Rule)
	}
	if v := Diagnose(h); v.Bottleneck != Contention || len(v.Suggestions) != 1 || strings.Contains(strings.Join(v.Evidence, "|"), "holds the lock while") {
		t.Fatalf("SQLite at NORMAL: %s %q %+v", v.Bottleneck, v.Evidence, v.Suggestions)
	}
	// Unknown durability setting: not assumed.
	g.CommitsWait = nil
	g.SyncsPerReq, g.RequestsPerSec = p(0.526), p(7321.5)
	g.LogDevFlushMs, g.LogDevWriteMs = p(0.100), p(0.076)
	if c := LogRateRule(g); c.Matched {
		t.Fatalf("commits' wait unknown: %+v", c.Rule)
	}
	// Neither waits nor device counters: not applicable, as before.
	g.LogDevFlushMs = nil
	if c := LogRateRule(g); c.Matched || !strings.HasPrefix(c.Why, "not applicable") {
		t.Fatalf("no device counters: %+v", c.Rule)
	}
}

// TestContentionSerialSync: SQLite's single writer holds its lock while it
// syncs; when those syncs fill most of the run's time, the contention
// verdict names them and predicts relaxed durability's gain as a lower
// bound (figures as measured at 4 writers, where relaxed then ran x9).
func TestContentionSerialSync(t *testing.T) {
	f := Figures{Scope: "run", Threads: 4, Requests: 27000, RequestsPerSec: p(5410), MeanLatencyMs: p(0.74), InProcess: true,
		SyncsPerReq: p(1.002), SyncMs: p(0.153), CommitsWait: yes, WaitMs: map[string]float64{WaitLock: 740, WaitLog: 160, WaitCPU: 100}}
	c := ContentionRule(f)
	want := "the writer holds the lock while its commit syncs the log: 5,421 log syncs/s × 0.153 ms = 83% of the time"
	if !c.Matched || len(c.Evidence) < 2 || c.Evidence[1] != want {
		t.Fatalf("%+v %q, want evidence %q", c.Rule, c.Evidence, want)
	}
	if s := c.Suggestions; len(s) != 3 || s[0].Action != "--durability relaxed (at least)" || math.Abs(*s[0].PredictedGain-1/(1-0.8294)) > 0.02 ||
		!strings.HasPrefix(s[1].Action, "batch 10 rows per commit (at least)") || !strings.HasPrefix(s[2].Action, "fewer writer threads: ") {
		t.Fatalf("suggestions %+v (batching, then fewer writers without \"shorter write transactions\")", s)
	}
	// Syncs a small share of the time (relaxed-like): named, no prediction.
	f.SyncMs = p(0.01)
	if c := ContentionRule(f); !c.Matched || len(c.Suggestions) != 1 || !strings.Contains(c.Evidence[1], "= 5% of the time") ||
		!strings.HasPrefix(c.Suggestions[0].Action, "fewer writer threads or shorter write transactions") {
		t.Fatalf("short syncs: %q %+v", c.Evidence, c.Suggestions)
	}
	// A server engine (row locks, not one writer): no such figure.
	f.InProcess, f.SyncMs = false, p(0.153)
	if c := ContentionRule(f); len(c.Evidence) != 1 || len(c.Suggestions) != 1 {
		t.Fatalf("server engine: %q %+v", c.Evidence, c.Suggestions)
	}
}

// TestLogRateSuggestions: a log-rate verdict from the log's syncs keeping
// the device busy suggests what shortens or shares the syncs, not a higher
// log write rate; one from log-IO waits alone, with the device not busy
// with syncs, keeps the write-rate suggestions.
func TestLogRateSuggestions(t *testing.T) {
	f := Figures{Scope: "run", Threads: 4, Requests: 50000, RequestsPerSec: p(8313), MeanLatencyMs: p(0.48),
		SyncsPerReq: p(0.518), CommitsPerReq: p(1), LogMBPerSec: p(0.83), CommitsWait: yes,
		LogDevName: "vda", LogDevFlushMs: p(0.094), LogDevWriteMs: p(0.073),
		WaitMs: map[string]float64{WaitLog: 610, WaitCPU: 250, WaitClient: 140}}
	actions := func(c Candidate) string {
		var a []string
		for _, s := range c.Suggestions {
			a = append(a, s.Action)
		}
		return strings.Join(a, " | ")
	}
	c := LogRateRule(f) // busy 0.518 × 8313 × 0.167 ms = 72%
	if got := actions(c); !c.Matched || !strings.HasPrefix(got, "--durability relaxed (estimate, from the sessions' log-IO waits) | a log device with faster cache flushes") || strings.Contains(got, "higher log write rate") {
		t.Fatalf("sync-bound: %q", got)
	}
	f.LogDevFlushMs, f.LogDevWriteMs = p(0.02), p(0.02) // busy 17%: matched on the waits
	c = LogRateRule(f)
	if got := actions(c); !c.Matched || !strings.Contains(got, "higher log write rate") || !strings.HasPrefix(got, "--durability relaxed (estimate") {
		t.Fatalf("wait-bound: %q", got)
	}
}

// TestGroupCommitRelaxedEstimate: where commits share flushes, the
// sessions' sampled log-IO waits, when larger than the log device's time
// per request, estimate relaxed durability's gain (capped by the server's
// CPU per request); without them the device's time gives a lower bound.
// Figures as measured: PostgreSQL inserts/deletes, 8 connections, full
// durability; relaxed then ran ×2.8.
func TestGroupCommitRelaxedEstimate(t *testing.T) {
	f := Figures{Scope: "run", Threads: 8, Requests: 437763, RequestsPerSec: p(21887), MeanLatencyMs: p(0.365),
		SyncsPerReq: p(0.299), CommitsPerReq: p(1), LogMBPerSec: p(6.97), CommitsWait: yes, ServerCPUCores: p(1.14), Cores: p(2),
		LogDevName: "vda", LogDevFlushMs: p(0.033), LogDevWriteMs: p(0.047),
		WaitMs: map[string]float64{WaitLog: 640, WaitClient: 310, WaitCPU: 50}}
	s := groupCommitSuggestions(f)
	if len(s) != 2 || s[0].Action != "--durability relaxed (estimate, from the sessions' log-IO waits)" || math.Abs(*s[0].PredictedGain-1/(1-0.64)) > 0.01 {
		t.Fatalf("sampled waits: %+v", s)
	}
	// The server's CPU takes most of each request: the waits cannot be
	// more than the rest (0.365 - 0.2 ms).
	g := f
	g.ServerCPUCores = p(0.2 * 21887 / 1000)
	if s := groupCommitSuggestions(g); math.Abs(*s[0].PredictedGain-1/(1-(0.365-0.2)/0.365)) > 0.01 || !strings.Contains(s[0].Action, "estimate") {
		t.Fatalf("CPU cap: %+v", s)
	}
	// Waits smaller than the device's share: the lower bound stays.
	g = f
	g.WaitMs = map[string]float64{WaitLog: 100, WaitClient: 900}
	if s := groupCommitSuggestions(g); s[0].Action != "--durability relaxed (at least)" || math.Abs(*s[0].PredictedGain-1/(1-0.08/0.365)) > 0.01 {
		t.Fatalf("small waits: %+v", s)
	}
	// No sampled waits (MariaDB without performance_schema): the bound.
	g.WaitMs = nil
	if s := groupCommitSuggestions(g); s[0].Action != "--durability relaxed (at least)" {
		t.Fatalf("no waits: %+v", s)
	}
}

// TestLogRateLogDeviceOpenLoop: in an open loop whose requests do not
// queue, a busy log device is no ceiling; once they queue it is.
func TestLogRateLogDeviceOpenLoop(t *testing.T) {
	f := Figures{Scope: "run", Threads: 8, Requests: 60000, RequestsPerSec: p(5000), MeanLatencyMs: p(0.5), OpenLoop: true, LatePct: p(0),
		SyncsPerReq: p(0.6), SyncsAll: true, LogMBPerSec: p(0.92), LogDevName: "vda", LogDevFlushMs: p(0.115), LogDevWriteMs: p(0.086), LogDirectIO: true,
		CommitsWait: yes}
	if c := LogRateRule(f); c.Matched {
		t.Fatalf("unsaturated open loop: %+v", c.Rule)
	}
	f.LatePct = p(12)
	if c := LogRateRule(f); !c.Matched || !strings.Contains(c.Why, "busy 60% of the time") {
		t.Fatalf("late 12%%: %+v", c.Rule)
	}
}

// TestThinkPaced: users that pause most of their time on a server they
// leave idle set the pace, whatever a rule found in their few requests.
// TPC-C --keying-thinking on SQLite, 10 users for 20 s: 18 transactions,
// 0.56 busy waits per request (their first keying times ended together),
// the users 99.9% of their time in keying and think times.
func TestThinkPaced(t *testing.T) {
	f := Figures{Scope: "run", Threads: 10, Requests: 18, RequestsPerSec: p(0.9), MeanLatencyMs: p(6.6), InProcess: true,
		ClientCPUPct: p(0.47), ClientCores: 2, BusyWaitsPerReq: p(0.56), LogMBPerSec: p(0.02), FixedTx: "TPC-C's", ThinkShare: p(0.999)}
	v := Diagnose(f)
	ev := strings.Join(v.Evidence, "\n")
	if v.Bottleneck != None || !strings.Contains(ev, "no clear bottleneck: the workload's think times set the pace, not the database") ||
		!strings.Contains(ev, "within the requests: contention (score 0.56): 0.56 busy waits per request with 10 writers") {
		t.Fatalf("bottleneck %q, evidence:\n%s", v.Bottleneck, ev)
	}
	if len(v.Suggestions) != 1 || !strings.Contains(v.Suggestions[0].Action, "more users (-c 40, with as many more warehouses: TPC-C's specification has 10 users a warehouse)") {
		t.Errorf("suggestions %+v", v.Suggestions)
	}
	// The same requests without think times: contention, as before.
	f.ThinkShare = nil
	if v := Diagnose(f); v.Bottleneck != Contention {
		t.Errorf("without think times: %q, want contention", v.Bottleneck)
	}
	// Think times, but the cores busy: the rules decide.
	f.ThinkShare, f.ClientCPUPct = p(0.6), p(90)
	if v := Diagnose(f); v.Bottleneck == None {
		t.Errorf("think times with the cores 90%% busy: %q: %v", v.Bottleneck, v.Evidence)
	}
}

var (
	yes = func() *bool { b := true; return &b }()
	no  = func() *bool { b := false; return &b }()
)

// TestWorkersBound: figures of two real open-loop ramps. MariaDB with one
// worker (-c 1) at 6000/s: the worker was busy all the time while the
// database served each insert as fast as at 1000/s, so the ramp measured
// ceiling's -c: the verdict is client, and the flat log rate does not make
// it log-rate. PostgreSQL with 16 workers at 30000/s: the service time grew
// ×3.5 over low load, so the requests queued in the database.
func TestWorkersBound(t *testing.T) {
	maria := Figures{Scope: "step 6 (6000/s)", Threads: 1, Requests: 16093, RequestsPerSec: p(5364), MeanLatencyMs: p(120), OpenLoop: true,
		LatePct: p(10.57), SchedLagP99Ms: p(0.001), ClientCPUPct: p(6), ClientCores: 2, LogMBPerSec: p(0.97), PrevLogMBPerSec: p(0.91),
		ServiceMs: p(0.186), MinServiceMs: p(0.179), StartLagP99Ms: p(319)}
	v := Diagnose(maria)
	if v.Bottleneck != Client {
		t.Fatalf("bottleneck %q, want client: %v", v.Bottleneck, v.Evidence)
	}
	for _, want := range []string{"ceiling's 1 worker was busy 100% of the time (5364 req/s × 0.186 ms each)", "start lag p99 319 ms",
		"1.04× its fastest at the lower rates (0.179 ms)", "the figures describe ceiling's -c, not the database's ceiling"} {
		if !strings.Contains(strings.Join(v.Evidence, "\n"), want) {
			t.Errorf("evidence lacks %q: %v", want, v.Evidence)
		}
	}
	if len(v.Suggestions) != 1 || !strings.Contains(v.Suggestions[0].Action, "4 or more threads (-c)") || v.Suggestions[0].PredictedGain != nil {
		t.Errorf("suggestions %+v, want one to raise -c, without a predicted gain", v.Suggestions)
	}
	if got := MsText(1000.447) + " " + MsText(49.83) + " " + MsText(0.1857) + " " + MsText(0.0004); got != "1000 49.8 0.186 0.0004" {
		t.Errorf("msText: %q", got)
	}
	if c := LogRateRule(maria); c.Matched || !strings.Contains(c.Why, "requests queued for ceiling's 1 worker (busy 100%)") {
		t.Errorf("log-rate on the workers' plateau: %+v", c.Rule)
	}
	// MariaDB inserts-deletes with 32 workers, a ramp 4000:16000:x2: the
	// first step's service time (6.44 ms, 32 sessions on 2 cores) was
	// slower than the second's (3.83 ms at 7994/s, workers busy 96%).
	fast := Figures{Scope: "step 2 (8000/s)", Threads: 32, Requests: 63953, RequestsPerSec: p(7994), MeanLatencyMs: p(17.1), OpenLoop: true,
		LatePct: p(0), SchedLagP99Ms: p(0.001), ClientCPUPct: p(30), ClientCores: 2, ServiceMs: p(3.83), MinServiceMs: p(6.44), StartLagP99Ms: p(65.7)}
	if _, ev, ok := workersBound(fast); !ok || !strings.Contains(ev, "served each in 3.83 ms, faster than at any lower rate (6.44 ms at best)") || strings.Contains(ev, "×") && strings.Contains(ev, "its fastest") {
		t.Errorf("service faster than at the lower rates: ok %v, %q", ok, ev)
	}
	// Without the low-load service time (the ramp's first step, or a
	// result from before it was measured) nothing is claimed.
	old := maria
	old.MinServiceMs = nil
	if c := ClientRule(old); c.Matched {
		t.Errorf("no low-load service time: %+v", c.Rule)
	}
	if c := LogRateRule(old); !c.Matched {
		t.Errorf("no low-load service time: log-rate as before, got %+v", c.Rule)
	}
	// Workers busy 70%: the database keeps up with them; nothing claimed.
	light := maria
	light.RequestsPerSec = p(3760)
	if c := ClientRule(light); c.Matched {
		t.Errorf("workers busy 70%%: %+v", c.Rule)
	}

	// PostgreSQL single inserts on one worker at 50,000/s (2,827/s
	// achieved): each request was its commit's sync (0.350 + 0.003 of 0.352 ms),
	// so commit-flush scored as high as the workers; the workers set the
	// rate, and lead.
	flush := Figures{Scope: "step 2 (50000/s)", Threads: 1, Requests: 5654, ElapsedS: 2, RequestsPerSec: p(2827), MeanLatencyMs: p(900), OpenLoop: true,
		LatePct: p(94.3), SchedLagP99Ms: p(0.001), ClientCPUPct: p(3), ClientCores: 2, ServiceMs: p(0.352), MinServiceMs: p(0.723), StartLagP99Ms: p(1000),
		SyncsPerReq: p(1.0), SyncMs: p(0.353), CommitsWait: yes}
	if v := Diagnose(flush); v.Bottleneck != Client || !strings.Contains(strings.Join(v.Evidence, "\n"), "runner-up: commit-flush") {
		t.Errorf("one worker, each request its sync: %s, evidence %v; want client, commit-flush the runner-up", v.Bottleneck, v.Evidence)
	}

	pg := Figures{Scope: "step 5 (30000/s)", Threads: 16, Requests: 58511, RequestsPerSec: p(19504), MeanLatencyMs: p(494), OpenLoop: true,
		LatePct: p(34.9), SchedLagP99Ms: p(0.001), ClientCPUPct: p(16), ClientCores: 2, LogMBPerSec: p(2.16), PrevLogMBPerSec: p(1.88),
		ServiceMs: p(0.819), MinServiceMs: p(0.234), StartLagP99Ms: p(1000)}
	if c := ClientRule(pg); c.Matched {
		t.Errorf("service time ×3.5: the database queued the requests, got %+v", c.Rule)
	}
	if _, _, ok := workersBound(pg); ok {
		t.Error("workersBound with the service time ×3.5")
	}
	// The server's host busy 94% (PostgreSQL, 48 connections, full
	// durability, 9000/s requested; 3000/s below it had already kept the
	// host 92% busy at 8.7 ms a request): the workers were slow because the
	// cores were, and more of them would not raise the rate. cpu, not
	// client.
	hot := Figures{Scope: "step 2 (9000/s)", Threads: 48, Requests: 46499, RequestsPerSec: p(5812), MeanLatencyMs: p(1000), OpenLoop: true,
		LatePct: p(35.5), SchedLagP99Ms: p(0.001), ClientCPUPct: p(17), ClientCores: 2, Cores: p(2), HostBusy: p(0.94), ServerCPUCores: p(1.48),
		LogMBPerSec: p(1.79), PrevLogMBPerSec: p(0.90), ServiceMs: p(8.27), MinServiceMs: p(8.71), StartLagP99Ms: p(1000)}
	if _, _, ok := workersBound(hot); ok {
		t.Error("workersBound with the server's host 94% busy")
	}
	if v := Diagnose(hot); v.Bottleneck != CPU || strings.Contains(strings.Join(v.Evidence, "|"), "queued in ceiling") {
		t.Errorf("server host 94%% busy: verdict %q %v, want cpu", v.Bottleneck, v.Evidence)
	}
	cool := hot
	cool.HostBusy, cool.ServerCPUCores = p(0.6), p(1.0)
	if _, _, ok := workersBound(cool); !ok {
		t.Error("workersBound with the host 60% busy: want the workers named")
	}
	// In an open loop a request's own time is its service time: its wait
	// for a free worker (here up to a second) is no resource's. PostgreSQL,
	// one worker, full durability, 50000/s requested.
	pg1 := Figures{Scope: "step 3 (50000/s)", Threads: 1, Requests: 15780, RequestsPerSec: p(5260), MeanLatencyMs: p(480), OpenLoop: true,
		LatePct: p(89), CommitsPerReq: p(1.008), SyncsPerReq: p(1), LogMBPerSec: p(0.53), LogDevName: "vda", LogDevFlushMs: p(0.053), LogDevWriteMs: p(0.057),
		CommitsWait: yes, ServiceMs: p(0.189), MinServiceMs: p(0.223), StartLagP99Ms: p(1000)}
	if c := CommitFlushRule(pg1); !c.Matched || !strings.Contains(c.Why, "≥ 58% of each request's time (0.189 ms)") {
		t.Errorf("commit-flush against the service time: %+v", c.Rule)
	}
	if v := Diagnose(pg1); v.Bottleneck != Client || !strings.Contains(strings.Join(v.Evidence, "|"), "runner-up: commit-flush") {
		t.Errorf("verdict %q %v, want client with commit-flush the runner-up", v.Bottleneck, v.Evidence)
	}
	// SQLite (in-process), one worker, synchronous FULL, 16000/s requested:
	// the worker is the engine's single writer, whose syncs take 89% of
	// each request; commit-flush comes first, the workers second.
	lite := Figures{Scope: "step 6 (16000/s)", Threads: 1, Requests: 19962, RequestsPerSec: p(6654), MeanLatencyMs: p(400), OpenLoop: true,
		InProcess: true, LatePct: p(58), SyncMs: p(0.134), SyncsPerReq: p(1), LogMBPerSec: p(26), PrevLogMBPerSec: p(26.5),
		ServiceMs: p(0.15), MinServiceMs: p(0.151), StartLagP99Ms: p(1000), ClientCPUPct: p(60), ClientCores: 2}
	if v := Diagnose(lite); v.Bottleneck != CommitFlush || !strings.Contains(strings.Join(v.Evidence, "|"), "runner-up: client (score 0.50)") {
		t.Errorf("SQLite: verdict %q %v, want commit-flush with client the runner-up", v.Bottleneck, v.Evidence)
	}
	if c := ClientRule(lite); !c.Matched || !strings.Contains(strings.Join(c.Evidence, "|"), "takes one writer at a time") {
		t.Errorf("SQLite workers: %+v", c)
	}
	// Its writes at synchronous NORMAL (a real knee: 64000/s, the worker
	// busy 89% at 0.014 ms per insert): client, and the advice is not more
	// threads, which would wait on the write lock.
	normal := Figures{Scope: "probe 23 (64000/s)", Threads: 1, Requests: 191000, RequestsPerSec: p(63983), MeanLatencyMs: p(1.2), OpenLoop: true,
		InProcess: true, LatePct: p(0), SyncsPerReq: p(0.002), LogMBPerSec: p(30), ServiceMs: p(0.014), MinServiceMs: p(0.0142),
		StartLagP99Ms: p(8.88), SchedLagP99Ms: p(0.01), ClientCPUPct: p(55), ClientCores: 2}
	if v := Diagnose(normal); v.Bottleneck != Client || len(v.Suggestions) != 1 || strings.Contains(v.Suggestions[0].Action, "or more threads") ||
		!strings.Contains(v.Suggestions[0].Action, "several rows per transaction") {
		t.Errorf("SQLite writes, workers busy: %q %+v", v.Bottleneck, v.Suggestions)
	}
	// A closed loop keeps its workers busy by design: never claimed.
	closed := maria
	closed.OpenLoop = false
	if _, _, ok := workersBound(closed); ok {
		t.Error("workersBound in a closed loop")
	}
}

// TestLogRateOpenLoopNotFlat: a saturated open-loop step whose log rate
// still rose against the step below (+15%) is not log-rate by the flat
// test, but its sessions' log-IO waits can still show it. Figures of a
// PostgreSQL ramp, 16 connections, server durability, 30000/s requested.
func TestLogRateOpenLoopNotFlat(t *testing.T) {
	f := Figures{Scope: "step 5 (30000/s)", Threads: 16, Requests: 58511, RequestsPerSec: p(19504), MeanLatencyMs: p(494), OpenLoop: true,
		LatePct: p(34.9), CommitsPerReq: p(1.002), SyncsPerReq: p(0.213), LogMBPerSec: p(2.16), PrevLogMBPerSec: p(1.88), CommitsWait: yes,
		WaitMs: map[string]float64{WaitLog: 590, WaitClient: 360, WaitCPU: 50}, ServiceMs: p(0.819), MinServiceMs: p(0.234), StartLagP99Ms: p(1000)}
	c := LogRateRule(f)
	if !c.Matched || c.Score != 0.59 || !strings.Contains(c.Why, "log-IO waits are 59% of the sessions' time although commits share their flushes") {
		t.Fatalf("%+v", c.Rule)
	}
	// Without the waits, the step's rising log rate is why it does not match.
	f.WaitMs = nil
	if c := LogRateRule(f); c.Matched || c.Why != "log 2.16 MB/s vs 1.88 MB/s at the previous step (+15%): not flat" {
		t.Fatalf("%+v", c.Rule)
	}
	// Waits below the line: both reasons are given.
	f.WaitMs = map[string]float64{WaitLog: 300, WaitCPU: 700}
	if c := LogRateRule(f); c.Matched || !strings.Contains(c.Why, "not flat; log-IO waits 30% of the sessions' time < 50%") {
		t.Fatalf("%+v", c.Rule)
	}
}

// TestKeptUpNoPrediction: an open loop that kept up with its rate ran at
// the rate asked for, so no suggestion predicts requests/s from it.
// Figures of a PostgreSQL run at --rate 1000, one worker, full durability.
func TestKeptUpNoPrediction(t *testing.T) {
	f := Figures{Scope: "run", Threads: 1, Requests: 3000, RequestsPerSec: p(1000), MeanLatencyMs: p(0.42), OpenLoop: true, LatePct: p(0),
		KeptUp: true, CommitsPerReq: p(1.02), SyncsPerReq: p(1), LogMBPerSec: p(0.1), LogDevName: "vda", LogDevFlushMs: p(0.064), LogDevWriteMs: p(0.074),
		CommitsWait: yes, ServiceMs: p(0.3)}
	v := Diagnose(f)
	if v.Bottleneck != CommitFlush || !strings.Contains(v.Evidence[0], "≥ 46% of each request's time (0.300 ms)") {
		t.Fatalf("verdict %q %v", v.Bottleneck, v.Evidence)
	}
	for _, s := range v.Suggestions {
		if s.PredictedGain != nil || s.PredictedRequestsPerSec != nil || !strings.HasSuffix(s.Action, "this load kept up with its rate, so the gain would show at higher rates") {
			t.Errorf("suggestion %+v", s)
		}
	}
	f.KeptUp = false
	if v := Diagnose(f); len(v.Suggestions) == 0 || v.Suggestions[0].PredictedGain == nil {
		t.Errorf("saturated: %+v", v.Suggestions)
	}
}

// TestMemoryDiskReadShare: fewer than one data read per request is memory
// bound when the reads that reach the disk take a large share of each
// request's time. Figures of a real run (MariaDB direct-selects on 1M
// rows, 128 MB buffer pool, 4 threads: 0.80 reads per request, all from
// the disk at 0.087 ms, 28% of a 0.249 ms request) are not; the same reads
// at 1 ms (a network disk) are; PostgreSQL's reads served by the OS cache
// (5 device reads/s for 60,000 data reads/s) are not.
// TestMemoryOSCache: reads the server's cache missed but the OS's page
// cache served are no memory bound (figures of a real run: PostgreSQL
// range selects on 800,000 rows, shared_buffers 128 MB, 1 thread: hit
// ratio 0.379, 28 reads per request, 201 MB/s read by the server, 1.93
// MB/s by the device holding its data). Where the device read them, or
// the data's device is not known to be the log's, the rule stands.
func TestMemoryOSCache(t *testing.T) {
	f := Figures{Threads: 1, RequestsPerSec: p(922), MeanLatencyMs: p(1.084), CacheHitRatio: p(0.379), DataReadsPerReq: p(28.02),
		LogDevName: "vda", LogDevReadMBPerSec: p(1.93), DataReadMBPerSec: p(201.26), DataOnLogDev: true,
		WaitMs: map[string]float64{WaitClient: 52, WaitCPU: 36, WaitDataRead: 12}}
	c := MemoryRule(f)
	if c.Matched || !strings.Contains(c.Why, "but the OS's page cache served 99.0% of the bytes read (the device holding the data, vda, read 1.93 of the server's 201.26 MB/s)") {
		t.Errorf("OS cache: matched %v, %q", c.Matched, c.Why)
	}
	disk := f
	disk.LogDevReadMBPerSec = p(190)
	if c := MemoryRule(disk); !c.Matched {
		t.Errorf("read from the disk: %q", c.Why)
	}
	elsewhere := f
	elsewhere.DataOnLogDev = false
	if c := MemoryRule(elsewhere); !c.Matched {
		t.Errorf("data on another device: %q", c.Why)
	}
}

func TestMemoryDiskReadShare(t *testing.T) {
	f := Figures{Threads: 4, RequestsPerSec: p(16042), MeanLatencyMs: p(0.249), CacheHitRatio: p(0.739), DataReadsPerReq: p(0.800),
		LogDevName: "vda", LogDevReadMs: p(0.087), LogDevReadsPerSec: p(12900)}
	c := MemoryRule(f)
	if c.Matched || !strings.Contains(c.Why, "0.80 of them from the disk (vda) at 0.087 ms each: 28% of each request's time (0.249 ms) < 40%") {
		t.Errorf("fast disk: matched %v, %q", c.Matched, c.Why)
	}
	slow := f
	slow.RequestsPerSec, slow.MeanLatencyMs, slow.LogDevReadMs, slow.LogDevReadsPerSec = p(3450), p(1.16), p(1.0), p(2760)
	c = MemoryRule(slow)
	if !c.Matched || c.Score < 0.6 || c.Score > 0.8 || !strings.Contains(c.Why, "0.80 of them from the disk (vda) at 1.000 ms each: 69% of each request's time") {
		t.Errorf("slow disk: matched %v score %.2f, %q", c.Matched, c.Score, c.Why)
	}
	if len(c.Suggestions) != 2 || c.Suggestions[0].PredictedGain == nil || *c.Suggestions[0].PredictedGain < 3 {
		t.Errorf("slow disk suggestions %+v, want more memory first (×3.2 at best)", c.Suggestions)
	}
	// Reads twice as fast save at best half their 69% of each request:
	// ×1/(1-0.345) = ×1.53 (the cores' use not measured here).
	if len(c.Suggestions) == 2 && (c.Suggestions[1].PredictedGain == nil || math.Abs(*c.Suggestions[1].PredictedGain-1.53) > 0.01 ||
		!strings.Contains(c.Suggestions[1].Action, "reads twice as fast (at best half the reads' time saved)")) {
		t.Errorf("slow disk: second suggestion %+v, want faster reads at ×1.53", c.Suggestions[1])
	}
	if v := Diagnose(slow); v.Bottleneck != Memory {
		t.Errorf("slow disk verdict %s, want memory", v.Bottleneck)
	}
	// Over one read per request the rule matches as before, and says how
	// many reached the disk.
	many := slow
	many.DataReadsPerReq = p(2)
	if c := MemoryRule(many); !c.Matched || !strings.Contains(c.Why, "2.00 data reads per request that the server's cache missed; 0.80 of them from the disk (vda)") {
		t.Errorf("two reads per request: matched %v, %q", c.Matched, c.Why)
	}
	// The sessions' own timing counts where the device's service time
	// understates each read (MariaDB with performance_schema, 64 MB buffer
	// pool, 1M rows, 8 threads: 0.95 reads per request at 0.088 ms on the
	// device, 25% of a 0.281 ms request, but data-read waits 55% of the
	// sessions' time, the host's cores 82% busy). The gain of more memory
	// is held to what the cores leave.
	ps := Figures{Threads: 8, RequestsPerSec: p(28380), MeanLatencyMs: p(0.281), CacheHitRatio: p(0.690), DataReadsPerReq: p(0.948),
		LogDevName: "vda", LogDevReadMs: p(0.088), LogDevReadsPerSec: p(26889), HostBusy: p(0.82), Cores: p(2),
		WaitMs: map[string]float64{WaitDataRead: 55, WaitClient: 36, WaitOther: 9}}
	c = MemoryRule(ps)
	if !c.Matched || math.Abs(c.Score-0.55) > 1e-9 || !strings.Contains(c.Why, "0.95 data reads per request; data-read waits 55% of the sessions' time ≥ 40%") {
		t.Errorf("performance_schema waits: matched %v score %.2f, %q", c.Matched, c.Score, c.Why)
	}
	if len(c.Suggestions) == 0 || c.Suggestions[0].PredictedGain == nil || math.Abs(*c.Suggestions[0].PredictedGain-1.22) > 0.005 ||
		!strings.Contains(c.Suggestions[0].Action, "until the cores, 82% busy now, are full") {
		t.Errorf("performance_schema waits: suggestions %+v, want more memory held to ×1.22 by the cores", c.Suggestions)
	}
	// Faster reads would save at best half the 55% (×1.38), but the
	// cores, 82% busy, leave ×1.22.
	if len(c.Suggestions) != 2 || c.Suggestions[1].PredictedGain == nil || math.Abs(*c.Suggestions[1].PredictedGain-1.22) > 0.005 ||
		!strings.Contains(c.Suggestions[1].Action, "reads twice as fast (at best until the cores, 82% busy now, are full)") {
		t.Errorf("performance_schema waits: suggestions %+v, want faster reads held to ×1.22 by the cores", c.Suggestions)
	}
	many = ps
	many.DataReadsPerReq, many.HostBusy = p(3), p(0.5)
	if c := MemoryRule(many); !c.Matched || len(c.Suggestions) != 2 || c.Suggestions[1].PredictedGain == nil || math.Abs(*c.Suggestions[1].PredictedGain-1/(1-0.275)) > 0.005 {
		t.Errorf("three reads per request, cores half busy: suggestions %+v, want faster reads at ×1.38", c.Suggestions)
	}
	if v := Diagnose(ps); v.Bottleneck != Memory {
		t.Errorf("performance_schema waits: verdict %s, want memory", v.Bottleneck)
	}
	ps.WaitMs = map[string]float64{WaitDataRead: 20, WaitClient: 70, WaitOther: 10}
	// Measured waits decide, also when the device's estimate is higher
	// (30% here), and a near miss is named as one.
	if c := MemoryRule(ps); c.Matched || !strings.Contains(c.Why, "data-read waits 20% of the sessions' time < 40%") || math.Abs(c.near-0.5) > 0.01 {
		t.Errorf("few read waits: matched %v near %.2f, %q", c.Matched, c.near, c.Why)
	}
	// A scan on the same server (300,000 rows, 2 threads): 4,134 device
	// reads of 0.815 ms in a 760 ms scan overlapped (InnoDB's read-ahead);
	// the sessions waited 4% of their time for data reads.
	scan := Figures{Threads: 2, RequestsPerSec: p(2.6), MeanLatencyMs: p(759.8), CacheHitRatio: p(0.498), DataReadsPerReq: p(4418.4),
		LogDevName: "vda", LogDevReadMs: p(0.815), LogDevReadsPerSec: p(10741), HostBusy: p(0.94), Cores: p(2),
		WaitMs: map[string]float64{WaitDataRead: 4, WaitClient: 30, WaitOther: 66}}
	if c := MemoryRule(scan); !c.Matched || math.Abs(c.Score-0.04) > 1e-9 || !strings.Contains(c.Why, "4418.40 data reads per request that the server's cache missed; data-read waits 4% of the sessions' time") {
		t.Errorf("scan: matched %v score %.2f, %q", c.Matched, c.Score, c.Why)
	}
	scan.WaitMs = nil // performance_schema off: the device's figures, which overlapped
	if c := MemoryRule(scan); !c.Matched || !strings.Contains(c.Why, "4131.15 of them from the disk (vda) at 0.815 ms each: more than each request's time (759.800 ms), so they overlapped") {
		t.Errorf("scan without waits: matched %v, %q", c.Matched, c.Why)
	}
	cached := f
	cached.RequestsPerSec, cached.LogDevReadMs, cached.LogDevReadsPerSec = p(79000), p(0.2), p(5.2)
	if c := MemoryRule(cached); c.Matched || !strings.Contains(c.Why, "0.00 of them from the disk") {
		t.Errorf("OS cache: matched %v, %q", c.Matched, c.Why)
	}
}

// TestOneWriterNone: a closed loop of writes to the embedded engine that
// leaves the cores idle is not "unloaded": SQLite takes one writer at a
// time, so more threads do not raise it (measured: single inserts 66,464/s
// at 1 thread, 68,923/s at 2, lock waits 47% at 4). Figures of the real
// 1-thread run; a read-only run keeps the more-threads advice.
func TestOneWriterNone(t *testing.T) {
	f := Figures{Threads: 1, RequestsPerSec: p(62914), MeanLatencyMs: p(0.015), P99Ms: p(0.029), InProcess: true, ClientCPUPct: p(43.2),
		Cores: p(2), SyncsPerReq: p(0.002), SyncMs: p(1.711), LogMBPerSec: p(248.98),
		WaitMs: map[string]float64{WaitCPU: 540, WaitLog: 440, WaitDataWrite: 20}}
	v := Diagnose(f)
	ev := strings.Join(v.Evidence, "|")
	if v.Bottleneck != None || v.Evidence[0] != "no clear bottleneck: SQLite's one writer at a time sets the pace of these writes" ||
		!strings.Contains(ev, "which more threads do not raise") {
		t.Errorf("writes: %s %q", v.Bottleneck, ev)
	}
	if len(v.Suggestions) != 1 || strings.Contains(v.Suggestions[0].Action, "-c 2") || !strings.Contains(v.Suggestions[0].Action, "several rows per transaction") {
		t.Errorf("writes: suggestions %+v", v.Suggestions)
	}
	reads := f
	reads.LogMBPerSec, reads.SyncsPerReq = p(0), p(0)
	if v := Diagnose(reads); !strings.Contains(v.Evidence[0], "did not load the server") || !strings.Contains(v.Suggestions[0].Action, "more threads (-c 2)") {
		t.Errorf("reads: %q %+v", v.Evidence, v.Suggestions)
	}
}

// TestLogRateFlatDeviceIdle: a log rate that stops rising while requests
// queue is the log's limit only if its device was busy; MariaDB inserts/
// deletes at 32000/s requested (8 workers, host 83% busy, the device busy
// 43%, the sessions' log waits not timed) is not.
func TestLogRateFlatDeviceIdle(t *testing.T) {
	f := Figures{Scope: "step 5 (32000/s)", Threads: 8, RequestsPerSec: p(12165), MeanLatencyMs: p(900), OpenLoop: true, LatePct: p(62),
		SchedLagP99Ms: p(0.001), LogMBPerSec: p(7.78), PrevLogMBPerSec: p(7.09), ServiceMs: p(0.66), MinServiceMs: p(0.39), StartLagP99Ms: p(1000),
		WaitMs: map[string]float64{WaitOther: 770, WaitClient: 230}, LogDevName: "vda", LogDevBusy: p(0.43)}
	c := LogRateRule(f)
	if c.Matched || !strings.Contains(c.Why, "flat (+10%) against the previous step's 7.09 MB/s, but its device (vda) was busy only 43% of the time (< 60%): the log did not cap the rate") {
		t.Errorf("device idle: matched %v, %q", c.Matched, c.Why)
	}
	// The same with the device busy (or not measured, as for a remote
	// server): the flat rate is the log's.
	f.LogDevBusy = p(0.97)
	if c := LogRateRule(f); !c.Matched {
		t.Errorf("device busy: %q", c.Why)
	}
	f.LogDevBusy = nil
	if c := LogRateRule(f); !c.Matched {
		t.Errorf("device not measured: %q", c.Why)
	}
}

// TestLogRateKneeProbes: figures of a real PostgreSQL knee (single
// inserts, 4 workers, full durability; the log's device busy 56%, log-IO
// waits 50-57%, 0.52-0.57 syncs per commit). At 16000/s (×1.33 over the
// probe below) the log rate is flat, but the sessions wait for flushes
// they share while the device has time to spare: group-commit advice, not
// "a higher log write rate". At 11000/s (×1.05) the rates are too close to
// call anything flat. At 10000/s nothing was late, but the requests queued
// for the busy workers (start lag p99 3.8 ms, ten times a request).
func TestLogRateKneeProbes(t *testing.T) {
	probe := func(rate, achieved, late, service, startLag, syncs, logMB, prevLog, rise, logWait float64) Figures {
		return Figures{Scope: "probe " + strconv.FormatFloat(rate, 'f', 0, 64), Threads: 4, RequestsPerSec: p(achieved), MeanLatencyMs: p(100), OpenLoop: true,
			LatePct: p(late), SchedLagP99Ms: p(0.01), ServiceMs: p(service), MinServiceMs: p(0.2), StartLagP99Ms: p(startLag),
			CommitsPerReq: p(1), SyncsPerReq: p(syncs), CommitsWait: yes, LogMBPerSec: p(logMB), PrevLogMBPerSec: p(prevLog), RateRise: p(rise),
			LogDevName: "vda", LogDevBusy: p(0.56), LogDevFlushMs: p(0.038), LogDevWriteMs: p(0.047),
			WaitMs: map[string]float64{WaitLog: 1000 * logWait, WaitClient: 1000 * (0.9 - logWait), WaitCPU: 100}}
	}
	noWriteRate := func(t *testing.T, c Candidate) {
		t.Helper()
		for _, s := range c.Suggestions {
			if strings.Contains(s.Action, "higher log write rate") {
				t.Errorf("suggests %q with the log's device busy 56%%", s.Action)
			}
		}
		if len(c.Suggestions) == 0 || !strings.Contains(c.Suggestions[len(c.Suggestions)-1].Action, "more threads to fill each commit group") {
			t.Errorf("suggestions %+v: want the group-commit advice", c.Suggestions)
		}
	}
	c := LogRateRule(probe(16000, 9608, 39.9, 0.415, 1000, 0.52, 0.96, 0.98, 1.33, 0.57))
	if !c.Matched || !strings.Contains(c.Why, "flat (-2%)") || !strings.Contains(c.Why, "busy only 56%: the sessions wait for flushes they share (log-IO waits 57% of their time, 0.52 log syncs per commit)") {
		t.Errorf("16000/s: matched %v, %q", c.Matched, c.Why)
	}
	noWriteRate(t, c)
	c = LogRateRule(probe(11000, 10412, 5.3, 0.369, 153.6, 0.546, 1.04, 1.05, 1.048, 0.50))
	if !c.Matched || strings.Contains(c.Why, "flat") || !strings.Contains(c.Why, "log-IO waits are 50% of the sessions' time although commits share their flushes") {
		t.Errorf("11000/s: matched %v, %q", c.Matched, c.Why)
	}
	noWriteRate(t, c)
	ten := probe(10000, 9999, 0, 0.3705, 3.847, 0.566, 1.0, 0.8, 1.25, 0.57)
	if c := LogRateRule(ten); !c.Matched {
		t.Errorf("10000/s, queued for the workers: %q", c.Why)
	}
	ten.StartLagP99Ms = p(0.5) // no queue: nothing to explain
	if c := LogRateRule(ten); c.Matched || !strings.Contains(c.Why, "requests do not queue") {
		t.Errorf("10000/s without a queue: matched %v, %q", c.Matched, c.Why)
	}
	// Nor with no step below to compare with (a knee's first probe, a
	// ramp's first step): PostgreSQL updates at 10/s, log-IO waits 60%.
	ten.PrevLogMBPerSec, ten.RateRise = nil, nil
	if c := LogRateRule(ten); c.Matched || !strings.Contains(c.Why, "requests do not queue") {
		t.Errorf("10000/s without a queue or a step below: matched %v, %q", c.Matched, c.Why)
	}
}

// TestCPUOverTLS: on encrypted connections the cpu verdict names the TLS
// and suggests connecting without it, with no predicted gain (the run did
// not measure one); unencrypted connections get neither. Figures of a real
// run: PostgreSQL single inserts, 4 threads, relaxed, TLS 1.3 over loopback
// (sslmode=prefer): 16,794 req/s, 86 µs of server CPU per request.
func TestCPUOverTLS(t *testing.T) {
	f := Figures{ServerCPUCores: p(1.44), Cores: p(2), HostBusy: p(0.98), ClientCPUPct: p(24), RequestsPerSec: p(16794), Threads: 4,
		TLS: "TLS 1.3, TLS_AES_256_GCM_SHA384", TLSOff: "sslmode=disable in the DSN"}
	c := CPURule(f)
	if !c.Matched {
		t.Fatalf("cpu not matched: %s", c.Why)
	}
	if ev := strings.Join(c.Evidence, "|"); !strings.Contains(ev, "the connections are encrypted (TLS 1.3, TLS_AES_256_GCM_SHA384)") {
		t.Errorf("evidence %q", ev)
	}
	last := c.Suggestions[len(c.Suggestions)-1]
	if !strings.HasPrefix(last.Action, "unencrypted connections where the network is trusted (sslmode=disable in the DSN)") || last.PredictedGain != nil {
		t.Errorf("last suggestion %+v, want unencrypted connections without a predicted gain", last)
	}
	f.TLS, f.TLSOff = "", ""
	c = CPURule(f)
	if strings.Contains(strings.Join(c.Evidence, "|"), "encrypted") || strings.Contains(c.Suggestions[len(c.Suggestions)-1].Action, "unencrypted") {
		t.Errorf("plain connections: %q %+v", c.Evidence, c.Suggestions)
	}
	// ceiling itself out of CPU on encrypted connections: the client
	// verdict names the TLS too (its own side of the cost).
	cl := ClientRule(Figures{ClientCPUPct: p(92), ClientCores: 2, Threads: 8, TLS: "TLS 1.3, TLS_AES_128_GCM_SHA256"})
	if !cl.Matched || !strings.Contains(strings.Join(cl.Evidence, "|"), "encrypted (TLS 1.3") ||
		!strings.HasPrefix(cl.Suggestions[len(cl.Suggestions)-1].Action, "unencrypted connections") {
		t.Errorf("client over TLS: matched %v %q %+v", cl.Matched, cl.Evidence, cl.Suggestions)
	}
}

// TestNoneHostOnlyCPU: where only the host's CPU was measured (the
// server's processes not: a restart changed its pid), a "none" verdict
// names the figure as the host's, not as the server's CPU. Figures of a
// real run: MariaDB restarted mid-run, host 35% busy.
func TestNoneHostOnlyCPU(t *testing.T) {
	v := Diagnose(Figures{HostBusy: p(0.352), Cores: p(2), ClientCPUPct: p(6), RequestsPerSec: p(3105), Threads: 2, MeanLatencyMs: p(0.386)})
	ev := strings.Join(v.Evidence, "|")
	if v.Bottleneck != None || !strings.Contains(ev, "the server host's cores 35% busy") || strings.Contains(ev, "server CPU") {
		t.Errorf("%s %q", v.Bottleneck, ev)
	}
}

// TestErrorsVerdict: the figures of a PostgreSQL direct-selects run whose
// table was dropped 4 s into 10 (141,501 failed, 109,729 succeeded) give
// "errors", whatever else matched, with the classes and the warning on the
// costs; the same failures as serialization errors (a contended database)
// or as 5% of the requests leave the usual rules in charge, with the
// errors rule listed unmatched.
func TestErrorsVerdict(t *testing.T) {
	base := Figures{HostBusy: p(0.69), Cores: p(2), ClientCPUPct: p(26), RequestsPerSec: p(10973), Threads: 2, MeanLatencyMs: p(0.064),
		Requests: 109729, ElapsedS: 10}
	f := base
	f.Errors, f.ErrorsByClass = 141501, map[string]int64{"other": 141501}
	v := Diagnose(f)
	ev := strings.Join(v.Evidence, "|")
	if v.Bottleneck != Errors || !strings.HasPrefix(ev, "141,501 of 251,230 requests failed (56.3% ≥ 10%)|141,501 other errors|") ||
		!strings.Contains(ev, "neither is the database's ceiling") || len(v.Suggestions) != 1 || v.Suggestions[0].PredictedGain != nil {
		t.Errorf("%s %q %+v", v.Bottleneck, ev, v.Suggestions)
	}
	// A rule that matches besides is a runner-up.
	f.HostBusy = p(0.95)
	if v := Diagnose(f); v.Bottleneck != Errors || !strings.Contains(strings.Join(v.Evidence, "|"), "runner-up: cpu") {
		t.Errorf("with the cores busy: %s %q", v.Bottleneck, v.Evidence)
	}

	f = base
	f.Errors, f.ErrorsByClass = 141501, map[string]int64{"serialization": 100000, "statement_timeout": 41501}
	if v := Diagnose(f); v.Bottleneck == Errors {
		t.Errorf("serialization and timeout errors: %s %q", v.Bottleneck, v.Evidence)
	}
	f = base
	f.Errors, f.ErrorsByClass = 5775, map[string]int64{"constraint": 5000, "lock_timeout": 775} // 4.4% + 0.7%
	v = Diagnose(f)
	var rule *Rule
	for i := range v.Rules {
		if v.Rules[i].Name == Errors {
			rule = &v.Rules[i]
		}
	}
	if v.Bottleneck != None || rule == nil || rule.Matched || rule.Why != "5,000 of 115,504 requests failed (4.33%) < 10%, leaving out lock and timeout errors" {
		t.Errorf("5%% failed: %s, rule %+v", v.Bottleneck, rule)
	}
	// A hot standby's scans cancelled in conflict with recovery (beside
	// pgbench on the primary: 308 of 421, and 2 sessions ended): the
	// primary's work, with the standby's remedies first.
	f = Figures{HostBusy: p(0.99), Cores: p(2), ClientCPUPct: p(22), RequestsPerSec: p(11.1), Threads: 2, MeanLatencyMs: p(73.4),
		Requests: 111, ElapsedS: 10, Errors: 310, ErrorsByClass: map[string]int64{"recovery_conflict": 308, "connection_lost": 2}}
	v = Diagnose(f)
	ev = strings.Join(v.Evidence, "|")
	if v.Bottleneck != Errors || !strings.HasPrefix(ev, "310 of 421 requests failed (73.6% ≥ 10%)|308 recovery_conflict errors|2 connection_lost errors|") ||
		!strings.Contains(ev, "the primary's work, not this load") || len(v.Suggestions) != 2 || !strings.Contains(v.Suggestions[0].Action, "hot_standby_feedback = on") {
		t.Errorf("recovery conflicts: %s %q %+v", v.Bottleneck, ev, v.Suggestions)
	}
}

// TestOneThreadWording: the default -c 1 reads "1 thread keeps", not
// "1 threads keep".
func TestOneThreadWording(t *testing.T) {
	if Threads(1) != "1 thread" || Threads(4) != "4 threads" {
		t.Errorf("Threads: %q, %q", Threads(1), Threads(4))
	}
	v := Diagnose(Figures{HostBusy: p(0.48), Cores: p(2), ClientCPUPct: p(14), RequestsPerSec: p(1072), Threads: 1, MeanLatencyMs: p(0.93)})
	ev := strings.Join(v.Evidence, "|")
	if v.Bottleneck != None || !strings.Contains(ev, "1,072 req/s with 1 thread, mean") || !strings.Contains(ev, "not saturated: 1 thread keeps the cores 48% busy") {
		t.Errorf("%s %q", v.Bottleneck, ev)
	}
	v = Diagnose(Figures{HostBusy: p(0.48), Cores: p(2), ClientCPUPct: p(14), RequestsPerSec: p(1072), Threads: 2, MeanLatencyMs: p(0.93)})
	if ev := strings.Join(v.Evidence, "|"); !strings.Contains(ev, "not saturated: 2 threads keep the cores") {
		t.Errorf("2 threads: %q", ev)
	}
}

// TestContentionRowLock: without sampled waits (MariaDB with
// performance_schema off), the server's row-lock time over the workers'
// time stands for the lock share. Figures of real TPC-C runs on one
// warehouse: 16 VUs, 73% of their time in row-lock waits with the host's
// cores 88% busy (cpu, contention runner-up); the same waits with idle
// cores are contention; 10% is listed as low; sampled waits take
// precedence over the server-wide figure.
func TestContentionRowLock(t *testing.T) {
	f := Figures{HostBusy: p(0.88), Cores: p(2), ClientCPUPct: p(29), RequestsPerSec: p(745), Threads: 16, MeanLatencyMs: p(21.5), RowLockShare: p(0.73)}
	v := Diagnose(f)
	ev := strings.Join(v.Evidence, "|")
	if v.Bottleneck != CPU || !strings.Contains(ev, "runner-up: contention (score 0.73): row-lock waits are 73% of the sessions' time ≥ 30% (the server's row-lock wait time") {
		t.Errorf("busy cores: %s %q", v.Bottleneck, ev)
	}
	f.HostBusy = p(0.5)
	if v := Diagnose(f); v.Bottleneck != Contention || !strings.HasPrefix(v.Evidence[0], "row-lock waits are 73%") {
		t.Errorf("idle cores: %s %q", v.Bottleneck, v.Evidence)
	}
	f.RowLockShare = p(0.1)
	v = Diagnose(f)
	for _, r := range v.Rules {
		if r.Name == Contention && (r.Matched || !strings.HasPrefix(r.Why, "row-lock waits are 10% of the sessions' time < 30%")) {
			t.Errorf("10%%: %+v", r)
		}
	}
	if ev := strings.Join(v.Evidence, "|"); !strings.Contains(ev, "row-lock waits 10% of the sessions' time (the whole server's)") {
		t.Errorf("none verdict does not show the row-lock share: %q", ev)
	}
	f.RowLockShare = p(0.73)
	f.WaitMs = map[string]float64{WaitLock: 100, WaitClient: 900}
	if v := Diagnose(f); v.Bottleneck == Contention {
		t.Errorf("sampled waits (10%% lock) overridden by the server-wide figure: %s %q", v.Bottleneck, v.Evidence)
	}
}

// TestWithStall: a run silent for a fifth of its time or more becomes a
// stall with the former verdict as runner-up, except an errors verdict,
// which keeps its name and gains the stall as evidence; the rule is listed
// either way, and v itself is left as it was.
func TestWithStall(t *testing.T) {
	v := &Verdict{Bottleneck: CPU, Evidence: []string{"CPU 90%"}, Suggestions: []Suggestion{{Action: "more cores"}}}
	st := StallInfo{Seconds: 3, Spans: []string{"1.0-4.0 s into the run"}, ElapsedS: 10}
	got := WithStall(v, st)
	if got.Bottleneck != Stall || got.Evidence[0] != "no request completed for 3.0 s of the 10.0 s measured (1.0-4.0 s into the run)" ||
		got.Evidence[len(got.Evidence)-1] != "runner-up: cpu: CPU 90%" || len(got.Suggestions) != 1 || !strings.Contains(got.Suggestions[0].Action, "held the database up") {
		t.Errorf("stall: %+v", got)
	}
	if r := got.Rules[len(got.Rules)-1]; r.Name != Stall || !r.Matched || r.Score != 0.3 {
		t.Errorf("rule %+v", r)
	}
	if v.Bottleneck != CPU || len(v.Evidence) != 1 || len(v.Rules) != 0 {
		t.Errorf("v changed: %+v", v)
	}
	st.Seconds = 1
	if got := WithStall(v, st); got.Bottleneck != CPU || len(got.Evidence) != 2 || got.Rules[0].Matched {
		t.Errorf("short stall: %+v", got)
	}
	st.Seconds = 5
	e := &Verdict{Bottleneck: Errors, Evidence: []string{"50 of 100 requests failed"}}
	if got := WithStall(e, st); got.Bottleneck != Errors || len(got.Evidence) != 2 {
		t.Errorf("errors: %+v", got)
	}
	none := &Verdict{Bottleneck: None, Rules: []Rule{{Name: CPU}, {Name: None, Matched: true, Why: "no other rule matched"}}}
	if got := WithStall(none, st); got.Bottleneck != Stall || got.Rules[1].Matched || !none.Rules[1].Matched {
		t.Errorf("none superseded: rules %+v (v's %+v)", got.Rules, none.Rules)
	}
	if got := WithStall(v, StallInfo{ElapsedS: 10}); got != v {
		t.Errorf("no stall: got a new verdict %+v", got)
	}
}

// TestContentionDeadlocks: serialization errors that were deadlocks are
// named as such, with the lock-order advice; on PostgreSQL the evidence
// says what deadlock_timeout cost each (and the p99 when it shows it);
// serialization failures that were no deadlocks get neither.
func TestContentionDeadlocks(t *testing.T) {
	f := Figures{WaitMs: map[string]float64{WaitLock: 90, WaitCPU: 10}, ErrorsByClass: map[string]int64{"serialization": 9},
		Deadlock: true, DeadlockTimeout: "1s", P99Ms: p(2007)}
	c := ContentionRule(f)
	ev := strings.Join(c.Evidence, "|")
	if !c.Matched || !strings.Contains(ev, "9 serialization errors|the first serialization error was a deadlock") ||
		!strings.HasSuffix(ev, "only after deadlock_timeout (1s) of waiting, so every deadlock held its transactions about 1s (p99 2,007 ms)") {
		t.Fatalf("evidence: %s", ev)
	}
	if len(c.Suggestions) != 2 || !strings.Contains(c.Suggestions[0].Action, "locking the rows in one order") {
		t.Fatalf("suggestions: %+v", c.Suggestions)
	}
	f.DeadlockTimeout, f.P99Ms = "", p(3) // InnoDB: found at once
	if ev := strings.Join(ContentionRule(f).Evidence, "|"); !strings.HasSuffix(ev, "each waited for a row the other had locked") {
		t.Fatalf("evidence without a timeout: %s", ev)
	}
	f.Deadlock = false // serialization failures (40001): no deadlock talk
	if c := ContentionRule(f); strings.Contains(strings.Join(c.Evidence, "|"), "deadlock") || len(c.Suggestions) != 1 {
		t.Fatalf("no deadlock: %+v", c)
	}
	for in, want := range map[string]string{"1s": "1s", "200ms": "200ms", "1min": "1m", "2d": "48h"} {
		if got := pgDuration(in); got != want {
			t.Errorf("pgDuration(%s) = %s", in, got)
		}
	}
}

// TestDeadlocksUnderOtherVerdicts: deadlocks under a verdict other than
// contention (MariaDB finds them at once, so the sessions hardly wait)
// are a line of evidence with their share, and the lock-order advice.
func TestDeadlocksUnderOtherVerdicts(t *testing.T) {
	cores, busyCores := 2.0, 1.84
	f := Figures{Requests: 29708, Errors: 867, ErrorsByClass: map[string]int64{"serialization": 867}, Deadlock: true,
		Cores: &cores, ServerCPUCores: &busyCores}
	v := Diagnose(f)
	ev := strings.Join(v.Evidence, "|")
	if v.Bottleneck != CPU || !strings.Contains(ev, "867 serialization errors (2.8% of the requests); the first serialization error was a deadlock") {
		t.Fatalf("verdict %s: %s", v.Bottleneck, ev)
	}
	if last := v.Suggestions[len(v.Suggestions)-1]; !strings.Contains(last.Action, "locking the rows in one order") {
		t.Fatalf("suggestions: %+v", v.Suggestions)
	}
	f.Deadlock = false
	if v := Diagnose(f); strings.Contains(strings.Join(v.Evidence, "|"), "deadlock") {
		t.Fatalf("no deadlock: %v", v.Evidence)
	}
}

// TestStallOfDeadlocks: nothing completing while the sessions wait on each
// other's row locks, deadlocking, is the run's own contention, not the
// database stopping: the verdict stays contention with the stall as
// evidence; without deadlocks (a lock taken outside the run, say) it is
// a stall.
func TestStallOfDeadlocks(t *testing.T) {
	v := &Verdict{Bottleneck: Contention, Evidence: []string{"lock waits are 100% of the sessions' time ≥ 30%"}, Suggestions: []Suggestion{{Action: lockOrder}}}
	st := StallInfo{ElapsedS: 3, InFlight: 4, OldestS: 3, Deadlocks: true}
	got := WithStall(v, st)
	ev := strings.Join(got.Evidence, "|")
	if got.Bottleneck != Contention || !strings.HasPrefix(ev, "lock waits are 100%") || !strings.Contains(ev, "the run's own transactions held it up") || len(got.Suggestions) != 1 {
		t.Fatalf("deadlocks: %s: %s %+v", got.Bottleneck, ev, got.Suggestions)
	}
	st.Deadlocks = false
	if got := WithStall(v, st); got.Bottleneck != Stall {
		t.Fatalf("lock waits without deadlocks: %s", got.Bottleneck)
	}
}

// One session on CPU with more cores busy than sessions (a PostgreSQL
// scan's parallel workers, ceiling on the host): not "one core per
// session", and more threads can gain at most the idle cores' share.
func TestOneSessionPerCoreGain(t *testing.T) {
	for _, tc := range []struct {
		busy    float64
		gain    float64
		perCore bool // says "bound by one core per session"
	}{{0.52, 2 / 1.04, true}, {0.75, 2 / 1.5, false}} {
		f := Figures{Threads: 1, Cores: p(2), HostBusy: p(tc.busy), RequestsPerSec: p(3.5), WaitMs: map[string]float64{WaitCPU: 90, WaitLog: 10}}
		c := CPURule(f)
		if !c.Matched || len(c.Suggestions) != 1 || c.Suggestions[0].PredictedGain == nil {
			t.Fatalf("host %.0f%% busy: %+v", 100*tc.busy, c)
		}
		if g := *c.Suggestions[0].PredictedGain; math.Abs(g-round(tc.gain, 2)) > 1e-9 {
			t.Errorf("host %.0f%% busy: predicted gain ×%g, want ×%.2f", 100*tc.busy, g, tc.gain)
		}
		if got := strings.Contains(c.Why, "bound by one core per session"); got != tc.perCore {
			t.Errorf("host %.0f%% busy: %q", 100*tc.busy, c.Why)
		}
	}
}

// The same on SQLite writing (single inserts on /dev/shm, one session on
// CPU 76%, 1.0 of 2 cores busy): the second core would not help, since
// SQLite takes one writer at a time (+4% at 2 threads), so no thread
// count or gain is suggested; reading, it would.
func TestOneSessionPerCoreSQLiteWriter(t *testing.T) {
	f := Figures{InProcess: true, Threads: 1, Cores: p(2), ClientCPUPct: p(52), RequestsPerSec: p(90848), LogMBPerSec: p(359.6), WaitMs: map[string]float64{WaitCPU: 76, WaitLog: 24}}
	c := CPURule(f)
	if !c.Matched || len(c.Suggestions) != 1 || c.Suggestions[0].PredictedGain != nil || !strings.Contains(c.Suggestions[0].Action, "one writer at a time") {
		t.Fatalf("writing: %+v", c)
	}
	// A bulk load of 1,000-row batches (148k rows/s, one core): its
	// commits already hold many rows, so the lever is the core.
	f.RowsPerTx = p(1000)
	if c := CPURule(f); len(c.Suggestions) != 1 || !strings.HasPrefix(c.Suggestions[0].Action, "a faster core") || !strings.Contains(c.Suggestions[0].Action, "already write 1,000 rows each") {
		t.Fatalf("1,000-row batches: %+v", c.Suggestions)
	}
	f.RowsPerTx = nil
	f.LogMBPerSec = p(0)
	if c := CPURule(f); !c.Matched || len(c.Suggestions) != 1 || c.Suggestions[0].PredictedGain == nil {
		t.Fatalf("reading: %+v", c)
	}
}

// An idle SQLite writer whose requests are batches already is told to
// make them larger, naming their size (bulk-load 10-row batches: 93,727
// rows/s; 1,000-row ones 196,995).
func TestUnsaturatedWriterBatches(t *testing.T) {
	f := Figures{InProcess: true, Threads: 1, Cores: p(2), ClientCPUPct: p(30), RequestsPerSec: p(9373), LogMBPerSec: p(148), RowsPerTx: p(10)}
	_, s, ok := unsaturated(f)
	if !ok || !strings.HasPrefix(s.Action, "more rows per transaction than these 10 ") {
		t.Fatalf("%v %q", ok, s.Action)
	}
	f.RowsPerTx = nil
	if _, s, _ := unsaturated(f); !strings.HasPrefix(s.Action, "several rows per transaction") {
		t.Fatalf("single rows: %q", s.Action)
	}
	// TPC-C on SQLite (2 threads, cores 59% busy) is not told to batch
	// transactions its specification sets.
	f.FixedTx = "TPC-C's"
	if _, s, _ := unsaturated(f); !strings.HasPrefix(s.Action, "a server engine (PostgreSQL, MySQL/MariaDB)") || strings.Contains(s.Action, "rows per transaction") {
		t.Fatalf("TPC-C: %q", s.Action)
	}
}

// SQLite takes one writer at a time: waits for its lock while the writer
// holding it writes the log count for the log in the holder's share, so a
// log held to a low rate is named log-rate, not contention; a server's
// lock waits (concurrent writers) are not added to the log's.
func TestLogRateThroughSQLiteLock(t *testing.T) {
	waits := map[string]float64{WaitLog: 45, WaitLock: 55}
	f := Figures{InProcess: true, Threads: 2, LogMBPerSec: p(0.36), CommitsWait: no, WaitMs: waits}
	c := LogRateRule(f)
	if !c.Matched || math.Abs(c.Score-1) > 1e-9 || !strings.Contains(c.Why, "waits for SQLite's one writer while it wrote the log another 55%") {
		t.Errorf("SQLite, holder on the log: matched %v score %g: %s", c.Matched, c.Score, c.Why)
	}
	if cont := ContentionRule(f); cont.Matched && cont.Score >= c.Score {
		t.Errorf("contention (%g) would outrank the log (%g)", cont.Score, c.Score)
	}
	f.InProcess = false
	if c := LogRateRule(f); c.Matched {
		t.Errorf("server: lock waits counted for the log: %s", c.Why)
	}
	// A knee of single inserts held to the 2014 S1 log rate (0.36 MiB/s),
	// 4 writers: a saturated probe's log rate is flat and the lock's
	// waits are the log's (it was named contention, 0.75 against the flat
	// log's 0.5); the first failing probe kept up (late 0.4%) with its
	// requests queued for the writer, not in ceiling's schedule (it was
	// contention (kept up)); the holder there spent 0.75 of its time on
	// the log.
	sat := Figures{InProcess: true, OpenLoop: true, Threads: 4, LogMBPerSec: p(0.36), PrevLogMBPerSec: p(0.36), RateRise: p(1.33), LatePct: p(42.2),
		CommitsWait: no, WaitMs: map[string]float64{WaitLog: 25, WaitLock: 74, WaitCPU: 1}}
	if v := Diagnose(sat); v.Bottleneck != LogRate {
		t.Errorf("saturated probe under the held log: %s %q", v.Bottleneck, v.Evidence)
	}
	kept := sat
	kept.PrevLogMBPerSec, kept.RateRise, kept.LatePct = p(0.355), p(1.03), p(0.4)
	kept.WaitMs = map[string]float64{WaitLog: 24, WaitLock: 70, WaitCPU: 6}
	if c := LogRateRule(kept); !c.Matched || !strings.Contains(c.Why, "waits for SQLite's one writer while it wrote the log another 56%") {
		t.Errorf("kept-up probe, requests queued for the writer: matched %v, %q", c.Matched, c.Why)
	}
	if v := Diagnose(kept); v.Bottleneck != LogRate {
		t.Errorf("kept-up probe: %s %q", v.Bottleneck, v.Evidence)
	}
	// The holder mostly on CPU: the lock's waits are not the log's.
	f = Figures{InProcess: true, Threads: 4, LogMBPerSec: p(120), CommitsWait: no,
		WaitMs: map[string]float64{WaitLog: 20, WaitLock: 36, WaitCPU: 44}}
	if c := LogRateRule(f); c.Matched {
		t.Errorf("SQLite, holder on CPU: %s", c.Why)
	}
}

// TestNetworkRule: PostgreSQL through a forwarder that adds 1 ms each way
// (a server on another host): 4 threads of inserts-deletes at 3.85 ms a
// request, 2.6 ms of it the round trip timed before the run.
func TestNetworkRule(t *testing.T) {
	f := Figures{Scope: "run", Threads: 4, Requests: 5189, RequestsPerSec: p(1037.6), MeanLatencyMs: p(3.851), P99Ms: p(6.05),
		ClientCPUPct: p(3), ClientCores: 2, CommitsPerReq: p(1.003), SyncsPerReq: p(0.628), LogMBPerSec: p(0.35), RoundTripMs: p(2.596)}
	c := NetworkRule(f)
	if !c.Matched || c.Score != 2.596/3.851 || !strings.Contains(c.Why, "2.6 ms at rest, before the run) is at least 67% of each request's 3.85 ms") {
		t.Fatalf("%+v", c)
	}
	if ev := strings.Join(c.Evidence, "|"); !strings.Contains(ev, "at most 385 requests/s over that network") {
		t.Errorf("evidence %q", ev)
	}
	if len(c.Suggestions) != 3 || !strings.Contains(c.Suggestions[0].Action, "8 threads (-c 8)") || *c.Suggestions[0].PredictedGain != 2 ||
		!strings.Contains(c.Suggestions[1].Action, "nearer the server") || *c.Suggestions[1].PredictedGain != 3.07 || c.Suggestions[2].PredictedGain != nil {
		t.Errorf("suggestions %+v", c.Suggestions)
	}
	if v := Diagnose(f); v.Bottleneck != Network {
		t.Errorf("verdict %q %v, want network", v.Bottleneck, v.Evidence)
	}
	// The same run on the server's own host: no round trip timed.
	local := f
	local.RoundTripMs = nil
	if c := NetworkRule(local); c.Matched || !strings.Contains(c.Why, "not applicable") {
		t.Errorf("no round trip: %+v", c.Rule)
	}
	if v := Diagnose(local); v.Bottleneck == Network {
		t.Errorf("no round trip: verdict %q", v.Bottleneck)
	}
	// Several round trips per request (TPC-C's client-side transactions):
	// 1 ms each, 11.5 per request of 16 ms: 72%, and one round trip per
	// request would leave 1 ms of the 11.5.
	multi := f
	multi.RoundTripMs, multi.RoundTripsPerReq, multi.MeanLatencyMs, multi.RequestsPerSec = p(1), p(11.5), p(16), p(250)
	c = NetworkRule(multi)
	if !c.Matched || !strings.Contains(c.Why, "(1 ms at rest, before the run) × 11.5 round trips per request is at least 72% of each request's 16 ms") ||
		!strings.Contains(strings.Join(c.Evidence, "|"), "at most 87.0 requests/s over that network") {
		t.Fatalf("several round trips: %+v", c)
	}
	if len(c.Suggestions) != 3 || !strings.Contains(c.Suggestions[2].Action, "each request in one round trip instead of 11.5") || *c.Suggestions[2].PredictedGain != 2.91 {
		t.Errorf("several round trips: suggestions %+v", c.Suggestions)
	}
	multi.RoundTripsPerReq = nil // not counted: one assumed, 6%
	if c := NetworkRule(multi); c.Matched {
		t.Errorf("round trips not counted: %+v", c.Rule)
	}
	// A round trip of 1 ms in 3.85 ms (26%): the server's time dominates.
	short := f
	short.RoundTripMs = p(1)
	if c := NetworkRule(short); c.Matched || c.near < 0.5 || !strings.Contains(c.Why, "is 26% of each request's 3.85 ms < 50%") {
		t.Errorf("short round trip: %+v (near %v)", c.Rule, c.near)
	}
}

// TestHeadOfLine: an open loop whose p99 is its requests' wait for a free
// worker behind a slow request says so and suggests more workers (figures
// of a real run: SQLite single inserts at 2500/s on one worker, whose
// checkpoints held it up to 10.1 ms; at 2 workers the p99 was 0.989 ms).
// Not when the database's own time makes the tail, when the workers were
// busy (a rate the client rule speaks of), or in a closed loop.
func TestHeadOfLine(t *testing.T) {
	base := func() Figures {
		return Figures{Scope: "run", Threads: 1, Requests: 15000, ElapsedS: 6, RequestsPerSec: p(2500), MeanLatencyMs: p(0.231), P99Ms: p(4.223),
			OpenLoop: true, LatePct: p(0), KeptUp: true, ServiceMs: p(0.032),
			Queue: &QueueFigures{P99: 4.223, StartLagP99: 3.85, ServiceP99: 0.081, ServiceMax: 10.1}}
	}
	v := Diagnose(base())
	ev := strings.Join(v.Evidence, "|")
	if !strings.Contains(ev, "the tail is a wait for ceiling's 1 worker: p99 4.22 ms from the scheduled start, up to 3.85 ms of it (start lag p99) before a worker was free, while the database served 99% of the requests within 0.081 ms; its slowest (10.1 ms) held a worker") {
		t.Fatalf("evidence %q", ev)
	}
	if !slices.ContainsFunc(v.Suggestions, func(s Suggestion) bool {
		return strings.HasPrefix(s.Action, "more workers (-c 2), so that a request need not wait behind a slow one")
	}) {
		t.Fatalf("suggestions %+v", v.Suggestions)
	}
	for name, change := range map[string]func(*Figures){
		"the database's own tail": func(f *Figures) { // PostgreSQL updates at 10/s, 8 workers
			f.Threads, f.Queue = 8, &QueueFigures{P99: 7.075, StartLagP99: 0.3, ServiceP99: 6.9, ServiceMax: 7.3}
		},
		"busy workers":  func(f *Figures) { f.ServiceMs = p(0.36) }, // 2500/s × 0.36 ms: 90% busy
		"a closed loop": func(f *Figures) { f.OpenLoop = false },
		"no tail to say": func(f *Figures) {
			f.Queue = &QueueFigures{P99: 0.3, StartLagP99: 0.25, ServiceP99: 0.08, ServiceMax: 0.4}
		}, // under 0.5 ms above
	} {
		f := base()
		change(&f)
		if ev := strings.Join(Diagnose(f).Evidence, "|"); strings.Contains(ev, "the tail is a wait") {
			t.Errorf("%s: %q", name, ev)
		}
	}
}

// TestHeadOfLineMany: with several workers the wait for a free one means
// all were busy at once, requests stalled together; where the sessions
// far outnumber the cores the advice is fewer workers (figures of a real
// run: PostgreSQL direct selects at 2,000/s, 32 workers on 2 cores, p99
// 63.3 ms, where 4 workers made 1.26 ms and 64 made 86.2 ms), else more,
// as many as ride out the slowest request.
func TestHeadOfLineMany(t *testing.T) {
	f := Figures{Scope: "run", Threads: 32, Requests: 16000, ElapsedS: 8, RequestsPerSec: p(2000), MeanLatencyMs: p(2.42), P99Ms: p(63.3),
		OpenLoop: true, LatePct: p(0), KeptUp: true, ServiceMs: p(0.843), Cores: p(2),
		Queue: &QueueFigures{P99: 63.3, StartLagP99: 51.9, ServiceP99: 9.5, ServiceMax: 104.8}}
	v := Diagnose(f)
	ev := strings.Join(v.Evidence, "|")
	if !strings.Contains(ev, "the tail is a wait before a worker took the request up: p99 63.3 ms from the scheduled start, up to 51.9 ms of it (start lag p99), while the database served 99% of the requests within 9.5 ms; with 32 workers one slow request holds none of the others up, so they were held up together (requests that stalled together, or workers not run while 32 sessions and their workers shared 2 cores; the slowest request took 105 ms)") {
		t.Fatalf("evidence %q", ev)
	}
	has := func(v *Verdict, prefix string) bool {
		return slices.ContainsFunc(v.Suggestions, func(s Suggestion) bool { return strings.HasPrefix(s.Action, prefix) })
	}
	if !has(v, "fewer workers (-c 4, twice the requests in flight on average and two per core): 32 sessions on 2 cores stall together") || has(v, "more workers") {
		t.Errorf("32 workers on 2 cores: suggestions %+v, want fewer, not more", v.Suggestions)
	}
	f.Threads = 8 // 4 a core: more, as many as ride out the slowest, up to 8 a core
	if v := Diagnose(f); !has(v, "more workers (-c 16, 8 a core: more sessions on 2 cores would stall together), to keep more free through a stall; riding out the slowest request (105 ms at 2,000/s) would take about 210 workers") || has(v, "fewer") {
		t.Errorf("8 workers on 2 cores: suggestions %+v, want more, up to 16", v.Suggestions)
	}
	f.Cores = p(64) // a big host: as many as ride out the slowest
	if v := Diagnose(f); !has(v, "more workers (-c 210), to keep one free through a stall as long as the slowest request (105 ms at 2,000/s: about 210 workers)") {
		t.Errorf("8 workers on 64 cores: suggestions %+v, want 210", v.Suggestions)
	}
	// MariaDB single inserts in a knee probe: 16 workers on 2 cores at
	// 11,498/s, about 11 requests in flight: fewer would not carry the
	// rate, more would stall longer, so neither (it had said -c 314).
	g := f
	g.Threads, g.Cores, g.RequestsPerSec, g.ServiceMs, g.ServerCPUCores, g.HostBusy, g.ClientCPUPct = 16, p(2), p(11498), p(0.956), p(1.1), p(0.82), p(21)
	g.Queue = &QueueFigures{P99: 20.4, StartLagP99: 19.0, ServiceP99: 2.88, ServiceMax: 27.2}
	if v := Diagnose(g); !has(v, "more cores for the server, or ceiling on another host (it used 21% of these cores): this rate keeps 11 requests in flight on average (11,498/s × 0.956 ms), which fewer than these 16 workers would leave too little room for") || has(v, "more workers") || has(v, "fewer workers") {
		t.Errorf("16 workers on 2 cores, 11 in flight: suggestions %+v", v.Suggestions)
	}
	f.Threads, f.Cores = 32, nil // cores not known: no fewer
	if v := Diagnose(f); !has(v, "more workers (-c 210)") {
		t.Errorf("cores unknown: suggestions %+v, want more", v.Suggestions)
	}
}

// TestFullPages: under a verdict on the log, PostgreSQL's full-page
// images are said with their share of the WAL and what makes fewer of
// them (figures of a real run: updates on 800,000 rows after a
// checkpoint, 8 threads: 0.592 images and 5,350 WAL bytes per request,
// log-rate). Not under another verdict, nor where they are a small part.
func TestFullPages(t *testing.T) {
	fp := &FullPageFigures{PerReq: 0.592, LogBytesPerReq: 5350, PageBytes: 8192, Settings: "max_wal_size 1GB, checkpoint_timeout 5min, wal_compression off"}
	v := &Verdict{Bottleneck: LogRate}
	addFullPages(v, Figures{FullPages: fp})
	if len(v.Evidence) != 1 || v.Evidence[0] != "0.592 full-page images per request (pg_stat_wal.wal_fpi), up to 4850 of its 5350 WAL bytes (91%): the first change of each page after a checkpoint logs the whole page" {
		t.Errorf("evidence %q", v.Evidence)
	}
	if len(v.Suggestions) != 1 || !strings.HasSuffix(v.Suggestions[0].Action, "(now max_wal_size 1GB, checkpoint_timeout 5min, wal_compression off); gain not predicted") || v.Suggestions[0].PredictedGain != nil {
		t.Errorf("suggestions %+v", v.Suggestions)
	}
	for name, c := range map[string]struct {
		bottleneck string
		perReq     float64
	}{"cpu verdict": {CPU, 0.592}, "few images": {LogRate, 0.1}, "none": {CommitFlush, 0}} {
		v := &Verdict{Bottleneck: c.bottleneck}
		f := *fp
		f.PerReq = c.perReq
		addFullPages(v, Figures{FullPages: &f})
		if len(v.Evidence)+len(v.Suggestions) != 0 {
			t.Errorf("%s: %q %+v", name, v.Evidence, v.Suggestions)
		}
	}
}

// TestCheckpoints: SQLite's WAL synced far more often than its threshold
// calls for is said (figures of a real run: single inserts at 2500/s, 2
// workers, NORMAL); at the threshold's rate (1 worker) it is not.
func TestCheckpoints(t *testing.T) {
	f := Figures{Threads: 2, Checkpoints: &CheckpointFigures{WALSyncsPerReq: 0.290, DonePerReq: 0.135, ExpectedPerReq: 0.000994, AutoPages: 1000, SyncShare: 0.18}}
	v := &Verdict{}
	addCheckpoints(v, f)
	if len(v.Evidence) != 1 || v.Evidence[0] != "SQLite synced its WAL 0.29 times per request and completed 0.135 checkpoints per request, where its threshold (wal_autocheckpoint 1000 pages) calls for about 0.00099: at synchronous=NORMAL the WAL is synced only to checkpoint it, and with 2 workers writing it stayed over the threshold (it starts over only when no other connection is reading it), so later commits checkpointed again; the syncs took 18% of the connections' time" {
		t.Errorf("evidence %q", v.Evidence)
	}
	f.Threads, f.Checkpoints = 1, &CheckpointFigures{WALSyncsPerReq: 0.00207, DonePerReq: 0.001, ExpectedPerReq: 0.000994, AutoPages: 1000, SyncShare: 0.02}
	v = &Verdict{}
	if addCheckpoints(v, f); len(v.Evidence) != 0 {
		t.Errorf("one worker: %q", v.Evidence)
	}
}

// A log held to an emulated write rate is named with its limit when the
// rate is within 10% of it (single inserts under azure-2014-s1); a rate
// far below the limit is not said to be held at it.
func TestLogRateEmulatedLimit(t *testing.T) {
	f := Figures{InProcess: true, Threads: 1, RequestsPerSec: p(92), LogMBPerSec: p(0.364), CommitsWait: yes,
		WaitMs: map[string]float64{WaitLog: 98, WaitCPU: 2}, LogMBLimit: p(0.3633), Profile: "azure-2014-s1"}
	c := LogRateRule(f)
	if !c.Matched || !strings.Contains(strings.Join(c.Evidence, "|"), "log at 0.364 MiB/s: the 0.3633 MiB/s limit of azure-2014-s1, held by --emulate") {
		t.Fatalf("%+v", c)
	}
	f.LogMBPerSec = p(0.2)
	if c := LogRateRule(f); strings.Contains(strings.Join(c.Evidence, "|"), "held by --emulate") {
		t.Fatalf("0.2 of 0.36 MiB/s: %q", c.Evidence)
	}
}

// Batching is predicted per row: rows/s, not requests/s; requests that
// already write several rows are told ten times as many; SQLite's commit
// does more than sync, so its batching gain is a lower bound.
func TestBatchSuggestion(t *testing.T) {
	f := Figures{InProcess: true, Threads: 1, RequestsPerSec: p(2744), MeanLatencyMs: p(0.363), SyncsPerReq: p(1), SyncMs: p(0.309)}
	c := CommitFlushRule(f)
	var b *Suggestion
	for i := range c.Suggestions {
		if strings.HasPrefix(c.Suggestions[i].Action, "batch") {
			b = &c.Suggestions[i]
		}
	}
	if !c.Matched || b == nil || b.Action != "batch 10 rows per commit (at least)" || b.PredictedRequestsPerSec != nil ||
		b.PredictedRowsPerSec == nil || math.Abs(*b.PredictedRowsPerSec/(2744**b.PredictedGain)-1) > 0.01 {
		t.Fatalf("SQLite, one row a commit: %+v", c.Suggestions)
	}
	f.RowsPerTx = p(10)
	s := batchSuggest("", 3, f)
	if s.Action != "batch 100 rows per commit, 10× these 10" || s.PredictedRowsPerSec == nil || *s.PredictedRowsPerSec != 2744*10*3 {
		t.Fatalf("ten rows a commit: %+v", s)
	}
}

// TestThinSample: a verdict on fewer than MinSampleRequests requests says
// so (TPC-C with keying and thinking times: 18 transactions in 20 s),
// whatever it names; not on enough requests, nor on few requests that
// each scan or load many rows.
func TestThinSample(t *testing.T) {
	thin := "a thin sample: 18 requests in 20 s (fewer than 200)"
	f := commitBound
	f.Requests, f.ElapsedS = 18, 20
	v := Diagnose(f)
	if ev := strings.Join(v.Evidence, "\n"); v.Bottleneck != CommitFlush || !strings.Contains(ev, thin) {
		t.Errorf("18 requests: %s, evidence\n%s\nwant commit-flush and %q", v.Bottleneck, ev, thin)
	}
	f.ElapsedS = 1230 // whole seconds, not 1.23e+03
	if ev := strings.Join(Diagnose(f).Evidence, "\n"); !strings.Contains(ev, "a thin sample: 18 requests in 1230 s") {
		t.Errorf("18 requests in 1230 s: evidence\n%s", ev)
	}
	f.Requests = MinSampleRequests
	if ev := strings.Join(Diagnose(f).Evidence, "\n"); strings.Contains(ev, "thin sample") {
		t.Errorf("%d requests: evidence\n%s", f.Requests, ev)
	}
	f.Requests = 18
	for _, g := range []Figures{{RowsPerReq: p(10000)}, {RowsPerTx: p(100)}} { // 18 scans, 1,800 rows loaded
		g.Requests, g.ElapsedS, g.Threads = f.Requests, f.ElapsedS, 1
		if ev := strings.Join(Diagnose(g).Evidence, "\n"); strings.Contains(ev, "thin sample") {
			t.Errorf("rows per request %v, per transaction %v: evidence\n%s", g.RowsPerReq, g.RowsPerTx, ev)
		}
	}
	f.RowsPerReq = p(25) // TPC-C: 450 rows in all
	if ev := strings.Join(Diagnose(f).Evidence, "\n"); !strings.Contains(ev, "thin sample") {
		t.Errorf("18 requests of 25 rows: evidence\n%s", ev)
	}
	empty := Figures{Threads: 1}
	if ev := strings.Join(Diagnose(empty).Evidence, "\n"); strings.Contains(ev, "thin sample") {
		t.Errorf("no requests: evidence\n%s", ev)
	}
}

func pi(v int64) *int64 { return &v }

func TestFewSlowStarts(t *testing.T) {
	c := ClientRule(Figures{OpenLoop: true, Requests: 50, SchedLagP99Ms: p(31.3), SchedLagSlow: pi(1), ClientCPUPct: p(3)})
	if c.Matched || !strings.Contains(c.Why, "rests on 1 request of 50 that started more than 10 ms late") {
		t.Errorf("matched %v, why %q", c.Matched, c.Why)
	}
	if LagSuspect(31.3, pi(MinSlowStarts-1)) || !LagSuspect(31.3, pi(MinSlowStarts)) || !LagSuspect(31.3, nil) || LagSuspect(9, pi(500)) {
		t.Error("LagSuspect: wrong threshold")
	}
}

// TestPctBelow: a figure under its threshold never prints as the
// threshold ("CPU 85% of the server host's cores < 85%", from 84.6%).
func TestPctBelow(t *testing.T) {
	for _, tc := range []struct {
		v, thr float64
		want   string
	}{{84.6, 85, "84.6%"}, {84.4, 85, "84%"}, {84.96, 85, "84.96%"}, {29.96, 30, "29.96%"}, {12, 30, "12%"}} {
		if got := pctBelow(tc.v, tc.thr); got != tc.want {
			t.Errorf("pctBelow(%g, %g) = %q, want %q", tc.v, tc.thr, got, tc.want)
		}
	}
	c := CPURule(Figures{Cores: p(2), HostBusy: p(0.846)})
	if c.Matched || !strings.Contains(c.Why, "CPU 84.6% of the") {
		t.Errorf("matched %v: %s", c.Matched, c.Why)
	}
}

// TestCPUPressure: the host's CPU pressure (PSI) is evidence under a cpu
// verdict and part of the rule's line below its threshold (MariaDB single
// inserts, 16 workers: 84.9% busy, tasks waited for a core 73% of the
// time); it changes no verdict.
func TestCPUPressure(t *testing.T) {
	f := Figures{Cores: p(2), HostBusy: p(0.849), CPUPressure: p(0.73)}
	c := CPURule(f)
	if c.Matched || c.Why != "CPU 84.9% of the server host's cores < 85%; runnable tasks waited for a core 73% of the time (the host's CPU pressure)" {
		t.Errorf("below: matched %v, why %q", c.Matched, c.Why)
	}
	f.HostBusy = p(0.95)
	c = CPURule(f)
	if !c.Matched || !slices.Contains(c.Evidence, "runnable tasks waited for a core 73% of the time (the host's CPU pressure)") {
		t.Errorf("above: matched %v, evidence %q", c.Matched, c.Evidence)
	}
	f.CPUPressure = nil
	if c := CPURule(f); strings.Contains(strings.Join(c.Evidence, "|"), "pressure") {
		t.Errorf("not measured, yet: %q", c.Evidence)
	}
	// The server's threads' own waits for a core, per request, with a
	// request's time where known (MariaDB, 16 workers, as measured).
	f.HostBusy, f.CPUPressure, f.ServerRunQueueMsPerReq, f.MeanLatencyMs = p(0.84), p(0.72), p(0.182), p(0.585)
	want := "CPU 84% of the server host's cores < 85%; runnable tasks waited for a core 72% of the time (the host's CPU pressure); the server's threads waited for a core 0.182 ms per request (runnable, not running; a request takes 0.585 ms)"
	if c := CPURule(f); c.Matched || c.Why != want {
		t.Errorf("run queue: matched %v, why %q, want %q", c.Matched, c.Why, want)
	}
	f.CPUPressure, f.HostBusy = nil, p(0.9)
	if c := CPURule(f); !c.Matched || !slices.Contains(c.Evidence, "the server's threads waited for a core 0.182 ms per request (runnable, not running; a request takes 0.585 ms)") {
		t.Errorf("run queue above: %q", c.Evidence)
	}
}

// TestCPUFlushWaits: a cpu verdict whose sessions also spent most of their
// time waiting for log flushes at commit suggests relaxed durability, with
// no gain predicted. Figures as measured: PostgreSQL inserts/deletes, 16
// connections, full durability (relaxed then ran ×2.15).
func TestCPUFlushWaits(t *testing.T) {
	f := Figures{Scope: "run", Threads: 16, RequestsPerSec: p(27620), ServerCPUCores: p(1.3), Cores: p(2), HostBusy: p(0.89), ClientCPUPct: p(17),
		SyncsPerReq: p(0.2), CommitsPerReq: p(1), CommitsWait: yes, LogMBPerSec: p(9.75),
		WaitMs: map[string]float64{WaitLog: 590, WaitClient: 360, WaitCPU: 50}}
	relaxed := func(c Candidate) *Suggestion {
		for i, s := range c.Suggestions {
			if strings.HasPrefix(s.Action, "--durability relaxed") {
				return &c.Suggestions[i]
			}
		}
		return nil
	}
	c := CPURule(f)
	s := relaxed(c)
	if !c.Matched || s == nil || s.PredictedGain != nil || !strings.Contains(s.Action, "waited for log flushes 59% of their time") {
		t.Fatalf("matched %v, suggestions %+v", c.Matched, c.Suggestions)
	}
	if last := c.Suggestions[len(c.Suggestions)-1]; !strings.HasPrefix(last.Action, "twice the cores") {
		t.Errorf("twice the cores should stay last: %+v", c.Suggestions)
	}
	// The same run relaxed (commits do not wait), with few log waits, or
	// with no syncs: no such suggestion.
	for name, g := range map[string]Figures{
		"relaxed":      func() Figures { g := f; g.CommitsWait = no; return g }(),
		"few waits":    func() Figures { g := f; g.WaitMs = map[string]float64{WaitLog: 300, WaitClient: 700}; return g }(),
		"no syncs":     func() Figures { g := f; g.SyncsPerReq = p(0.0001); return g }(),
		"waits unseen": func() Figures { g := f; g.WaitMs = nil; return g }(),
	} {
		if c := CPURule(g); !c.Matched || relaxed(c) != nil {
			t.Errorf("%s: matched %v, suggestions %+v", name, c.Matched, c.Suggestions)
		}
	}
}

// TestClientQueueText: ceiling's own threads' waits for a core, per
// request, follow the load generator's CPU in the client rule's line,
// matched or not; not measured, nothing is said.
func TestClientQueueText(t *testing.T) {
	f := Figures{ClientCPUPct: p(17), ClientRunQueueMsPerReq: p(0.0405)}
	if c := ClientRule(f); c.Matched || c.Why != "load generator CPU 17% of its cores < 85%; its threads waited for a core 0.0405 ms per request" {
		t.Errorf("below: matched %v, %q", c.Matched, c.Why)
	}
	f.ClientCPUPct = p(92)
	if c := ClientRule(f); !c.Matched || c.Evidence[0] != "load generator CPU 92% of its cores ≥ 85%; its threads waited for a core 0.0405 ms per request" {
		t.Errorf("above: matched %v, %q", c.Matched, c.Evidence)
	}
	f.ClientCPUPct, f.InProcess = p(40), true
	if c := ClientRule(f); !strings.Contains(c.Why, "its threads (the engine's with them) waited for a core") {
		t.Errorf("embedded: %q", c.Why)
	}
	f.ClientRunQueueMsPerReq = nil
	if c := ClientRule(f); strings.Contains(c.Why, "waited") {
		t.Errorf("not measured: %q", c.Why)
	}
}

// TestReplicationRule: commits waiting for a synchronous standby most of
// the sessions' time; figures as measured on a PostgreSQL primary with
// its standby on the same host, single inserts, 6 s.
func TestReplicationRule(t *testing.T) {
	// 1 connection at remote_write: 2,839 req/s, mean 0.351 ms.
	f := Figures{Scope: "run", Threads: 1, Requests: 17038, ElapsedS: 6, RequestsPerSec: p(2839.5), MeanLatencyMs: p(0.351),
		CommitsPerReq: p(1.003), SyncsPerReq: p(1.0015), LogMBPerSec: p(0.3), Replication: &ReplFigures{Who: "the synchronous standbys (synchronous_standby_names = '*')", Level: "remote_write"},
		WaitMs: map[string]float64{WaitClient: 1318, WaitCPU: 51, WaitLog: 1062, WaitRepl: 3596}}
	tot := 1318.0 + 51 + 1062 + 3596
	c := ReplicationRule(f)
	if !c.Matched || math.Abs(c.Score-round(3596/tot, 3)) > 0.001 {
		t.Fatalf("%+v", c)
	}
	ev := strings.Join(c.Evidence, "|")
	for _, want := range []string{"synchronous_standby_names = '*'", "60% of the sessions' time", "its write of the WAL (synchronous_commit = remote_write)", "the flushes of the log on this server are 18%"} {
		if !strings.Contains(ev, want) {
			t.Errorf("evidence lacks %q: %s", want, ev)
		}
	}
	if len(c.Suggestions) != 5 || !strings.Contains(c.Suggestions[0].Action, "--durability relaxed") ||
		math.Abs(*c.Suggestions[0].PredictedGain-round(tot/1369, 2)) > 0.01 {
		t.Fatalf("suggestions %+v", c.Suggestions)
	}
	if a := c.Suggestions[1].Action; !strings.Contains(a, "synchronous_commit = local") || strings.Contains(a, "remote_write") || c.Suggestions[1].PredictedGain != nil {
		t.Errorf("at remote_write the lower level to try is local: %+v", c.Suggestions[1])
	}
	if !strings.Contains(c.Suggestions[2].Action, "more threads (-c 2)") {
		t.Errorf("suggestion %+v", c.Suggestions[2])
	}
	if v := Diagnose(f); v.Bottleneck != Replication {
		t.Errorf("verdict %q %v, want replication", v.Bottleneck, v.Evidence)
	}

	// 4 connections at on: the standby's flush; remote_write is the
	// level to try.
	f4 := f
	f4.Threads, f4.Requests, f4.RequestsPerSec, f4.MeanLatencyMs = 4, 31587, p(5263.3), p(0.759)
	f4.Replication = &ReplFigures{Who: "the synchronous standbys (synchronous_standby_names = '*')", Level: "on"}
	f4.WaitMs = map[string]float64{WaitClient: 6868, WaitCPU: 307, WaitLog: 4701, WaitRepl: 12108}
	c = ReplicationRule(f4)
	if ev := strings.Join(c.Evidence, "|"); !c.Matched || !strings.Contains(ev, "its flush of the WAL") || !strings.Contains(c.Suggestions[1].Action, "remote_write") {
		t.Errorf("at on: %+v", c)
	}

	// MariaDB without performance_schema, semi-synchronous replica 1 ms
	// away each way: the server's count of its commits' waits (2,605 ms
	// of 3 s, one worker) is the share; relaxed durability is no remedy.
	my := Figures{Scope: "run", Threads: 1, Requests: 1077, ElapsedS: 3, RequestsPerSec: p(359), MeanLatencyMs: p(2.784),
		ReplWaitShare: p(2605.0 / 3000), Replication: &ReplFigures{Who: "a semi-synchronous replica (rpl_semi_sync_master_enabled, wait point AFTER_COMMIT)", SemiSync: true}}
	c = ReplicationRule(my)
	if ev := strings.Join(c.Evidence, "|"); !c.Matched || !strings.Contains(ev, "87% of the workers' time (the server's count of its commits' waits)") ||
		!strings.Contains(ev, "its receipt of the binary log's events") {
		t.Errorf("semi-sync: %+v", c)
	}
	if a := c.Suggestions[0]; !strings.Contains(a.Action, "asynchronous replication") || !strings.Contains(a.Action, "not this wait") ||
		a.PredictedGain == nil || math.Abs(*a.PredictedGain-round(1/(1-2605.0/3000), 2)) > 0.01 {
		t.Errorf("semi-sync suggestion %+v", a)
	}
	for _, s := range c.Suggestions {
		if strings.Contains(s.Action, "synchronous_commit") {
			t.Errorf("PostgreSQL's setting suggested for MariaDB: %s", s.Action)
		}
	}
	if v := Diagnose(my); v.Bottleneck != Replication {
		t.Errorf("semi-sync verdict %q", v.Bottleneck)
	}
	low26 := my
	low26.ReplWaitShare = p(0.26)
	if v := Diagnose(low26); v.Bottleneck == Replication || !strings.Contains(strings.Join(v.Evidence, "|"), "semi-synchronous replica's acknowledgement 26%") {
		t.Errorf("26%%: verdict %q %q", v.Bottleneck, v.Evidence)
	}

	// Below the threshold: a near miss; none at all: not applicable.
	low := f
	low.WaitMs = map[string]float64{WaitClient: 3000, WaitCPU: 1000, WaitLog: 3000, WaitRepl: 1000}
	if c := ReplicationRule(low); c.Matched || c.near == 0 || !strings.Contains(c.Why, "12% of the sessions' time < 40%") {
		t.Errorf("below the threshold: %+v (near %v)", c.Rule, c.near)
	}
	none := f
	none.WaitMs = map[string]float64{WaitClient: 3000, WaitLog: 3000}
	if c := ReplicationRule(none); c.Matched || !strings.Contains(c.Why, "not applicable") {
		t.Errorf("no replication waits: %+v", c.Rule)
	}
}
