package shard

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Spec
		err  string
	}{
		{in: "0/3", want: Spec{0, 3}},
		{in: " 2/3 ", want: Spec{2, 3}},
		{in: "0/1", want: Spec{0, 1}},
		{in: "3/3", err: "I must be between 0 and 2"},
		{in: "-1/3", err: "I must be between 0 and 2"},
		{in: "1/0", err: "N must be between 1"},
		{in: "1", err: "is not I/N"},
		{in: "a/b", err: "is not I/N"},
		{in: "1/1001", err: "N must be between 1 and 1000"},
	} {
		got, err := Parse(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Parse(%q): error %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("Parse(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

// TestShare: the shards' parts add up to the whole, each part starts
// where the one before ended, and no two parts differ by more than one.
func TestShare(t *testing.T) {
	for _, total := range []int64{0, 1, 2, 7, 16, 100, 1001} {
		for n := 1; n <= 9; n++ {
			var sum, next, lo, hi int64 = 0, 0, total, 0
			for i := 0; i < n; i++ {
				c, first := Spec{I: i, N: n}.Share(total)
				if first != next {
					t.Fatalf("total %d, shard %d/%d: first %d, want %d", total, i, n, first, next)
				}
				next += c
				sum += c
				lo, hi = min(lo, c), max(hi, c)
			}
			if sum != total || hi-lo > 1 {
				t.Fatalf("total %d over %d shards: parts add to %d, spread %d-%d", total, n, sum, lo, hi)
			}
		}
	}
}
