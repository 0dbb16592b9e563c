package indsel

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestRangeLengthDistribution(t *testing.T) {
	total := 0
	mean := 0.0
	for i, w := range RangeWeights {
		total += w
		mean += float64(w) * float64(RangeLengths[i]) / 100
	}
	if total != 100 || mean != MeanRangeLength {
		t.Fatalf("weights sum to %d, theoretical mean %.1f; want 100 and %d", total, mean, MeanRangeLength)
	}
	rng := rand.New(rand.NewPCG(7, 11))
	const n = 400000
	var sum float64
	counts := map[int64]int{}
	for i := 0; i < n; i++ {
		l := RangeLength(rng)
		counts[l]++
		sum += float64(l)
	}
	got := sum / n
	if math.Abs(got-MeanRangeLength) > MeanRangeLength*0.02 {
		t.Fatalf("mean range length %.1f, want %d ± 2%%", got, MeanRangeLength)
	}
	for i, l := range RangeLengths {
		frac := float64(counts[l]) / n * 100
		if math.Abs(frac-float64(RangeWeights[i])) > 0.5 {
			t.Fatalf("length %d drawn %.2f%%, want %d%%", l, frac, RangeWeights[i])
		}
	}
}

func TestFilterWindowInDomain(t *testing.T) {
	for _, c := range filterCols {
		span := c.max - c.min
		for _, u := range []float64{0, 0.5, 0.999999999} {
			lo := c.min + u*(1-Selectivity)*span
			hi := lo + Selectivity*span
			if c.float {
				if lo < c.min || hi > c.max {
					t.Fatalf("%s: window %g..%g outside %g..%g", c.name, lo, hi, c.min, c.max)
				}
				continue
			}
			p, q := c.clampInt(lo), c.clampInt(hi)
			if float64(p) < c.min || float64(q) > c.max || q-p < int64(0.89*span) && span < 1e18 {
				t.Fatalf("%s: window %d..%d outside %g..%g or too narrow", c.name, p, q, c.min, c.max)
			}
		}
	}
}
