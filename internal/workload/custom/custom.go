// Package custom implements the custom workload: tables and weighted
// requests read from a YAML file the user writes (as pgbench -f or a
// sysbench script do), measured and diagnosed like the built-in workloads.
//
// The file declares tables, which prepare creates in ceiling's namespace
// (table orders is ceiling.u_orders on PostgreSQL, ceiling_u_orders
// elsewhere; the u_ keeps them apart from the built-in workloads' tables)
// and loads from generators, and requests: one statement, or a transaction
// of several, with ? placeholders filled by generators. In SQL, {orders}
// names the file's table orders. Requests may not be DDL; what else a
// statement touches is as the user wrote it.
package custom

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/spf13/pflag"

	"github.com/ceiling-db/ceiling/internal/target"
	"github.com/ceiling-db/ceiling/internal/workload"
)

// Meta registers the workload.
var Meta = workload.Meta{
	Name:        "custom",
	Description: "your own tables and weighted SQL requests, from a YAML file (--file)",
	RunExamples: `  ceiling run custom --file examples/custom/orders.yaml
  ceiling run custom --file orders.yaml -c 8 -T 60s --db postgres://postgres@localhost/postgres
  ceiling run custom --file orders.yaml --rates 100:1000:100 --step 20s -c 8
  ceiling prepare custom --file orders.yaml --db mysql://root@127.0.0.1:3306/test   # the tables, to look at`,
	Doc: `The file (YAML) declares tables and requests:

  description: orders and lookups
  tables:
    - name: orders                  # ceiling.u_orders / ceiling_u_orders; {orders} in SQL
      rows: 10000                   # loaded by prepare (and afresh by each run)
      columns:
        - {name: id, type: bigint primary key, load: seq}
        - {name: customer, type: int not null, load: int 1 500}
        - {name: note, type: varchar(80), load: text 10 80}
      indexes: [customer]
  requests:
    - name: new-order               # an operation of the result
      weight: 20                    # drawn in proportion (default 1)
      sql: INSERT INTO {orders} (id, customer, note) VALUES (?, ?, ?)
      args: [next orders, int 1 500, text 10 80]
    - name: lookup
      weight: 80
      sql: SELECT id, note FROM {orders} WHERE customer = ?
      args: [int 1 500]
    - name: move                    # several statements in one transaction
      transaction:
        - sql: UPDATE {orders} SET customer = ? WHERE id = ?
          args: [int 1 500, row orders]

Generators (load: and args:): seq (loading: 1 … rows), next TABLE (new ids
after the loaded rows, shared by the workers), row TABLE (a loaded row's
number), int A B, float A B [DECIMALS], text A B (letters), now, null,
int A B zipf S and row TABLE zipf S (skewed: the low end hot, S > 1),
ref K (the request's K-th argument again, counted over its statements),
col S C (column C of the first row an earlier statement S returned).
A type or sql may differ per engine: {postgres: …, mysql: …, sqlite: …,
default: …}. Placeholders are ? on every engine. A request returns rows
(counted as rows/s) when it is a SELECT, WITH, VALUES or has RETURNING;
otherwise its affected rows are counted. Requests may not be DDL; ceiling
creates, loads and drops only the file's tables, and runs the statements
as written. MB/min is not measured (the data volume of your statements is
not known). A checks: list of queries and the values they must return
(name, sql, want) is run after each run and by ceiling check custom.
think: D (for the file, or per request) makes the workers pause D after
each request, outside its latency; think: exp D draws a negative
exponential of mean D (truncated at 10 × D). Think times pace a closed
loop only (not --rate, --rates or knee).
examples/custom/orders.yaml and transfers.yaml in the source are fuller
examples; --scale multiplies every table's rows.`,
	New: func() workload.Workload { return &Custom{} },
}

// TablePrefix is put before the file's table names, inside ceiling's
// namespace.
const TablePrefix = "u_"

// Custom is the custom workload.
type Custom struct {
	Path  string  // --file
	Seed  uint64  // --seed
	Reuse bool    // --reuse: the tables as they are, not loaded afresh
	Scale float64 // --scale: the tables' rows × this

	spec *Spec
	text string         // the file as read
	pool string         // random letters that text values are cut from
	sum  string         // sha256 of the file, hex, first 12
	next []atomic.Int64 // per table: the last id handed out by next TABLE
	// shardI and shardN (run --shard I/N): next TABLE hands out the ids
	// ≡ shardI (mod shardN) only; shardN 0 when not sharded.
	shardI, shardN int
	solo           int // Isolate: 1 + the only request to run, 0 for the mix
}

var (
	_ workload.Workload       = (*Custom)(nil)
	_ workload.NoByteCounts   = (*Custom)(nil)
	_ workload.Isolator       = (*Custom)(nil)
	_ workload.TableOwner     = (*Custom)(nil)
	_ workload.Definer        = (*Custom)(nil)
	_ workload.PauseDeclarer  = (*Custom)(nil)
	_ workload.ClosedLoopOnly = (*Custom)(nil)
	_ workload.Pauser         = (*thinkWorker)(nil)
)

// WorkersPause implements workload.PauseDeclarer: a file with think
// times has workers that pause.
func (c *Custom) WorkersPause() bool { return c.spec != nil && c.spec.thinks }

// ClosedLoopOnly implements workload.ClosedLoopOnly: think times pace a
// closed loop's users; an open loop's schedule would ignore them.
func (c *Custom) ClosedLoopOnly() string {
	if c.WorkersPause() {
		return "the file's think times (think:)"
	}
	return ""
}

// Flags implements workload.Workload.
func (c *Custom) Flags(fs *pflag.FlagSet) {
	fs.StringVarP(&c.Path, "file", "f", "", "the workload file (YAML: tables and weighted requests; see examples/custom/)")
	fs.Uint64Var(&c.Seed, "seed", 1, "random seed for the loaded rows, the requests' arguments and their choice")
	c.Scale = 1
	fs.Var((*scaleValue)(&c.Scale), "scale", "multiply every table's rows by this (row TABLE and next TABLE follow; int A B ranges do not)")
	fs.BoolVar(&c.Reuse, "reuse", false, "run and knee: use the file's tables as they are (left by `ceiling prepare custom` or an earlier run) instead of loading a fresh copy; next TABLE continues after the highest value of TABLE's seq column")
}

// scaleValue is --scale: a factor above 0.
type scaleValue float64

func (v *scaleValue) String() string { return strconv.FormatFloat(float64(*v), 'g', -1, 64) }
func (v *scaleValue) Type() string   { return "factor" }
func (v *scaleValue) Set(s string) error {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || !(f > 0) || f > 1e6 {
		return fmt.Errorf("%q is not a factor above 0 (at most 1e6)", s)
	}
	*v = scaleValue(f)
	return nil
}

// Validate implements workload.Workload: it reads and checks the file.
func (c *Custom) Validate() error {
	if c.Path == "" {
		return errors.New("custom needs --file FILE: a YAML file of tables and weighted requests (see examples/custom/orders.yaml)")
	}
	data, err := os.ReadFile(c.Path)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fmt.Errorf("--file %s: %w", c.Path, err)
	}
	spec, err := Parse(data)
	if err != nil {
		return fmt.Errorf("--file %s: %s", c.Path, strings.ReplaceAll(err.Error(), "\n", "; "))
	}
	if c.Scale != 1 && c.Scale != 0 { // 0: not set (the flag starts at 1 and refuses 0)
		if err := spec.scale(c.Scale); err != nil {
			return fmt.Errorf("--scale %g: %w", c.Scale, err)
		}
	}
	sum := sha256.Sum256(data)
	c.spec, c.text, c.sum = spec, string(data), hex.EncodeToString(sum[:])[:12]
	// One pool of letters for every worker and the load: read only, so
	// shared without a lock (64 KiB per worker added up with -c 1000).
	c.pool = letterPool(rand.New(rand.NewPCG(c.Seed, 0x6c657474)), poolSize)
	c.next = make([]atomic.Int64, len(spec.tables))
	return nil
}

// ValidateCleanup implements workload.CleanupValidator: with --file,
// cleanup drops the file's tables; without, every table of a custom
// workload (OwnsTable), whatever file made it.
func (c *Custom) ValidateCleanup() error {
	if c.Path == "" {
		return nil
	}
	return c.Validate()
}

// OwnsTable implements workload.TableOwner: without a file, every custom
// workload's table (for cleanup).
func (c *Custom) OwnsTable(name string) bool {
	return c.spec == nil && strings.HasPrefix(name, TablePrefix)
}

// Spec is the file as read and checked (after Validate), or nil.
func (c *Custom) Spec() *Spec { return c.spec }

// Definition implements workload.Definer: the file as read.
func (c *Custom) Definition() string { return c.text }

// Reusable says that the workload offers --reuse.
func (*Custom) Reusable() bool { return true }

// ReadsOnly implements workload.Reader: every statement of every request
// only reads, as far as its words tell (readsOnly), in every engine's
// text.
func (c *Custom) ReadsOnly() bool {
	if c.spec == nil {
		return false
	}
	for _, r := range c.spec.requests {
		for _, st := range r.stmts {
			for _, text := range st.sql {
				if !readsOnly(text) {
					return false
				}
			}
		}
	}
	return true
}

// Reusing implements workload.Reader: --reuse (or a shard) takes the
// file's tables as they are.
func (c *Custom) Reusing() bool { return c.Reuse }

// writeWords are the words that make a statement a write, or one a
// read-only server refuses: data changes, SELECT … INTO a table, row
// locks (FOR UPDATE, FOR SHARE, LOCK IN SHARE MODE) and sequences.
var writeWords = map[string]bool{
	"insert": true, "update": true, "delete": true, "merge": true, "replace": true,
	"into": true, "share": true, "lock": true, "nextval": true, "setval": true,
	"create": true, "drop": true, "alter": true, "truncate": true, "call": true,
}

// readsOnly says whether a statement changes nothing, as far as its words
// tell: it starts with SELECT, WITH, VALUES, SHOW, TABLE or EXPLAIN and
// has none of writeWords (in a string literal too: when in doubt, it is
// a write).
func readsOnly(sql string) bool {
	words := strings.FieldsFunc(strings.ToLower(sql), func(r rune) bool {
		return !(r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	})
	if len(words) == 0 {
		return false
	}
	switch words[0] {
	case "select", "with", "values", "show", "table", "explain":
	default:
		return false
	}
	for _, w := range words {
		if writeWords[w] {
			return false
		}
	}
	return true
}

// NoByteCounts implements workload.NoByteCounts: the data volume of a
// user's statements is not known.
func (*Custom) NoByteCounts() {}

// Params implements workload.Workload.
func (c *Custom) Params() map[string]any {
	p := map[string]any{"file": c.Path, "seed": c.Seed, "reuse": c.Reuse, "scale": c.Scale}
	if c.spec == nil {
		return p
	}
	p["sha256"] = c.sum
	if d := strings.TrimSpace(c.spec.File.Description); d != "" {
		p["description"] = d
	}
	var tables, reqs []string
	for _, tb := range c.spec.tables {
		tables = append(tables, fmt.Sprintf("%s %d rows", tb.spec.Name, tb.spec.Rows))
	}
	for _, r := range c.spec.requests {
		kind := "statement"
		if r.txn {
			kind = fmt.Sprintf("transaction of %d statements", len(r.stmts))
		}
		reqs = append(reqs, fmt.Sprintf("%s ×%g (%s)", r.spec.Name, r.spec.weight(), kind))
	}
	p["tables"] = strings.Join(tables, ", ")
	p["requests"] = strings.Join(reqs, ", ")
	return p
}

// Ops implements workload.Workload: the requests' names.
func (c *Custom) Ops() []string {
	if c.spec == nil {
		return nil
	}
	ops := make([]string, len(c.spec.requests))
	for i, r := range c.spec.requests {
		ops[i] = r.spec.Name
	}
	return ops
}

// Tables implements workload.Workload.
func (c *Custom) Tables() []string {
	if c.spec == nil {
		return nil
	}
	var out []string
	for _, tb := range c.spec.tables {
		out = append(out, TablePrefix+tb.spec.Name)
	}
	return out
}

// Prepare implements workload.Workload: it creates the file's tables and
// their indexes and loads their rows.
func (c *Custom) Prepare(ctx context.Context, t target.Target, progress io.Writer) error {
	if c.spec == nil {
		return errors.New("custom: the file was not read (Validate)")
	}
	engine := t.Dialect().Engine
	// Every statement must have SQL for this engine before anything is
	// created.
	for _, r := range c.spec.requests {
		for _, st := range r.stmts {
			if _, ok := st.sql.For(engine); !ok {
				return fmt.Errorf("%s has no sql for %s (give one for %s, or a default)", st.where, engine, engine)
			}
		}
	}
	if c.Reuse {
		if err := c.reuse(ctx, t, progress); err != nil {
			return err
		}
		return c.tryRequests(ctx, t)
	}
	for _, tb := range c.spec.tables {
		var cols []string
		for _, col := range tb.spec.Columns {
			typ, ok := col.Type.For(engine)
			if !ok {
				return fmt.Errorf("table %s, column %s has no type for %s (give one for %s, or a default)", tb.spec.Name, col.Name, engine, engine)
			}
			cols = append(cols, col.Name+" "+typ)
		}
		name := TablePrefix + tb.spec.Name
		if err := t.Schema().CreateTable(ctx, name, strings.Join(cols, ", ")); err != nil {
			return fmt.Errorf("create table %s: %w", tb.spec.Name, err)
		}
		if err := c.load(ctx, t, tb, progress); err != nil {
			return err
		}
		for k, ix := range tb.spec.Indexes {
			if progress != nil && tb.spec.Rows >= loadChunk { // a while on a large table
				fmt.Fprintf(progress, "  indexing %s (%s)\n", tb.spec.Name, ix)
			}
			if err := t.Schema().CreateIndex(ctx, name, fmt.Sprintf("%s_ix%d", name, k+1), ix); err != nil {
				return fmt.Errorf("table %s: index (%s): %w", tb.spec.Name, ix, err)
			}
		}
		c.next[tb.index].Store(tb.spec.Rows)
	}
	return c.tryRequests(ctx, t)
}

// tryRequests runs each request once, in a transaction it rolls back, so
// that a statement the database refuses (a syntax error, a type it cannot
// infer, a column that is not there) is one error naming the request
// before the run, not every request of the run failing: the runner counts
// failures and goes on, as it must for the errors load causes. The ids
// next TABLE handed out are handed out again.
func (c *Custom) tryRequests(ctx context.Context, t target.Target) error {
	conn, err := t.Connect(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	saved := make([]int64, len(c.next))
	for i := range c.next {
		saved[i] = c.next[i].Load()
	}
	defer func() {
		for i := range c.next {
			c.next[i].Store(saved[i])
		}
	}()
	w, err := c.newWorker(t, conn, -1)
	if err != nil {
		return err
	}
	for i, r := range c.spec.requests {
		if err := conn.Begin(ctx); err != nil {
			return fmt.Errorf("try %s: %w", r.spec.Name, err)
		}
		for j, st := range r.stmts {
			if _, err := w.exec(ctx, &w.reqs[i], j); err != nil {
				_ = conn.Rollback(context.WithoutCancel(ctx))
				return fmt.Errorf("%s, tried once before the run: %w", st.where, err)
			}
		}
		if err := conn.Rollback(ctx); err != nil {
			return fmt.Errorf("try %s: roll back: %w", r.spec.Name, err)
		}
	}
	return nil
}

// Shard implements workload.Sharder: the shards take the file's tables as
// they are (as --reuse does), and next TABLE hands each shard the ids
// ≡ I (mod N) after the highest there is. Other draws (row, int, zipf, ref)
// are the file's own and may meet, as the same draws of two workers do.
func (c *Custom) Shard(i, n int) error {
	c.shardI, c.shardN, c.Reuse = i, n, true
	return nil
}

// nextStep is how far next TABLE moves: 1, or the shards' count.
func (c *Custom) nextStep() int64 {
	if c.shardN > 0 {
		return int64(c.shardN)
	}
	return 1
}

// reuse takes the file's tables as they are: each must be there (and
// ceiling's); next TABLE continues after the highest value of the table's
// seq column (the rows earlier runs inserted included), or after its
// declared rows when it has none. Row TABLE still draws from 1 … its
// declared rows.
func (c *Custom) reuse(ctx context.Context, t target.Target, progress io.Writer) error {
	have, err := t.Schema().Tables(ctx)
	if err != nil {
		return err
	}
	conn, err := t.Connect(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	d := t.Dialect()
	var notes []string
	for _, tb := range c.spec.tables {
		name := TablePrefix + tb.spec.Name
		if !slices.Contains(have, name) {
			if c.shardN > 0 { // a shard reuses without --reuse
				return fmt.Errorf("sharded run: no ceiling table %s: the shards start from the tables as prepared: run `ceiling prepare custom --file %s` once before starting them", d.Table(name), c.Path)
			}
			return fmt.Errorf("--reuse: no ceiling table %s: run `ceiling prepare custom --file %s` first, or leave out --reuse", d.Table(name), c.Path)
		}
		next := tb.spec.Rows
		for i, g := range tb.gens {
			if g.kind != genSeq {
				continue
			}
			col := tb.spec.Columns[i].Name
			hi, err := scalar(ctx, conn, "SELECT COALESCE(MAX("+col+"), 0) FROM "+d.Table(name))
			if err != nil {
				return fmt.Errorf("--reuse: the highest %s of %s: %w", col, d.Table(name), err)
			}
			next = max(next, hi)
			notes = append(notes, fmt.Sprintf("%s up to %s %d", tb.spec.Name, col, hi))
			break
		}
		c.next[tb.index].Store(next)
		if c.shardN > 0 {
			// The first id of this shard's class after next, less one step.
			n := int64(c.shardN)
			first := next + 1
			first += ((int64(c.shardI)-first)%n + n) % n
			c.next[tb.index].Store(first - n)
		}
	}
	if progress != nil {
		msg := "  reusing the file's tables as they are"
		if len(notes) > 0 {
			msg += " (" + strings.Join(notes, ", ") + ")"
		}
		fmt.Fprintln(progress, msg)
	}
	return nil
}

// scalar runs a query returning one integer.
func scalar(ctx context.Context, conn target.Conn, sql string) (int64, error) {
	var v int64
	ok, err := target.QueryRow(ctx, conn, sql, []any{&v})
	if err == nil && !ok {
		err = errors.New("no row")
	}
	return v, err
}

// loadChunk is how many rows one bulk call loads (one transaction, a
// progress line between calls when the load takes a while).
const loadChunk = 50_000

// rowsLoader is the whole-table load path of the server targets (COPY in
// text format, LOAD DATA): the server converts each value to its column's
// type, as it would a literal.
type rowsLoader interface {
	LoadRows(ctx context.Context, table string, cols []string, rows target.RowSource) (int64, error)
}

func (c *Custom) load(ctx context.Context, t target.Target, tb *table, progress io.Writer) error {
	n := tb.spec.Rows
	if n == 0 {
		return nil
	}
	conn, err := t.Connect(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	var bulk func(context.Context, string, []string, target.RowSource) (int64, error)
	switch l := conn.(type) {
	case rowsLoader:
		bulk = l.LoadRows
	case target.BulkInserter:
		bulk = l.BulkInsert
	default:
		return fmt.Errorf("load %s: the %s target has no bulk load path", tb.spec.Name, t.Dialect().Engine)
	}
	cols := make([]string, len(tb.spec.Columns))
	for i, col := range tb.spec.Columns {
		cols[i] = col.Name
	}
	rng := rand.New(rand.NewPCG(c.Seed, uint64(tb.index)+1<<32))
	src := &genRows{gens: tb.gens, z: zipfsOf(tb.gens, rng), rng: rng, pool: c.pool, vals: make([]any, len(tb.gens))}
	name := TablePrefix + tb.spec.Name
	start, last := time.Now(), time.Now()
	for first := int64(1); first <= n; first += loadChunk {
		src.next, src.last = first, min(first+loadChunk-1, n)
		got, err := bulk(ctx, name, cols, src)
		if err != nil {
			return fmt.Errorf("load %s at row %d: %w", tb.spec.Name, src.next, err)
		}
		if want := src.last - first + 1; got != want {
			return fmt.Errorf("load %s: %d of %d rows from %d loaded", tb.spec.Name, got, want, first)
		}
		if done := src.last; progress != nil && done < n && time.Since(last) >= 2*time.Second {
			last = time.Now()
			fmt.Fprintf(progress, "  loading %s: %d/%d rows (%.0f%%), %.0f rows/s\n", tb.spec.Name, done, n, 100*float64(done)/float64(n), float64(done)/time.Since(start).Seconds())
		}
	}
	return nil
}

// genRows is a target.RowSource of rows next … last of a table, each
// column's value from its generator.
type genRows struct {
	gens       []gen
	z          []*rand.Zipf // per gen: its skew, or nil
	rng        *rand.Rand
	pool       string
	vals       []any
	next, last int64
}

func (g *genRows) Next() bool {
	if g.next > g.last {
		return false
	}
	for i := range g.gens {
		gn := &g.gens[i]
		switch gn.kind {
		case genSeq:
			g.vals[i] = g.next
		case genRow, genInt:
			g.vals[i] = gn.int(g.rng, g.z[i])
		case genFloat:
			g.vals[i] = gn.float(g.rng)
		case genText:
			g.vals[i] = gn.text(g.rng, g.pool)
		case genNow:
			g.vals[i] = time.Now().UTC()
		default:
			g.vals[i] = nil
		}
	}
	g.next++
	return true
}

func (g *genRows) Values() ([]any, error) { return g.vals, nil }
func (g *genRows) Err() error             { return nil }

// NewWorker implements workload.Workload.
func (c *Custom) NewWorker(_ context.Context, t target.Target, conn target.Conn, id int) (workload.Worker, error) {
	w, err := c.newWorker(t, conn, id)
	if err != nil || !c.spec.thinks {
		return w, err
	}
	tw := &thinkWorker{worker: w}
	for _, r := range c.spec.requests {
		tw.thinks = append(tw.thinks, r.think)
	}
	return tw, nil
}

// newWorker is NewWorker without the think times.
func (c *Custom) newWorker(t target.Target, conn target.Conn, id int) (*worker, error) {
	if c.spec == nil {
		return nil, errors.New("custom: the file was not read (Validate)")
	}
	d := t.Dialect()
	rng := rand.New(rand.NewPCG(c.Seed, uint64(id)))
	w := &worker{c: c, conn: conn, rng: rng, pool: c.pool, weights: c.spec.weights, solo: c.solo, prev: -1}
	for _, r := range c.spec.requests {
		wr := wreq{txn: r.txn}
		for _, st := range r.stmts {
			text, ok := st.sql.For(d.Engine)
			if !ok {
				return nil, fmt.Errorf("%s has no sql for %s", st.where, d.Engine)
			}
			sql, err := rewrite(text, func(name string) (string, bool) {
				return d.Table(TablePrefix + name), true
			}, d.Placeholder)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", st.where, err)
			}
			ws := wstmt{sql: sql, gens: st.gens, z: zipfsOf(st.gens, rng), slots: make([]slot, len(st.gens)), args: make([]any, len(st.gens))}
			ws.query = returnsRows(sql)
			for k := range ws.gens {
				kind := ws.gens[k].kind
				if kind == genRef {
					kind = ws.gens[k].refKind
				}
				ws.args[k] = ws.slots[k].arg(kind)
			}
			wr.stmts = append(wr.stmts, ws)
		}
		// The statements whose first row a later one takes (col S C).
		wr.caps = make([][]any, len(wr.stmts))
		for i := range wr.stmts {
			for _, g := range wr.stmts[i].gens {
				if g.kind != genCol {
					continue
				}
				src := &wr.stmts[g.colStmt]
				if !src.query {
					return nil, fmt.Errorf("%s: col %d %d: statement %d returns no rows (a SELECT, WITH, VALUES or RETURNING does)", r.stmts[i].where, g.colStmt+1, g.colIdx+1, g.colStmt+1)
				}
				src.needCols = max(src.needCols, g.colIdx+1)
			}
		}
		w.reqs = append(w.reqs, wr)
	}
	return w, nil
}

// returnsRows says whether a statement is read with Query (its rows
// counted) rather than Exec (its affected rows counted): SELECT, WITH,
// VALUES, SHOW, and anything with RETURNING.
func returnsRows(sql string) bool {
	f := strings.Fields(strings.ToLower(sql))
	if len(f) == 0 {
		return false
	}
	switch strings.TrimLeft(f[0], "(") {
	case "select", "with", "values", "show", "table", "explain":
		return true
	}
	for _, w := range f {
		if w == "returning" {
			return true
		}
	}
	return false
}

type worker struct {
	c       *Custom
	conn    target.Conn
	rng     *rand.Rand
	pool    string
	weights []float64
	reqs    []wreq
	solo    int
	prev    int // the last request's index, -1 before the first
}

// thinkWorker is a worker of a file with think times: a workload.Pauser.
// Workers of a file without are not, so that the runner may serve several
// of them from one thread (a pause would hold the others up).
type thinkWorker struct {
	*worker
	thinks []think // per request
	timer  *time.Timer
}

// Pause implements workload.Pauser: it waits the think time of the
// worker's previous request (none before the first, nor while one request
// runs alone after the measured mix: --isolate measures its cost).
func (w *thinkWorker) Pause(ctx context.Context) error {
	if w.prev < 0 || w.solo > 0 {
		return nil
	}
	d := w.thinks[w.prev].draw(w.rng)
	if d <= 0 {
		return nil
	}
	return workload.Wait(ctx, &w.timer, d)
}

type wreq struct {
	txn   bool
	stmts []wstmt
	// caps holds, per statement, the first row it returned this request
	// when a later statement takes a column of it (col S C); nil when it
	// returned none.
	caps [][]any
}

type wstmt struct {
	sql      string
	query    bool
	needCols int // columns a later statement takes from its first row (col S C); 0: none
	gens     []gen
	z        []*rand.Zipf // per gen: its skew, or nil
	slots    []slot
	args     []any
}

// Do implements workload.Worker: one request of the mix, drawn by weight.
func (w *worker) Do(ctx context.Context) (workload.Result, error) {
	op := w.solo - 1
	if op < 0 {
		x := w.rng.Float64()
		op = 0
		for op < len(w.weights)-1 && x >= w.weights[op] {
			op++
		}
	}
	r := &w.reqs[op]
	res := workload.Result{Op: op}
	w.prev = op
	if r.txn {
		if err := w.conn.Begin(ctx); err != nil {
			return res, err
		}
	}
	for i := range r.stmts {
		n, err := w.exec(ctx, r, i)
		if err != nil {
			if r.txn {
				_ = w.conn.Rollback(context.WithoutCancel(ctx))
			}
			return res, err
		}
		res.Rows += n
	}
	if r.txn {
		if err := w.conn.Commit(ctx); err != nil {
			// Most engines end the transaction on a failed commit; one
			// that does not must not leave it open for the next request.
			_ = w.conn.Rollback(context.WithoutCancel(ctx))
			return res, err
		}
	}
	return res, nil
}

// exec sets the statement's arguments and runs it, returning the rows it
// affected or returned.
func (w *worker) exec(ctx context.Context, r *wreq, i int) (int64, error) {
	st := &r.stmts[i]
	w.fill(r, st)
	if !st.query {
		return w.conn.Exec(ctx, st.sql, st.args...)
	}
	rows, err := w.conn.Query(ctx, st.sql, st.args...)
	if err != nil {
		return 0, err
	}
	var n int64
	if st.needCols > 0 {
		r.caps[i] = nil
	}
	for rows.Next() {
		if n++; n == 1 && st.needCols > 0 {
			if r.caps[i], err = firstRow(rows, st.needCols, i); err != nil {
				_ = rows.Close()
				return 0, err
			}
		}
	}
	if err := rows.Err(); err != nil {
		_ = rows.Close()
		return n, err
	}
	return n, rows.Close()
}

// firstRow is the current row's values, for a later statement's col S C
// (which allocates: the values are decoded); it must have cols columns.
func firstRow(rows target.Rows, cols, i int) ([]any, error) {
	vr, ok := rows.(target.ValueRows)
	if !ok {
		return nil, errors.New("col S C: this target cannot give a row's values")
	}
	vals, err := vr.Values()
	if err != nil {
		return nil, err
	}
	if len(vals) < cols {
		return nil, fmt.Errorf("col %d %d: statement %d returned %d columns", i+1, cols, i+1, len(vals))
	}
	return vals, nil
}

// fill draws the arguments of st, a statement of request r, into its
// slots, without allocating.
func (w *worker) fill(r *wreq, st *wstmt) {
	for k := range st.gens {
		g, s := &st.gens[k], &st.slots[k]
		switch g.kind {
		case genNext:
			s.i = w.c.next[g.table.index].Add(w.c.nextStep())
		case genRow, genInt:
			s.i = g.int(w.rng, st.z[k])
		case genFloat:
			s.f = g.float(w.rng)
		case genText:
			s.s = g.text(w.rng, w.pool)
		case genNow:
			s.t = time.Now()
		case genRef: // an earlier argument of the request: already drawn
			*s = r.stmts[g.refStmt].slots[g.refArg]
		case genCol: // an earlier statement's first row: already read
			var v any
			if row := r.caps[g.colStmt]; row != nil {
				v = row[g.colIdx]
			}
			st.args[k] = v
		}
	}
}

// Isolate implements workload.Isolator: workers made from now on run only
// request op (-1: the mix).
func (c *Custom) Isolate(op int) {
	if c.spec == nil || op < 0 || op >= len(c.spec.requests) {
		op = -1
	}
	c.solo = op + 1
}

// IsolationBudget implements workload.Isolator: no request of a file is
// bounded by its data (a delete that finds nothing still runs).
func (c *Custom) IsolationBudget(context.Context, target.Target, int, int) (int64, string, error) {
	return 0, "", nil
}
