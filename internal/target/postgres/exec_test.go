package postgres

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ceiling-db/ceiling/internal/target"
)

// TestExecHotPathAllocs: a worker's prepared Exec of a parameterised
// statement (the request of the row workloads) allocates at most once (the
// command tag, inside pgconn) once the statement is prepared, on both the raw
// blocking and the netpoller connections, with a cancellable context as the
// runner passes.
func TestExecHotPathAllocs(t *testing.T) {
	dsn := testDB(t, "ceiling_test_pg")
	for _, tc := range []struct {
		name    string
		workers int
		io      string
	}{{"raw", 1, "raw"}, {"netpoll", 64, "netpoll"}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("CEILING_PG_IO", tc.io)
			tg, err := Open(testCtx(t), target.Options{DSN: dsn, Durability: target.DurabilityServer, MaxConns: tc.workers})
			if err != nil {
				t.Fatal(err)
			}
			defer tg.Close(context.Background())
			ctx, cancel := context.WithCancel(testCtx(t))
			defer cancel()
			if err := tg.Schema().CreateTable(ctx, "allocs", "id bigint PRIMARY KEY, v text NOT NULL, t timestamp NOT NULL"); err != nil {
				t.Fatal(err)
			}
			c, err := tg.Connect(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := c.Exec(ctx, "INSERT INTO "+tg.Dialect().Table("allocs")+" VALUES (1, 'x', now())"); err != nil {
				t.Fatal(err)
			}
			sql := "UPDATE " + tg.Dialect().Table("allocs") + " SET v = $2, t = $3 WHERE id = $1"
			args := []any{int64(1), "some text", time.Now()} // boxed once
			exec := func() {
				n, err := c.Exec(ctx, sql, args...)
				if err != nil || n != 1 {
					t.Fatalf("exec: %d rows, %v", n, err)
				}
			}
			exec() // prepares
			if a := testing.AllocsPerRun(200, exec); a > 1 {
				t.Errorf("%.1f allocations per Exec, want at most 1", a)
			}
		})
	}
}

// TestExecCancelInterrupts: cancelling the context of a running Exec (the
// runner's stop after its grace period) interrupts the statement instead of
// waiting for the server, on the raw blocking connection, and the error says
// the context was cancelled.
func TestExecCancelInterrupts(t *testing.T) {
	dsn := testDB(t, "ceiling_test_pg")
	t.Setenv("CEILING_PG_IO", "raw")
	tg, err := Open(testCtx(t), target.Options{DSN: dsn, Durability: target.DurabilityServer, MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close(context.Background())
	c, err := tg.Connect(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithCancel(testCtx(t))
	if _, err := c.Exec(ctx, "SELECT 1"); err != nil { // watched from here on
		t.Fatal(err)
	}
	time.AfterFunc(200*time.Millisecond, cancel)
	start := time.Now()
	_, err = c.Exec(ctx, "SELECT pg_sleep(30)")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Exec after cancel: %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Fatalf("Exec returned %v after the cancel, want well before the 30 s sleep ends", d)
	}
	if _, err := c.Exec(ctx, "SELECT 1"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Exec with a cancelled context: %v, want context.Canceled", err)
	}
}
