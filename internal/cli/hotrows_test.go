package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ceiling-db/ceiling/internal/testenv"
	"github.com/ceiling-db/ceiling/internal/workload/rowdata"
)

// TestHotRows: updates --hot-rows 1 sends every update to row 1, on each
// engine: the other rows keep the values the load gave them, row 1 does
// not, and every request updated one row. On PostgreSQL, whose sessions
// hold a row's lock until their commit's log flush, four workers on one
// row wait for each other's locks most of their time: the verdict names
// contention on the row table, and suggests relaxed durability.
func TestHotRows(t *testing.T) {
	const rows = 300
	var loaded, loadedRest int64 // sum(int_col): all rows, ids 2..rows
	rowdata.EachRow(rows, func(r *rowdata.Row) {
		loaded += r.Int
		if r.ID > 1 {
			loadedRest += r.Int
		}
	})
	testenv.EachEngine(t, "sqlite:"+filepath.Join(t.TempDir(), "t.db"), func(t *testing.T, dsn string) {
		if !strings.HasPrefix(dsn, "sqlite:") {
			t.Cleanup(dropNewTables(t, dsn))
		}
		r, stdout := runFull(t, "run", "updates", "--db", dsn, "-c", "4", "--rows", itoaTest(rows), "--hot-rows", "1", "-T", "3s")
		if r.Summary.Requests == 0 || r.Summary.Rows != r.Summary.Requests || r.Summary.Errors != 0 {
			t.Fatalf("summary %+v: want one row updated per request, no errors", r.Summary)
		}
		if r.Workload.Params["hot_rows"] != float64(1) {
			t.Errorf("params %v: want hot_rows 1", r.Workload.Params)
		}
		got := queryInts(t, dsn, "SELECT count(*), sum(CASE WHEN row_id > 1 THEN int_col ELSE 0 END), sum(int_col) FROM {ns}rows", 3)
		if got[0] != rows || got[1] != loadedRest {
			t.Errorf("rows %d, sum(int_col) of ids 2..%d %d: want %d rows, %d as loaded (only row 1 updated)", got[0], rows, got[1], rows, loadedRest)
		}
		if got[2] == loaded {
			t.Errorf("sum(int_col) %d as loaded after %d updates of row 1", got[2], r.Summary.Requests)
		}
		if strings.HasPrefix(dsn, "postgres") {
			if r.Verdict == nil || r.Verdict.Bottleneck != "contention" {
				t.Errorf("verdict %+v, want contention\n%s", r.Verdict, stdout)
			}
			if !strings.Contains(stdout, "try --durability relaxed, which releases the locks without waiting for the flush") {
				t.Errorf("no relaxed durability for locks held through the flush:\n%s", stdout)
			}
			if !strings.Contains(stdout, "rows (100% of those seen)") {
				t.Errorf("output does not name the row table as the lock waits':\n%s", stdout)
			}
		}
	})
}

// TestMixedHotRows: mixed --hot-rows 1 sends every update to row 1 and
// no other operation touches it, on each engine: row 1 is still there,
// changed, each update changed one row, and the deletes and inserts went
// on beside it.
func TestMixedHotRows(t *testing.T) {
	var loaded int64 // row 1's int_col as loaded
	rowdata.EachRow(1, func(r *rowdata.Row) { loaded = r.Int })
	testenv.EachEngine(t, "sqlite:"+filepath.Join(t.TempDir(), "t.db"), func(t *testing.T, dsn string) {
		if !strings.HasPrefix(dsn, "sqlite:") {
			t.Cleanup(dropNewTables(t, dsn))
		}
		r, stdout := runFull(t, "run", "mixed", "--db", dsn, "-c", "4", "--rows", "1", "--hot-rows", "1", "-T", "2s", "--isolate", "0")
		up, del := r.Summary.ByOp["update"], r.Summary.ByOp["delete"]
		if up.Requests == 0 || up.Rows != up.Requests || del.Requests == 0 {
			t.Fatalf("update %+v, delete %+v: want every update to change one row, and deletes beside them\n%s", up, del, stdout)
		}
		if r.Workload.Params["hot_rows"] != float64(1) {
			t.Errorf("params %v: want hot_rows 1", r.Workload.Params)
		}
		got := queryInts(t, dsn, "SELECT count(*), coalesce(sum(int_col), 0) FROM {ns}rows WHERE row_id = 1", 2)
		if got[0] != 1 || got[1] == loaded {
			t.Errorf("row 1: %d rows, int_col %d (loaded %d): want it kept and updated", got[0], got[1], loaded)
		}
	})
}

// TestHotRowsFlags: --hot-rows past the rows a table holds, or negative, is
// refused with the limit; with it, fewer rows than workers are enough.
func TestHotRowsFlags(t *testing.T) {
	dsn := "sqlite:" + filepath.Join(t.TempDir(), "t.db")
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--rows", "100", "--tables", "2", "--hot-rows", "51"}, 2, "--hot-rows 51 is more than the 50 rows each table holds"},
		{[]string{"--hot-rows", "-1"}, 2, "--hot-rows must be zero (off) or more, got -1"},
		{[]string{"--rows", "2", "-c", "4"}, 2, "--rows 2 is too few for 4 workers"},
		{[]string{"--rows", "2", "-c", "4", "--hot-rows", "2"}, 0, "update          "},
	} {
		args := append([]string{"run", "updates", "--db", dsn, "--ops", "200", "--no-probe", "--out", filepath.Join(t.TempDir(), "o")}, c.args...)
		code, stdout, stderr := runCLI(t, context.Background(), args...)
		if code != c.code || !strings.Contains(stdout+stderr, c.want) {
			t.Errorf("%v: exit %d, want %d and %q\n%s\n%s", c.args, code, c.code, c.want, stdout, stderr)
		}
	}
}
