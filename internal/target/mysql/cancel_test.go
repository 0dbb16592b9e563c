package mysql

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ceiling-db/ceiling/internal/target"
)

// TestCancelStatement: a worker session knows its network connection (so
// the driver's per-call watcher is bypassed), and cancelling the context
// of a statement waiting for a row lock ends it with the context's error
// long before the lock wait would time out, while a statement whose
// context is not cancelled is unaffected.
func TestCancelStatement(t *testing.T) {
	ctx := testCtx(t)
	tg := openTarget(t, testDSN(t), target.DurabilityServer)
	s := tg.Schema()
	if err := s.CreateTable(ctx, "cx", "id INT PRIMARY KEY, v INT NOT NULL"); err != nil {
		t.Fatalf("CreateTable: %v", err)
	}
	t.Cleanup(func() { _ = s.DropTable(context.Background(), "cx") })
	tbl := tg.Dialect().Table("cx")
	a, b := connect(t, tg), connect(t, tg)
	for _, c := range []target.Conn{a, b} {
		if c.(*conn).nc == nil {
			t.Fatal("Connect did not record the session's network connection: calls go through the driver's watcher")
		}
	}
	if _, err := a.Exec(ctx, "INSERT INTO "+tbl+" (id, v) VALUES (?, ?)", 1, 0); err != nil {
		t.Fatal(err)
	}
	mustExec(t, b, "SET SESSION innodb_lock_wait_timeout = 30")
	if err := a.Begin(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Exec(ctx, "UPDATE "+tbl+" SET v = v + 1 WHERE id = ?", 1); err != nil {
		t.Fatal(err)
	}

	// b waits for a's row lock until its context is cancelled.
	bctx, cancel := context.WithCancel(ctx)
	time.AfterFunc(300*time.Millisecond, cancel)
	start := time.Now()
	_, err := b.Exec(bctx, "UPDATE "+tbl+" SET v = v + 10 WHERE id = ?", 1)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Exec under a cancelled context = %v, want context.Canceled", err)
	}
	if el := time.Since(start); el > 20*time.Second {
		t.Errorf("the cancelled Exec returned after %v: it waited for the lock timeout (30 s)", el)
	}
	// A context that has already ended stops a call before it starts.
	if _, err := b.Query(bctx, "SELECT 1"); !errors.Is(err, context.Canceled) {
		t.Errorf("Query under an ended context = %v, want context.Canceled", err)
	}

	// a is unaffected: its transaction commits, and b's update never ran.
	if err := a.Commit(ctx); err != nil {
		t.Fatalf("Commit: %v", err)
	}
	if v := queryString(t, a, "SELECT v FROM "+tbl+" WHERE id = ?", 1); v != "1" {
		t.Errorf("v = %s, want 1 (a's update only)", v)
	}
	// A query under a live context reads its rows and ends its watch when
	// closed; the session stays usable.
	r, err := a.Query(ctx, "SELECT id FROM "+tbl)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for r.Next() {
		n++
	}
	if err := errors.Join(r.Err(), r.Close()); err != nil || n != 1 {
		t.Errorf("query: %d rows, %v; want 1, nil", n, err)
	}
	if v := queryString(t, a, "SELECT COUNT(*) FROM "+tbl); v != "1" {
		t.Errorf("count = %s, want 1", v)
	}
}
