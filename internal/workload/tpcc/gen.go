package tpcc

// Data generation per the TPC-C specification v5.11: clause 4.3.3.1 (the
// initial population), 4.3.2.2 (random a-strings and n-strings), 4.3.2.3
// (last names from syllables), 4.3.2.7 (zip codes) and 2.1.6 (NURand).
//
// Rows are generated on the fly by row sources (target.RowSource), one table
// of one warehouse at a time, so a load never holds a warehouse in memory.
// Random text is cut from a fixed pool of random alphanumeric characters at
// random offsets and lengths: the strings the specification asks for without
// one random draw (or one allocation) per character.

import (
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"time"
)

// Cardinalities per the specification (clause 4.3.3.1 and 1.2.1).
const (
	Items                = 100_000 // ITEM rows; also STOCK rows per warehouse
	DistrictsPerWH       = 10
	CustomersPerDistrict = 3_000
	OrdersPerDistrict    = 3_000
	// NewOrdersPerDistrict: the last 900 orders of each district (o_id
	// 2101..3000) are undelivered and have a NEW-ORDER row.
	NewOrdersPerDistrict = 900
	// FirstUndelivered is the first o_id without a carrier (clause 4.3.3.1).
	FirstUndelivered   = OrdersPerDistrict - NewOrdersPerDistrict + 1
	MinOLCnt, MaxOLCnt = 5, 15
)

// NURand A constants (clause 2.1.6).
const (
	ALast  = 255  // C_LAST, numbers 0..999
	ACID   = 1023 // C_ID, 1..3000
	AOLIID = 8191 // OL_I_ID, 1..100000
)

// Constants are the run-time constants C of NURand (clause 2.1.6), one per
// use. The load picks them at random and records them in tpcc_meta; the run
// must use RunConstants, whose C for C_LAST keeps the distance the
// specification requires from the load's.
type Constants struct {
	CLast int // C for C_LAST, 0..255
	CID   int // C for C_ID, 0..1023
	OLIID int // C for OL_I_ID, 0..8191
}

// NewConstants draws load-time constants.
func NewConstants(r *rand.Rand) Constants {
	return Constants{CLast: r.IntN(ALast + 1), CID: r.IntN(ACID + 1), OLIID: r.IntN(AOLIID + 1)}
}

// RunConstants draws the run's constants from the load's (clause 2.1.6.1):
// the C_LAST constant differs from the load's by 65..119, but not 96 or
// 112; the others are drawn freely.
func RunConstants(load Constants, r *rand.Rand) Constants {
	run := NewConstants(r)
	for {
		c := r.IntN(ALast + 1)
		d := c - load.CLast
		if d < 0 {
			d = -d
		}
		if d >= 65 && d <= 119 && d != 96 && d != 112 {
			run.CLast = c
			return run
		}
	}
}

// NURand is the specification's non-uniform random number in [x, y]:
// (((random(0, A) | random(x, y)) + C) % (y - x + 1)) + x.
func NURand(r *rand.Rand, a, c, x, y int) int {
	return (((r.IntN(a+1) | (x + r.IntN(y-x+1))) + c) % (y - x + 1)) + x
}

var syllables = [10]string{"BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING"}

// lastNames holds the 1000 last names, built once.
var lastNames = func() [1000]string {
	var names [1000]string
	for n := range names {
		names[n] = syllables[n/100] + syllables[n/10%10] + syllables[n%10]
	}
	return names
}()

// LastName returns the last name of number n in 0..999 (clause 4.3.2.3):
// the syllables of its three digits, e.g. 371 is PRICALLYOUGHT.
func LastName(n int) string { return lastNames[n] }

// RandomLastName is the run's customer last name: LastName(NURand(255, C, 0, 999)).
func RandomLastName(r *rand.Rand, c Constants) string {
	return lastNames[NURand(r, ALast, c.CLast, 0, 999)]
}

const alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// pools of random characters from which a-strings and n-strings are cut.
var alnumPool, digitPool, letterPool = func() (string, string, string) {
	r := rand.New(rand.NewPCG(0x7cc, 0xa11))
	mk := func(chars string, n int) string {
		var b strings.Builder
		b.Grow(n)
		for b.Len() < n {
			b.WriteByte(chars[r.IntN(len(chars))])
		}
		return b.String()
	}
	return mk(alnum, 1<<18), mk("0123456789", 1<<14), mk(alnum[:52], 1<<12)
}()

func cut(r *rand.Rand, pool string, n int) string {
	off := r.IntN(len(pool) - n)
	return pool[off : off+n]
}

// AString returns a random a-string of length min..max (clause 4.3.2.2).
func AString(r *rand.Rand, min, max int) string {
	return cut(r, alnumPool, min+r.IntN(max-min+1))
}

// NString returns a random n-string (digits) of length min..max.
func NString(r *rand.Rand, min, max int) string {
	return cut(r, digitPool, min+r.IntN(max-min+1))
}

// Zip returns a zip code: four random digits and "11111" (clause 4.3.2.7).
func Zip(r *rand.Rand) string { return cut(r, digitPool, 4) + "11111" }

func state(r *rand.Rand) string { return cut(r, letterPool, 2) }

// original returns an a-string of length 26..50 with "ORIGINAL" at a random
// position in 10% of the calls (I_DATA, S_DATA).
func original(r *rand.Rand) string {
	s := AString(r, 26, 50)
	if r.IntN(10) != 0 {
		return s
	}
	p := r.IntN(len(s) - 8 + 1)
	return s[:p] + "ORIGINAL" + s[p+8:]
}

// money returns a random amount in [lo, hi] cents, in currency units.
func money(r *rand.Rand, lo, hi int) float64 { return float64(lo+r.IntN(hi-lo+1)) / 100 }

// rate returns a random rate in [0, hi/10000] with four decimals.
func rate(r *rand.Rand, hi int) float64 { return float64(r.IntN(hi+1)) / 10000 }

// source is a target.RowSource over rows 0..n-1 of one table, filled by
// fill. It counts rows and data bytes (by SQL type sizes) into a shared
// counter for progress and the final MB figures.
type source struct {
	n, i  int
	fill  func(i int, v []any)
	vals  []any
	stats *loadStats
	rows  int64 // rows and bytes not yet published to stats
	bytes int64
}

// loadStats are the loader's counters, updated by every source.
type loadStats struct {
	rows  atomic.Int64
	bytes atomic.Int64
}

func newSource(n, ncols int, stats *loadStats, fill func(i int, v []any)) *source {
	return &source{n: n, fill: fill, vals: make([]any, ncols), stats: stats}
}

// Next implements target.RowSource.
func (s *source) Next() bool {
	if s.i >= s.n {
		s.flush()
		return false
	}
	s.fill(s.i, s.vals)
	s.i++
	s.rows++
	for _, v := range s.vals {
		switch v := v.(type) {
		case string:
			s.bytes += int64(len(v))
		case int64:
			s.bytes += 4
		case float64, time.Time:
			s.bytes += 8
		}
	}
	if s.rows >= 1024 {
		s.flush()
	}
	return true
}

func (s *source) flush() {
	if s.stats != nil && s.rows > 0 {
		s.stats.rows.Add(s.rows)
		s.stats.bytes.Add(s.bytes)
	}
	s.rows, s.bytes = 0, 0
}

// Values implements target.RowSource.
func (s *source) Values() ([]any, error) { return s.vals, nil }

// Err implements target.RowSource.
func (s *source) Err() error { return nil }

// itemSource generates the ITEM table.
func itemSource(seed uint64, stats *loadStats) *source {
	r := rand.New(rand.NewPCG(seed, 0))
	return newSource(Items, 5, stats, func(i int, v []any) {
		v[0] = int64(i + 1)
		v[1] = int64(1 + r.IntN(10_000))
		v[2] = AString(r, 14, 24)
		v[3] = money(r, 100, 10_000)
		v[4] = original(r)
	})
}

// whGen generates the tables of one warehouse. Its sources must be consumed
// in the order of warehouseTables: ORDER-LINE reuses the line counts and
// entry dates drawn for ORDERS.
type whGen struct {
	w     int64
	r     *rand.Rand
	c     Constants
	now   time.Time
	stats *loadStats
	olCnt [DistrictsPerWH][OrdersPerDistrict]uint8
}

// warehouseParts split a warehouse's tables into parts of similar size that
// load independently (each from its own generator), so that a few
// warehouses still keep several loader threads busy. Within a part, tables
// load in order: ORDER-LINE after ORDERS.
var warehouseParts = [][]string{
	{TWarehouse, TDistrict, TCustomer, THistory},
	{TOrders, TNewOrder, TOrderLine},
	{TStock},
}

// warehouseTables is every table of a warehouse, in load order.
var warehouseTables = slices.Concat(warehouseParts...)

func newWHGen(seed uint64, w int, c Constants, now time.Time, stats *loadStats) *whGen {
	return &whGen{w: int64(w), r: rand.New(rand.NewPCG(seed, uint64(w))), c: c, now: now, stats: stats}
}

// source returns the row source of table for this warehouse.
func (g *whGen) source(table string) *source {
	r, w := g.r, g.w
	ncols := len(tableByName(table).cols)
	switch table {
	case TWarehouse:
		return newSource(1, ncols, g.stats, func(_ int, v []any) {
			v[0] = w
			v[1] = AString(r, 6, 10)
			v[2], v[3], v[4] = AString(r, 10, 20), AString(r, 10, 20), AString(r, 10, 20)
			v[5], v[6] = state(r), Zip(r)
			v[7] = rate(r, 2000)
			v[8] = 300_000.0
		})
	case TDistrict:
		return newSource(DistrictsPerWH, ncols, g.stats, func(i int, v []any) {
			v[0], v[1] = int64(i+1), w
			v[2] = AString(r, 6, 10)
			v[3], v[4], v[5] = AString(r, 10, 20), AString(r, 10, 20), AString(r, 10, 20)
			v[6], v[7] = state(r), Zip(r)
			v[8] = rate(r, 2000)
			v[9] = 30_000.0
			v[10] = int64(OrdersPerDistrict + 1)
		})
	case TCustomer:
		return newSource(DistrictsPerWH*CustomersPerDistrict, ncols, g.stats, func(i int, v []any) {
			d, c := i/CustomersPerDistrict+1, i%CustomersPerDistrict+1
			v[0], v[1], v[2] = int64(c), int64(d), w
			v[3] = AString(r, 8, 16)
			v[4] = "OE"
			if c <= 1000 {
				v[5] = lastNames[c-1]
			} else {
				v[5] = lastNames[NURand(r, ALast, g.c.CLast, 0, 999)]
			}
			v[6], v[7], v[8] = AString(r, 10, 20), AString(r, 10, 20), AString(r, 10, 20)
			v[9], v[10] = state(r), Zip(r)
			v[11] = cut(r, digitPool, 16)
			v[12] = g.now
			if r.IntN(10) == 0 {
				v[13] = "BC"
			} else {
				v[13] = "GC"
			}
			v[14] = 50_000.0
			v[15] = rate(r, 5000)
			v[16] = -10.0
			v[17] = 10.0
			v[18] = int64(1)
			v[19] = int64(0)
			v[20] = AString(r, 300, 500)
		})
	case THistory:
		return newSource(DistrictsPerWH*CustomersPerDistrict, ncols, g.stats, func(i int, v []any) {
			d, c := int64(i/CustomersPerDistrict+1), int64(i%CustomersPerDistrict+1)
			v[0], v[1], v[2], v[3], v[4] = c, d, w, d, w
			v[5] = g.now
			v[6] = 10.0
			v[7] = AString(r, 12, 24)
		})
	case TOrders:
		var perm []int
		return newSource(DistrictsPerWH*OrdersPerDistrict, ncols, g.stats, func(i int, v []any) {
			d, o := i/OrdersPerDistrict, i%OrdersPerDistrict+1
			if o == 1 {
				perm = r.Perm(CustomersPerDistrict)
			}
			n := MinOLCnt + r.IntN(MaxOLCnt-MinOLCnt+1)
			g.olCnt[d][o-1] = uint8(n)
			v[0], v[1], v[2] = int64(o), int64(d+1), w
			v[3] = int64(perm[o-1] + 1)
			v[4] = g.now
			if o < FirstUndelivered {
				v[5] = int64(1 + r.IntN(10))
			} else {
				v[5] = nil
			}
			v[6] = int64(n)
			v[7] = int64(1)
		})
	case TNewOrder:
		return newSource(DistrictsPerWH*NewOrdersPerDistrict, ncols, g.stats, func(i int, v []any) {
			v[0] = int64(FirstUndelivered + i%NewOrdersPerDistrict)
			v[1] = int64(i/NewOrdersPerDistrict + 1)
			v[2] = w
		})
	case TOrderLine:
		total := 0
		for d := range g.olCnt {
			for _, n := range g.olCnt[d] {
				total += int(n)
			}
		}
		d, o, l := 0, 1, 0 // current order, and lines done of it
		return newSource(total, ncols, g.stats, func(_ int, v []any) {
			if l == int(g.olCnt[d][o-1]) {
				l = 0
				if o++; o > OrdersPerDistrict {
					o, d = 1, d+1
				}
			}
			l++
			v[0], v[1], v[2], v[3] = int64(o), int64(d+1), w, int64(l)
			v[4] = int64(1 + r.IntN(Items))
			v[5] = w
			if o < FirstUndelivered {
				v[6] = g.now
				v[8] = 0.0
			} else {
				v[6] = nil
				v[8] = money(r, 1, 999_999)
			}
			v[7] = int64(5)
			v[9] = cut(r, alnumPool, 24)
		})
	case TStock:
		return newSource(Items, ncols, g.stats, func(i int, v []any) {
			v[0], v[1] = int64(i+1), w
			v[2] = int64(10 + r.IntN(91))
			for k := 3; k < 13; k++ {
				v[k] = cut(r, alnumPool, 24)
			}
			v[13], v[14], v[15] = int64(0), int64(0), int64(0)
			v[16] = original(r)
		})
	}
	return nil
}
