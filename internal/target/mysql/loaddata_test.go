package mysql

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-db/ceiling/internal/target"
)

// TestLoadRows loads awkward values with LOAD DATA LOCAL INFILE and reads
// them back exactly: separators, escapes and NUL inside text, NULL, dates,
// decimals; and a value the column cannot hold is an error, not a silent
// truncation (LOAD DATA LOCAL turns data errors into warnings).
func TestLoadRows(t *testing.T) {
	tg := openTarget(t, testDSN(t), target.DurabilityServer)
	ctx := testCtx(t)
	if err := tg.Schema().CreateTable(ctx, "load_rows", "id INT PRIMARY KEY, s VARCHAR(64) NULL, d DECIMAL(8,2), at DATETIME(6)"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tg.Schema().DropTable(context.Background(), "load_rows") })
	c := connect(t, tg).(*conn)
	at := time.Date(2026, 11, 23, 14, 5, 6, 123456000, time.UTC)
	texts := []any{"tab\there", "new\nline\r\n", `back\slash \N`, "nul\x00byte", "quote ' \" `", "ünïcødé ✓", "", nil}
	rows := make([][]any, 0, len(texts)*50)
	for i := range 50 * len(texts) {
		rows = append(rows, []any{i + 1, texts[i%len(texts)], float64(i) / 4, at})
	}
	n, err := c.LoadRows(ctx, "load_rows", []string{"id", "s", "d", "at"}, &target.SliceRows{Rows: rows})
	if err != nil || n != int64(len(rows)) {
		t.Fatalf("LoadRows: %d, %v; want %d rows", n, err, len(rows))
	}
	if c.inTx {
		t.Error("LoadRows left its own transaction open")
	}
	for i, want := range texts {
		var got any
		r := c.c.QueryRowContext(ctx, "SELECT s FROM ceiling_load_rows WHERE id = ?", i+1)
		if err := r.Scan(&got); err != nil {
			t.Fatal(err)
		}
		if b, ok := got.([]byte); ok {
			got = string(b)
		}
		if got != want {
			t.Errorf("row %d: s = %q, want %q", i+1, got, want)
		}
	}
	if got := queryString(t, c, "SELECT CONCAT(COUNT(*), ' ', SUM(d), ' ', MIN(at) = MAX(at), ' ', DATE_FORMAT(MIN(at), '%Y-%m-%d %H:%i:%s.%f')) FROM ceiling_load_rows"); got != "400 19950.00 1 2026-11-23 14:05:06.123456" {
		t.Errorf("count, sum, one date = %q", got)
	}

	// A value too long for VARCHAR(64): an error, and nothing is left.
	long := [][]any{{1001, strings.Repeat("x", 65), 1.0, at}}
	if _, err := c.LoadRows(ctx, "load_rows", []string{"id", "s", "d", "at"}, &target.SliceRows{Rows: long}); err == nil || !strings.Contains(err.Error(), "warning") {
		t.Errorf("LoadRows of a too long value: err %v, want the server's warning as an error", err)
	}
	if got := queryString(t, c, "SELECT COUNT(*) FROM ceiling_load_rows WHERE id = 1001"); got != "0" {
		t.Errorf("the failed load left %s rows", got)
	}
}

// TestLoadRowsFallback switches local_infile off on the server: LoadRows
// then inserts every row with multi-row INSERTs instead, and says nothing
// was lost. The setting is restored.
func TestLoadRowsFallback(t *testing.T) {
	db := raw(t)
	var was string
	if err := db.QueryRow("SELECT @@GLOBAL.local_infile").Scan(&was); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("SET GLOBAL local_infile = 0"); err != nil {
		t.Skipf("cannot switch local_infile off here: %v", err)
	}
	t.Cleanup(func() {
		if _, err := db.Exec("SET GLOBAL local_infile = " + was); err != nil {
			t.Errorf("restore local_infile: %v", err)
		}
		loadDataOff.Store(false)
	})
	tg := openTarget(t, testDSN(t), target.DurabilityServer)
	ctx := testCtx(t)
	if err := tg.Schema().CreateTable(ctx, "load_fallback", "id INT PRIMARY KEY, s VARCHAR(20) NOT NULL"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tg.Schema().DropTable(context.Background(), "load_fallback") })
	c := connect(t, tg).(*conn)
	rows := make([][]any, 300)
	for i := range rows {
		rows[i] = []any{i + 1, "tab\tand\\"}
	}
	n, err := c.LoadRows(ctx, "load_fallback", []string{"id", "s"}, &target.SliceRows{Rows: rows})
	if err != nil || n != 300 {
		t.Fatalf("LoadRows with local_infile off: %d, %v", n, err)
	}
	if !loadDataOff.Load() {
		t.Error("the refusal was not remembered")
	}
	if got := queryString(t, c, "SELECT CONCAT(COUNT(*), ' ', SUM(id), ' ', MIN(s) = MAX(s), ' ', MAX(s) = 'tab\tand\\\\')"+" FROM ceiling_load_fallback"); got != "300 45150 1 1" {
		t.Errorf("count, sum, text = %q, want \"300 45150 1 1\"", got)
	}
}
