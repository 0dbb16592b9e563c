package engines

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestCancelStopsServerStatement: on each server, cancelling the context
// of a statement that waits for a row lock ends the call with the
// context's error long before the lock wait would time out, and the server
// does not go on to apply the statement once the lock is free (closing
// the session alone leaves it running there).
func TestCancelStopsServerStatement(t *testing.T) {
	for engine, dsn := range bulkTargets(t) {
		if engine == "sqlite" {
			continue // one writer at a time: no row locks to wait for
		}
		t.Run(engine, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			tg, a := openWithTable(ctx, t, dsn, "cancel_test", "id INT PRIMARY KEY, v INT NOT NULL")
			b, err := tg.Connect(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			d := tg.Dialect()
			tbl, p1, p2 := d.Table("cancel_test"), d.Placeholder(1), d.Placeholder(2)
			if _, err := a.Exec(ctx, "INSERT INTO "+tbl+" (id, v) VALUES ("+p1+", "+p2+")", 1, 0); err != nil {
				t.Fatal(err)
			}
			if err := a.Begin(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := a.Exec(ctx, "UPDATE "+tbl+" SET v = v + 1 WHERE id = "+p1, 1); err != nil {
				t.Fatal(err)
			}
			// b waits for a's row lock until its context is cancelled.
			bctx, bcancel := context.WithCancel(ctx)
			time.AfterFunc(300*time.Millisecond, bcancel)
			start := time.Now()
			if _, err := b.Exec(bctx, "UPDATE "+tbl+" SET v = v + 10 WHERE id = "+p1, 1); !errors.Is(err, context.Canceled) {
				t.Fatalf("Exec under a cancelled context = %v, want context.Canceled", err)
			}
			if el := time.Since(start); el > 20*time.Second {
				t.Errorf("the cancelled Exec returned after %v: it waited for the lock timeout", el)
			}
			// The session is gone, and an ended context runs nothing.
			if _, err := b.Query(bctx, "SELECT 1"); err == nil {
				t.Error("Query under an ended context on the cancelled session succeeded")
			}
			if err := a.Commit(ctx); err != nil {
				t.Fatalf("Commit: %v", err)
			}
			time.Sleep(500 * time.Millisecond) // a statement the server kept would have run by now
			rows, err := a.Query(ctx, "SELECT v FROM "+tbl+" WHERE id = "+p1, 1)
			if err != nil {
				t.Fatal(err)
			}
			var v int64
			if !rows.Next() {
				t.Fatalf("no row (%v)", rows.Err())
			}
			if err := errors.Join(rows.Scan(&v), rows.Close()); err != nil {
				t.Fatal(err)
			}
			if v != 1 {
				t.Errorf("v = %d, want 1: the cancelled update was applied once the lock was free", v)
			}
		})
	}
}
