package workload

import (
	"fmt"
	"sort"
	"strings"

	"github.com/ceiling-db/ceiling/internal/suggest"
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
	if g := suggest.Names(strings.ToLower(name), names); len(g) > 0 {
		guess = "did you mean " + suggest.OrList(g) + "? "
	}
	return Meta{}, fmt.Errorf("unknown workload %q (%savailable: %s)", name, guess, strings.Join(names, ", "))
}
