// Package osstat reads host and process CPU figures from /proc (Linux).
// On other systems, or where /proc cannot be read, every reader reports
// ok=false and callers leave the figures out rather than report zeros.
//
// Clock ticks are converted to seconds assuming USER_HZ = 100, which is what
// the Linux kernel exports to user space on every architecture Go supports
// (sysconf(_SC_CLK_TCK) is a compile-time constant of 100 there); reading it
// from the auxiliary vector would need cgo or parsing /proc/self/auxv, which
// is not worth it.
package osstat

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
)

// UserHZ is the clock-tick rate of /proc's CPU figures (assumed, see the
// package comment).
const UserHZ = 100

// Root is the proc file system read by the package-level functions.
var Root = "/proc"

// HostCPU is the host-wide CPU time since boot, over all cores.
type HostCPU struct {
	BusySec  float64 // user+nice+system+irq+softirq+steal
	TotalSec float64 // busy + idle + iowait
	Cores    int     // cpuN lines in /proc/stat (online CPUs)
}

// ReadHostCPU reads /proc/stat.
func ReadHostCPU() (HostCPU, bool) {
	if runtime.GOOS != "linux" {
		return HostCPU{}, false
	}
	b, err := os.ReadFile(filepath.Join(Root, "stat"))
	if err != nil {
		return HostCPU{}, false
	}
	h, err := ParseStat(string(b))
	return h, err == nil
}

// ReadCPUPressure reads the host's CPU pressure (/proc/pressure/cpu, Linux
// 4.20+ with PSI on): the seconds since boot during which at least one
// runnable task waited for a core ("some" total). ok is false where the
// file is absent (PSI off, other systems).
func ReadCPUPressure() (someSec float64, ok bool) {
	if runtime.GOOS != "linux" {
		return 0, false
	}
	b, err := os.ReadFile(filepath.Join(Root, "pressure", "cpu"))
	if err != nil {
		return 0, false
	}
	v, err := ParseCPUPressure(string(b))
	return v, err == nil
}

// ParseCPUPressure parses the text of /proc/pressure/cpu: the "some"
// line's total (µs), in seconds.
func ParseCPUPressure(text string) (float64, error) {
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || f[0] != "some" {
			continue
		}
		for _, kv := range f[1:] {
			if v, ok := strings.CutPrefix(kv, "total="); ok {
				us, err := strconv.ParseUint(v, 10, 64)
				if err != nil {
					return 0, errors.New("osstat: bad total in /proc/pressure/cpu")
				}
				return float64(us) / 1e6, nil
			}
		}
	}
	return 0, errors.New("osstat: no some total in /proc/pressure/cpu")
}

// ParseStat parses the text of /proc/stat: the aggregate "cpu" line gives
// the times, the "cpuN" lines the number of cores. The guest and guest_nice
// columns are left out: the kernel already counts them in user and nice.
func ParseStat(text string) (HostCPU, error) {
	var h HostCPU
	found := false
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || !strings.HasPrefix(f[0], "cpu") {
			continue
		}
		if f[0] != "cpu" {
			if _, err := strconv.Atoi(f[0][3:]); err == nil {
				h.Cores++
			}
			continue
		}
		if len(f) < 5 {
			return HostCPU{}, errors.New("osstat: short cpu line in /proc/stat")
		}
		var v [8]uint64 // user nice system idle iowait irq softirq steal
		for i := 1; i < len(f) && i <= len(v); i++ {
			n, err := strconv.ParseUint(f[i], 10, 64)
			if err != nil {
				return HostCPU{}, errors.New("osstat: bad cpu line in /proc/stat: " + line)
			}
			v[i-1] = n
		}
		idle := v[3] + v[4]
		busy := v[0] + v[1] + v[2] + v[5] + v[6] + v[7]
		h.BusySec, h.TotalSec = float64(busy)/UserHZ, float64(busy+idle)/UserHZ
		found = true
	}
	if !found {
		return HostCPU{}, errors.New("osstat: no cpu line in /proc/stat")
	}
	if h.Cores == 0 {
		h.Cores = 1
	}
	return h, nil
}

// ProcsCPU returns the CPU seconds (user + system) of every process whose
// command name (comm, at most 15 characters, as in /proc/PID/comm) is one of
// names, and how many such processes there are. The time of children those
// processes have waited for (cutime + cstime) is included, so that the
// figure does not drop when a server process exits: PostgreSQL's postmaster
// reaps its backends, and a backend's CPU then moves into its cutime. A
// child reaped during the scan, after its parent was read and before
// itself, would be counted nowhere: the parents among the processes are
// read again after the scan, and the scan repeated (up to maxRereads times)
// while they have reaped some. ok is false when /proc cannot be read; with
// no matching process it is true with n = 0.
func ProcsCPU(names ...string) (sec float64, n int, ok bool) {
	if runtime.GOOS != "linux" {
		return 0, 0, false
	}
	want := map[string]bool{}
	for _, nm := range names {
		want[nm] = true
	}
	for try := 1; ; try++ {
		ents, err := os.ReadDir(Root)
		if err != nil {
			return 0, 0, false
		}
		var ticks uint64
		n = 0
		reaped := map[int]uint64{} // pid → its children's ticks, as read
		var parents []int
		for _, e := range ents {
			name := e.Name()
			if name == "" || name[0] < '0' || name[0] > '9' {
				continue
			}
			st, err := readPidStat(filepath.Join(Root, name))
			if err != nil || !want[st.Comm] {
				continue // exited meanwhile, not ours to read, or not wanted
			}
			ticks += st.ticks()
			n++
			if pid, err := strconv.Atoi(name); err == nil {
				reaped[pid] = st.CUTime + st.CSTime
			}
			parents = append(parents, st.PPid)
		}
		if try == maxRereads || !reapedSince(reaped, parents) {
			return float64(ticks) / UserHZ, n, true
		}
	}
}

// maxRereads bounds how often ProcsCPU and TreeCPU read a tree again
// because a child was reaped while they read it.
const maxRereads = 10

// reapedSince says whether one of the processes that are the parents of
// others (their pids in parents) has reaped a child since its children's
// ticks were read (reaped: pid → those ticks). A parent that has gone
// counts as having reaped.
func reapedSince(reaped map[int]uint64, parents []int) bool {
	seen := map[int]bool{}
	for _, pp := range parents {
		was, ours := reaped[pp]
		if !ours || seen[pp] {
			continue
		}
		seen[pp] = true
		st, err := readPidStat(filepath.Join(Root, strconv.Itoa(pp)))
		if err != nil || st.CUTime+st.CSTime != was {
			return true
		}
	}
	return false
}

// PidCPU returns the CPU seconds (user + system, with those of waited-for
// children) of process pid and its command name; ok is false when it
// cannot be read.
func PidCPU(pid int) (sec float64, comm string, ok bool) {
	if runtime.GOOS != "linux" || pid <= 0 {
		return 0, "", false
	}
	st, err := readPidStat(filepath.Join(Root, strconv.Itoa(pid)))
	if err != nil {
		return 0, "", false
	}
	return float64(st.ticks()) / UserHZ, st.Comm, true
}

// PidStat holds the fields of /proc/PID/stat that this package uses, the
// times in clock ticks.
type PidStat struct {
	Comm                         string
	PPid                         int // parent's pid
	UTime, STime, CUTime, CSTime uint64
}

// TreeCPU is ProcsCPU for one process and its children: the CPU seconds of
// process root and of those of its children whose command name is one of
// names, and how many processes that is. The children are the kernel's
// lists for root's threads (/proc/ROOT/task/TID/children, which needs
// CONFIG_PROC_CHILDREN): a server that forks its sessions, such as
// PostgreSQL's postmaster, is read in a dozen files instead of a scan of
// every process on the host. A child reaped while the tree is read (after
// root's times, before its own) would be counted nowhere, as ceiling's
// connections closing at the end of a run make a postmaster reap dozens at
// once: root is read again after its children, and the tree read again
// (up to maxRereads times) while root has reaped some. ok is false when root
// is gone, is not one of names, or its children cannot be listed.
func TreeCPU(root int, names ...string) (sec float64, n int, ok bool) {
	if runtime.GOOS != "linux" || root <= 0 {
		return 0, 0, false
	}
	dir := filepath.Join(Root, strconv.Itoa(root))
	for try := 1; ; try++ {
		ticks, n, reaped, ok := readTree(dir, names)
		if !ok {
			return 0, 0, false
		}
		if !reaped || try == maxRereads {
			return float64(ticks) / UserHZ, n, true
		}
	}
}

// readTree is one reading of TreeCPU's tree at dir; reaped says root
// reaped a child meanwhile (the ticks may then miss it).
func readTree(dir string, names []string) (ticks uint64, n int, reaped, ok bool) {
	st, err := readPidStat(dir)
	if err != nil || !slices.Contains(names, st.Comm) {
		return 0, 0, false, false
	}
	kids, listed := childrenOf(dir)
	if !listed {
		return 0, 0, false, false
	}
	ticks = st.ticks()
	n = 1
	for _, kid := range kids {
		ks, err := readPidStat(filepath.Join(Root, kid))
		if err != nil || !slices.Contains(names, ks.Comm) {
			continue // exited and reaped (its time is in root's cutime), or not a server process
		}
		ticks += ks.ticks()
		n++
	}
	after, err := readPidStat(dir)
	reaped = err != nil || after.CUTime+after.CSTime != st.CUTime+st.CSTime
	return ticks, n, reaped, true
}

// childrenOf lists the pids of the children of the process at dir, from
// the kernel's lists for its threads (dir/task/TID/children, which needs
// CONFIG_PROC_CHILDREN); listed is false when no thread's list could be
// read.
func childrenOf(dir string) (kids []string, listed bool) {
	tasks, err := os.ReadDir(filepath.Join(dir, "task"))
	if err != nil {
		return nil, false
	}
	for _, task := range tasks {
		b, err := os.ReadFile(filepath.Join(dir, "task", task.Name(), "children"))
		if err != nil {
			continue // the thread has exited, or children are not listed
		}
		listed = true
		kids = append(kids, strings.Fields(string(b))...)
	}
	return kids, listed
}

// ticks is the process's CPU time with its waited-for children's.
func (st PidStat) ticks() uint64 { return st.UTime + st.STime + st.CUTime + st.CSTime }

// ReadPidStat reads /proc/PID/stat.
func ReadPidStat(pid int) (PidStat, error) {
	if runtime.GOOS != "linux" || pid <= 0 {
		return PidStat{}, errors.New("osstat: no /proc/PID/stat here")
	}
	return readPidStat(filepath.Join(Root, strconv.Itoa(pid)))
}

// readPidStat reads and parses dir/stat.
func readPidStat(dir string) (PidStat, error) {
	b, err := os.ReadFile(filepath.Join(dir, "stat"))
	if err != nil {
		return PidStat{}, err
	}
	return ParsePidStat(string(b))
}

// ParsePidStat parses the text of /proc/PID/stat. The command name may
// contain spaces and parentheses, so it is taken up to the last ')'.
func ParsePidStat(text string) (PidStat, error) {
	open := strings.IndexByte(text, '(')
	closing := strings.LastIndexByte(text, ')')
	if open < 0 || closing < open {
		return PidStat{}, errors.New("osstat: malformed /proc/PID/stat")
	}
	st := PidStat{Comm: text[open+1 : closing]}
	f := strings.Fields(text[closing+1:])
	// f[0] is field 3 (state), f[1] field 4 (ppid); utime..cstime are
	// fields 14..17.
	if len(f) < 15 {
		return PidStat{}, errors.New("osstat: short /proc/PID/stat")
	}
	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		return PidStat{}, errors.New("osstat: bad ppid in /proc/PID/stat")
	}
	st.PPid = ppid
	dst := []*uint64{&st.UTime, &st.STime, &st.CUTime, &st.CSTime}
	for i, p := range dst {
		v, err := strconv.ParseInt(f[11+i], 10, 64)
		if err != nil {
			return PidStat{}, errors.New("osstat: bad number in /proc/PID/stat")
		}
		if v > 0 { // cutime/cstime are signed in the kernel
			*p = uint64(v)
		}
	}
	return st, nil
}
