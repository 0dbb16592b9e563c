package custom

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/ceiling-db/ceiling/internal/workload"
)

// File is a workload file as written: the tables ceiling creates and
// loads, and the weighted requests the workers send.
type File struct {
	Description string        `yaml:"description"`
	Tables      []TableSpec   `yaml:"tables"`
	Requests    []RequestSpec `yaml:"requests"`
	Checks      []CheckSpec   `yaml:"checks"`
	// Think is every request's think time unless it has its own (see
	// parseThink): a closed loop's worker waits it after the request.
	Think string `yaml:"think"`
}

// CheckSpec is a consistency condition of the file's data: a query whose
// first column of its first row must equal Want (`ceiling check custom`,
// and after each run).
type CheckSpec struct {
	Name string    `yaml:"name"`
	SQL  PerEngine `yaml:"sql"`
	Want yaml.Node `yaml:"want"` // a number or a text, as written
}

// TableSpec is one table of the file. Its rows are loaded by prepare, row
// by row from the columns' load generators.
type TableSpec struct {
	Name    string       `yaml:"name"`
	Rows    int64        `yaml:"rows"`
	Columns []ColumnSpec `yaml:"columns"`
	// Indexes are the column lists of secondary indexes ("customer",
	// "customer, placed").
	Indexes []string `yaml:"indexes"`
}

// ColumnSpec is one column: its SQL type (with constraints, e.g. "bigint
// primary key"), per engine where they differ, and the generator of its
// values when the table is loaded.
type ColumnSpec struct {
	Name string    `yaml:"name"`
	Type PerEngine `yaml:"type"`
	Load yaml.Node `yaml:"load"` // a generator; read with loadGen
}

// RequestSpec is one kind of request: one statement (SQL with Args) run on
// its own, or a Transaction of several run between BEGIN and COMMIT.
type RequestSpec struct {
	Name        string     `yaml:"name"`
	Weight      *float64   `yaml:"weight"`
	SQL         PerEngine  `yaml:"sql"`
	Args        Gens       `yaml:"args"`
	Transaction []StmtSpec `yaml:"transaction"`
	Think       string     `yaml:"think"` // this request's think time (see parseThink)
}

// StmtSpec is one statement of a transaction.
type StmtSpec struct {
	SQL  PerEngine `yaml:"sql"`
	Args Gens      `yaml:"args"`
}

// loadGen is a column's load generator as written ("" when none); a
// bare null (which YAML reads as no value) is the null generator.
func loadGen(n *yaml.Node) (string, error) {
	switch {
	case n.Kind == 0:
		return "", nil
	case n.Kind != yaml.ScalarNode:
		return "", fmt.Errorf("line %d: a generator is one text, e.g. int 1 10", n.Line)
	case n.Tag == "!!null":
		return "null", nil
	}
	return n.Value, nil
}

// Gens is a list of generators as written. YAML would read a bare null
// (or ~) as no value at all: it is the null generator.
type Gens []string

// UnmarshalYAML implements yaml.Unmarshaler.
func (g *Gens) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.SequenceNode {
		return fmt.Errorf("line %d: args must be a list of generators, e.g. [row orders, int 1 10]", n.Line)
	}
	out := make(Gens, len(n.Content))
	for i, c := range n.Content {
		if c.Kind != yaml.ScalarNode {
			return fmt.Errorf("line %d: a generator is one text, e.g. int 1 10", c.Line)
		}
		out[i] = c.Value
		if c.Tag == "!!null" && c.Value != "" {
			out[i] = "null"
		}
	}
	*g = out
	return nil
}

// PerEngine is SQL text that may differ between engines: one string for
// every engine, or a mapping from engine (postgres, mysql, sqlite; default
// for the others) to text.
type PerEngine map[string]string

// engineKeys are the keys a PerEngine mapping may use.
var engineKeys = []string{"postgres", "mysql", "sqlite", "default"}

const anyEngine = "default"

// UnmarshalYAML implements yaml.Unmarshaler.
func (p *PerEngine) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		*p = PerEngine{anyEngine: n.Value}
		return nil
	case yaml.MappingNode:
		m := map[string]string{}
		if err := n.Decode(&m); err != nil {
			return err
		}
		for k := range m {
			if !contains(engineKeys, k) {
				return fmt.Errorf("line %d: %q is not an engine: use %s", n.Line, k, strings.Join(engineKeys, ", "))
			}
		}
		*p = m
		return nil
	}
	return fmt.Errorf("line %d: expected SQL text, or a mapping of engine to SQL text", n.Line)
}

// For returns the text for engine, and whether there is one.
func (p PerEngine) For(engine string) (string, bool) {
	if s, ok := p[engine]; ok {
		return s, true
	}
	s, ok := p[anyEngine]
	return s, ok
}

func (p PerEngine) texts() []string {
	var out []string
	for _, k := range engineKeys {
		if s, ok := p[k]; ok {
			out = append(out, s)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// identRE is what a table, column or request name may be: lower case so
// that no engine needs it quoted, short enough for MySQL's 64 characters
// with ceiling's prefixes.
var (
	identRE    = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,39}$`)
	opNameRE   = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,29}$`)
	indexColRE = regexp.MustCompile(`^[a-z_][a-z0-9_]*(\s*,\s*[a-z_][a-z0-9_]*)*$`)
)

// Parse reads a workload file and checks everything that does not depend
// on the engine. Every problem found is reported, one per line, naming
// where it is.
func Parse(data []byte) (*Spec, error) {
	var f File
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("not a workload file: %s", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	return compile(&f)
}

// Spec is a checked workload file.
type Spec struct {
	File     *File
	tables   []*table
	requests []*request
	weights  []float64 // cumulative, normalised to 1
	thinks   bool      // a request has a think time
}

type table struct {
	spec  *TableSpec
	gens  []gen // one per column
	index int
}

type request struct {
	spec  *RequestSpec
	stmts []stmt
	txn   bool
	think think
}

// think is a think time: a worker's deliberate wait after a request, as a
// user reads the answer before the next click (TPC-C's think times).
type think struct {
	d   time.Duration // 0: none
	exp bool          // d is the mean of a negative exponential, truncated at 10 × d
}

// maxThink bounds a think time (its mean for exp).
const maxThink = time.Hour

// parseThink reads a think time: a duration ("200ms", "2s"; "0" for none)
// or "exp D", a negative exponential draw of mean D truncated at 10 × D,
// as TPC-C's think times (clause 5.2.5).
func parseThink(text string) (think, error) {
	f := strings.Fields(text)
	var t think
	if len(f) == 2 && f[0] == "exp" {
		t.exp = true
		f = f[1:]
	}
	if len(f) != 1 {
		return t, fmt.Errorf("think %q: give a duration (200ms, 2s) or exp and a mean (exp 200ms)", text)
	}
	if f[0] == "0" {
		return think{}, nil
	}
	d, err := time.ParseDuration(f[0])
	if err != nil || d < 0 || d > maxThink {
		return t, fmt.Errorf("think %q: %q is not a duration from 0 to %v (200ms, 2s)", text, f[0], maxThink)
	}
	if d == 0 {
		return think{}, nil
	}
	t.d = d
	return t, nil
}

// draw returns one think time.
func (t think) draw(rng *rand.Rand) time.Duration {
	if !t.exp || t.d == 0 {
		return t.d
	}
	return workload.ThinkTime(rng, t.d)
}

type stmt struct {
	sql   PerEngine // with {table} names still in it
	gens  []gen
	nargs int    // as written (gens lacks those that did not compile)
	where string // "request new-order" or "request transfer, statement 2"
}

func compile(f *File) (*Spec, error) {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	s := &Spec{File: f}
	if len(f.Requests) == 0 {
		bad("no requests: the file needs a requests list, each with a name and its sql (or a transaction of statements)")
	}
	byName := map[string]*table{}
	for i := range f.Tables {
		ts := &f.Tables[i]
		where := placeOf("table", i, ts.Name)
		switch {
		case !identRE.MatchString(ts.Name):
			bad("%s: name %q must be 1-40 lower-case letters, digits or _, starting with a letter or _", where, ts.Name)
		case byName[ts.Name] != nil:
			bad("%s: declared twice", where)
		}
		if ts.Rows < 0 {
			bad("%s: rows must be 0 or more, got %d", where, ts.Rows)
		}
		if len(ts.Columns) == 0 {
			bad("%s: no columns", where)
		}
		tb := &table{spec: ts, index: i}
		byName[ts.Name] = tb
		s.tables = append(s.tables, tb)
	}
	for _, tb := range s.tables {
		ts := tb.spec
		cols := map[string]bool{}
		for j, c := range ts.Columns {
			where := fmt.Sprintf("table %s, column %d", ts.Name, j+1)
			if !identRE.MatchString(c.Name) {
				bad("%s: name %q must be 1-40 lower-case letters, digits or _, starting with a letter or _", where, c.Name)
			} else if cols[c.Name] {
				bad("%s: %s declared twice", where, c.Name)
			}
			cols[c.Name] = true
			if len(c.Type) == 0 {
				bad("%s (%s): no type (e.g. type: bigint primary key)", where, c.Name)
			}
			load, err := loadGen(&c.Load)
			if err != nil {
				bad("%s (%s): load: %v", where, c.Name, err)
				continue
			}
			if load == "" {
				bad("%s (%s): no load generator (e.g. load: seq, or load: int 1 1000)", where, c.Name)
				continue
			}
			g, err := parseGen(load, byName, true)
			if err != nil {
				bad("%s (%s): load: %v", where, c.Name, err)
				continue
			}
			tb.gens = append(tb.gens, g)
		}
		for _, ix := range ts.Indexes {
			if !indexColRE.MatchString(strings.TrimSpace(ix)) {
				bad("table %s: index %q must be a comma-separated list of its columns", ts.Name, ix)
				continue
			}
			for _, col := range strings.Split(ix, ",") {
				if col = strings.TrimSpace(col); !cols[col] {
					bad("table %s: index %q names %s, which is not a column of the table", ts.Name, ix, col)
				}
			}
		}
	}
	var fileThink think
	if f.Think != "" {
		var err error
		if fileThink, err = parseThink(f.Think); err != nil {
			bad("%v", err)
		}
	}
	names := map[string]bool{}
	total := 0.0
	for i := range f.Requests {
		rs := &f.Requests[i]
		where := namedOnce("request", i, rs.Name, names, bad)
		if rs.Name == "total" {
			bad("%s: total is the name of the summary's row of all requests; call the request something else", where)
		}
		w := rs.weight()
		if !(w > 0) || w > 1e9 {
			bad("%s: weight must be above 0, got %g", where, w)
		}
		total += w
		r := &request{spec: rs, think: fileThink}
		if rs.Think != "" {
			t, err := parseThink(rs.Think)
			if err != nil {
				bad("%s: %v", where, err)
			}
			r.think = t
		}
		s.thinks = s.thinks || r.think.d > 0
		switch {
		case len(rs.Transaction) > 0 && (len(rs.SQL) > 0 || len(rs.Args) > 0):
			bad("%s: give either sql (one statement) or transaction (a list of statements), not both", where)
		case len(rs.Transaction) > 0:
			r.txn = true
			for j, st := range rs.Transaction {
				r.stmts = append(r.stmts, stmt{sql: st.SQL, nargs: len(st.Args), where: fmt.Sprintf("%s, statement %d", where, j+1)})
				r.stmts[j].gens = compileArgs(st.Args, r.stmts[j].where, byName, bad)
			}
		case len(rs.SQL) > 0:
			r.stmts = []stmt{{sql: rs.SQL, nargs: len(rs.Args), where: where}}
			r.stmts[0].gens = compileArgs(rs.Args, where, byName, bad)
		default:
			bad("%s: no sql (or transaction)", where)
		}
		for i := range r.stmts {
			st := &r.stmts[i]
			for k, g := range st.gens {
				if g.kind == genCol && g.colStmt >= i {
					bad("%s, argument %d: col %d %d: the statement must be an earlier one of the request (1 … %d)", st.where, k+1, g.colStmt+1, g.colIdx+1, i)
				}
			}
		}
		resolveRefs(r, bad)
		for _, st := range r.stmts {
			if len(st.sql) == 0 {
				bad("%s: no sql", st.where)
			}
			for _, text := range st.sql.texts() {
				checkSQL(text, st.nargs, st.where, byName, bad)
			}
		}
		s.requests = append(s.requests, r)
	}
	checks := map[string]bool{}
	for i := range f.Checks {
		c := &f.Checks[i]
		where := namedOnce("check", i, c.Name, checks, bad)
		if c.Want.Kind != yaml.ScalarNode || c.Want.Tag == "!!null" {
			bad("%s: want must be the value the query returns (a number or a text)", where)
		}
		if len(c.SQL) == 0 {
			bad("%s: no sql", where)
		}
		for _, text := range c.SQL.texts() {
			checkSQL(text, 0, where, byName, bad)
			if !returnsRows(text) {
				bad("%s: the sql must return a row (a SELECT)", where)
			}
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	acc := 0.0
	for _, r := range s.requests {
		acc += r.spec.weight()
		s.weights = append(s.weights, acc/total)
	}
	s.weights[len(s.weights)-1] = 1
	return s, nil
}

// scale multiplies every table's rows by f (rounded, at least 1 where
// there were any), and the row TABLE generators' ranges with them.
func (s *Spec) scale(f float64) error {
	for _, tb := range s.tables {
		if tb.spec.Rows == 0 {
			continue
		}
		n := math.Round(float64(tb.spec.Rows) * f)
		if n > 1e12 {
			return fmt.Errorf("table %s would have %.0f rows", tb.spec.Name, n)
		}
		tb.spec.Rows = max(int64(n), 1)
	}
	fix := func(gens []gen) {
		for i := range gens {
			if g := &gens[i]; g.kind == genRow {
				g.hi = g.table.spec.Rows
			}
		}
	}
	for _, tb := range s.tables {
		fix(tb.gens)
	}
	for _, r := range s.requests {
		for i := range r.stmts {
			fix(r.stmts[i].gens)
		}
	}
	return nil
}

// placeOf names the i-th (0-based) item of a kind for an error: by its
// name, or by its number when it has none.
func placeOf(kind string, i int, name string) string {
	if name == "" {
		return fmt.Sprintf("%s %d", kind, i+1)
	}
	return kind + " " + name
}

// namedOnce checks the name of the i-th item of a kind (a request, a
// check): its form, and that seen does not hold it yet; it adds it and
// returns how errors name the item.
func namedOnce(kind string, i int, name string, seen map[string]bool, bad func(string, ...any)) string {
	where := placeOf(kind, i, name)
	switch {
	case !opNameRE.MatchString(name):
		bad("%s: name %q must be 1-30 lower-case letters, digits, - or _, starting with a letter", where, name)
	case seen[name]:
		bad("%s: declared twice", where)
	}
	seen[name] = true
	return where
}

// weight is the request's weight, 1 when the file gives none.
func (r *RequestSpec) weight() float64 {
	if r.Weight == nil {
		return 1
	}
	return *r.Weight
}

// resolveRefs points each ref K of r at the K-th argument of the
// request (over its statements in order), which must come before it; a
// ref to a ref takes that one's target.
func resolveRefs(r *request, bad func(string, ...any)) {
	type pos struct{ stmt, arg int }
	var flat []pos
	for i := range r.stmts {
		st := &r.stmts[i]
		if len(st.gens) != st.nargs {
			return // an argument did not compile: positions are unknown
		}
		for k := range st.gens {
			g := &st.gens[k]
			if g.kind == genRef {
				n := int(g.lo)
				if n > len(flat) {
					bad("%s, argument %d: ref %d: the request has %d arguments before this one", st.where, k+1, n, len(flat))
					flat = append(flat, pos{i, k})
					continue
				}
				to := flat[n-1]
				tg := &r.stmts[to.stmt].gens[to.arg]
				g.refStmt, g.refArg, g.refKind = to.stmt, to.arg, tg.kind
				switch tg.kind {
				case genRef:
					g.refStmt, g.refArg, g.refKind = tg.refStmt, tg.refArg, tg.refKind
				case genCol: // the same column again
					*g = *tg
				}
			}
			flat = append(flat, pos{i, k})
		}
	}
}

func compileArgs(args Gens, where string, byName map[string]*table, bad func(string, ...any)) []gen {
	var gens []gen
	for k, a := range args {
		g, err := parseGen(a, byName, false)
		if err != nil {
			bad("%s, argument %d: %v", where, k+1, err)
			continue
		}
		gens = append(gens, g)
	}
	return gens
}

// ddlWords start statements that change objects: a request must not, as
// ceiling only ever touches the tables it made (prepare makes them).
var ddlWords = []string{"create", "drop", "alter", "truncate", "rename", "grant", "revoke"}

// dollarMark is PostgreSQL's own placeholder, $1, which a file's SQL
// does not use (it writes ?).
var dollarMark = regexp.MustCompile(`\$[0-9]`)

// checkSQL checks one statement's text: its {table} names are the file's
// tables, its ? placeholders as many as its args, and it is no DDL.
func checkSQL(text string, nargs int, where string, byName map[string]*table, bad func(string, ...any)) {
	if strings.TrimSpace(text) == "" {
		bad("%s: empty sql", where)
		return
	}
	first := strings.ToLower(strings.Fields(text)[0])
	if contains(ddlWords, first) {
		bad("%s: %s statements are not requests: ceiling creates the file's tables itself (prepare) and touches nothing else", where, strings.ToUpper(first))
	}
	marks := 0
	var unknown []string
	_, err := rewrite(text, func(name string) (string, bool) {
		if byName[name] == nil {
			unknown = append(unknown, name)
			return "", false
		}
		return name, true
	}, func(int) string { marks++; return "?" })
	if err != nil {
		bad("%s: %v", where, err)
		return
	}
	for _, u := range unknown {
		bad("%s: {%s} is not a table of the file (tables are named {name}, as declared under tables)", where, u)
	}
	if marks != nargs {
		hint := ""
		if dollarMark.MatchString(text) {
			hint = " (write ? for each argument, on every engine: ceiling makes them $1, $2 … on PostgreSQL itself)"
		}
		bad("%s: the sql has %d ? placeholders but %d args%s", where, marks, nargs, hint)
	}
}

// rewrite copies SQL text, replacing each {name} with table(name) and
// each ? with mark(n) (n counts from 1), outside quoted strings, quoted
// identifiers and comments, which are copied as they are.
func rewrite(text string, table func(string) (string, bool), mark func(int) string) (string, error) {
	var b strings.Builder
	n := 0
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case c == '\'' || c == '"' || c == '`':
			j := i + 1
			for j < len(text) {
				if text[j] == c {
					if j+1 < len(text) && text[j+1] == c { // doubled quote
						j += 2
						continue
					}
					break
				}
				if text[j] == '\\' && c != '"' {
					j++
				}
				j++
			}
			if j >= len(text) {
				return "", fmt.Errorf("unterminated %c quote", c)
			}
			b.WriteString(text[i : j+1])
			i = j
		case c == '-' && i+1 < len(text) && text[i+1] == '-':
			j := strings.IndexByte(text[i:], '\n')
			if j < 0 {
				j = len(text) - i
			}
			b.WriteString(text[i : i+j])
			i += j - 1
		case c == '/' && i+1 < len(text) && text[i+1] == '*':
			j := strings.Index(text[i+2:], "*/")
			if j < 0 {
				return "", errors.New("unterminated /* comment")
			}
			b.WriteString(text[i : i+2+j+2])
			i += 2 + j + 1
		case c == '?':
			n++
			b.WriteString(mark(n))
		case c == '{':
			j := strings.IndexByte(text[i:], '}')
			if j < 0 {
				return "", errors.New("unclosed { (tables are named {name})")
			}
			name := text[i+1 : i+j]
			if !identRE.MatchString(name) {
				return "", fmt.Errorf("{%s}: tables are named {name}, lower case", name)
			}
			q, ok := table(name)
			if ok {
				b.WriteString(q)
			}
			i += j
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}
