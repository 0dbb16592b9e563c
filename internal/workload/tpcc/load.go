package tpcc

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/ceiling-db/ceiling/internal/target"
)

// Validate implements workload.Workload.
func (w *Workload) Validate() error {
	if w.Warehouses < 1 {
		return fmt.Errorf("--warehouses must be at least 1, got %d", w.Warehouses)
	}
	if w.LoadThreads < 0 {
		return fmt.Errorf("--load-threads must not be negative, got %d", w.LoadThreads)
	}
	return w.validateRun()
}

// Params implements workload.Workload.
func (w *Workload) Params() map[string]any {
	p := w.runParams()
	p["warehouses"] = w.Warehouses
	return p
}

// Tables implements workload.Workload.
func (w *Workload) Tables() []string {
	return []string{"warehouse", "district", "customer", "history", "new_order", "orders", "order_line", "item", "stock"}
}

// Prepare implements workload.Workload: it loads the dataset.
func (w *Workload) Prepare(ctx context.Context, t target.Target, progress io.Writer) error {
	return errors.New("tpcc loader: not implemented yet")
}

// Attach implements workload.Attacher: run reuses the prepared dataset.
func (w *Workload) Attach(ctx context.Context, t target.Target, progress io.Writer) error {
	return errors.New("tpcc: no prepared dataset; run `ceiling prepare tpcc --warehouses N` first")
}
