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
	if g := guesses(strings.ToLower(name), names); len(g) > 0 {
		guess = "did you mean " + orList(g) + "? "
	}
	return Meta{}, fmt.Errorf("unknown workload %q (%savailable: %s)", name, guess, strings.Join(names, ", "))
}

// guesses are the names a mistyped name may have meant: the nearest
// within two edits, and fewer than half its letters (all that are as
// near), else those holding it whole,
// when it has three letters or more ("selects": the three kinds of
// selects), else none.
func guesses(name string, names []string) []string {
	best, near := 3, []string(nil)
	for _, n := range names {
		switch d := distance(name, n); {
		case 2*d >= len(name):
			// As many edits as letters kept: not a typo of it.
		case d < best:
			best, near = d, []string{n}
		case d == best:
			near = append(near, n)
		}
	}
	if len(near) > 0 {
		return near
	}
	if len(name) < 3 {
		return nil
	}
	var holding []string
	for _, n := range names {
		if strings.Contains(n, name) {
			holding = append(holding, n)
		}
	}
	return holding
}

// orList joins names as "a", "a or b", "a, b or c".
func orList(names []string) string {
	if len(names) == 1 {
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
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
