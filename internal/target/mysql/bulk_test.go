package mysql

import (
	"strings"
	"testing"

	"github.com/ceiling-db/ceiling/internal/target"
)

// TestBulkInsertSplits forces a tiny statement limit so one batch goes out
// as many multi-row INSERTs, and checks every row arrives exactly once.
func TestBulkInsertSplits(t *testing.T) {
	tg := openTarget(t, testDSN(t), target.DurabilityServer)
	ctx := testCtx(t)
	if err := tg.Schema().CreateTable(ctx, "bulk_split", "id INT PRIMARY KEY, s VARCHAR(200) NOT NULL"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tg.Schema().DropTable(ctx, "bulk_split") })
	c := connect(t, tg).(*conn)
	st, err := c.bulkInit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	st.limit = 1000 // ~8 rows per statement
	rows := make([][]any, 250)
	for i := range rows {
		rows[i] = []any{i + 1, strings.Repeat("q'\\", 40)}
	}
	n, err := c.BulkInsert(ctx, "bulk_split", []string{"id", "s"}, &target.SliceRows{Rows: rows})
	if err != nil || n != 250 {
		t.Fatalf("BulkInsert: %d, %v", n, err)
	}
	if got := queryString(t, c, "SELECT CONCAT(COUNT(*), ' ', SUM(id), ' ', MIN(s) = MAX(s), ' ', MAX(LENGTH(s))) FROM ceiling_bulk_split"); got != "250 31375 1 120" {
		t.Errorf("count, sum, same text, length = %q, want \"250 31375 1 120\"", got)
	}
}

func TestAppendLiteral(t *testing.T) {
	for _, tc := range []struct {
		v    any
		noBS bool
		want string
	}{
		{nil, false, "NULL"},
		{int32(-5), false, "-5"},
		{1.25, false, "1.25"},
		{"it's \\ here\x00", false, `'it''s \\ here\0'`},
		{"it's \\", true, `'it''s \'`},
		{[]byte{0xde, 0xad}, false, "X'dead'"},
		{true, false, "1"},
	} {
		got, err := appendLiteral(nil, tc.v, tc.noBS)
		if err != nil || string(got) != tc.want {
			t.Errorf("appendLiteral(%#v, %v) = %s, %v; want %s", tc.v, tc.noBS, got, err, tc.want)
		}
	}
	if _, err := appendLiteral(nil, struct{}{}, false); err == nil {
		t.Error("appendLiteral(struct{}) gave no error")
	}
}
