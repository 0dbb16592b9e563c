package metrics

import (
	"fmt"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// OpSnapshot is the counters and latency histogram of one operation type.
type OpSnapshot struct {
	Name string
	OpCounters
	Hist *hdr.Histogram // latency of successful requests, µs
}

// Snapshot is what was recorded over a period, by operation.
type Snapshot struct {
	Ops        []OpSnapshot
	FirstErr   [NumErrClasses]string
	Reconnects int64
}

// NewSnapshot returns an empty snapshot for the given operations.
func NewSnapshot(ops []string) *Snapshot {
	s := &Snapshot{Ops: make([]OpSnapshot, len(ops))}
	for i, name := range ops {
		s.Ops[i] = OpSnapshot{Name: name, Hist: NewHistogram()}
	}
	return s
}

// Merge adds o into s. Both must have the same operations.
func (s *Snapshot) Merge(o *Snapshot) {
	for i := range s.Ops {
		s.Ops[i].OpCounters.add(&o.Ops[i].OpCounters)
		if o.Ops[i].Hist != nil {
			s.Ops[i].Hist.Merge(o.Ops[i].Hist)
		}
	}
	for c, m := range o.FirstErr {
		if s.FirstErr[c] == "" {
			s.FirstErr[c] = m
		}
	}
	s.Reconnects += o.Reconnects
}

// Total merges all operations into one.
func (s *Snapshot) Total() OpSnapshot {
	t := OpSnapshot{Name: "total", Hist: NewHistogram()}
	for i := range s.Ops {
		t.OpCounters.add(&s.Ops[i].OpCounters)
		if s.Ops[i].Hist != nil {
			t.Hist.Merge(s.Ops[i].Hist)
		}
	}
	return t
}

// Latency holds latency percentiles in milliseconds. A nil *Latency means
// no request completed, so no figure was measured.
type Latency struct {
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P95  float64 `json:"p95"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p999"`
	Max  float64 `json:"max"`
	Mean float64 `json:"mean"`
}

// LatencyOf summarises h (recorded in µs) in milliseconds, or nil when empty.
func LatencyOf(h *hdr.Histogram) *Latency {
	if h == nil || h.TotalCount() == 0 {
		return nil
	}
	ms := func(us int64) float64 { return float64(us) / 1000 }
	return &Latency{
		P50:  ms(h.ValueAtQuantile(50)),
		P90:  ms(h.ValueAtQuantile(90)),
		P95:  ms(h.ValueAtQuantile(95)),
		P99:  ms(h.ValueAtQuantile(99)),
		P999: ms(h.ValueAtQuantile(99.9)),
		Max:  ms(h.Max()),
		Mean: h.Mean() / 1000,
	}
}

// CountAbove is how many of h's values (recorded in µs) lie above us, up
// to the histogram's precision: a bucket that holds us itself is not
// counted. It walks every bucket, so it is for summaries, not the hot path.
func CountAbove(h *hdr.Histogram, us int64) int64 {
	if h == nil || h.Max() <= us {
		return 0
	}
	var n int64
	for _, b := range h.Distribution() {
		if b.From > us {
			n += b.Count
		}
	}
	return n
}

// EncodeHist serialises a histogram in the standard HdrHistogram compressed
// format (base64 text): any HdrHistogram implementation can read it back.
func EncodeHist(h *hdr.Histogram) (string, error) {
	b, err := h.Encode(hdr.V2CompressedEncodingCookieBase)
	if err != nil {
		return "", fmt.Errorf("encode histogram: %w", err)
	}
	return string(b), nil
}

// DecodeHist reads a histogram written by EncodeHist.
func DecodeHist(s string) (*hdr.Histogram, error) {
	h, err := hdr.Decode([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("decode histogram: %w", err)
	}
	return h, nil
}

// MergeHists merges histograms written by EncodeHist ("" ones skipped);
// nil when there were none.
func MergeHists(encs []string) (*hdr.Histogram, error) {
	var h *hdr.Histogram
	for _, e := range encs {
		if e == "" {
			continue
		}
		d, err := DecodeHist(e)
		if err != nil {
			return nil, err
		}
		if h == nil {
			h = NewHistogram()
		}
		h.Merge(d)
	}
	return h, nil
}
