package suggest

import (
	"slices"
	"testing"
)

func TestNames(t *testing.T) {
	names := []string{"direct-selects", "indirect-selects", "rate", "rates", "slo", "step", "step-warmup", "threads"}
	for name, want := range map[string][]string{
		"thread":       {"threads"},
		"sol":          {"slo"}, // a swap is one edit
		"step-warm":    {"step-warmup"},
		"selects":      {"direct-selects", "indirect-selects"}, // held whole
		"rats":         {"rate", "rates"},                      // as near
		"ratess":       {"rates"},
		"zzz":          nil,
		"ab":           nil, // too short to be held whole
		"steep":        {"step"},
		"direct-sel":   {"direct-selects", "indirect-selects"},
		"irect-selcts": {"direct-selects"},
	} {
		if got := Names(name, names); !slices.Equal(got, want) {
			t.Errorf("Names(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestLists(t *testing.T) {
	for _, tc := range []struct {
		in      []string
		or, and string
	}{
		{[]string{"a"}, "a", "a"},
		{[]string{"a", "b"}, "a or b", "a and b"},
		{[]string{"custom", "mixed", "tpcc"}, "custom, mixed or tpcc", "custom, mixed and tpcc"},
	} {
		if got := OrList(tc.in); got != tc.or {
			t.Errorf("OrList(%q) = %q, want %q", tc.in, got, tc.or)
		}
		if got := AndList(tc.in); got != tc.and {
			t.Errorf("AndList(%q) = %q, want %q", tc.in, got, tc.and)
		}
	}
}
