// Package all lists every workload ceiling has, explicitly.
package all

import (
	"github.com/ceiling-db/ceiling/internal/workload"
	"github.com/ceiling-db/ceiling/internal/workload/insdel"
	"github.com/ceiling-db/ceiling/internal/workload/singleins"
)

// Registry returns the workloads in the order `ceiling workloads` lists them.
func Registry() workload.Registry {
	return workload.Registry{insdel.Meta, singleins.Meta}
}
