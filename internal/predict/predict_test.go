package predict

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ceiling-db/ceiling/internal/diagnose"
	"github.com/ceiling-db/ceiling/internal/report"
	"github.com/ceiling-db/ceiling/internal/target"
)

func p64(v float64) *float64 { return &v }

func load(t *testing.T, name string) *report.Result {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var r report.Result
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return &r
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestShippedProfiles(t *testing.T) {
	ps, err := Shipped()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"azure-2014-basic", "azure-2014-s1", "azure-2014-p1", "azure-2014-web-business",
		"azure-sql-gp-2", "azure-sql-gp-4", "azure-sql-gp-8", "azure-sql-gp-16",
		"azure-sql-bc-2", "azure-sql-bc-4", "azure-sql-bc-8", "azure-sql-bc-16",
		"azure-mi-gp-file-128g", "azure-mi-gp-file-512g", "azure-mi-gp-file-1t", "azure-mi-gp-file-2t"}
	byName := map[string]Profile{}
	for _, p := range ps {
		if err := p.Validate(); err != nil {
			t.Errorf("%s: %v", p.Name, err)
		}
		if p.Source == "" || p.SourceDate == "" || p.Limits.count() == 0 {
			t.Errorf("%s: source %q date %q limits %d", p.Name, p.Source, p.SourceDate, p.Limits.count())
		}
		byName[p.Name] = p
	}
	for _, n := range want {
		if _, ok := byName[n]; !ok {
			t.Errorf("profile %s not shipped", n)
		}
	}
	// Spot-check figures against the sources.
	checks := []struct {
		name string
		got  *float64
		want float64
	}{
		{"basic log", byName["azure-2014-basic"].Limits.LogMBPerSec, 0.1617},       // 9.7 MB/min
		{"web log", byName["azure-2014-web-business"].Limits.LogMBPerSec, 1.9},     // 114 MB/min
		{"gp-16 log (capped)", byName["azure-sql-gp-16"].Limits.LogMBPerSec, 50},   // 4.5×16 > 50
		{"gp-4 log", byName["azure-sql-gp-4"].Limits.LogMBPerSec, 18},              // 4.5×4
		{"bc-16 log (capped)", byName["azure-sql-bc-16"].Limits.LogMBPerSec, 96},   // 12×16 > 96
		{"mi 128g iops", byName["azure-mi-gp-file-128g"].Limits.DataIOPS, 500},     //
		{"mi 512g MB/s", byName["azure-mi-gp-file-512g"].Limits.DataMBPerSec, 150}, //
		{"mi 2t iops", byName["azure-mi-gp-file-2t"].Limits.DataIOPS, 7500},        //
	}
	for _, c := range checks {
		if c.got == nil || !near(*c.got, c.want) {
			t.Errorf("%s = %v, want %g", c.name, c.got, c.want)
		}
	}
	if byName["azure-sql-gp-4"].Limits.DataIOPS != nil {
		t.Error("vCore IOPS should not be modelled")
	}
}

func TestPredict(t *testing.T) {
	r := load(t, "result.json")
	r.Target.Durability = target.DurabilityInfo{Setting: "synchronous_commit", During: "on"} // commits wait
	// Fixture costs: log 4096 B/req, 1 flush/req, 0.5+1.5 data IOs/req,
	// 2097152/1000 data bytes/req, 0.5 s CPU / 1000 req = 0.0005 s/req.
	cases := []struct {
		name     string
		limits   Limits
		want     float64
		binding  string
		headroom map[string]float64
		notMod   []string
	}{
		{"all five", Limits{LogMBPerSec: p64(4), LogSyncsPerSec: p64(2000), DataIOPS: p64(1000), DataMBPerSec: p64(10), Cores: p64(2)},
			500, DataIOPS, // 1000 IOPS ÷ 2 IOs
			map[string]float64{LogMB: 1024.0 / 500, LogSyncs: 4, DataMB: 10, CPU: 8}, []string{Latency}},
		{"log only", Limits{LogMBPerSec: p64(4)}, 1024, LogMB, map[string]float64{},
			[]string{LogSyncs, DataIOPS, DataMB, CPU, Latency}},
		{"log vs flushes", Limits{LogMBPerSec: p64(1), LogSyncsPerSec: p64(2000)}, 256, LogMB,
			map[string]float64{LogSyncs: 2000.0 / 256}, []string{DataIOPS, DataMB, CPU, Latency}},
		{"cores bind", Limits{Cores: p64(0.1), DataIOPS: p64(1000)}, 200, CPU,
			map[string]float64{DataIOPS: 2.5}, []string{LogMB, LogSyncs, DataMB, Latency}},
		// 1 flush × 2 ms + 0.5 reads × 4 ms = 4 ms per request, one
		// connection: 250/s, below the log's 1024.
		{"latency binds", Limits{LogMBPerSec: p64(4), LogLatencyMs: p64(2), DataLatencyMs: p64(4)}, 250, Latency,
			map[string]float64{LogMB: 1024.0 / 250}, []string{LogSyncs, DataIOPS, DataMB, CPU}},
		{"log latency only", Limits{LogLatencyMs: p64(0.5)}, 2000, Latency, map[string]float64{},
			[]string{LogMB, LogSyncs, DataIOPS, DataMB, CPU}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pr := Predict(r, Profile{Name: "t", Limits: tc.limits})
			if pr.RequestsPerSec == nil || !near(*pr.RequestsPerSec, tc.want) {
				t.Fatalf("ceiling = %v, want %g", pr.RequestsPerSec, tc.want)
			}
			if pr.Binding != tc.binding {
				t.Errorf("binding = %s, want %s", pr.Binding, tc.binding)
			}
			if pr.MeasuredRequestsPerSec != 500 {
				t.Errorf("measured = %g", pr.MeasuredRequestsPerSec)
			}
			nm := map[string]bool{}
			for _, l := range pr.Limits {
				if l.NotModelled != "" {
					nm[l.Resource] = true
				}
				if l.Resource == tc.binding {
					if !l.Binding || l.Headroom == nil || !near(*l.Headroom, 1) {
						t.Errorf("binding limit %+v", l)
					}
					continue
				}
				if want, ok := tc.headroom[l.Resource]; ok {
					if l.Headroom == nil || !near(*l.Headroom, want) {
						t.Errorf("%s headroom = %v, want %g", l.Resource, l.Headroom, want)
					}
				} else if l.Headroom != nil {
					t.Errorf("%s headroom = %g, want none", l.Resource, *l.Headroom)
				}
			}
			for _, n := range tc.notMod {
				if !nm[n] {
					t.Errorf("%s should be not modelled", n)
				}
			}
			if len(nm) != len(tc.notMod) {
				t.Errorf("not modelled %v, want %v", nm, tc.notMod)
			}
			if !strings.Contains(strings.Join(pr.Caveats, "\n"), "concurrency") {
				t.Errorf("commit-flush run without concurrency caveat: %v", pr.Caveats)
			}
		})
	}
}

// TestUnlimited: a resource the workload would use materially at the
// predicted rate, for which the profile gives no limit, makes the
// prediction an upper bound; a trace of one (a read-only run's occasional
// log flush) does not. Costs of a real run: PostgreSQL indirect-selects,
// 8.4 log bytes, 9.6e-5 log flushes and 690 µs of CPU per request.
// TestLightCPUCaveat: a CPU-bound prediction from a run that kept the
// server's cores under 10% busy says its cost per request was measured at
// a light load, naming think times when the workers paused; not from a
// loaded run, nor when another resource binds.
func TestLightCPUCaveat(t *testing.T) {
	r := load(t, "result.json") // 0.5 s of server CPU for 1000 requests
	r.Evidence.Counters[target.CtrHostCores] = 2
	r.Evidence.Seconds = 10 // 0.5 s ÷ 10 s ÷ 2 cores = 2.5%
	cores := Profile{Name: "t", Limits: Limits{Cores: p64(0.1)}}
	has := func(pr Prediction, want string) bool {
		return strings.Contains(strings.Join(pr.Caveats, "\n"), want)
	}
	if pr := Predict(r, cores); pr.Binding != CPU || !has(pr, "the server's CPU was 2.5% of its host's cores (a run at a light load)") {
		t.Errorf("light run: binding %s, caveats %q", pr.Binding, pr.Caveats)
	}
	share := 0.99
	r.Client.ThinkShare = &share
	if pr := Predict(r, cores); !has(pr, "(its workers spent 99% of their time in think times)") {
		t.Errorf("think times: caveats %q", pr.Caveats)
	}
	if pr := Predict(r, Profile{Name: "t", Limits: Limits{Cores: p64(2), DataIOPS: p64(1000)}}); pr.Binding == CPU || has(pr, "the server's CPU was") {
		t.Errorf("IOPS binding: binding %s, caveats %q", pr.Binding, pr.Caveats)
	}
	r.Evidence.Seconds = 1 // 25% of the cores
	if pr := Predict(r, cores); has(pr, "the server's CPU was") {
		t.Errorf("loaded run: caveats %q", pr.Caveats)
	}
}

func TestUnlimited(t *testing.T) {
	r := &report.Result{Summary: report.Summary{Requests: 20000, RequestsPerSec: 1389}, Target: target.Info{Engine: "postgres"},
		Costs: report.Costs{LogBytesPerOp: p64(8.439), LogSyncsPerOp: p64(9.594e-5), DataReadsPerOp: p64(0), DataWritesPerOp: p64(0), CPUusPerOp: p64(690.3)}}
	logOnly := Profile{Name: "log-only", Limits: Limits{LogMBPerSec: p64(0.1617)}}
	pr := Predict(r, logOnly)
	if pr.RequestsPerSec == nil || pr.Binding != LogMB {
		t.Fatalf("prediction %v bound by %q, want log-mb", pr.RequestsPerSec, pr.Binding)
	}
	// At ~20,000 req/s the CPU would be ~14 cores; the log flushes 1.9/s.
	if un := Unlimited(pr); len(un) != 1 || un[0] != CPU {
		t.Errorf("unlimited %v, want [cpu]", un)
	}
	if !strings.Contains(strings.Join(pr.Caveats, "|"), UpperBoundCaveat) {
		t.Errorf("caveats %q lack the upper bound", pr.Caveats)
	}
	if strings.Contains(strings.Join(pr.Caveats, "|"), "failed") {
		t.Errorf("caveats %q speak of failures the run did not have", pr.Caveats)
	}
	// A run whose verdict is errors: its costs are said to be unreliable.
	failed := *r
	stalled := failed
	stalled.Verdict = &diagnose.Verdict{Bottleneck: diagnose.Stall}
	if pr := Predict(&stalled, logOnly); !strings.Contains(strings.Join(pr.Caveats, "|"), "the run stalled (verdict stall)") {
		t.Errorf("stall caveats %q", pr.Caveats)
	}
	failed.Verdict = &diagnose.Verdict{Bottleneck: diagnose.Errors}
	if pr := Predict(&failed, logOnly); !strings.Contains(strings.Join(pr.Caveats, "|"), "too many of the run's requests failed (verdict errors)") {
		t.Errorf("errors verdict: caveats %q", pr.Caveats)
	}
	// A log-rate verdict with commits waiting for flushes: a profile
	// without log latency says it leaves their time out; one with it, or
	// a relaxed run, does not.
	logBound := *r
	logBound.Verdict = &diagnose.Verdict{Bottleneck: diagnose.LogRate}
	logBound.Target.Durability = target.DurabilityInfo{Setting: "synchronous_commit", During: "on"}
	const flushCaveat = "the run was log-bound (verdict log-rate) with its commits waiting for log flushes"
	if pr := Predict(&logBound, logOnly); !strings.Contains(strings.Join(pr.Caveats, "|"), flushCaveat) {
		t.Errorf("log-rate verdict, no log latency: caveats %q", pr.Caveats)
	}
	withLat := Profile{Name: "with-latency", Limits: Limits{LogMBPerSec: p64(0.1617), LogLatencyMs: p64(2)}}
	if pr := Predict(&logBound, withLat); strings.Contains(strings.Join(pr.Caveats, "|"), flushCaveat) {
		t.Errorf("log-rate verdict, log latency given: caveats %q", pr.Caveats)
	}
	logBound.Target.Durability.During = "off"
	if pr := Predict(&logBound, logOnly); strings.Contains(strings.Join(pr.Caveats, "|"), flushCaveat) {
		t.Errorf("log-rate verdict, relaxed: caveats %q", pr.Caveats)
	}
	// A server on another host: the prediction's rate over the measured
	// round trip needs that many requests in flight (Little's law).
	if strings.Contains(strings.Join(pr.Caveats, "|"), "round trip") {
		t.Errorf("local server: caveats %q speak of a round trip", pr.Caveats)
	}
	remote := *r
	remote.Network = &report.Network{RoundTripMs: report.HostLatency{P50: 2.6}, N: 200}
	if pr := Predict(&remote, logOnly); !strings.Contains(strings.Join(pr.Caveats, "|"),
		"the server was on another host, 2.6 ms away (round trip, p50): 20,092 req/s over that round trip needs at least 53 requests in flight at once") {
		t.Errorf("remote server: caveats %q", pr.Caveats)
	}
	// With cores in the profile, CPU binds and nothing material is left out.
	withCPU := Profile{Name: "with-cpu", Limits: Limits{LogMBPerSec: p64(0.1617), Cores: p64(2)}}
	pr = Predict(r, withCPU)
	if pr.Binding != CPU || len(Unlimited(pr)) != 0 || strings.Contains(strings.Join(pr.Caveats, "|"), UpperBoundCaveat) {
		t.Errorf("with cores: bound by %q, unlimited %v, caveats %q", pr.Binding, Unlimited(pr), pr.Caveats)
	}
}

func TestPredictMissingCosts(t *testing.T) {
	r := load(t, "no-costs.json")
	// No log bytes, no CPU, no data IOs: not modelled; the MariaDB-style
	// flush cost (data_syncs_per_op 0.5, no log_syncs_per_op) is used.
	pr := Predict(r, Profile{Name: "t", Limits: Limits{LogMBPerSec: p64(10), DataIOPS: p64(500), Cores: p64(4)}})
	if pr.RequestsPerSec != nil || pr.Binding != "" {
		t.Fatalf("ceiling %v %q, want none", pr.RequestsPerSec, pr.Binding)
	}
	for _, l := range pr.Limits {
		if l.NotModelled == "" {
			t.Errorf("%s modelled: %+v", l.Resource, l)
		}
	}
	pr = Predict(r, Profile{Name: "t", Limits: Limits{LogSyncsPerSec: p64(100), LogMBPerSec: p64(10)}})
	if pr.RequestsPerSec == nil || !near(*pr.RequestsPerSec, 200) || pr.Binding != LogSyncs {
		t.Fatalf("ceiling %v %q, want 200 log-syncs", pr.RequestsPerSec, pr.Binding)
	}
	if pr.Limits[1].Note == "" {
		t.Error("data_syncs_per_op used as the flush cost without saying so")
	}
	if strings.Contains(strings.Join(pr.Caveats, "\n"), "concurrency") {
		t.Error("concurrency caveat on a cpu-bound run")
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	host := filepath.Join(dir, "this-host.json")
	os.WriteFile(host, []byte(`{"name":"this-host","measured_at":"2026-01-02T03:04:05Z","source":"ceiling profile-host","dir":"/tmp",
"fsync_ms":{"p50":0.2,"p99":1,"mean":0.3},"fsyncs_per_sec":4000,"seq_write_mb_per_sec":800.5,"cores":8}`), 0o644)
	p, err := Load(host)
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "this-host" || p.SourceDate != "2026-01-02" || *p.Limits.LogSyncsPerSec != 4000 ||
		*p.Limits.LogMBPerSec != 800.5 || *p.Limits.DataMBPerSec != 800.5 || *p.Limits.Cores != 8 || p.Limits.DataIOPS != nil {
		t.Errorf("host profile %+v", p)
	}
	if p.Warning != "" {
		t.Errorf("host profile on a disk warns: %q", p.Warning)
	}
	shm := filepath.Join(dir, "shm-host.json")
	os.WriteFile(shm, []byte(`{"name":"this-host","measured_at":"2026-01-02T03:04:05Z","source":"ceiling profile-host","dir":"/dev/shm","fsyncs_per_sec":1200000,"seq_write_mb_per_sec":3000,"cores":2,"in_memory":"tmpfs"}`), 0o644)
	if p, err = Load(shm); err != nil || !strings.Contains(p.Warning, "tmpfs (memory)") {
		t.Fatalf("host profile on tmpfs: warning %q, err %v", p.Warning, err)
	}
	pr := Predict(&report.Result{Summary: report.Summary{RequestsPerSec: 1000}}, p)
	if !strings.Contains(strings.Join(pr.Caveats, "\n"), "profile this-host was measured on a tmpfs (memory)") {
		t.Errorf("prediction with a tmpfs profile: caveats %q", pr.Caveats)
	}
	y := filepath.Join(dir, "disk.yaml")
	os.WriteFile(y, []byte("name: disk\nsource: me\nsource_date: '2026'\nlimits:\n  data_iops: 3000\n"), 0o644)
	if p, err = Load(y); err != nil || *p.Limits.DataIOPS != 3000 {
		t.Errorf("yaml profile %+v %v", p, err)
	}
	if p, err = Load("azure-sql-bc-4"); err != nil || *p.Limits.LogMBPerSec != 48 {
		t.Errorf("shipped %+v %v", p, err)
	}
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("name: x\nsource: s\nsource_date: d\nlimits: {log_mb_per_sec: -1}\n"), 0o644)
	for _, a := range []string{"no-such-profile", bad, filepath.Join(dir, "missing.yaml")} {
		if _, err := Load(a); err == nil {
			t.Errorf("Load(%s): no error", a)
		}
	}
}

// TestLatencyThreads: the latency bound is per connection, and the log
// device's flushes come one after another: four threads that each wait
// 4 ms per request complete 1000 requests a second when group commit
// shares a flush among four commits, but 500 when every request flushes
// (2 ms each, in turn); relaxed durability takes the flush off the path;
// SQLite syncs each commit in turn whatever its threads.
func TestLatencyThreads(t *testing.T) {
	r := load(t, "result.json")
	r.Load.Threads = 4
	r.Target.Durability = target.DurabilityInfo{Setting: "synchronous_commit", During: "on"}
	prof := Profile{Name: "t", Limits: Limits{LogLatencyMs: p64(2), DataLatencyMs: p64(4)}}
	check := func(name string, want float64, note string) {
		t.Helper()
		pr := Predict(r, prof)
		l := pr.Limits[len(pr.Limits)-1]
		if pr.RequestsPerSec == nil || !near(*pr.RequestsPerSec, want) || pr.Binding != Latency || l.Resource != Latency || !strings.Contains(l.Note, note) {
			t.Fatalf("%s: ceiling %v (%s), %+v; want %g bound by latency, note %q", name, pr.RequestsPerSec, pr.Binding, l, want, note)
		}
	}
	r.Costs.LogSyncsPerOp = p64(0.25)
	check("group commit", 1000, "4 threads, each waiting 4 ms")
	r.Costs.LogSyncsPerOp = p64(1)
	check("a flush per request", 500, "the log flushes one after another: 2 ms each × 1 flushes per request")
	r.Target.Durability.During = "off" // relaxed: only the reads wait
	r.Costs.LogSyncsPerOp = p64(0.01)
	check("relaxed", 2000, "4 threads, each waiting 2 ms")
	r.Target.Engine, r.Target.Durability = "sqlite", target.DurabilityInfo{Setting: "synchronous", During: "FULL"}
	r.Costs.LogSyncsPerOp, r.Costs.DataReadsPerOp, r.Load.Threads = p64(1), p64(0), 2
	check("sqlite", 500, "one after another")
	r.Target.Durability.During = "?"
	if l := Predict(r, prof).Limits[5]; l.Capacity != nil || !strings.Contains(l.NotModelled, "durability") {
		t.Fatalf("unknown durability: %+v", l)
	}
}
