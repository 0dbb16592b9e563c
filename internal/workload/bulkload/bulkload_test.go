package bulkload

import (
	"testing"

	"github.com/ceiling-db/ceiling/internal/workload/rowdata"
)

func TestSourceIDsAndBytes(t *testing.T) {
	s := NewSource(7)
	s.Reset(101, 50)
	var n, bytes int64
	want := int64(101)
	for s.Next() {
		vals, err := s.Values()
		if err != nil || len(vals) != rowdata.NumColumns {
			t.Fatalf("row %d: %d values, err %v", n, len(vals), err)
		}
		if id := vals[0].(int64); id != want {
			t.Fatalf("row %d: id %d, want %d (sequential)", n, id, want)
		}
		short, mid, long := vals[9].(string), vals[10].(string), vals[11].(string)
		bytes += rowdata.FixedBytes + int64(len(short)+len(mid)+len(long))
		want++
		n++
	}
	if n != 50 || s.Err() != nil {
		t.Fatalf("source gave %d rows (err %v), want 50", n, s.Err())
	}
	if s.Bytes() != bytes {
		t.Fatalf("Bytes() = %d, want %d (the rows' data bytes)", s.Bytes(), bytes)
	}
	s.Reset(1, 0)
	if s.Next() || s.Bytes() != 0 {
		t.Fatal("an empty batch produced a row or bytes")
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		batch int
		ok    bool
	}{{1, true}, {MaxBatch, true}, {0, false}, {MaxBatch + 1, false}} {
		w := &BulkLoad{Batch: tc.batch}
		if err := w.Validate(); (err == nil) != tc.ok {
			t.Errorf("batch %d: Validate() = %v, want ok=%v", tc.batch, err, tc.ok)
		}
	}
}

// BenchmarkSource measures generating one row (allocations come from
// boxing the values into the reused slice).
func BenchmarkSource(b *testing.B) {
	s := NewSource(1)
	s.Reset(1, int64(b.N))
	b.ReportAllocs()
	for s.Next() {
		_, _ = s.Values()
	}
}
