package custom

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// A gen makes one value: a column's while its table loads, or a
// statement's argument for each request.
//
//	seq          (load) the row's number, 1 … rows
//	next T       (requests) a new id of table T: rows(T)+1, +2 … shared by the workers
//	row T        a row number of T drawn uniformly from 1 … rows(T)
//	int A B      an integer drawn uniformly from A … B
//	… zipf S     (int, row) drawn with Zipf's law instead: value A+k with
//	             probability ∝ (1+k)^-S, the low end hot (S > 1)
//	float A B    a float drawn uniformly from [A, B)
//	float A B D  the same rounded to D decimals (for a decimal column: MySQL
//	             warns about, and the load refuses, digits the column drops)
//	text A B     A … B random letters
//	now          the current time
//	null         NULL
//	col S C      (requests) column C of the first row statement S of the
//	             request returned (an earlier statement, one that returns
//	             rows); NULL when it returned none. The id a SELECT found,
//	             updated by the next statement.
//	ref K        (requests) the value of the request's K-th argument, counted
//	             from 1 over its statements in order (an earlier one): the
//	             new order's id again in the order's lines
type gen struct {
	kind     genKind
	lo, hi   int64
	flo, fhi float64
	scale    float64 // float A B D: 10^D; 0 for no rounding
	zipfS    float64 // int, row: zipf S; 0 for uniform
	table    *table  // next, row (row: lo 1, hi its rows)
	// ref K: the argument it repeats (statement and argument index in the
	// request) and that argument's own kind (never genRef).
	refStmt, refArg int
	refKind         genKind
	// col S C: the statement and column (0-based) it takes.
	colStmt, colIdx int
}

type genKind uint8

const (
	genSeq genKind = iota
	genNext
	genRow
	genInt
	genFloat
	genText
	genNow
	genNull
	genRef
	genCol
)

// maxText is the longest text a generator makes.
const maxText = 8000

const genHelp = "seq, next TABLE, row TABLE [zipf S], int A B [zipf S], float A B [DECIMALS], text A B, now, null, ref K or col S C"

func parseGen(s string, tables map[string]*table, load bool) (gen, error) {
	f := strings.Fields(s)
	if len(f) == 0 {
		return gen{}, fmt.Errorf("empty generator: use %s", genHelp)
	}
	// int A B zipf S, row T zipf S: skewed towards the low end.
	var zipfS float64
	if n := len(f); n >= 3 && f[n-2] == "zipf" {
		if f[0] != "int" && f[0] != "row" {
			return gen{}, fmt.Errorf("%q: zipf S skews int A B and row TABLE only", s)
		}
		v, err := strconv.ParseFloat(f[n-1], 64)
		if err != nil || !(v > 1) || v > 100 {
			return gen{}, fmt.Errorf("%q: zipf S needs S above 1 (1.1: mildly skewed … 3: a few values take most draws)", s)
		}
		zipfS, f = v, f[:n-2]
	}
	want := func(n int, form string) error {
		if len(f) != n {
			return fmt.Errorf("%q: expected %s", s, form)
		}
		return nil
	}
	tableOf := func(form string) (*table, error) {
		if err := want(2, form); err != nil {
			return nil, err
		}
		tb := tables[f[1]]
		if tb == nil {
			return nil, fmt.Errorf("%q: %s is not a table of the file", s, f[1])
		}
		return tb, nil
	}
	ints := func(form string) (int64, int64, error) {
		if err := want(3, form); err != nil {
			return 0, 0, err
		}
		a, err1 := strconv.ParseInt(f[1], 10, 64)
		b, err2 := strconv.ParseInt(f[2], 10, 64)
		if err1 != nil || err2 != nil {
			return 0, 0, fmt.Errorf("%q: A and B must be integers", s)
		}
		if a > b {
			return 0, 0, fmt.Errorf("%q: A must not be above B", s)
		}
		return a, b, nil
	}
	switch f[0] {
	case "seq":
		if !load {
			return gen{}, fmt.Errorf("seq numbers rows as they are loaded; a request takes next TABLE (a new id) or row TABLE (a loaded one)")
		}
		return gen{kind: genSeq}, want(1, "seq")
	case "next":
		if load {
			return gen{}, fmt.Errorf("next TABLE is for requests (new ids after the loaded rows); a loaded row takes seq")
		}
		tb, err := tableOf("next TABLE")
		return gen{kind: genNext, table: tb}, err
	case "row":
		tb, err := tableOf("row TABLE [zipf S]")
		if err != nil {
			return gen{}, err
		}
		if tb.spec.Rows <= 0 {
			return gen{}, fmt.Errorf("%q: table %s loads no rows to draw from", s, tb.spec.Name)
		}
		return gen{kind: genRow, table: tb, lo: 1, hi: tb.spec.Rows, zipfS: zipfS}, nil
	case "int":
		a, b, err := ints("int A B [zipf S]")
		if err == nil && b-a < 0 { // overflow: the range does not fit
			err = fmt.Errorf("%q: range too wide", s)
		}
		return gen{kind: genInt, lo: a, hi: b, zipfS: zipfS}, err
	case "float":
		if len(f) != 3 && len(f) != 4 {
			return gen{}, fmt.Errorf("%q: expected float A B, or float A B DECIMALS", s)
		}
		a, err1 := strconv.ParseFloat(f[1], 64)
		b, err2 := strconv.ParseFloat(f[2], 64)
		if err1 != nil || err2 != nil || a > b || math.IsInf(a, 0) || math.IsInf(b, 0) {
			return gen{}, fmt.Errorf("%q: A and B must be numbers, A not above B", s)
		}
		g := gen{kind: genFloat, flo: a, fhi: b}
		if len(f) == 4 {
			d, err := strconv.Atoi(f[3])
			if err != nil || d < 0 || d > 15 {
				return gen{}, fmt.Errorf("%q: DECIMALS must be 0 … 15", s)
			}
			g.scale = math.Pow10(d)
		}
		return g, nil
	case "text":
		a, b, err := ints("text A B")
		if err == nil && (a < 0 || b > maxText) {
			err = fmt.Errorf("%q: lengths must be 0 … %d", s, maxText)
		}
		return gen{kind: genText, lo: a, hi: b}, err
	case "now":
		return gen{kind: genNow}, want(1, "now")
	case "null":
		return gen{kind: genNull}, want(1, "null")
	case "col":
		if load {
			return gen{}, fmt.Errorf("col S C takes a column an earlier statement of the request returned; a loaded column takes another generator")
		}
		if err := want(3, "col S C"); err != nil {
			return gen{}, err
		}
		st, err1 := strconv.Atoi(f[1])
		c, err2 := strconv.Atoi(f[2])
		if err1 != nil || err2 != nil || st < 1 || c < 1 {
			return gen{}, fmt.Errorf("%q: S and C count statements and columns from 1", s)
		}
		return gen{kind: genCol, colStmt: st - 1, colIdx: c - 1}, nil
	case "ref":
		if load {
			return gen{}, fmt.Errorf("ref K repeats a request's argument; a loaded column takes another generator")
		}
		if err := want(2, "ref K"); err != nil {
			return gen{}, err
		}
		k, err := strconv.Atoi(f[1])
		if err != nil || k < 1 {
			return gen{}, fmt.Errorf("%q: K must be the number of an earlier argument of the request, from 1", s)
		}
		return gen{kind: genRef, lo: int64(k)}, nil
	}
	return gen{}, fmt.Errorf("%q: unknown generator: use %s", s, genHelp)
}

// letters are what text values are cut from: the workload holds one
// random string of them, shared read-only, and takes substrings (which
// share its memory), so a request allocates nothing for its text.
const letters = "abcdefghijklmnopqrstuvwxyz"

func letterPool(rng *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = letters[rng.IntN(len(letters))]
	}
	return string(b)
}

// poolSize is the length of a worker's letter pool.
const poolSize = 1<<16 + maxText

// int draws an int or row value: from z when the generator is skewed
// (zipfOf), else uniformly.
func (g *gen) int(rng *rand.Rand, z *rand.Zipf) int64 {
	switch {
	case z != nil:
		return g.lo + int64(z.Uint64())
	case g.hi == g.lo:
		return g.lo
	}
	return g.lo + int64(rng.Uint64N(uint64(g.hi-g.lo)+1))
}

// zipfOf returns the Zipf variate of a skewed generator, drawing from rng
// (one per worker: it keeps no state but rng's), or nil.
func (g *gen) zipfOf(rng *rand.Rand) *rand.Zipf {
	if g.zipfS <= 0 {
		return nil
	}
	return rand.NewZipf(rng, g.zipfS, 1, uint64(g.hi-g.lo))
}

// zipfsOf is zipfOf for each of gens.
func zipfsOf(gens []gen, rng *rand.Rand) []*rand.Zipf {
	z := make([]*rand.Zipf, len(gens))
	for i := range gens {
		z[i] = gens[i].zipfOf(rng)
	}
	return z
}

func (g *gen) float(rng *rand.Rand) float64 {
	v := g.flo + rng.Float64()*(g.fhi-g.flo)
	if g.scale > 0 {
		v = math.Round(v*g.scale) / g.scale
	}
	return v
}

func (g *gen) text(rng *rand.Rand, pool string) string {
	n := int(g.int(rng, nil))
	off := rng.IntN(len(pool) - n + 1)
	return pool[off : off+n]
}

// slot holds one argument's current value; the statement's args point
// into it, so that a request's arguments are set without allocating.
type slot struct {
	i int64
	f float64
	s string
	t time.Time
}

// arg returns the argument that sends s's value for a generator of kind
// (a ref's: the kind of the argument it repeats): a pointer into s
// (target.Conn sends the pointed-to value), or nil for NULL.
func (s *slot) arg(kind genKind) any {
	switch kind {
	case genNext, genRow, genInt, genSeq:
		return &s.i
	case genFloat:
		return &s.f
	case genText:
		return &s.s
	case genNow:
		return &s.t
	}
	return nil
}
