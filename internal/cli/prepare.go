package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/ceiling-db/ceiling/internal/workload/all"
)

func (e *env) prepareCmd() *cobra.Command {
	return e.workloadParent("prepare", "Create a workload's tables and load its data, without running it", func(name string) *cobra.Command {
		meta, _ := all.Registry().Lookup(name)
		w := meta.New()
		f := &targetFlags{durability: "server"}
		cmd := &cobra.Command{
			Use:     name + " [flags]",
			Short:   "prepare " + name,
			Example: fmt.Sprintf("  ceiling prepare %s --db sqlite:/tmp/bench.db", name),
			Args:    noArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				if err := w.Validate(); err != nil {
					return &UsageError{Err: err}
				}
				ctx := cmd.Context()
				t, err := e.openTarget(ctx, f, 1)
				if err != nil {
					return err
				}
				defer closeTarget(t)
				start := time.Now()
				if err := w.Prepare(ctx, t, e.stdout); err != nil {
					return fmt.Errorf("prepare %s: %w", name, err)
				}
				fmt.Fprintf(e.stdout, "prepared %s on %s in %.1fs\n", name, t.Info().DSN, time.Since(start).Seconds())
				return nil
			},
		}
		f.bind(cmd.Flags())
		w.Flags(cmd.Flags())
		return cmd
	})
}

func (e *env) cleanupCmd() *cobra.Command {
	return e.workloadParent("cleanup", "Drop a workload's tables (only objects ceiling created)", func(name string) *cobra.Command {
		meta, _ := all.Registry().Lookup(name)
		w := meta.New()
		f := &targetFlags{durability: "server"}
		cmd := &cobra.Command{
			Use:     name + " [flags]",
			Short:   "drop the tables of " + name,
			Example: fmt.Sprintf("  ceiling cleanup %s --db sqlite:/tmp/bench.db", name),
			Args:    noArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				ctx := cmd.Context()
				t, err := e.openTarget(ctx, f, 1)
				if err != nil {
					return err
				}
				defer closeTarget(t)
				for _, tb := range w.Tables() {
					if err := t.Schema().DropTable(ctx, tb); err != nil {
						return fmt.Errorf("cleanup %s: %w", name, err)
					}
					fmt.Fprintf(e.stdout, "dropped %s\n", t.Dialect().Table(tb))
				}
				return nil
			},
		}
		f.bind(cmd.Flags())
		w.Flags(cmd.Flags()) // e.g. --tables N names the tables to drop
		return cmd
	})
}
