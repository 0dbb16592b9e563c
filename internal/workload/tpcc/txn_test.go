package tpcc

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ceiling-db/ceiling/internal/target"
)

func newTestPicker(seed uint64) *picker {
	r := rand.New(rand.NewPCG(seed, 7))
	return &picker{rng: r, c: RunConstants(NewConstants(r), r)}
}

func TestNURandRangeAndSkew(t *testing.T) {
	p := newTestPicker(1)
	const n = 300000
	counts := make([]int, Items+1)
	for i := 0; i < n; i++ {
		id := p.itemID()
		if id < 1 || id > Items {
			t.Fatalf("item id %d outside [1, %d]", id, Items)
		}
		counts[id]++
	}
	// NURand is non-uniform: the most drawn items get far more than the
	// uniform share (3 per item here).
	top := 0
	for _, c := range counts {
		top = max(top, c)
	}
	if top < 20 {
		t.Fatalf("most drawn item drawn %d times in %d; NURand(8191) should be skewed", top, n)
	}
	for i := 0; i < 100000; i++ {
		if c := p.customerID(); c < 1 || c > CustomersPerDistrict {
			t.Fatalf("customer id %d outside [1, 3000]", c)
		}
		name := p.lastName()
		if len(name) < 6 {
			t.Fatalf("last name %q too short", name)
		}
	}
}

func TestMiddleID(t *testing.T) {
	// Position ceil(n/2), 1-based, in C_FIRST order (clause 2.5.2.2).
	for _, tc := range []struct {
		ids  []int64
		want int64
	}{{[]int64{7}, 7}, {[]int64{7, 8}, 7}, {[]int64{7, 8, 9}, 8}, {[]int64{1, 2, 3, 4}, 2}, {[]int64{1, 2, 3, 4, 5}, 3}} {
		if got := middleID(tc.ids); got != tc.want {
			t.Errorf("middleID(%v) = %d, want %d", tc.ids, got, tc.want)
		}
	}
}

func TestNewOrderInput(t *testing.T) {
	p := newTestPicker(2)
	const n = 50000
	rollbacks, remote, lines := 0, 0, 0
	for i := 0; i < n; i++ {
		in := p.newOrder(1, 3)
		if len(in.lines) < 5 || len(in.lines) > 15 {
			t.Fatalf("%d order lines, want 5..15", len(in.lines))
		}
		if in.d < 1 || in.d > 10 || in.c < 1 || in.c > 3000 {
			t.Fatalf("bad district or customer: %+v", in)
		}
		allLocal := true
		for j, l := range in.lines {
			if l.qty < 1 || l.qty > 10 {
				t.Fatalf("quantity %d, want 1..10", l.qty)
			}
			if j > 0 && l.item < in.lines[j-1].item {
				t.Fatal("lines not sorted by item")
			}
			if l.item == unusedItemID && (!in.rollback || j != len(in.lines)-1) {
				t.Fatal("unused item on a line other than the last of a rollback order")
			}
			if l.supplyW != 1 {
				remote++
				allLocal = false
				if l.supplyW < 1 || l.supplyW > 3 {
					t.Fatalf("supply warehouse %d outside 1..3", l.supplyW)
				}
			}
			lines++
		}
		if allLocal != in.allLocal {
			t.Fatal("allLocal disagrees with the lines")
		}
		if in.rollback {
			rollbacks++
			if in.lines[len(in.lines)-1].item != unusedItemID {
				t.Fatal("rollback order without the unused item last")
			}
		}
	}
	if got := float64(rollbacks) / n * 100; math.Abs(got-1) > 0.3 {
		t.Errorf("%.2f%% of New-Orders roll back, want 1%%", got)
	}
	if got := float64(remote) / float64(lines) * 100; math.Abs(got-1) > 0.2 {
		t.Errorf("%.2f%% of order lines are remote, want 1%%", got)
	}
	// One warehouse: never remote.
	for i := 0; i < 1000; i++ {
		if in := p.newOrder(1, 1); !in.allLocal {
			t.Fatal("remote supply warehouse with W=1")
		}
	}
}

func TestPaymentInput(t *testing.T) {
	p := newTestPicker(3)
	const n = 100000
	byName, remote := 0, 0
	for i := 0; i < n; i++ {
		in := p.payment(2, 4)
		if in.amount < 1 || in.amount > 5000 || in.amount != roundCents(in.amount) {
			t.Fatalf("amount %v, want 1.00..5000.00 in cents", in.amount)
		}
		if in.cust.byName {
			byName++
		} else if in.cust.id < 1 || in.cust.id > 3000 {
			t.Fatalf("customer id %d", in.cust.id)
		}
		if in.cw != in.w {
			remote++
		} else if in.cd != in.d {
			t.Fatal("home customer in another district")
		}
	}
	if got := float64(byName) / n * 100; math.Abs(got-60) > 1 {
		t.Errorf("%.1f%% of Payments by last name, want 60%%", got)
	}
	if got := float64(remote) / n * 100; math.Abs(got-15) > 1 {
		t.Errorf("%.1f%% of Payments remote, want 15%%", got)
	}
	for i := 0; i < 1000; i++ {
		if in := p.payment(1, 1); in.cw != 1 {
			t.Fatal("remote customer with W=1")
		}
	}
}

func TestOtherInputs(t *testing.T) {
	p := newTestPicker(4)
	for i := 0; i < 10000; i++ {
		if o := p.otherWarehouse(2, 3); o == 2 || o < 1 || o > 3 {
			t.Fatalf("otherWarehouse(2, 3) = %d", o)
		}
		if s := p.stockLevel(1); s.threshold < 10 || s.threshold > 20 || s.d < 1 || s.d > 10 {
			t.Fatalf("stock level input %+v", s)
		}
		if d := p.delivery(1); d.carrier < 1 || d.carrier > 10 {
			t.Fatalf("carrier %d", d.carrier)
		}
	}
}

func TestQueriesPerDialect(t *testing.T) {
	pg := newTxnSQL(target.Dialect{Engine: "postgres", Prefix: "ceiling.", Dollar: true})
	if want := "UPDATE ceiling.district SET d_next_o_id = $1 WHERE d_w_id = $2 AND d_id = $3"; pg.noDistrictUpd != want {
		t.Errorf("postgres: got %q, want %q", pg.noDistrictUpd, want)
	}
	if !strings.HasSuffix(pg.noDistrict, " FOR UPDATE") || !strings.Contains(pg.slCount, "ceiling.order_line, ceiling.stock") {
		t.Errorf("postgres queries: %q / %q", pg.noDistrict, pg.slCount)
	}
	my := newTxnSQL(target.Dialect{Engine: "mysql", Prefix: "ceiling_"})
	if !strings.HasSuffix(my.dNewOrder, "LIMIT 1 FOR UPDATE") || strings.Contains(my.noStock[9], "$") || !strings.Contains(my.noStock[9], "s_dist_10") {
		t.Errorf("mysql queries: %q / %q", my.dNewOrder, my.noStock[9])
	}
	lite := newTxnSQL(target.Dialect{Engine: "sqlite", Prefix: "ceiling_"})
	for _, s := range []string{lite.noDistrict, lite.noStock[0], lite.pCustomer, lite.dNewOrder} {
		if strings.Contains(s, "FOR") || strings.Contains(s, "{") {
			t.Errorf("sqlite query has a lock clause or a template left: %q", s)
		}
	}
}
