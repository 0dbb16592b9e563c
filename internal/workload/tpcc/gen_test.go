package tpcc

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

func TestGenNURandRange(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct{ a, c, x, y int }{
		{ALast, 0, 0, 999}, {ALast, 255, 0, 999}, {ACID, 1023, 1, CustomersPerDistrict}, {AOLIID, 7000, 1, Items},
	} {
		counts := make(map[int]int)
		const n = 200_000
		for i := 0; i < n; i++ {
			v := NURand(r, tc.a, tc.c, tc.x, tc.y)
			if v < tc.x || v > tc.y {
				t.Fatalf("NURand(%d, %d, %d, %d) = %d, out of range", tc.a, tc.c, tc.x, tc.y, v)
			}
			counts[v]++
		}
		// Non-uniform: the most frequent value is drawn far more often than
		// under a uniform distribution.
		most := 0
		for _, c := range counts {
			most = max(most, c)
		}
		uniform := float64(n) / float64(tc.y-tc.x+1)
		if float64(most) < 3*uniform {
			t.Errorf("NURand(%d, ...): most frequent value drawn %d times, uniform would be %.0f: not skewed", tc.a, most, uniform)
		}
	}
}

func TestRunConstantsDelta(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 1000; i++ {
		load := NewConstants(r)
		run := RunConstants(load, r)
		d := run.CLast - load.CLast
		if d < 0 {
			d = -d
		}
		if d < 65 || d > 119 || d == 96 || d == 112 {
			t.Fatalf("C_LAST load %d run %d: delta %d breaks clause 2.1.6.1", load.CLast, run.CLast, d)
		}
		if run.CLast < 0 || run.CLast > ALast || run.CID < 0 || run.CID > ACID || run.OLIID < 0 || run.OLIID > AOLIID {
			t.Fatalf("run constants out of range: %+v", run)
		}
	}
}

func TestLastName(t *testing.T) {
	for n, want := range map[int]string{0: "BARBARBAR", 371: "PRICALLYOUGHT", 999: "EINGEINGEING", 40: "BARPRESBAR", 123: "OUGHTABLEPRI"} {
		if got := LastName(n); got != want {
			t.Errorf("LastName(%d) = %q, want %q", n, got, want)
		}
	}
	seen := map[string]bool{}
	for n := 0; n < 1000; n++ {
		seen[LastName(n)] = true
	}
	if len(seen) != 1000 {
		t.Errorf("%d distinct last names, want 1000", len(seen))
	}
}

func TestStrings(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < 10_000; i++ {
		s := AString(r, 26, 50)
		if len(s) < 26 || len(s) > 50 {
			t.Fatalf("a-string length %d", len(s))
		}
		if z := Zip(r); len(z) != 9 || !strings.HasSuffix(z, "11111") || strings.Trim(z, "0123456789") != "" {
			t.Fatalf("zip %q", z)
		}
		if n := NString(r, 16, 16); len(n) != 16 || strings.Trim(n, "0123456789") != "" {
			t.Fatalf("n-string %q", n)
		}
	}
}

// drain consumes a source and returns its rows (copied).
func drain(t *testing.T, s *source) [][]any {
	t.Helper()
	var rows [][]any
	for s.Next() {
		v, err := s.Values()
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, append([]any(nil), v...))
	}
	return rows
}

func TestItemPopulation(t *testing.T) {
	stats := &loadStats{}
	rows := drain(t, itemSource(1, stats))
	if len(rows) != Items {
		t.Fatalf("%d items, want %d", len(rows), Items)
	}
	orig := 0
	for i, r := range rows {
		if r[0].(int64) != int64(i+1) {
			t.Fatalf("item %d has i_id %v", i+1, r[0])
		}
		if im := r[1].(int64); im < 1 || im > 10_000 {
			t.Fatalf("i_im_id %d", im)
		}
		if p := r[3].(float64); p < 1 || p > 100 {
			t.Fatalf("i_price %v", p)
		}
		data := r[4].(string)
		if len(data) < 26 || len(data) > 50 {
			t.Fatalf("i_data length %d", len(data))
		}
		if strings.Contains(data, "ORIGINAL") {
			orig++
		}
	}
	if orig < Items*8/100 || orig > Items*12/100 {
		t.Errorf("%d items with ORIGINAL, want about 10%%", orig)
	}
	if stats.rows.Load() != Items || stats.bytes.Load() <= 0 {
		t.Errorf("stats: %d rows, %d bytes", stats.rows.Load(), stats.bytes.Load())
	}
}

func TestWarehousePopulation(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	c := Constants{CLast: 123, CID: 456, OLIID: 789}
	g := newWHGen(loadSeed, 2, c, now, &loadStats{})
	tables := map[string][][]any{}
	for _, name := range warehouseTables {
		tables[name] = drain(t, g.source(name))
		for _, r := range tables[name] {
			if len(r) != len(Columns(name)) {
				t.Fatalf("%s: %d values for %d columns", name, len(r), len(Columns(name)))
			}
		}
	}
	want := map[string]int{TWarehouse: 1, TDistrict: 10, TCustomer: 30_000, THistory: 30_000,
		TOrders: 30_000, TNewOrder: 9_000, TStock: Items}
	for name, n := range want {
		if len(tables[name]) != n {
			t.Errorf("%s: %d rows per warehouse, want %d", name, len(tables[name]), n)
		}
	}

	// Customers: the first 1000 of each district take last names 0..999 in
	// order, the rest NURand; 10% bad credit.
	bc := 0
	for i, r := range tables[TCustomer] {
		cid := int(r[0].(int64))
		if r[2].(int64) != 2 || int(r[1].(int64)) != i/3000+1 || cid != i%3000+1 {
			t.Fatalf("customer row %d keys %v %v %v", i, r[0], r[1], r[2])
		}
		if cid <= 1000 && r[5] != LastName(cid-1) {
			t.Fatalf("customer %d: c_last %v, want %s", cid, r[5], LastName(cid-1))
		}
		if r[13] == "BC" {
			bc++
		}
		if r[4] != "OE" || r[16] != -10.0 || r[17] != 10.0 || r[14] != 50_000.0 {
			t.Fatalf("customer fixed values wrong: %v", r)
		}
		if d := r[15].(float64); d < 0 || d > 0.5 {
			t.Fatalf("c_discount %v", d)
		}
	}
	if bc < 2400 || bc > 3600 {
		t.Errorf("%d of 30000 customers with BC credit, want about 10%%", bc)
	}

	// Orders: each district's o_c_id is a permutation of 1..3000; carrier
	// null from o_id 2101; ol_cnt 5..15 and matching the order lines.
	olSum := 0
	for d := 0; d < 10; d++ {
		seen := make(map[int64]bool)
		for o := 0; o < 3000; o++ {
			r := tables[TOrders][d*3000+o]
			seen[r[3].(int64)] = true
			if (o+1 >= FirstUndelivered) != (r[5] == nil) {
				t.Fatalf("order %d: o_carrier_id %v", o+1, r[5])
			}
			n := int(r[6].(int64))
			if n < 5 || n > 15 {
				t.Fatalf("o_ol_cnt %d", n)
			}
			olSum += n
		}
		if len(seen) != 3000 {
			t.Errorf("district %d: %d distinct o_c_id, want a permutation of 3000", d+1, len(seen))
		}
	}
	if len(tables[TOrderLine]) != olSum {
		t.Errorf("%d order lines, sum(o_ol_cnt) = %d", len(tables[TOrderLine]), olSum)
	}
	for _, r := range tables[TOrderLine] {
		o := r[0].(int64)
		if delivered := o < FirstUndelivered; delivered != (r[6] != nil) || (delivered && r[8] != 0.0) {
			t.Fatalf("order line of order %d: delivery %v amount %v", o, r[6], r[8])
		}
		if amt := r[8].(float64); amt < 0 || amt > 9999.99 {
			t.Fatalf("ol_amount %v", amt)
		}
		if i := r[4].(int64); i < 1 || i > Items {
			t.Fatalf("ol_i_id %d", i)
		}
	}
	for i, r := range tables[TNewOrder] {
		if o := r[0].(int64); o != int64(FirstUndelivered+i%900) {
			t.Fatalf("new_order row %d: no_o_id %d", i, o)
		}
	}
	orig := 0
	for _, r := range tables[TStock] {
		if q := r[2].(int64); q < 10 || q > 100 {
			t.Fatalf("s_quantity %d", q)
		}
		if len(r[3].(string)) != 24 {
			t.Fatalf("s_dist_01 %q", r[3])
		}
		if strings.Contains(r[16].(string), "ORIGINAL") {
			orig++
		}
	}
	if orig < Items*8/100 || orig > Items*12/100 {
		t.Errorf("%d stock rows with ORIGINAL, want about 10%%", orig)
	}
}

func TestTableBodies(t *testing.T) {
	for _, eng := range []string{"postgres", "mysql", "sqlite"} {
		for _, name := range append([]string{TMeta}, dataTables...) {
			b := TableBody(eng, name)
			if b == "" || strings.Contains(b, "?") {
				t.Errorf("%s %s: body %q", eng, name, b)
			}
			if name != THistory && !strings.Contains(b, "PRIMARY KEY") {
				t.Errorf("%s %s: no primary key", eng, name)
			}
		}
	}
	if got := TableBody("postgres", TDistrict); !strings.Contains(got, "d_ytd numeric(12,2) NOT NULL") {
		t.Errorf("district on postgres: %s", got)
	}
}

func BenchmarkWarehouseGen(b *testing.B) {
	for i := 0; i < b.N; i++ {
		g := newWHGen(loadSeed, i+1, Constants{}, time.Now(), &loadStats{})
		for _, name := range warehouseTables {
			s := g.source(name)
			for s.Next() {
			}
		}
	}
}
