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
	return Meta{}, fmt.Errorf("unknown workload %q (available: %s)", name, strings.Join(names, ", "))
}
