package cli

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ceiling-db/ceiling/internal/hostprof"
	"github.com/ceiling-db/ceiling/internal/osstat"
	"github.com/ceiling-db/ceiling/internal/testenv"
)

// TestCommitFlushVerdict: one connection inserting at full durability waits
// for a log flush on every commit, on every engine, whether the server times
// its syncs (SQLite's VFS), samples its waits (PostgreSQL) or neither
// (MariaDB, where the log device's flushes counted by the kernel, else
// ceiling's fsync probe, give the sync time), unless the storage is fast enough that the flushes are under the rule's
// share of a request's time, which the host's fsync probe must confirm.
// Relaxed durability must not be diagnosed as commit-flush bound. Local
// targets also carry their log device's figures (checkLogDevice).
func TestCommitFlushVerdict(t *testing.T) {
	cases := []struct{ name, env string }{{"sqlite", ""}, {"postgres", testenv.PostgresEnv}, {"mysql", testenv.MySQLEnv}}
	for _, ec := range cases {
		t.Run(ec.name, func(t *testing.T) {
			dsn := "sqlite:" + filepath.Join(t.TempDir(), "diag.db")
			if ec.env != "" {
				dsn = serverDSN(t, ec.env)
			}
			run := func(mode string) map[string]any {
				out := filepath.Join(t.TempDir(), mode)
				code, stdout, stderr := runCLI(t, context.Background(), "run", "single-inserts", "--db", dsn,
					"-c", "1", "--durability", mode, "-T", "3s", "--out", out)
				if code != 0 {
					t.Fatalf("%s: exit %d\nstdout:\n%s\nstderr:\n%s", mode, code, stdout, stderr)
				}
				raw := readJSONMap(t, mustGlob(t, out))
				if tg := raw["target"].(map[string]any); tg["local"] == true {
					h, ok := raw["host"].(map[string]any)
					if !ok {
						t.Fatalf("%s: local target but no host probe in the result", mode)
					}
					fm, ok := h["fsync_ms"].(map[string]any)
					if !ok || !(fm["mean"].(float64) > 0) || h["dir"] == "" || !strings.Contains(h["note"].(string), "fdatasync") {
						t.Fatalf("%s: host = %v", mode, h)
					}
					if !strings.Contains(stdout, "fsync probe") {
						t.Fatalf("%s: no probe line on the console:\n%s", mode, stdout)
					}
					checkLogDevice(t, raw, mode, stdout, mustGlob(t, out))
				} else if ec.name == "sqlite" {
					t.Fatalf("sqlite target not local: %v", tg)
				}
				return raw
			}
			verdict := func(raw map[string]any) (string, []string, []any) {
				v, ok := raw["verdict"].(map[string]any)
				if !ok {
					t.Fatalf("no verdict")
				}
				var ev []string
				for _, e := range v["evidence"].([]any) {
					ev = append(ev, e.(string))
				}
				sugg, _ := v["suggestions"].([]any)
				return v["bottleneck"].(string), ev, sugg
			}
			rate := func(raw map[string]any) float64 {
				return raw["summary"].(map[string]any)["requests_per_sec"].(float64)
			}

			full := run("full")
			b, ev, sugg := verdict(full)
			if share, ok := ruleShare(full); b != "commit-flush" && ec.name != "sqlite" && ok {
				// On fast local storage one connection's flushes can be
				// under the rule's 40% of each request's time: MariaDB's
				// share is its log device's flush time over the run (30-32%
				// on the development VM, flushes of 0.07 ms; relaxed ran
				// x1.4-1.7), or estimated from ceiling's fsync probe of the
				// host (27-40%) where the kernel does not count flushes;
				// PostgreSQL's comes from its device's write + flush or from
				// its sampled log-IO wait share (25-29% sampled on a VM
				// whose fdatasync took 0.06 ms). What must hold then:
				// the host's own probe agrees that flushes are not most of
				// a request, about one sync per request, and relaxed
				// durability with far fewer syncs and no commit-flush
				// verdict.
				probe := probeShare(full)
				relaxed := run("relaxed")
				rb, rev, _ := verdict(relaxed)
				fs, rs := syncsPerReq(full), syncsPerReq(relaxed)
				t.Logf("%s: full %.0f req/s, %q, flush share %.0f%% (the host's fsync probe: %.0f%%), %.2f syncs/request; relaxed %.0f req/s, %q, %.3f syncs/request",
					ec.name, rate(full), b, share, 100*probe, fs, rate(relaxed), rb, rs)
				// The probe times a write and an fdatasync of a file (on
				// ext4 a journal write too); a log written with O_DIRECT
				// (MariaDB) waits for the device's cache flush alone, so
				// there the probe overstates what a commit waits (CI,
				// 2026-11-27: probe 62%, the device's flushes 38%,
				// relaxed ×1.74, i.e. flushes about 42% of a request).
				direct, _ := full["target"].(map[string]any)["log_direct_io"].(bool)
				if probe >= 0.6 && !direct {
					t.Fatalf("full durability: bottleneck %q although the host's fsync probe puts the flushes at %.0f%% of each request's time; evidence: %q", b, 100*probe, ev)
				}
				if fs < 0.8 || fs > 1.5 || rs > fs/3 || rb == "commit-flush" {
					t.Fatalf("full: %.2f syncs/request, relaxed: %.3f, verdict %q (%q): want about 1, far fewer, and no commit-flush", fs, rs, rb, rev)
				}
				return
			}
			if b != "commit-flush" {
				t.Fatalf("full durability: bottleneck %q, want commit-flush; evidence: %q", b, ev)
			}
			if len(ev) == 0 || !strings.Contains(ev[0], "per commit") || !(strings.Contains(ev[0], "ms per sync") ||
				strings.Contains(ev[0], "log-IO waits") || strings.Contains(ev[0], "fsync probe of") || strings.Contains(ev[0], "cache flush")) {
				t.Fatalf("full durability: evidence does not cite syncs per commit and a latency: %q", ev)
			}
			var predicted float64
			for _, s := range sugg {
				if g, ok := s.(map[string]any)["predicted_gain"].(float64); ok && g > predicted {
					predicted = g
				}
			}
			if predicted <= 1 {
				t.Fatalf("full durability: no suggestion with a predicted gain above 1: %v", sugg)
			}

			relaxed := run("relaxed")
			rb, rev, _ := verdict(relaxed)
			if rb == "commit-flush" {
				t.Fatalf("relaxed durability diagnosed as commit-flush: %q", rev)
			}
			t.Logf("%s: full %.0f req/s, %s (%s); relaxed %.0f req/s, %s; predicted gain ×%.2f, measured ×%.2f",
				ec.name, rate(full), b, ev[0], rate(relaxed), rb, predicted, rate(relaxed)/rate(full))
		})
	}
}

// checkLogDevice: a local target whose log directory is on a block device
// the kernel lists has the device's figures in the result and on the
// console; where the device has a write-back cache, full durability sends
// about one cache flush per request (one connection) and relaxed far fewer.
func checkLogDevice(t *testing.T, raw map[string]any, mode, stdout, path string) {
	t.Helper()
	tg := raw["target"].(map[string]any)
	logDir, _ := tg["log_dir"].(string)
	dev, ok := osstat.DiskOf(logDir)
	if !ok {
		if _, has := raw["log_device"]; has {
			t.Fatalf("%s: log_device in the result although %q is on no listed block device: %v", mode, logDir, raw["log_device"])
		}
		t.Logf("%s: the log directory %q is on no block device /proc/diskstats lists: no device figures to check", mode, logDir)
		return
	}
	d, ok := raw["log_device"].(map[string]any)
	if !ok || d["name"] != dev.Name {
		t.Fatalf("%s: log_device %v, want the figures of %s (holding %s)", mode, raw["log_device"], dev.Name, logDir)
	}
	if td, _ := tg["log_device"].(map[string]any); td["name"] != dev.Name {
		t.Fatalf("%s: target.log_device %v, want %s", mode, tg["log_device"], dev.Name)
	}
	if !strings.Contains(stdout, "log device "+dev.Name+" (kernel counters") {
		t.Fatalf("%s: no log device line on the console:\n%s", mode, stdout)
	}
	if w, _ := d["writes_per_sec"].(float64); mode == "full" && !(w > 0) {
		t.Fatalf("%s: %v writes/s on the log's device during a run that commits", mode, d["writes_per_sec"])
	}
	if !writeBack(dev.Name) {
		t.Logf("%s: %s has no write-back cache (or it cannot be told): flushes not checked", mode, dev.Name)
		return
	}
	per, ok := d["flushes_per_op"].(float64)
	if !ok {
		t.Fatalf("%s: no flushes counted on %s: %v", mode, dev.Name, d)
	}
	switch mode {
	case "full":
		if fm, _ := d["flush_ms"].(float64); per < 0.8 || !(fm > 0) || d["note"] != nil {
			t.Fatalf("full durability: %.3f cache flushes per request at %v ms on %s (note %v), want about one each, and the device used", per, d["flush_ms"], dev.Name, d["note"])
		}
		// The per-interval series, and the HTML report's chart of them.
		n := 0
		for _, iv := range raw["intervals"].([]any) {
			if ms, ok := iv.(map[string]any)["log_dev_flush_ms"].(float64); ok && ms > 0 {
				n++
			}
		}
		if n == 0 {
			t.Fatalf("full durability: no interval with log_dev_flush_ms")
		}
		html := filepath.Join(t.TempDir(), "r.html")
		if code, so, se := runCLI(t, context.Background(), "report", path, "-o", html); code != 0 {
			t.Fatalf("report: exit %d\n%s\n%s", code, so, se)
		}
		b, err := os.ReadFile(html)
		if err != nil || !strings.Contains(string(b), `aria-label="Log device `+dev.Name+`"`) {
			t.Fatalf("report %s: no chart \"Log device %s\" (%v)", html, dev.Name, err)
		}
	case "relaxed":
		if per > 0.3 {
			t.Fatalf("relaxed durability: %.3f cache flushes per request on %s, want far fewer than one", per, dev.Name)
		}
	}
}

// writeBack says whether block device name (or the disk a partition is
// on) has a volatile write cache that fsync flushes.
func writeBack(name string) bool {
	for _, p := range []string{"/sys/class/block/" + name + "/queue/write_cache", "/sys/class/block/" + name + "/../queue/write_cache"} {
		if b, err := os.ReadFile(p); err == nil {
			return strings.TrimSpace(string(b)) == "write back"
		}
	}
	return false
}

// ruleShare returns the flush share (%) the commit-flush rule found
// below its threshold ("log syncs are N% of each request's time < 40%").
func ruleShare(raw map[string]any) (float64, bool) {
	for _, r := range raw["verdict"].(map[string]any)["rules"].([]any) {
		rule := r.(map[string]any)
		if rule["name"] != "commit-flush" {
			continue
		}
		var pct float64
		if _, err := fmt.Sscanf(rule["why"].(string), "log syncs are %f%%", &pct); err == nil && pct > 0 {
			return pct, true
		}
	}
	return 0, false
}

// probeShare is the share of a request's mean time that its syncs would
// take at the latency of ceiling's fsync probe of the host, but no more
// than the part of the request the server spends off its CPU (when its CPU
// per request is in the result); 0 without a probe.
func probeShare(raw map[string]any) float64 {
	h, _ := raw["host"].(map[string]any)
	fm, _ := h["fsync_ms"].(map[string]any)
	probe, _ := fm["mean"].(float64)
	mean, _ := raw["summary"].(map[string]any)["latency_ms"].(map[string]any)["mean"].(float64)
	if probe <= 0 || mean <= 0 {
		return 0
	}
	share := syncsPerReq(raw) * probe / mean
	if cpuUs, ok := raw["costs"].(map[string]any)["cpu_us_per_op"].(float64); ok && raw["target"].(map[string]any)["engine"] != "sqlite" {
		share = math.Min(share, math.Max(mean-cpuUs/1000, 0)/mean)
	}
	return share
}

// syncsPerReq is the result's log syncs per request, or where the server
// does not count those apart (MariaDB) its data-file fsyncs, which include
// the log's; 0 when neither is given.
func syncsPerReq(raw map[string]any) float64 {
	c := raw["costs"].(map[string]any)
	if v, ok := c["log_syncs_per_op"].(float64); ok {
		return v
	}
	v, _ := c["data_syncs_per_op"].(float64)
	return v
}

func TestProfileHost(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(t.TempDir(), "host.json")
	code, stdout, stderr := runCLI(t, context.Background(), "profile-host", "--dir", dir, "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	p := readJSONMap(t, out)
	if p["name"] != "this-host" || p["source"] != "ceiling profile-host" || !(p["cores"].(float64) >= 1) ||
		!(p["seq_write_mb_per_sec"].(float64) > 0) || !(p["fsyncs_per_sec"].(float64) > 0) {
		t.Fatalf("profile = %v", p)
	}
	if fm := p["fsync_ms"].(map[string]any); !(fm["p50"].(float64) > 0) {
		t.Fatalf("fsync_ms = %v", fm)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Fatalf("profile-host left files in %s: %v", dir, left)
	}

	code, _, stderr = runCLI(t, context.Background(), "profile-host", "--dir", filepath.Join(dir, "missing"))
	if code != 2 || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.Contains(stderr, "--dir") {
		t.Fatalf("bad --dir: exit %d, stderr %q", code, stderr)
	}
}

func TestRunProbeFlags(t *testing.T) {
	dir := t.TempDir()
	db := "sqlite:" + filepath.Join(dir, "p.db")
	code, _, stderr := runCLI(t, context.Background(), "run", "single-inserts", "--db", db, "--ops", "10", "--probe-dir", filepath.Join(dir, "missing"), "--out", dir)
	if code != 2 || !strings.Contains(stderr, "--probe-dir") {
		t.Fatalf("bad --probe-dir: exit %d, stderr %q", code, stderr)
	}
	out := filepath.Join(dir, "out")
	code, stdout, stderr := runCLI(t, context.Background(), "run", "single-inserts", "--db", db, "--ops", "10", "--no-probe", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	var raw map[string]any
	b, _ := os.ReadFile(mustGlob(t, out))
	_ = jsonUnmarshal(b, &raw)
	if h, ok := raw["host"]; !ok || h != nil {
		t.Fatalf("--no-probe: host = %v (present %v), want null", h, ok)
	}
	if strings.Contains(stdout, "fsync probe") {
		t.Fatalf("--no-probe printed a probe line")
	}
}

// TestProbeOnLogFileSystem: the flush probe for a local server goes where
// the server's log is (here a tmpfs temporary directory is passed over for
// the --out directory), and a probe the user put on another file system is
// recorded as such and left out of the verdict.
func TestProbeOnLogFileSystem(t *testing.T) {
	dsn := serverDSN(t, testenv.MySQLEnv)
	shm := "/dev/shm"
	out := t.TempDir()
	if same, known := hostprof.SameDevice(shm, out); !known || same {
		t.Skipf("%s is not a file system apart from %s here (same %v, known %v)", shm, out, same, known)
	}
	run := func(args ...string) map[string]any {
		file := filepath.Join(out, fmt.Sprintf("r%d.json", len(args)))
		code, stdout, stderr := runCLI(t, context.Background(), append([]string{"run", "single-inserts", "--db", dsn,
			"--durability", "full", "--ops", "2000", "--out", file}, args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d\nstdout:\n%s\nstderr:\n%s", args, code, stdout, stderr)
		}
		return readJSONMap(t, file)
	}
	logDir := func(raw map[string]any) string { s, _ := raw["target"].(map[string]any)["log_dir"].(string); return s }

	shmTmp, err := os.MkdirTemp(shm, "ceiling-test-")
	if err != nil {
		t.Skipf("cannot write in %s: %v", shm, err)
	}
	t.Cleanup(func() { os.RemoveAll(shmTmp) })
	t.Setenv("TMPDIR", shmTmp)
	raw := run()
	host, _ := raw["host"].(map[string]any)
	if ld := logDir(raw); ld == "" {
		t.Fatalf("no target.log_dir: %v", raw["target"])
	} else if same, known := sameFS(out, ld); !known || !same {
		t.Skipf("the --out directory %s is not on the log's file system (%s) either", out, ld)
	}
	if host == nil || host["dir"] != out || host["same_fs_as_log"] != true {
		t.Fatalf("TMPDIR on %s: probe %v, want it in the --out directory %s on the log's file system", shm, host, out)
	}

	raw = run("--probe-dir", shmTmp)
	host, _ = raw["host"].(map[string]any)
	if host == nil || host["dir"] != shmTmp || host["same_fs_as_log"] != false || !strings.Contains(host["note"].(string), "not on the file system of the server's log") {
		t.Fatalf("--probe-dir %s: probe %v, want it marked as another file system", shmTmp, host)
	}
	for _, r := range raw["verdict"].(map[string]any)["rules"].([]any) {
		if rule := r.(map[string]any); rule["name"] == "commit-flush" && strings.Contains(rule["why"].(string), "fsync probe of") {
			t.Fatalf("the verdict used a probe on another file system: %v", rule)
		}
	}
}

// TestProfileHostInMemory: profile-host on a memory file system says its
// figures do not describe a disk, on the console and in the profile; on a
// disk directory it says nothing of the kind.
func TestProfileHostInMemory(t *testing.T) {
	shm := "/dev/shm"
	if _, ok := hostprof.InMemory(shm); !ok {
		t.Skipf("%s is not a memory file system here", shm)
	}
	for _, c := range []struct {
		dir    string
		memory bool
	}{{shm, true}, {t.TempDir(), false}} {
		out := filepath.Join(t.TempDir(), "host.json")
		code, stdout, stderr := runCLI(t, context.Background(), "profile-host", "--dir", c.dir, "--out", out)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s\n%s", c.dir, code, stdout, stderr)
		}
		p := readJSONMap(t, out)
		warned := strings.Contains(stdout, "warning: "+c.dir+" is on a tmpfs, kept in memory")
		if warned != c.memory || (p["in_memory"] == "tmpfs") != c.memory {
			t.Errorf("%s: warning %v, in_memory %v; want both %v\n%s", c.dir, warned, p["in_memory"], c.memory, stdout)
		}
	}
}
