package mixed

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ceiling-db/ceiling/internal/workload/rowdata"
)

func TestMixProportions(t *testing.T) {
	sum := 0
	for _, w := range Mix {
		sum += w
	}
	if sum != 1000 || len(Mix) != len((&Mixed{}).Ops()) {
		t.Fatalf("mix sums to %d per mille over %d ops", sum, len(Mix))
	}
	k := &worker{rng: rand.New(rand.NewPCG(1, 2))}
	const n = 200000
	var counts [len(Mix)]int
	for i := 0; i < n; i++ {
		counts[k.pick()]++
	}
	for op, w := range Mix {
		if got := float64(counts[op]) / n * 1000; math.Abs(got-float64(w)) > 5 {
			t.Fatalf("op %d drawn %.1f‰, want %d‰", op, got, w)
		}
	}
}

// TestIsolate checks that Isolate makes new workers run one operation only
// (and -1 the mix again), and that deletes alone are bounded by the live
// rows of the emptiest table while the other operations are not.
func TestIsolate(t *testing.T) {
	w := &Mixed{}
	a, b := rowdata.NewLiveSet(0), rowdata.NewLiveSet(0)
	for i := range int64(1000) {
		a.Add(i+1, 400)
		if i < 500 {
			b.Add(i+1, 400)
		}
	}
	w.Live = []*rowdata.LiveSet{a, b}
	w.Isolate(OpUpdate)
	k := &worker{rng: rand.New(rand.NewPCG(1, 2)), solo: w.solo}
	for range 1000 {
		if op := k.pick(); op != OpUpdate {
			t.Fatalf("isolated to update, drew %d", op)
		}
	}
	w.Isolate(-1)
	k = &worker{rng: rand.New(rand.NewPCG(1, 2)), solo: w.solo}
	seen := map[int]bool{}
	for range 1000 {
		seen[k.pick()] = true
	}
	if len(seen) != len(Mix) {
		t.Errorf("after Isolate(-1) drew only %v", seen)
	}
	for op := range len(Mix) {
		budget, why, err := w.IsolationBudget(context.Background(), nil, op, 4)
		if err != nil {
			t.Fatal(err)
		}
		want := int64(0)
		if op == OpDelete {
			want = 800 // 80% of 500, times 2 tables
		}
		if budget != want || (want > 0) != strings.Contains(why, "live rows") {
			t.Errorf("op %d: budget %d (%q), want %d", op, budget, why, want)
		}
	}
	w.Live = []*rowdata.LiveSet{rowdata.NewLiveSet(0)}
	if budget, why, _ := w.IsolationBudget(context.Background(), nil, OpDelete, 4); budget >= 0 || why == "" {
		t.Errorf("no live rows: budget %d (%q), want a refusal", budget, why)
	}
}
