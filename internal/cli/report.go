package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ceiling-db/ceiling/internal/htmlreport"
)

func (e *env) reportCmd() *cobra.Command {
	var out, csvDir string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "report RESULT.json|DIR... [flags]",
		Short: "Write a self-contained HTML report (charts, verdict, tables) of one or more results",
		Long: `report writes one HTML file that works offline (no external scripts, fonts or
images): the test definition and target, the verdict with its evidence, the
summary tables, and charts of throughput and latency over time, the server's
evidence over time (log writes, data-file IO and latency, CPU, wait
categories), the ramp (requested vs achieved rate with late %), and the
repeats with their mean and spread.

With several results, the report starts with their comparison (the first is
the baseline), as ceiling compare --html does, then each result in turn. A
directory stands for the results in it, in name order (for files named by
run, the order they were run in).

--csv DIR writes each result's per-interval, per-step and per-run series as
CSV files; --json prints a compact summary of each result for scripts. With
either of them, no HTML is written unless -o is given.`,
		Example: `  ceiling report results/*.json -o report.html
  ceiling report results                                  # every result in the directory
  ceiling report results/20240101-120000-single-inserts-sqlite.json
  ceiling report run.json --csv series/
  ceiling report results/*.json --json | jq '.[].requests_per_sec'`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("report needs at least one result file or directory (e.g. ceiling report results/*.json)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			ins, err := readInputs(args)
			if err != nil {
				return err
			}
			html := out != "" || (csvDir == "" && !asJSON)
			// With --json, stdout carries the JSON only; messages go to stderr.
			msgs := e.stdout
			if asJSON {
				msgs = e.stderr
			}
			if csvDir != "" {
				if err := os.MkdirAll(csvDir, 0o755); err != nil {
					return usagef("--csv %s: %v", csvDir, unwrapPath(err))
				}
				paths, err := htmlreport.WriteCSV(csvDir, ins)
				if err != nil {
					return err
				}
				fmt.Fprintf(msgs, "CSV: %d files written to %s\n", len(paths), csvDir)
			}
			if html {
				if out == "" {
					out = "report.html"
				}
				if err := writeHTML(out, func(w io.Writer) error { return htmlreport.Write(w, ins) }); err != nil {
					return err
				}
				noun := "results"
				if len(ins) == 1 {
					noun = "result"
				}
				fmt.Fprintf(msgs, "report of %d %s written to %s\n", len(ins), noun, out)
			}
			if asJSON {
				b, err := json.MarshalIndent(htmlreport.Summaries(ins), "", "  ")
				if err != nil {
					return err
				}
				fmt.Fprintf(e.stdout, "%s\n", b)
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "HTML file to write (default report.html; not written with only --csv or --json; --out is taken too)")
	aliasFlag(cmd.Flags(), "out", "output")
	cmd.Flags().StringVar(&csvDir, "csv", "", "write the per-interval, per-step and per-run series as CSV files into this directory")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a compact JSON summary of each result")
	return cmd
}

// readInputs reads the result files, naming the first that is not one. A
// directory stands for the results in it (its *.json files that are
// ceiling results, in name order, which for run-named results is the order
// they were run in); one without any is an error.
func readInputs(paths []string) ([]htmlreport.Input, error) {
	ins := make([]htmlreport.Input, 0, len(paths))
	for _, p := range paths {
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			dirIns, err := readResultDir(p)
			if err != nil {
				return nil, err
			}
			ins = append(ins, dirIns...)
			continue
		}
		r, err := readResultFile(p)
		if err != nil {
			return nil, err
		}
		ins = append(ins, htmlreport.Input{Path: p, Result: r})
	}
	return ins, nil
}

// readResultDir reads the ceiling results among dir's *.json files (other
// JSON, such as a profile-host file, is passed over).
func readResultDir(dir string) ([]htmlreport.Input, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, usagef("results directory %s: %v", dir, err)
	}
	sort.Strings(files)
	var ins []htmlreport.Input
	for _, f := range files {
		if fi, err := os.Stat(f); err != nil || fi.IsDir() {
			continue
		}
		r, err := readResultFile(f)
		if err != nil {
			var probe struct {
				Schema string `json:"schema"`
			}
			if b, rerr := os.ReadFile(f); rerr == nil && json.Unmarshal(b, &probe) == nil && !strings.HasPrefix(probe.Schema, "ceiling.result/") {
				continue // JSON, but not a result of any version
			}
			return nil, err
		}
		ins = append(ins, htmlreport.Input{Path: f, Result: r})
	}
	if len(ins) == 0 {
		return nil, usagef("results directory %s holds no ceiling result (*.json)", dir)
	}
	return ins, nil
}

// writeHTML renders into memory, then writes path atomically (a temporary
// file in the same directory, renamed), so a failed rendering leaves no
// half-written report.
func writeHTML(path string, render func(io.Writer) error) error {
	var buf bytes.Buffer
	if err := render(&buf); err != nil {
		return err
	}
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, ".ceiling-report-*")
	if err != nil {
		return usagef("-o %s: directory %s is not writable: %v", path, dir, unwrapPath(err))
	}
	if _, err := tmp.Write(buf.Bytes()); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
