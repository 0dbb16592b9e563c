package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-db/ceiling/internal/diagnose"
	"github.com/ceiling-db/ceiling/internal/metrics"
	"github.com/ceiling-db/ceiling/internal/runner"
	"github.com/ceiling-db/ceiling/internal/target"
)

func ptrs(vs ...float64) []*float64 {
	out := make([]*float64, len(vs))
	for i := range vs {
		out[i] = &vs[i]
	}
	return out
}

func TestStatOf(t *testing.T) {
	tests := []struct {
		name             string
		xs               []*float64
		mean, sd, lo, hi float64 // sd < 0: null
		n                int
	}{
		// Sample stddev sqrt(32/7); half-width t(7) × sd / sqrt(8).
		{"eight values", ptrs(2, 4, 4, 4, 5, 5, 7, 9), 5, math.Sqrt(32.0 / 7), 5 - 2.3646*math.Sqrt(32.0/7)/math.Sqrt(8), 5 + 2.3646*math.Sqrt(32.0/7)/math.Sqrt(8), 8},
		// Two runs: t(1) = 12.7062, sd = |a-b|/sqrt 2.
		{"two runs", ptrs(100, 110), 105, math.Sqrt(50), 105 - 12.7062*math.Sqrt(50)/math.Sqrt(2), 105 + 12.7062*math.Sqrt(50)/math.Sqrt(2), 2},
		{"three equal", ptrs(3, 3, 3), 3, 0, 3, 3, 3},
		{"one run", ptrs(42), 42, -1, 0, 0, 1},
		{"nulls left out", append(ptrs(10, 20), nil), 15, math.Sqrt(50), 0, 15 + 12.7062*math.Sqrt(50)/math.Sqrt(2), 2},
		// Two runs far apart (TPC-C on SQLite, req/s): the interval of a
		// quantity that cannot be negative stops at zero.
		{"non-negative, stops at 0", ptrs(1000, 4046), 2523, math.Sqrt(2) * 1523, 0, 2523 + 12.7062*1523, 2},
		// Values that can be negative keep the whole interval.
		{"signed", ptrs(-10, 20), 5, math.Sqrt(450), 5 - 12.7062*15, 5 + 12.7062*15, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := StatOf(tc.xs)
			if st == nil {
				t.Fatal("nil stat")
			}
			if st.N != tc.n || math.Abs(st.Mean-tc.mean) > 1e-9 {
				t.Fatalf("n %d mean %g, want %d and %g", st.N, st.Mean, tc.n, tc.mean)
			}
			if tc.sd < 0 {
				if st.StdDev != nil || st.CI95Low != nil || st.CI95High != nil {
					t.Fatalf("one value: stddev and CI must be null, got %+v", st)
				}
				return
			}
			if st.StdDev == nil || math.Abs(*st.StdDev-tc.sd) > 1e-9 {
				t.Fatalf("stddev %v, want %g", st.StdDev, tc.sd)
			}
			if math.Abs(*st.CI95Low-tc.lo) > 1e-9 || math.Abs(*st.CI95High-tc.hi) > 1e-9 {
				t.Fatalf("CI [%g, %g], want [%g, %g]", *st.CI95Low, *st.CI95High, tc.lo, tc.hi)
			}
		})
	}
	if StatOf(nil) != nil || StatOf([]*float64{nil}) != nil {
		t.Fatal("no value: want nil")
	}
}

func TestTQuantile975(t *testing.T) {
	// Reference values of the 0.975 quantile of Student's t.
	tests := []struct {
		df   int
		want float64
	}{{1, 12.7062}, {2, 4.3027}, {4, 2.7764}, {10, 2.2281}, {30, 2.0423}, {31, 2.0395}, {40, 2.0211}, {60, 2.0003}, {120, 1.9799}, {1000, 1.9623}}
	for _, tc := range tests {
		if got := TQuantile975(tc.df); math.Abs(got-tc.want) > 1e-3 {
			t.Errorf("df %d: got %.4f, want %.4f", tc.df, got, tc.want)
		}
	}
	if !math.IsNaN(TQuantile975(0)) {
		t.Error("df 0: want NaN")
	}
}

// snapWith returns a snapshot of one op with n successful requests of d each.
func snapWith(n int, d time.Duration, failed int64) *metrics.Snapshot {
	s := metrics.NewSnapshot([]string{"insert"})
	for i := 0; i < n; i++ {
		_ = s.Ops[0].Hist.RecordValue(int64(d / time.Microsecond))
	}
	s.Ops[0].Requests = int64(n)
	s.Ops[0].Rows = int64(n)
	s.Ops[0].Bytes = int64(n) * 12
	s.Ops[0].Errors[metrics.ErrOther] = failed
	return s
}

func TestStepOf(t *testing.T) {
	ev := &runner.Evidence{Seconds: 2, Counters: map[string]float64{target.CtrLogBytes: 4 << 20, target.CtrLogSyncs: 200}}
	tests := []struct {
		name      string
		st        runner.StepResult
		saturated []string
		check     func(t *testing.T, s Step)
	}{
		{"keeps up", runner.StepResult{Rate: 100, Scheduled: 200, Completed: 199, Elapsed: 2 * time.Second, Snap: snapWith(199, time.Millisecond, 0), Evidence: ev, ClientCPUSeconds: -1},
			nil, func(t *testing.T, s Step) {
				if s.AchievedPct == nil || math.Abs(*s.AchievedPct-99.5) > 1e-9 || *s.LatePct != 0 {
					t.Fatalf("achieved %v late %v", s.AchievedPct, s.LatePct)
				}
				if s.LogMBPerSec == nil || *s.LogMBPerSec != 2 || *s.LogSyncsPerSec != 100 {
					t.Fatalf("log %v/%v", s.LogMBPerSec, s.LogSyncsPerSec)
				}
				if s.DataIOPS != nil || s.Costs.DataReadsPerOp != nil || s.ClientCPUPct != nil {
					t.Fatalf("unmeasured figures must be null: iops %v costs %+v cpu %v", s.DataIOPS, s.Costs, s.ClientCPUPct)
				}
				if s.Costs.LogSyncsPerOp == nil || math.Abs(*s.Costs.LogSyncsPerOp-200.0/199) > 1e-9 {
					t.Fatalf("log syncs per op %v", s.Costs.LogSyncsPerOp)
				}
			}},
		{"late", runner.StepResult{Rate: 100, Scheduled: 200, Completed: 196, Late: 4, Elapsed: 2 * time.Second, Snap: snapWith(196, time.Millisecond, 0)},
			[]string{"late 2.0% > 1%"}, nil},
		{"behind", runner.StepResult{Rate: 100, Scheduled: 200, Completed: 180, Elapsed: 2 * time.Second, Snap: snapWith(180, time.Millisecond, 0)},
			[]string{"achieved 90.0% < 95%"}, nil},
		{"nothing measured", runner.StepResult{Rate: 100, Partial: true},
			nil, func(t *testing.T, s Step) {
				if s.AchievedPerSec != nil || s.LatePct != nil || s.LatencyMs != nil || s.LogMBPerSec != nil || s.Costs.LogBytesPerOp != nil {
					t.Fatalf("an empty step must report nulls, not zeros: %+v", s)
				}
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := stepOf(3, tc.st, 2, false)
			if s.Index != 3 || s.Rate != tc.st.Rate {
				t.Fatalf("index %d rate %g", s.Index, s.Rate)
			}
			if s.Saturated != (len(tc.saturated) > 0) || strings.Join(s.SaturatedBy, "|") != strings.Join(tc.saturated, "|") {
				t.Fatalf("saturated %v by %q, want %q", s.Saturated, s.SaturatedBy, tc.saturated)
			}
			if tc.check != nil {
				tc.check(t, s)
			}
		})
	}
}

func openRun(started time.Time, completed []int, late int64) *runner.Result {
	r := &runner.Result{Started: started, Total: metrics.NewSnapshot([]string{"insert"}), ClientCPUSeconds: 0.5}
	for i, n := range completed {
		st := runner.StepResult{Rate: float64(100 * (i + 1)), Scheduled: int64(100 * (i + 1)), Completed: int64(n), Late: late,
			Elapsed: time.Second, Snap: snapWith(n, time.Duration(i+1)*time.Millisecond, 0), ClientCPUSeconds: 0.25,
			SchedLag: &metrics.Latency{P99: float64(i + 1)}, MaxBacklog: int64(i)}
		r.Steps = append(r.Steps, st)
		r.Total.Merge(st.Snap)
		r.Elapsed += st.Elapsed
	}
	return r
}

func TestBuildRepeatMergesSteps(t *testing.T) {
	cfg := runner.Config{Threads: 1, Steps: []runner.Step{{Rate: 100, Duration: time.Second}, {Rate: 200, Duration: time.Second}}}
	p := Params{Workload: "single-inserts", Load: cfg, Cores: 2}
	now := time.Now()
	runs := []*runner.Result{openRun(now, []int{100, 190}, 0), openRun(now.Add(time.Minute), []int{98, 170}, 10)}
	res, err := BuildRepeat(p, runs)
	if err != nil {
		t.Fatal(err)
	}
	if res.Load.Repeat != 2 || len(res.Runs) != 2 || len(res.Steps) != 2 {
		t.Fatalf("repeat %d runs %d steps %d", res.Load.Repeat, len(res.Runs), len(res.Steps))
	}
	s := res.Steps[1]
	if s.Completed != 360 || s.Late != 10 || s.Scheduled != 400 || s.DurationS != 2 || *s.AchievedPerSec != 180 {
		t.Fatalf("merged step 2: %+v", s)
	}
	if s.SchedLagMs == nil || s.SchedLagMs.P99 != 2 {
		t.Fatalf("merged lag should be the worst run's: %+v", s.SchedLagMs)
	}
	st := s.RepeatStats["achieved_per_sec"]
	if st == nil || st.N != 2 || st.Mean != 180 || math.Abs(*st.StdDev-math.Sqrt(200)) > 1e-9 {
		t.Fatalf("step 2 achieved stats %+v", st)
	}
	if res.Summary.Requests != 558 || res.Summary.Late != 20 || *res.Summary.Scheduled != 600 {
		t.Fatalf("summary %+v", res.Summary)
	}
	if rs := res.RepeatStats["requests_per_sec"]; rs == nil || rs.Mean != (145+134)/2.0 {
		t.Fatalf("requests_per_sec stats %+v", rs)
	}
	if res.Client.CPUSeconds == nil || *res.Client.CPUSeconds != 1 {
		t.Fatalf("client cpu %v", res.Client.CPUSeconds)
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"repeat_stats":{`, `"runs":[{"run":1`, `"model":"open"`, `"rate":null`, `"rates":[100,200]`} {
		if !bytes.Contains(b, []byte(key)) {
			t.Fatalf("JSON lacks %s", key)
		}
	}

	var buf bytes.Buffer
	PrintSummary(&buf, res)
	for _, want := range []string{"open-loop steps", "repeats: 2 runs", "achieved @ 200/s", "SATURATED (late 2.5% > 1%, achieved 90.0% < 95%)"} {
		if !strings.Contains(buf.String(), want) {
			t.Fatalf("console lacks %q:\n%s", want, buf.String())
		}
	}
}

func TestClosedLoopDocumentUnchanged(t *testing.T) {
	r := &runner.Result{Started: time.Now(), Total: snapWith(10, time.Millisecond, 0), Elapsed: time.Second, ClientCPUSeconds: -1,
		Intervals: []runner.Interval{{End: time.Second, Snap: snapWith(10, time.Millisecond, 0), ClientCPU: -1}}}
	res, err := Build(Params{Workload: "w", Load: runner.Config{Threads: 2, Duration: time.Second}}, r)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res)
	for _, key := range []string{`"model":"closed"`, `"rate":null`, `"rates":null`, `"arrival":null`, `"late_after_s":null`, `"steps":[]`, `"runs":[]`, `"repeat_stats":null`, `"scheduled":null`} {
		if !bytes.Contains(b, []byte(key)) {
			t.Fatalf("closed-loop JSON lacks %s:\n%s", key, b)
		}
	}
	if bytes.Contains(b, []byte(`"step":`)) || bytes.Contains(b, []byte(`"knee"`)) {
		t.Fatalf("closed-loop intervals carry no step, and there is no knee:\n%s", b)
	}
	var buf bytes.Buffer
	PrintSummary(&buf, res)
	if strings.Contains(buf.String(), "open loop") || strings.Contains(buf.String(), "repeats") {
		t.Fatalf("closed-loop summary shows open-loop parts:\n%s", buf.String())
	}
}

func TestLiveShowsStepRate(t *testing.T) {
	var buf bytes.Buffer
	l := &Live{W: &buf, Every: 10 * time.Second, Cores: 2, Rates: []float64{50, 100}}
	for i := 0; i < 4; i++ {
		l.Interval(runner.Interval{Start: time.Duration(i) * time.Second, End: time.Duration(i+1) * time.Second, Step: i / 2,
			Snap: snapWith(50*(i/2+1), time.Millisecond, 0), ClientCPU: -1})
	}
	l.Done()
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	// Header, then one line per step: a step's end is kept even before --report-every.
	if len(lines) != 3 || !strings.Contains(lines[0], "target/s") || !strings.Contains(lines[1], " 50 ") || !strings.Contains(lines[2], " 100 ") {
		t.Fatalf("live lines:\n%s", buf.String())
	}
}

// TestWorkerGroups: the number of threads the workers shared reaches the
// JSON result's client section (also through a repeat's merge), and is
// absent when each worker had its own goroutine.
func TestWorkerGroups(t *testing.T) {
	cfg := runner.Config{Threads: 4, Duration: time.Second}
	p := Params{Workload: "single-inserts", Load: cfg, Cores: 2}
	run := func(groups int) *runner.Result {
		return &runner.Result{Started: time.Now(), Total: snapWith(10, time.Millisecond, 0), Elapsed: time.Second,
			ClientCPUSeconds: -1, WorkerGroups: groups}
	}
	for _, groups := range []int{0, 2} {
		one, err := Build(p, run(groups))
		if err != nil {
			t.Fatal(err)
		}
		rep, err := BuildRepeat(p, []*runner.Result{run(groups), run(groups)})
		if err != nil {
			t.Fatal(err)
		}
		for name, res := range map[string]*Result{"run": one, "repeat": rep} {
			if res.Client.WorkerGroups != groups {
				t.Errorf("%s with %d groups: client.worker_groups %d", name, groups, res.Client.WorkerGroups)
			}
			b, err := json.Marshal(res.Client)
			if err != nil {
				t.Fatal(err)
			}
			if has := bytes.Contains(b, []byte(`"worker_groups":`)); has != (groups > 0) {
				t.Errorf("%s with %d groups: JSON client %s", name, groups, b)
			}
		}
	}
}

// TestLogDeviceOf: the log device's figures over a run: rates per second,
// means only over enough requests (the kernel sums whole milliseconds), no
// flush figures where the kernel does not count them, and nothing without
// device counters.
func TestLogDeviceOf(t *testing.T) {
	c := map[string]float64{target.CtrLogDevReads: 5, target.CtrLogDevReadMs: 1, target.CtrLogDevWrites: 20000, target.CtrLogDevWriteMs: 1100,
		target.CtrLogDevFlushes: 10000, target.CtrLogDevFlushMs: 700, target.CtrLogDevBusyMs: 5400}
	d := logDeviceOf("vda", c, 2, 10000)
	if d == nil || d.Name != "vda" || d.WritesPerSec != 10000 || *d.WriteMs != 0.055 || d.ReadsPerSec != 2.5 || d.ReadMs != nil ||
		*d.FlushesPerSec != 5000 || *d.FlushMs != 0.07 || *d.FlushesPerOp != 1 || d.BusyPct != 100 {
		t.Fatalf("got %+v", d)
	}
	if got, want := LogDeviceLine(d), "5,000 flushes/s at 0.070 ms (1.00 per request), 10,000 writes/s at 0.055 ms, 2.5 reads/s, busy 100%"; got != want {
		t.Fatalf("line %q, want %q", got, want)
	}
	delete(c, target.CtrLogDevFlushes)
	delete(c, target.CtrLogDevFlushMs)
	c[target.CtrLogDevBusyMs] = 1000
	d = logDeviceOf("vda", c, 2, 10000)
	if d.FlushesPerSec != nil || d.FlushMs != nil || d.BusyPct != 50 || !strings.HasPrefix(LogDeviceLine(d), "flushes n/a (not counted by this kernel), 10,000 writes/s") {
		t.Fatalf("without flush counters: %+v %q", d, LogDeviceLine(d))
	}
	if d := logDeviceOf("vda", map[string]float64{target.CtrCommits: 5}, 2, 10); d != nil {
		t.Fatalf("without device counters: %+v", d)
	}
}

// TestLogDeviceMismatch: a device that received far fewer cache flushes than
// the server counted syncs is not the log's (or flushes nothing): the result
// says so and the verdict's figures leave its times out; a device that saw
// them is used.
func TestLogDeviceMismatch(t *testing.T) {
	c := map[string]float64{target.CtrLogSyncs: 40000, target.CtrLogDevWrites: 500, target.CtrLogDevWriteMs: 100,
		target.CtrLogDevFlushes: 120, target.CtrLogDevFlushMs: 60, target.CtrLogDevBusyMs: 300}
	d := logDeviceOf("vda", c, 10, 40000)
	want := "the device received 120 cache flushes for the server's 40000 syncs: the log is not on it as ceiling sees it (a server in a container?) or it has no write-back cache; not used by the verdict"
	if d.Note != want {
		t.Fatalf("note %q, want %q", d.Note, want)
	}
	var f diagnose.Figures
	fillServer(&f, c, 10, nil, Costs{}, 2)
	if f.LogDevFlushMs != nil || f.LogDevWriteMs != nil {
		t.Fatalf("mismatched device used: flush %v, write %v", f.LogDevFlushMs, f.LogDevWriteMs)
	}
	// MariaDB counts log and data fsyncs together; 39,000 flushes for them
	// is the log's device.
	delete(c, target.CtrLogSyncs)
	c[target.CtrDataSyncs], c[target.CtrLogDevFlushes], c[target.CtrLogDevFlushMs] = 40000, 39000, 2730
	if d := logDeviceOf("vda", c, 10, 40000); d.Note != "" {
		t.Fatalf("matching device noted: %q", d.Note)
	}
	f = diagnose.Figures{}
	fillServer(&f, c, 10, nil, Costs{}, 2)
	if f.LogDevFlushMs == nil || math.Abs(*f.LogDevFlushMs-0.07) > 1e-9 || f.LogDevWriteMs == nil || *f.LogDevWriteMs != 0.2 {
		t.Fatalf("matching device: flush %v, write %v", f.LogDevFlushMs, f.LogDevWriteMs)
	}
	// Few syncs (relaxed durability): nothing to check against.
	c[target.CtrDataSyncs], c[target.CtrLogDevFlushes] = 50, 3
	if d := logDeviceOf("vda", c, 10, 40000); d.Note != "" {
		t.Fatalf("relaxed run noted: %q", d.Note)
	}
}

// TestCPUPressureFigure: the host's CPU pressure counter (seconds some
// task waited for a core) becomes the share of the span's time; absent,
// the figure is not measured.
func TestCPUPressureFigure(t *testing.T) {
	var f diagnose.Figures
	fillServer(&f, map[string]float64{target.CtrHostCPUTotal: 20, target.CtrHostCPUBusy: 17, target.CtrHostCPUPressure: 7.3}, 10, nil, Costs{}, 2)
	if f.CPUPressure == nil || math.Abs(*f.CPUPressure-0.73) > 1e-9 || f.HostBusy == nil || *f.HostBusy != 0.85 {
		t.Fatalf("pressure %v, busy %v: want 0.73 and 0.85", f.CPUPressure, f.HostBusy)
	}
	f = diagnose.Figures{}
	fillServer(&f, map[string]float64{target.CtrHostCPUTotal: 20, target.CtrHostCPUBusy: 17}, 10, nil, Costs{}, 2)
	if f.CPUPressure != nil || f.ServerRunQueueMsPerReq != nil {
		t.Fatalf("pressure %v, run queue %v without the counters", f.CPUPressure, f.ServerRunQueueMsPerReq)
	}
	// The server's and ceiling's threads' run-queue seconds, per request
	// in ms.
	f = diagnose.Figures{Requests: 4000}
	fillServer(&f, map[string]float64{target.CtrServerRunQueueSec: 0.5, target.CtrClientRunQueueSec: 0.2}, 10, nil, Costs{}, 2)
	if f.ServerRunQueueMsPerReq == nil || math.Abs(*f.ServerRunQueueMsPerReq-0.125) > 1e-9 {
		t.Fatalf("run queue %v ms per request, want 0.125", f.ServerRunQueueMsPerReq)
	}
	if f.ClientRunQueueMsPerReq == nil || math.Abs(*f.ClientRunQueueMsPerReq-0.05) > 1e-9 {
		t.Fatalf("client run queue %v ms per request, want 0.05", f.ClientRunQueueMsPerReq)
	}
	// The console's figure for a result: the same, nil without it.
	r := &Result{Summary: Summary{Requests: 4000}, Evidence: &Evidence{Counters: map[string]float64{target.CtrClientRunQueueSec: 0.2}}}
	if ms := ClientQueueMs(r); ms == nil || math.Abs(*ms-0.05) > 1e-9 {
		t.Fatalf("ClientQueueMs %v, want 0.05", ms)
	}
	r.Evidence.Counters = map[string]float64{}
	if ms := ClientQueueMs(r); ms != nil {
		t.Fatalf("ClientQueueMs %v without the counter", *ms)
	}
}

// TestCommitsWait: the durability setting in force tells whether each
// commit waits for its log flush, per engine; an unknown value or setting
// is not guessed.
func TestCommitsWait(t *testing.T) {
	for _, c := range []struct {
		setting, during string
		want            string // "true", "false", "nil"
	}{
		{"synchronous", "FULL", "true"}, {"synchronous", "NORMAL", "false"}, {"synchronous", "OFF", "false"},
		{"synchronous_commit", "on", "true"}, {"synchronous_commit", "local", "true"}, {"synchronous_commit", "off", "false"},
		{"innodb_flush_log_at_trx_commit", "1", "true"}, {"innodb_flush_log_at_trx_commit", "2", "false"}, {"innodb_flush_log_at_trx_commit", "0", "false"},
		{"synchronous_commit", "maybe", "nil"}, {"DELAYED_DURABILITY", "FORCED", "nil"},
	} {
		got := "nil"
		if w := commitsWait(target.DurabilityInfo{Setting: c.setting, During: c.during}); w != nil {
			got = fmt.Sprint(*w)
		}
		if got != c.want {
			t.Errorf("%s = %s: %s, want %s", c.setting, c.during, got, c.want)
		}
	}
}

// TestTLSShown: encrypted connections are named on the summary's target
// line and passed to the diagnosis with the engine's way to turn them
// off; unencrypted ones ("off") add nothing there.
func TestTLSShown(t *testing.T) {
	for _, c := range []struct {
		tls, engine, line, off string
	}{
		{"TLS 1.3, TLS_AES_256_GCM_SHA384", "postgres", ", connections encrypted (TLS 1.3, TLS_AES_256_GCM_SHA384)", "sslmode=disable in the DSN"},
		{"TLS 1.2, ECDHE-RSA-AES256-GCM-SHA384", "mysql", ", connections encrypted (TLS 1.2, ECDHE-RSA-AES256-GCM-SHA384)", "no tls parameter in the DSN, and require_secure_transport off"},
		{target.TLSOff, "postgres", "", ""},
		{"", "sqlite", "", ""},
	} {
		r := &runner.Result{Started: time.Now(), Total: snapWith(10, time.Millisecond, 0), Elapsed: time.Second, ClientCPUSeconds: -1}
		res, err := Build(Params{Workload: "w", Load: runner.Config{Threads: 2, Duration: time.Second}, Info: target.Info{Engine: c.engine, TLS: c.tls}}, r)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		PrintSummary(&buf, res)
		has := strings.Contains(buf.String(), "connections encrypted")
		if c.line != "" && !strings.Contains(buf.String(), c.line) || c.line == "" && has {
			t.Errorf("%s %q: summary\n%s", c.engine, c.tls, buf.String())
		}
		var f diagnose.Figures
		logDevice(&f, res.Target)
		if want := c.tls; c.line == "" && (f.TLS != "" || f.TLSOff != "") || c.line != "" && (f.TLS != want || f.TLSOff != c.off) {
			t.Errorf("%s %q: figures TLS %q, off %q", c.engine, c.tls, f.TLS, f.TLSOff)
		}
	}
}

// TestRampNeverSaturated: a ramp that kept up at every step says its
// ceiling lies above the highest rate and suggests going higher; one with
// a saturated step does not.
func TestRampNeverSaturated(t *testing.T) {
	cfg := runner.Config{Threads: 4, Steps: []runner.Step{{Rate: 100, Duration: time.Second}, {Rate: 200, Duration: time.Second}}}
	p := Params{Workload: "single-inserts", Load: cfg, Cores: 2}
	res, err := Build(p, openRun(time.Now(), []int{100, 200}, 0))
	if err != nil {
		t.Fatal(err)
	}
	ev := strings.Join(res.Verdict.Evidence, "|")
	last := res.Verdict.Suggestions[len(res.Verdict.Suggestions)-1]
	if !strings.Contains(ev, "no step saturated: every rate up to 200/s was sustained, so the ceiling is above the ramp") ||
		!strings.HasPrefix(last.Action, "a ramp to higher rates (e.g. --rates 200:1600:x2)") || last.PredictedGain != nil {
		t.Errorf("kept up everywhere: %q, last suggestion %+v", ev, last)
	}
	res, err = Build(p, openRun(time.Now(), []int{100, 150}, 0))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(strings.Join(res.Verdict.Evidence, "|"), "no step saturated") {
		t.Errorf("a saturated ramp (150 of 200/s) said none saturated: %q", res.Verdict.Evidence)
	}
	// Interrupted after two of three steps: the ceiling is above what was
	// reached, not above the ramp.
	p.Load.Steps = append(p.Load.Steps, runner.Step{Rate: 300, Duration: time.Second})
	r := openRun(time.Now(), []int{100, 200}, 0)
	r.Partial = true
	if res, err = Build(p, r); err != nil {
		t.Fatal(err)
	}
	ev = strings.Join(res.Verdict.Evidence, "|")
	last = res.Verdict.Suggestions[len(res.Verdict.Suggestions)-1]
	if strings.Contains(ev, "above the ramp") || !strings.Contains(ev, "no step saturated before the run was interrupted: every rate up to 200/s was sustained; the ramp's higher steps (to 300/s) were not run") ||
		!strings.HasPrefix(last.Action, "the rest of the ramp, from 200/s to 300/s") {
		t.Errorf("interrupted ramp: %q, last suggestion %+v", ev, last)
	}
}

// TestWriteMode: a result file is readable by others (0644), as the HTML
// report is; it used to keep its temporary file's 0600.
func TestWriteMode(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no Unix permission bits on Windows")
	}
	dir := t.TempDir()
	path, err := Write(dir, &Result{Schema: Schema, ID: "mode-test"})
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o644 {
		t.Errorf("%s: mode %v, want -rw-r--r--", path, st.Mode().Perm())
	}
}

// TestAdvice: the workload's own suggestions (Params.Advice) join the
// run's verdict without a predicted gain, for the engine and bottleneck
// the verdict found, and only once when the verdict is advised again (a
// knee or repeats remake it from a result that already has them).
func TestAdvice(t *testing.T) {
	r := &runner.Result{Started: time.Now(), Total: snapWith(10, time.Millisecond, 0), Elapsed: time.Second, ClientCPUSeconds: -1,
		Intervals: []runner.Interval{{End: time.Second, Snap: snapWith(10, time.Millisecond, 0), ClientCPU: -1}}}
	var asked []string
	p := Params{Workload: "w", Load: runner.Config{Threads: 2, Duration: time.Second}, Info: target.Info{Engine: "postgres"},
		Advice: func(engine, bottleneck string) []string {
			asked = append(asked, engine+"/"+bottleneck)
			return []string{"--something-else"}
		}}
	res, err := Build(p, r)
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict == nil || len(asked) != 1 || asked[0] != "postgres/"+res.Verdict.Bottleneck {
		t.Fatalf("Advice asked %v for verdict %+v", asked, res.Verdict)
	}
	addAdvice(res, p)
	n := 0
	for _, s := range res.Verdict.Suggestions {
		if s.Action == "--something-else" {
			n++
			if s.PredictedGain != nil {
				t.Errorf("advice with a predicted gain %v", *s.PredictedGain)
			}
		}
	}
	if n != 1 {
		t.Errorf("the advice is in the verdict %d times, want once: %+v", n, res.Verdict.Suggestions)
	}
	// A command the advice gives carries the run's --db (redacted).
	p.Info.DSN = "postgres://app:secret@db1/bench?sslmode=require"
	p.Advice = func(string, string) []string {
		return []string{"more warehouses (`ceiling prepare tpcc --warehouses 2 --force`)"}
	}
	res2, err := Build(p, r)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(res2.Verdict.Suggestions, func(s diagnose.Suggestion) bool {
		return s.Action == "more warehouses (`ceiling prepare tpcc --warehouses 2 --force --db 'postgres://app:xxxxx@db1/bench?sslmode=require'`)"
	}) {
		t.Errorf("advice without the run's --db: %+v", res2.Verdict.Suggestions)
	}
	var buf bytes.Buffer
	PrintVerdict(&buf, res.Verdict)
	if !strings.Contains(buf.String(), "   try --something-else\n") {
		t.Errorf("console verdict lacks the advice:\n%s", buf.String())
	}
}

// TestRampThinP99: the ramp marks the p99 of a step with fewer than 1000
// requests (one of its 10 slowest) and says so under the table; a step
// with enough requests is not marked.
func TestRampThinP99(t *testing.T) {
	res := &Result{Steps: []Step{
		{Index: 0, Rate: 10, Completed: 300, LatencyMs: &metrics.Latency{P99: 12.5}},
		{Index: 1, Rate: 1000, Completed: 30000, LatencyMs: &metrics.Latency{P99: 1.25}},
	}}
	var buf bytes.Buffer
	PrintRamp(&buf, res)
	out := buf.String()
	if !strings.Contains(out, "12.500*") || strings.Contains(out, "1.250*") || !strings.Contains(out, "* p99 of fewer than 1000 requests: one of the step's 10 slowest") {
		t.Fatalf("ramp:\n%s", out)
	}
	res.Steps = res.Steps[1:]
	buf.Reset()
	PrintRamp(&buf, res)
	if strings.Contains(buf.String(), "* p99 of fewer") {
		t.Fatalf("footnote without a marked step:\n%s", buf.String())
	}
}

// TestRampSchedLag: a step whose scheduling lag p99 rests on one late
// start (a knee's 10/s probe, 50 requests, one started 31 ms late) gets a
// note that it was a pause, not the WARNING that the load generator may be
// the limit; a step with many late starts, or from a result that did not
// count them, gets the WARNING.
func TestRampSchedLag(t *testing.T) {
	if runner.SlowSchedLagMs != diagnose.MaxSchedLagP99Ms {
		t.Fatalf("the runner counts late starts above %d ms, the diagnosis suspects the generator above %g ms", runner.SlowSchedLagMs, diagnose.MaxSchedLagP99Ms)
	}
	one := int64(1)
	res := &Result{Load: Load{Model: "open"}, Steps: []Step{
		{Index: 0, Rate: 10, Completed: 50, LatencyMs: &metrics.Latency{P99: 35}, SchedLagMs: &metrics.Latency{P99: 31.3}, SchedLagSlow: &one},
		{Index: 1, Rate: 1000, Completed: 5000, LatencyMs: &metrics.Latency{P99: 1.2}, SchedLagMs: &metrics.Latency{P99: 0.2}, SchedLagSlow: f64i(0)},
	}}
	var buf bytes.Buffer
	PrintRamp(&buf, res)
	out := buf.String()
	if strings.Contains(out, "WARNING") || !strings.Contains(out, "note: at 10/s ceiling's scheduling lag p99 31.3 ms rests on 1 request of 50 that started more than 10 ms late") {
		t.Fatalf("ramp:\n%s", out)
	}
	for _, slow := range []*int64{f64i(400), nil} {
		res.Steps[1].SchedLagMs.P99, res.Steps[1].SchedLagSlow = 25, slow
		buf.Reset()
		PrintRamp(&buf, res)
		if out := buf.String(); !strings.Contains(out, "WARNING: at 1000/s ceiling's own scheduling lag p99 is 25.0 ms") || strings.Contains(out, "rests on") {
			t.Fatalf("ramp (%v late starts):\n%s", slow, out)
		}
	}
}

// TestRampFsyncs: a step whose server counts no log syncs of its own
// (MariaDB) shows its log's and data files' fsyncs in syncs/s, marked †
// and explained under the table; log syncs are shown plain.
func TestRampFsyncs(t *testing.T) {
	res := &Result{Steps: []Step{
		{Index: 0, Rate: 1000, Completed: 5000, FsyncsPerSec: f64(1003)},
		{Index: 1, Rate: 2000, Completed: 10000, FsyncsPerSec: f64(2009)},
	}}
	var buf bytes.Buffer
	PrintRamp(&buf, res)
	if out := buf.String(); !strings.Contains(out, " 1003† ") || !strings.Contains(out, " 2009† ") || !strings.Contains(out, FsyncsNote) {
		t.Fatalf("ramp:\n%s", out)
	}
	res.Steps = []Step{{Index: 0, Rate: 1000, Completed: 5000, LogSyncsPerSec: f64(998), FsyncsPerSec: f64(1003)}}
	buf.Reset()
	PrintRamp(&buf, res)
	if out := buf.String(); !strings.Contains(out, " 998 ") || strings.Contains(out, "†") {
		t.Fatalf("ramp with log syncs:\n%s", out)
	}
}

// TestRepeatStatsCosts: the per-request costs that compare shows have a
// run-to-run spread too (log writes, commits, server CPU, round trips), so
// a change in them can be called beyond or within it.
func TestRepeatStatsCosts(t *testing.T) {
	cfg := runner.Config{Threads: 1, Duration: time.Second}
	p := Params{Workload: "single-inserts", Load: cfg, Cores: 2}
	run := func(cpu float64, trips int64) *runner.Result {
		r := &runner.Result{Started: time.Now(), Total: snapWith(100, time.Millisecond, 0), Elapsed: time.Second, ClientCPUSeconds: 0.1,
			Evidence: &runner.Evidence{Seconds: 1, Counters: map[string]float64{target.CtrLogWrites: 100, target.CtrCommits: 100, target.CtrServerCPUSec: cpu}}}
		r.Total.Ops[0].RoundTrips = trips
		return r
	}
	res, err := BuildRepeat(p, []*runner.Result{run(0.02, 100), run(0.03, 200)})
	if err != nil {
		t.Fatal(err)
	}
	if rt := res.Runs[1].RoundTripsPerRequest; rt == nil || *rt != 2 {
		t.Errorf("run 2's round trips per request %v, want 2", rt)
	}
	for key, mean := range map[string]float64{"log_writes_per_op": 1, "commits_per_op": 1, "cpu_us_per_op": 250, "round_trips_per_op": 1.5} {
		st := res.RepeatStats[key]
		if st == nil || st.N != 2 || math.Abs(st.Mean-mean) > 1e-9 {
			t.Errorf("%s: %+v, want the mean of 2 runs, %g", key, st, mean)
		}
	}
}

// TestSweepRepeatNOPM: a repeated TPC-C thread ramp keeps each run's
// NOPM per thread count (runs[].steps[].nopm, from the step's figures),
// its spread (steps[].repeat_stats.nopm) and a repeats-table row.
func TestSweepRepeatNOPM(t *testing.T) {
	one, two := 1, 2
	docs := []*Result{{}, {}}
	for k, d := range docs {
		for i, th := range []*int{&one, &two} {
			d.Steps = append(d.Steps, Step{Index: i, Threads: th, AchievedPerSec: f64(1000 * float64(i+1)),
				Figures: map[string]float64{"nopm": 30000*float64(i+1) + 1000*float64(k)}})
		}
	}
	res := &Result{Steps: []Step{{Index: 0, Threads: &one}, {Index: 1, Threads: &two}}}
	addRuns(res, docs)
	setRepeatStats(res)
	if n := res.Runs[1].Steps[1].NOPM; n == nil || *n != 61000 || *res.Runs[0].Steps[0].Threads != 1 {
		t.Fatalf("run 2, 2 threads: NOPM %v, steps %+v", n, res.Runs[1].Steps)
	}
	if st := res.Steps[1].RepeatStats["nopm"]; st == nil || st.N != 2 || st.Mean != 60500 {
		t.Fatalf("2 threads: nopm stats %+v, want the mean of 60,000 and 61,000", st)
	}
	var buf bytes.Buffer
	printRepeats(&buf, res)
	if out := buf.String(); !strings.Contains(out, "NOPM @ 2 threads") || !strings.Contains(out, "req/s @ 1 thread ") {
		t.Fatalf("repeats table:\n%s", out)
	}
}
