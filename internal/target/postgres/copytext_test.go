package postgres

import (
	"errors"
	"io"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-db/ceiling/internal/target"
)

func TestAppendCopyText(t *testing.T) {
	at := time.Date(2026, 11, 25, 13, 4, 5, 123456000, time.FixedZone("", -5*3600))
	cases := []struct {
		v    any
		want string
	}{
		{nil, `\N`},
		{"plain", "plain"},
		{"a\tb\nc\rd\\e", `a\tb\nc\rd\\e`},
		{`\.`, `\\.`}, // never the end-of-data marker
		{"", ""},
		{[]byte{0, 0xab, '\\'}, `\\x00ab5c`},
		{int(-7), "-7"},
		{int8(-8), "-8"},
		{int16(300), "300"},
		{int32(-70000), "-70000"},
		{int64(math.MaxInt64), "9223372036854775807"},
		{uint32(4000000000), "4000000000"},
		{uint64(math.MaxUint64), "18446744073709551615"},
		{0.1, "0.1"},
		{float32(0.1), "0.1"},
		{1e300, "1e+300"},
		{math.NaN(), "NaN"},
		{math.Inf(1), "Infinity"},
		{math.Inf(-1), "-Infinity"},
		{true, "t"},
		{false, "f"},
		{at, "2026-11-25 13:04:05.123456-05:00"},
		{at.UTC().Truncate(time.Second), "2026-11-25 18:04:05+00:00"},
	}
	for _, c := range cases {
		got, err := appendCopyText([]byte("x"), c.v)
		if err != nil {
			t.Errorf("%T %v: %v", c.v, c.v, err)
			continue
		}
		if string(got) != "x"+c.want {
			t.Errorf("%T %v: %q, want %q", c.v, c.v, got, "x"+c.want)
		}
	}
	if _, err := appendCopyText(nil, "a\x00b"); !errors.Is(err, errNUL) {
		t.Errorf("NUL byte: %v, want errNUL", err)
	}
	if _, err := appendCopyText(nil, struct{}{}); err == nil || !strings.Contains(err.Error(), "unsupported value type struct {}") {
		t.Errorf("struct: %v, want an unsupported type error", err)
	}
}

// TestCopyTextReads: however small the reads, the stream is the rows' lines
// in order, each row whole exactly once.
func TestCopyTextReads(t *testing.T) {
	rows := [][]any{{int64(1), "one"}, {int64(2), nil}, {int64(3), strings.Repeat("x", 100)}}
	want := "1\tone\n2\t\\N\n3\t" + strings.Repeat("x", 100) + "\n"
	for _, size := range []int{1, 3, 7, 64, 1 << 16} {
		r := &copyText{rows: &target.SliceRows{Rows: rows}, ncols: 2}
		var got []byte
		p := make([]byte, size)
		for {
			n, err := r.Read(p)
			got = append(got, p[:n]...)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("read size %d: %v", size, err)
			}
		}
		if string(got) != want {
			t.Errorf("read size %d: %q, want %q", size, got, want)
		}
		if r.sent != 3 {
			t.Errorf("read size %d: sent %d rows, want 3", size, r.sent)
		}
	}
	r := &copyText{rows: &target.SliceRows{Rows: [][]any{{int64(1)}}}, ncols: 2}
	if _, err := r.Read(make([]byte, 10)); err == nil || !strings.Contains(err.Error(), "row 1: 1 values for 2 columns") {
		t.Errorf("short row: %v", err)
	}
}

// TestLoadRows loads rows with every kind of value through COPY's text
// format on the real server and reads them back; a row that cannot be
// encoded fails the load and leaves the table as it was.
func TestLoadRows(t *testing.T) {
	ctx := testCtx(t)
	tg := openTarget(t, testDB(t, "ceiling_test_pg"), target.DurabilityServer)
	s := tg.Schema()
	if err := s.CreateTable(ctx, "lr", "id bigint PRIMARY KEY, s text, n numeric(12,4), f float8, b boolean, ts timestamp, tz timestamptz, by bytea"); err != nil {
		t.Fatalf("CreateTable: %v", err)
	}
	t.Cleanup(func() { _ = s.DropTable(ctx, "lr") })
	at := time.Date(2026, 11, 25, 13, 4, 5, 250000000, time.FixedZone("", 2*3600))
	cols := []string{"id", "s", "n", "f", "b", "ts", "tz", "by"}
	rows := [][]any{
		{int64(1), "tab\there\nnewline \\ back\rslash", 1234.5678, 0.1, true, at, at, []byte{0, 1, 0xff}},
		{int64(2), nil, nil, math.Inf(-1), false, nil, nil, nil},
		{int64(3), `\.`, -0.0001, 1e300, nil, at.UTC(), at.UTC(), []byte{}},
	}
	c := connect(t, tg)
	pc := c.(*conn)
	n, err := pc.LoadRows(ctx, "lr", cols, &target.SliceRows{Rows: rows})
	if err != nil || n != 3 {
		t.Fatalf("LoadRows = %d, %v; want 3, nil", n, err)
	}
	tbl := tg.Dialect().Table("lr")
	got := queryString(t, c, `SELECT string_agg(concat_ws('|', id, coalesce(s, 'NULL'), coalesce(n::text, 'NULL'), f, coalesce(b::text, 'NULL'),
		coalesce(ts::text, 'NULL'), coalesce((tz AT TIME ZONE 'UTC')::text, 'NULL'), coalesce(encode(by, 'hex'), 'NULL')), E'\n' ORDER BY id) FROM `+tbl)
	want := strings.Join([]string{
		"1|tab\there\nnewline \\ back\rslash|1234.5678|0.1|true|2026-11-25 13:04:05.25|2026-11-25 11:04:05.25|0001ff",
		"2|NULL|NULL|-Infinity|false|NULL|NULL|NULL",
		`3|\.|-0.0001|1e+300|NULL|2026-11-25 11:04:05.25|2026-11-25 11:04:05.25|`,
	}, "\n")
	if got != want {
		t.Errorf("read back:\n%s\nwant:\n%s", got, want)
	}

	// A bad row in the middle: an error naming it, and nothing loaded.
	bad := [][]any{{int64(10), "ok", 1.0, 1.0, true, nil, nil, nil}, {int64(11), "nul\x00", 1.0, 1.0, true, nil, nil, nil}}
	if _, err := pc.LoadRows(ctx, "lr", cols, &target.SliceRows{Rows: bad}); err == nil || !strings.Contains(err.Error(), "row 2: column 2") {
		t.Errorf("LoadRows with a NUL byte = %v, want an error naming row 2, column 2", err)
	}
	// A row the server refuses (a duplicate key): its error.
	dup := [][]any{{int64(1), "again", 1.0, 1.0, true, nil, nil, nil}}
	if _, err := pc.LoadRows(ctx, "lr", cols, &target.SliceRows{Rows: dup}); err == nil || !strings.Contains(err.Error(), "duplicate key") {
		t.Errorf("LoadRows of a duplicate key = %v, want the server's duplicate key error", err)
	}
	if n := queryString(t, c, "SELECT count(*)::text FROM "+tbl); n != "3" {
		t.Errorf("after the failed loads count = %s, want 3", n)
	}
}
