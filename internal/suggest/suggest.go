// Package suggest guesses what a mistyped name meant, for "did you mean"
// in errors about unknown workloads and flags.
package suggest

import "strings"

// Names are the names a mistyped name may have meant: the nearest
// within two edits, and fewer than half its letters (all that are as
// near), else those holding it whole, when it has three letters or more
// ("selects": the three kinds of selects), else none.
func Names(name string, names []string) []string {
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

// OrList joins names as "a", "a or b", "a, b or c".
func OrList(names []string) string { return join(names, " or ") }

// AndList joins names as "a", "a and b", "a, b and c".
func AndList(names []string) string { return join(names, " and ") }

func join(names []string, last string) string {
	if len(names) == 1 {
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + last + names[len(names)-1]
}

// distance is the edit distance between a and b (bytes): insertions,
// deletions, substitutions and swaps of neighbours ("sol" is one from
// "slo"), each one edit (the optimal string alignment distance).
func distance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
