// Package tpcc implements the TPC-C workload (HammerDB TPROC-C style): the
// specification's schema in ceiling's namespace, a parallel loader through
// each engine's bulk path, the five transactions in the 45/43/4/4/4 mix, and
// the consistency checks of clause 3.3.2.
//
// Files: tpcc.go (the Workload and its load flags), schema.go (DDL per
// engine), gen.go (data generation per the specification), load.go (the
// loader, Prepare and Attach), check.go (consistency conditions), driver.go
// (run flags, Ops, NewWorker) and txn.go (the five transactions).
package tpcc

import (
	"github.com/spf13/pflag"

	"github.com/ceiling-db/ceiling/internal/workload"
)

// Meta registers the workload.
var Meta = workload.Meta{
	Name:        "tpcc",
	Description: "TPC-C (HammerDB TPROC-C style): New-Order, Payment, Order-Status, Delivery, Stock-Level on W warehouses; reports NOPM and TPM",
	RunExamples: `  ceiling prepare tpcc --warehouses 2 --db postgres://postgres@localhost/postgres   # once: run uses this dataset
  ceiling run tpcc -c 8 -T 60s --db postgres://postgres@localhost/postgres
  ceiling run tpcc -c 8 -T 60s --procedures --db mysql://root@127.0.0.1:3306/test   # one call per transaction, as HammerDB
  ceiling run tpcc -c 8 -T 60s --all-warehouses --isolate 0   # no per-transaction runs after the mix
  ceiling run tpcc -c 10 -T 10m --keying-thinking              # the specification's keying and think times
  ceiling run tpcc -c 8 --rates 100:400:100 --step 30s          # open-loop ramp of transactions/s
  ceiling run tpcc -c 8 -T 60s --repeat 3                       # mean and spread of three runs`,
	New: func() workload.Workload { return &Workload{Warehouses: 1} },
}

// Workload is the TPC-C workload.
type Workload struct {
	// Load configuration (ceiling prepare tpcc).
	Warehouses  int
	LoadThreads int
	Force       bool

	// consts are the load's NURand constants, read from tpcc_meta by Attach
	// (or set by Prepare); the run derives its own from them.
	consts Constants
	// flags is the flag set Flags bound, to tell an explicit --warehouses
	// from the default in Attach.
	flags *pflag.FlagSet

	run runConfig // run configuration, in driver.go

	sharded bool // run --shard: other shards attach at the same time (Shard)
}

var _ workload.Workload = (*Workload)(nil)

// Flags implements workload.Workload.
func (w *Workload) Flags(fs *pflag.FlagSet) {
	w.flags = fs
	fs.IntVar(&w.Warehouses, "warehouses", 1, "number of warehouses (each is about 100 MB of data); run: default the prepared count")
	fs.IntVar(&w.LoadThreads, "load-threads", 0, "prepare: parallel loader connections (default: number of cores)")
	fs.BoolVar(&w.Force, "force", false, "prepare: replace an existing TPC-C dataset")
	w.bindRunFlags(fs)
}
