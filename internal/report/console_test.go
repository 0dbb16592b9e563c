package report

import "testing"

func TestPerOp(t *testing.T) {
	v := func(x float64) *float64 { return &x }
	for _, c := range []struct {
		v    *float64
		want string
	}{{nil, "n/a"}, {v(0), "0.000"}, {v(1.0027), "1.003"}, {v(0.0138), "0.014"}, {v(0.00138), "0.00138"}, {v(0.000939), "0.000939"}, {v(0.0000123), "1.23e-05"}} {
		if got := perOp(c.v); got != c.want {
			t.Errorf("perOp(%v) = %q, want %q", c.v, got, c.want)
		}
	}
}
