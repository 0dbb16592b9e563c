package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckTPCC drives prepare, check and cleanup of tpcc through the CLI on
// SQLite: check refuses a missing dataset, passes on a fresh load, and
// cleanup drops every table prepare made (tpcc_meta included).
func TestCheckTPCC(t *testing.T) {
	if testing.Short() {
		t.Skip("loads a TPC-C warehouse")
	}
	ctx := context.Background()
	db := "sqlite:" + filepath.Join(t.TempDir(), "tpcc.db")
	if code, out, errs := runCLI(t, ctx, "check", "tpcc", "--db", db); code != ExitRun || !strings.Contains(errs, "prepare tpcc") {
		t.Fatalf("check without a dataset: exit %d %q %q", code, out, errs)
	}
	if code, _, errs := runCLI(t, ctx, "check", "inserts-deletes"); code != ExitUsage || !strings.Contains(errs, "tpcc and custom have them") {
		t.Fatalf("check inserts-deletes: exit %d %q", code, errs)
	}
	if code, _, errs := runCLI(t, ctx, "check"); code != ExitUsage {
		t.Fatalf("check without a workload: exit %d %q", code, errs)
	}
	code, out, errs := runCLI(t, ctx, "prepare", "tpcc", "--db", db, "--warehouses", "1")
	if code != 0 || !strings.Contains(out, "rows/s") || !strings.Contains(out, "s per warehouse") {
		t.Fatalf("prepare tpcc: exit %d %q %q", code, out, errs)
	}
	if code, _, errs := runCLI(t, ctx, "prepare", "tpcc", "--db", db); code != ExitRun || !strings.Contains(errs, "--force") {
		t.Fatalf("second prepare: exit %d %q", code, errs)
	}
	code, out, errs = runCLI(t, ctx, "check", "tpcc", "--db", db)
	if code != 0 || !strings.Contains(out, "3.3.2.1  PASS") || !strings.Contains(out, "all 11 conditions hold") {
		t.Fatalf("check tpcc: exit %d %q %q", code, out, errs)
	}
	code, out, errs = runCLI(t, ctx, "cleanup", "tpcc", "--db", db)
	if code != 0 || !strings.Contains(out, "dropped ceiling_tpcc_meta") || !strings.Contains(out, "dropped ceiling_order_line") {
		t.Fatalf("cleanup tpcc: exit %d %q %q", code, out, errs)
	}
	if code, _, errs := runCLI(t, ctx, "run", "tpcc", "--db", db, "-T", "1s"); code != ExitRun || !strings.Contains(errs, "prepare tpcc") {
		t.Fatalf("run after cleanup: exit %d %q", code, errs)
	}
}
