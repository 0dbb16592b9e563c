package runner

import (
	"context"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/ceiling-db/ceiling/internal/target"
	"github.com/ceiling-db/ceiling/internal/target/mysql"
	"github.com/ceiling-db/ceiling/internal/testenv"
)

// The multiplexed closed loop against MySQL/MariaDB: go-sql-driver reads
// and writes on the calling goroutine, so a worker's coroutine waits in
// its group's poll as on PostgreSQL.

const myMuxDB = "ceiling_runner_mux"

// myDSN returns a DSN for a fresh database on the MySQL test server
// (dropped at the end of the test), or skips the test.
func myDSN(t *testing.T) string {
	t.Helper()
	base := testenv.DSN(t, testenv.MySQLEnv)
	myAdmin(t, base, "DROP DATABASE IF EXISTS "+myMuxDB, "CREATE DATABASE "+myMuxDB)
	t.Cleanup(func() { myAdmin(t, base, "DROP DATABASE IF EXISTS "+myMuxDB) })
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("parse CEILING_TEST_MYSQL_DSN: %v", err)
	}
	u.Path = "/" + myMuxDB
	return u.String()
}

// mySession opens a session of its own on dsn, closed at the end of the
// test.
func mySession(t *testing.T, ctx context.Context, dsn string) target.Conn {
	t.Helper()
	tg, err := mysql.Open(ctx, target.Options{DSN: dsn})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tg.Close(context.Background()) })
	c, err := tg.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// myAdmin runs statements on a session of its own against dsn.
func myAdmin(t *testing.T, dsn string, stmts ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := mySession(t, ctx, dsn)
	for _, s := range stmts {
		if _, err := c.Exec(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// myCount returns the first column of query's one row, read through c.
func myCount(t *testing.T, c target.Conn, query string) int64 {
	t.Helper()
	n, err := myCountErr(c, query)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// myCountErr is myCount for goroutines other than the test's.
func myCountErr(c target.Conn, query string) (int64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, err := c.Query(ctx, query)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	var n int64
	if !r.Next() {
		return 0, fmt.Errorf("%s: no row (%v)", query, r.Err())
	}
	return n, r.Scan(&n)
}

// openMy opens the MySQL target as the CLI does for a closed loop of
// workers (default I/O mode) and creates table ceiling_mux_test.
func openMy(t *testing.T, dsn string, workers int) target.Target {
	t.Helper()
	t.Setenv("CEILING_MYSQL_IO", "")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tg, err := mysql.Open(ctx, target.Options{DSN: dsn, MaxConns: workers, Multiplexed: Multiplexes(Config{Threads: workers}, nil)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tg.Close(context.Background()) })
	if err := tg.Schema().CreateTable(ctx, "mux_test", "id bigint AUTO_INCREMENT PRIMARY KEY, at timestamp(6) DEFAULT CURRENT_TIMESTAMP(6)"); err != nil {
		t.Fatal(err)
	}
	return tg
}

// myRows counts ceiling_mux_test's rows on a session of its own.
func myRows(t *testing.T, dsn string) func() int64 {
	return func() int64 {
		return myCount(t, mySession(t, context.Background(), dsn), "SELECT count(*) FROM ceiling_mux_test")
	}
}

// TestMuxMySQL: a multiplexed run against MySQL/MariaDB completes, counts
// every request (as many rows as requests), and its workers ran in two
// groups that polled, even asked to use io_uring (CEILING_MUX_RING=1):
// MySQL sessions do not take ring I/O.
func TestMuxMySQL(t *testing.T) {
	dsn := myDSN(t)
	t.Setenv("CEILING_MUX_GROUPS", "2")
	oldOn := ringOn
	ringOn = true
	defer func() { ringOn = oldOn }()
	tg := openMy(t, dsn, 8)
	w := &tidWorkload{doSQL: "INSERT INTO ceiling_mux_test () VALUES ()"}
	res, err := Run(context.Background(), Config{Threads: 8, Ops: 4000}, tg, w)
	if err != nil {
		t.Fatal(err)
	}
	checkInsertRun(t, myRows(t, dsn), w, res, 4000)
	if res.WorkerIO != "ppoll" {
		t.Errorf("the groups waited with %q, want ppoll (MySQL sessions do not take ring I/O)", res.WorkerIO)
	}
}

// TestMuxMySQLManyWorkers: more workers than the raw limit are multiplexed
// too, and their connections never held a P each.
func TestMuxMySQLManyWorkers(t *testing.T) {
	dsn := myDSN(t)
	testManyWorkers(t, func(n int) target.Target { return openMy(t, dsn, n) },
		"INSERT INTO ceiling_mux_test () VALUES ()", myRows(t, dsn))
}

// TestMuxMySQLCancel: eight workers in two groups all wait in the server at
// once (their connections give way instead of blocking the group), and
// cancelling the run ends it at once, leaving no statement running on the
// server.
func TestMuxMySQLCancel(t *testing.T) {
	dsn := myDSN(t)
	t.Setenv("CEILING_MUX_GROUPS", "2")
	tg := openMy(t, dsn, 8)
	const sleepSQL = "SELECT SLEEP(60)"
	sleepers := "SELECT count(*) FROM information_schema.processlist WHERE db = '" + myMuxDB +
		"' AND info = '" + sleepSQL + "'"
	watch := mySession(t, context.Background(), dsn)
	testMuxCancel(t, tg, sleepSQL, func(context.Context) (int64, error) { return myCountErr(watch, sleepers) })

	// No statement of the run goes on on the server. (That KILL QUERY is
	// what ends them is engines.TestCancelStopsServerStatement's business:
	// MariaDB also ends a SLEEP within seconds once its client is gone.
	// Eight KILL QUERYs of SLEEPs at once can each take MariaDB's full 2 s
	// wait for the sleepers' shared mutex, hence the run's 30 s bound.)
	var left int64
	for i := 0; i < 50; i++ {
		if left = myCount(t, watch, sleepers); left == 0 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if left != 0 {
		t.Errorf("%d statements still running on the server after the run was cancelled", left)
	}
}

// TestMuxMySQLReconnect: when the server kills the worker sessions of a
// multiplexed run, the workers reconnect within their groups and the run
// completes its requests.
func TestMuxMySQLReconnect(t *testing.T) {
	dsn := myDSN(t)
	t.Setenv("CEILING_MUX_GROUPS", "2")
	tg := openMy(t, dsn, 8)
	killer := mySession(t, context.Background(), dsn)
	testMuxReconnect(t, tg, "INSERT INTO ceiling_mux_test () VALUES ()", func(ctx context.Context) (n int64) {
		// The worker sessions busy with an insert at this moment (tried
		// again while there is none).
		for try := 0; try < 100 && n == 0 && ctx.Err() == nil; try++ {
			r, err := killer.Query(ctx, "SELECT id FROM information_schema.processlist WHERE db = '"+myMuxDB+
				"' AND info LIKE 'INSERT INTO ceiling_mux_test%'")
			if err != nil {
				break
			}
			var ids []int64
			for r.Next() {
				var id int64
				if r.Scan(&id) == nil {
					ids = append(ids, id)
				}
			}
			_ = r.Close()
			for _, id := range ids {
				if _, err := killer.Exec(ctx, fmt.Sprintf("KILL %d", id)); err == nil {
					n++
				}
			}
		}
		return n
	}, myRows(t, dsn))
}
