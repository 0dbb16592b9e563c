package tpcc

import (
	"context"
	"errors"

	"github.com/spf13/pflag"

	"github.com/ceiling-db/ceiling/internal/target"
	"github.com/ceiling-db/ceiling/internal/workload"
)

// runConfig is the run configuration (ceiling run tpcc).
type runConfig struct{}

func (w *Workload) bindRunFlags(fs *pflag.FlagSet) {}

func (w *Workload) validateRun() error { return nil }

func (w *Workload) runParams() map[string]any { return map[string]any{} }

// Ops implements workload.Workload.
func (w *Workload) Ops() []string {
	return []string{"new_order", "payment", "order_status", "delivery", "stock_level"}
}

// NewWorker implements workload.Workload.
func (w *Workload) NewWorker(ctx context.Context, t target.Target, conn target.Conn, id int) (workload.Worker, error) {
	return nil, errors.New("tpcc driver: not implemented yet")
}
