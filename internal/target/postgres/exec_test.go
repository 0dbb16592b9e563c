package postgres

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ceiling-db/ceiling/internal/metrics"
	"github.com/ceiling-db/ceiling/internal/target"
)

// TestExecHotPathAllocs: a worker's prepared Exec of a parameterised
// statement (the request of the row workloads) does not allocate once the
// statement is prepared (straight on the socket; through pgproto3's
// Frontend, at most once: the command tag, inside pgconn), on both the raw
// blocking and the netpoller connections, with a cancellable context as the
// runner passes.
func TestExecHotPathAllocs(t *testing.T) {
	dsn := testDB(t, "ceiling_test_pg")
	for _, tc := range []struct {
		name    string
		workers int
		io      string
		wire    bool
	}{{"raw", 1, "raw", true}, {"netpoll", 64, "netpoll", true}, {"raw-pgproto3", 1, "raw", false}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("CEILING_PG_IO", tc.io)
			defer func(old bool) { wireOff = old }(wireOff)
			wireOff = !tc.wire
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
			if got := c.(*conn).sess != nil; got != tc.wire {
				t.Fatalf("session runs Exec straight on the socket: %v, want %v", got, tc.wire)
			}
			want := 1.0
			if tc.wire {
				want = 0
			}
			if a := testing.AllocsPerRun(200, exec); a > want {
				t.Errorf("%.1f allocations per Exec, want at most %.0f", a, want)
			}
			// A raw session holds its P while it waits (target.PHolder),
			// a netpoll one does not; asking allocates nothing (the open
			// loop asks before each request).
			h := c.(target.PHolder)
			if got := h.HoldsP(); got != (tc.io == "raw") {
				t.Errorf("HoldsP %v with CEILING_PG_IO=%s", got, tc.io)
			}
			if a := testing.AllocsPerRun(200, func() { h.HoldsP() }); a > 0 {
				t.Errorf("%.1f allocations per HoldsP", a)
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

func TestTagRows(t *testing.T) {
	for tag, want := range map[string]int64{"INSERT 0 1": 1, "DELETE 3": 3, "UPDATE 10": 10, "SELECT 250": 250, "BEGIN": 0, "CREATE TABLE": 0, "": 0, "X9": 0} {
		if got := tagRows([]byte(tag)); got != want {
			t.Errorf("tagRows(%q) = %d, want %d", tag, got, want)
		}
	}
}

// TestExecErrorsKeepSession: Exec's own protocol paths (Bind, Execute,
// Sync; straight on the socket, and through pgproto3's Frontend) return the server's error with its SQLSTATE and leaves the session
// usable; inside a transaction, the statements see each other and a
// rollback undoes them; a terminated session is reported as such.
func TestExecErrorsKeepSession(t *testing.T) {
	for _, path := range []string{"wire", "pgproto3"} {
		t.Run(path, func(t *testing.T) {
			defer func(old bool) { wireOff = old }(wireOff)
			wireOff = path == "pgproto3"
			testExecErrorsKeepSession(t)
		})
	}
}

func testExecErrorsKeepSession(t *testing.T) {
	dsn := testDB(t, "ceiling_test_pg")
	tg := openTarget(t, dsn, target.DurabilityServer)
	ctx := testCtx(t)
	if err := tg.Schema().CreateTable(ctx, "execerr", "id bigint PRIMARY KEY"); err != nil {
		t.Fatal(err)
	}
	defer tg.Schema().DropTable(context.Background(), "execerr")
	c := connect(t, tg)
	ins := "INSERT INTO " + tg.Dialect().Table("execerr") + " VALUES ($1)"
	if n, err := c.Exec(ctx, ins, int64(1)); err != nil || n != 1 {
		t.Fatalf("insert: %d, %v", n, err)
	}
	_, err := c.Exec(ctx, ins, int64(1))
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "23505" || tg.Classify(err) != metrics.ErrConstraint {
		t.Fatalf("duplicate insert: %v, want SQLSTATE 23505 classified as constraint", err)
	}
	if n, err := c.Exec(ctx, ins, int64(2)); err != nil || n != 1 {
		t.Fatalf("insert after the error: %d, %v", n, err)
	}
	if err := c.Begin(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := c.Exec(ctx, ins, int64(3)); err != nil || n != 1 {
		t.Fatalf("insert in a transaction: %d, %v", n, err)
	}
	if n, err := c.Exec(ctx, "DELETE FROM "+tg.Dialect().Table("execerr")+" WHERE id >= $1", int64(2)); err != nil || n != 2 {
		t.Fatalf("delete in the transaction: %d rows, %v; want 2", n, err)
	}
	if err := c.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if got := queryString(t, c, "SELECT count(*)::text FROM "+tg.Dialect().Table("execerr")); got != "2" {
		t.Fatalf("after the rollback: %s rows, want 2", got)
	}

	// The server ends the session: FATAL 57P01, a lost connection.
	var pid int64
	if err := c.(*conn).c.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatal(err)
	}
	admin := connect(t, tg)
	if _, err := admin.Exec(ctx, "SELECT pg_terminate_backend($1::int)", pid); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	_, err = c.Exec(ctx, ins, int64(4))
	if tg.Classify(err) != metrics.ErrConnLost {
		t.Fatalf("insert on a terminated session: %v (class %v), want a lost connection", err, tg.Classify(err))
	}
	if _, err := c.Exec(ctx, ins, int64(5)); tg.Classify(err) != metrics.ErrConnLost {
		t.Fatalf("second insert on the terminated session: %v, want a lost connection", err)
	}
}
