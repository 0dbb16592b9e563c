// Package rowdata generates the shared ~400-byte mixed-type row of the row
// workloads (DESIGN.md section 3) and accounts for its data volume by SQL type
// sizes: int 4, bigint 8, smallint 2, tinyint 1, bit 1, float 8, money 8,
// datetime 8, varchar = its length. The engine's on-disk size is not counted.
package rowdata

import (
	"math/rand/v2"
	"strings"
	"time"
)

// Column sizes by SQL type, in bytes.
const (
	SizeBit      = 1
	SizeTinyint  = 1
	SizeSmallint = 2
	SizeInt      = 4
	SizeBigint   = 8
	SizeDatetime = 8
	SizeFloat    = 8
	SizeMoney    = 8
)

// FixedBytes is the size of the fixed-width columns, row_id included.
const FixedBytes = SizeBigint /*row_id*/ + SizeBit + SizeTinyint + SizeSmallint + SizeInt + SizeBigint + SizeDatetime + SizeFloat + SizeMoney

// Varchar length ranges (inclusive). Their means, 30 + 125 + 197 = 352, plus
// the 48 fixed bytes give the sources' average row of 400 bytes.
const (
	ShortMin, ShortMax = 10, 50
	MidMin, MidMax     = 50, 200
	LongMin, LongMax   = 100, 294
)

// MeanRowBytes is the expected data size of a generated row.
const MeanRowBytes = FixedBytes + (ShortMin+ShortMax)/2 + (MidMin+MidMax)/2 + (LongMin+LongMax)/2

// Columns lists the column names in insert order.
var Columns = []string{"row_id", "bit_col", "tinyint_col", "smallint_col", "int_col", "bigint_col",
	"dt_col", "float_col", "money_col", "vc_short", "vc_mid", "vc_long"}

// NumColumns is len(Columns).
const NumColumns = 12

// Row is one generated row.
type Row struct {
	ID       int64
	Bit      bool
	Tinyint  int64
	Smallint int64
	Int      int64
	Bigint   int64
	Datetime time.Time
	Float    float64
	Money    float64
	Short    string
	Mid      string
	Long     string
}

// Bytes is the row's data size by SQL type sizes.
func (r *Row) Bytes() int64 {
	return FixedBytes + int64(len(r.Short)+len(r.Mid)+len(r.Long))
}

// RawBytes is Bytes for a row read back undecoded (target.RawRows): the
// column lengths as sent, in Columns order. The varchars count by their
// length, as in Bytes (their wire form is their text; NULL counts 0), the
// other columns by their type's size.
func RawBytes(lens []int) int64 {
	n := int64(FixedBytes)
	for _, l := range lens[NumColumns-3:] { // vc_short, vc_mid, vc_long
		n += int64(max(l, 0))
	}
	return n
}

// Args appends the row's values in Columns order to dst.
func (r *Row) Args(dst []any) []any {
	return append(dst, r.ID, r.Bit, r.Tinyint, r.Smallint, r.Int, r.Bigint,
		r.Datetime, r.Float, r.Money, r.Short, r.Mid, r.Long)
}

// Refs appends pointers to the row's fields in Columns order to dst: the
// arguments of an insert that stay valid as the row is refilled, so a
// worker builds them once instead of boxing twelve values (about nine
// allocations) per insert. Every target's Exec takes *int64, *bool,
// *float64, *string and *time.Time as the value they point to.
func (r *Row) Refs(dst []any) []any {
	return append(dst, &r.ID, &r.Bit, &r.Tinyint, &r.Smallint, &r.Int, &r.Bigint,
		&r.Datetime, &r.Float, &r.Money, &r.Short, &r.Mid, &r.Long)
}

// text is a fixed pool of printable characters; varchar values are slices of
// it at random offsets, so generating a row does not allocate strings.
var text = func() string {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 "
	r := rand.New(rand.NewPCG(42, 7))
	var b strings.Builder
	b.Grow(1 << 16)
	for b.Len() < 1<<16 {
		b.WriteByte(alphabet[r.IntN(len(alphabet))])
	}
	return b.String()
}()

var epoch = time.Date(2014, 6, 30, 0, 0, 0, 0, time.UTC)

func randText(rng *rand.Rand, min, max int) string {
	n := min + rng.IntN(max-min+1)
	off := rng.IntN(len(text) - n)
	return text[off : off+n]
}

// Fill sets r to a new random row with the given id.
func Fill(r *Row, rng *rand.Rand, id int64) {
	r.ID = id
	r.Bit = rng.IntN(2) == 1
	r.Tinyint = int64(rng.IntN(256))
	r.Smallint = int64(rng.IntN(65536) - 32768)
	r.Int = int64(rng.Int32())
	r.Bigint = rng.Int64()
	// Millisecond precision, within ten years of the epoch: every engine
	// stores it exactly.
	r.Datetime = epoch.Add(time.Duration(rng.Int64N(10*365*24*3600*1000)) * time.Millisecond)
	r.Float = rng.Float64() * 1e6
	r.Money = float64(rng.Int64N(100_000_000)) / 100 // two decimals, below 1e6
	r.Short = randText(rng, ShortMin, ShortMax)
	r.Mid = randText(rng, MidMin, MidMax)
	r.Long = randText(rng, LongMin, LongMax)
}

// TableBody returns the CREATE TABLE body of the row table for an engine.
func TableBody(engine string) string {
	switch engine {
	case "postgres":
		return `row_id bigint PRIMARY KEY, bit_col boolean NOT NULL, tinyint_col smallint NOT NULL,
smallint_col smallint NOT NULL, int_col integer NOT NULL, bigint_col bigint NOT NULL,
dt_col timestamp NOT NULL, float_col double precision NOT NULL, money_col numeric(19,4) NOT NULL,
vc_short varchar(50) NOT NULL, vc_mid varchar(200) NOT NULL, vc_long varchar(400) NOT NULL`
	case "mysql":
		return `row_id BIGINT NOT NULL PRIMARY KEY, bit_col BOOLEAN NOT NULL, tinyint_col TINYINT UNSIGNED NOT NULL,
smallint_col SMALLINT NOT NULL, int_col INT NOT NULL, bigint_col BIGINT NOT NULL,
dt_col DATETIME(3) NOT NULL, float_col DOUBLE NOT NULL, money_col DECIMAL(19,4) NOT NULL,
vc_short VARCHAR(50) NOT NULL, vc_mid VARCHAR(200) NOT NULL, vc_long VARCHAR(400) NOT NULL`
	default: // sqlite: row_id is the rowid alias, the engine's clustered key
		return `row_id INTEGER PRIMARY KEY, bit_col INTEGER NOT NULL, tinyint_col INTEGER NOT NULL,
smallint_col INTEGER NOT NULL, int_col INTEGER NOT NULL, bigint_col INTEGER NOT NULL,
dt_col TEXT NOT NULL, float_col REAL NOT NULL, money_col REAL NOT NULL,
vc_short TEXT NOT NULL, vc_mid TEXT NOT NULL, vc_long TEXT NOT NULL`
	}
}
