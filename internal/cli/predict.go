package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ceiling-db/ceiling/internal/diagnose"
	"github.com/ceiling-db/ceiling/internal/htmlreport"
	"github.com/ceiling-db/ceiling/internal/predict"
	"github.com/ceiling-db/ceiling/internal/report"
)

func (e *env) predictCmd() *cobra.Command {
	var profiles []string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "predict RESULT.json|DIR [flags]",
		Short: "Predict a result's ceiling on other hardware or cloud tiers",
		Long: `predict divides each limit of a profile (log MiB/s, log flushes/s, data IOPS,
data MiB/s, cores) by the result's measured cost per request of that resource,
and takes the minimum as the predicted ceiling in requests/s; the resource of the
minimum is the binding one, and the others' headroom is their capacity ÷ the
ceiling. A limit the profile does not give, or a cost the run did not measure, is
"not modelled"; a resource the workload would use at the predicted rate that the
profile gives no limit for is marked "(no limit)": the prediction is then an
upper bound, as that resource can only lower it.

Without --profile it predicts for every shipped profile (see ceiling profiles).
Given a directory (such as results, where runs write), it takes the newest
result there.
--profile takes a shipped name, a YAML profile file, or the JSON written by
ceiling profile-host --out.`,
		Example: `  ceiling predict results/20240101-120000-single-inserts-sqlite.json
  ceiling predict results                          # the newest result in results/
  ceiling predict run.json --profile azure-sql-gp-4
  ceiling predict run.json --profile this-host.json --profile azure-2014-p1
  ceiling predict run.json --profile my-disk.yaml --json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("predict takes one result file, got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			path, r, err := readPredictResult(args[0])
			if err != nil {
				return err
			}
			var ps []predict.Profile
			if len(profiles) == 0 {
				if ps, err = predict.Shipped(); err != nil {
					return err
				}
			} else {
				for _, a := range profiles {
					p, err := predict.Load(a)
					if err != nil {
						return usagef("--profile: %v", err)
					}
					ps = append(ps, p)
				}
			}
			preds := make([]predict.Prediction, len(ps))
			for i, p := range ps {
				preds[i] = predict.Predict(r, p)
			}
			if asJSON {
				b, err := json.MarshalIndent(preds, "", "  ")
				if err != nil {
					return err
				}
				fmt.Fprintf(e.stdout, "%s\n", b)
				return nil
			}
			if path != args[0] {
				fmt.Fprintf(e.stdout, "%s is a directory: its newest result is taken\n", args[0])
			}
			fmt.Fprintf(e.stdout, "result %s: %s on %s, %s, measured %s\n",
				path, r.Workload.Name, r.Target.Engine, diagnose.Threads(r.Load.Threads), measuredText(r))
			if len(profiles) == 0 {
				printPredictTable(e, preds)
			} else {
				for _, pr := range preds {
					printPrediction(e, pr)
				}
			}
			switch em := r.Target.Emulation; {
			case em != nil:
				fmt.Fprintf(e.stdout, "note: this run was measured with its files held to %s's limits (--emulate): its costs per request are those under them\n", em.Profile)
			case r.Target.Engine == "sqlite":
				example := "PROFILE"
				if len(profiles) > 0 {
					example = profiles[0] // as given: a shipped name or a file
				}
				fmt.Fprintf(e.stdout, "check a prediction on this engine: ceiling run %s --emulate %s (with the run's other flags) holds the files to that profile's log and data-file limits and latencies\n", r.Workload.Name, example)
			}
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&profiles, "profile", nil, "profile: a shipped name, a YAML file or a profile-host JSON (repeatable; default every shipped profile)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the predictions as JSON")
	return cmd
}

func (e *env) profilesCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "profiles",
		Short: "List the shipped hardware and cloud-tier profiles of predict",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ps, err := predict.Shipped()
			if err != nil {
				return err
			}
			for _, p := range ps {
				fmt.Fprintf(e.stdout, "%-24s %s\n", p.Name, p.Title)
				fmt.Fprintf(e.stdout, "%-24s limits: %s\n", "", limitsText(p.Limits))
				fmt.Fprintf(e.stdout, "%-24s source: %s\n", "", p.Source)
				fmt.Fprintf(e.stdout, "%-24s date: %s\n", "", p.SourceDate)
			}
			return nil
		},
	}
}

// readPredictResult reads predict's result: the file, or a directory's
// newest result (by its start time), such as the results directory runs
// write to; it returns the file read.
func readPredictResult(path string) (string, *report.Result, error) {
	if fi, err := os.Stat(path); err != nil || !fi.IsDir() {
		r, err := readResultFile(path)
		return path, r, err
	}
	ins, err := readResultDir(path)
	if err != nil {
		return "", nil, err
	}
	newest := slices.MaxFunc(ins, func(a, b htmlreport.Input) int { return a.Result.StartedAt.Compare(b.Result.StartedAt) })
	return newest.Path, newest.Result, nil
}

func readResultFile(path string) (*report.Result, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, usagef("result %s: %v", path, err)
	}
	var r report.Result
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, usagef("result %s: not a ceiling result: %v", path, err)
	}
	if r.Schema != report.Schema {
		return nil, usagef("result %s: schema %q, want %q", path, r.Schema, report.Schema)
	}
	return &r, nil
}

func limitsText(l predict.Limits) string {
	var s []string
	add := func(v *float64, f string) {
		if v != nil {
			s = append(s, fmt.Sprintf(f, *v))
		}
	}
	add(l.LogMBPerSec, "log %g MiB/s")
	add(l.LogSyncsPerSec, "%g log flushes/s")
	add(l.DataIOPS, "%g data IOPS")
	add(l.DataMBPerSec, "data %g MiB/s")
	add(l.Cores, "%g cores")
	add(l.LogLatencyMs, "%g ms per log flush")
	add(l.DataLatencyMs, "%g ms per data read")
	return strings.Join(s, ", ")
}

func rateText(v *float64) string {
	if v == nil {
		return "n/a"
	}
	switch {
	case *v >= 100:
		return fmt.Sprintf("%.0f", *v)
	case *v >= 10:
		return fmt.Sprintf("%.1f", *v)
	}
	return fmt.Sprintf("%.2f", *v)
}

func headroomText(pr predict.Prediction) string {
	var s []string
	for _, l := range pr.Limits {
		if l.Binding || l.Headroom == nil {
			continue
		}
		s = append(s, fmt.Sprintf("%s ×%.3g", l.Resource, *l.Headroom))
	}
	if len(s) == 0 {
		return "-"
	}
	return strings.Join(s, ", ")
}

// notModelledText lists the profile's limits that the result has no cost
// for, then the resources the run used that the profile has no limit for
// (marked "no limit").
func notModelledText(pr predict.Prediction) string {
	var s []string
	for _, l := range pr.Limits {
		if l.Limit != nil && l.NotModelled != "" {
			s = append(s, l.Resource)
		}
	}
	if un := predict.Unlimited(pr); len(un) > 0 {
		s = append(s, strings.Join(un, ",")+" (no limit)")
	}
	if len(s) == 0 {
		return "-"
	}
	return strings.Join(s, ",")
}

func printPredictTable(e *env, preds []predict.Prediction) {
	// "not modelled" comes last: its list can be long.
	fmt.Fprintf(e.stdout, "%-24s %12s  %-10s %-30s %-11s %s\n", "profile", "pred. req/s", "binding", "headroom of the others", "source date", "not modelled")
	for _, pr := range preds {
		b := pr.Binding
		if b == "" {
			b = "none"
		}
		date := pr.SourceDate
		if i := strings.IndexAny(date, " ("); i > 0 {
			date = date[:i]
		}
		fmt.Fprintf(e.stdout, "%-24s %12s  %-10s %-30s %-11s %s\n", pr.Profile, rateText(pr.RequestsPerSec), b, headroomText(pr), date, notModelledText(pr))
	}
	// A note that holds for some of the profiles only names them.
	var notes []string
	whose := map[string][]string{}
	for _, pr := range preds {
		for _, c := range pr.Caveats {
			if whose[c] == nil {
				notes = append(notes, c)
			}
			whose[c] = append(whose[c], pr.Profile)
		}
	}
	for _, c := range notes {
		switch n := len(whose[c]); {
		case n == len(preds):
			fmt.Fprintf(e.stdout, "note: %s\n", c)
		case 2*n <= len(preds):
			fmt.Fprintf(e.stdout, "note (%s): %s\n", strings.Join(whose[c], ", "), c)
		default:
			var others []string
			for _, pr := range preds {
				if !slices.Contains(whose[c], pr.Profile) {
					others = append(others, pr.Profile)
				}
			}
			fmt.Fprintf(e.stdout, "note (all but %s): %s\n", strings.Join(others, ", "), c)
		}
	}
	fmt.Fprintf(e.stdout, "details: ceiling predict FILE --profile NAME; sources: ceiling profiles\n")
}

func printPrediction(e *env, pr predict.Prediction) {
	fmt.Fprintf(e.stdout, "\n%s — %s\n", pr.Profile, pr.Title)
	fmt.Fprintf(e.stdout, "  source: %s (%s)\n", pr.Source, pr.SourceDate)
	if pr.RequestsPerSec != nil {
		fmt.Fprintf(e.stdout, "  predicted ceiling: %s req/s, bound by %s (measured here: %s req/s)\n",
			rateText(pr.RequestsPerSec), pr.Binding, rateText(&pr.MeasuredRequestsPerSec))
	} else {
		fmt.Fprintf(e.stdout, "  predicted ceiling: n/a (measured here: %s req/s)\n", rateText(&pr.MeasuredRequestsPerSec))
	}
	fmt.Fprintf(e.stdout, "  %-10s %14s %22s %14s %9s\n", "resource", "limit", "cost/req", "capacity req/s", "headroom")
	for _, l := range pr.Limits {
		lim, cost := "-", "-"
		if l.Limit != nil {
			lim = fmt.Sprintf("%g %s", *l.Limit, l.Unit)
		}
		if l.Cost != nil {
			cost = fmt.Sprintf("%.4g %s", *l.Cost, l.CostUnit)
		}
		capText, head := rateText(l.Capacity), "-"
		switch {
		case l.NotModelled != "":
			capText = "not modelled"
		case l.Capacity == nil:
			capText = "unbounded"
		case l.Binding:
			head = "binding"
		case l.Headroom != nil:
			head = fmt.Sprintf("×%.3g", *l.Headroom)
		}
		fmt.Fprintf(e.stdout, "  %-10s %14s %22s %14s %9s\n", l.Resource, lim, cost, capText, head)
		if l.NotModelled != "" {
			fmt.Fprintf(e.stdout, "  %-10s   (%s)\n", "", l.NotModelled)
		}
		if l.Note != "" {
			fmt.Fprintf(e.stdout, "  %-10s   (%s)\n", "", l.Note)
		}
	}
	for _, c := range pr.Caveats {
		fmt.Fprintf(e.stdout, "  note: %s\n", c)
	}
}

// measuredText is the result's measured rate: for open-loop steps (a ramp,
// a knee search) the mean over the steps says little, so the knee or the
// highest rate achieved comes first.
func measuredText(r *report.Result) string {
	mean := fmt.Sprintf("%.0f req/s", r.Summary.RequestsPerSec)
	if len(r.Steps) < 2 {
		return mean
	}
	if k := r.Knee; k != nil && k.Rate != nil {
		return fmt.Sprintf("knee %s req/s for %s (%s on average over its %d probes)", fmtRate(*k.Rate), k.SLOApplied, mean, len(r.Steps))
	}
	peak := 0.0
	for _, st := range r.Steps {
		if st.AchievedPerSec != nil {
			peak = math.Max(peak, *st.AchievedPerSec)
		}
	}
	if peak == 0 {
		return mean
	}
	return fmt.Sprintf("at most %.0f req/s in a step (%s on average over its %d steps)", peak, mean, len(r.Steps))
}
