package cli

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/ceiling-db/ceiling/internal/target"
	"github.com/ceiling-db/ceiling/internal/workload/custom"
	"github.com/ceiling-db/ceiling/internal/workload/tpcc"
)

// checkCmd is `ceiling check WORKLOAD`: consistency checks of a prepared
// (and possibly run) dataset. Only tpcc has them.
func (e *env) checkCmd() *cobra.Command {
	parent := &cobra.Command{
		Use:                "check WORKLOAD [flags]",
		Short:              "Check a workload's data for consistency (tpcc: the conditions of TPC-C clause 3.3.2; custom: its file's checks)",
		Example:            "  ceiling check tpcc --db postgres://postgres@localhost/postgres\n  ceiling check custom --file examples/custom/transfers.yaml",
		FParseErrWhitelist: cobra.FParseErrWhitelist{UnknownFlags: true},
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("%s has no consistency checks for %q; tpcc and custom have them", cmd.CommandPath(), args[0])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usagef("%s needs a workload: tpcc or custom", cmd.CommandPath())
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
	parent.AddCommand(sub, e.checkCustomCmd())
	return parent
}

// checkCustomCmd is `ceiling check custom --file F`: the file's checks.
func (e *env) checkCustomCmd() *cobra.Command {
	f := &targetFlags{durability: "server"}
	c := &custom.Custom{}
	cmd := &cobra.Command{
		Use:   "custom --file F [flags]",
		Short: "run the checks of a custom workload's file (its checks: list) on its tables",
		Long: `Runs the checks a custom workload's file lists under checks: on its tables
as they are (after prepare, or after a run), each a query whose first column
of its first row must equal the check's want (as numbers when both are):

  checks:
    - name: no-overdraft
      sql: SELECT COUNT(*) FROM {accounts} WHERE balance < 0
      want: 0

Exits 1 when a check fails.`,
		Example: "  ceiling check custom --file examples/custom/transfers.yaml --db postgres://postgres@localhost/postgres",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := c.Validate(); err != nil {
				return &UsageError{Err: err}
			}
			if len(c.Spec().File.Checks) == 0 {
				return usagef("check custom: %s lists no checks (a checks: list of name, sql and want)", c.Path)
			}
			ctx := cmd.Context()
			t, err := e.openExisting(ctx, f)
			if err != nil {
				if errors.Is(err, target.ErrNoDatabase) {
					return fmt.Errorf("check custom: %w; run `ceiling prepare custom --file %s` first", err, c.Path)
				}
				return err
			}
			defer closeTarget(t)
			info := t.Info()
			fmt.Fprintf(e.stdout, "ceiling %s: checking %s on %s %s (%s)\n", version(), c.Path, info.Engine, info.Version, info.DSN)
			results, err := c.Check(ctx, t)
			failed := 0
			for _, r := range results {
				if r.Pass {
					fmt.Fprintf(e.stdout, "  ok      %-30s %s\n", r.Name, r.Got)
				} else {
					failed++
					fmt.Fprintf(e.stdout, "  FAILED  %-30s got %s, want %s\n", r.Name, r.Got, r.Want)
				}
			}
			if err != nil {
				return fmt.Errorf("check custom: %w", err)
			}
			if failed > 0 {
				return fmt.Errorf("check custom: %d of %d checks failed", failed, len(results))
			}
			return nil
		},
	}
	f.bind(cmd.Flags())
	cmd.Flags().StringVarP(&c.Path, "file", "f", "", "the custom workload's file, whose checks: to run")
	_ = cmd.MarkFlagFilename("file", "yaml", "yml")
	return cmd
}
