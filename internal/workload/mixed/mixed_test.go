package mixed

import (
	"math"
	"math/rand/v2"
	"testing"
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
