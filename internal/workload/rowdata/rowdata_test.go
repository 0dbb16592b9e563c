package rowdata

import (
	"math"
	"math/rand/v2"
	"sync"
	"testing"
)

func TestRowBytesAccounting(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var r Row
	const n = 20000
	var total int64
	for i := int64(1); i <= n; i++ {
		Fill(&r, rng, i)
		want := int64(8+1+1+2+4+8+8+8+8) + int64(len(r.Short)+len(r.Mid)+len(r.Long))
		if got := r.Bytes(); got != want {
			t.Fatalf("row %d: Bytes() = %d, want %d", i, got, want)
		}
		if len(r.Short) < ShortMin || len(r.Short) > ShortMax || len(r.Mid) < MidMin || len(r.Mid) > MidMax || len(r.Long) < LongMin || len(r.Long) > LongMax {
			t.Fatalf("row %d: varchar lengths %d/%d/%d out of range", i, len(r.Short), len(r.Mid), len(r.Long))
		}
		if r.Tinyint < 0 || r.Tinyint > 255 || r.Smallint < -32768 || r.Smallint > 32767 || r.Int < 0 || r.Int > math.MaxInt32 {
			t.Fatalf("row %d: integer out of its SQL type's range: %+v", i, r)
		}
		total += r.Bytes()
	}
	mean := float64(total) / n
	if mean < 395 || mean > 405 {
		t.Fatalf("mean row size %.1f bytes, want about 400", mean)
	}
	if MeanRowBytes != 400 {
		t.Fatalf("MeanRowBytes = %d, want 400", MeanRowBytes)
	}
	if got := len(r.Args(nil)); got != NumColumns || len(Columns) != NumColumns {
		t.Fatalf("Args has %d values, Columns %d, want %d", got, len(Columns), NumColumns)
	}
}

func TestLiveSetTakeAndPeek(t *testing.T) {
	s := NewLiveSet(100)
	for id := int64(1); id <= 100; id++ {
		s.Add(id, id)
	}
	if id := s.NextID(); id != 101 {
		t.Fatalf("NextID = %d, want 101", id)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	if _, _, ok := s.Peek(rng); !ok || s.Len() != 100 {
		t.Fatalf("Peek changed the set: len %d", s.Len())
	}
	seen := map[int64]bool{}
	for i := 0; i < 100; i++ {
		id, size, ok := s.Take(rng)
		if !ok || size != id || seen[id] || id < 1 || id > 100 {
			t.Fatalf("take %d: got id %d size %d ok %v (dup %v)", i, id, size, ok, seen[id])
		}
		seen[id] = true
	}
	if _, _, ok := s.Take(rng); ok || s.Len() != 0 {
		t.Fatalf("take from empty set: ok %v len %d", ok, s.Len())
	}
}

// TestLiveSetUniform checks random picks cover ids evenly (chi-square bound).
func TestLiveSetUniform(t *testing.T) {
	s := NewLiveSet(0)
	const n = 256
	for id := int64(1); id <= n; id++ {
		s.Add(id, 400)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	counts := make([]float64, n+1)
	const draws = 256000
	for i := 0; i < draws; i++ {
		id, _, _ := s.Peek(rng)
		counts[id]++
	}
	exp := float64(draws) / n
	var chi float64
	for id := 1; id <= n; id++ {
		chi += (counts[id] - exp) * (counts[id] - exp) / exp
	}
	// 255 degrees of freedom: p=0.001 critical value is about 330.
	if chi > 330 {
		t.Fatalf("chi-square %.1f over 255 d.f.: picks are not uniform", chi)
	}
}

func TestLiveSetConcurrent(t *testing.T) {
	s := NewLiveSet(0)
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 9))
			for i := 0; i < 5000; i++ {
				s.Add(s.NextID(), 400)
				if i%2 == 0 {
					s.Take(rng)
				}
			}
		}(w)
	}
	wg.Wait()
	if s.Len() != 4*2500 {
		t.Fatalf("len %d, want %d", s.Len(), 4*2500)
	}
}

func BenchmarkFill(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	var r Row
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		Fill(&r, rng, int64(i))
	}
}

func TestBaseValidateAndReady(t *testing.T) {
	tests := []struct {
		rows, min int64
		tables    int
		ok        bool
	}{{0, 0, 1, true}, {-1, 0, 1, false}, {0, 1, 1, false}, {1, 1, 1, true},
		{2, 1, 3, false}, {3, 1, 3, true}, {0, 0, 51, true}, {10, 0, 0, false}, {10, 0, MaxTables + 1, false}}
	for _, tc := range tests {
		b := Base{Rows: tc.rows, MinRows: tc.min, NTables: tc.tables}
		if err := b.Validate(); (err == nil) != tc.ok {
			t.Errorf("rows %d min %d tables %d: Validate() = %v, want ok=%v", tc.rows, tc.min, tc.tables, err, tc.ok)
		}
	}
	b := Base{Rows: 5, Seed: 9}
	if err := b.Ready("w"); err == nil {
		t.Fatal("Ready before Prepare: got nil error")
	}
	p := b.ParamsWith(map[string]any{"x": 1})
	if p["rows"] != int64(5) || p["tables"] != 1 || p["seed"] != uint64(9) || p["x"] != 1 || p["row_bytes_mean"] != MeanRowBytes {
		t.Fatalf("ParamsWith = %v", p)
	}
	if b.WorkerRand(1).Uint64() != b.WorkerRand(1).Uint64() || b.WorkerRand(1).Uint64() == b.WorkerRand(2).Uint64() {
		t.Fatal("WorkerRand is not deterministic per worker and distinct across workers")
	}
}

func TestTablesSpreadRows(t *testing.T) {
	b := Base{Rows: 10, NTables: 3}
	names := b.Tables()
	if len(names) != 3 || names[0] != "rows_1" || names[2] != "rows_3" {
		t.Fatalf("Tables() = %v, want rows_1..rows_3", names)
	}
	if got := (&Base{NTables: 1}).Tables(); len(got) != 1 || got[0] != Table {
		t.Fatalf("one table: Tables() = %v, want [%s]", got, Table)
	}
	var sum int64
	for i := range names {
		r := b.TableRows(i)
		if r < 3 || r > 4 {
			t.Fatalf("table %d holds %d rows, want 3 or 4", i, r)
		}
		sum += r
	}
	if sum != 10 {
		t.Fatalf("tables hold %d rows in total, want 10 (--rows is the total)", sum)
	}
	b.Live = []*LiveSet{NewLiveSet(0), NewLiveSet(0), NewLiveSet(0)}
	rng := rand.New(rand.NewPCG(1, 1))
	var counts [3]int
	const n = 30000
	for i := 0; i < n; i++ {
		counts[b.PickTable(rng)]++
	}
	for i, c := range counts {
		if c < n/3*9/10 || c > n/3*11/10 {
			t.Fatalf("table %d picked %d times of %d, want about a third", i, c, n)
		}
	}
}
