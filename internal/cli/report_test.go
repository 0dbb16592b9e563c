package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	fxFull    = "../htmlreport/testdata/full.json"
	fxRelaxed = "../htmlreport/testdata/relaxed.json"
	fxRamp    = "../htmlreport/testdata/ramp.json"
)

func TestReportCmd(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	out := filepath.Join(dir, "r.html")
	code, stdout, errs := runCLI(t, ctx, "report", fxRamp, fxFull, "-o", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(stdout, "written to "+out) {
		t.Errorf("stdout %q does not say where the report went", stdout)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	html := string(b)
	for _, want := range []string{"<h2>Comparison</h2>", `aria-label="Requested vs achieved rate (LT)"`, "<h3>Verdict</h3>"} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %q", want)
		}
	}

	// --csv and --json without -o: no HTML, JSON alone on stdout.
	csvDir := filepath.Join(dir, "csv")
	wd, _ := os.Getwd()
	code, stdout, errs = runCLI(t, ctx, "report", fxRamp, "--csv", csvDir, "--json")
	if code != 0 {
		t.Fatalf("--csv --json: exit %d: %s", code, errs)
	}
	var sums []map[string]any
	if err := json.Unmarshal([]byte(stdout), &sums); err != nil || len(sums) != 1 || sums[0]["max_sustained_rate"] != 2000.0 {
		t.Errorf("--json: %v\n%s", err, stdout)
	}
	if _, err := os.Stat(filepath.Join(wd, "report.html")); err == nil {
		t.Error("--csv/--json wrote report.html without -o")
	}
	for _, f := range []string{"ramp.intervals.csv", "ramp.steps.csv"} {
		if _, err := os.Stat(filepath.Join(csvDir, f)); err != nil {
			t.Errorf("--csv: %v", err)
		}
	}
}

func TestReportCmdDefaultOutput(t *testing.T) {
	abs, err := filepath.Abs(fxFull)
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	code, stdout, errs := runCLI(t, context.Background(), "report", abs)
	if code != 0 || !strings.Contains(stdout, "report.html") {
		t.Fatalf("exit %d: %s%s", code, stdout, errs)
	}
	if _, err := os.Stat("report.html"); err != nil {
		t.Error(err)
	}
}

func TestReportAndCompareBadInput(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	notResult := filepath.Join(dir, "other.json")
	if err := os.WriteFile(notResult, []byte(`{"hello": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	broken := filepath.Join(dir, "broken.json")
	if err := os.WriteFile(broken, []byte(`{"schema": `), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		name string // the file the error must name
	}{
		{[]string{"report"}, ""},
		{[]string{"report", fxFull, notResult, "-o", filepath.Join(dir, "x.html")}, notResult},
		{[]string{"report", broken, "-o", filepath.Join(dir, "x.html")}, broken},
		{[]string{"report", filepath.Join(dir, "missing.json")}, "missing.json"},
		{[]string{"report", fxFull, "-o", filepath.Join(dir, "no-such-dir", "r.html")}, "no-such-dir"},
		{[]string{"report", fxFull, "--csv", notResult}, "--csv"},
		{[]string{"compare", fxFull}, ""},
		{[]string{"compare", fxFull, notResult}, notResult},
		{[]string{"compare", fxFull, fxRelaxed, "-o", "x.html"}, ""},
	} {
		code, _, errs := runCLI(t, ctx, c.args...)
		if code != ExitUsage || strings.Count(strings.TrimSpace(errs), "\n") != 0 || !strings.Contains(errs, c.name) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line naming %q", c.args, code, errs, c.name)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "x.html")); err == nil {
		t.Error("a failed report left a file behind")
	}
}

func TestCompareCmd(t *testing.T) {
	ctx := context.Background()
	code, out, errs := runCLI(t, ctx, "compare", fxFull, fxRelaxed)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"req/s", "log syncs/req", "B/A", "predicted ×", "measured ×", "durability full → relaxed"} {
		if !strings.Contains(out, want) {
			t.Errorf("compare output lacks %q:\n%s", want, out)
		}
	}
	html := filepath.Join(t.TempDir(), "c.html")
	code, out, errs = runCLI(t, ctx, "compare", fxFull, fxRelaxed, "--html", "-o", html)
	if code != 0 || !strings.Contains(out, "written to "+html) {
		t.Fatalf("--html: exit %d: %s%s", code, out, errs)
	}
	b, err := os.ReadFile(html)
	if err != nil || !strings.Contains(string(b), "prediction vs measurement") {
		t.Errorf("--html: %v", err)
	}
}

// TestResultDirectory: a directory given to compare or report stands for
// the ceiling results in it, in name order; other JSON there is passed
// over; a directory without results is a one-line usage error.
func TestResultDirectory(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	copyFile := func(from, to string) {
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, to), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Name order puts full first, whatever the order of creation.
	copyFile(fxRelaxed, "20240102-relaxed.json")
	copyFile(fxFull, "20240101-full.json")
	if err := os.WriteFile(filepath.Join(dir, "host.json"), []byte(`{"name": "this-host", "cores": 2}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI(t, ctx, "compare", dir)
	if code != 0 {
		t.Fatalf("compare DIR: exit %d: %s", code, errs)
	}
	a, b := strings.Index(out, "A  "+filepath.Join(dir, "20240101-full.json")), strings.Index(out, "B  "+filepath.Join(dir, "20240102-relaxed.json"))
	if a < 0 || b < a || strings.Contains(out, "host.json") || !strings.Contains(out, "durability full → relaxed") {
		t.Fatalf("compare DIR: want full as A, relaxed as B, host.json left out:\n%s", out)
	}
	html := filepath.Join(t.TempDir(), "r.html")
	code, out, errs = runCLI(t, ctx, "report", dir, fxRamp, "-o", html)
	if code != 0 || !strings.Contains(out, "report of 3 results") {
		t.Fatalf("report DIR FILE: exit %d: %s%s", code, out, errs)
	}
	// --out, as run and profile-host call it, names the file too.
	html = filepath.Join(t.TempDir(), "one.html")
	code, out, errs = runCLI(t, ctx, "report", fxRamp, "--out", html)
	if _, err := os.Stat(html); code != 0 || err != nil || !strings.Contains(out, "report of 1 result written to "+html) {
		t.Fatalf("report FILE --out: exit %d, %v: %s%s", code, err, out, errs)
	}
	html = filepath.Join(t.TempDir(), "cmp.html")
	code, out, errs = runCLI(t, ctx, "compare", fxRamp, fxRamp, "--html", "--out", html)
	if _, err := os.Stat(html); code != 0 || err != nil {
		t.Fatalf("compare --html --out: exit %d, %v: %s%s", code, err, out, errs)
	}

	empty := t.TempDir()
	if err := os.WriteFile(filepath.Join(empty, "host.json"), []byte(`{"name": "this-host"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"report", empty}, {"compare", empty}} {
		code, _, errs := runCLI(t, ctx, args...)
		if code != ExitUsage || strings.Count(strings.TrimSpace(errs), "\n") != 0 || !strings.Contains(errs, "holds no ceiling result") {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line saying the directory holds no result", args, code, errs)
		}
	}
	// A broken file among the results is named, not passed over.
	if err := os.WriteFile(filepath.Join(dir, "20240103-broken.json"), []byte(`{"schema": `), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := runCLI(t, ctx, "compare", dir); code != ExitUsage || !strings.Contains(errs, "20240103-broken.json") {
		t.Errorf("broken file in DIR: exit %d, stderr %q", code, errs)
	}
}
