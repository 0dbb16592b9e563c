package workload

import (
	"fmt"
	"sort"
	"strings"
)

// Registry is an explicit list of workloads (no init side effects).
type Registry []Meta

// Lookup finds a workload by name.
func (r Registry) Lookup(name string) (Meta, error) {
	for _, m := range r {
		if m.Name == name {
			return m, nil
		}
	}
	names := make([]string, len(r))
	for i, m := range r {
		names[i] = m.Name
	}
	sort.Strings(names)
	guess := ""
	for _, n := range names {
		if d := distance(strings.ToLower(name), n); d <= 2 || strings.HasPrefix(n, strings.ToLower(name)) && len(name) >= 3 {
			guess = fmt.Sprintf("did you mean %s? ", n)
			break
		}
	}
	return Meta{}, fmt.Errorf("unknown workload %q (%savailable: %s)", name, guess, strings.Join(names, ", "))
}

// distance is the Levenshtein distance between a and b (bytes).
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
