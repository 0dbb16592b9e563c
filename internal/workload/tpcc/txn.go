package tpcc

// The five transactions (specification v5.11, clauses 2.4 to 2.8), their
// inputs (drawn by picker, so that a retried transaction runs again with
// the same inputs), and their SQL per engine.
//
// Locking, as the usual kits do it: rows a transaction will
// update are read with SELECT … FOR UPDATE on PostgreSQL and MySQL
// (district in New-Order, stock rows, the customer in Payment, the oldest
// new order in Delivery). SQLite has no row locks: every read-write
// transaction takes the database's write lock up front (target/sqlite's
// Begin is BEGIN IMMEDIATE), and the read-only ones (Order-Status,
// Stock-Level) run in a deferred transaction, which in WAL mode reads a
// snapshot without blocking writers.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/ceiling-db/ceiling/internal/target"
)

// unusedItemID is never loaded: New-Order's 1% rollback (clause 2.4.1.4).
const unusedItemID = Items + 1

// errUnusedItem ends a New-Order that met the unused item: it is rolled
// back on purpose and counted as a business rollback, not an error.
var errUnusedItem = errors.New("tpcc: item number is not valid")

// picker draws the transactions' inputs (clauses 2.4.1, 2.5.1, 2.6.1,
// 2.7.1, 2.8.1) from a virtual user's random source.
type picker struct {
	rng *rand.Rand
	c   Constants // the run's C constants (RunConstants)
}

// uniform returns a uniform integer in [x, y].
func (p *picker) uniform(x, y int) int { return x + p.rng.IntN(y-x+1) }

func (p *picker) customerID() int  { return NURand(p.rng, ACID, p.c.CID, 1, CustomersPerDistrict) }
func (p *picker) itemID() int      { return NURand(p.rng, AOLIID, p.c.OLIID, 1, Items) }
func (p *picker) lastName() string { return RandomLastName(p.rng, p.c) }

// otherWarehouse returns a warehouse other than w, uniformly (W > 1).
func (p *picker) otherWarehouse(w, warehouses int) int {
	o := p.uniform(1, warehouses-1)
	if o >= w {
		o++
	}
	return o
}

// customerSel selects a customer by number or by last name.
type customerSel struct {
	byName bool
	id     int
	last   string
}

func (p *picker) customer() customerSel {
	if p.uniform(1, 100) <= 60 { // 60% by last name (clauses 2.5.1.2, 2.6.1.2)
		return customerSel{byName: true, last: p.lastName()}
	}
	return customerSel{id: p.customerID()}
}

type orderLine struct {
	item, supplyW, qty int
}

type newOrderIn struct {
	w, d, c  int
	lines    []orderLine
	allLocal bool
	rollback bool // the last line holds the unused item
}

// newOrder draws a New-Order's input (clause 2.4.1). The lines are sorted
// by item and supply warehouse so that concurrent New-Orders lock stock
// rows in one order (fewer deadlocks, as CockroachDB's and go-tpc's kits
// do); the unused item, the highest number, stays last.
func (p *picker) newOrder(w, warehouses int) newOrderIn {
	in := newOrderIn{w: w, d: p.uniform(1, DistrictsPerWH), c: p.customerID(), allLocal: true}
	n := p.uniform(5, 15)
	in.rollback = p.uniform(1, 100) == 1
	in.lines = make([]orderLine, n)
	for i := range in.lines {
		l := orderLine{item: p.itemID(), supplyW: w, qty: p.uniform(1, 10)}
		if i == n-1 && in.rollback {
			l.item = unusedItemID
		}
		if warehouses > 1 && p.uniform(1, 100) == 1 { // 1% remote (clause 2.4.1.5)
			l.supplyW = p.otherWarehouse(w, warehouses)
			in.allLocal = false
		}
		in.lines[i] = l
	}
	slices.SortFunc(in.lines, func(a, b orderLine) int {
		if a.item != b.item {
			return a.item - b.item
		}
		return a.supplyW - b.supplyW
	})
	return in
}

type paymentIn struct {
	w, d   int
	cw, cd int
	cust   customerSel
	amount float64
}

// payment draws a Payment's input (clause 2.5.1): 85% home customer, 15%
// a customer of another warehouse; 60% by last name.
func (p *picker) payment(w, warehouses int) paymentIn {
	in := paymentIn{w: w, d: p.uniform(1, DistrictsPerWH)}
	in.cw, in.cd = w, in.d
	if warehouses > 1 && p.uniform(1, 100) > 85 {
		in.cw, in.cd = p.otherWarehouse(w, warehouses), p.uniform(1, DistrictsPerWH)
	}
	in.cust = p.customer()
	in.amount = float64(p.uniform(100, 500000)) / 100
	return in
}

type orderStatusIn struct {
	w, d int
	cust customerSel
}

func (p *picker) orderStatus(w int) orderStatusIn {
	return orderStatusIn{w: w, d: p.uniform(1, DistrictsPerWH), cust: p.customer()}
}

type deliveryIn struct{ w, carrier int }

func (p *picker) delivery(w int) deliveryIn { return deliveryIn{w: w, carrier: p.uniform(1, 10)} }

type stockLevelIn struct{ w, d, threshold int }

func (p *picker) stockLevel(w int) stockLevelIn {
	return stockLevelIn{w: w, d: p.uniform(1, DistrictsPerWH), threshold: p.uniform(10, 20)}
}

// txnSQL holds the SQL text of every statement for one dialect.
type txnSQL struct {
	sqlite bool

	noCustomer, noWarehouse, noDistrict, noDistrictUpd, noOrder, noNewOrder string
	noItem, noStockUpd, noLine                                              string
	noStock                                                                 [DistrictsPerWH]string

	pWarehouseUpd, pWarehouse, pDistrictUpd, pDistrict, pByLast, pCustomer string
	pCustomerUpd, pCustomerData, pCustomerUpdBC, pHistory                  string

	osCustomer, osOrder, osLines string

	dNewOrder, dNewOrderDel, dOrder, dOrderUpd, dLinesUpd, dLinesSum, dCustomerUpd string

	slDistrict, slCount string
}

// newTxnSQL writes the statements for dialect d. In the templates, {t}
// is table t in ceiling's namespace, ? a placeholder and FOR_UPDATE the
// row lock clause (nothing on SQLite).
func newTxnSQL(d target.Dialect) *txnSQL {
	sqlite := d.Engine == "sqlite"
	sql := func(tmpl string) string {
		var b strings.Builder
		n := 0
		for i := 0; i < len(tmpl); i++ {
			switch c := tmpl[i]; c {
			case '?':
				n++
				b.WriteString(d.Placeholder(n))
			case '{':
				j := strings.IndexByte(tmpl[i:], '}')
				b.WriteString(d.Table(tmpl[i+1 : i+j]))
				i += j
			default:
				b.WriteByte(c)
			}
		}
		s := b.String()
		if sqlite {
			return strings.ReplaceAll(s, " FOR_UPDATE", "")
		}
		return strings.ReplaceAll(s, "FOR_UPDATE", "FOR UPDATE")
	}
	q := &txnSQL{sqlite: sqlite}
	// New-Order (clause 2.4.2).
	q.noCustomer = sql("SELECT c_discount, c_last, c_credit FROM {customer} WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?")
	q.noWarehouse = sql("SELECT w_tax FROM {warehouse} WHERE w_id = ?")
	q.noDistrict = sql("SELECT d_tax, d_next_o_id FROM {district} WHERE d_w_id = ? AND d_id = ? FOR_UPDATE")
	q.noDistrictUpd = sql("UPDATE {district} SET d_next_o_id = ? WHERE d_w_id = ? AND d_id = ?")
	q.noOrder = sql("INSERT INTO {orders} (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local) VALUES (?, ?, ?, ?, ?, NULL, ?, ?)")
	q.noNewOrder = sql("INSERT INTO {new_order} (no_o_id, no_d_id, no_w_id) VALUES (?, ?, ?)")
	q.noItem = sql("SELECT i_price, i_name, i_data FROM {item} WHERE i_id = ?")
	for i := range q.noStock {
		q.noStock[i] = sql(fmt.Sprintf("SELECT s_quantity, s_data, s_dist_%02d FROM {stock} WHERE s_w_id = ? AND s_i_id = ? FOR_UPDATE", i+1))
	}
	q.noStockUpd = sql("UPDATE {stock} SET s_quantity = ?, s_ytd = s_ytd + ?, s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + ? WHERE s_w_id = ? AND s_i_id = ?")
	q.noLine = sql("INSERT INTO {order_line} (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_delivery_d, ol_quantity, ol_amount, ol_dist_info) VALUES (?, ?, ?, ?, ?, ?, NULL, ?, ?, ?)")
	// Payment (clause 2.5.2).
	q.pWarehouseUpd = sql("UPDATE {warehouse} SET w_ytd = w_ytd + ? WHERE w_id = ?")
	q.pWarehouse = sql("SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip FROM {warehouse} WHERE w_id = ?")
	q.pDistrictUpd = sql("UPDATE {district} SET d_ytd = d_ytd + ? WHERE d_w_id = ? AND d_id = ?")
	q.pDistrict = sql("SELECT d_name, d_street_1, d_street_2, d_city, d_state, d_zip FROM {district} WHERE d_w_id = ? AND d_id = ?")
	q.pByLast = sql("SELECT c_id FROM {customer} WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? ORDER BY c_first")
	q.pCustomer = sql("SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, c_credit, c_credit_lim, c_discount, c_balance FROM {customer} WHERE c_w_id = ? AND c_d_id = ? AND c_id = ? FOR_UPDATE")
	q.pCustomerUpd = sql("UPDATE {customer} SET c_balance = c_balance - ?, c_ytd_payment = c_ytd_payment + ?, c_payment_cnt = c_payment_cnt + 1 WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?")
	q.pCustomerData = sql("SELECT c_data FROM {customer} WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?")
	q.pCustomerUpdBC = sql("UPDATE {customer} SET c_balance = c_balance - ?, c_ytd_payment = c_ytd_payment + ?, c_payment_cnt = c_payment_cnt + 1, c_data = ? WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?")
	q.pHistory = sql("INSERT INTO {history} (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data) VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
	// Order-Status (clause 2.6.2).
	q.osCustomer = sql("SELECT c_balance, c_first, c_middle, c_last FROM {customer} WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?")
	q.osOrder = sql("SELECT o_id, o_carrier_id, o_entry_d FROM {orders} WHERE o_w_id = ? AND o_d_id = ? AND o_c_id = ? ORDER BY o_id DESC LIMIT 1")
	q.osLines = sql("SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM {order_line} WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?")
	// Delivery (clause 2.7.4).
	q.dNewOrder = sql("SELECT no_o_id FROM {new_order} WHERE no_w_id = ? AND no_d_id = ? ORDER BY no_o_id LIMIT 1 FOR_UPDATE")
	q.dNewOrderDel = sql("DELETE FROM {new_order} WHERE no_w_id = ? AND no_d_id = ? AND no_o_id = ?")
	q.dOrder = sql("SELECT o_c_id FROM {orders} WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?")
	q.dOrderUpd = sql("UPDATE {orders} SET o_carrier_id = ? WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?")
	q.dLinesUpd = sql("UPDATE {order_line} SET ol_delivery_d = ? WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?")
	q.dLinesSum = sql("SELECT SUM(ol_amount) FROM {order_line} WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?")
	q.dCustomerUpd = sql("UPDATE {customer} SET c_balance = c_balance + ?, c_delivery_cnt = c_delivery_cnt + 1 WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?")
	// Stock-Level (clause 2.8.2).
	q.slDistrict = sql("SELECT d_next_o_id FROM {district} WHERE d_w_id = ? AND d_id = ?")
	q.slCount = sql("SELECT COUNT(DISTINCT s_i_id) FROM {order_line}, {stock} WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id < ? AND ol_o_id >= ? AND s_w_id = ? AND s_i_id = ol_i_id AND s_quantity < ?")
	return q
}

// tx runs body in a transaction: committed when body succeeds, rolled back
// otherwise. readOnly transactions on SQLite are deferred (a snapshot read
// that takes no write lock).
func (k *vuser) tx(ctx context.Context, readOnly bool, body func() (int64, error)) (int64, error) {
	var err error
	if readOnly && k.q.sqlite {
		_, err = k.conn.Exec(ctx, "BEGIN DEFERRED")
	} else {
		err = k.conn.Begin(ctx)
	}
	if err != nil {
		return 0, err
	}
	n, err := body()
	if err != nil {
		k.rollback(ctx)
		return n, err
	}
	if err := k.conn.Commit(ctx); err != nil {
		k.rollback(ctx)
		return 0, err
	}
	k.w.run.stats.commits.Add(1)
	return n, nil
}

// rollback rolls the transaction back, best effort: after a lost
// connection it fails and the runner reconnects.
func (k *vuser) rollback(ctx context.Context) {
	if err := k.conn.Rollback(ctx); err == nil {
		k.w.run.stats.rollbacks.Add(1)
	}
}

// row runs a query expected to return at most one row into dest. It
// reports whether there was a row.
func (k *vuser) row(ctx context.Context, sql string, dest []any, args ...any) (bool, error) {
	return target.QueryRow(ctx, k.conn, sql, dest, args...)
}

// exec runs a statement and returns the rows it affected.
func (k *vuser) exec(ctx context.Context, sql string, args ...any) (int64, error) {
	return k.conn.Exec(ctx, sql, args...)
}

// txnTime is the transaction's timestamp, to the second like the schema's
// timestamp columns. UTC, so every engine stores the same text.
func txnTime() time.Time { return time.Now().UTC().Truncate(time.Second) }

// roundCents rounds money to the cent.
func roundCents(v float64) float64 { return math.Round(v*100) / 100 }

// newOrder is the New-Order transaction (clause 2.4.2). With the unused
// item it does the work up to that line, then rolls back and returns
// errUnusedItem (clause 2.4.2.3).
func (k *vuser) newOrder(ctx context.Context, in *newOrderIn) (int64, error) {
	q := k.q
	var rows int64
	n, err := k.tx(ctx, false, func() (int64, error) {
		var discount, wTax, dTax float64
		var last, credit string
		var next int64
		if ok, err := k.row(ctx, q.noCustomer, []any{&discount, &last, &credit}, in.w, in.d, in.c); err != nil || !ok {
			return rows, orMissing(err, "customer", in.w, in.d, in.c)
		}
		if ok, err := k.row(ctx, q.noWarehouse, []any{&wTax}, in.w); err != nil || !ok {
			return rows, orMissing(err, "warehouse", in.w)
		}
		if ok, err := k.row(ctx, q.noDistrict, []any{&dTax, &next}, in.w, in.d); err != nil || !ok {
			return rows, orMissing(err, "district", in.w, in.d)
		}
		rows += 3
		if _, err := k.exec(ctx, q.noDistrictUpd, next+1, in.w, in.d); err != nil {
			return rows, err
		}
		allLocal := 0
		if in.allLocal {
			allLocal = 1
		}
		if _, err := k.exec(ctx, q.noOrder, next, in.d, in.w, in.c, txnTime(), len(in.lines), allLocal); err != nil {
			return rows, err
		}
		if _, err := k.exec(ctx, q.noNewOrder, next, in.d, in.w); err != nil {
			return rows, err
		}
		rows += 3
		var total float64
		for i, l := range in.lines {
			var price float64
			var iName, iData, sData, dist string
			var qty int64
			ok, err := k.row(ctx, q.noItem, []any{&price, &iName, &iData}, l.item)
			if err != nil {
				return rows, err
			}
			if !ok {
				return rows, errUnusedItem
			}
			if ok, err := k.row(ctx, q.noStock[in.d-1], []any{&qty, &sData, &dist}, l.supplyW, l.item); err != nil || !ok {
				return rows, orMissing(err, "stock", l.supplyW, l.item)
			}
			rows += 2
			// Brand-generic (clause 2.4.2.2): shown on the terminal only.
			_ = strings.Contains(iData, "ORIGINAL") && strings.Contains(sData, "ORIGINAL")
			if qty >= int64(l.qty)+10 {
				qty -= int64(l.qty)
			} else {
				qty = qty - int64(l.qty) + 91
			}
			remote := 0
			if l.supplyW != in.w {
				remote = 1
			}
			if _, err := k.exec(ctx, q.noStockUpd, qty, l.qty, remote, l.supplyW, l.item); err != nil {
				return rows, err
			}
			amount := roundCents(float64(l.qty) * price)
			total += amount
			if _, err := k.exec(ctx, q.noLine, next, in.d, in.w, i+1, l.item, l.supplyW, l.qty, amount, dist); err != nil {
				return rows, err
			}
			rows += 2
		}
		_ = total * (1 - discount) * (1 + wTax + dTax) // the order's total, shown on the terminal only
		return rows, nil
	})
	return n, err
}

// orMissing returns err, or an error naming the row that should exist.
func orMissing(err error, what string, key ...any) error {
	if err != nil {
		return err
	}
	return fmt.Errorf("tpcc: %s %v not found: is the dataset complete? (ceiling check tpcc)", what, key)
}

// customerByName finds the customer of the given last name at position
// ceil(n/2) in C_FIRST order (clauses 2.5.2.2, 2.6.2.2).
func (k *vuser) customerByName(ctx context.Context, w, d int, last string) (int64, int64, error) {
	rows, err := k.conn.Query(ctx, k.q.pByLast, w, d, last)
	if err != nil {
		return 0, 0, err
	}
	defer rows.Close()
	ids := make([]int64, 0, 8)
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return 0, 0, err
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return 0, 0, err
	}
	if err := rows.Close(); err != nil {
		return 0, 0, err
	}
	if len(ids) == 0 {
		return 0, 0, fmt.Errorf("tpcc: no customer named %s in warehouse %d district %d: is the dataset complete? (ceiling check tpcc)", last, w, d)
	}
	return middleID(ids), int64(len(ids)), nil
}

// middleID returns the customer at position ceil(n/2) (1-based) of ids,
// which are in C_FIRST order.
func middleID(ids []int64) int64 { return ids[(len(ids)+1)/2-1] }

// payment is the Payment transaction (clause 2.5.2).
func (k *vuser) payment(ctx context.Context, in *paymentIn) (int64, error) {
	q := k.q
	return k.tx(ctx, false, func() (int64, error) {
		var rows int64
		if _, err := k.exec(ctx, q.pWarehouseUpd, in.amount, in.w); err != nil {
			return rows, err
		}
		var wName, dName, s1, s2, city, state, zip string
		if ok, err := k.row(ctx, q.pWarehouse, []any{&wName, &s1, &s2, &city, &state, &zip}, in.w); err != nil || !ok {
			return rows, orMissing(err, "warehouse", in.w)
		}
		if _, err := k.exec(ctx, q.pDistrictUpd, in.amount, in.w, in.d); err != nil {
			return rows, err
		}
		if ok, err := k.row(ctx, q.pDistrict, []any{&dName, &s1, &s2, &city, &state, &zip}, in.w, in.d); err != nil || !ok {
			return rows, orMissing(err, "district", in.w, in.d)
		}
		rows += 2
		cid := int64(in.cust.id)
		if in.cust.byName {
			id, n, err := k.customerByName(ctx, in.cw, in.cd, in.cust.last)
			if err != nil {
				return rows, err
			}
			cid, rows = id, rows+n
		}
		var first, middle, last, phone, credit string
		var limit, discount, balance float64
		if ok, err := k.row(ctx, q.pCustomer, []any{&first, &middle, &last, &s1, &s2, &city, &state, &zip, &phone, &credit, &limit, &discount, &balance},
			in.cw, in.cd, cid); err != nil || !ok {
			return rows, orMissing(err, "customer", in.cw, in.cd, cid)
		}
		rows++
		if credit == "BC" { // bad credit: prepend the payment to C_DATA (clause 2.5.2.2)
			var data string
			if _, err := k.row(ctx, q.pCustomerData, []any{&data}, in.cw, in.cd, cid); err != nil {
				return rows, err
			}
			data = fmt.Sprintf("%d %d %d %d %d %.2f|", cid, in.cd, in.cw, in.d, in.w, in.amount) + data
			if len(data) > 500 {
				data = data[:500]
			}
			if _, err := k.exec(ctx, q.pCustomerUpdBC, in.amount, in.amount, data, in.cw, in.cd, cid); err != nil {
				return rows, err
			}
		} else if _, err := k.exec(ctx, q.pCustomerUpd, in.amount, in.amount, in.cw, in.cd, cid); err != nil {
			return rows, err
		}
		if _, err := k.exec(ctx, q.pHistory, cid, in.cd, in.cw, in.d, in.w, txnTime(), in.amount, wName+"    "+dName); err != nil {
			return rows, err
		}
		return rows + 2, nil
	})
}

// orderStatus is the Order-Status transaction (clause 2.6.2), read-only.
func (k *vuser) orderStatus(ctx context.Context, in *orderStatusIn) (int64, error) {
	q := k.q
	return k.tx(ctx, true, func() (int64, error) {
		var rows int64
		cid := int64(in.cust.id)
		if in.cust.byName {
			id, n, err := k.customerByName(ctx, in.w, in.d, in.cust.last)
			if err != nil {
				return rows, err
			}
			cid, rows = id, rows+n
		}
		var balance float64
		var first, middle, last string
		if ok, err := k.row(ctx, q.osCustomer, []any{&balance, &first, &middle, &last}, in.w, in.d, cid); err != nil || !ok {
			return rows, orMissing(err, "customer", in.w, in.d, cid)
		}
		rows++
		var oid int64
		var carrier, entry any
		ok, err := k.row(ctx, q.osOrder, []any{&oid, &carrier, &entry}, in.w, in.d, cid)
		if err != nil || !ok {
			return rows, err // a customer without orders has nothing more to show
		}
		rows++
		lines, err := k.conn.Query(ctx, q.osLines, in.w, in.d, oid)
		if err != nil {
			return rows, err
		}
		defer lines.Close()
		for lines.Next() {
			var item, supply, qty int64
			var amount float64
			var delivered any
			if err := lines.Scan(&item, &supply, &qty, &amount, &delivered); err != nil {
				return rows, err
			}
			rows++
		}
		if err := lines.Err(); err != nil {
			return rows, err
		}
		return rows, lines.Close()
	})
}

// delivery is the Delivery transaction (clause 2.7.4), one database
// transaction for the ten districts as HammerDB runs it (the specification
// allows up to ten). A district with no undelivered order is skipped and
// counted (clause 2.7.4.2).
func (k *vuser) delivery(ctx context.Context, in *deliveryIn) (int64, error) {
	q := k.q
	return k.tx(ctx, false, func() (int64, error) {
		var rows int64
		ts := txnTime()
		for d := 1; d <= DistrictsPerWH; d++ {
			var oid int64
			ok, err := k.row(ctx, q.dNewOrder, []any{&oid}, in.w, d)
			if err != nil {
				return rows, err
			}
			if !ok {
				k.w.run.stats.emptyDelivery.Add(1)
				continue
			}
			n, err := k.exec(ctx, q.dNewOrderDel, in.w, d, oid)
			if err != nil {
				return rows, err
			}
			if n == 0 { // delivered by a concurrent Delivery meanwhile
				k.w.run.stats.emptyDelivery.Add(1)
				continue
			}
			var cid int64
			if ok, err := k.row(ctx, q.dOrder, []any{&cid}, in.w, d, oid); err != nil || !ok {
				return rows, orMissing(err, "order", in.w, d, oid)
			}
			if _, err := k.exec(ctx, q.dOrderUpd, in.carrier, in.w, d, oid); err != nil {
				return rows, err
			}
			nl, err := k.exec(ctx, q.dLinesUpd, ts, in.w, d, oid)
			if err != nil {
				return rows, err
			}
			var sum float64
			if _, err := k.row(ctx, q.dLinesSum, []any{&sum}, in.w, d, oid); err != nil {
				return rows, err
			}
			if _, err := k.exec(ctx, q.dCustomerUpd, roundCents(sum), in.w, d, cid); err != nil {
				return rows, err
			}
			rows += 3 + nl
		}
		return rows, nil
	})
}

// stockLevel is the Stock-Level transaction (clause 2.8.2), read-only: the
// distinct items of the district's last 20 orders whose stock is below the
// threshold.
func (k *vuser) stockLevel(ctx context.Context, in *stockLevelIn) (int64, error) {
	q := k.q
	return k.tx(ctx, true, func() (int64, error) {
		var next, low int64
		if ok, err := k.row(ctx, q.slDistrict, []any{&next}, in.w, in.d); err != nil || !ok {
			return 0, orMissing(err, "district", in.w, in.d)
		}
		if _, err := k.row(ctx, q.slCount, []any{&low}, in.w, in.d, next, next-20, in.w, in.threshold); err != nil {
			return 1, err
		}
		return 2, nil
	})
}
