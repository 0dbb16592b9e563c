package report

import (
	"math"
	"slices"
)

// Stat summarises one figure over repeated runs: the mean, the sample
// standard deviation and the 95% confidence interval of the mean (Student
// t with n-1 degrees of freedom). StdDev and the interval are null with
// fewer than two runs.
type Stat struct {
	Mean     float64  `json:"mean"`
	StdDev   *float64 `json:"stddev"`
	CI95Low  *float64 `json:"ci95_low"`
	CI95High *float64 `json:"ci95_high"`
	N        int      `json:"n"`
}

// StatOf computes the Stat of the measured values in xs; nil entries (not
// measured in that run) are left out. It returns nil when no run measured
// the figure.
func StatOf(xs []*float64) *Stat {
	var vals []float64
	for _, x := range xs {
		if x != nil && !math.IsNaN(*x) {
			vals = append(vals, *x)
		}
	}
	n := len(vals)
	if n == 0 {
		return nil
	}
	var sum float64
	for _, v := range vals {
		sum += v
	}
	mean := sum / float64(n)
	st := &Stat{Mean: mean, N: n}
	if n < 2 {
		return st
	}
	var ss float64
	for _, v := range vals {
		ss += (v - mean) * (v - mean)
	}
	sd := math.Sqrt(ss / float64(n-1))
	half := TQuantile975(n-1) * sd / math.Sqrt(float64(n))
	low := mean - half
	if low < 0 && slices.Min(vals) >= 0 {
		// A quantity that cannot be negative (a rate, a latency, a cost):
		// the interval stops at zero. Two runs far apart gave req/s
		// [-6110.8, 11156.4] (t = 12.7 at one degree of freedom).
		low = 0
	}
	st.StdDev, st.CI95Low, st.CI95High = f64(sd), f64(low), f64(mean+half)
	return st
}

// tTable holds the 0.975 quantile of Student's t for 1..30 degrees of freedom.
var tTable = [...]float64{
	12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646, 2.3060, 2.2622, 2.2281,
	2.2010, 2.1788, 2.1604, 2.1448, 2.1314, 2.1199, 2.1098, 2.1009, 2.0930, 2.0860,
	2.0796, 2.0739, 2.0687, 2.0639, 2.0595, 2.0555, 2.0518, 2.0484, 2.0452, 2.0423,
}

// TQuantile975 returns the 0.975 quantile of Student's t distribution with
// df degrees of freedom (the factor of a two-sided 95% interval): from a
// table up to 30, beyond by the Cornish-Fisher expansion around the normal
// quantile (within 1e-4 of the exact value there).
func TQuantile975(df int) float64 {
	if df < 1 {
		return math.NaN()
	}
	if df <= len(tTable) {
		return tTable[df-1]
	}
	const z = 1.959963984540054
	n := float64(df)
	z3, z5, z7 := z*z*z, math.Pow(z, 5), math.Pow(z, 7)
	return z + (z3+z)/(4*n) + (5*z5+16*z3+3*z)/(96*n*n) + (3*z7+19*z5+17*z3-15*z)/(384*n*n*n)
}
