package predict

import (
	"strings"
	"testing"
)

// TestLarger: the classes or tiers above a profile are those of its family
// with every limit at least as good and one better.
func TestLarger(t *testing.T) {
	all, err := Shipped()
	if err != nil {
		t.Fatal(err)
	}
	names := func(ps []Profile) string {
		var n []string
		for _, p := range ps {
			n = append(n, p.Name)
		}
		return strings.Join(n, " ")
	}
	byName := func(n string) Profile {
		for _, p := range all {
			if p.Name == n {
				return p
			}
		}
		t.Fatalf("no profile %s", n)
		return Profile{}
	}
	for _, c := range []struct{ of, want string }{
		{"azure-mi-gp-file-128g", "azure-mi-gp-file-256g azure-mi-gp-file-512g azure-mi-gp-file-1t azure-mi-gp-file-2t"},
		{"azure-mi-gp-file-2t", ""},
		{"azure-2014-s1", "azure-2014-p1 azure-2014-web-business"},
		{"azure-sql-gp-4", "azure-sql-bc-4 azure-sql-bc-8 azure-sql-bc-16 azure-sql-gp-8 azure-sql-gp-16"},
	} {
		if got := names(Larger(byName(c.of), all)); got != c.want {
			t.Errorf("Larger(%s) = %q, want %q", c.of, got, c.want)
		}
	}
	// A latency is better lower; a limit the other lacks is no size up.
	f := func(v float64) *float64 { return &v }
	slow := Profile{Name: "disk-slow", Limits: Limits{DataIOPS: f(500), DataLatencyMs: f(2)}}
	fast := Profile{Name: "disk-fast", Limits: Limits{DataIOPS: f(500), DataLatencyMs: f(0.5)}}
	bare := Profile{Name: "disk-bare", Limits: Limits{DataIOPS: f(5000)}}
	if got := names(Larger(slow, []Profile{slow, fast, bare})); got != "disk-fast" {
		t.Errorf("Larger(disk-slow) = %q, want disk-fast", got)
	}
}
