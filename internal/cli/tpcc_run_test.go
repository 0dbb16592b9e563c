package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunTPCC drives `run tpcc` through the CLI on SQLite, on a prepared
// warehouse: the closed loop and the open loop both report NOPM counted
// from the database and ceiling's own TPM, TPM itself is n/a (SQLite has no
// server counters), the dataset stays consistent, and --keying-thinking
// with an open loop is a usage error.
func TestRunTPCC(t *testing.T) {
	if testing.Short() {
		t.Skip("loads a TPC-C warehouse")
	}
	ctx := context.Background()
	dir := t.TempDir()
	db := "sqlite:" + filepath.Join(dir, "tpcc.db")
	if code, out, errs := runCLI(t, ctx, "prepare", "tpcc", "--db", db, "--warehouses", "1"); code != 0 {
		t.Fatalf("prepare tpcc: exit %d %q %q", code, out, errs)
	}
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"closed", []string{"-c", "2", "--ops", "300"}},
		{"open", []string{"-c", "2", "-R", "200", "--ops", "200"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, tc.name)
			args := append([]string{"run", "tpcc", "--db", db, "--no-probe", "--out", out}, tc.args...)
			code, stdout, errs := runCLI(t, ctx, args...)
			if code != 0 {
				t.Fatalf("run: exit %d %q %q", code, stdout, errs)
			}
			for _, want := range []string{"NOPM", "TPM               n/a", "client TPM", "new_order", "stock_level"} {
				if !strings.Contains(stdout, want) {
					t.Errorf("console lacks %q:\n%s", want, stdout)
				}
			}
			_, path := readResult(t, out)
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var doc struct {
				Figures  map[string]float64 `json:"figures"`
				Workload struct {
					Params map[string]any `json:"params"`
				} `json:"workload"`
			}
			if err := json.Unmarshal(b, &doc); err != nil {
				t.Fatal(err)
			}
			if doc.Figures["nopm"] <= 0 || doc.Figures["new_orders"] <= 0 || doc.Figures["client_tpm"] <= 0 {
				t.Errorf("figures %v: want nopm, new_orders and client_tpm above 0", doc.Figures)
			}
			if _, ok := doc.Figures["tpm"]; ok {
				t.Errorf("tpm reported on SQLite: %v", doc.Figures)
			}
			if _, ok := doc.Figures["efficiency_pct"]; ok {
				t.Errorf("efficiency reported without --keying-thinking: %v", doc.Figures)
			}
			if doc.Workload.Params["warehouses"] != 1.0 {
				t.Errorf("params %v: want warehouses 1", doc.Workload.Params)
			}
		})
	}
	code, out, errs := runCLI(t, ctx, "check", "tpcc", "--db", db)
	if code != 0 || !strings.Contains(out, "conditions hold") {
		t.Fatalf("check after the runs: exit %d %q %q", code, out, errs)
	}
	if code, _, errs := runCLI(t, ctx, "run", "tpcc", "--db", db, "-R", "10", "--keying-thinking"); code != ExitUsage || !strings.Contains(errs, "--keying-thinking") {
		t.Fatalf("--keying-thinking with -R: exit %d %q", code, errs)
	}
}
