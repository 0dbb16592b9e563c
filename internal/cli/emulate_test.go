package cli

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestEmulate: run --emulate holds the SQLite file's log to the profile's
// write rate while measuring (the data loads at full speed), the result
// records the profile and the WAL's emulated wait, the log rate stays at
// the limit or under it (a slower machine only lowers it), and the
// verdict names the log rate; predict with the same profile then predicts
// about what was measured. A server target, an unknown profile and a
// profile ceiling cannot hold are usage errors.
func TestEmulate(t *testing.T) {
	dir := t.TempDir()
	prof := filepath.Join(dir, "slow-log.yaml")
	const limit = 0.25 // MiB/s: about 60 single-row commits a second
	if err := os.WriteFile(prof, []byte("name: slow-log\ntitle: a slow log\nsource: this test\nsource_date: 2026-11-27\nlimits:\n  log_mb_per_sec: 0.25\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "results")
	code, stdout, stderr := runCLI(t, context.Background(), "run", "single-inserts", "-T", "2s", "--no-probe", "--db", "sqlite:"+filepath.Join(dir, "e.db"), "--emulate", prof, "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "emulating slow-log: log writes ≤ 0.25 MiB/s") || !strings.Contains(stdout, "waited for the emulated limits") {
		t.Errorf("console lacks the emulation lines:\n%s", stdout)
	}
	_, path := readResult(t, out)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Target struct {
			Emulation *struct {
				Profile     string   `json:"profile"`
				LogMBPerSec *float64 `json:"log_mb_per_sec"`
				DataIOPS    *float64 `json:"data_iops"`
			} `json:"emulation"`
		} `json:"target"`
		Summary struct {
			RequestsPerSec float64 `json:"requests_per_sec"`
		} `json:"summary"`
		Evidence struct {
			LogMBPerSec *float64 `json:"log_mb_per_sec"`
		} `json:"evidence"`
		Files []struct {
			Name           string   `json:"name"`
			EmulatedWaitMs *float64 `json:"emulated_wait_ms"`
		} `json:"files"`
		Verdict struct {
			Bottleneck string `json:"bottleneck"`
		} `json:"verdict"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	e := doc.Target.Emulation
	if e == nil || e.Profile != "slow-log" || e.LogMBPerSec == nil || *e.LogMBPerSec != limit || e.DataIOPS != nil {
		t.Fatalf("target.emulation %+v", e)
	}
	waited := false
	for _, f := range doc.Files {
		if strings.HasSuffix(f.Name, "-wal") && f.EmulatedWaitMs != nil && *f.EmulatedWaitMs > 0 {
			waited = true
		}
	}
	if !waited {
		t.Errorf("no emulated wait on the WAL: %+v", doc.Files)
	}
	if doc.Verdict.Bottleneck != "log-rate" {
		t.Errorf("verdict %q, want log-rate", doc.Verdict.Bottleneck)
	}
	// Two writers: one writes the held log while the other waits for
	// SQLite's write lock, which is the log's wait too (not contention);
	// and the real device, idle under the emulated rate, does not keep the
	// verdict from suggesting a higher log rate.
	code, stdout2, stderr := runCLI(t, context.Background(), "run", "single-inserts", "-c", "2", "-T", "2s", "--no-probe", "--db", "sqlite:"+filepath.Join(dir, "e.db"), "--emulate", prof, "--out", filepath.Join(dir, "two.json"))
	if code != 0 {
		t.Fatalf("-c 2: exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout2, "verdict: log-rate") || !strings.Contains(stdout2, "try a tier or disk with a higher log write rate") {
		t.Errorf("-c 2 under the emulated log rate: want the log-rate verdict and a higher log rate suggested:\n%s", stdout2)
	}
	if strings.Contains(stdout+stdout2, "the next size up") {
		t.Errorf("a profile of the user's own has no next size, yet:\n%s", stdout2)
	}
	// The log rate over the run: bytes per request × requests/s.
	code, predOut, stderr := runCLI(t, context.Background(), "predict", path, "--profile", prof, "--json")
	if code != 0 {
		t.Fatalf("predict: exit %d: %s", code, stderr)
	}
	var preds []struct {
		RequestsPerSec *float64 `json:"requests_per_sec"`
		Binding        string   `json:"binding"`
	}
	if err := json.Unmarshal([]byte(predOut), &preds); err != nil || len(preds) != 1 || preds[0].RequestsPerSec == nil {
		t.Fatalf("predict: %v %s", err, predOut)
	}
	if preds[0].Binding != "log-mb" || doc.Summary.RequestsPerSec > *preds[0].RequestsPerSec*1.05 {
		t.Errorf("measured %.1f req/s under the limit, predicted %.1f (%s): above the limit's rate", doc.Summary.RequestsPerSec, *preds[0].RequestsPerSec, preds[0].Binding)
	}

	// predict says a result was measured under limits; of an unlimited
	// SQLite result it says how to check it under them.
	if code, text, _ := runCLI(t, context.Background(), "predict", path, "--profile", prof); code != 0 || !strings.Contains(text, "note: this run was measured with its files held to slow-log's limits (--emulate)") {
		t.Errorf("predict of the emulated result: exit %d\n%s", code, text)
	}
	var raw map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	delete(raw["target"].(map[string]any), "emulation")
	plain := filepath.Join(dir, "plain.json")
	if nb, err := json.Marshal(raw); err != nil || os.WriteFile(plain, nb, 0o644) != nil {
		t.Fatal(err)
	}
	if code, text, _ := runCLI(t, context.Background(), "predict", plain, "--profile", "azure-2014-s1"); code != 0 || !strings.Contains(text, "ceiling run single-inserts --emulate azure-2014-s1") {
		t.Errorf("predict of an unlimited SQLite result: exit %d\n%s", code, text)
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--db", "postgres://u@127.0.0.1:1/db", "--emulate", prof}, "--emulate holds the embedded SQLite target's files"},
		{[]string{"--emulate", "no-such-profile"}, `unknown profile "no-such-profile"`},
		{[]string{"--emulate", writeProfile(t, dir, "cores-only", "cores: 4")}, "gives no log or data-file limit"},
	} {
		args := append([]string{"run", "single-inserts", "-T", "1s", "--no-probe", "--out", out}, c.args...)
		if !strings.Contains(strings.Join(c.args, " "), "--db") {
			args = append(args, "--db", "sqlite:"+filepath.Join(dir, "e.db"))
		}
		code, _, stderr := runCLI(t, context.Background(), args...)
		if c.want == "--emulate holds the embedded SQLite target's files" {
			// knee takes --emulate too, and refuses it on a server alike.
			kcode, _, kerr := runCLI(t, context.Background(), append([]string{"knee", "single-inserts", "--slo", "p99<1s"}, c.args...)...)
			if kcode != ExitUsage || !strings.Contains(kerr, c.want) {
				t.Errorf("knee %v: exit %d, stderr %q", c.args, kcode, kerr)
			}
		}
		if code != ExitUsage || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("%v: exit %d, stderr %q; want %d and one line with %q", c.args, code, stderr, ExitUsage, c.want)
		}
	}
}

// TestEmulateNextSize: a run held to a shipped file class that its IOPS
// limit bound (storage-queue) is told the next class up and what predict
// gives it: direct-selects on a table larger than SQLite's page cache,
// each select a read of the data file, held to 500 IOPS; the next class,
// ≤256 GiB (P15), gives 1100, ×2.2 for reads alone.
func TestEmulateNextSize(t *testing.T) {
	dir := t.TempDir()
	code, stdout, stderr := runCLI(t, context.Background(), "run", "direct-selects", "--rows", "20000", "-c", "2", "-T", "2s", "--warmup", "1s", "--no-probe",
		"--db", "sqlite:"+filepath.Join(dir, "n.db"), "--emulate", "azure-mi-gp-file-128g", "--out", filepath.Join(dir, "r.json"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc struct {
		Verdict struct {
			Bottleneck  string `json:"bottleneck"`
			Suggestions []struct {
				Action        string   `json:"action"`
				PredictedGain *float64 `json:"predicted_gain"`
			} `json:"suggestions"`
		} `json:"verdict"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "r.json"))
	if err != nil || json.Unmarshal(b, &doc) != nil {
		t.Fatalf("result: %v", err)
	}
	if doc.Verdict.Bottleneck != "storage-queue" {
		t.Fatalf("verdict %q, want storage-queue:\n%s", doc.Verdict.Bottleneck, stdout)
	}
	found := false
	for _, s := range doc.Verdict.Suggestions {
		if strings.HasPrefix(s.Action, "the next size up, azure-mi-gp-file-256g") {
			found = true
			if s.PredictedGain == nil || *s.PredictedGain < 2.15 || *s.PredictedGain > 2.25 {
				t.Errorf("next size's gain %v, want about 2.2 (1100 ÷ 500 IOPS)", s.PredictedGain)
			}
		}
	}
	if !found || !strings.Contains(stdout, "try the next size up, azure-mi-gp-file-256g") {
		t.Errorf("no next size suggested: %+v\n%s", doc.Verdict.Suggestions, stdout)
	}
}

func writeProfile(t *testing.T, dir, name, limits string) string {
	t.Helper()
	p := filepath.Join(dir, name+".yaml")
	if err := os.WriteFile(p, []byte("name: "+name+"\ntitle: t\nsource: this test\nsource_date: 2026-11-27\nlimits:\n  "+limits+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestEmulateLatency: a profile's log latency is added to each WAL sync of
// a run at full durability (the result's sync time per call is at least
// that, and it is not emulated wait), recorded in target.emulation; the
// console names it; predict from an unlimited run of the same workload
// names the latency as binding.
func TestEmulateLatency(t *testing.T) {
	dir := t.TempDir()
	prof := filepath.Join(dir, "lat.yaml")
	if err := os.WriteFile(prof, []byte("name: lat\ntitle: a slow device\nsource: this test\nsource_date: 2026-11-27\nlimits:\n  log_latency_ms: 4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	db := "sqlite:" + filepath.Join(dir, "l.db")
	out := filepath.Join(dir, "emulated")
	code, stdout, stderr := runCLI(t, context.Background(), "run", "single-inserts", "--ops", "40", "--durability", "full", "--no-probe", "--db", db, "--emulate", prof, "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "emulating lat: each log sync +4 ms") {
		t.Errorf("console lacks the latency:\n%s", stdout)
	}
	doc := readJSONMap(t, firstResult(t, out))
	em := doc["target"].(map[string]any)["emulation"].(map[string]any)
	if em["log_latency_ms"] != 4.0 {
		t.Fatalf("target.emulation %v", em)
	}
	for _, f := range doc["files"].([]any) {
		f := f.(map[string]any)
		if name, _ := f["name"].(string); !strings.HasSuffix(name, "-wal") {
			continue
		}
		syncs, _ := f["syncs"].(float64)
		ms, _ := f["avg_sync_ms"].(float64)
		if syncs < 40 || ms < 4 {
			t.Fatalf("WAL: %v syncs at %v ms each, want ≥ 40 at ≥ 4 ms", syncs, ms)
		}
		if w, _ := f["emulated_wait_ms"].(float64); w > 1 {
			t.Fatalf("latency counted as emulated wait: %v ms", w)
		}
	}
	free := filepath.Join(dir, "free")
	if code, _, stderr := runCLI(t, context.Background(), "run", "single-inserts", "--ops", "200", "--durability", "full", "--no-probe", "--db", db, "--out", free); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	code, stdout, stderr = runCLI(t, context.Background(), "predict", firstResult(t, free), "--profile", prof)
	if code != 0 || !strings.Contains(stdout, "bound by latency") {
		t.Fatalf("predict: exit %d\n%s%s", code, stdout, stderr)
	}
}

// TestEmulateNextSizeRamp: a ramp held to a shipped tier whose log rate
// bound it is told the next tier up too, its gain applied to the highest
// rate a step achieved: inserts-deletes at 2014 Basic's 9.7 MB/min of
// log; Standard S1's 22 MB/min is ×2.27.
func TestEmulateNextSizeRamp(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "r.json")
	code, stdout, stderr := runCLI(t, context.Background(), "run", "inserts-deletes", "--rates", "100:200:100", "--step", "2s", "--no-probe",
		"--db", "sqlite:"+filepath.Join(dir, "n.db"), "--emulate", "azure-2014-basic", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc struct {
		Steps []struct {
			AchievedPerSec float64 `json:"achieved_per_sec"`
		} `json:"steps"`
		Verdict struct {
			Bottleneck  string `json:"bottleneck"`
			Suggestions []struct {
				Action                  string   `json:"action"`
				PredictedGain           *float64 `json:"predicted_gain"`
				PredictedRequestsPerSec *float64 `json:"predicted_requests_per_sec"`
			} `json:"suggestions"`
		} `json:"verdict"`
	}
	b, err := os.ReadFile(out)
	if err != nil || json.Unmarshal(b, &doc) != nil {
		t.Fatalf("result: %v", err)
	}
	if doc.Verdict.Bottleneck != "log-rate" {
		t.Fatalf("verdict %q, want log-rate:\n%s", doc.Verdict.Bottleneck, stdout)
	}
	best := 0.0
	for _, s := range doc.Steps {
		best = max(best, s.AchievedPerSec)
	}
	found := false
	for _, s := range doc.Verdict.Suggestions {
		if !strings.HasPrefix(s.Action, "the next size up, azure-2014-s1") {
			continue
		}
		found = true
		if s.PredictedGain == nil || *s.PredictedGain < 2.2 || *s.PredictedGain > 2.35 || s.PredictedRequestsPerSec == nil ||
			math.Abs(*s.PredictedRequestsPerSec-best**s.PredictedGain) > 1 {
			t.Errorf("next tier: gain %v, %v req/s; want about 2.27 × the best step's %.1f/s", s.PredictedGain, s.PredictedRequestsPerSec, best)
		}
	}
	if !found {
		t.Errorf("no next tier suggested: %+v\n%s", doc.Verdict.Suggestions, stdout)
	}
}

// TestEmulateHeldWriter: SQLite updates by 4 writers on a table larger than
// its page cache, the data file held to 500 IOPS. The writers wait for
// SQLite's one write lock while its holder waits on the data file, so the
// verdict is the storage queue (its lock waits counted as waits for the
// data file), not contention, with the emulated limit as evidence and the
// next size up suggested; compare pairs a run at that size with the
// suggestion and shows the predicted gain beside the measured one. The
// first is repeated: a repeat's verdict estimates the device's latency
// from its runs' intervals (it had none: storage-queue "not applicable").
func TestEmulateHeldWriter(t *testing.T) {
	dir := t.TempDir()
	run := func(profile, out string, more ...string) string {
		t.Helper()
		code, stdout, stderr := runCLI(t, context.Background(), append([]string{"run", "updates", "--rows", "50000", "-c", "4", "--no-probe",
			"--db", "sqlite:" + filepath.Join(dir, profile+".db"), "--emulate", profile, "--out", filepath.Join(dir, out)}, more...)...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		return stdout
	}
	stdout := run("azure-mi-gp-file-128g", "a.json", "-T", "2s", "--repeat", "2")
	var doc struct {
		Verdict struct {
			Bottleneck string   `json:"bottleneck"`
			Evidence   []string `json:"evidence"`
		} `json:"verdict"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "a.json"))
	if err != nil || json.Unmarshal(b, &doc) != nil {
		t.Fatalf("result: %v", err)
	}
	ev := strings.Join(doc.Verdict.Evidence, "\n")
	if doc.Verdict.Bottleneck != "storage-queue" || !strings.Contains(ev, "waits for SQLite's one writer while it waited on the data file") {
		t.Fatalf("verdict %q, want storage-queue with the writers' lock waits counted as the data file's:\n%s", doc.Verdict.Bottleneck, stdout)
	}
	if !strings.Contains(ev, "IOPS limit of azure-mi-gp-file-128g, held by --emulate") || !strings.Contains(stdout, "try the next size up, azure-mi-gp-file-256g") {
		t.Fatalf("no emulated limit in the evidence, or no next size suggested:\n%s", stdout)
	}
	run("azure-mi-gp-file-256g", "b.json", "-T", "3s")
	code, out, stderr := runCLI(t, context.Background(), "compare", filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json"))
	if code != 0 || !regexp.MustCompile(`A → B \(--emulate azure-mi-gp-file-128g → azure-mi-gp-file-256g\): predicted ×2\.\d+ by A's verdict .*measured ×`).MatchString(out) {
		t.Fatalf("compare: exit %d %s, want the next size's prediction beside its measurement:\n%s", code, stderr, out)
	}
}

// TestBatchCheck: single inserts at full durability on SQLite are told to
// batch (per row: "rows/s"); a run with --batch 10 is paired with that
// suggestion by compare, which measures the gain in rows/s, as the
// prediction is per row (it had divided requests/s: ten rows a request
// read as a loss).
func TestBatchCheck(t *testing.T) {
	dir := t.TempDir()
	db := "sqlite:" + filepath.Join(dir, "b.db")
	code, stdout, stderr := runCLI(t, context.Background(), "run", "single-inserts", "--durability", "full", "-T", "2s", "--no-probe", "--db", db, "--out", filepath.Join(dir, "a.json"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !regexp.MustCompile(`try batch 10 rows per commit \(at least\): predicted ×[0-9.]+ \(≈ [0-9,.]+ rows/s\)`).MatchString(stdout) {
		t.Fatalf("no batching suggested in rows/s:\n%s", stdout)
	}
	if code, _, stderr := runCLI(t, context.Background(), "run", "single-inserts", "--durability", "full", "--batch", "10", "-T", "2s", "--no-probe", "--db", db, "--out", filepath.Join(dir, "b.json")); code != 0 {
		t.Fatalf("--batch 10: exit %d: %s", code, stderr)
	}
	code, out, stderr := runCLI(t, context.Background(), "compare", filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json"))
	if code != 0 || !regexp.MustCompile(`A → B \(rows_per_transaction 1 → 10\): predicted ×[0-9.]+ by A's verdict \(try batch 10 rows per commit \(at least\)\), measured ×[0-9.]+ \(rows/s B ÷ A\)`).MatchString(out) {
		t.Fatalf("compare: exit %d %s, want the batching check in rows/s:\n%s", code, stderr, out)
	}
}

// TestEmulateThreadsRamp: a thread ramp holds every step to the profile
// (HammerDB's autopilot on a tier): each step's log rate stays at the
// limit or under it, the WAL waited for it, and each step's verdict and
// the run's name the log rate. The data loads at full speed.
func TestEmulateThreadsRamp(t *testing.T) {
	dir := t.TempDir()
	prof := filepath.Join(dir, "slow-log.yaml")
	const limit = 0.25 // MiB/s
	if err := os.WriteFile(prof, []byte("name: slow-log\ntitle: a slow log\nsource: this test\nsource_date: 2026-11-28\nlimits:\n  log_mb_per_sec: 0.25\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, stdout := runFull(t, "run", "single-inserts", "--threads-ramp", "1,2", "--step", "2s", "--db", "sqlite:"+filepath.Join(dir, "e.db"), "--emulate", prof)
	if !strings.Contains(stdout, "emulating slow-log: log writes ≤ 0.25 MiB/s") || !strings.Contains(stdout, "waited for the emulated limits") {
		t.Errorf("console lacks the emulation lines:\n%s", stdout)
	}
	if len(r.Steps) != 2 {
		t.Fatalf("%d steps, want 2", len(r.Steps))
	}
	for i, st := range r.Steps {
		if st.LogMBPerSec == nil || *st.LogMBPerSec > limit*1.1 {
			t.Errorf("step %d: log %v MiB/s, want at most the limit %.2f", i+1, st.LogMBPerSec, limit)
		}
		if st.Verdict == nil || st.Verdict.Bottleneck != "log-rate" {
			t.Errorf("step %d: verdict %+v, want log-rate", i+1, st.Verdict)
		}
	}
	if r.Verdict == nil || r.Verdict.Bottleneck != "log-rate" || !strings.Contains(strings.Join(r.Verdict.Evidence, "|"), "the 0.25 MiB/s limit of slow-log, held by --emulate") {
		t.Errorf("verdict %+v, want log-rate at the emulated limit", r.Verdict)
	}
}
