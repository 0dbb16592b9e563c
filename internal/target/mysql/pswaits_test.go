package mysql

import (
	"context"
	"net/url"
	"path"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-db/ceiling/internal/runner"
	"github.com/ceiling-db/ceiling/internal/target"
	"github.com/ceiling-db/ceiling/internal/testenv"
)

// psDSN returns CEILING_TEST_MYSQL_PS_DSN, a server started with
// performance_schema on (.ci/run starts a second MariaDB for it), or skips.
func psDSN(t *testing.T) string {
	t.Helper()
	return testenv.DSN(t, testenv.MySQLPSEnv)
}

// TestPerformanceSchemaWaits runs inserts on one worker session of a server
// with performance_schema on and checks that the wait categories of that
// session account for its time between two samples (one taken after the
// session closed: its last reading must not be lost with its thread).
func TestPerformanceSchemaWaits(t *testing.T) {
	dsn := psDSN(t)
	tg := openTarget(t, dsn, target.DurabilityFull)
	info := tg.Info()
	if !psOn(info.Settings) {
		t.Fatalf("performance_schema is %q on %s", info.Settings["performance_schema"], info.DSN)
	}
	ctx := testCtx(t)
	if err := tg.Schema().CreateTable(ctx, "ps_waits", "id INT AUTO_INCREMENT PRIMARY KEY, v INT NOT NULL"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tg.Schema().DropTable(context.Background(), "ps_waits") })
	s := tg.(target.Sampler)
	c, err := tg.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	before, err := s.Sample(ctx)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for i := 0; i < 300; i++ {
		if _, err := c.Exec(ctx, "INSERT INTO ceiling_ps_waits (v) VALUES (?)", i); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	wall := float64(time.Since(start).Milliseconds())
	after, err := s.Sample(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, k := range []string{target.CtrWaitClientMs, target.CtrWaitDataReadMs, target.CtrWaitLockMs, target.CtrWaitOtherMs, target.CtrWaitCPUMs, target.CtrWaitLogMs} {
		if v, ok := after.Counters[k]; ok {
			sum += v - before.Counters[k]
		}
	}
	// Every category's time is the session's own, so together they cannot
	// exceed its lifetime and must cover most of it.
	if sum < 0.3*wall || sum > 1.1*wall+50 {
		t.Errorf("wait categories sum to %.1f ms over a session busy for %.1f ms", sum, wall)
	}
	if d := after.Counters[target.CtrWaitOtherMs] + after.Counters[target.CtrWaitCPUMs] - before.Counters[target.CtrWaitOtherMs] - before.Counters[target.CtrWaitCPUMs]; d <= 0 {
		t.Errorf("no statement time attributed (other/cpu delta %.2f ms)", d)
	}
	if _, ok := after.Counters[target.CtrWaitLogMs]; !ok && info.Settings["missing_evidence"] == "" {
		t.Error("log-IO waits absent but Info does not say so")
	}
}

// TestDirectByName: a server that resolves its clients' names (the one
// .ci/run starts with --no-defaults does) shows the admin session as
// "localhost:port", which still names the session's own socket.
func TestDirectByName(t *testing.T) {
	tg := openTarget(t, psDSN(t), target.DurabilityServer).(*myTarget)
	var seen string
	if err := tg.admin.QueryRowContext(context.Background(), "SELECT HOST FROM information_schema.PROCESSLIST WHERE ID = CONNECTION_ID()").Scan(&seen); err != nil {
		t.Fatal(err)
	}
	if !tg.direct(context.Background()) {
		t.Errorf("the process list shows the admin session as %q: not taken for its own socket (%v)", seen, tg.adminNC.LocalAddr())
	}
	t.Logf("the server shows the admin session as %q", seen)
}

// TestPerFileIO: with performance_schema timing InnoDB's files, each
// sample holds the files of ceiling's tables and InnoDB's shared ones (not
// other tables'), their syncs and write times marked as not measured;
// flushing a table's pages shows as writes of its file. A server without
// performance_schema says per-file IO is missing.
func TestPerFileIO(t *testing.T) {
	tg := openTarget(t, psDSN(t), target.DurabilityServer)
	ctx := testCtx(t)
	if err := tg.Schema().CreateTable(ctx, "ps_files", "id INT PRIMARY KEY, v VARCHAR(200) NOT NULL"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tg.Schema().DropTable(context.Background(), "ps_files") })
	s := tg.(target.Sampler)
	c, err := tg.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	before, err := s.Sample(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2000; i++ {
		if _, err := c.Exec(ctx, "INSERT INTO ceiling_ps_files (id, v) VALUES (?, REPEAT('x', 180))", i); err != nil {
			t.Fatal(err)
		}
	}
	// Writes the table's dirty pages to its file now (InnoDB's page
	// cleaner would, some time later).
	if _, err := c.Exec(ctx, "FLUSH TABLES ceiling_ps_files FOR EXPORT"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, "UNLOCK TABLES"); err != nil {
		t.Fatal(err)
	}
	after, err := s.Sample(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var own *target.FileStat
	shared := false
	for i, f := range after.Files {
		switch {
		case strings.HasSuffix(f.Name, "/ceiling_ps_files.ibd"):
			own = &after.Files[i]
		case f.Name == "ibdata1":
			shared = true
		case !strings.Contains(path.Base(f.Name), "ceiling_") && strings.Contains(f.Name, "/") && !strings.HasPrefix(f.Name, "#"):
			t.Errorf("another table's file reported: %+v", f)
		}
		if !f.NoSyncs || (f.Role != "log") != f.NoWriteTime {
			t.Errorf("%s: syncs and write times not marked as not measured: %+v", f.Name, f)
		}
	}
	if own == nil || !shared {
		t.Fatalf("files %+v: want test's ceiling_ps_files.ibd and ibdata1", after.Files)
	}
	e := runner.Delta(&before, &after)
	i := slices.IndexFunc(e.Files, func(f target.FileStat) bool { return f.Name == own.Name })
	if i < 0 || e.Files[i].Role != "data" || e.Files[i].Writes <= 0 || e.Files[i].BytesWritten < 16<<10 {
		t.Errorf("%s after 2,000 inserts and a flush: %+v, want data writes of at least a 16 KB page", own.Name, e.Files)
	} else {
		t.Logf("%s: %d writes, %d bytes", own.Name, e.Files[i].Writes, e.Files[i].BytesWritten)
	}
	// Without performance_schema: missing, said so.
	plain := openTarget(t, testDSN(t), target.DurabilityServer)
	if psOn(plain.Info().Settings) {
		t.Skip("the plain server has performance_schema on")
	}
	if m := plain.Info().Settings["missing_evidence"]; !strings.Contains(m, "per-file IO (performance_schema is off)") {
		t.Errorf("without performance_schema: missing_evidence %q", m)
	}
}

// TestPSFileNames: the files reported are ceiling's tables' in the DSN's
// database and InnoDB's shared ones, named from the datadir; other
// tables', also outside the datadir, are left out.
func TestPSFileNames(t *testing.T) {
	p := &psFiles{datadir: "/var/lib/mysql/", db: "test"}
	for file, want := range map[string]string{
		"/var/lib/mysql/ibdata1":                      "ibdata1",
		"/var/lib/mysql/undo001":                      "undo001",
		"/var/lib/mysql/#innodb_redo/#ib_redo5":       "#innodb_redo/#ib_redo5",
		"/var/lib/mysql/test/ceiling_rows.ibd":        "test/ceiling_rows.ibd",
		"./test/ceiling_orders.ibd":                   "test/ceiling_orders.ibd",
		"/srv/undo/undo002":                           "undo002",
		"/var/lib/mysql/test/orders.ibd":              "",
		"/var/lib/mysql/other/ceiling_rows.ibd":       "",
		"/var/lib/mysql/mysql/innodb_index_stats.ibd": "",
		"/data2/test/ceiling_big.ibd":                 "",
	} {
		name, ok := p.name(file)
		if ok != (want != "") || ok && name != want {
			t.Errorf("%s: %q %v, want %q", file, name, ok, want)
		}
	}
}

// TestPerformanceSchemaDenied: a user who may not read performance_schema
// (nor InnoDB's lock waits: no PROCESS privilege) still runs on a server
// that has it on; the evidence says what it lacks and why.
func TestPerformanceSchemaDenied(t *testing.T) {
	dsn := psDSN(t)
	db, err := rawDB(dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() }) // after the user is dropped (cleanups run last first)
	u, _ := url.Parse(dsn)
	dbName := strings.TrimPrefix(u.Path, "/")
	const acct = "'ceiling_t_nops'@'%'"
	for _, q := range []string{"DROP USER IF EXISTS " + acct, "CREATE USER " + acct + " IDENTIFIED BY '" + testPassword + "'",
		"GRANT ALL ON `" + dbName + "`.* TO " + acct} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", strings.ReplaceAll(q, testPassword, "xxxxx"), err)
		}
	}
	t.Cleanup(func() { _, _ = db.Exec("DROP USER IF EXISTS " + acct) })
	u.User = url.UserPassword("ceiling_t_nops", testPassword)
	tg := openTarget(t, u.String(), target.DurabilityServer)
	info := tg.Info()
	if !psOn(info.Settings) {
		t.Fatalf("performance_schema is %q on %s", info.Settings["performance_schema"], info.DSN)
	}
	m := info.Settings["missing_evidence"]
	for _, want := range []string{"wait categories and per-file IO (performance_schema is on, but this user may not read it",
		"the tables of row-lock waits (information_schema.INNODB_LOCK_WAITS needs the PROCESS privilege)"} {
		if !strings.Contains(m, want) {
			t.Errorf("missing_evidence %q: want %q", m, want)
		}
	}
	if strings.Contains(m, "performance_schema is off") {
		t.Errorf("missing_evidence %q says performance_schema is off", m)
	}
	s, err := tg.(target.Sampler).Sample(testCtx(t))
	if err != nil {
		t.Fatalf("Sample: %v", err)
	}
	if _, ok := s.Counters[target.CtrLogBytes]; !ok {
		t.Errorf("no %s from SHOW GLOBAL STATUS: %v", target.CtrLogBytes, s.Counters)
	}
	if _, ok := s.Counters[target.CtrWaitClientMs]; ok {
		t.Errorf("wait categories sampled by a user who may not read them")
	}
}
