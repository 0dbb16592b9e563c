package htmlreport

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"flag"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ceiling-db/ceiling/internal/diagnose"
	"github.com/ceiling-db/ceiling/internal/report"
	"github.com/ceiling-db/ceiling/internal/target"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// The fixtures were written by the real binary (see testdata/README.md).
const (
	fxFull    = "testdata/full.json"        // single-inserts, sqlite, --durability full, 5 s
	fxRelaxed = "testdata/relaxed.json"     // the same with --durability relaxed
	fxRamp    = "testdata/ramp.json"        // --rates 500:8000:x2 --step 3s, durability full
	fxRepeat  = "testdata/repeat.json"      // -T 3s --repeat 3, durability full
	fxPG      = "testdata/pg.json"          // PostgreSQL, 4 threads: wait categories and server CPU
	fxBatches = "testdata/batches.json"     // bulk-load --batches 10:1000:x10 --step 2s --no-index
	fxRampRep = "testdata/ramp-repeat.json" // --rates 500:2000:x2 --step 2s --repeat 2
	fxTPCC    = "testdata/tpcc-pg.json"     // tpcc on PostgreSQL with --isolate 2s
	fxKnee    = "testdata/knee-mysql.json"  // knee on MariaDB, 20-80/s, with one stall (a table lock) at 40/s
	fxThreads = "testdata/threads.json"     // --threads-ramp 1,2,4 --step 2s, durability full
)

func load(t *testing.T, paths ...string) []Input {
	t.Helper()
	var ins []Input
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var r report.Result
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		ins = append(ins, Input{Path: p, Result: &r})
	}
	return ins
}

func renderHTML(t *testing.T, ins []Input) string {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, ins); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

var (
	styleRE = regexp.MustCompile(`(?s)<style>.*?</style>`)
	svgRE   = regexp.MustCompile(`(?s)<svg class="chart" role="img" aria-label="([^"]*)".*?</svg>`)
)

// outline is the report without the CSS and the charts' drawing: the
// structure (headings, tables, verdicts) and one line per chart, so the
// golden files stay reviewable.
func outline(html string) string {
	s := styleRE.ReplaceAllString(html, "<style>…</style>")
	return svgRE.ReplaceAllString(s, `<svg chart="$1"/>`)
}

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/htmlreport -update to create it)", err)
	}
	if got != string(want) {
		gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := 0; i < max(len(gl), len(wl)); i++ {
			var g, w string
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(wl) {
				w = wl[i]
			}
			if g != w {
				t.Fatalf("%s differs at line %d:\n got: %s\nwant: %s\n(run go test ./internal/htmlreport -update if the change is intended)", path, i+1, g, w)
			}
		}
	}
}

var cases = []struct {
	name   string
	inputs []string
	charts []string // chart titles that must be present
}{
	{"full", []string{fxFull}, []string{"Throughput", "Latency percentiles", "Log writes", "Data-file IOPS", "Data-file latency vs device latency", "CPU", "Wait categories"}},
	{"ramp", []string{fxRamp}, []string{"Throughput", "Latency percentiles", "Log writes", "Requested vs achieved rate (LT)", "Achieved rate and log writes by step", "Latency by step"}},
	{"repeat", []string{fxRepeat}, []string{"Throughput", "Requests/s by run", "p99 latency by run"}},
	{"pg", []string{fxPG}, []string{"Throughput", "Log writes", "CPU", "Wait categories"}},
	{"batches", []string{fxBatches}, []string{"Throughput by batch size", "Latency by batch size", "Log writes"}},
	{"threads", []string{fxThreads}, []string{"Throughput by thread count", "Latency by thread count", "Log writes"}},
	{"threads-vs-ramp", []string{fxThreads, fxRamp}, []string{"req/s by result"}},
	{"ramp-repeat", []string{fxRampRep}, []string{"Requested vs achieved rate (LT)", "Requests/s by run"}},
	{"knee", []string{fxKnee}, []string{"Requested vs achieved rate (LT)", "Latency by step", "Log device vda"}},
	{"multi", []string{fxFull, fxRelaxed, fxRepeat}, []string{"req/s by result", "p99 ms by result", "log syncs/req by result"}},
}

func TestReportGolden(t *testing.T) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			html := renderHTML(t, load(t, c.inputs...))
			var titles []string
			for _, m := range svgRE.FindAllStringSubmatch(html, -1) {
				titles = append(titles, m[1])
			}
			for _, want := range c.charts {
				found := false
				for _, got := range titles {
					found = found || got == want
				}
				if !found {
					t.Errorf("no chart %q among %q", want, titles)
				}
			}
			checkGolden(t, c.name+".html.golden", outline(html))
		})
	}
}

func TestReportSections(t *testing.T) {
	html := renderHTML(t, load(t, fxRamp))
	for _, want := range []string{
		"<h2>Test definition and target</h2>", "<h2>Verdict</h2>", "<h2>Summary</h2>",
		"<h2>Throughput and latency over time</h2>", "<h2>Server evidence over time</h2>", "<h2>Open-loop steps (LT)</h2>",
		`class="sat"`, "from step 4 (4000/s), the lowest saturated rate",
	} {
		if !strings.Contains(html, want) {
			t.Errorf("ramp report lacks %q", want)
		}
	}
	if n := len(html); n > 400<<10 {
		t.Errorf("ramp report is %d KB, want a few hundred at most", n>>10)
	}
	multi := renderHTML(t, load(t, fxFull, fxRelaxed))
	for _, want := range []string{"<h2>Comparison</h2>", "<h3>Verdict</h3>", "prediction vs measurement", "within a factor of 2"} {
		if !strings.Contains(multi, want) {
			t.Errorf("comparison report lacks %q", want)
		}
	}
}

func TestReportDeterministic(t *testing.T) {
	ins := load(t, fxFull, fxRamp, fxPG)
	if a, b := renderHTML(t, ins), renderHTML(t, ins); a != b {
		t.Error("two renderings of the same results differ")
	}
}

// allowedURLs are the only URLs a report may contain: XML namespaces,
// which are names, not fetched.
var allowedURLs = map[string]bool{"http://www.w3.org/2000/svg": true, "http://www.w3.org/1999/xlink": true}

var urlRE = regexp.MustCompile(`(?i)(https?:)?//[a-z0-9.-]+\.[a-z]{2,}[^\s"'<>)]*`)

func TestReportHasNoExternalReferences(t *testing.T) {
	var all []Input
	for _, p := range []string{fxFull, fxRelaxed, fxRamp, fxRepeat, fxPG} {
		all = append(all, load(t, p)...)
	}
	docs := map[string]string{"all": renderHTML(t, all)}
	for _, in := range all {
		docs[in.Path] = renderHTML(t, []Input{in})
	}
	for name, html := range docs {
		low := strings.ToLower(html)
		for _, bad := range []string{"<script", "<link", "@import", "url(", "<img", "<iframe", "<object", "<embed", "src=", "@font-face"} {
			if strings.Contains(low, bad) {
				t.Errorf("%s: contains %q", name, bad)
			}
		}
		for _, u := range urlRE.FindAllString(html, -1) {
			if !allowedURLs[u] {
				t.Errorf("%s: external reference %q", name, u)
			}
		}
		for _, m := range regexp.MustCompile(`href="([^"]*)"`).FindAllStringSubmatch(html, -1) {
			if !strings.HasPrefix(m[1], "#") {
				t.Errorf("%s: link %q leaves the page", name, m[1])
			}
		}
	}
}

func TestCompareFullVsRelaxed(t *testing.T) {
	c := Compare(load(t, fxFull, fxRelaxed))
	row := func(key string) Row {
		for _, r := range c.Rows {
			if r.Key == key {
				return r
			}
		}
		t.Fatalf("no row %s", key)
		return Row{}
	}
	req := row("requests_per_sec")
	if ch := req.Cells[1].Change; ch == nil || *ch < 2 {
		t.Errorf("req/s change %v, want relaxed ≥ 2× full", ch)
	}
	syncs := row("log_syncs_per_op")
	if ch := syncs.Cells[1].Change; ch == nil || *ch > 0.1 {
		t.Errorf("log syncs/req change %v, want relaxed < 0.1× full", ch)
	}
	if req.Cells[1].Spread != "" {
		t.Errorf("spread %q without repeats, want none", req.Cells[1].Spread)
	}
	if len(c.Checks) != 1 {
		t.Fatalf("%d prediction checks, want 1: %+v", len(c.Checks), c.Checks)
	}
	ch := c.Checks[0]
	if ch.From != 0 || ch.To != 1 || ch.Measured == nil || !strings.Contains(ch.Action, "durability relaxed") {
		t.Errorf("check %+v", ch)
	}
	if math.Abs(*ch.Measured-*req.Cells[1].Change) > 1e-9 {
		t.Errorf("measured gain %v, want the req/s ratio %v", *ch.Measured, *req.Cells[1].Change)
	}
	var buf bytes.Buffer
	if err := c.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"predicted ×", "measured ×", "log syncs/req", "req/s"} {
		if !strings.Contains(out, want) {
			t.Errorf("compare output lacks %q:\n%s", want, out)
		}
	}
	checkGolden(t, "compare-full-relaxed.txt.golden", out)

	// The other way round: the suggestion is B's, applied by A.
	c = Compare(load(t, fxRelaxed, fxFull))
	if len(c.Checks) != 1 || c.Checks[0].From != 1 || c.Checks[0].To != 0 {
		t.Errorf("reversed checks %+v", c.Checks)
	}
}

// TestCompareMariaDBSyncs: MariaDB counts no log syncs apart (its log
// fsyncs are in Innodb_data_fsyncs), so full against relaxed shows in the
// data-file syncs and the log device's flushes per request, which compare
// must list (it listed neither, and the syncs row was all n/a).
func TestCompareMariaDBSyncs(t *testing.T) {
	ins := load(t, fxFull, fxRelaxed)
	for i, v := range []float64{1.004, 0.004} {
		r := ins[i].Result
		r.Costs.LogSyncsPerOp = nil
		r.Costs.DataSyncsPerOp = &v
		flushes := v
		r.LogDevice = &report.LogDeviceStats{Name: "vda", FlushesPerOp: &flushes}
	}
	c := Compare(ins)
	for _, key := range []string{"data_syncs_per_op", "log_device_flushes_per_op"} {
		var found bool
		for _, r := range c.Rows {
			if r.Key != key {
				continue
			}
			found = true
			if ch := r.Cells[1].Change; ch == nil || math.Abs(*ch-0.004/1.004) > 1e-9 {
				t.Errorf("%s: change %v, want %v", key, ch, 0.004/1.004)
			}
		}
		if !found {
			t.Errorf("no %s row", key)
		}
	}
	var buf bytes.Buffer
	if err := c.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`data-file syncs/req +1\.004 +0\.00400 `, `log dev flushes/req +1\.004 +0\.00400 `} {
		if !regexp.MustCompile(want).MatchString(buf.String()) {
			t.Errorf("compare output lacks %q:\n%s", want, buf.String())
		}
	}
}

func TestCompareWithRepeats(t *testing.T) {
	c := Compare(load(t, fxRepeat, fxRelaxed))
	var out bytes.Buffer
	if err := c.WriteText(&out); err != nil {
		t.Fatal(err)
	}
	for _, r := range c.Rows {
		if r.Key == "requests_per_sec" {
			if r.Cells[1].Spread != Beyond {
				t.Errorf("relaxed vs repeated full: %q, want %q", r.Cells[1].Spread, Beyond)
			}
			if want := "prediction interval"; !strings.Contains(r.Cells[1].SpreadWhy, want) {
				t.Errorf("why %q lacks %q", r.Cells[1].SpreadWhy, want)
			}
		}
	}
	checkGolden(t, "compare-repeat-relaxed.txt.golden", out.String())
}

func TestSpreadTest(t *testing.T) {
	st := func(mean, sd float64, n int) *report.Stat { return &report.Stat{Mean: mean, StdDev: &sd, N: n} }
	for _, c := range []struct {
		name   string
		a, b   float64
		sa, sb *report.Stat
		want   string
	}{
		{"no repeats", 100, 200, nil, nil, ""},
		{"single run inside the spread", 100, 104, st(100, 5, 3), nil, Within},
		// t(2)=4.303, s·√(1+1/3)=5.77: the limit is 24.8.
		{"single run beyond the spread", 100, 126, st(100, 5, 3), nil, Beyond},
		{"repeated other side", 126, 100, nil, st(100, 5, 3), Beyond},
		{"welch within", 100, 103, st(100, 3, 5), st(103, 3, 5), Within},
		{"welch beyond", 100, 120, st(100, 3, 5), st(120, 3, 5), Beyond},
		{"no spread, equal", 0, 0, st(0, 0, 3), st(0, 0, 3), Within},
		{"no spread, differ", 1, 2, st(1, 0, 3), st(2, 0, 3), Beyond},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got, why := spreadTest(c.a, c.b, c.sa, c.sb); got != c.want {
				t.Errorf("got %q (%s), want %q", got, why, c.want)
			}
		})
	}
}

func TestWriteCSV(t *testing.T) {
	ins := load(t, fxRamp, fxRepeat)
	dir := t.TempDir()
	paths, err := WriteCSV(dir, ins)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"ramp.intervals.csv", "ramp.steps.csv", "repeat.intervals.csv", "repeat.runs.csv"}
	if len(paths) != len(want) {
		t.Fatalf("wrote %q, want %q", paths, want)
	}
	read := func(name string) [][]string {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		rows, err := csv.NewReader(f).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		return rows
	}
	iv := read("ramp.intervals.csv")
	if got, want := len(iv), len(ins[0].Result.Intervals)+1; got != want {
		t.Errorf("ramp intervals: %d rows, want %d", got, want)
	}
	col := func(rows [][]string, name string) int {
		for i, h := range rows[0] {
			if h == name {
				return i
			}
		}
		t.Fatalf("no column %s in %q", name, rows[0])
		return -1
	}
	if c := col(iv, "server_cpu_pct_of_cores"); iv[1][c] != "" {
		t.Errorf("sqlite server CPU %q, want empty (not measured)", iv[1][c])
	}
	if c := col(iv, "log_mb_per_sec"); iv[1][c] == "" {
		t.Error("log MB/s empty, want measured")
	}
	st := read("ramp.steps.csv")
	if len(st) != 6 || st[1][col(st, "rate")] != "500" || st[5][col(st, "saturated")] != "true" {
		t.Errorf("steps:\n%q", st)
	}
	if c := col(st, "service_mean_ms"); st[1][c] != "" {
		t.Errorf("service time %q in a result from before it was measured, want empty", st[1][c])
	}
	runs := read("repeat.runs.csv")
	if len(runs) != 4 {
		t.Errorf("runs: %d rows, want 4", len(runs))
	}
	// Later columns come last: the others kept their places.
	if h := iv[0]; h[len(h)-2] != "fsyncs_per_sec" || iv[1][len(h)-2] != "" || h[len(h)-1] != "wait_replication_ms_per_sec" || iv[1][len(h)-1] != "" ||
		h[len(h)-3] != "wait_client_ms_per_sec" {
		t.Errorf("intervals: last columns %q = %q, want wait_client, fsyncs_per_sec, wait_replication; empty for sqlite", h[len(h)-3:], iv[1][len(h)-3:])
	}
	// A knee result measured the service time of its probes; on MariaDB
	// its steps carry the fsyncs of log and data together.
	kin := load(t, fxKnee)
	kin[0].Result.Steps[0].FsyncsPerSec = f64(1003)
	paths, err = WriteCSV(dir, kin)
	if err != nil || len(paths) != 2 {
		t.Fatalf("knee CSV: %q, %v", paths, err)
	}
	kn := read("knee-mysql.steps.csv")
	if h := kn[0]; h[len(h)-1] != "fsyncs_per_sec" || kn[1][len(h)-1] != "1003" {
		t.Errorf("knee steps: last column %q = %q, want fsyncs_per_sec 1003", h[len(h)-1], kn[1][len(h)-1])
	}
	for i := 1; i < len(kn); i++ {
		mean, err1 := strconv.ParseFloat(kn[i][col(kn, "service_mean_ms")], 64)
		p99, err2 := strconv.ParseFloat(kn[i][col(kn, "service_p99_ms")], 64)
		if err1 != nil || err2 != nil || !(mean > 0 && p99 > 0) {
			t.Errorf("knee step %d: service mean %q p99 %q", i, kn[i][col(kn, "service_mean_ms")], kn[i][col(kn, "service_p99_ms")])
		}
	}
}

func TestSummaries(t *testing.T) {
	s := Summaries(load(t, fxRamp, fxFull))
	if s[0].MaxSustainedRate == nil || *s[0].MaxSustainedRate != 2000 {
		t.Errorf("ramp max sustained rate %v, want 2000 (4000 saturated)", s[0].MaxSustainedRate)
	}
	if s[1].MaxSustainedRate != nil || s[1].Bottleneck == nil || *s[1].Bottleneck != "commit-flush" {
		t.Errorf("full: %+v", s[1])
	}
	if len(s[1].Suggestions) == 0 || s[1].Suggestions[0].PredictedGain == nil {
		t.Errorf("full: suggestions %+v", s[1].Suggestions)
	}
	b, err := json.Marshal(s)
	if err != nil || !bytes.Contains(b, []byte(`"late_pct":null`)) || !bytes.Contains(b, []byte(`"knee_rate":null`)) {
		t.Errorf("closed loop late_pct and knee_rate should be null: %s", b)
	}
	k := Summaries(load(t, fxKnee))[0]
	if k.KneeRate == nil || *k.KneeRate != 80 || k.KneeSLO == nil || *k.KneeSLO != "p99<300ms,late<1%,errors<1%" || k.MaxSustainedRate != nil {
		t.Errorf("knee summary: rate %v slo %v max sustained %v", k.KneeRate, k.KneeSLO, k.MaxSustainedRate)
	}
	if s[0].PeakThreads != nil || bytes.Contains(b, []byte(`"peak_threads"`)) {
		t.Errorf("peak_threads on results without a thread ramp: %s", b)
	}
	th := load(t, fxThreads)
	ts := Summaries(th)[0]
	best := th[0].Result.Steps[0]
	for _, st := range th[0].Result.Steps {
		if *st.AchievedPerSec > *best.AchievedPerSec {
			best = st
		}
	}
	if ts.PeakThreads == nil || *ts.PeakThreads != *best.Threads || *ts.PeakRequestsPerSec != *best.AchievedPerSec {
		t.Errorf("thread ramp: peak %v threads at %v req/s, want %d at %v", ts.PeakThreads, ts.PeakRequestsPerSec, *best.Threads, *best.AchievedPerSec)
	}
}

// TestWorkloadFiguresAndBatchSteps renders what other workloads add:
// headline figures (tpcc nopm) and batch-size steps (bulk loads).
func TestWorkloadFiguresAndBatchSteps(t *testing.T) {
	ins := load(t, fxRamp)
	r := ins[0].Result
	r.Figures = map[string]float64{"nopm": 1234, "tpm": 2900, "new_order_rollbacks": 7}
	for i := range r.Steps {
		b := 10 << i
		r.Steps[i].Batch = &b
		r.Steps[i].Rate = 0
	}
	html := renderHTML(t, ins)
	if i, j := strings.Index(html, "<td>NOPM (new orders/min, counted from the database)</td><td>1,234</td>"), strings.Index(html, "<td>new order rollbacks</td><td>7</td>"); i < 0 || j < i {
		t.Errorf("figures not labelled, or the well-known ones not first (%d, %d)", i, j)
	}
	for _, want := range []string{"<td>TPM (the server&#39;s commits &#43; rollbacks/min)</td><td>2,900</td>", "Batch-size steps", `aria-label="Throughput by batch size"`, "batch (rows/request)"} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if strings.Contains(html, "Requested vs achieved rate (LT)") {
		t.Error("batch steps drawn as a rate ramp")
	}
	c := Compare(append(ins, load(t, fxFull)...))
	found := false
	for _, row := range c.Rows {
		if row.Key == "figure.nopm" {
			found = row.Cells[0].Text == "1,234" && row.Cells[1].Text == "n/a"
		}
	}
	if !found {
		t.Error("compare lacks the nopm figure (or shows a value for a result without it)")
	}
}

func TestNum(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want string
	}{{0, "0"}, {4150.2, "4,150"}, {1234567, "1,234,567"}, {123.45, "123.5"}, {12.345, "12.35"}, {0.0019, "0.00190"}, {0.939, "0.939"}, {0.019, "0.019"}, {0.000939, "0.000939"}, {0.00001234, "1.23e-05"}, {-2500, "-2,500"}, {math.NaN(), "n/a"}} {
		if got := num(c.v); got != c.want {
			t.Errorf("num(%v) = %q, want %q", c.v, got, c.want)
		}
	}
}

func TestReportRedactsDSN(t *testing.T) {
	ins := load(t, fxPG)
	ins[0].Result.Target.DSN = "postgres://bob:s3cretpw@db.example.com:5432/app"
	html := renderHTML(t, ins)
	if strings.Contains(html, "s3cretpw") {
		t.Error("the report shows the DSN's password")
	}
	if !strings.Contains(html, "bob") {
		t.Error("the report lost the DSN's user")
	}
}

// TestReportReadOnly: a run on a hot standby says so, and how much of the
// primary's WAL the standby replayed beside it.
func TestReportReadOnly(t *testing.T) {
	ins := load(t, fxPG)
	r := ins[0].Result
	r.Target.ReadOnly = "a hot standby: pg_is_in_recovery() is true"
	r.Evidence.PerSec["replay_bytes"] = 1.16e6
	r.Evidence.Counters["replay_bytes"] = 5.82e6
	html := renderHTML(t, ins)
	for _, want := range []string{"read-only server", "a hot standby: pg_is_in_recovery() is true", "hot standby: replayed 1.16 MB/s of the primary&#39;s WAL during the run (5.82 MB in all)"} {
		if !strings.Contains(html, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
}

func TestStackKeepsGaps(t *testing.T) {
	nan := math.NaN()
	got := stack([]Series{{Name: "a", Y: []float64{1, nan, 2}}, {Name: "b", Y: []float64{1, nan, 3}}})
	if got[1].Y[0] != 2 || got[1].Y[2] != 5 || !math.IsNaN(got[0].Y[1]) || !math.IsNaN(got[1].Y[1]) {
		t.Errorf("stack: %v %v, want [1 NaN 2] [2 NaN 5]", got[0].Y, got[1].Y)
	}
}

// TestIsolatedSection checks the section on the operations run alone
// (run --isolate): one row per transaction with its bottleneck, the share
// table, the comparison with the mix and each verdict; reports without
// isolated operations have no such section.
func TestIsolatedSection(t *testing.T) {
	ins := load(t, fxTPCC)
	r := ins[0].Result
	if len(r.Isolated) != 5 {
		t.Fatalf("fixture has %d operations alone, want 5", len(r.Isolated))
	}
	r.Isolated[2].SharePct[report.ShareLogBytes] = 1.77e-05 // order_status: a read, next to no log
	html := renderHTML(t, ins)
	for _, want := range []string{
		`<h2>Each operation alone</h2>`, "Each operation alone (costs per request)", "bottleneck alone",
		"Share of the mix, %", "weighted by the mix", "delivery alone: contention", "bounded by the undelivered orders",
		`aria-label="Share of the mix by resource"`, `class="glance">verdict: cpu · NOPM `,
	} {
		if !strings.Contains(html, want) {
			t.Errorf("tpcc report lacks %q", want)
		}
	}
	if strings.Contains(html, "e-0") {
		t.Error("a share printed in scientific notation")
	}
	for _, o := range r.Isolated {
		if !strings.Contains(html, "<td>"+o.Op+"</td>") && !strings.Contains(html, ">"+o.Op+"</td>") {
			t.Errorf("no row for %s", o.Op)
		}
	}
	if plain := renderHTML(t, load(t, fxPG)); strings.Contains(plain, "Each operation alone") {
		t.Error("a report without operations alone has the section")
	}
}

// TestLogDeviceNote: a result with its log device's figures shows them
// under the per-request costs; one without shows no such line.
func TestLogDeviceNote(t *testing.T) {
	ins := load(t, fxPG)
	if html := renderHTML(t, ins); strings.Contains(html, "Log device") {
		t.Fatal("a result without log_device has a log device line")
	}
	fl, ms, per, wms := 4889.0, 0.071, 1.0, 0.055
	ins[0].Result.LogDevice = &report.LogDeviceStats{Name: "vda", WritesPerSec: 10031, WriteMs: &wms, ReadsPerSec: 0.2,
		FlushesPerSec: &fl, FlushMs: &ms, FlushesPerOp: &per, BusyPct: 54}
	want := "Log device vda (kernel counters over the measured phase, the whole device): 4,889 flushes/s at 0.071 ms (1.00 per request), 10,031 writes/s at 0.055 ms, 0.2 reads/s, busy 54%"
	if html := renderHTML(t, ins); !strings.Contains(html, want) {
		t.Fatalf("report lacks %q", want)
	}
}

// TestThinkShare: a run whose workers paused (think times) says for how
// much of their time; one that did not has no such line.
func TestThinkShare(t *testing.T) {
	ins := load(t, fxPG)
	if html := renderHTML(t, ins); strings.Contains(html, "think times") {
		t.Fatal("a result without think times has a think-time line")
	}
	share := 0.989
	ins[0].Result.Client.ThinkShare = &share
	if html := renderHTML(t, ins); !strings.Contains(html, "think times</td><td>98.90% of the workers&#39; time (outside the latencies)") {
		t.Fatal("report lacks the workers' think-time share")
	}
	if sm := Summaries(ins); sm[0].ThinkShare == nil || *sm[0].ThinkShare != share {
		t.Errorf("report --json: think_share %v, want %v", sm[0].ThinkShare, share)
	}
}

// TestCheckAgreement: a point prediction agrees within a factor of 2; a
// lower bound ("(at least)") holds when the measured gain reaches it.
func TestCheckAgreement(t *testing.T) {
	m := func(v float64) *float64 { return &v }
	for _, c := range []struct {
		action             string
		predicted, measure float64
		want               string
	}{
		{"--durability relaxed", 2.6, 3.1, "within a factor of 2"},
		{"--durability relaxed", 2.6, 6, "the prediction was 2.3× too low"},
		{"--durability relaxed (estimate)", 6, 2, "the prediction was 3.0× too high"},
		{"--durability relaxed (at least)", 1.2, 1.5, "the lower bound held"},
		{"--durability relaxed (at least)", 1.2, 5, "the lower bound held"},
		{"--durability relaxed (at least)", 2, 1.5, "under the predicted lower bound (75% of it)"},
	} {
		if got := (Check{Action: c.action, Predicted: c.predicted, Measured: m(c.measure)}).Agreement(); got != c.want {
			t.Errorf("%s predicted ×%g, measured ×%g: %q, want %q", c.action, c.predicted, c.measure, got, c.want)
		}
	}
}

// TestKneeReport: a knee result's report leads with the search's answer,
// lists the probes in the order run with their re-runs, and names the
// transient failure (the fixture's 40/s probe, stalled by a table lock,
// passed when run again).
func TestKneeReport(t *testing.T) {
	ins := load(t, fxKnee)
	k := ins[0].Result.Knee
	if k == nil || k.Retries != 1 || len(k.TransientRates) != 1 || k.TransientRates[0] != 40 || len(k.Probes) != 4 {
		t.Fatalf("fixture's knee: %+v", k)
	}
	html := renderHTML(t, ins)
	for _, want := range []string{
		"<h2>Knee search</h2>", "<h2>Knee probes as open-loop steps (LT), in the order run</h2>",
		"knee search for p99&lt;300ms,late&lt;1%,errors&lt;1%: 4 open-loop probes of 2 s, 20 to 80 req/s",
		"at least 80/s — the SLO p99&lt;300ms,late&lt;1%,errors&lt;1% still holds at --max",
		"transient failures at 1 rate, passed when run again",
		`<td class="l">re-run 1</td>`, "p99 762.367ms ≥ 300ms",
		"a probe that broke the SLO was run again once, and its rate failed only if both runs did",
		"transient failures: 1 of 4 probes broke the SLO, and a re-run at the same rate passed:",
		"40/s (probe 2): p99 762.367ms ≥ 300ms; worst interval: p99 762 ms, max 787 ms, 1-2 s into the probe",
		"at 80/s (probe 4), the highest rate that met the SLO (none broke it)",
		"ceiling run single-inserts --rate 80 -T 10m",
	} {
		if !strings.Contains(html, want) {
			t.Errorf("knee report lacks %q", want)
		}
	}
	if strings.Contains(html, "open-loop ramp of") {
		t.Error("a knee search described as a ramp")
	}
	// Without re-runs there is no transient list.
	k.TransientRates = nil
	if html := renderHTML(t, ins); strings.Contains(html, "transient failures") {
		t.Error("transient failures reported with none in the result")
	}
}

// TestStepNearestRules: a step with no bottleneck names the rules it came
// nearest to in the steps' verdict column, as on the console; the
// caption names a step whose counters were corrected for PostgreSQL's
// late statistics.
func TestStepNearestRules(t *testing.T) {
	ins := load(t, fxKnee)
	st := &ins[0].Result.Steps[0]
	st.Verdict = &diagnose.Verdict{Bottleneck: diagnose.None, Evidence: []string{"no clear bottleneck: no rule matched",
		"nearest: commit-flush — log syncs are 35% of each request's time < 40%"}}
	if html := renderHTML(t, ins); !strings.Contains(html, "<td class=\"l\">none (nearest: commit-flush)</td>") {
		t.Error("the step's verdict cell does not name the nearest rule")
	}
	// A step whose verdict corrected PostgreSQL's late counters says so.
	k := 1.25
	ins[0].Result.Steps[1].StatsLagScale = &k
	if html := renderHTML(t, ins); !strings.Contains(html, "so step 2 counts part of a neighbour&#39;s log and commit figures") {
		t.Error("the steps' caption does not name the step whose counters lagged")
	}
}

// TestCompareKnee: comparing knee searches puts their answers (and the
// SLOs they answer) side by side.
func TestCompareKnee(t *testing.T) {
	ins := load(t, fxKnee, fxKnee)
	v := 160.0
	ins[1].Result.Knee.Rate = &v
	var out strings.Builder
	if err := Compare(ins).WriteText(&out); err != nil {
		t.Fatal(err)
	}
	var knee string
	for _, line := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(line, "knee req/s") {
			knee = line
		}
	}
	if f := strings.Fields(knee); len(f) < 5 || f[2] != "80.00" || f[3] != "160.0" || f[4] != "×2.00" {
		t.Errorf("knee row %q, want 80 and 160 (×2.00)\n%s", knee, out.String())
	}
	if n := strings.Count(out.String(), "knee search for p99<300ms,late<1%,errors<1%"); n != 2 {
		t.Errorf("the SLO named %d times, want once per result\n%s", n, out.String())
	}
	if out := Compare(load(t, fxFull, fxRelaxed)); len(out.Rows) > 0 {
		for _, r := range out.Rows {
			if strings.HasPrefix(r.Key, "knee") {
				t.Errorf("row %q without a knee result", r.Key)
			}
		}
	}
}

// TestStepsNOPM: a TPC-C ramp's HTML step table, by thread count or by
// requested rate, has a NOPM column; the fixtures' single-insert ramps
// have none.
func TestStepsNOPM(t *testing.T) {
	for _, fx := range []string{fxThreads, fxRamp} {
		ins := load(t, fx)
		if html := renderHTML(t, ins); strings.Contains(html, "<th>NOPM</th>") {
			t.Errorf("%s: a NOPM column without TPC-C", fx)
		}
		for i := range ins[0].Result.Steps {
			ins[0].Result.Steps[i].Figures = map[string]float64{"nopm": 1000 * float64(i+1)}
		}
		html := renderHTML(t, ins)
		if !strings.Contains(html, "<th>NOPM</th>") || !strings.Contains(html, "<td>3,000</td>") {
			t.Errorf("%s: no NOPM column with NOPM by step", fx)
		}
		// The column sits after "failed" and before the latencies, so the
		// header and every row keep their widths.
		if i, j, k := strings.Index(html, "<th>failed</th>"), strings.Index(html, "<th>NOPM</th>"), strings.Index(html, "<th>p50 ms</th>"); fx == fxRamp && !(i < j && j < k) {
			t.Errorf("%s: NOPM column out of place (failed %d, NOPM %d, p50 %d)", fx, i, j, k)
		}
	}
}

// TestCompareSteps: two ramps compare step by step, matched by thread
// count or requested rate, with each step's change; results without
// steps of a kind both have get no step table.
func TestCompareSteps(t *testing.T) {
	ins := load(t, fxThreads, fxThreads)
	for i := range ins[1].Result.Steps {
		s := &ins[1].Result.Steps[i]
		v := 2 * *s.AchievedPerSec
		s.AchievedPerSec = &v
	}
	ins[1].Result.Steps = ins[1].Result.Steps[:2] // B stopped after 2 threads
	st := Compare(ins).StepTable()
	if len(st) != 4 || st[1][0] != "1 thread" || st[2][0] != "2 threads" || st[3][0] != "4 threads" {
		t.Fatalf("step table %q: want a row per thread count of A", st)
	}
	if st[1][4] != "×2.00" || st[2][4] != "×2.00" || st[3][3] != "n/a" || st[1][6] != "=" {
		t.Errorf("step table %q: want B/A ×2.00 at 1 and 2 threads, n/a at 4, p99 unchanged", st)
	}
	var out strings.Builder
	if err := Compare(ins).WriteText(&out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "step by step (matched by thread count, batch size or requested rate):") {
		t.Errorf("no step table in the text:\n%s", out.String())
	}
	if st := Compare(load(t, fxRamp, fxRamp)).StepTable(); len(st) < 3 || !strings.HasSuffix(st[1][0], "/s") || st[1][4] != "=" {
		t.Errorf("ramp vs itself: %q, want rate rows, unchanged", st)
	}
	// Repeated ramps: each step's change against the run-to-run spread
	// of its req/s (3 runs each: 1,000 ± 10 against 1,500 ± 10 is beyond;
	// against 1,005 ± 10 within); p99 not repeated, so not judged.
	rep := load(t, fxThreads, fxThreads)
	for k, mean := range []float64{1000, 1500} {
		for i := range rep[k].Result.Steps {
			m := mean + 5*float64(i)
			sd := 10.0
			if i == 1 {
				m = 1000 + 5*float64(k)
			}
			rep[k].Result.Steps[i].RepeatStats = map[string]*report.Stat{"achieved_per_sec": {Mean: m, StdDev: &sd, N: 3}}
		}
	}
	st = Compare(rep).StepTable()
	if !strings.HasSuffix(st[1][4], " (beyond, better)") || !strings.HasSuffix(st[2][4], " (within)") || strings.Contains(st[1][6], "(") {
		t.Errorf("repeated steps %q: want 1 thread beyond, better, 2 threads within, p99 unjudged", st)
	}
	for _, pair := range [][]string{{fxFull, fxRelaxed}, {fxThreads, fxRamp}, {fxKnee, fxKnee}} {
		if st := Compare(load(t, pair...)).StepTable(); st != nil {
			t.Errorf("%v: step table %q, want none", pair, st)
		}
	}
}

// TestCompareCountFigures: TPC-C's counts over the run (rollbacks,
// retries, …) are compared per minute of measured time, so that a run
// twice as long at the same pace compares level rather than +100%, and the
// count of new orders is left to NOPM, which rates it.
func TestCompareCountFigures(t *testing.T) {
	ins := load(t, fxTPCC, fxTPCC)
	b := ins[1].Result
	b.Summary.ElapsedS *= 2
	b.Figures["new_orders"] *= 2
	b.Figures["new_order_rollbacks"] *= 2
	rows := rowsOf(Compare(ins))
	if _, ok := rows["figure.new_orders_per_min"]; ok {
		t.Error("new_orders compared alongside nopm, which rates it")
	}
	if _, ok := rows["figure.new_orders"]; ok {
		t.Error("new_orders compared as a count")
	}
	r, ok := rows["figure.new_order_rollbacks_per_min"]
	if !ok {
		t.Fatalf("no per-minute row for new_order_rollbacks: %v", rows)
	}
	// 9 rollbacks in 4.0008 s: 135/min on both sides.
	if r.Label != "new_order_rollbacks/min" || r.Cells[0].Text != "135.0" || r.Cells[1].Text != "135.0" || r.Cells[1].Change == nil || *r.Cells[1].Change != 1 {
		t.Errorf("rollbacks row %q: %q vs %q, change %v", r.Label, r.Cells[0].Text, r.Cells[1].Text, r.Cells[1].Change)
	}
	if r.Higher != 0 || rows["figure.retries_per_min"].Higher != -1 {
		t.Errorf("direction: rollbacks %d (want 0), retries %d (want -1)", r.Higher, rows["figure.retries_per_min"].Higher)
	}
	if rows["figure.nopm"].Higher != 1 || report.FigureHigher("first_scan_ms") != -1 || report.FigureHigher("my_custom_figure") != 0 {
		t.Errorf("direction: nopm %d (want 1), first_scan_ms %d (want -1), an unknown figure %d (want 0)",
			rows["figure.nopm"].Higher, report.FigureHigher("first_scan_ms"), report.FigureHigher("my_custom_figure"))
	}
	// Without nopm, the new orders are rated here.
	delete(b.Figures, "nopm")
	delete(ins[0].Result.Figures, "nopm")
	if _, ok := rowsOf(Compare(ins))["figure.new_orders_per_min"]; !ok {
		t.Error("new_orders not compared per minute where no nopm rates it")
	}
}

// TestCompareErrorsCount: errors are a count, printed without decimals
// ("3", not "3.000"); a repeat's mean of them keeps its decimals.
func TestCompareErrorsCount(t *testing.T) {
	ins := load(t, fxTPCC, fxTPCC)
	ins[0].Result.Summary.Errors = 3
	ins[1].Result.Summary.Errors = 1200
	r := rowsOf(Compare(ins))["errors"]
	if len(r.Cells) != 2 || r.Cells[0].Text != "3" || r.Cells[1].Text != "1,200" {
		t.Errorf("errors row %+v", r.Cells)
	}
	ins[1].Result.RepeatStats = map[string]*report.Stat{"errors": {Mean: 2.5}}
	if r := rowsOf(Compare(ins))["errors"]; r.Cells[1].Text != "2.500" {
		t.Errorf("mean of repeats: %q, want 2.500", r.Cells[1].Text)
	}
}

func rowsOf(c *Comparison) map[string]Row {
	rows := map[string]Row{}
	for _, row := range c.Rows {
		rows[row.Key] = row
	}
	return rows
}

// TestConnectionsRow: the test definition says whether a server's
// connections were encrypted, as do the one-line description and the
// summary of report --json; a result without the field (SQLite, older
// results) has no such row.
func TestConnectionsRow(t *testing.T) {
	for tls, want := range map[string]string{
		"TLS 1.3, TLS_AES_256_GCM_SHA384": "<td>connections</td><td class=\"l\">encrypted: TLS 1.3, TLS_AES_256_GCM_SHA384 (costs CPU on both sides of every request)</td>",
		"off":                             "<td>connections</td><td class=\"l\">unencrypted</td>",
		"":                                "",
	} {
		ins := load(t, fxPG)
		ins[0].Result.Target.TLS = tls
		html := renderHTML(t, ins)
		if want == "" && strings.Contains(html, "<td>connections</td>") || want != "" && !strings.Contains(html, want) {
			t.Errorf("TLS %q: want %q in the report", tls, want)
		}
		// The one-line description (report header, compare) names the
		// protocol of encrypted connections only.
		if d := Describe(ins[0].Result); strings.Contains(d, "encrypted (TLS 1.3)") != (tls != "" && tls != "off") {
			t.Errorf("TLS %q: description %q", tls, d)
		}
		if s := Summaries(ins)[0]; s.TLS != tls {
			t.Errorf("report --json: tls %q, want %q", s.TLS, tls)
		}
	}
}

// TestCompareTLSCheck: a verdict's "unencrypted connections" suggestion
// carries no predicted gain; a result without TLS next to it is the
// measurement, shown as such without an agreement.
func TestCompareTLSCheck(t *testing.T) {
	ins := load(t, fxPG, fxPG)
	a, b := ins[0].Result, ins[1].Result
	a.Target.TLS, b.Target.TLS = "TLS 1.3, TLS_AES_256_GCM_SHA384", "off"
	a.Verdict.Suggestions = append(a.Verdict.Suggestions, diagnose.Suggestion{Action: "unencrypted connections where the network is trusted (sslmode=disable in the DSN): TLS costs CPU on both sides"})
	b.Summary.RequestsPerSec = a.Summary.RequestsPerSec * 1.3
	c := Compare(ins)
	if len(c.Checks) != 1 {
		t.Fatalf("%d checks, want the TLS one: %+v", len(c.Checks), c.Checks)
	}
	got := c.Checks[0].Text()
	if !strings.HasPrefix(got, "A → B (connections TLS 1.3 → unencrypted): no gain predicted by A's verdict") || !strings.HasSuffix(got, "measured ×1.30 (req/s B ÷ A)") {
		t.Errorf("check %q", got)
	}
	// Both encrypted: nothing was applied.
	b.Target.TLS = a.Target.TLS
	if c := Compare(ins); len(c.Checks) != 0 {
		t.Errorf("both encrypted: checks %+v", c.Checks)
	}
}

// TestChangeText: changes read as such; one below 0.05% is "≈" (4,171
// against 4,173 req/s printed "-0.0%").
func TestChangeText(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want string
	}{{1, "="}, {4171.0 / 4173.0, "≈"}, {1.0004, "≈"}, {1.0006, "+0.1%"}, {0.852, "-14.8%"}, {3, "×3.00"}, {0.25, "÷4.00"}, {0, "→ 0"}} {
		if got := changeText(&c.v); got != c.want {
			t.Errorf("changeText(%v) = %q, want %q", c.v, got, c.want)
		}
	}
}

// TestCompareSettingsDiff: compare names the workload settings in which a
// result differs from the baseline (console and HTML), and nothing when
// they agree or the workloads differ.
func TestCompareSettingsDiff(t *testing.T) {
	ins := load(t, fxTPCC, fxTPCC, fxTPCC)
	ins[1].Result.Workload.Params = maps.Clone(ins[0].Result.Workload.Params)
	ins[1].Result.Workload.Params["procedures"] = true
	ins[1].Result.Workload.Params["seed"] = 7.0
	delete(ins[1].Result.Workload.Params, "all_warehouses")
	if got, want := SettingsDiff(ins[0].Result, ins[1].Result), "all_warehouses false → (unset), procedures (unset) → true, seed 1 → 7"; got != want {
		t.Errorf("SettingsDiff = %q, want %q", got, want)
	}
	if got := SettingsDiff(ins[0].Result, ins[2].Result); got != "" {
		t.Errorf("same settings: %q", got)
	}
	ins[2].Result.Workload.Name = "mixed"
	ins[2].Result.Workload.Params = map[string]any{"rows": 10.0}
	if got := SettingsDiff(ins[0].Result, ins[2].Result); got != "" {
		t.Errorf("another workload: %q", got)
	}
	var buf bytes.Buffer
	if err := Compare(ins).WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(buf.String(), "workload settings that differ from A: "); n != 1 || !strings.Contains(buf.String(), "procedures (unset) → true") {
		t.Errorf("console: %d settings lines, want 1:\n%s", n, buf.String())
	}
}

// TestCompareAdviceCheck: a workload's own suggestion ("--procedures: …",
// no predicted gain) pairs with a result that turned that setting on, and
// the pair's measured gain is shown; a result with it off does not pair.
func TestCompareAdviceCheck(t *testing.T) {
	ins := load(t, fxTPCC, fxTPCC)
	a, b := ins[0].Result, ins[1].Result
	a.Verdict.Suggestions = append(a.Verdict.Suggestions, diagnose.Suggestion{Action: "--procedures: each transaction as one call"})
	b.Workload.Params = maps.Clone(a.Workload.Params)
	b.Workload.Params["procedures"] = false
	for _, ch := range Compare(ins).Checks {
		if ch.Applied == "procedures false → true" {
			t.Errorf("paired with a result that did not turn --procedures on: %s", ch.Text())
		}
	}
	b.Workload.Params["procedures"] = true
	b.Summary.RequestsPerSec = 2.5 * a.Summary.RequestsPerSec
	var found bool
	for _, ch := range Compare(ins).Checks {
		if ch.Applied == "procedures false → true" {
			found = true
			if ch.From != 0 || ch.To != 1 || ch.Predicted != 0 || ch.Measured == nil || math.Abs(*ch.Measured-2.5) > 1e-9 {
				t.Errorf("check %+v, want A → B, no prediction, measured ×2.5", ch)
			}
		}
	}
	if !found {
		t.Errorf("no check for the applied --procedures: %+v", Compare(ins).Checks)
	}
}

// TestDescribeEmulation: a result measured under --emulate says so where
// results are described (compare's header, the report's legend).
func TestDescribeEmulation(t *testing.T) {
	ins := load(t, fxTPCC)
	r := ins[0].Result
	if strings.Contains(Describe(r), "--emulate") {
		t.Fatalf("unlimited result described as emulated: %s", Describe(r))
	}
	r.Target.Emulation = &target.Emulation{Profile: "azure-2014-s1"}
	if d := Describe(r); !strings.Contains(d, "files held to azure-2014-s1's limits (--emulate)") {
		t.Errorf("Describe = %q", d)
	}
	// The report's file table is followed by each file's emulated wait.
	wait := 750.0
	r.Files = []report.File{{Name: "ceiling.db-wal", Role: "log", Writes: 10, WriteMs: 1000, EmulatedWaitMs: &wait}}
	if html := renderHTML(t, ins); !strings.Contains(html, "held to profile azure-2014-s1&#39;s limits while measuring (--emulate); the share of each file&#39;s IO time spent waiting for them: ceiling.db-wal 75% (750 ms)") {
		t.Errorf("no emulated wait note in the report")
	}
}

// TestReportDefinition: a custom workload's file, kept in the result, is
// in the report folded under its summary, escaped as text.
func TestReportDefinition(t *testing.T) {
	ins := load(t, fxFull)
	ins[0].Result.Workload.Definition = "requests:\n  - name: a\n    sql: SELECT 1 WHERE 1 < 2 -- <script>x</script>\n"
	html := renderHTML(t, ins)
	if !strings.Contains(html, "<details><summary>The workload&#39;s definition (its file, as the run read it)</summary><pre>requests:\n  - name: a\n    sql: SELECT 1 WHERE 1 &lt; 2 -- &lt;script&gt;x&lt;/script&gt;\n</pre></details>") {
		t.Fatalf("no escaped definition in the report")
	}
	if strings.Contains(html, "<script>x") {
		t.Fatal("the definition's text is not escaped")
	}
	if html := renderHTML(t, load(t, fxFull)); strings.Contains(html, "<details>") {
		t.Fatal("a built-in workload's report shows a definition")
	}
}

// TestNetworkRow: a result with a round-trip probe (a server on another
// host) shows it in the run's table and as a line on the latency chart,
// and the round trips per request among the headline figures.
func TestNetworkRow(t *testing.T) {
	ins := load(t, fxPG)
	if html := renderHTML(t, ins); strings.Contains(html, "round trip") {
		t.Fatal("a result without a round-trip probe has a round-trip line")
	}
	ins[0].Result.Network = &report.Network{RoundTripMs: report.HostLatency{P50: 2.596, P99: 3.173, Mean: 2.611}, N: 200, What: "empty query"}
	rt, per := int64(10378), 2.0
	ins[0].Result.Summary.RoundTrips, ins[0].Result.Summary.RoundTripsPerRequest = &rt, &per
	html := renderHTML(t, ins)
	for _, want := range []string{"200 × empty query, one at a time, before the run: p50 2.596 ms, p99 3.173 ms, mean 2.611 ms", "round trip to the server (p50, before the run)",
		"2 per request", "at least 5.19 ms of each on the network (round trip p50 2.6 ms)"} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

// TestCompareRoundTrips: a result of a server on another host brings its
// round trip and round trips per request into a comparison; results
// without them give no such rows.
func TestCompareRoundTrips(t *testing.T) {
	ins := load(t, fxPG, fxPG)
	rowOf := func(c *Comparison, key string) *Row {
		for i := range c.Rows {
			if c.Rows[i].Key == key {
				return &c.Rows[i]
			}
		}
		return nil
	}
	c := Compare(ins)
	if rowOf(c, "round_trip_ms") != nil || rowOf(c, "round_trips_per_op") != nil {
		t.Fatal("results without a round-trip probe or counts have round-trip rows")
	}
	per := 29.3
	ins[1].Result.Network = &report.Network{RoundTripMs: report.HostLatency{P50: 2.6}, N: 200, What: "COM_PING"}
	ins[1].Result.Summary.RoundTripsPerRequest = &per
	c = Compare(ins)
	rt, trips := rowOf(c, "round_trip_ms"), rowOf(c, "round_trips_per_op")
	if rt == nil || rt.Cells[0].Text != "n/a" || rt.Cells[1].Value == nil || *rt.Cells[1].Value != 2.6 {
		t.Errorf("round trip row %+v", rt)
	}
	if trips == nil || trips.Cells[1].Value == nil || *trips.Cells[1].Value != 29.3 {
		t.Errorf("round trips per request row %+v", trips)
	}
}

// TestCompareMixedWorkloads: results of different workloads are said to
// be unlike on the console and in the HTML, where no mean or spread is
// taken across them, nor across different setups of one workload;
// results of one workload say nothing of it.
func TestCompareMixedWorkloads(t *testing.T) {
	ins := load(t, fxFull, fxTPCC, fxRelaxed)
	var buf bytes.Buffer
	if err := Compare(ins).WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	want := "note: the results ran different workloads (A, C single-inserts; B tpcc): a request is different work in each"
	if !strings.Contains(buf.String(), want) {
		t.Errorf("console lacks %q:\n%s", want, buf.String())
	}
	html := renderHTML(t, ins)
	if !strings.Contains(html, "the results ran different workloads (A, C single-inserts; B tpcc)") ||
		!strings.Contains(html, "One column per result (no mean or spread across different workloads)") || strings.Contains(html, "<th>stddev</th>") {
		t.Error("the HTML comparison of different workloads does not say so, or takes their mean and spread")
	}
	ins = load(t, fxFull, fxRelaxed)
	buf.Reset()
	if err := Compare(ins).WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	// One workload at two durabilities: no mean across the two setups
	// either (nor across two emulated file classes, two servers …).
	if html := renderHTML(t, ins); strings.Contains(buf.String(), "different workloads") || strings.Contains(html, "different workloads") ||
		!regexp.MustCompile(`One column per result \(no mean or spread across different setups: [a-z, ]*durability`).MatchString(html) || strings.Contains(html, "<th>stddev</th>") {
		t.Error("one workload's results at two durabilities said to be of different workloads, or given a mean and spread")
	}
	// Runs of one setup keep them.
	if html := renderHTML(t, load(t, fxFull, fxFull)); !strings.Contains(html, "then the mean and spread across them") || !strings.Contains(html, "<th>stddev</th>") {
		t.Error("runs of one setup lost their mean and spread")
	}
}
