package runner

import (
	"os"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// spreadOff turns spreading off (CEILING_MUX_SPREAD=0), for comparisons.
var spreadOff = os.Getenv("CEILING_MUX_SPREAD") == "0"

// spread keeps the worker groups' threads on different cores. When two
// groups' threads share a core, the server's processes queued on it behind
// them can wait a quarter of a second for it (measured on a 2-core VM
// against a local PostgreSQL: bench/README.md, "server stalls"). Pinning
// each group to a core prevents that but costs throughput (a thread that
// cannot move to an idle core), so a group that finds itself on another
// group's core moves once to a core no group was last seen on and is
// then free to go anywhere again.
type spread struct {
	cpus    []atomic.Int32 // the core each group's thread was last seen on; -1 unknown
	allowed unix.CPUSet    // the process's cores, restored after each move
}

// newSpread returns nil (nothing to do) for fewer than two groups or cores.
func newSpread(groups int) *spread {
	if groups < 2 || spreadOff {
		return nil
	}
	s := &spread{cpus: make([]atomic.Int32, groups)}
	if unix.SchedGetaffinity(0, &s.allowed) != nil || s.allowed.Count() < 2 {
		return nil
	}
	for i := range s.cpus {
		s.cpus[i].Store(-1)
	}
	return s
}

// getcpu is the core the calling thread runs on, or -1.
func getcpu() int {
	var cpu uint32
	if _, _, e := syscall.RawSyscall(unix.SYS_GETCPU, uintptr(unsafe.Pointer(&cpu)), 0, 0); e != 0 {
		return -1
	}
	return int(cpu)
}

// check records the core group i's thread runs on (the calling thread)
// and, when an earlier group's thread was last seen there, moves this one
// to a core no group was last seen on. It returns the core it left, or -1
// when it did not move.
func (s *spread) check(i int) int {
	cpu := getcpu()
	if cpu < 0 {
		return -1
	}
	s.cpus[i].Store(int32(cpu))
	for j := 0; j < i; j++ {
		if int(s.cpus[j].Load()) == cpu {
			if s.move(i, cpu) {
				return cpu
			}
			return -1
		}
	}
	return -1
}

// move pins the calling thread to a free core, which migrates it there at
// once, then gives it back every core. It reports whether the thread was
// seen on that core.
func (s *spread) move(i, from int) bool {
	for c := 0; c < len(s.allowed)*64; c++ {
		if c == from || !s.allowed.IsSet(c) || s.seen(c) {
			continue
		}
		var one unix.CPUSet
		one.Set(c)
		if unix.SchedSetaffinity(0, &one) != nil {
			return false
		}
		// The pin migrates the thread before the call returns; a thread
		// not on c now did not move (and is not recorded as moved).
		moved := getcpu() == c
		_ = unix.SchedSetaffinity(0, &s.allowed)
		if !moved {
			return false
		}
		s.cpus[i].Store(int32(c))
		return true
	}
	return false
}

// seen reports whether a group's thread was last seen on core c.
func (s *spread) seen(c int) bool {
	for i := range s.cpus {
		if int(s.cpus[i].Load()) == c {
			return true
		}
	}
	return false
}
