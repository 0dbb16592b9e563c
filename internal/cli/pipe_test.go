package cli

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStdoutReaderGone: standard output is a pipe whose reader goes away
// during a run (`ceiling run … | head`). The run stops as after Ctrl-C,
// with its partial result, exit status 141 (SIGPIPE's, as a shell reports
// a process it ended) and one line saying why, where before SIGPIPE ended
// the process on the spot: ceiling's tables and any changed server setting
// stayed behind.
func TestStdoutReaderGone(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	// The reader reads up to the run's first progress line, and goes.
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			if strings.HasPrefix(strings.TrimSpace(sc.Text()), "time") {
				break
			}
		}
		_ = r.Close()
	}()
	dir := t.TempDir()
	out := filepath.Join(dir, "run.json")
	var stderr bytes.Buffer
	code := Run(context.Background(), []string{"run", "single-inserts", "--db", "sqlite:" + filepath.Join(dir, "p.db"),
		"-T", "60s", "--report-every", "200ms", "--interval", "100ms", "--no-probe", "--out", out}, w, &stderr)
	msg := strings.TrimSpace(stderr.String())
	if code != 141 || strings.Contains(msg, "\n") || !strings.Contains(msg, "the reader of standard output went away (broken pipe): run interrupted; partial result written to "+out) {
		t.Fatalf("exit %d, stderr %q: want 141 and one line saying why the run stopped", code, msg)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(`"partial": true`)) {
		t.Errorf("result not marked partial: %.300s", b)
	}

	// Gone before the run: stopped before a result, said as such.
	r2, w2, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	_ = r2.Close()
	defer w2.Close()
	stderr.Reset()
	code = Run(context.Background(), []string{"run", "single-inserts", "--db", "sqlite:" + filepath.Join(dir, "p2.db"), "-T", "60s", "--out", dir}, w2, &stderr)
	if msg := strings.TrimSpace(stderr.String()); code != 141 || !strings.HasPrefix(msg, "ceiling: stopped: the reader of standard output went away (broken pipe)") {
		t.Errorf("reader gone at the start: exit %d, stderr %q", code, msg)
	}
}
