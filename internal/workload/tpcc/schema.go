package tpcc

// The TPC-C schema (specification v5.11, clause 1.3), inside ceiling's
// namespace: Dialect.Table("warehouse") is "ceiling.warehouse" on
// PostgreSQL and "ceiling_warehouse" on MySQL/MariaDB and SQLite. Column
// names are the specification's, lower case. Tables and primary keys, in
// key order:
//
//	warehouse   (w_id)
//	district    (d_w_id, d_id)
//	customer    (c_w_id, c_d_id, c_id)     index customer_last   (c_w_id, c_d_id, c_last, c_first)
//	history     no primary key (the specification defines none; see below)
//	new_order   (no_w_id, no_d_id, no_o_id)
//	orders      (o_w_id, o_d_id, o_id)     index orders_customer (o_w_id, o_d_id, o_c_id, o_id)
//	order_line  (ol_w_id, ol_d_id, ol_o_id, ol_number)
//	item        (i_id)
//	stock       (s_w_id, s_i_id)
//	tpcc_meta   ceiling's own: the load state (not a TPC-C table)
//
// ORDER is a reserved word, so the specification's ORDER table is "orders"
// and NEW-ORDER / ORDER-LINE are "new_order" / "order_line", as every TPC-C
// kit names them.
//
// Types per engine: identifiers and counts are integer (INT on MySQL);
// money and rates are numeric(p,s) on PostgreSQL and DECIMAL(p,s) on MySQL,
// REAL on SQLite (compare money there with a tolerance of half a cent);
// dates are timestamp on PostgreSQL, DATETIME on MySQL and TEXT on SQLite
// (the driver's time format). Bind time.Time for dates, int64/int for
// integers, float64 for money, string for text, and nil for NULL
// (o_carrier_id and ol_delivery_d of undelivered orders).
//
// History has no primary key: the specification gives it none and no
// transaction reads it by key. PostgreSQL stores it as a plain heap, SQLite
// under its implicit rowid and InnoDB under its hidden row id, which is what
// HammerDB and go-tpc do too.

import "strings"

// Table names (unqualified).
const (
	TWarehouse = "warehouse"
	TDistrict  = "district"
	TCustomer  = "customer"
	THistory   = "history"
	TNewOrder  = "new_order"
	TOrders    = "orders"
	TOrderLine = "order_line"
	TItem      = "item"
	TStock     = "stock"
	TMeta      = "tpcc_meta"
)

// Secondary index names (created after the load).
const (
	IdxCustomerLast   = "customer_last"
	IdxOrdersCustomer = "orders_customer"
)

// colType is an engine-neutral column type.
type colType struct {
	kind  byte // 'i' integer, 'n' numeric(p,s), 'v' varchar(n), 'c' char(n), 't' timestamp
	p, s  int  // precision and scale for 'n'; length for 'v' and 'c'
	null  bool // nullable
	bytes int  // data size by SQL type, for MB figures (varchar: 0, counted by length)
}

func integer() colType         { return colType{kind: 'i', bytes: 4} }
func numeric(p, s int) colType { return colType{kind: 'n', p: p, s: s, bytes: 8} }
func varchar(n int) colType    { return colType{kind: 'v', p: n} }
func char(n int) colType       { return colType{kind: 'c', p: n, bytes: n} }
func timestamp() colType       { return colType{kind: 't', bytes: 8} }
func nullable(c colType) colType {
	c.null = true
	return c
}

type column struct {
	name string
	typ  colType
}

type tableDef struct {
	name    string
	cols    []column
	primary string // primary key columns, or "" for none
}

// Columns returns the column names of a TPC-C table in the order the loader
// inserts them (the specification's order).
func Columns(table string) []string {
	td := tableByName(table)
	if td == nil {
		return nil
	}
	names := make([]string, len(td.cols))
	for i, c := range td.cols {
		names[i] = c.name
	}
	return names
}

// TableBody returns the CREATE TABLE body (the text between the
// parentheses) of a TPC-C table for engine ("postgres", "mysql", "sqlite"),
// primary key included.
func TableBody(engine, table string) string { return tableBody(engine, table, true) }

// keysAfterLoad reports whether the loader adds the primary keys after the
// data (PrimaryKey) instead of creating the tables with them. On PostgreSQL
// a key built by sorting the loaded table is cheaper than one maintained
// row by row (as pgbench -i and HammerDB do there): a 2-warehouse load's
// data took 1.3-1.6 s without keys plus 0.4 s to add them one after
// another, against 2.0-2.4 s with them, on the 2-core development VM.
// InnoDB stores rows in primary-key order, so there a key added later would
// rebuild the table; SQLite's loader is one writer anyway.
func keysAfterLoad(engine string) bool { return engine == "postgres" }

// PrimaryKey returns the primary key columns of a TPC-C table ("" for
// history, which has none).
func PrimaryKey(table string) string {
	if td := tableByName(table); td != nil {
		return td.primary
	}
	return ""
}

func tableBody(engine, table string, withKey bool) string {
	td := tableByName(table)
	if td == nil {
		return ""
	}
	var b strings.Builder
	for i, c := range td.cols {
		if i > 0 {
			b.WriteString(",\n")
		}
		b.WriteString(c.name)
		b.WriteByte(' ')
		b.WriteString(sqlType(engine, c.typ))
		if !c.typ.null {
			b.WriteString(" NOT NULL")
		}
	}
	if td.primary != "" && withKey {
		b.WriteString(",\nPRIMARY KEY (")
		b.WriteString(td.primary)
		b.WriteByte(')')
	}
	return b.String()
}

// Indexes lists the secondary indexes, created after the load.
var Indexes = []struct{ Table, Name, Cols string }{
	{TCustomer, IdxCustomerLast, "c_w_id, c_d_id, c_last, c_first"},
	{TOrders, IdxOrdersCustomer, "o_w_id, o_d_id, o_c_id, o_id"},
}

func sqlType(engine string, t colType) string {
	itoa := func(n int) string {
		var buf [20]byte
		i := len(buf)
		for {
			i--
			buf[i] = byte('0' + n%10)
			n /= 10
			if n == 0 {
				break
			}
		}
		return string(buf[i:])
	}
	switch engine {
	case "postgres":
		switch t.kind {
		case 'i':
			return "integer"
		case 'n':
			return "numeric(" + itoa(t.p) + "," + itoa(t.s) + ")"
		case 'v':
			return "varchar(" + itoa(t.p) + ")"
		case 'c':
			return "char(" + itoa(t.p) + ")"
		case 't':
			return "timestamp"
		}
	case "mysql":
		switch t.kind {
		case 'i':
			return "INT"
		case 'n':
			return "DECIMAL(" + itoa(t.p) + "," + itoa(t.s) + ")"
		case 'v':
			return "VARCHAR(" + itoa(t.p) + ")"
		case 'c':
			return "CHAR(" + itoa(t.p) + ")"
		case 't':
			return "DATETIME"
		}
	default: // sqlite
		switch t.kind {
		case 'i':
			return "INTEGER"
		case 'n':
			return "REAL"
		case 'v', 'c', 't':
			return "TEXT"
		}
	}
	return "?"
}

func tableByName(name string) *tableDef {
	for i := range schemaDefs {
		if schemaDefs[i].name == name {
			return &schemaDefs[i]
		}
	}
	return nil
}

// dataTables lists the TPC-C tables in load order.
var dataTables = []string{TItem, TWarehouse, TDistrict, TCustomer, THistory, TOrders, TNewOrder, TOrderLine, TStock}

var schemaDefs = []tableDef{
	{TWarehouse, []column{
		{"w_id", integer()},
		{"w_name", varchar(10)},
		{"w_street_1", varchar(20)},
		{"w_street_2", varchar(20)},
		{"w_city", varchar(20)},
		{"w_state", char(2)},
		{"w_zip", char(9)},
		{"w_tax", numeric(4, 4)},
		{"w_ytd", numeric(12, 2)},
	}, "w_id"},
	{TDistrict, []column{
		{"d_id", integer()},
		{"d_w_id", integer()},
		{"d_name", varchar(10)},
		{"d_street_1", varchar(20)},
		{"d_street_2", varchar(20)},
		{"d_city", varchar(20)},
		{"d_state", char(2)},
		{"d_zip", char(9)},
		{"d_tax", numeric(4, 4)},
		{"d_ytd", numeric(12, 2)},
		{"d_next_o_id", integer()},
	}, "d_w_id, d_id"},
	{TCustomer, []column{
		{"c_id", integer()},
		{"c_d_id", integer()},
		{"c_w_id", integer()},
		{"c_first", varchar(16)},
		{"c_middle", char(2)},
		{"c_last", varchar(16)},
		{"c_street_1", varchar(20)},
		{"c_street_2", varchar(20)},
		{"c_city", varchar(20)},
		{"c_state", char(2)},
		{"c_zip", char(9)},
		{"c_phone", char(16)},
		{"c_since", timestamp()},
		{"c_credit", char(2)},
		{"c_credit_lim", numeric(12, 2)},
		{"c_discount", numeric(4, 4)},
		{"c_balance", numeric(12, 2)},
		{"c_ytd_payment", numeric(12, 2)},
		{"c_payment_cnt", integer()},
		{"c_delivery_cnt", integer()},
		{"c_data", varchar(500)},
	}, "c_w_id, c_d_id, c_id"},
	{THistory, []column{
		{"h_c_id", integer()},
		{"h_c_d_id", integer()},
		{"h_c_w_id", integer()},
		{"h_d_id", integer()},
		{"h_w_id", integer()},
		{"h_date", timestamp()},
		{"h_amount", numeric(6, 2)},
		{"h_data", varchar(24)},
	}, ""},
	{TNewOrder, []column{
		{"no_o_id", integer()},
		{"no_d_id", integer()},
		{"no_w_id", integer()},
	}, "no_w_id, no_d_id, no_o_id"},
	{TOrders, []column{
		{"o_id", integer()},
		{"o_d_id", integer()},
		{"o_w_id", integer()},
		{"o_c_id", integer()},
		{"o_entry_d", timestamp()},
		{"o_carrier_id", nullable(integer())},
		{"o_ol_cnt", integer()},
		{"o_all_local", integer()},
	}, "o_w_id, o_d_id, o_id"},
	{TOrderLine, []column{
		{"ol_o_id", integer()},
		{"ol_d_id", integer()},
		{"ol_w_id", integer()},
		{"ol_number", integer()},
		{"ol_i_id", integer()},
		{"ol_supply_w_id", integer()},
		{"ol_delivery_d", nullable(timestamp())},
		{"ol_quantity", integer()},
		{"ol_amount", numeric(6, 2)},
		{"ol_dist_info", char(24)},
	}, "ol_w_id, ol_d_id, ol_o_id, ol_number"},
	{TItem, []column{
		{"i_id", integer()},
		{"i_im_id", integer()},
		{"i_name", varchar(24)},
		{"i_price", numeric(5, 2)},
		{"i_data", varchar(50)},
	}, "i_id"},
	{TStock, []column{
		{"s_i_id", integer()},
		{"s_w_id", integer()},
		{"s_quantity", integer()},
		{"s_dist_01", char(24)},
		{"s_dist_02", char(24)},
		{"s_dist_03", char(24)},
		{"s_dist_04", char(24)},
		{"s_dist_05", char(24)},
		{"s_dist_06", char(24)},
		{"s_dist_07", char(24)},
		{"s_dist_08", char(24)},
		{"s_dist_09", char(24)},
		{"s_dist_10", char(24)},
		{"s_ytd", integer()},
		{"s_order_cnt", integer()},
		{"s_remote_cnt", integer()},
		{"s_data", varchar(50)},
	}, "s_w_id, s_i_id"},
	{TMeta, []column{
		{"k", varchar(32)},
		{"v", varchar(64)},
	}, "k"},
}
