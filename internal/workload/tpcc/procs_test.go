package tpcc

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-db/ceiling/internal/runner"
	"github.com/ceiling-db/ceiling/internal/target"
	"github.com/ceiling-db/ceiling/internal/target/engines"
	"github.com/ceiling-db/ceiling/internal/testenv"
)

func TestProceduresSupported(t *testing.T) {
	for _, e := range []string{"postgres", "mysql"} {
		if err := ProceduresSupported(e); err != nil {
			t.Errorf("%s: %v", e, err)
		}
	}
	for _, e := range []string{"sqlite", "sqlserver"} {
		if err := ProceduresSupported(e); err == nil || !strings.Contains(err.Error(), "--procedures") {
			t.Errorf("%s: err = %v, want a refusal naming --procedures", e, err)
		}
	}
}

// TestProceduresMatchClient: the server-side transactions (--procedures)
// do what the client-side ones do, on PostgreSQL and MySQL/MariaDB. One
// worker runs the same 400 transactions (same seed) client-side on one
// copy of a 2-warehouse dataset (remote stock and customers too) and
// through the routines on an identical copy: each operation's count and
// rows, the New-Order rollbacks, the empty deliveries and the data (every
// column but the transactions' timestamps) must come out the same, and the
// consistency conditions hold. Cleanup then drops the MySQL procedures.
func TestProceduresMatchClient(t *testing.T) {
	if testing.Short() {
		t.Skip("loads two warehouses per engine")
	}
	for _, eng := range []struct{ name, env string }{{"postgres", testenv.PostgresEnv}, {"mysql", testenv.MySQLEnv}} {
		t.Run(eng.name, func(t *testing.T) { proceduresMatchClient(t, eng.name, testenv.DSN(t, eng.env)) })
	}
}

func proceduresMatchClient(t *testing.T, engine, base string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	const dbA, dbB = "ceiling_test_tpcc_procs_a", "ceiling_test_tpcc_procs_b"
	dsnOf := func(db string) string {
		u, err := url.Parse(base)
		if err != nil {
			t.Fatal(err)
		}
		u.Path = "/" + db
		return u.String()
	}
	open := func(dsn string) target.Target {
		tg, err := engines.Open(ctx, target.Options{DSN: dsn, MaxConns: 2})
		if err != nil {
			t.Fatal(err)
		}
		return tg
	}
	// admin runs statements on the server's base database.
	adminTg := open(base)
	t.Cleanup(func() { adminTg.Close(context.Background()) })
	admin := func(ctx context.Context, stmts ...string) error {
		c, err := adminTg.Connect(ctx)
		if err != nil {
			return err
		}
		defer c.Close()
		for _, s := range stmts {
			if _, err := c.Exec(ctx, s); err != nil {
				return fmt.Errorf("%s: %w", s, err)
			}
		}
		return nil
	}
	force := ""
	if engine == "postgres" {
		force = " WITH (FORCE)"
	}
	drop := func() {
		if err := admin(context.Background(), "DROP DATABASE IF EXISTS "+dbA+force, "DROP DATABASE IF EXISTS "+dbB+force); err != nil {
			t.Error(err)
		}
	}
	drop()
	t.Cleanup(drop)
	if err := admin(ctx, "CREATE DATABASE "+dbA); err != nil {
		t.Fatal(err)
	}
	tg := open(dsnOf(dbA))
	if err := newTestWorkload(t, "--warehouses", "2", "--load-threads", "2").Prepare(ctx, tg, nil); err != nil {
		t.Fatalf("prepare: %v", err)
	}
	if err := tg.Close(ctx); err != nil {
		t.Fatal(err)
	}
	// The copy: a template database on PostgreSQL, table by table on MySQL.
	clone := []string{"CREATE DATABASE " + dbB + " TEMPLATE " + dbA}
	if engine == "mysql" {
		clone = []string{"CREATE DATABASE " + dbB}
		for _, name := range (&Workload{}).Tables() {
			tb := "ceiling_" + name
			clone = append(clone, "CREATE TABLE "+dbB+"."+tb+" LIKE "+dbA+"."+tb, "INSERT INTO "+dbB+"."+tb+" SELECT * FROM "+dbA+"."+tb,
				"ANALYZE TABLE "+dbB+"."+tb) // as the loader does: without statistics the checks' plans take 20 times longer
		}
	}
	if err := admin(ctx, clone...); err != nil {
		t.Fatal(err)
	}

	type outcome struct {
		ops                   map[string][2]int64 // requests, rows
		rollbacks, emptyDeliv int64
		digest                string
	}
	run := func(db string, args ...string) outcome {
		tg := open(dsnOf(db))
		defer tg.Close(context.Background())
		w := newTestWorkload(t, append([]string{"--seed", "7"}, args...)...)
		if err := w.Attach(ctx, tg, nil); err != nil {
			t.Fatal(err)
		}
		res, err := runner.Run(ctx, runner.Config{Threads: 1, Ops: 400}, tg, w)
		if err != nil {
			t.Fatal(err)
		}
		o := outcome{ops: map[string][2]int64{}, rollbacks: w.run.stats.noRollbacks.Load(), emptyDeliv: w.run.stats.emptyDelivery.Load()}
		for _, op := range res.Total.Ops {
			o.ops[op.Name] = [2]int64{op.Requests, op.Rows}
			if n := op.ErrorCount(); n > 0 {
				t.Errorf("%s %v: %d errors", db, args, n)
			}
		}
		for _, r := range mustCheck(t, ctx, tg) {
			if !r.Pass() {
				t.Errorf("%s %v: %s fails: %v", db, args, r.Clause, r.Failures)
			}
		}
		c, err := tg.Connect(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		digest := pgDigest
		if engine == "mysql" {
			digest = mysqlDigest
			if _, err := c.Exec(ctx, "SET SESSION group_concat_max_len = 1073741824"); err != nil {
				t.Fatal(err)
			}
		}
		if ok, err := target.QueryRow(ctx, c, digest, []any{&o.digest}); err != nil || !ok {
			t.Fatalf("digest: %v", err)
		}
		return o
	}
	client, server := run(dbA), run(dbB, "--procedures")
	t.Logf("client: %+v", client)
	for name, c := range client.ops {
		if s := server.ops[name]; s != c {
			t.Errorf("%s: server-side %d requests, %d rows; client-side %d, %d", name, s[0], s[1], c[0], c[1])
		}
		if c[0] == 0 {
			t.Errorf("%s never ran: the comparison proves nothing for it", name)
		}
	}
	if client.rollbacks != server.rollbacks || client.rollbacks == 0 {
		t.Errorf("New-Order rollbacks: server-side %d, client-side %d (want equal, and some)", server.rollbacks, client.rollbacks)
	}
	if strings.HasSuffix(client.digest, "/0") { // the sum of s_remote_cnt
		t.Errorf("no remote order line: the comparison does not cover them (digest %s)", client.digest)
	}
	if client.emptyDeliv != server.emptyDeliv {
		t.Errorf("empty deliveries: server-side %d, client-side %d", server.emptyDeliv, client.emptyDeliv)
	}
	if client.digest != server.digest {
		t.Errorf("the data differ after the same transactions:\nclient-side %s\nserver-side %s", client.digest, server.digest)
	}

	// cleanup drops the procedures a MySQL run made, and leaves a routine
	// of the same name that is not ceiling's.
	tg = open(dsnOf(dbB))
	defer tg.Close(context.Background())
	dropped, err := (&Workload{}).DropExtras(ctx, tg)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]int{"postgres": 0, "mysql": len(mysqlProcs)}[engine]; len(dropped) != want {
		t.Errorf("cleanup dropped %v, want %d procedures", dropped, want)
	}
	if engine == "mysql" {
		c, err := tg.Connect(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if left, err := foreignProcs(ctx, c, tg.Dialect()); err != nil || len(left) != 0 {
			t.Errorf("after cleanup: routines %v left (%v)", left, err)
		}
		// Someone's ceiling_tpcc_custom has no name of ceiling's: it
		// blocks nothing. Someone's ceiling_tpcc_payment does.
		for _, stmt := range []string{"CREATE PROCEDURE ceiling_tpcc_custom() BEGIN SELECT 1; END", "CREATE PROCEDURE ceiling_tpcc_payment() BEGIN SELECT 1; END"} {
			if _, err := c.Exec(ctx, stmt); err != nil {
				t.Fatal(err)
			}
		}
		if dropped, err := (&Workload{}).DropExtras(ctx, tg); err != nil || len(dropped) != 0 {
			t.Errorf("cleanup with someone's ceiling_tpcc_payment: dropped %v (%v), want nothing", dropped, err)
		}
		w := newTestWorkload(t, "--procedures")
		if err := w.Attach(ctx, tg, nil); !errors.Is(err, target.ErrForeignObject) || !strings.Contains(err.Error(), "routine ceiling_tpcc_payment:") {
			t.Errorf("--procedures with someone's ceiling_tpcc_payment: %v, want a refusal naming it alone", err)
		}
	}
}

// The digests sum up every TPC-C column the transactions change, but the
// timestamps (o_entry_d, h_date, ol_delivery_d's values: their count is in).
const pgDigest = `SELECT concat_ws(' ',
	(SELECT sum(w_ytd) FROM ceiling.warehouse),
	(SELECT sum(d_next_o_id) || '/' || sum(d_ytd) FROM ceiling.district),
	(SELECT sum(c_balance) || '/' || sum(c_ytd_payment) || '/' || sum(c_payment_cnt) || '/' || sum(c_delivery_cnt) || '/' ||
		md5(string_agg(md5(c_data), '' ORDER BY c_w_id, c_d_id, c_id)) FROM ceiling.customer),
	(SELECT count(*) || '/' || sum(h_amount) || '/' || md5(string_agg(h_c_w_id || ':' || h_c_d_id || ':' || h_c_id || ':' || h_w_id || ':' || h_d_id || ':' || h_amount || h_data, ','
		ORDER BY h_c_w_id, h_c_d_id, h_c_id, h_amount, h_data)) FROM ceiling.history),
	(SELECT count(*) || '/' || sum(o_carrier_id) || '/' || sum(o_ol_cnt) || '/' || sum(o_all_local) || '/' || sum(o_c_id) FROM ceiling.orders),
	(SELECT count(*) || '/' || sum(no_o_id) FROM ceiling.new_order),
	(SELECT count(*) || '/' || sum(ol_amount) || '/' || sum(ol_quantity) || '/' || count(ol_delivery_d) || '/' || sum(ol_i_id) || '/' || sum(ol_supply_w_id) || '/' ||
		md5(string_agg(ol_dist_info, '' ORDER BY ol_w_id, ol_d_id, ol_o_id, ol_number)) FROM ceiling.order_line),
	(SELECT sum(s_quantity) || '/' || sum(s_ytd) || '/' || sum(s_order_cnt) || '/' || sum(s_remote_cnt) FROM ceiling.stock))`

const mysqlDigest = `SELECT CONCAT_WS(' ',
	(SELECT SUM(w_ytd) FROM ceiling_warehouse),
	(SELECT CONCAT(SUM(d_next_o_id), '/', SUM(d_ytd)) FROM ceiling_district),
	(SELECT CONCAT(SUM(c_balance), '/', SUM(c_ytd_payment), '/', SUM(c_payment_cnt), '/', SUM(c_delivery_cnt), '/',
		MD5(GROUP_CONCAT(MD5(c_data) ORDER BY c_w_id, c_d_id, c_id SEPARATOR ''))) FROM ceiling_customer),
	(SELECT CONCAT(COUNT(*), '/', SUM(h_amount), '/', MD5(GROUP_CONCAT(CONCAT(h_c_w_id, ':', h_c_d_id, ':', h_c_id, ':', h_w_id, ':', h_d_id, ':', h_amount, h_data)
		ORDER BY h_c_w_id, h_c_d_id, h_c_id, h_amount, h_data SEPARATOR ','))) FROM ceiling_history),
	(SELECT CONCAT(COUNT(*), '/', SUM(o_carrier_id), '/', SUM(o_ol_cnt), '/', SUM(o_all_local), '/', SUM(o_c_id)) FROM ceiling_orders),
	(SELECT CONCAT(COUNT(*), '/', SUM(no_o_id)) FROM ceiling_new_order),
	(SELECT CONCAT(COUNT(*), '/', SUM(ol_amount), '/', SUM(ol_quantity), '/', COUNT(ol_delivery_d), '/', SUM(ol_i_id), '/', SUM(ol_supply_w_id), '/',
		MD5(GROUP_CONCAT(ol_dist_info ORDER BY ol_w_id, ol_d_id, ol_o_id, ol_number SEPARATOR ''))) FROM ceiling_order_line),
	(SELECT CONCAT(SUM(s_quantity), '/', SUM(s_ytd), '/', SUM(s_order_cnt), '/', SUM(s_remote_cnt)) FROM ceiling_stock))`

// TestAdvice: a client-side run on a server is told of --procedures when
// its verdict is one the round trips feed; not with --procedures, not on
// SQLite, not when the log's flushes set the pace.
func TestAdvice(t *testing.T) {
	client, server := newTestWorkload(t), newTestWorkload(t, "--procedures")
	for _, c := range []struct {
		w                  *Workload
		engine, bottleneck string
		want               bool
	}{
		{client, "postgres", "cpu", true},
		{client, "mysql", "contention", true},
		{client, "postgres", "none", true},
		{client, "mysql", "network", true},
		{client, "postgres", "commit-flush", false},
		{client, "sqlite", "cpu", false},
		{server, "postgres", "cpu", false},
	} {
		got := c.w.Advice(c.engine, c.bottleneck)
		if (len(got) == 1 && strings.HasPrefix(got[0], "--procedures: ")) != c.want || len(got) > 1 {
			t.Errorf("procedures %v, %s, %s: advice %q, want it: %v", c.w.run.procedures, c.engine, c.bottleneck, got, c.want)
		}
	}
}

// TestAdviceWarehouses: a contention verdict with more virtual users than
// the warehouses have terminals (MariaDB, 16 users on 1 warehouse: lock
// waits 42% of the sessions' time) is told to load more warehouses, first
// (also with --all-warehouses: the users spread over the same few rows);
// not with 10 users a warehouse or fewer, not on SQLite, not for another
// verdict.
func TestAdviceWarehouses(t *testing.T) {
	users := func(w *Workload, n int) *Workload {
		w.run.made = map[int]uint64{}
		for i := range n {
			w.run.made[i] = 1
		}
		return w
	}
	w := users(newTestWorkload(t), 16)
	w.Warehouses = 1
	got := w.Advice("mysql", "contention")
	want := "more warehouses: 16 virtual users share 1 warehouse(s), 16 each where TPC-C gives a warehouse 10 terminals, and queue for its warehouse and district rows (`ceiling prepare tpcc --warehouses 2 --force`, then run at the same -c)"
	if len(got) != 2 || got[0] != want || !strings.HasPrefix(got[1], "--procedures: ") {
		t.Errorf("16 users on 1 warehouse: %q", got)
	}
	if got := w.Advice("sqlite", "contention"); len(got) != 0 {
		t.Errorf("sqlite: %q", got)
	}
	if got := w.Advice("postgres", "cpu"); len(got) != 1 || !strings.HasPrefix(got[0], "--procedures: ") {
		t.Errorf("cpu: %q", got)
	}
	few := users(newTestWorkload(t), 20)
	few.Warehouses = 2
	if got := few.Advice("postgres", "contention"); len(got) != 1 {
		t.Errorf("10 users a warehouse: %q", got)
	}
	spread := users(newTestWorkload(t, "--all-warehouses"), 16)
	spread.Warehouses = 1
	if got := spread.Advice("postgres", "contention"); len(got) != 2 || got[0] != want {
		t.Errorf("--all-warehouses: %q", got)
	}
}
