package osstat

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

const statFixture = `cpu  108537 0 67776 967988 20116 0 13853 5300 1000 0
cpu0 54000 0 33000 480000 10000 0 7000 2600 500 0
cpu1 54537 0 34776 487988 10116 0 6853 2700 500 0
intr 1234 0 0
ctxt 999
btime 1700000000
`

func TestParseStat(t *testing.T) {
	h, err := ParseStat(statFixture)
	if err != nil {
		t.Fatal(err)
	}
	busy := float64(108537+0+67776+0+13853+5300) / 100
	total := busy + float64(967988+20116)/100
	if h.BusySec != busy || h.TotalSec != total || h.Cores != 2 {
		t.Fatalf("got %+v, want busy %v total %v cores 2", h, busy, total)
	}
	if _, err := ParseStat("intr 1 2 3\n"); err == nil {
		t.Fatal("no cpu line: want an error")
	}
	if _, err := ParseStat("cpu 1 x 3 4\n"); err == nil {
		t.Fatal("bad number: want an error")
	}
	// Old kernels have only four columns.
	h, err = ParseStat("cpu 100 0 100 800\n")
	if err != nil || h.BusySec != 2 || h.TotalSec != 10 || h.Cores != 1 {
		t.Fatalf("4 columns: %+v %v", h, err)
	}
}

func TestParsePidStat(t *testing.T) {
	text := "4242 (my (odd) proc) S 1 4242 4242 0 -1 4194560 100 0 0 0 1500 250 30 20 20 0 1 0 12345 1000000 200 18446744073709551615\n"
	st, err := ParsePidStat(text)
	if err != nil {
		t.Fatal(err)
	}
	if st.Comm != "my (odd) proc" || st.UTime != 1500 || st.STime != 250 || st.CUTime != 30 || st.CSTime != 20 {
		t.Fatalf("got %+v", st)
	}
	for _, bad := range []string{"", "12 noparen S 1", "12 (x) S 1 2 3"} {
		if _, err := ParsePidStat(bad); err == nil {
			t.Errorf("%q: want an error", bad)
		}
	}
}

func TestProcsCPUFixture(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("linux only")
	}
	dir := t.TempDir()
	write := func(pid, comm string, u, s, cu, cs string) {
		if err := os.MkdirAll(filepath.Join(dir, pid), 0o755); err != nil {
			t.Fatal(err)
		}
		line := pid + " (" + comm + ") S 1 1 1 0 -1 0 0 0 0 0 " + u + " " + s + " " + cu + " " + cs + " 20 0 1 0 1 1 1\n"
		if err := os.WriteFile(filepath.Join(dir, pid, "stat"), []byte(line), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("10", "postgres", "100", "50", "200", "50")
	write("11", "postgres", "10", "10", "0", "0")
	write("12", "mariadbd", "1000", "0", "0", "0")
	write("13", "bash", "999", "999", "0", "0")
	if err := os.MkdirAll(filepath.Join(dir, "self"), 0o755); err != nil {
		t.Fatal(err)
	}
	old := Root
	Root = dir
	defer func() { Root = old }()

	sec, n, ok := ProcsCPU("postgres")
	if !ok || n != 2 || sec != 4.2 {
		t.Fatalf("postgres: %v %v %v, want 4.2 s over 2", sec, n, ok)
	}
	sec, n, ok = ProcsCPU("mariadbd", "mysqld")
	if !ok || n != 1 || sec != 10 {
		t.Fatalf("mariadbd: %v %v %v", sec, n, ok)
	}
	if sec, n, ok = ProcsCPU("nothing"); !ok || n != 0 || sec != 0 {
		t.Fatalf("nothing: %v %v %v", sec, n, ok)
	}
	Root = filepath.Join(dir, "missing")
	if _, _, ok := ProcsCPU("postgres"); ok {
		t.Fatal("missing /proc: want ok=false")
	}
	if _, ok := ReadHostCPU(); ok {
		t.Fatal("missing /proc: want ok=false")
	}
}

// TestRealProc reads the real /proc.
func TestRealProc(t *testing.T) {
	if runtime.GOOS != "linux" {
		if _, ok := ReadHostCPU(); ok {
			t.Fatal("not linux: want ok=false")
		}
		t.Skip("linux only")
	}
	h, ok := ReadHostCPU()
	if !ok {
		t.Fatal("ReadHostCPU: not ok")
	}
	if !(h.TotalSec > h.BusySec && h.BusySec > 0) || h.Cores < 1 {
		t.Fatalf("implausible %+v", h)
	}
	if h.Cores < runtime.NumCPU() {
		t.Errorf("cores %d < runtime.NumCPU %d", h.Cores, runtime.NumCPU())
	}

	b, err := os.ReadFile("/proc/self/comm")
	if err != nil {
		t.Fatal(err)
	}
	comm := strings.TrimSpace(string(b))
	// Burn a little CPU so that the process has at least a tick.
	for end := time.Now().Add(50 * time.Millisecond); time.Now().Before(end); {
	}
	sec, n, ok := ProcsCPU(comm)
	if !ok || n < 1 || sec <= 0 {
		t.Fatalf("own process %q: sec %v n %v ok %v", comm, sec, n, ok)
	}
	h2, _ := ReadHostCPU()
	if h2.TotalSec < h.TotalSec || h2.BusySec < h.BusySec {
		t.Fatalf("host CPU went backwards: %+v then %+v", h, h2)
	}
}
