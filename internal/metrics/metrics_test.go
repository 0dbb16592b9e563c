package metrics

import (
	"errors"
	"sync"
	"testing"
	"time"
)

func TestRecorderTickMerges(t *testing.T) {
	g := NewRegistry([]string{"insert", "delete"})
	r1, r2 := g.NewRecorder(), g.NewRecorder()
	r1.Record(0, 2*time.Millisecond, 1, 400)
	r1.Record(0, 4*time.Millisecond, 1, 410)
	r2.RecordExamined(1, 10*time.Millisecond, 1, 390, 0, 3)
	r2.RecordError(1, ErrConstraint, errors.New("dup key"))
	r2.RecordError(1, ErrConstraint, errors.New("second"))
	r2.RecordLate(0)
	r1.RecordReconnect()

	s := g.Tick()
	ins, del := s.Ops[0], s.Ops[1]
	if ins.Requests != 2 || ins.Rows != 2 || ins.Bytes != 810 || ins.Late != 1 {
		t.Fatalf("insert counters: got %+v, want requests 2 rows 2 bytes 810 late 1", ins.OpCounters)
	}
	if del.Requests != 1 || del.Errors[ErrConstraint] != 2 || del.RoundTrips != 3 || ins.RoundTrips != 0 {
		t.Fatalf("delete counters: got %+v", del.OpCounters)
	}
	if got := s.FirstErr[ErrConstraint]; got != "dup key" {
		t.Fatalf("first error: got %q, want %q", got, "dup key")
	}
	if s.Reconnects != 1 {
		t.Fatalf("reconnects: got %d, want 1", s.Reconnects)
	}
	if got := ins.Hist.TotalCount(); got != 2 {
		t.Fatalf("insert histogram count: got %d, want 2", got)
	}
	tot := s.Total()
	if tot.Requests != 3 || tot.Hist.TotalCount() != 3 || tot.ErrorCount() != 2 || tot.RoundTrips != 3 {
		t.Fatalf("total: got %+v count %d", tot.OpCounters, tot.Hist.TotalCount())
	}
	lat := LatencyOf(tot.Hist)
	if lat == nil || lat.Max < 9.9 || lat.Max > 10.1 || lat.P50 < 3.9 || lat.P50 > 4.1 {
		t.Fatalf("latency: got %+v, want p50≈4ms max≈10ms", lat)
	}

	// The next tick starts from zero.
	s2 := g.Tick()
	if n := s2.Total().Requests; n != 0 {
		t.Fatalf("second tick: got %d requests, want 0", n)
	}
	if s2.FirstErr[ErrConstraint] != "" {
		t.Fatalf("second tick kept an old error message")
	}
}

// TestPendingLatenciesLandInTheirTick checks the batching of latencies
// (buffer.pending): each tick's histograms hold exactly the latencies
// recorded before it, whatever the batch's fill, each under its own
// operation, and the extremes of the range survive the packing.
func TestPendingLatenciesLandInTheirTick(t *testing.T) {
	g := NewRegistry([]string{"insert", "delete"})
	r := g.NewRecorder()
	for _, n := range []int{1, pendingCap - 1, pendingCap, pendingCap + 1, 3*pendingCap + 5} {
		for i := 0; i < n; i++ {
			r.Record(0, time.Duration(100+i)*time.Microsecond, 1, 1)
			r.Record(1, 3*time.Second, 1, 1)
		}
		r.Record(1, 2*time.Hour, 1, 1) // clamped to HistMaxUs
		s := g.Tick()
		ins, del := s.Ops[0].Hist, s.Ops[1].Hist
		if ins.TotalCount() != int64(n) || del.TotalCount() != int64(n+1) {
			t.Fatalf("n=%d: histogram counts %d and %d, want %d and %d", n, ins.TotalCount(), del.TotalCount(), n, n+1)
		}
		if ins.Min() != 100 || !ins.ValuesAreEquivalent(ins.Max(), int64(100+n-1)) {
			t.Fatalf("n=%d: insert min %d max %d, want 100 and %d", n, ins.Min(), ins.Max(), 100+n-1)
		}
		if !del.ValuesAreEquivalent(del.Min(), 3_000_000) || !del.ValuesAreEquivalent(del.Max(), HistMaxUs) {
			t.Fatalf("n=%d: delete min %d max %d, want 3e6 and %d", n, del.Min(), del.Max(), HistMaxUs)
		}
		if s.Ops[1].Clamped != 1 {
			t.Fatalf("n=%d: clamped %d, want 1", n, s.Ops[1].Clamped)
		}
	}
	if n := g.Tick().Ops[0].Hist.TotalCount(); n != 0 {
		t.Fatalf("an empty tick's histogram holds %d values", n)
	}
}

func TestLatencyOfEmptyIsNil(t *testing.T) {
	if l := LatencyOf(NewHistogram()); l != nil {
		t.Fatalf("got %+v, want nil for an empty histogram", l)
	}
}

func TestClamping(t *testing.T) {
	tests := []struct {
		name    string
		d       time.Duration
		wantUs  int64
		clamped bool
	}{
		{"sub-microsecond", 300 * time.Nanosecond, 1, false},
		{"normal", 1500 * time.Microsecond, 1500, false},
		{"over an hour", 2 * time.Hour, HistMaxUs, true},
		{"negative", -time.Second, 1, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			us, c := clampUs(tc.d)
			if us != tc.wantUs || c != tc.clamped {
				t.Fatalf("clampUs(%v): got %d,%v want %d,%v", tc.d, us, c, tc.wantUs, tc.clamped)
			}
		})
	}
}

// TestConcurrentTickLosesNothing records from several goroutines while another
// goroutine ticks continuously; every request must appear in exactly one tick.
func TestConcurrentTickLosesNothing(t *testing.T) {
	g := NewRegistry([]string{"op"})
	const workers, per = 4, 20000
	var wg sync.WaitGroup
	recs := make([]*Recorder, workers)
	for i := range recs {
		recs[i] = g.NewRecorder()
	}
	for _, r := range recs {
		wg.Add(1)
		go func(r *Recorder) {
			defer wg.Done()
			for i := 0; i < per; i++ {
				r.Record(0, time.Duration(i%1000)*time.Microsecond, 1, 10)
			}
		}(r)
	}
	done := make(chan struct{})
	total := NewSnapshot(g.Ops())
	go func() {
		defer close(done)
		for {
			select {
			case <-time.After(50 * time.Microsecond):
				total.Merge(g.Tick())
			case <-waitCh(&wg):
				total.Merge(g.Tick())
				return
			}
		}
	}()
	<-done
	op := total.Ops[0]
	if op.Requests != workers*per || op.Hist.TotalCount() != workers*per || op.Bytes != workers*per*10 {
		t.Fatalf("got requests %d hist %d bytes %d, want %d each (bytes ×10)", op.Requests, op.Hist.TotalCount(), op.Bytes, workers*per)
	}
}

func waitCh(wg *sync.WaitGroup) <-chan struct{} {
	ch := make(chan struct{})
	go func() { wg.Wait(); close(ch) }()
	return ch
}

func TestHistogramRoundTrip(t *testing.T) {
	h := NewHistogram()
	for i := int64(1); i <= 1000; i++ {
		_ = h.RecordValue(i * 7)
	}
	enc, err := EncodeHist(h)
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodeHist(enc)
	if err != nil {
		t.Fatal(err)
	}
	if back.TotalCount() != 1000 || back.ValueAtQuantile(99) != h.ValueAtQuantile(99) {
		t.Fatalf("round trip: got count %d p99 %d, want 1000 and %d", back.TotalCount(), back.ValueAtQuantile(99), h.ValueAtQuantile(99))
	}
	if _, err := DecodeHist("not a histogram"); err == nil {
		t.Fatal("decoding garbage: got nil error")
	}
}

func TestErrClassNames(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range ErrClasses() {
		n := c.String()
		if n == "" || n == "unknown" || seen[n] {
			t.Fatalf("class %d has bad or duplicate name %q", c, n)
		}
		seen[n] = true
	}
	if ErrClass(200).String() != "unknown" {
		t.Fatal("out-of-range class should be unknown")
	}
}

func BenchmarkRecord(b *testing.B) {
	g := NewRegistry([]string{"a", "b"})
	r := g.NewRecorder()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		r.Record(i&1, time.Duration(i&4095)*time.Microsecond, 1, 400)
	}
}

func TestCountAbove(t *testing.T) {
	h := NewHistogram()
	if n := CountAbove(h, 10_000); n != 0 {
		t.Fatalf("empty: %d above", n)
	}
	for _, us := range []int64{50, 900, 9_000, 10_000, 10_900, 31_000, 31_000, 2_000_000} {
		if err := h.RecordValue(us); err != nil {
			t.Fatal(err)
		}
	}
	// 10,000 µs itself is not above 10 ms; 10,900 µs is, whatever the
	// bucket widths at 3 significant figures.
	if n := CountAbove(h, 10_000); n != 4 {
		t.Errorf("above 10 ms: %d, want 4", n)
	}
	if n := CountAbove(h, 5_000_000); n != 0 {
		t.Errorf("above the max: %d, want 0", n)
	}
	if n := CountAbove(nil, 0); n != 0 {
		t.Errorf("nil: %d", n)
	}
}
