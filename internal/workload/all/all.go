// Package all lists every workload ceiling has, explicitly.
package all

import (
	"github.com/ceiling-db/ceiling/internal/workload"
	"github.com/ceiling-db/ceiling/internal/workload/bulkload"
	"github.com/ceiling-db/ceiling/internal/workload/custom"
	"github.com/ceiling-db/ceiling/internal/workload/directsel"
	"github.com/ceiling-db/ceiling/internal/workload/indsel"
	"github.com/ceiling-db/ceiling/internal/workload/insdel"
	"github.com/ceiling-db/ceiling/internal/workload/mixed"
	"github.com/ceiling-db/ceiling/internal/workload/seqsel"
	"github.com/ceiling-db/ceiling/internal/workload/singleins"
	"github.com/ceiling-db/ceiling/internal/workload/tpcc"
	"github.com/ceiling-db/ceiling/internal/workload/updates"
)

// Registry returns the workloads in the order `ceiling workloads` lists them.
func Registry() workload.Registry {
	return workload.Registry{insdel.Meta, directsel.Meta, indsel.Meta, updates.Meta, mixed.Meta, seqsel.Meta, bulkload.Meta, singleins.Meta, tpcc.Meta, custom.Meta}
}
