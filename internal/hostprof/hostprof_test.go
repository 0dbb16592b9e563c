package hostprof

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func TestFsyncProbe(t *testing.T) {
	dir := t.TempDir()
	r, err := FsyncProbe(context.Background(), dir, 20)
	if err != nil {
		t.Fatal(err)
	}
	if r.N != 20 || r.Dir != dir {
		t.Fatalf("n %d dir %q", r.N, r.Dir)
	}
	if !(r.P50Ms > 0 && r.MeanMs > 0 && r.P99Ms >= r.P50Ms && r.MaxMs >= r.P99Ms && r.SyncsPerSec > 0) {
		t.Fatalf("implausible probe: %+v", r)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Fatalf("probe left files behind: %v", left)
	}
}

func TestFsyncProbeErrors(t *testing.T) {
	if _, err := FsyncProbe(context.Background(), t.TempDir(), 0); err == nil {
		t.Fatal("n=0 accepted")
	}
	if _, err := FsyncProbe(context.Background(), "/nonexistent/ceiling-dir", 5); err == nil {
		t.Fatal("missing dir accepted")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := FsyncProbe(ctx, t.TempDir(), 5); err == nil {
		t.Fatal("cancelled context accepted")
	}
}

func TestSeqWrite(t *testing.T) {
	dir := t.TempDir()
	mbps, err := SeqWrite(context.Background(), dir, 4)
	if err != nil {
		t.Fatal(err)
	}
	if mbps <= 0 {
		t.Fatalf("MB/s = %v", mbps)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Fatalf("probe left files behind: %v", left)
	}
	if _, err := SeqWrite(context.Background(), dir, 0); err == nil {
		t.Fatal("0 MiB accepted")
	}
}

func TestQuantileAndCores(t *testing.T) {
	s := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	if q := quantile(s, 0.5); q != 5 {
		t.Fatalf("p50 = %v", q)
	}
	if q := quantile(s, 0.99); q != 10 {
		t.Fatalf("p99 = %v", q)
	}
	if Cores() < 1 {
		t.Fatal("no cores")
	}
}

func TestSameDevice(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	if same, known := SameDevice(a, b); !known || !same {
		t.Errorf("two temporary directories: same %v, known %v; want the same file system", same, known)
	}
	if _, known := SameDevice(a, filepath.Join(a, "no-such-dir")); known {
		t.Error("a missing path: known, want unknown")
	}
	if runtime.GOOS == "linux" {
		if same, known := SameDevice(a, "/proc/self"); !known || same {
			t.Errorf("a temporary directory and /proc: same %v, known %v; want different file systems", same, known)
		}
	}
}

func TestInMemory(t *testing.T) {
	if runtime.GOOS != "linux" {
		if _, ok := InMemory(t.TempDir()); ok {
			t.Error("a memory file system reported where none can be told")
		}
		return
	}
	if name, ok := InMemory("/dev/shm"); !ok || name != "tmpfs" {
		t.Errorf("/dev/shm: %q %v, want tmpfs", name, ok)
	}
	if name, ok := InMemory("/proc"); ok {
		t.Errorf("/proc reported as %s", name)
	}
	if _, ok := InMemory(filepath.Join(t.TempDir(), "no-such-dir")); ok {
		t.Error("a missing directory reported as in memory")
	}
}
