package osstat

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
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
	text := "4242 (my (odd) proc) S 77 4242 4242 0 -1 4194560 100 0 0 0 1500 250 30 20 20 0 1 0 12345 1000000 200 18446744073709551615\n"
	st, err := ParsePidStat(text)
	if err != nil {
		t.Fatal(err)
	}
	if st.Comm != "my (odd) proc" || st.PPid != 77 || st.UTime != 1500 || st.STime != 250 || st.CUTime != 30 || st.CSTime != 20 {
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

func TestTreeCPUFixture(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("linux only")
	}
	dir := t.TempDir()
	write := func(pid, comm, ppid, u, s, cu, cs, children string) {
		task := filepath.Join(dir, pid, "task", pid)
		if err := os.MkdirAll(task, 0o755); err != nil {
			t.Fatal(err)
		}
		line := pid + " (" + comm + ") S " + ppid + " 1 1 0 -1 0 0 0 0 0 " + u + " " + s + " " + cu + " " + cs + " 20 0 1 0 1 1 1\n"
		if err := os.WriteFile(filepath.Join(dir, pid, "stat"), []byte(line), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(task, "children"), []byte(children), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A postmaster (10) with two backends, a child that is not a server
	// process, and a listed child that has gone; another instance (30)
	// that is not in the tree.
	write("10", "postgres", "1", "100", "50", "200", "50", "11 12 13 14 ")
	write("11", "postgres", "10", "10", "10", "0", "0", "")
	write("12", "postgres", "10", "5", "5", "0", "0", "")
	write("13", "sh", "10", "999", "999", "0", "0", "")
	write("30", "postgres", "1", "7000", "0", "0", "0", "")
	old := Root
	Root = dir
	defer func() { Root = old }()

	st, err := ReadPidStat(11)
	if err != nil || st.PPid != 10 || st.Comm != "postgres" {
		t.Fatalf("ReadPidStat(11) = %+v, %v", st, err)
	}
	sec, n, ok := TreeCPU(10, "postgres")
	if !ok || n != 3 || sec != 4.3 {
		t.Fatalf("tree of 10: %v s over %v (ok %v), want 4.3 s over 3", sec, n, ok)
	}
	if _, _, ok := TreeCPU(13, "postgres"); ok {
		t.Fatal("root that is not a server process: want ok=false")
	}
	if _, _, ok := TreeCPU(99, "postgres"); ok {
		t.Fatal("root that is gone: want ok=false")
	}
	if err := os.Remove(filepath.Join(dir, "30", "task", "30", "children")); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := TreeCPU(30, "postgres"); ok {
		t.Fatal("no children list: want ok=false")
	}
}

// TestTreeCPUReal counts this process and a child it started.
func TestTreeCPUReal(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("linux only")
	}
	if _, err := os.Stat("/proc/self/task/" + strconv.Itoa(os.Getpid()) + "/children"); err != nil {
		t.Skip("kernel does not list children (CONFIG_PROC_CHILDREN):", err)
	}
	self, err := ReadPidStat(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if self.PPid != os.Getppid() {
		t.Fatalf("ppid %d, want %d", self.PPid, os.Getppid())
	}
	child := exec.Command("sleep", "30")
	if err := child.Start(); err != nil {
		t.Skip("cannot start sleep:", err)
	}
	defer func() { _ = child.Process.Kill(); _ = child.Wait() }()
	// The child is listed (under whichever thread forked it) once it has
	// forked; it is named sleep once it has exec'd.
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, n, ok := TreeCPU(os.Getpid(), self.Comm, "sleep")
		if !ok {
			t.Fatal("TreeCPU of this process: not ok")
		}
		if n == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("tree of this process: %d processes, want 2 (itself and sleep)", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, n, _ := TreeCPU(os.Getpid(), self.Comm); n != 1 {
		t.Fatalf("tree without sleep among the names: %d processes, want 1", n)
	}
}

// BenchmarkProcsCPU scans every process on the host for postgres ones.
func BenchmarkProcsCPU(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Skip("linux only")
	}
	for b.Loop() {
		ProcsCPU("postgres")
	}
}

// BenchmarkTreeCPU reads this process's tree (set CEILING_BENCH_ROOT to a
// postmaster's pid to read a server's).
func BenchmarkTreeCPU(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Skip("linux only")
	}
	root, names := os.Getpid(), []string{"postgres"}
	if v, err := strconv.Atoi(os.Getenv("CEILING_BENCH_ROOT")); err == nil {
		root = v
	} else if st, err := ReadPidStat(root); err == nil {
		names = []string{st.Comm}
	}
	if _, _, ok := TreeCPU(root, names...); !ok {
		b.Skip("TreeCPU not available here")
	}
	for b.Loop() {
		TreeCPU(root, names...)
	}
}

// TestCPUWhileChildrenExit: a tree's CPU (TreeCPU, ProcsCPU) does not
// drop while its children exit and are reaped (a PostgreSQL postmaster when
// ceiling's connections close at the end of a run). A child reaped between
// the reading of the parent's counters and its own was counted nowhere: at
// the end of a 48-connection run the server's CPU lost 5 s.
func TestCPUWhileChildrenExit(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("linux only")
	}
	if _, err := os.Stat("/proc/self/task/" + strconv.Itoa(os.Getpid()) + "/children"); err != nil {
		t.Skip("kernel does not list children (CONFIG_PROC_CHILDREN):", err)
	}
	shPath, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh:", err)
	}
	sh, err := os.ReadFile(shPath)
	if err != nil {
		t.Skip("cannot read sh:", err)
	}
	for _, reader := range []string{"TreeCPU", "ProcsCPU"} {
		t.Run(reader, func(t *testing.T) {
			// A copy of sh under a name of its own, so that ProcsCPU
			// counts this test's processes only.
			dir := t.TempDir()
			comm := "ceiltest" + strconv.Itoa(os.Getpid()%10000000)
			bin := filepath.Join(dir, comm)
			if err := os.WriteFile(bin, sh, 0o755); err != nil {
				t.Fatal(err)
			}
			read := func(pid int) (float64, int, bool) { return TreeCPU(pid, comm) }
			if reader == "ProcsCPU" {
				read = func(int) (float64, int, bool) { return ProcsCPU(comm) }
			}
			cpuWhileChildrenExit(t, bin, read)
		})
	}
}

// cpuWhileChildrenExit starts sh (at bin) with children that burn CPU until
// each is told to stop, stops them one by one, and checks that read's
// figure never drops meanwhile.
func cpuWhileChildrenExit(t *testing.T, bin string, read func(pid int) (float64, int, bool)) {
	const kids = 40
	stops := t.TempDir()
	// The parent reaps its children (wait) as they exit, then exits.
	parent := exec.Command(bin, "-c", `for i in $(seq `+strconv.Itoa(kids)+`); do "$0" -c 'while [ ! -e "$0" ]; do :; done' "$1/$i" & done; wait`, bin, stops)
	if err := parent.Start(); err != nil {
		t.Skip("cannot start sh:", err)
	}
	defer func() { _ = parent.Process.Kill(); _ = parent.Wait() }()
	pid := parent.Process.Pid
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, n, ok := read(pid)
		if ok && n == kids+1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d processes (ok %v), want %d", n, ok, kids+1)
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond) // the children gather CPU
	// Read without pause while the children are stopped one by one.
	type result struct {
		worst   float64
		samples int
	}
	done := make(chan result)
	go func() {
		var r result
		prev := -1.0
		for time.Now().Before(deadline) {
			sec, n, ok := read(pid)
			if !ok || n <= 1 {
				break // all reaped (or the parent gone)
			}
			r.samples++
			if prev >= 0 && prev-sec > r.worst {
				r.worst = prev - sec
			}
			prev = max(prev, sec)
		}
		done <- r
	}()
	for i := 1; i <= kids; i++ {
		if err := os.WriteFile(filepath.Join(stops, strconv.Itoa(i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	r := <-done
	t.Logf("%d readings while the children exited; largest drop %.2f s", r.samples, r.worst)
	// A tick or two of slack: the kernel adds a reaped child's times to
	// the parent's as it rounds them, not as /proc showed them.
	if r.worst > 0.05 {
		t.Errorf("the CPU dropped by %.2f s while the children exited (a child reaped between two reads counted nowhere)", r.worst)
	}
}

func TestParseCPUPressure(t *testing.T) {
	v, err := ParseCPUPressure("some avg10=0.95 avg60=9.39 avg300=11.91 total=725440841\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n")
	if err != nil || v != 725.440841 {
		t.Fatalf("some total = %v, %v; want 725.440841 s", v, err)
	}
	for _, bad := range []string{"", "full avg10=0 total=5\n", "some avg10=1 total=x\n"} {
		if _, err := ParseCPUPressure(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	// The live file, where the kernel has PSI: a total that only grows.
	a, ok := ReadCPUPressure()
	if !ok {
		t.Skip("no /proc/pressure/cpu on this host (PSI off, or not Linux)")
	}
	if b, ok := ReadCPUPressure(); !ok || b < a {
		t.Errorf("CPU pressure went from %v to %v s", a, b)
	}
}

// TestParseSchedstat: the run-queue time is the second field.
func TestParseSchedstat(t *testing.T) {
	if ns, err := ParseSchedstat("1203443 45021 87\n"); err != nil || ns != 45021 {
		t.Fatalf("got %d, %v; want 45021", ns, err)
	}
	if _, err := ParseSchedstat("12\n"); err == nil {
		t.Fatal("short line parsed")
	}
}

// TestRunQueueFixture: a fake /proc whose threads' run-queue times move
// between reads. The first read is the baseline; a thread's growth counts,
// a thread that appears later counts all of its time, one that exits is
// dropped, and a tid reused with a smaller time counts from there.
func TestRunQueueFixture(t *testing.T) {
	root := t.TempDir()
	old := Root
	Root = root
	t.Cleanup(func() { Root = old })
	set := func(pid, tid int, ns uint64) {
		dir := filepath.Join(root, strconv.Itoa(pid), "task", strconv.Itoa(tid))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "schedstat"), []byte(fmt.Sprintf("999 %d 5\n", ns)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gone := func(pid, tid int) {
		if err := os.RemoveAll(filepath.Join(root, strconv.Itoa(pid), "task", strconv.Itoa(tid))); err != nil {
			t.Fatal(err)
		}
	}
	var q RunQueue
	read := func(want float64, pids ...int) {
		t.Helper()
		got, ok := q.Read(pids)
		if !ok || math.Abs(got-want) > 1e-9 {
			t.Fatalf("Read(%v) = %v, %v; want %v", pids, got, ok, want)
		}
	}
	set(10, 10, 5e9) // 5 s before the baseline: not counted
	set(10, 11, 1e9)
	set(20, 20, 2e9)
	read(0, 10, 20)
	set(10, 10, 5.5e9)  // +0.5 s
	set(10, 11, 1.25e9) // +0.25 s
	read(0.75, 10, 20)
	set(10, 12, 0.1e9) // a new thread: all of its 0.1 s
	gone(20, 20)       // pid 20 exited
	read(0.85, 10, 20)
	set(10, 11, 0.05e9) // tid 11 reused by a new thread: from here on
	read(0.85, 10, 20)
	set(10, 11, 0.08e9)
	read(0.88, 10)
	var empty RunQueue
	if _, ok := empty.Read([]int{99}); ok {
		t.Fatal("no such process, yet ok")
	}
}

// TestRunQueueReal: this process's threads on the real /proc, while a
// goroutine per core and one more spin, so that some wait for a core.
func TestRunQueueReal(t *testing.T) {
	if _, err := os.Stat("/proc/self/schedstat"); err != nil {
		t.Skip("no /proc/self/schedstat here (not Linux, or no schedstats)")
	}
	var q RunQueue
	if _, ok := q.Read([]int{os.Getpid()}); !ok {
		t.Fatal("own threads unreadable")
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	old := runtime.GOMAXPROCS(runtime.NumCPU() + 2)
	defer runtime.GOMAXPROCS(old)
	for i := 0; i < runtime.NumCPU()+2; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() { // spin: more runnable threads than cores
			}
		}()
	}
	time.Sleep(300 * time.Millisecond)
	stop.Store(true)
	wg.Wait()
	sec, ok := q.Read([]int{os.Getpid()})
	if !ok || sec <= 0 || sec > 10 {
		t.Fatalf("own threads waited %v s for a core (ok %v) with more spinning threads than cores: want > 0", sec, ok)
	}
	t.Logf("waited %.3f s", sec)
}
