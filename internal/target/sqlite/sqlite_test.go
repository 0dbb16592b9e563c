package sqlite

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-db/ceiling/internal/metrics"
	"github.com/ceiling-db/ceiling/internal/target"
	"github.com/ceiling-db/ceiling/internal/testenv"
)

func TestParseDSN(t *testing.T) {
	tests := []struct {
		dsn, want string
		ok        bool
	}{
		{"sqlite:ceiling.db", "ceiling.db", true},
		{"sqlite:/tmp/x.db", "/tmp/x.db", true},
		{"sqlite:///tmp/x.db", "/tmp/x.db", true},
		{"sqlite://rel/x.db", "rel/x.db", true},
		{"sqlite:", "", false},
		{"sqlite:x.db?mode=ro", "", false},
		{"postgres://h/db", "", false},
		{"sqlite::memory:", "", false}, // would be a file named ":memory:"
		{"sqlite:file:x.db", "", false},
		{"sqlite:/dev/shm/x.db", "/dev/shm/x.db", true},
	}
	for _, tc := range tests {
		t.Run(tc.dsn, func(t *testing.T) {
			got, err := ParseDSN(tc.dsn)
			if (err == nil) != tc.ok || got != tc.want {
				t.Fatalf("ParseDSN(%q) = %q, %v; want %q, ok=%v", tc.dsn, got, err, tc.want, tc.ok)
			}
		})
	}
}

// TestCloseRemovesEmptyFile: a file Open made and left holding nothing of
// ceiling's (a command that failed before creating a table) is removed on
// Close; one with a table stays, and so does an empty file that existed
// before (someone else's).
func TestCloseRemovesEmptyFile(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "t.db")
	openClose := func(create bool) {
		t.Helper()
		tg, err := Open(ctx, target.Options{DSN: "sqlite:" + path, Durability: target.DurabilityServer})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tg.Schema().Tables(ctx); err != nil { // makes the table of tables
			t.Fatal(err)
		}
		if create {
			if err := tg.Schema().CreateTable(ctx, "kept", "id INTEGER PRIMARY KEY"); err != nil {
				t.Fatal(err)
			}
		}
		if err := tg.Close(ctx); err != nil {
			t.Fatal(err)
		}
	}
	openClose(false)
	if m, _ := filepath.Glob(path + "*"); len(m) != 0 {
		t.Fatalf("an empty file ceiling made stayed: %v", m)
	}
	openClose(true)
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("a file with a table went: %v", err)
	}
	other := filepath.Join(dir, "other.db")
	if err := os.WriteFile(other, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	path = other
	openClose(false)
	if _, err := os.Stat(other); err != nil {
		t.Fatalf("an empty file that was there before went: %v", err)
	}
}

func open(t *testing.T, d target.Durability) *Target {
	t.Helper()
	tg, err := Open(context.Background(), target.Options{DSN: "sqlite:" + filepath.Join(t.TempDir(), "t.db"), Durability: d})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close(context.Background()) })
	return tg
}

func TestDurabilityApplied(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		d    target.Durability
		want int64
	}{{target.DurabilityFull, 2}, {target.DurabilityRelaxed, 1}} {
		tg := open(t, tc.d)
		c, err := tg.Connect(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var v int64
		if err := c.(*conn).queryRow(ctx, "PRAGMA synchronous", &v); err != nil {
			t.Fatal(err)
		}
		c.Close()
		if v != tc.want {
			t.Fatalf("%s: synchronous = %d, want %d", tc.d, v, tc.want)
		}
		if tg.Info().Durability.Setting != "synchronous" || tg.Info().Durability.During == "" {
			t.Fatalf("durability info: %+v", tg.Info().Durability)
		}
	}
}

func TestClassifyRealErrors(t *testing.T) {
	ctx := context.Background()
	tg := open(t, target.DurabilityServer)
	if err := tg.Schema().CreateTable(ctx, "k", "id INTEGER PRIMARY KEY"); err != nil {
		t.Fatal(err)
	}
	c1, err := tg.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c1.Close()
	if _, err := c1.Exec(ctx, "INSERT INTO ceiling_k VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	_, err = c1.Exec(ctx, "INSERT INTO ceiling_k VALUES (1)")
	if got := tg.Classify(err); got != metrics.ErrConstraint {
		t.Fatalf("duplicate key: class %v (%v), want constraint", got, err)
	}

	// A writer holding the lock past another's busy timeout gives BUSY.
	c2, err := tg.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if err := c2.(*conn).c.BusyTimeout(50 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if err := c1.Begin(ctx); err != nil {
		t.Fatal(err)
	}
	_, err = c2.Exec(ctx, "INSERT INTO ceiling_k VALUES (2)")
	if got := tg.Classify(err); got != metrics.ErrLockTimeout {
		t.Fatalf("locked database: class %v (%v), want lock_timeout", got, err)
	}
	if err := c1.Rollback(ctx); err != nil {
		t.Fatal(err)
	}

	_, err = c1.Exec(ctx, "SELECT * FROM no_such_table")
	if got := tg.Classify(err); got != metrics.ErrOther {
		t.Fatalf("missing table: class %v, want other", got)
	}
	if got := tg.Classify(context.DeadlineExceeded); got != metrics.ErrTimeout {
		t.Fatalf("deadline: class %v, want statement_timeout", got)
	}
}

func TestNamespaceRefusesForeignTable(t *testing.T) {
	ctx := context.Background()
	tg := open(t, target.DurabilityServer)
	c, err := tg.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Someone else's table that happens to carry our prefix.
	if _, err := c.Exec(ctx, "CREATE TABLE ceiling_rows (x INTEGER)"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, "INSERT INTO ceiling_rows VALUES (42)"); err != nil {
		t.Fatal(err)
	}
	c.Close()
	err = tg.Schema().CreateTable(ctx, "rows", "row_id INTEGER PRIMARY KEY")
	if !errors.Is(err, target.ErrForeignObject) {
		t.Fatalf("CreateTable over a foreign table: got %v, want ErrForeignObject", err)
	}
	if err := tg.Schema().DropTable(ctx, "rows"); !errors.Is(err, target.ErrForeignObject) {
		t.Fatalf("DropTable of a foreign table: got %v, want ErrForeignObject", err)
	}
	// The foreign table is untouched.
	c, _ = tg.Connect(ctx)
	defer c.Close()
	var v int64
	if err := c.(*conn).queryRow(ctx, "SELECT x FROM ceiling_rows", &v); err != nil || v != 42 {
		t.Fatalf("foreign table changed: %v %d", err, v)
	}
	// Our own tables are created, listed and dropped.
	if err := tg.Schema().CreateTable(ctx, "mine", "id INTEGER"); err != nil {
		t.Fatal(err)
	}
	tabs, err := tg.Schema().Tables(ctx)
	if err != nil || strings.Join(tabs, ",") != "mine" {
		t.Fatalf("Tables = %v, %v; want [mine]", tabs, err)
	}
}

func TestSampleCountsWAL(t *testing.T) {
	ctx := context.Background()
	tg := open(t, target.DurabilityFull)
	if err := tg.Schema().CreateTable(ctx, "k", "id INTEGER PRIMARY KEY"); err != nil {
		t.Fatal(err)
	}
	c, err := tg.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	before, _ := tg.Sample(ctx)
	for i := 0; i < 50; i++ {
		if _, err := c.Exec(ctx, "INSERT INTO ceiling_k (id) VALUES (?)", int64(i)); err != nil {
			t.Fatal(err)
		}
	}
	after, _ := tg.Sample(ctx)
	syncs := after.Counters[target.CtrLogSyncs] - before.Counters[target.CtrLogSyncs]
	if syncs < 45 || syncs > 55 {
		t.Fatalf("WAL syncs for 50 commits at FULL: %v", syncs)
	}
	if after.Counters[target.CtrLogBytes] <= before.Counters[target.CtrLogBytes] {
		t.Fatal("log bytes did not grow")
	}
	if _, ok := after.Counters[target.CtrCommits]; ok {
		t.Fatal("SQLite has no commit counter: it must be absent, not made up")
	}
}

// TestBusyWaitCountsAsLockWait holds the write lock on one connection
// while another waits for it, in BEGIN IMMEDIATE and in an autocommit
// insert: both waits show in the sample's wait_lock_ms (neither can end
// before the first connection commits).
func TestBusyWaitCountsAsLockWait(t *testing.T) {
	ctx := context.Background()
	tg := open(t, target.DurabilityServer)
	if err := tg.Schema().CreateTable(ctx, "busy", "x INTEGER"); err != nil {
		t.Fatal(err)
	}
	a, err := tg.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := tg.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	const hold = 150 * time.Millisecond
	for _, tc := range []struct {
		name string
		do   func() error
	}{
		{"begin", func() error {
			if err := b.Begin(ctx); err != nil {
				return err
			}
			return b.Commit(ctx)
		}},
		{"autocommit insert", func() error {
			_, err := b.Exec(ctx, "INSERT INTO ceiling_busy VALUES (1)")
			return err
		}},
	} {
		before, err := tg.Sample(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Begin(ctx); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- tc.do() }()
		time.Sleep(hold)
		if err := a.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		after, err := tg.Sample(ctx)
		if err != nil {
			t.Fatal(err)
		}
		waited := after.Counters[target.CtrWaitLockMs] - before.Counters[target.CtrWaitLockMs]
		busy := after.Counters["sqlite.busy_wait_ms"] - before.Counters["sqlite.busy_wait_ms"]
		// b's wait started before the sleep (its goroutine is given 50 ms
		// to start) and ended after a's commit, less the last retry's
		// sleep (at most ~2 ms).
		min := float64((hold - 50*time.Millisecond).Milliseconds())
		if busy < min || waited < busy-0.01 {
			t.Errorf("%s: busy wait %.1f ms, lock wait %.1f ms; want at least %.0f ms in both", tc.name, busy, waited, min)
		}
	}
}

// TestLockNamespace: two ceilings on one database file exclude each other
// (the error names the holding process), one on another file does not.
func TestLockNamespace(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no flock on Windows: SQLite files are not locked there (lock_other.go)")
	}
	dsn := "sqlite:" + filepath.Join(t.TempDir(), "t.db")
	openOne := func() target.Target {
		tg, err := Open(context.Background(), target.Options{DSN: dsn})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { tg.Close(context.Background()) })
		return tg
	}
	testenv.CheckNamespaceLock(t, openOne, "(process "+strconv.Itoa(os.Getpid())+" on this host)")
	other := open(t, target.DurabilityServer)
	if err := other.LockNamespace(context.Background()); err != nil {
		t.Fatalf("another file while this one is held: %v", err)
	}
	// The lock file lives while the lock is held, and goes with it.
	lf := lockPath(other.Path())
	if _, err := os.Stat(lf); err != nil {
		t.Fatalf("lock file while held: %v", err)
	}
	other.Close(context.Background())
	if _, err := os.Stat(lf); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("lock file after Close: %v, want it removed", err)
	}
}
