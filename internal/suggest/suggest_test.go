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

func TestOrList(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want string
	}{{[]string{"a"}, "a"}, {[]string{"a", "b"}, "a or b"}, {[]string{"a", "b", "c"}, "a, b or c"}} {
		if got := OrList(tc.in); got != tc.want {
			t.Errorf("OrList(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
