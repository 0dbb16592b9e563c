package target

import "testing"

func TestStatementTable(t *testing.T) {
	for _, tc := range []struct{ sql, want string }{
		{"UPDATE ceiling.warehouse SET w_ytd = w_ytd + $1 WHERE w_id = $2", "ceiling.warehouse"},
		{"update ONLY ceiling.district set d_next_o_id = d_next_o_id + 1 where d_w_id = $1", "ceiling.district"},
		{"DELETE FROM ceiling.rows WHERE row_id = $1", "ceiling.rows"},
		{"INSERT INTO ceiling_rows (row_id, bit_col) VALUES (?, ?)", "ceiling_rows"},
		{"REPLACE INTO `ceiling_t` VALUES (?)", "`ceiling_t`"},
		{"SELECT s_quantity FROM ceiling.stock WHERE s_i_id = $1 FOR UPDATE", "ceiling.stock"},
		{"SELECT c_balance\n\tFROM ceiling.customer, ceiling.warehouse WHERE c_id = $1", "ceiling.customer"},
		{"SELECT * FROM ceiling_tpcc_payment($1, $2)", "ceiling_tpcc_payment()"},
		{"SELECT count(*) FROM (SELECT 1) x", ""},
		{"CALL ceiling_tpcc_neword(?, ?)", ""},
		{"SELECT 1", ""},
		{"", ""},
	} {
		if got := StatementTable(tc.sql); got != tc.want {
			t.Errorf("StatementTable(%q) = %q, want %q", tc.sql, got, tc.want)
		}
	}
}
