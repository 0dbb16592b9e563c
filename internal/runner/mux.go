package runner

import (
	"context"
	"iter"
	"os"
	"runtime"
	"strconv"
	"time"
	"unsafe"

	"github.com/ceiling-db/ceiling/internal/target"
	"github.com/ceiling-db/ceiling/internal/workload"
)

// Multiplexed closed loop. With several workers, a thread per worker costs
// a scheduler round (futex wake-ups, context switches) per request.
// pgbench -j instead serves several connections from one thread:
// it polls their sockets together, so one wake-up serves every connection
// that is ready. The runner does the same while keeping Worker.Do
// synchronous: each worker's loop runs as a coroutine (iter.Pull), and a
// connection whose socket is not ready suspends its coroutine through the
// waiter it was given (target.Cooperative) instead of blocking. A group, one
// goroutine that keeps its thread and P while it polls, resumes its
// coroutines in turn (a direct switch on the same thread, no scheduler
// involved), polls the sockets they wait on, and resumes the ready ones;
// every muxYield it passes through the scheduler (see there).
//
// It applies to the closed loop only, when every worker connection accepts
// a waiter and no worker pauses on purpose (workload.Pauser: a pause would
// stop its whole group). Anything else that blocks inside a coroutine (a
// reconnection's dial and back-off, a lock, pgconn's wait for its
// background reader after a slow write) stops its group for that long; it
// stays correct, only slower.
//
// Group count: one group per muxPerGroup workers, at most one per CPU core,
// at least one; a single worker keeps its own thread (a lone worker in a
// group costs more than on its own thread: poll(2) wake-ups instead of a
// blocking recv). Measured on the 2-core development VM, single-row inserts
// against the local PostgreSQL with synchronous_commit off (CPU-bound, so
// the client's efficiency shows), medians of 4 alternated 5 s runs; the
// two-group runs also had the wait sampler at 50 ms instead of 10 (about 1%
// of the machine; see postgres.WaitSampleInterval):
//
//	workers   one group   two groups   pgbench -j 2
//	   4        37.4k       39.8k        40.4k req/s
//	   8        38.4k       42.1k        42.8k
//	  16        36.3k       40.7k        43.1k
//
// One group spends slightly less client CPU per request (11.3 against 12.1
// µs at 4 workers), but while its thread waits for a core every connection
// waits with it; two let one run while the other is descheduled, as
// pgbench's two threads do. CEILING_MUX_GROUPS=n forces n groups, also for
// one worker; 0 turns multiplexing off.

// muxPerGroup is how many workers one group serves before another is
// added (up to the core limit).
const muxPerGroup = 2

// muxSlice is the longest a waiting coroutine goes without being resumed,
// so that it re-checks its deadlines (how a cancelled request is
// interrupted).
const muxSlice = 100 * time.Millisecond

// muxWait is what a suspended coroutine waits for: one socket, readable
// (pollIn) or writable (pollOut).
type muxWait struct {
	fd     int32
	events int16
	// With the group's I/O on a ring (mux_ring.go): ringOpSend or ringOpRecv
	// of n bytes at buf, instead of waiting for events.
	op  uint8
	n   uint32
	buf unsafe.Pointer
}

// muxAgain is the wait of a coroutine that only gives the other workers
// of its group a turn: it is resumed again after the next poll, whatever
// the sockets say.
var muxAgain = muxWait{fd: -1}

// pollFd has the layout of struct pollfd.
type pollFd struct {
	fd      int32
	events  int16
	revents int16
}

// muxGroup is the set of workers one thread serves.
type muxGroup struct {
	workers []*worker
	ring    *uring  // nil: the group polls with ppoll (see mux_ring.go)
	idx     int     // the group's index in the run
	spread  *spread // nil: one group, or one core (see spread_linux.go)
	yields  int     // passes through the scheduler
}

// spreadEvery is how many passes through the scheduler (muxYield apart)
// a group makes between two checks of its core.
const spreadEvery = 8

// afterYield runs after each pass through the scheduler, on whatever
// thread the group resumed on: every spreadEvery-th, it checks that no
// other group's thread shares that thread's core.
func (g *muxGroup) afterYield() {
	if g.spread == nil {
		return
	}
	g.yields++
	if g.yields%spreadEvery == 0 {
		g.spread.check(g.idx)
	}
}

// muxGroupCount is how many groups the run's workers are split into; 0
// means one goroutine per worker.
func (r *run) muxGroupCount() int {
	return groupCount(r.cfg, len(r.workers))
}

// groupCount is muxGroupCount for n workers.
func groupCount(cfg Config, n int) int {
	if cfg.openLoop() || !muxSupported {
		return 0
	}
	if v, err := strconv.Atoi(os.Getenv("CEILING_MUX_GROUPS")); err == nil && v >= 0 {
		return min(v, n)
	}
	if n < 2 {
		return 0
	}
	return min((n+muxPerGroup-1)/muxPerGroup, runtime.NumCPU())
}

// Multiplexes reports whether a run of cfg with w's workers will serve
// them a few per thread, provided their connections cooperate
// (target.Cooperative): a closed loop of several workers that do not pause
// (workload.PauseDeclarer). Targets use it as a hint when dialling
// (target.Options.Multiplexed).
func Multiplexes(cfg Config, w workload.Workload) bool {
	if p, ok := w.(workload.PauseDeclarer); ok && p.WorkersPause() {
		return false
	}
	return groupCount(cfg, cfg.Threads) > 0
}

// setupMux splits the workers into groups and gives each connection its
// waiter; it returns nil (and changes nothing) when the run is not
// multiplexed.
func (r *run) setupMux() []*muxGroup {
	g := r.muxGroupCount()
	if g == 0 {
		return nil
	}
	for _, k := range r.workers {
		if _, ok := k.wk.(workload.Pauser); ok {
			return nil
		}
		if _, ok := k.conn.(target.Cooperative); !ok {
			return nil
		}
	}
	groups := make([]*muxGroup, g)
	for i := range groups {
		groups[i] = &muxGroup{}
	}
	for i, k := range r.workers {
		grp := groups[i%g]
		grp.workers = append(grp.workers, k)
		k.waiter = grp.waiter(k)
		if !k.conn.(target.Cooperative).SetWaiter(k.waiter) {
			for _, k := range r.workers[:i+1] {
				k.conn.(target.Cooperative).SetWaiter(nil)
				k.waiter = nil
			}
			return nil
		}
	}
	r.setupRings(groups)
	if !muxLocked {
		sp := newSpread(g)
		for i, grp := range groups {
			grp.idx, grp.spread = i, sp
		}
	}
	// Each group holds a P while it polls (pollWait keeps the scheduler
	// out, as the raw connections do), and the run has exactly one P per
	// group: the clock, the samplers and the garbage collector run when a
	// group goes through the scheduler (every muxYield, see drive). A spare
	// P would cost more than it gives: each of those passes through the
	// scheduler would wake a thread to look for work for it (wakep), a
	// futex wake-up and a context switch that finds nothing. The locked
	// scheme (muxLocked) keeps one more P, as before. restoreProcs undoes
	// this.
	prev := runtime.GOMAXPROCS(0)
	want := g
	if muxLocked {
		want = max(prev, g+1)
	}
	if prev != want {
		runtime.GOMAXPROCS(want)
		r.procs = [2]int{prev, want}
	}
	return groups
}

// restoreProcs gives back the Ps setupMux added, unless GOMAXPROCS was
// changed since (e.g. by raw connections opened meanwhile).
func (r *run) restoreProcs() {
	if r.procs[1] != 0 && runtime.GOMAXPROCS(0) == r.procs[1] {
		runtime.GOMAXPROCS(r.procs[0])
	}
	r.procs = [2]int{}
}

// waiter is k's target.Cooperative waiter: it suspends k's coroutine until
// the group's poll finds fd ready. Called from anywhere but k's coroutine
// (a goroutine pgconn started, or the run closing the connection after the
// loops), it reports false and the connection blocks by itself. Which
// goroutine calls is told by curg, without a system call where the
// architecture allows (see curg); it was a gettid per request before,
// about 200 ns on the development VM, 1.5% of the client CPU per request.
func (g *muxGroup) waiter(k *worker) func(fd int, write bool) bool {
	return func(fd int, write bool) bool {
		if curg() != k.self.Load() {
			return false
		}
		y := k.yield
		if y == nil {
			return false
		}
		ev := int16(pollIn)
		if write {
			ev = pollOut
		}
		k.suspends++
		return y(muxWait{fd: int32(fd), events: ev})
	}
}

// muxYield is how often a group goes through the scheduler of its own
// accord (runtime.Gosched, between two polls).
//
// A group polls through raw system calls, so to the runtime it looks as if
// it ran without pause, and the runtime's monitor (sysmon) preempts a
// goroutine that has run for 10 ms: a signal to the thread, the poll
// interrupted, and the goroutine put back in the scheduler's queue. For a
// goroutine locked to its thread, as groups were, that also meant handing
// the P to another thread and back (two futex wake-ups, four context
// switches): measured on the 2-core development VM, about 100 preemption
// signals a second and 10-20 ms/s of client CPU outside the group threads
// at 4 workers. A group that yields every 2 ms is never preempted, and
// unlocked, its yield costs a pass through the scheduler on its own thread
// (no system call, since the run has no spare P to wake a thread for, see
// setupMux). Single-row inserts against the local PostgreSQL, alternated
// 6 s windows (bench/pg-window-ab.sh), client CPU per request, unlocked
// against locked: 4 workers with every commit waiting for its flush,
// 31.5/33.3, 32.6/45.8, 36.8/45.9, 47.5/50.3, 51.1/61.7 µs (0.87-0.90
// against 0.96-1.00 voluntary switches per request); 16 workers
// CPU-bound, 25.4/26.2, 25.6/26.1, 21.0/20.7, 18.2/18.9, 21.5/22.4 µs.
// The VM's speed drifted between rounds; each pair is one round.
//
// With no spare P, the clock, the samplers and the garbage collector run
// at those passes (each runs the expired timers and the goroutines in the
// queues before the group again), so they wait about 2 ms for a P while
// requests complete, and while a poll blocks for longer (a server that
// stalls) until the runtime preempts it, 10-20 ms. The samplers' replies
// arrive through Go's netpoller, which the runtime's monitor reads every
// 10 ms when every P is busy. None of them is timed to the millisecond.
const muxYield = 2 * time.Millisecond

// muxLocked selects the earlier scheme: each group locked to its OS thread
// (runtime.LockOSThread), preempted by the runtime instead of yielding, with
// one spare P. CEILING_MUX_LOCKED=1 turns it on for comparisons. It is the
// only scheme where curg tells threads, not goroutines, apart (the waiter
// then relies on the group never leaving its thread).
var muxLocked = !curgIsGoroutine || os.Getenv("CEILING_MUX_LOCKED") == "1"

// coroutines starts the group's worker loops as coroutines, each
// suspended at its first wait.
func (g *muxGroup) coroutines(ctx context.Context) []func() (muxWait, bool) {
	next := make([]func() (muxWait, bool), len(g.workers))
	for i, k := range g.workers {
		// No stop: every coroutine is run to its end. (A panic in one is
		// re-raised here and ends the process, as in a goroutine; stopping
		// the others on the way would run their loops to the end of the
		// run first.)
		next[i], _ = iter.Pull(func(yield func(muxWait) bool) {
			k.yield = yield
			k.self.Store(curg())
			defer func() { k.yield = nil; k.self.Store(0) }()
			k.loop(ctx)
		})
	}
	return next
}

// resume runs the runnable coroutines to their next wait, which it hands
// to wait, and returns how many ended instead.
func resume(next []func() (muxWait, bool), runnable []int, wait func(i int, w muxWait)) (ended int) {
	for _, i := range runnable {
		w, ok := next[i]()
		if !ok {
			ended++
			continue
		}
		wait(i, w)
	}
	return ended
}

// drive runs the group's worker loops to their end.
func (g *muxGroup) drive(ctx context.Context) {
	if muxLocked {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
	}
	if g.ring != nil {
		g.driveRing(ctx)
		return
	}

	n := len(g.workers)
	next := g.coroutines(ctx)
	runnable := make([]int, n)
	for i := range runnable {
		runnable[i] = i
	}
	fds := make([]pollFd, 0, n)
	owner := make([]int, 0, n) // owner[j] waits on fds[j]
	again := make([]int, 0, n) // waiting for nothing but a turn (muxAgain)
	alive := n
	// Times are offsets from base, read once per poll (see worker.loop).
	base := time.Now()
	var sweep, yielded, now time.Duration
	for alive > 0 {
		alive -= resume(next, runnable, func(i int, w muxWait) {
			if w.fd < 0 {
				again = append(again, i)
				return
			}
			fds = append(fds, pollFd{fd: w.fd, events: w.events})
			owner = append(owner, i)
		})
		runnable = append(runnable[:0], again...)
		again = again[:0]
		if len(fds) == 0 {
			continue
		}
		// The timeout counts from the last poll's return: the coroutines
		// ran since, for much less than muxSlice. With a coroutine
		// runnable already, the poll only looks.
		timeout := muxSlice - (now - sweep)
		if len(runnable) > 0 {
			timeout = 0
		}
		ready, err := pollWait(fds, timeout)
		if err != nil {
			time.Sleep(time.Millisecond) // not expected; do not spin
		}
		now = time.Since(base)
		if !muxLocked && now-yielded >= muxYield {
			runtime.Gosched()
			yielded = now
			g.afterYield()
		}
		if err != nil || now-sweep >= muxSlice {
			// Resume everyone: waiting connections re-check their deadlines.
			runnable = append(runnable, owner...)
			fds, owner = fds[:0], owner[:0]
			sweep = now
			continue
		}
		if ready == 0 {
			continue
		}
		kept := 0
		for j, f := range fds {
			if f.revents != 0 {
				runnable = append(runnable, owner[j])
				continue
			}
			fds[kept], owner[kept] = f, owner[j]
			kept++
		}
		fds, owner = fds[:kept], owner[:kept]
	}
}
