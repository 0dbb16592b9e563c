package htmlreport

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// measureScript runs in the test copy of the page only (the shipped report
// has no script): it writes each chart's rendered size into data
// attributes, which --dump-dom then shows.
const measureScript = `<script>
for (const s of document.querySelectorAll("svg.chart")) {
  const r = s.getBoundingClientRect();
  s.setAttribute("data-w", Math.round(r.width));
  s.setAttribute("data-h", Math.round(r.height));
}
document.body.setAttribute("data-measured", document.querySelectorAll("svg.chart").length);
</script>`

// chromium returns the path of a headless Chromium, or skips the test;
// in CI (CI=true or CEILING_REQUIRE_SERVERS=1) a missing one fails.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"/usr/bin/chromium", "chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" || os.Getenv("CEILING_REQUIRE_SERVERS") == "1" {
		t.Fatal("chromium not found: install it (apt-get install chromium); CI requires it")
	}
	t.Skip("chromium not installed (apt-get install chromium): skipping the rendering test")
	return ""
}

var (
	svgTagRE = regexp.MustCompile(`<svg [^>]*class="chart"[^>]*>`)
	attrRE   = regexp.MustCompile(`data-([wh])="(\d+)"`)
)

// TestChartsRenderInChromium loads reports in headless Chromium, offline,
// and checks that every chart is laid out with a nonzero width and height.
func TestChartsRenderInChromium(t *testing.T) {
	bin := chromium(t)
	for _, c := range []struct {
		name   string
		inputs []string
	}{
		{"ramp", []string{fxRamp}},
		{"compare", []string{fxFull, fxRelaxed, fxRepeat, fxPG}},
	} {
		t.Run(c.name, func(t *testing.T) {
			html := renderHTML(t, load(t, c.inputs...))
			want := strings.Count(html, `<svg class="chart"`)
			if want == 0 {
				t.Fatal("the report has no chart")
			}
			dir := t.TempDir()
			page := filepath.Join(dir, "report.html")
			if err := os.WriteFile(page, []byte(strings.Replace(html, "</body>", measureScript+"\n</body>", 1)), 0o644); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
				"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-extensions",
				"--user-data-dir="+filepath.Join(dir, "profile"), "--window-size=1280,900", "--dump-dom", "file://"+page)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("chromium: %v\n%s", err, stderr.String())
			}
			dom := string(out)
			if !strings.Contains(dom, `data-measured="`+strconv.Itoa(want)+`"`) {
				t.Fatalf("the measuring script did not see %d charts; chromium stderr:\n%s", want, stderr.String())
			}
			tags := svgTagRE.FindAllString(dom, -1)
			if len(tags) != want {
				t.Fatalf("%d charts in the DOM, want %d", len(tags), want)
			}
			for i, tag := range tags {
				size := map[string]int{}
				for _, m := range attrRE.FindAllStringSubmatch(tag, -1) {
					size[m[1]], _ = strconv.Atoi(m[2])
				}
				if size["w"] <= 0 || size["h"] <= 0 {
					t.Errorf("chart %d rendered %d×%d px, want nonzero: %s", i+1, size["w"], size["h"], tag)
				}
			}
		})
	}
}
