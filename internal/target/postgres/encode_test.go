package postgres

import (
	"math/rand/v2"
	"testing"
	"time"
)

func TestEncodeText(t *testing.T) {
	c := &conn{}
	ts := time.Date(2014, 6, 30, 12, 34, 56, 789000000, time.UTC)
	params, ok := c.encode([]any{int64(-42), 7, true, false, 1234.5, "", "abc", ts, nil})
	if !ok {
		t.Fatal("encode refused supported types")
	}
	want := []string{"-42", "7", "t", "f", "1234.5", "", "abc", "2014-06-30 12:34:56.789"}
	for i, w := range want {
		if params[i] == nil || string(params[i]) != w {
			t.Fatalf("param %d = %q (nil %v), want %q", i, params[i], params[i] == nil, w)
		}
	}
	if params[8] != nil {
		t.Fatalf("nil argument encoded as %q, want NULL", params[8])
	}
	// Buffers are reused: a second call must not disturb correctness.
	params, _ = c.encode([]any{"x", int64(1)})
	if len(params) != 2 || string(params[0]) != "x" || string(params[1]) != "1" {
		t.Fatalf("second encode: %q", params)
	}
	for _, bad := range []any{struct{}{}, "nul\x00byte", []int{1}} {
		if _, ok := c.encode([]any{bad}); ok {
			t.Fatalf("encode(%T) accepted a value it cannot render", bad)
		}
	}
}

// TestAppendTime: appendTime renders what AppendFormat does with its
// layout, over years 1-9999 and beyond (the fallback), at whole seconds, at
// microseconds with trailing zeros, and in a zone other than UTC.
func TestAppendTime(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	zone := time.FixedZone("x", -7*3600-30*60)
	times := []time.Time{
		time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(0, 6, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2019, 3, 14, 12, 34, 56, 789000000, time.UTC),
		time.Date(2019, 3, 14, 12, 34, 56, 100, zone),
		time.Date(2000, 2, 29, 1, 2, 3, 120000, zone),
	}
	for range 5000 {
		times = append(times, time.Unix(rng.Int64N(400000000000)-62135596800, rng.Int64N(1e9)).In(zone))
	}
	for _, v := range times {
		want := v.UTC().Format(timeLayout)
		if got := string(appendTime([]byte("x"), v)); got != "x"+want {
			t.Fatalf("appendTime(%v) = %q, want %q", v, got[1:], want)
		}
	}
}

func BenchmarkAppendTime(b *testing.B) {
	v := time.Date(2019, 3, 14, 12, 34, 56, 789000000, time.UTC)
	buf := make([]byte, 0, 64)
	for b.Loop() {
		buf = appendTime(buf[:0], v)
	}
}

func BenchmarkEncodeRow(b *testing.B) {
	c := &conn{}
	ts := time.Date(2014, 6, 30, 12, 34, 56, 0, time.UTC)
	args := []any{int64(1), true, int64(12), int64(1234), int64(123456), int64(1234567890123), ts, 3.14159, 1234.56, "short", "a middle string", "a longer string value"}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		c.encode(args)
	}
}
