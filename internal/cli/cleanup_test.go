package cli

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/ceiling-db/ceiling/internal/target"
	"github.com/ceiling-db/ceiling/internal/testenv"
	"github.com/ceiling-db/ceiling/internal/workload/rowdata"
)

// execOn runs statements on dsn through ceiling's own target (setup of
// someone else's objects).
func execOn(t *testing.T, dsn string, stmts ...string) {
	t.Helper()
	withConn(t, dsn, func(ctx context.Context, c target.Conn, _ string) {
		for _, s := range stmts {
			if _, err := c.Exec(ctx, s); err != nil {
				t.Fatalf("%s: %v", s, err)
			}
		}
	})
}

func mustCLI(t *testing.T, args ...string) string {
	t.Helper()
	code, out, errs := runCLI(t, context.Background(), args...)
	if code != 0 {
		t.Fatalf("%v: exit %d\n%s\n%s", args, code, out, errs)
	}
	return out
}

// TestCleanupSQLite: cleanup finds every rows_N table without --tables,
// keeps ceiling's other tables, and once none is left removes the file
// ceiling created; a file ceiling did not create is kept, with its own
// tables.
func TestCleanupSQLite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	db := "sqlite:" + path
	mustCLI(t, "prepare", "single-inserts", "--db", db)
	mustCLI(t, "prepare", "inserts-deletes", "--db", db, "--tables", "3", "--rows", "300")
	out := mustCLI(t, "cleanup", "inserts-deletes", "--db", db)
	for _, want := range []string{"dropped ceiling_rows_1", "dropped ceiling_rows_3", "kept ceiling's other tables: single_inserts"} {
		if !strings.Contains(out, want) {
			t.Errorf("cleanup inserts-deletes lacks %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the file went while single_inserts was left: %v", err)
	}
	out = mustCLI(t, "cleanup", "single-inserts", "--db", db)
	if !strings.Contains(out, "removed "+path) {
		t.Errorf("last cleanup: %q, want the file removed", out)
	}
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if _, err := os.Stat(path + suffix); err == nil {
			t.Errorf("%s still exists", path+suffix)
		}
	}

	// Someone's own database: ceiling's tables go, the file and theirs stay.
	own := filepath.Join(t.TempDir(), "own.db")
	writeSQLiteFile(t, own)
	mustCLI(t, "prepare", "single-inserts", "--db", "sqlite:"+own)
	out = mustCLI(t, "cleanup", "single-inserts", "--db", "sqlite:"+own)
	if !strings.Contains(out, "not created by ceiling: kept") {
		t.Errorf("cleanup of a foreign file: %q", out)
	}
	if v := queryInts(t, "sqlite:"+own, "SELECT count(*) FROM theirs", 1); v[0] != 1 {
		t.Errorf("their table holds %d rows, want 1", v[0])
	}
}

// TestMissingSQLiteFile: cleanup and check on a database file that does
// not exist say so and leave no file behind (they used to create it).
func TestMissingSQLiteFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "none.db")
	db := "sqlite:" + path
	out := mustCLI(t, "cleanup", "single-inserts", "--db", db)
	if !strings.Contains(out, "nothing to clean up") || !strings.Contains(out, "does not exist") {
		t.Errorf("cleanup of a missing file: %q", out)
	}
	code, _, errs := runCLI(t, context.Background(), "check", "tpcc", "--db", db)
	if code == 0 || !strings.Contains(errs, "does not exist") || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
		t.Errorf("check of a missing file: exit %d, stderr %q; want one line saying it does not exist", code, errs)
	}
	for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
		if _, err := os.Stat(path + suffix); err == nil {
			t.Errorf("%s was created", path+suffix)
		}
	}
}

// writeSQLiteFile makes a database file as another program would (its
// own application_id, not ceiling's), holding one table with one row.
func writeSQLiteFile(t *testing.T, path string) {
	t.Helper()
	execOn(t, "sqlite:"+path, "PRAGMA application_id = 7", "CREATE TABLE theirs (x INTEGER)", "INSERT INTO theirs VALUES (1)")
}

// TestCleanupPostgresSchema: in a database of its own, cleanup drops the
// schema "ceiling" once no ceiling table is left; with someone else's
// table in that schema it keeps the schema and their table.
func TestCleanupPostgresSchema(t *testing.T) {
	base := serverDSN(t, testenv.PostgresEnv)
	ctx := context.Background()
	const dbName = "ceiling_test_cleanup"
	admin, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	_, _ = admin.Exec(ctx, "DROP DATABASE IF EXISTS "+dbName)
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+dbName); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), base)
		if err == nil {
			_, err = c.Exec(context.Background(), "DROP DATABASE IF EXISTS "+dbName+" WITH (FORCE)")
			c.Close(context.Background())
		}
		if err != nil {
			t.Errorf("drop database %s: %v", dbName, err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + dbName
	dsn := u.String()
	schemas := func() int64 {
		return queryInts(t, dsn, "SELECT count(*) FROM pg_namespace WHERE nspname = 'ceiling'", 1)[0]
	}

	mustCLI(t, "prepare", "single-inserts", "--db", dsn)
	if schemas() != 1 {
		t.Fatal("prepare made no schema ceiling")
	}
	out := mustCLI(t, "cleanup", "single-inserts", "--db", dsn)
	if !strings.Contains(out, "dropped schema ceiling") || schemas() != 0 {
		t.Fatalf("cleanup: %q, schema left: %d", out, schemas())
	}
	// Again, with nothing there: no claim of a schema dropped.
	out = mustCLI(t, "cleanup", "single-inserts", "--db", dsn)
	if strings.Contains(out, "dropped schema") || !strings.Contains(out, "no ceiling table left, and no schema ceiling") {
		t.Fatalf("second cleanup: %q", out)
	}

	mustCLI(t, "prepare", "single-inserts", "--db", dsn)
	execOn(t, dsn, "CREATE TABLE ceiling.theirs (x int)")
	out = mustCLI(t, "cleanup", "single-inserts", "--db", dsn)
	if !strings.Contains(out, "kept ceiling's namespace") || schemas() != 1 {
		t.Fatalf("cleanup with a foreign table: %q, schemas %d", out, schemas())
	}
	if v := queryInts(t, dsn, "SELECT count(*) FROM ceiling.theirs", 1); v[0] != 0 {
		t.Fatalf("their table: %v", v)
	}
}

// TestPrepareSaysWhatRunUses: a row workload's prepare says that run loads
// its own copy (it does: the table is made again), a select workload's
// that run --reuse uses it (the command to copy has the flags --reuse
// checks and the --db), TPC-C's help that run uses the prepared
// dataset.
func TestPrepareSaysWhatRunUses(t *testing.T) {
	db := "sqlite:" + filepath.Join(t.TempDir(), "p.db")
	out := mustCLI(t, "prepare", "updates", "--db", db, "--rows", "100")
	if !strings.Contains(out, "note: `ceiling run updates --db "+db+"` loads a fresh copy of its own (run --shard I/N uses these tables); these stay until `ceiling cleanup updates --db "+db+"`") {
		t.Errorf("prepare updates: %q", out)
	}
	if _, help, _ := runCLI(t, context.Background(), "prepare", "updates", "--help"); !strings.Contains(help, "load a fresh copy of their own before measuring") {
		t.Errorf("prepare updates --help: %q", help)
	}
	if out := mustCLI(t, "prepare", "direct-selects", "--db", db, "--rows", "100"); !strings.Contains(out, "note: `ceiling run direct-selects --reuse --rows 100 --db "+db+"` uses these tables") {
		t.Errorf("prepare direct-selects: %q", out)
	}
	if _, help, _ := runCLI(t, context.Background(), "prepare", "tpcc", "--help"); !strings.Contains(help, "`ceiling run tpcc` and `ceiling knee tpcc` use this dataset as it is") {
		t.Errorf("prepare tpcc --help: %q", help)
	}
	// And run does load its own: 50 rows, not the 100 prepared.
	dir := filepath.Join(t.TempDir(), "out")
	mustCLI(t, "run", "updates", "--db", db, "--rows", "50", "--ops", "10", "--no-probe", "--out", dir)
	if n := queryInts(t, db, "SELECT count(*) FROM ceiling_rows", 1)[0]; n != 50 {
		t.Errorf("after run --rows 50: %d rows", n)
	}
}

// TestReusePrepared: a read-only workload's run --reuse uses the table
// prepare made (a row changed by hand stays changed) on SQLite, PostgreSQL
// and MariaDB; a table of another size, or a missing one, is refused
// naming the counts; without --reuse the run loads a fresh copy (the
// change is gone); prepare refuses --reuse.
func TestReusePrepared(t *testing.T) {
	for name, dsn := range everyEngine(t) {
		t.Run(name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			mustCLI(t, "prepare", "direct-selects", "--db", dsn, "--rows", "300")
			t.Cleanup(func() { runCLI(t, context.Background(), "cleanup", "direct-selects", "--db", dsn) })
			withConn(t, dsn, func(ctx context.Context, c target.Conn, prefix string) {
				if _, err := c.Exec(ctx, "UPDATE "+prefix+"rows SET int_col = -12345 WHERE row_id = 1"); err != nil {
					t.Fatal(err)
				}
			})
			marker := func() int64 {
				return queryInts(t, dsn, "SELECT count(*) FROM {ns}rows WHERE int_col = -12345", 1)[0]
			}
			o := mustCLI(t, "run", "direct-selects", "--db", dsn, "--rows", "300", "--reuse", "--ops", "200", "-c", "2", "--no-probe", "--out", out)
			if !strings.Contains(o, "reusing the prepared table: 300 rows (checked: count and highest id)") || marker() != 1 {
				t.Fatalf("run --reuse: marker rows %d, output:\n%s", marker(), o)
			}
			code, _, errs := runCLI(t, context.Background(), "run", "sequential-selects", "--db", dsn, "--rows", "400", "--reuse", "--ops", "5", "--no-probe", "--out", out)
			if code != ExitRun || !strings.Contains(errs, "rows holds 300 rows with ids up to 300, not the 400 (ids 1 to 400) of --rows 400 --tables 1") {
				t.Fatalf("--rows 400 --reuse on 300 rows: exit %d, %q", code, errs)
			}
			code, _, errs = runCLI(t, context.Background(), "run", "indirect-selects", "--db", dsn, "--rows", "300", "--tables", "3", "--reuse", "--ops", "5", "--no-probe", "--out", out)
			if code != ExitRun || !strings.Contains(errs, "--reuse: no ceiling table") {
				t.Fatalf("--tables 3 --reuse: exit %d, %q", code, errs)
			}
			if code, _, errs := runCLI(t, context.Background(), "prepare", "direct-selects", "--db", dsn, "--reuse"); code != ExitUsage || !strings.Contains(errs, "--reuse applies to run and knee") {
				t.Fatalf("prepare --reuse: exit %d, %q", code, errs)
			}
			mustCLI(t, "run", "direct-selects", "--db", dsn, "--rows", "300", "--ops", "10", "--no-probe", "--out", out)
			if marker() != 0 {
				t.Fatal("a run without --reuse kept the prepared table")
			}
		})
	}
}

// TestPrepareLoadsTheGeneratedRows: a row table loaded through the engine's
// whole-table path (PostgreSQL COPY, MySQL LOAD DATA, in chunks of 100,000
// rows) or SQLite's INSERTs holds exactly the rows the generator makes, in
// id order: count, highest id, and sums that tie each value to its id.
func TestPrepareLoadsTheGeneratedRows(t *testing.T) {
	const n = 150_001 // two chunks
	var want [5]int64
	rowdata.EachRow(n, func(r *rowdata.Row) {
		want[0]++
		want[1] = r.ID
		want[2] += r.Int
		want[3] += r.ID * r.Smallint
		want[4] += int64(len(r.Long))
	})
	for name, dsn := range everyEngine(t) {
		t.Run(name, func(t *testing.T) {
			mustCLI(t, "prepare", "direct-selects", "--db", dsn, "--rows", strconv.Itoa(n))
			t.Cleanup(func() { runCLI(t, context.Background(), "cleanup", "direct-selects", "--db", dsn) })
			got := queryInts(t, dsn, "SELECT count(*), max(row_id), sum(int_col), sum(row_id * smallint_col), sum(length(vc_long)) FROM {ns}rows", 5)
			if [5]int64(got) != want {
				t.Fatalf("count, max id, sum(int), sum(id*smallint), sum(len(long)) = %v, want %v", got, want)
			}
		})
	}
}

// TestCleanupAll: `cleanup all` drops every table ceiling made, whatever
// workload made it (several tables of one, a custom file's), and then the
// namespace (on SQLite the file ceiling created); on MariaDB a table with
// ceiling's prefix that ceiling did not make stays.
func TestCleanupAll(t *testing.T) {
	path := filepath.Join(t.TempDir(), "all.db")
	db := "sqlite:" + path
	mustCLI(t, "prepare", "single-inserts", "--db", db)
	mustCLI(t, "prepare", "direct-selects", "--db", db, "--tables", "2", "--rows", "200")
	mustCLI(t, "prepare", "custom", "--file", filepath.Join("..", "..", "examples", "custom", "orders.yaml"), "--db", db)
	out := mustCLI(t, "cleanup", "all", "--db", db)
	for _, want := range []string{"dropped ceiling_single_inserts", "dropped ceiling_rows_1", "dropped ceiling_rows_2", "dropped ceiling_u_orders", "dropped ceiling_u_customers", "removed " + path} {
		if !strings.Contains(out, want) {
			t.Errorf("cleanup all lacks %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(path); err == nil {
		t.Errorf("%s still exists", path)
	}
	if out := mustCLI(t, "cleanup", "all", "--db", db); !strings.Contains(out, "nothing to clean up") {
		t.Errorf("cleanup all of a missing file: %q", out)
	}

	dsn := testenv.Optional(t, testenv.MySQLEnv)
	if dsn == "" {
		return
	}
	mustCLI(t, "prepare", "single-inserts", "--db", dsn)
	execOn(t, dsn, "CREATE TABLE ceiling_theirs_all (x int)")
	defer execOn(t, dsn, "DROP TABLE IF EXISTS ceiling_theirs_all")
	out = mustCLI(t, "cleanup", "all", "--db", dsn)
	if !strings.Contains(out, "dropped ceiling_single_inserts") || strings.Contains(out, "ceiling_theirs_all") {
		t.Errorf("cleanup all on MariaDB: %q", out)
	}
	if v := queryInts(t, dsn, "SELECT count(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name IN ('ceiling_theirs_all', 'ceiling_single_inserts')", 1); v[0] != 1 {
		t.Errorf("%d of their table and ceiling's left, want theirs alone", v[0])
	}
}
