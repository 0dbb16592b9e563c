package metrics

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram range: latencies are recorded in microseconds from 1 µs to one
// hour with three significant digits. Values outside are clamped (and the
// clamping is counted) rather than dropped.
const (
	HistMinUs   = 1
	HistMaxUs   = int64(time.Hour / time.Microsecond)
	HistSigFigs = 3
)

// NewHistogram returns an empty latency histogram with ceiling's geometry.
func NewHistogram() *hdr.Histogram { return hdr.New(HistMinUs, HistMaxUs, HistSigFigs) }

// OpCounters are the counters of one operation type over some period.
type OpCounters struct {
	Requests int64 // successful requests
	Rows     int64 // rows touched by successful requests
	Bytes    int64 // data bytes by SQL type sizes (DESIGN.md section 3)
	// Examined is the rows the requests examined (scanned) where the
	// workload reports it (indirect selects: the key range), else 0.
	Examined int64
	// RoundTrips is how many round trips to the server the successful
	// requests made, where the connection counts them
	// (target.RoundTripCounter), else 0.
	RoundTrips int64
	Late       int64 // open loop: requests that could not start in time (skipped)
	Errors     [NumErrClasses]int64
	Clamped    int64 // latencies outside the histogram range, clamped
}

// ErrorCount is the total of Errors.
func (c *OpCounters) ErrorCount() int64 {
	var n int64
	for _, e := range c.Errors {
		n += e
	}
	return n
}

func (c *OpCounters) add(o *OpCounters) {
	c.Requests += o.Requests
	c.Rows += o.Rows
	c.Bytes += o.Bytes
	c.Examined += o.Examined
	c.RoundTrips += o.RoundTrips
	c.Late += o.Late
	c.Clamped += o.Clamped
	for i := range c.Errors {
		c.Errors[i] += o.Errors[i]
	}
}

// pendingCap is how many latencies a buffer holds before it records them
// into its histograms.
const pendingCap = 64

// buffer is one half of a recorder's double buffer.
//
// Latencies are not recorded into a histogram one by one: they are
// appended to pending (op and microseconds packed into one word) and
// recorded pendingCap at a time, or when the buffer is drained. A
// histogram's counts array is about 184 KB, and in a real run the
// server's process runs between two requests and evicts it from the
// caches (and, where every system call flushes the TLB, its page from the
// TLB): recorded one at a time, each latency costs a miss or two on the
// histogram's header and counts. Appended, it costs a store into a line
// already written to, and the batch's misses are shared by 64 requests
// (perf, inserts-deletes at 16 connections: recording fell from 1.5-1.9%
// of the client's CPU to 0.7-0.8%; a warm BenchmarkRecord does not show
// it, and neither did a benchmark that walked a buffer between records).
type buffer struct {
	ops        []OpCounters
	hists      []*hdr.Histogram
	npending   int
	pending    [pendingCap]uint64
	firstErr   [NumErrClasses]string
	reconnects int64
}

// pendingShift is where the op index sits in a pending word; latencies
// (at most HistMaxUs, under 2^32) take the bits below it.
const pendingShift = 40

// flush records the pending latencies into the histograms.
func (b *buffer) flush() {
	for _, v := range b.pending[:b.npending] {
		_ = b.hists[v>>pendingShift].RecordValue(int64(v & (1<<pendingShift - 1))) // in range after clamping
	}
	b.npending = 0
}

func newBuffer(nops int) buffer {
	b := buffer{ops: make([]OpCounters, nops), hists: make([]*hdr.Histogram, nops)}
	for i := range b.hists {
		b.hists[i] = NewHistogram()
	}
	return b
}

func (b *buffer) reset() {
	for i := range b.ops {
		b.ops[i] = OpCounters{}
		b.hists[i].Reset()
	}
	b.npending = 0
	b.firstErr = [NumErrClasses]string{}
	b.reconnects = 0
}

// Recorder records one worker's requests. Only its owning goroutine may call
// the Record methods; see the package comment for the protocol with Tick.
type Recorder struct {
	// seq is odd while a record is in progress.
	seq   atomic.Uint64
	epoch atomic.Uint64
	bufs  [2]buffer
}

func (r *Recorder) begin() *buffer {
	r.seq.Add(1)
	return &r.bufs[r.epoch.Load()&1]
}

func (r *Recorder) end() { r.seq.Add(1) }

func clampUs(d time.Duration) (int64, bool) {
	us := int64(d / time.Microsecond)
	if us < HistMinUs {
		return HistMinUs, us < 0
	}
	if us > HistMaxUs {
		return HistMaxUs, true
	}
	return us, false
}

// Record records one successful request of operation op that took d and
// touched rows rows and bytes data bytes. It does not allocate.
func (r *Recorder) Record(op int, d time.Duration, rows, bytes int64) {
	r.RecordExamined(op, d, rows, bytes, 0, 0)
}

// RecordExamined is Record for a request that also reports the rows it
// examined (scanned), which may exceed the rows it returned, and the round
// trips to the server it made (0: not counted). It does not allocate.
func (r *Recorder) RecordExamined(op int, d time.Duration, rows, bytes, examined, roundTrips int64) {
	b := r.begin()
	c := &b.ops[op]
	c.Requests++
	c.Rows += rows
	c.Bytes += bytes
	c.Examined += examined
	c.RoundTrips += roundTrips
	us, clamped := clampUs(d)
	if clamped {
		c.Clamped++
	}
	if b.npending == pendingCap {
		b.flush()
	}
	b.pending[b.npending] = uint64(op)<<pendingShift | uint64(us)
	b.npending++
	r.end()
}

// RecordError counts one failed request of operation op under class, keeping
// the first message seen of each class in the period.
func (r *Recorder) RecordError(op int, class ErrClass, err error) {
	b := r.begin()
	b.ops[op].Errors[class]++
	if b.firstErr[class] == "" && err != nil {
		b.firstErr[class] = err.Error()
	}
	r.end()
}

// RecordLate counts one request of operation op that was skipped because it
// could not start within the lateness limit (open loop).
func (r *Recorder) RecordLate(op int) {
	b := r.begin()
	b.ops[op].Late++
	r.end()
}

// RecordReconnect counts one re-established connection.
func (r *Recorder) RecordReconnect() {
	b := r.begin()
	b.reconnects++
	r.end()
}

// drainInto flips the recorder to its other buffer, waits for a record in
// progress on the old one to finish, merges the old buffer into s and resets it.
func (r *Recorder) drainInto(s *Snapshot) {
	old := &r.bufs[r.epoch.Add(1)&1^1]
	// A record that loaded the old epoch started (odd seq) before the flip;
	// wait for seq to move on. Sequentially consistent atomics make this a
	// Dekker-style handshake: either the worker saw the new epoch or we see
	// its odd seq here.
	if q := r.seq.Load(); q&1 == 1 {
		for r.seq.Load() == q {
			runtime.Gosched()
		}
	}
	old.flush()
	for i := range old.ops {
		s.Ops[i].OpCounters.add(&old.ops[i])
		s.Ops[i].Hist.Merge(old.hists[i])
	}
	for c, m := range old.firstErr {
		if s.FirstErr[c] == "" {
			s.FirstErr[c] = m
		}
	}
	s.Reconnects += old.reconnects
	old.reset()
}

// Registry hands out recorders and merges them on each tick.
type Registry struct {
	ops  []string
	mu   sync.Mutex // guards recs; never taken on the hot path
	recs []*Recorder
}

// NewRegistry returns a registry for the given operation names; the index of
// a name is the op argument of Recorder.Record.
func NewRegistry(ops []string) *Registry {
	return &Registry{ops: append([]string(nil), ops...)}
}

// Ops returns the operation names.
func (g *Registry) Ops() []string { return g.ops }

// NewRecorder returns a recorder for one worker.
func (g *Registry) NewRecorder() *Recorder {
	r := &Recorder{bufs: [2]buffer{newBuffer(len(g.ops)), newBuffer(len(g.ops))}}
	g.mu.Lock()
	g.recs = append(g.recs, r)
	g.mu.Unlock()
	return r
}

// Tick collects everything recorded since the previous tick into a new
// snapshot. Only one goroutine may call Tick at a time.
func (g *Registry) Tick() *Snapshot {
	s := NewSnapshot(g.ops)
	g.mu.Lock()
	recs := g.recs
	g.mu.Unlock()
	for _, r := range recs {
		r.drainInto(s)
	}
	return s
}
