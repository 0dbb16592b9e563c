package main

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMain lets the tests run this package's main as a child process: the
// test binary re-executes itself with CEILING_TEST_MAIN=1 and ceiling's
// arguments, so that a real signal reaches a real process.
func TestMain(m *testing.M) {
	if os.Getenv("CEILING_TEST_MAIN") == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

// TestSignalStopsRun sends SIGINT (Ctrl-C), SIGTERM and SIGHUP (the
// terminal or SSH session went away) to a running
// `ceiling run` on the embedded SQLite target: the run stops, writes its
// partial result, prints one line on stderr, and exits with 128 + the
// signal's number, as a shell reports a command a signal stopped.
func TestSignalStopsRun(t *testing.T) {
	for _, tc := range []struct {
		sig  syscall.Signal
		code int
	}{{syscall.SIGINT, 130}, {syscall.SIGTERM, 143}, {syscall.SIGHUP, 129}} {
		t.Run(tc.sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			cmd := exec.Command(os.Args[0], "run", "inserts-deletes", "-T", "60s",
				"--db", "sqlite:"+filepath.Join(dir, "t.db"), "--out", filepath.Join(dir, "res"),
				"--report-every", "1s", "--no-probe")
			cmd.Env = append(os.Environ(), "CEILING_TEST_MAIN=1")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// Signal once the measured phase has printed a live line.
			lines := make(chan string, 1)
			go func() {
				sc := bufio.NewScanner(out)
				header, sent := false, false
				for sc.Scan() {
					switch l := sc.Text(); {
					case strings.Contains(l, "req/s") && strings.Contains(l, "cpu%"):
						header = true // the live lines' header
					case header && !sent:
						sent = true
						lines <- l
					}
				}
				close(lines)
			}()
			select {
			case l, ok := <-lines:
				if !ok {
					cmd.Wait()
					t.Fatalf("the run ended before printing a live line; stderr: %s", stderr.String())
				}
				t.Logf("live line before the signal: %q", l)
			case <-time.After(30 * time.Second):
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatal("no live line within 30 s")
			}
			start := time.Now()
			if err := cmd.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			err = cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				t.Fatalf("exit: %v, want exit status %d; stderr: %s", err, tc.code, stderr.String())
			}
			if ee.ExitCode() != tc.code {
				t.Errorf("exit status %d, want %d; stderr: %s", ee.ExitCode(), tc.code, stderr.String())
			}
			if el := time.Since(start); el > 20*time.Second {
				t.Errorf("the run took %v to stop after %v", el, tc.sig)
			}
			msg := strings.TrimSpace(stderr.String())
			if strings.Count(msg, "\n") != 0 || !strings.Contains(msg, "interrupted; partial result written to") {
				t.Errorf("stderr is not the one-line interruption message: %q", msg)
			}
			parts, _ := filepath.Glob(filepath.Join(dir, "res", "*-partial.json"))
			if len(parts) != 1 {
				t.Fatalf("partial results in %s: %v, want one", dir, parts)
			}
			b, err := os.ReadFile(parts[0])
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(b, []byte(`"partial": true`)) {
				t.Errorf("%s does not say partial: true", parts[0])
			}
		})
	}
}
