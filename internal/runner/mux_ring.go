package runner

import (
	"context"
	"math"
	"runtime"
	"syscall"
	"time"
	"unsafe"

	"github.com/ceiling-db/ceiling/internal/target"
)

// Groups on io_uring. A group that polls (drive) makes three system calls
// per request: the send, the poll (shared by the group's connections), and
// the recv, plus a failed recv now and then (earlyRead). With a ring
// (Linux 5.11 and later, ring_linux.go), the group's connections hand it
// their sends and receives instead (target.RingCooperative): it queues
// those of every coroutine it resumed, submits them in one io_uring_enter
// that also waits for the next completion, and resumes the coroutines
// whose request completed. A send, and a recv whose reply is already
// there, complete during the submission; a recv that has to wait
// completes when the reply arrives, without another system call. On the
// 2-core development VM (an AMD guest, 2026-11-26), CPU-bound single-row
// inserts at 8 connections against the local PostgreSQL: 0.52 system
// calls and 0.30 context switches per request against 2.35 and 0.45 with
// ppoll (perf stat over 5 s of each). Groups of fewer than ringMinWorkers
// poll (see there).
//
// Requests in flight longer than muxSlice are cancelled (IORING_OP_ASYNC_CANCEL),
// so that their connections re-check their deadlines, as the poll's
// timeout does for the polling groups. A connection that waits through
// its waiter instead (a reconnected session that declined ring I/O) waits
// through a poll request on the ring. A run whose connections do not all
// take ring I/O (target.RingCooperative) polls.
//
// The buffers handed to the ring are the connections' Read and Write
// arguments, which reach them through the net.Conn interface and so live
// on the heap (Go's collector does not move heap objects), and the
// coroutine that passed one stays suspended, holding it, until its
// request completed or was cancelled.

// ringMinWorkers is the smallest group that gets a ring unless
// CEILING_MUX_RING=1 asks for one anyway. Smaller groups submit too few
// requests at a time: each send, and each recv whose reply is already
// there, then costs an io_uring_enter of its own, dearer than the system
// call it replaces. Measured on the 2-core development VM (an AMD guest,
// 2026-11-26), CPU-bound single-row inserts against the local PostgreSQL,
// 10 alternated 4 s windows each (bench/pg-window-ab.sh), client CPU per
// request and throughput over pgbench's (geometric mean, 95% interval),
// ring against ppoll:
//
//	connections  workers/group  client µs/request  throughput / pgbench
//	     4             2           11.67 / 11.19      0.97 [0.91-1.03] / 1.01 [0.94-1.09]
//	     8             4           10.56 / 10.96      0.92 [0.87-0.98] / 0.92 [0.88-0.97]
//	    16             8            9.14 / 10.24      1.07 [1.01-1.13] / 1.04 [0.98-1.11]
const ringMinWorkers = 4

// ringCancelTag marks the user data of a cancellation request (its own
// completion is dropped); the others carry the worker's index in the
// group in the low half and the request's generation in the high half.
const ringCancelTag = 1 << 63

// setupRings gives each group a ring and each worker's connection its ring
// I/O. When a ring cannot be set up (an older kernel, io_uring turned off
// by kernel.io_uring_disabled or a seccomp filter, CEILING_MUX_RING=0),
// or a connection does not take ring I/O, every group polls instead.
func (r *run) setupRings(groups []*muxGroup) {
	for _, g := range groups {
		if len(g.workers) < ringMinWorkers && !ringOn {
			return
		}
		for _, k := range g.workers {
			if _, ok := k.conn.(target.RingCooperative); !ok {
				return
			}
		}
	}
	for _, g := range groups {
		// Room for a request and a cancellation per worker.
		rg, err := newURing(uint32(max(8, 2*len(g.workers))))
		if err != nil {
			closeRings(groups)
			return
		}
		g.ring = rg
	}
	for _, g := range groups {
		for _, k := range g.workers {
			k.ringIO = g.ringIO(k)
			if !k.conn.(target.RingCooperative).SetRingIO(k.ringIO) {
				for _, g := range groups {
					for _, k := range g.workers {
						k.conn.(target.RingCooperative).SetRingIO(nil)
						k.ringIO = nil
					}
				}
				closeRings(groups)
				return
			}
		}
	}
}

// closeRings closes the groups' rings (groups then poll).
func closeRings(groups []*muxGroup) {
	for _, g := range groups {
		if g.ring != nil {
			g.ring.close()
			g.ring = nil
		}
	}
}

// workerIO names how the groups wait, for the result.
func workerIO(groups []*muxGroup) string {
	if len(groups) > 0 && groups[0].ring != nil {
		return "io_uring"
	}
	return "ppoll"
}

// ringIO is k's target.RingCooperative I/O: it hands a send or recv to the
// group's ring and suspends k's coroutine until the request completed.
// Like the waiter, it declines (ok false) when called from anywhere but
// k's coroutine.
func (g *muxGroup) ringIO(k *worker) func(fd int, write bool, p []byte) (int, syscall.Errno, bool) {
	return func(fd int, write bool, p []byte) (int, syscall.Errno, bool) {
		if len(p) == 0 || curg() != k.self.Load() {
			return 0, 0, false
		}
		y := k.yield
		if y == nil {
			return 0, 0, false
		}
		op := uint8(ringOpRecv)
		if write {
			op = ringOpSend
		}
		w := muxWait{fd: int32(fd), op: op, n: uint32(min(len(p), math.MaxInt32)), buf: unsafe.Pointer(unsafe.SliceData(p))}
		k.suspends++
		if !y(w) {
			return 0, 0, false
		}
		if res := k.ringRes; res < 0 {
			return 0, syscall.Errno(-res), true
		}
		return int(k.ringRes), 0, true
	}
}

// driveRing is drive for a group with a ring.
func (g *muxGroup) driveRing(ctx context.Context) {
	rg := g.ring
	defer func() { rg.close(); g.ring = nil }()
	n := len(g.workers)
	next := g.coroutines(ctx)
	runnable := make([]int, n)
	for i := range runnable {
		runnable[i] = i
	}
	gen := make([]uint32, n)    // generation of worker i's request
	busy := make([]bool, n)     // worker i has a request in flight
	canceled := make([]bool, n) // and its cancellation was queued
	cqes := make([]ringCQE, 0, 4*n)
	again := make([]int, 0, n) // waiting for nothing but a turn (muxAgain)
	alive, inflight := n, 0
	base := time.Now()
	var sweep, yielded, now time.Duration
	for alive > 0 {
		alive -= resume(next, runnable, func(i int, w muxWait) {
			if w.fd < 0 {
				again = append(again, i)
				return
			}
			gen[i]++
			user := uint64(i) | uint64(gen[i])<<32
			switch w.op {
			case ringOpSend:
				rg.prep(ringOpSend, w.fd, uintptr(w.buf), w.n, ringMsgNoSignal, user)
			case ringOpRecv:
				rg.prep(ringOpRecv, w.fd, uintptr(w.buf), w.n, 0, user)
			default:
				rg.prep(ringOpPollAdd, w.fd, 0, 0, uint32(uint16(w.events)), user)
			}
			busy[i] = true
			inflight++
		})
		runnable = append(runnable[:0], again...)
		again = again[:0]
		if inflight == 0 {
			continue
		}
		timeout := muxSlice - (now - sweep)
		if len(runnable) > 0 {
			timeout = 0 // only look: a coroutine is runnable already
		}
		err := rg.enter(timeout)
		now = time.Since(base)
		if !muxLocked && now-yielded >= muxYield {
			runtime.Gosched()
			yielded = now
			g.afterYield()
		}
		switch err {
		case nil, syscall.ETIME:
		case syscall.EINTR:
			runtime.Gosched() // a preemption or stop-the-world request
		default:
			time.Sleep(time.Millisecond) // not expected; do not spin
		}
		cqes = rg.reap(cqes[:0])
		for _, c := range cqes {
			i := int(uint32(c.userData))
			if c.userData&ringCancelTag != 0 || i >= n || !busy[i] || uint32(c.userData>>32) != gen[i] {
				continue
			}
			busy[i], canceled[i] = false, false
			inflight--
			g.workers[i].ringRes = c.res // a poll's events, or -ECANCELED: either way the waiter retries
			runnable = append(runnable, i)
		}
		if now-sweep >= muxSlice {
			// Cancel what is still in flight: its connection re-checks
			// its deadlines, then asks again.
			for i, b := range busy {
				if b && !canceled[i] {
					rg.prep(ringOpAsyncCancel, -1, uintptr(uint64(i)|uint64(gen[i])<<32), 0, 0, ringCancelTag|uint64(i))
					canceled[i] = true
				}
			}
			sweep = now
		}
	}
}
