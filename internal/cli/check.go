package cli

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/ceiling-db/ceiling/internal/target"
	"github.com/ceiling-db/ceiling/internal/workload/tpcc"
)

// checkCmd is `ceiling check WORKLOAD`: consistency checks of a prepared
// (and possibly run) dataset. Only tpcc has them.
func (e *env) checkCmd() *cobra.Command {
	parent := &cobra.Command{
		Use:                "check WORKLOAD [flags]",
		Short:              "Check a workload's data for consistency (tpcc: the conditions of TPC-C clause 3.3.2)",
		Example:            "  ceiling check tpcc --db postgres://postgres@localhost/postgres",
		FParseErrWhitelist: cobra.FParseErrWhitelist{UnknownFlags: true},
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("%s has no consistency checks for %q; only tpcc has them", cmd.CommandPath(), args[0])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usagef("%s needs a workload: tpcc", cmd.CommandPath())
		},
	}
	f := &targetFlags{durability: "server"}
	sub := &cobra.Command{
		Use:     "tpcc [flags]",
		Short:   "check the TPC-C consistency conditions (clauses 3.3.2.1 to 3.3.2.10 and 3.3.2.12)",
		Example: "  ceiling check tpcc --db postgres://user@host/db",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			t, err := e.openExisting(ctx, f)
			if err != nil {
				if errors.Is(err, target.ErrNoDatabase) {
					return fmt.Errorf("check tpcc: %w; run `ceiling prepare tpcc` first", err)
				}
				return err
			}
			defer closeTarget(t)
			info := t.Info()
			fmt.Fprintf(e.stdout, "ceiling %s: checking the TPC-C dataset on %s %s (%s)\n", version(), info.Engine, info.Version, info.DSN)
			start := time.Now()
			results, err := tpcc.Check(ctx, t)
			if err != nil {
				return fmt.Errorf("check tpcc: %w", err)
			}
			failed := tpcc.PrintChecks(e.stdout, results)
			fmt.Fprintf(e.stdout, "checked in %.1fs\n", time.Since(start).Seconds())
			if failed > 0 {
				return fmt.Errorf("check tpcc: %d consistency conditions failed", failed)
			}
			return nil
		},
	}
	f.bind(sub.Flags())
	parent.AddCommand(sub)
	return parent
}
