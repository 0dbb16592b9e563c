package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/ceiling-db/ceiling/internal/htmlreport"
)

func (e *env) compareCmd() *cobra.Command {
	var html bool
	var out string
	cmd := &cobra.Command{
		Use:   "compare A.json B.json [C.json...] | DIR [flags]",
		Short: "Compare results side by side: headline figures, per-request costs, spread, predictions",
		Long: `compare prints the headline figures (requests/s, rows/s, latency, errors, late %)
and the per-request server costs (log bytes and syncs, data reads and writes,
commits, CPU) of each result side by side, with each change against the first
result (the baseline); a directory stands for the results in it, in name
order (for files named by run, the order they were run in). When results were repeated (--repeat), a change is
marked "beyond" when it exceeds the run-to-run spread at 95% (Welch
t-test when both are repeated, else the repeats' 95% prediction interval),
with "better" or "worse" where the figure has a better direction (more
req/s, less latency, fewer syncs per request), and "within" otherwise.
Repeated results show their means.

When one result's verdict suggested a change (relaxed durability, batching)
and another result applied it, compare prints the predicted gain next to the
measured one (requests/s of the second ÷ the first).

--html writes the same comparison, with bar charts and each result's full
report, as one self-contained HTML file (-o, default compare.html).`,
		Example: `  ceiling compare results/full.json results/relaxed.json
  ceiling compare base.json tuned.json --html -o tuned.html
  ceiling compare run1.json run2.json run3.json
  ceiling compare results/                        # every result there, oldest first`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("compare needs at least two result files (or a directory holding them)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if out != "" && !html {
				return usagef("-o is the HTML file of --html; add --html")
			}
			ins, err := readInputs(args)
			if err != nil {
				return err
			}
			if len(ins) < 2 {
				return usagef("compare needs at least two result files, got %d", len(ins))
			}
			if err := htmlreport.Compare(ins).WriteText(e.stdout); err != nil {
				return err
			}
			if html {
				if out == "" {
					out = "compare.html"
				}
				if err := writeHTML(out, func(w io.Writer) error { return htmlreport.Write(w, ins) }); err != nil {
					return err
				}
				fmt.Fprintf(e.stdout, "\nreport written to %s\n", out)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&html, "html", false, "also write the comparison as a self-contained HTML report")
	cmd.Flags().StringVarP(&out, "output", "o", "", "HTML file of --html (default compare.html; --out is taken too)")
	aliasFlag(cmd.Flags(), "out", "output")
	return cmd
}
