package custom

import (
	"context"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ceiling-db/ceiling/internal/target"
	"github.com/ceiling-db/ceiling/internal/target/engines"
	"github.com/ceiling-db/ceiling/internal/testenv"
	"github.com/ceiling-db/ceiling/internal/workload"
)

// example is the file shipped for users; the tests run it as they would.
const example = "../../../examples/custom/orders.yaml"

const okTables = `tables:
  - name: t
    rows: 10
    columns:
      - {name: id, type: int primary key, load: seq}
      - {name: v, type: int, load: int 1 9}
      - {name: n, type: int, load: null}
  - name: empty
    columns:
      - {name: id, type: int primary key, load: seq}
`

// onEngines runs test on SQLite and on each live server whose DSN is set,
// with the target opened.
func onEngines(t *testing.T, test func(t *testing.T, ctx context.Context, tg target.Target)) {
	testenv.EachEngine(t, "sqlite:"+filepath.Join(t.TempDir(), "c.db"), func(t *testing.T, dsn string) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		tg, err := engines.Open(ctx, target.Options{DSN: dsn, Durability: target.DurabilityServer, MaxConns: 1})
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = tg.Close(context.Background()) }()
		test(t, ctx, tg)
	})
}

// TestParseErrors: each mistake in a file is reported, naming where it
// is; a good file parses.
func TestParseErrors(t *testing.T) {
	good := okTables + `requests:
  - name: get
    sql: SELECT v FROM {t} WHERE id = ?
    args: [row t]
`
	if _, err := Parse([]byte(good)); err != nil {
		t.Fatalf("good file: %v", err)
	}
	req := func(body string) string { return okTables + "requests:\n" + body }
	cases := []struct{ name, file, want string }{
		{"not yaml", "requests: [", "not a workload file"},
		{"unknown field", req("  - name: a\n    sql: SELECT 1\n    wieght: 2\n"), `field wieght not found`},
		{"no requests", okTables, "no requests"},
		{"bad request name", req("  - name: Get\n    sql: SELECT 1\n"), `request Get: name "Get"`},
		{"reserved", req("  - name: total\n    sql: SELECT 1\n"), "total is the name of the summary's row"},
		{"twice", req("  - name: a\n    sql: SELECT 1\n  - name: a\n    sql: SELECT 2\n"), "request a: declared twice"},
		{"zero weight", req("  - name: a\n    weight: 0\n    sql: SELECT 1\n"), "weight must be above 0"},
		{"no sql", req("  - name: a\n"), "request a: no sql"},
		{"both", req("  - name: a\n    sql: SELECT 1\n    transaction:\n      - sql: SELECT 2\n"), "either sql"},
		{"ddl", req("  - name: a\n    sql: drop table {t}\n"), "DROP statements are not requests"},
		{"unknown table", req("  - name: a\n    sql: SELECT * FROM {other}\n"), "{other} is not a table of the file"},
		{"placeholders", req("  - name: a\n    sql: SELECT * FROM {t} WHERE id = ? AND v = ?\n    args: [row t]\n"), "2 ? placeholders but 1 args"},
		{"quoted ? is no placeholder", req("  - name: a\n    sql: SELECT '?' FROM {t} WHERE id = ?\n    args: [row t, int 1 2]\n"), "1 ? placeholders but 2 args"},
		{"PostgreSQL's $1", req("  - name: a\n    sql: SELECT v FROM {t} WHERE id = $1\n    args: [row t]\n"), "0 ? placeholders but 1 args (write ? for each argument, on every engine: ceiling makes them $1, $2 … on PostgreSQL itself)"},
		{"unterminated", req("  - name: a\n    sql: SELECT 'x FROM {t}\n"), "unterminated ' quote"},
		{"seq in request", req("  - name: a\n    sql: SELECT ?\n    args: [seq]\n"), "seq numbers rows as they are loaded"},
		{"row of empty", req("  - name: a\n    sql: SELECT ?\n    args: [row empty]\n"), "table empty loads no rows"},
		{"row of unknown", req("  - name: a\n    sql: SELECT ?\n    args: [row nope]\n"), "nope is not a table of the file"},
		{"ref ahead", req("  - name: a\n    sql: SELECT ?, ?\n    args: [ref 2, int 1 2]\n"), "ref 2: the request has 0 arguments before this one"},
		{"col first", req("  - name: a\n    sql: SELECT ?\n    args: [col 1 1]\n"), "the statement must be an earlier one of the request (1 … 0)"},
		{"col zero", req("  - name: a\n    sql: SELECT ?\n    args: [col 0 1]\n"), "S and C count statements and columns from 1"},
		{"ref zero", req("  - name: a\n    sql: SELECT ?\n    args: [ref 0]\n"), "K must be the number of an earlier argument"},
		{"ref in load", "tables:\n  - name: t\n    rows: 1\n    columns:\n      - {name: id, type: int, load: ref 1}\nrequests:\n  - name: a\n    sql: SELECT 1\n", "ref K repeats a request's argument"},
		{"zipf S", req("  - name: a\n    sql: SELECT ?\n    args: [int 1 9 zipf 1]\n"), "zipf S needs S above 1"},
		{"zipf text", req("  - name: a\n    sql: SELECT ?\n    args: [text 1 9 zipf 2]\n"), "skews int A B and row TABLE only"},
		{"check want", req("  - name: a\n    sql: SELECT 1\n") + "checks:\n  - name: c\n    sql: SELECT 1\n", "want must be the value the query returns"},
		{"check select", req("  - name: a\n    sql: SELECT 1\n") + "checks:\n  - name: c\n    sql: DELETE FROM {t}\n    want: 0\n", "the sql must return a row"},
		{"bad generator", req("  - name: a\n    sql: SELECT ?\n    args: [gauss 1 2]\n"), "unknown generator"},
		{"int order", req("  - name: a\n    sql: SELECT ?\n    args: [int 5 1]\n"), "A must not be above B"},
		{"decimals", req("  - name: a\n    sql: SELECT ?\n    args: [float 1 2 x]\n"), "DECIMALS must be 0"},
		{"text length", req("  - name: a\n    sql: SELECT ?\n    args: [text 1 100000]\n"), "lengths must be 0"},
		{"engine key", req("  - name: a\n    sql: {oracle: SELECT 1 FROM dual}\n"), `"oracle" is not an engine`},
		{"next in load", "tables:\n  - name: t\n    rows: 1\n    columns:\n      - {name: id, type: int, load: next t}\n" + "requests:\n  - name: a\n    sql: SELECT 1\n", "next TABLE is for requests"},
		{"bad table name", "tables:\n  - name: T-1\n    columns:\n      - {name: id, type: int, load: seq}\nrequests:\n  - name: a\n    sql: SELECT 1\n", `table T-1: name "T-1"`},
		{"no load", "tables:\n  - name: t\n    columns:\n      - {name: id, type: int}\nrequests:\n  - name: a\n    sql: SELECT 1\n", "no load generator"},
		{"think unit", req("  - name: a\n    sql: SELECT 1\n    think: 200\n"), `request a: think "200": "200" is not a duration from 0 to 1h0m0s`},
		{"think form", req("  - name: a\n    sql: SELECT 1\n    think: gauss 2s\n"), `think "gauss 2s": give a duration (200ms, 2s) or exp and a mean`},
		{"file think", "think: -1s\n" + req("  - name: a\n    sql: SELECT 1\n"), `think "-1s": "-1s" is not a duration`},
		{"index column", "tables:\n  - name: t\n    columns:\n      - {name: id, type: int, load: seq}\n    indexes: [idd]\nrequests:\n  - name: a\n    sql: SELECT 1\n", "names idd, which is not a column"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.file))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one containing %q", err, c.want)
			}
		})
	}
}

// TestThink: a request's think time is its own, else the file's; "exp D"
// draws a negative exponential of mean D truncated at 10 × D; 0 is none.
// Only a file with think times makes Pausers (so that files without keep
// the runner's multiplexing) and is refused for an open loop.
func TestThink(t *testing.T) {
	spec, err := Parse([]byte("think: exp 20ms\n" + okTables + `requests:
  - name: a
    sql: SELECT 1
  - name: b
    think: 5ms
    sql: SELECT 2
  - name: c
    think: 0
    sql: SELECT 3
`))
	if err != nil {
		t.Fatal(err)
	}
	want := []think{{d: 20 * time.Millisecond, exp: true}, {d: 5 * time.Millisecond}, {}}
	for i, r := range spec.requests {
		if r.think != want[i] {
			t.Errorf("request %s: think %+v, want %+v", r.spec.Name, r.think, want[i])
		}
	}
	if !spec.thinks {
		t.Error("spec.thinks false with think times")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var sum time.Duration
	const n = 20000
	for range n {
		d := want[0].draw(rng)
		if d < 0 || d > 200*time.Millisecond {
			t.Fatalf("exp 20ms drew %v: outside 0 … 10 × the mean", d)
		}
		sum += d
	}
	// The truncation at 10× takes e^-10 × 11 ≈ 0.05% off the mean.
	if mean := sum / n; mean < 19*time.Millisecond || mean > 21*time.Millisecond {
		t.Errorf("exp 20ms: mean of %d draws %v", n, mean)
	}
	if d := want[1].draw(rng); d != 5*time.Millisecond {
		t.Errorf("5ms drew %v", d)
	}

	c := &Custom{spec: spec}
	if !c.WorkersPause() || !strings.Contains(workload.OpenLoopError(c, "--rate or --rates").Error(), "the file's think times (think:) apply to the closed loop") {
		t.Errorf("a file with think times: WorkersPause %v, OpenLoopError %v", c.WorkersPause(), workload.OpenLoopError(c, "--rate"))
	}
	plain, err := Parse([]byte(okTables + "requests:\n  - name: a\n    sql: SELECT 1\n"))
	if err != nil {
		t.Fatal(err)
	}
	c = &Custom{spec: plain}
	if c.WorkersPause() || workload.OpenLoopError(c, "--rate") != nil {
		t.Error("a file without think times pauses, or is refused for an open loop")
	}
}

// TestRewrite: {table} names and ? placeholders are replaced outside
// quotes and comments only; PostgreSQL gets $1, $2 ….
func TestRewrite(t *testing.T) {
	in := "SELECT '{t}?', \"a?\", ? FROM {t} -- ? {t}\nWHERE a = ? /* ? */ AND b = 'it''s ?'"
	d := target.Dialect{Engine: "postgres", Prefix: "ceiling.", Dollar: true}
	got, err := rewrite(in, func(n string) (string, bool) { return d.Table(TablePrefix + n), true }, d.Placeholder)
	if err != nil {
		t.Fatal(err)
	}
	want := "SELECT '{t}?', \"a?\", $1 FROM ceiling.u_t -- ? {t}\nWHERE a = $2 /* ? */ AND b = 'it''s ?'"
	if got != want {
		t.Fatalf("rewrite:\n got %s\nwant %s", got, want)
	}
}

// TestReturnsRows: which statements are read as rows.
func TestReturnsRows(t *testing.T) {
	for sql, want := range map[string]bool{
		"SELECT 1": true, " (select 1)": true, "WITH x AS (SELECT 1) SELECT * FROM x": true,
		"INSERT INTO t VALUES (1) RETURNING id": true, "UPDATE t SET a = 1": false, "DELETE FROM t": false,
	} {
		if got := returnsRows(sql); got != want {
			t.Errorf("returnsRows(%q) = %v", sql, got)
		}
	}
}

// TestReadsOnly: a statement is taken for a read only when its words
// show nothing that writes or that a read-only server refuses; a file is
// read-only when all its statements are, in every engine's text.
func TestReadsOnly(t *testing.T) {
	for sql, want := range map[string]bool{
		"SELECT id, note FROM {t} WHERE id = ?":                 true,
		"  (select count(*) from {t})":                          true,
		"WITH x AS (SELECT 1) SELECT * FROM x":                  true,
		"select update_time, deleted_at from {t}":               true, // words, not parts of words
		"EXPLAIN SELECT 1":                                      true,
		"WITH x AS (DELETE FROM {t} RETURNING id) SELECT 1":     false,
		"SELECT * FROM {t} WHERE id = ? FOR UPDATE":             false,
		"SELECT * FROM {t} WHERE id = ? FOR SHARE":              false,
		"SELECT * FROM {t} WHERE id = ? LOCK IN SHARE MODE":     false,
		"SELECT a INTO new_table FROM {t}":                      false,
		"SELECT nextval('s')":                                   false,
		"INSERT INTO {t} (id) VALUES (?)":                       false,
		"UPDATE {t} SET v = 1":                                  false,
		"EXPLAIN ANALYZE INSERT INTO {t} (id) VALUES (1)":       false,
		"CALL proc(?)":                                          false,
		"":                                                      false,
		"SELECT * FROM {t} WHERE note = 'please do not update'": false, // when in doubt, a write
	} {
		if got := readsOnly(sql); got != want {
			t.Errorf("readsOnly(%q) = %v", sql, got)
		}
	}
	dir := t.TempDir()
	for name, tc := range map[string]struct {
		requests string
		want     bool
	}{
		"selects": {`requests:
  - name: a
    sql: SELECT v FROM {t} WHERE id = ?
    args: [row t]
  - name: b
    transaction:
      - sql: SELECT count(*) FROM {t}
`, true},
		"a write in a transaction": {`requests:
  - name: a
    sql: SELECT v FROM {t} WHERE id = ?
    args: [row t]
  - name: b
    transaction:
      - sql: SELECT count(*) FROM {t}
      - sql: UPDATE {t} SET v = 1
`, false},
		"a write on one engine": {`requests:
  - name: a
    sql: {postgres: "SELECT v FROM {t}", mysql: "SELECT v FROM {t} FOR UPDATE"}
`, false},
	} {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "_")+".yaml")
		if err := os.WriteFile(path, []byte(okTables+tc.requests), 0o644); err != nil {
			t.Fatal(err)
		}
		c := &Custom{Path: path, Seed: 1}
		if c.ReadsOnly() {
			t.Errorf("%s: read-only before Validate read the file", name)
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := c.ReadsOnly(); got != tc.want {
			t.Errorf("%s: ReadsOnly() = %v, want %v", name, got, tc.want)
		}
	}
}

// TestGenerators: values stay in their ranges, floats are rounded to the
// decimals asked, texts have the lengths asked.
func TestGenerators(t *testing.T) {
	c, w, _ := sqliteWorker(t, okTables+`requests:
  - name: a
    sql: SELECT ?, ?, ?, ?, ?, ?
    args: [int -3 3, float 1 2 2, text 2 5, row t, next t, null]
`)
	c.next[0].Store(10)
	r := &w.reqs[0]
	st := &r.stmts[0]
	seenLo, seenHi := false, false
	for i := 0; i < 2000; i++ {
		w.fill(r, st)
		s := st.slots
		if s[0].i < -3 || s[0].i > 3 {
			t.Fatalf("int -3 3 gave %d", s[0].i)
		}
		seenLo, seenHi = seenLo || s[0].i == -3, seenHi || s[0].i == 3
		if s[1].f < 1 || s[1].f > 2 || math.Abs(s[1].f*100-math.Round(s[1].f*100)) > 1e-9 {
			t.Fatalf("float 1 2 2 gave %v", s[1].f)
		}
		if n := len(s[2].s); n < 2 || n > 5 || strings.Trim(s[2].s, letters) != "" {
			t.Fatalf("text 2 5 gave %q", s[2].s)
		}
		if s[3].i < 1 || s[3].i > 10 {
			t.Fatalf("row t gave %d", s[3].i)
		}
		if s[4].i != int64(11+i) {
			t.Fatalf("next t gave %d, want %d", s[4].i, 11+i)
		}
		if st.args[5] != nil {
			t.Fatalf("null gave %v", st.args[5])
		}
	}
	if !seenLo || !seenHi {
		t.Fatalf("int -3 3 never gave an end of its range (-3: %v, 3: %v)", seenLo, seenHi)
	}
	if allocs := testing.AllocsPerRun(200, func() { w.fill(r, st) }); allocs != 0 {
		t.Fatalf("drawing a request's arguments allocates %.1f times", allocs)
	}
}

// TestZipf: a skewed int or row keeps to its range with its low end hot
// (Zipf's law, S 1.5 over 1000 values: the first about 39% of draws, where
// uniform gives 0.1%), in requests and in a table's load; without
// allocating.
func TestZipf(t *testing.T) {
	file := `tables:
  - name: t
    rows: 1000
    columns:
      - {name: id, type: int primary key, load: seq}
      - {name: hot, type: int, load: int 1 1000 zipf 1.5}
requests:
  - name: a
    sql: SELECT ?, ?
    args: [int 1 1000 zipf 1.5, row t zipf 1.5]
`
	c, w, tg := sqliteWorker(t, file)
	r := &w.reqs[0]
	st := &r.stmts[0]
	const n = 20000
	var ones [2]int
	for i := 0; i < n; i++ {
		w.fill(r, st)
		for k := 0; k < 2; k++ {
			v := st.slots[k].i
			if v < 1 || v > 1000 {
				t.Fatalf("argument %d: %d outside 1 … 1000", k+1, v)
			}
			if v == 1 {
				ones[k]++
			}
		}
	}
	for k, c := range ones {
		if f := float64(c) / n; f < 0.33 || f > 0.45 {
			t.Fatalf("argument %d: 1 drawn %.1f%% of the time, want about 39%%", k+1, 100*f)
		}
	}
	if allocs := testing.AllocsPerRun(100, func() { w.fill(r, st) }); allocs != 0 {
		t.Fatalf("skewed draws allocate %.1f times", allocs)
	}
	conn := prepared(t, c, tg)
	if hot, err := scalar(context.Background(), conn, "SELECT COUNT(*) FROM "+tg.Dialect().Table(TablePrefix+"t")+" WHERE hot = 1"); err != nil || hot < 330 || hot > 450 {
		t.Fatalf("loaded column: %d of 1000 rows hold 1, want about 390", hot)
	}
}

// TestReuse: --reuse takes the tables as an earlier prepare and run left
// them, and next TABLE continues after the highest id there (the earlier
// run's inserts included), so new inserts do not collide; without the
// tables it is an error that says what to run.
func TestReuse(t *testing.T) {
	ctx := context.Background()
	tg := openSQLite(t)
	fresh := &Custom{Path: example, Seed: 3}
	reused := &Custom{Path: example, Seed: 3, Reuse: true}
	for _, c := range []*Custom{fresh, reused} {
		if err := c.Validate(); err != nil {
			t.Fatal(err)
		}
	}
	if err := reused.Prepare(ctx, tg, io.Discard); err == nil || !strings.Contains(err.Error(), "run `ceiling prepare custom --file") {
		t.Fatalf("--reuse without tables: %v", err)
	}
	if err := fresh.Prepare(ctx, tg, io.Discard); err != nil {
		t.Fatal(err)
	}
	inserts := func(c *Custom) int64 {
		conn, err := tg.Connect(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		c.Isolate(0) // new-order alone
		defer c.Isolate(-1)
		wk, err := c.NewWorker(ctx, tg, conn, 0)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 50; i++ {
			if _, err := wk.Do(ctx); err != nil {
				t.Fatalf("insert %d: %v", i, err)
			}
		}
		return c.next[1].Load()
	}
	if last := inserts(fresh); last != 20050 {
		t.Fatalf("fresh: last new id %d, want 20050", last)
	}
	var out strings.Builder
	if err := reused.Prepare(ctx, tg, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "orders up to id 20050") {
		t.Fatalf("reuse said %q", out.String())
	}
	if last := inserts(reused); last != 20100 {
		t.Fatalf("reused: last new id %d, want 20100 (after the 20050 there)", last)
	}
}

// TestRef: ref K repeats the K-th argument of the request, across the
// statements of a transaction and within one, a ref to a ref included,
// with the type of the argument it repeats; without allocating.
func TestRef(t *testing.T) {
	c, w, tg := sqliteWorker(t, okTables+`requests:
  - name: a
    transaction:
      - sql: SELECT ?, ?, ?
        args: [next t, text 3 9, ref 1]
      - sql: SELECT ?, ?, ?, ?
        args: [ref 2, ref 1, ref 3, float 0 1]
`)
	r := &w.reqs[0]
	one, two := &r.stmts[0], &r.stmts[1]
	for i := 0; i < 50; i++ {
		w.fill(r, one)
		w.fill(r, two)
		id, txt := one.slots[0].i, one.slots[1].s
		if one.slots[2].i != id || two.slots[0].s != txt || two.slots[1].i != id || two.slots[2].i != id {
			t.Fatalf("refs: %+v %+v, want id %d and text %q repeated", one.slots, two.slots, id, txt)
		}
	}
	if _, ok := two.args[0].(*string); !ok {
		t.Fatalf("ref to a text is sent as %T", two.args[0])
	}
	if _, ok := two.args[2].(*int64); !ok {
		t.Fatalf("ref to a ref to next is sent as %T", two.args[2])
	}
	if allocs := testing.AllocsPerRun(100, func() { w.fill(r, one); w.fill(r, two) }); allocs != 0 {
		t.Fatalf("refs allocate %.1f times", allocs)
	}
	// On the engine: the transaction runs with the repeated values.
	if err := c.Prepare(context.Background(), tg, io.Discard); err != nil {
		t.Fatal(err)
	}
	if res, err := w.Do(context.Background()); err != nil || res.Rows != 2 {
		t.Fatalf("Do: %d rows, %v", res.Rows, err)
	}
}

// sqliteWorker parses file and makes worker 1 of it on a new SQLite
// database (not prepared).
func sqliteWorker(t *testing.T, file string) (*Custom, *worker, target.Target) {
	t.Helper()
	spec, err := Parse([]byte(file))
	if err != nil {
		t.Fatal(err)
	}
	c := &Custom{spec: spec, next: make([]atomic.Int64, len(spec.tables)), pool: letterPool(rand.New(rand.NewPCG(1, 2)), poolSize)}
	tg := openSQLite(t)
	conn, err := tg.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	wk, err := c.NewWorker(context.Background(), tg, conn, 1)
	if err != nil {
		t.Fatal(err)
	}
	return c, wk.(*worker), tg
}

// prepared prepares c on tg and returns a connection to look at the
// tables with (closed when the test ends).
func prepared(t *testing.T, c *Custom, tg target.Target) target.Conn {
	t.Helper()
	if err := c.Prepare(context.Background(), tg, io.Discard); err != nil {
		t.Fatal(err)
	}
	conn, err := tg.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

func openSQLite(t *testing.T) target.Target {
	t.Helper()
	tg, err := engines.Open(context.Background(), target.Options{DSN: "sqlite:" + filepath.Join(t.TempDir(), "c.db"), Durability: target.DurabilityServer, MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tg.Close(context.Background()) })
	return tg
}

// TestExampleOnEngines runs the shipped example on each engine as a run
// would: prepare loads every declared row (seq numbering them 1 … rows,
// row pointing at loaded rows), and one worker's requests follow the
// weights, count their rows (an insert 1, the payment transaction 2, a
// lookup at most its LIMIT) and leave one new order per insert.
func TestExampleOnEngines(t *testing.T) {
	onEngines(t, func(t *testing.T, ctx context.Context, tg target.Target) {
		c := &Custom{Path: example, Seed: 7}
		if err := c.Validate(); err != nil {
			t.Fatal(err)
		}
		if err := c.Prepare(ctx, tg, io.Discard); err != nil {
			t.Fatal(err)
		}
		defer func() {
			bg := context.Background()
			for _, tb := range c.Tables() {
				if err := tg.Schema().DropTable(bg, tb); err != nil {
					t.Errorf("drop %s: %v", tb, err)
				}
			}
			if left, err := tg.Schema().Tables(bg); err == nil && len(left) == 0 {
				_ = tg.Schema().DropAll(bg)
			}
		}()
		conn, err := tg.Connect(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		d := tg.Dialect()
		scalar := func(sql string) int64 {
			t.Helper()
			rows, err := conn.Query(ctx, sql)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			var v int64
			if !rows.Next() {
				t.Fatalf("%s: no row", sql)
			}
			if err := rows.Scan(&v); err != nil {
				t.Fatal(err)
			}
			return v
		}
		orders := d.Table(TablePrefix + "orders")
		if n := scalar("SELECT COUNT(*) FROM " + d.Table(TablePrefix+"customers")); n != 1000 {
			t.Fatalf("customers: %d rows loaded, want 1000", n)
		}
		if n, hi := scalar("SELECT COUNT(*) FROM "+orders), scalar("SELECT MAX(id) FROM "+orders); n != 20000 || hi != 20000 {
			t.Fatalf("orders: %d rows, max id %d; want 20000 numbered 1 … 20000", n, hi)
		}
		if hi := scalar("SELECT MAX(customer) FROM " + orders); hi < 1 || hi > 1000 {
			t.Fatalf("orders.customer up to %d: row customers must draw 1 … 1000", hi)
		}
		wk, err := c.NewWorker(ctx, tg, conn, 0)
		if err != nil {
			t.Fatal(err)
		}
		ops := c.Ops()
		counts := make([]int, len(ops))
		const n = 1000
		for i := 0; i < n; i++ {
			r, err := wk.Do(ctx)
			if err != nil {
				t.Fatalf("request %d (%s): %v", i, ops[r.Op], err)
			}
			counts[r.Op]++
			switch ops[r.Op] {
			case "new-order":
				if r.Rows != 1 {
					t.Fatalf("new-order: %d rows, want 1", r.Rows)
				}
			case "payment":
				if r.Rows != 2 {
					t.Fatalf("payment: %d rows, want 2 (one update, one insert)", r.Rows)
				}
			case "by-customer":
				if r.Rows < 0 || r.Rows > 10 {
					t.Fatalf("by-customer: %d rows, want 0 … 10 (LIMIT 10)", r.Rows)
				}
			}
		}
		// Weights 30/60/10 over 1000 draws: far outside ±6 standard
		// deviations means the draw is wrong.
		for i, want := range []float64{0.3, 0.6, 0.1} {
			sd := math.Sqrt(n * want * (1 - want))
			if math.Abs(float64(counts[i])-n*want) > 6*sd {
				t.Errorf("%s: %d of %d requests, want about %.0f", ops[i], counts[i], n, n*want)
			}
		}
		if got, want := scalar("SELECT COUNT(*) FROM "+orders), int64(20000+counts[0]+counts[2]); got != want {
			t.Fatalf("orders after the requests: %d rows, want %d (one per new-order and payment)", got, want)
		}
	})
}

var _ workload.Worker = (*worker)(nil)

// TestTryRequests: prepare runs each request once and rolls it back: a
// statement the database refuses fails prepare naming the request, and a
// good insert leaves no row behind nor uses up an id of next TABLE.
func TestTryRequests(t *testing.T) {
	file := filepath.Join(t.TempDir(), "try.yaml")
	onEngines(t, func(t *testing.T, ctx context.Context, tg target.Target) {
		good := okTables + `requests:
  - name: add
    sql: INSERT INTO {t} (id, v, n) VALUES (?, ?, ?)
    args: [next t, int 1 9, null]
`
		for _, c := range []struct{ body, want string }{
			{good + "  - name: bad\n    sql: SELECT nosuchcolumn FROM {t}\n", "request bad, tried once before the run"},
			{good, ""},
		} {
			if err := os.WriteFile(file, []byte(c.body), 0o644); err != nil {
				t.Fatal(err)
			}
			w := &Custom{Path: file, Seed: 1}
			if err := w.Validate(); err != nil {
				t.Fatal(err)
			}
			err := w.Prepare(ctx, tg, io.Discard)
			defer func() {
				for _, tb := range w.Tables() {
					_ = tg.Schema().DropTable(context.Background(), tb)
				}
				if left, err := tg.Schema().Tables(context.Background()); err == nil && len(left) == 0 {
					_ = tg.Schema().DropAll(context.Background())
				}
			}()
			if c.want != "" {
				if err == nil || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("bad request: %v, want %q", err, c.want)
				}
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			if n := w.next[0].Load(); n != 10 {
				t.Fatalf("next t after the try: %d, want 10 (the loaded rows)", n)
			}
			conn, err := tg.Connect(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if n, err := scalar(ctx, conn, "SELECT COUNT(*) FROM "+tg.Dialect().Table(TablePrefix+"t")); err != nil || n != 10 {
				t.Fatalf("rows after the try: %d, %v; want the 10 loaded", n, err)
			}
		}
	})
}

// TestExamplesParse: every shipped example file reads.
func TestExamplesParse(t *testing.T) {
	files, err := filepath.Glob("../../../examples/custom/*.yaml")
	if err != nil || len(files) < 2 {
		t.Fatalf("examples: %v, %v", files, err)
	}
	for _, f := range files {
		if err := (&Custom{Path: f}).Validate(); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// TestCol: col S C sends a column of an earlier statement's first row
// (with the type the driver decoded), NULL when it returned none; a
// column it does not have, or a statement that returns no rows, is an
// error before the run.
func TestCol(t *testing.T) {
	file := filepath.Join(t.TempDir(), "col.yaml")
	onEngines(t, func(t *testing.T, ctx context.Context, tg target.Target) {
		write := func(requests string) *Custom {
			t.Helper()
			if err := os.WriteFile(file, []byte(okTables+"requests:\n"+requests), 0o644); err != nil {
				t.Fatal(err)
			}
			c := &Custom{Path: file, Seed: 5}
			if err := c.Validate(); err != nil {
				t.Fatal(err)
			}
			return c
		}
		defer func() {
			_ = tg.Schema().DropTable(context.Background(), TablePrefix+"t")
			_ = tg.Schema().DropTable(context.Background(), TablePrefix+"empty")
			if left, err := tg.Schema().Tables(context.Background()); err == nil && len(left) == 0 {
				_ = tg.Schema().DropAll(context.Background())
			}
		}()
		c := write(`  - name: copy
    transaction:
      - sql: SELECT id, v FROM {t} WHERE id = ?
        args: [row t]
      - sql: UPDATE {t} SET n = ? WHERE id = ?
        args: [col 1 2, col 1 1]
  - name: miss
    transaction:
      - sql: SELECT id FROM {t} WHERE id < 0
      - sql: UPDATE {t} SET n = 0 WHERE id = ?
        args: [col 1 1]
`)
		if err := c.Prepare(ctx, tg, io.Discard); err != nil {
			t.Fatal(err)
		}
		conn, err := tg.Connect(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		wk, err := c.NewWorker(ctx, tg, conn, 0)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 40; i++ {
			res, err := wk.Do(ctx)
			if err != nil {
				t.Fatalf("request %d: %v", i, err)
			}
			// copy: the row read and the row updated (MySQL counts an
			// update that changes nothing, a row copied before, as 0);
			// miss: nothing read, nothing updated.
			if lo, hi := map[int]int64{0: 1, 1: 0}[res.Op], map[int]int64{0: 2, 1: 0}[res.Op]; res.Rows < lo || res.Rows > hi {
				t.Fatalf("%s: %d rows, want %d … %d", c.Ops()[res.Op], res.Rows, lo, hi)
			}
		}
		d := tg.Dialect()
		tbl := d.Table(TablePrefix + "t")
		set, err := scalar(ctx, conn, "SELECT COUNT(*) FROM "+tbl+" WHERE n IS NOT NULL")
		if err != nil || set == 0 {
			t.Fatalf("rows copied: %d, %v", set, err)
		}
		if bad, err := scalar(ctx, conn, "SELECT COUNT(*) FROM "+tbl+" WHERE n IS NOT NULL AND n <> v"); err != nil || bad != 0 {
			t.Fatalf("rows whose n is not their v: %d, %v", bad, err)
		}
		for _, bad := range []struct{ requests, want string }{
			{"  - name: a\n    transaction:\n      - sql: SELECT v FROM {t} WHERE id = 1\n      - sql: UPDATE {t} SET n = ? WHERE id = 1\n        args: [col 1 2]\n", "statement 1 returned 1 columns"},
			{"  - name: a\n    transaction:\n      - sql: UPDATE {t} SET n = 1 WHERE id = 1\n      - sql: UPDATE {t} SET n = ? WHERE id = 1\n        args: [col 1 1]\n", "statement 1 returns no rows"},
		} {
			c := write(bad.requests)
			if err := c.Prepare(ctx, tg, io.Discard); err == nil || !strings.Contains(err.Error(), bad.want) {
				t.Errorf("%q: %v, want %q", bad.requests, err, bad.want)
			}
		}
	})
}

// TestScale: --scale multiplies every table's rows, and row TABLE draws
// from the scaled rows; the load makes that many; 0 is refused.
func TestScale(t *testing.T) {
	c := &Custom{Path: example, Seed: 1, Scale: 0.1}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	rows := map[string]int64{}
	for _, tb := range c.spec.tables {
		rows[tb.spec.Name] = tb.spec.Rows
	}
	if rows["customers"] != 100 || rows["orders"] != 2000 {
		t.Fatalf("rows at --scale 0.1: %v", rows)
	}
	for _, r := range c.spec.requests {
		for _, st := range r.stmts {
			for _, g := range st.gens {
				if g.kind == genRow && g.hi != g.table.spec.Rows {
					t.Fatalf("%s: row %s draws up to %d, not its %d rows", st.where, g.table.spec.Name, g.hi, g.table.spec.Rows)
				}
			}
		}
	}
	conn := prepared(t, c, openSQLite(t))
	if n, err := scalar(context.Background(), conn, "SELECT COUNT(*) FROM ceiling_u_orders"); err != nil || n != 2000 {
		t.Fatalf("orders loaded: %d, %v", n, err)
	}
	if hi, err := scalar(context.Background(), conn, "SELECT MAX(customer) FROM ceiling_u_orders"); err != nil || hi > 100 {
		t.Fatalf("orders.customer up to %d (%v): row customers must draw from the 100 scaled rows", hi, err)
	}
	var v scaleValue
	for _, bad := range []string{"0", "-1", "x", "1e9"} {
		if err := v.Set(bad); err == nil {
			t.Errorf("--scale %s accepted", bad)
		}
	}
}

// TestChecks: the transfers example's checks hold after prepare and after
// its requests (the balances' total is kept under any interleaving), and a
// balance changed behind its back fails the total, reporting what the
// query returned.
func TestChecks(t *testing.T) {
	const transfers = "../../../examples/custom/transfers.yaml"
	onEngines(t, func(t *testing.T, ctx context.Context, tg target.Target) {
		c := &Custom{Path: transfers, Seed: 1}
		if err := c.Validate(); err != nil {
			t.Fatal(err)
		}
		defer func() {
			for _, tb := range c.Tables() {
				_ = tg.Schema().DropTable(context.Background(), tb)
			}
			if left, err := tg.Schema().Tables(context.Background()); err == nil && len(left) == 0 {
				_ = tg.Schema().DropAll(context.Background())
			}
		}()
		conn := prepared(t, c, tg)
		wk, err := c.NewWorker(ctx, tg, conn, 0)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 200; i++ {
			if _, err := wk.Do(ctx); err != nil {
				t.Fatal(err)
			}
		}
		res, err := c.Check(ctx, tg)
		if err != nil || len(res) != 2 || !res[0].Pass || !res[1].Pass {
			t.Fatalf("checks after 200 transfers: %+v, %v", res, err)
		}
		if _, err := conn.Exec(ctx, "UPDATE "+tg.Dialect().Table(TablePrefix+"accounts")+" SET balance = balance + 5 WHERE id = 1"); err != nil {
			t.Fatal(err)
		}
		res, err = c.Check(ctx, tg)
		if err != nil || res[1].Pass || res[1].Got != "14982" || res[1].Want != "14977" || !res[0].Pass {
			t.Fatalf("checks after a lost 5: %+v, %v", res, err)
		}
	})
	for in, want := range map[[2]string]bool{{"0", "0.00"}: true, {"14977", "14977"}: true, {"1e3", "1000"}: true, {"abc", "abc"}: true, {"1", "2"}: false, {"NULL", "0"}: false} {
		if got := same(in[0], in[1]); got != want {
			t.Errorf("same(%q, %q) = %v", in[0], in[1], got)
		}
	}
}
