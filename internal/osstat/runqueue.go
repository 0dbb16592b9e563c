package osstat

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
)

// RunQueue accumulates the time the threads of a set of processes spent
// runnable but waiting for a core: the second field of
// /proc/PID/task/TID/schedstat (ns; Linux with CONFIG_SCHED_INFO). Where
// the CPU seconds of processes say how busy they kept the cores, this says
// how long they queued for them, which grows before the cores are all
// busy. A thread's time counts from the first Read (a baseline), a thread
// that appears later counts all of its own, and one that exits between two
// Reads loses what it waited since the earlier one: the total is a lower
// bound where threads come and go (ceiling's sessions' backends). Not safe
// for concurrent use.
type RunQueue struct {
	last    map[int]uint64 // tid → run-queue ns at the last Read
	totalNs uint64
	started bool
}

// Read reads the threads of the processes pids and returns the seconds
// they have waited for a core since the first Read. ok is false where no
// thread's schedstat could be read (not Linux, no schedstats, or every
// process gone).
func (q *RunQueue) Read(pids []int) (sec float64, ok bool) {
	if runtime.GOOS != "linux" {
		return 0, false
	}
	now := map[int]uint64{}
	for _, pid := range pids {
		if pid <= 0 {
			continue
		}
		dir := filepath.Join(Root, strconv.Itoa(pid), "task")
		tasks, err := os.ReadDir(dir)
		if err != nil {
			continue // exited
		}
		for _, task := range tasks {
			tid, err := strconv.Atoi(task.Name())
			if err != nil {
				continue
			}
			b, err := os.ReadFile(filepath.Join(dir, task.Name(), "schedstat"))
			if err != nil {
				continue
			}
			if ns, err := ParseSchedstat(string(b)); err == nil {
				now[tid] = ns
			}
		}
	}
	if len(now) == 0 {
		return 0, false
	}
	for tid, ns := range now {
		was, seen := q.last[tid]
		switch {
		case seen && ns >= was:
			q.totalNs += ns - was
		case !seen && q.started:
			q.totalNs += ns // a thread started since the last Read
		}
		// seen with ns < was: the tid was reused by a new thread; its
		// time counts from here.
	}
	q.last, q.started = now, true
	return float64(q.totalNs) / 1e9, true
}

// ParseSchedstat parses the text of /proc/PID/schedstat: time on a core,
// time waiting on a run queue (both ns), timeslices run. It returns the
// run-queue time.
func ParseSchedstat(text string) (waitNs uint64, err error) {
	f := strings.Fields(text)
	if len(f) < 2 {
		return 0, errors.New("osstat: short schedstat")
	}
	return strconv.ParseUint(f[1], 10, 64)
}

// TreePids returns root and its children's pids (childrenOf, as TreeCPU
// reads them); ok is false when root's children cannot be listed.
func TreePids(root int) ([]int, bool) {
	if runtime.GOOS != "linux" || root <= 0 {
		return nil, false
	}
	kids, listed := childrenOf(filepath.Join(Root, strconv.Itoa(root)))
	if !listed {
		return nil, false
	}
	pids := []int{root}
	for _, s := range kids {
		if pid, err := strconv.Atoi(s); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids, true
}
