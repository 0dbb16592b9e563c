package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ceiling-db/ceiling/internal/predict"
	"github.com/ceiling-db/ceiling/internal/report"
)

func TestPredictCmd(t *testing.T) {
	ctx := context.Background()
	fixture := "../predict/testdata/result.json"
	code, out, errs := runCLI(t, ctx, "predict", fixture)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	ps, err := predict.Shipped()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		n := 0
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(line, p.Name+" ") {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%d rows for %s in\n%s", n, p.Name, out)
		}
	}
	if !strings.Contains(out, "concurrency") {
		t.Errorf("no commit-flush caveat in\n%s", out)
	}
	// A note that holds for some profiles only says for which (here
	// every profile but the one that limits all the resources measured).
	if !strings.Contains(out, "\nnote (all but azure-2014-basic): a prediction is an upper bound") ||
		!strings.Contains(out, "\nnote: the run was commit-flush bound (latency-bound at 1 thread)") ||
		!strings.Contains(out, "on postgres, 1 thread, measured") {
		t.Errorf("notes or header in\n%s", out)
	}

	code, out, errs = runCLI(t, ctx, "predict", fixture, "--profile", "azure-sql-gp-4")
	if code != 0 || !strings.Contains(out, "bound by log-mb") || !strings.Contains(out, "not modelled") {
		t.Errorf("detail: exit %d\n%s%s", code, out, errs)
	}
	code, out, _ = runCLI(t, ctx, "predict", fixture, "--json")
	if code != 0 || !strings.HasPrefix(strings.TrimSpace(out), "[") {
		t.Errorf("--json: exit %d\n%s", code, out)
	}
	// A directory: its newest result, by start time, whatever the names;
	// other JSON is passed over.
	dir := t.TempDir()
	b, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	at := func(started, name string) []byte {
		var r map[string]any
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		r["started_at"], r["workload"].(map[string]any)["name"] = started, name
		out, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	for name, data := range map[string][]byte{"z-older.json": at("2001-01-01T00:00:00Z", "updates"), "a-newer.json": at("2026-01-01T00:00:00Z", "single-inserts"),
		"host.json": []byte(`{"fsync_ms": 1}`)} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errs = runCLI(t, ctx, "predict", dir, "--profile", "azure-sql-gp-4")
	if code != 0 || !strings.Contains(out, "is a directory: its newest result is taken\nresult "+filepath.Join(dir, "a-newer.json")+": single-inserts") {
		t.Errorf("directory: exit %d\n%s%s", code, out, errs)
	}
	code, _, errs = runCLI(t, ctx, "predict", t.TempDir())
	if code != 2 || !strings.Contains(errs, "holds no ceiling result") {
		t.Errorf("empty directory: exit %d %s", code, errs)
	}

	code, out, _ = runCLI(t, ctx, "profiles")
	if code != 0 || !strings.Contains(out, "azure-mi-gp-file-128g") || !strings.Contains(out, "source:") {
		t.Errorf("profiles: exit %d\n%s", code, out)
	}

	for _, args := range [][]string{
		{"predict", fixture, "--profile", "no-such-profile"},
		{"predict", "no-such-result.json"},
		{"predict"},
		{"predict", "../predict/profiles/azure-sql-gp-2.yaml"},
	} {
		code, _, errs := runCLI(t, ctx, args...)
		if code != ExitUsage || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line", args, code, errs)
		}
	}
}

// TestMeasuredText: predict's "measured" figure of a ramp or knee search
// leads with what the steps reached, not their mean.
func TestMeasuredText(t *testing.T) {
	a, b := 1000.0, 4800.0
	knee := 4960.0
	r := &report.Result{Summary: report.Summary{RequestsPerSec: 2219.4}}
	if got := measuredText(r); got != "2219 req/s" {
		t.Errorf("closed loop: %q", got)
	}
	r.Steps = []report.Step{{Rate: 1000, AchievedPerSec: &a}, {Rate: 5000, AchievedPerSec: &b}}
	if got := measuredText(r); got != "at most 4800 req/s in a step (2219 req/s on average over its 2 steps)" {
		t.Errorf("ramp: %q", got)
	}
	r.Knee = &report.Knee{Rate: &knee, SLOApplied: "p99<20ms,late<1%,errors<1%"}
	if got := measuredText(r); got != "knee 4960 req/s for p99<20ms,late<1%,errors<1% (2219 req/s on average over its 2 probes)" {
		t.Errorf("knee: %q", got)
	}
}
