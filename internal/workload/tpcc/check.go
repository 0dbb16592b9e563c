package tpcc

// The consistency conditions of the TPC-C specification v5.11, clause
// 3.3.2, checked against a loaded (and possibly run) dataset: conditions 1
// to 10. Each is evaluated per warehouse or district in SQL, and the
// offending warehouses/districts are reported. All queries run in one
// transaction (a snapshot on PostgreSQL and InnoDB), so a check that runs
// while transactions are still committing does not compare two moments.

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/ceiling-db/ceiling/internal/target"
)

// CheckResult is the outcome of one consistency condition.
type CheckResult struct {
	Clause   string   // e.g. "3.3.2.1"
	Rule     string   // the condition, e.g. "W_YTD = sum(D_YTD)"
	Failures []string // one per offending warehouse or district
	Elapsed  time.Duration
}

// Pass reports whether the condition holds everywhere.
func (r CheckResult) Pass() bool { return len(r.Failures) == 0 }

// moneyTol is the tolerance of money comparisons: half a cent (SQLite keeps
// money as REAL).
const moneyTol = "0.004"

// check is one condition: a query returning one row per offending
// warehouse or district, formatted by describe.
type check struct {
	clause, rule string
	sql          func(tb func(string) string) string
	ncols        int // leading integer columns
	nmoney       int // money columns after them
	describe     func(v []int64, f []float64) string
}

// Check evaluates the consistency conditions on the dataset of t, all of
// them or only the clauses named in only (e.g. "3.3.2.1"). It fails (err !=
// nil) when there is no complete dataset or a query fails; a condition that
// does not hold is a CheckResult with Failures.
func Check(ctx context.Context, t target.Target, only ...string) ([]CheckResult, error) {
	ds, _, err := ReadDataset(ctx, t)
	if err != nil {
		return nil, err
	}
	if ds == nil || ds.State != stateComplete {
		return nil, fmt.Errorf("no complete TPC-C dataset: run `ceiling prepare tpcc --warehouses N` first")
	}
	conn, err := t.Connect(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	d := t.Dialect()
	if err := conn.Begin(ctx); err != nil {
		return nil, err
	}
	defer func() { _ = conn.Rollback(context.WithoutCancel(ctx)) }()
	if d.Engine == "postgres" {
		if _, err := conn.Exec(ctx, "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY"); err != nil {
			return nil, err
		}
	}
	var results []CheckResult
	for _, c := range checks {
		if len(only) > 0 && !slices.Contains(only, c.clause) {
			continue
		}
		start := time.Now()
		res := CheckResult{Clause: c.clause, Rule: c.rule}
		rows, err := conn.Query(ctx, c.sql(d.Table))
		if err != nil {
			return nil, fmt.Errorf("check %s: %w", c.clause, err)
		}
		// Integer columns first, then money columns as floats.
		ints := make([]int64, c.ncols)
		dest := make([]any, c.ncols)
		for i := range dest {
			dest[i] = &ints[i]
		}
		floats := make([]float64, c.nmoney)
		for i := range floats {
			dest = append(dest, &floats[i])
		}
		for rows.Next() {
			if err := rows.Scan(dest...); err != nil {
				rows.Close()
				return nil, fmt.Errorf("check %s: %w", c.clause, err)
			}
			res.Failures = append(res.Failures, c.describe(ints, floats))
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("check %s: %w", c.clause, err)
		}
		res.Elapsed = time.Since(start)
		results = append(results, res)
	}
	return results, nil
}

var checks = []check{
	{
		clause: "3.3.2.1", rule: "W_YTD = sum(D_YTD)", ncols: 1, nmoney: 2,
		sql: func(tb func(string) string) string {
			return `SELECT w_id, w_ytd, s FROM ` + tb(TWarehouse) + ` JOIN
(SELECT d_w_id, sum(d_ytd) AS s FROM ` + tb(TDistrict) + ` GROUP BY d_w_id) d ON d.d_w_id = w_id
WHERE abs(w_ytd - s) > ` + moneyTol + ` ORDER BY w_id`
		},
		describe: func(v []int64, f []float64) string {
			return fmt.Sprintf("warehouse %d: w_ytd %.2f, sum(d_ytd) %.2f", v[0], f[0], f[1])
		},
	},
	{
		clause: "3.3.2.2", rule: "D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID)", ncols: 5,
		sql: func(tb func(string) string) string {
			return `SELECT d_w_id, d_id, d_next_o_id - 1, coalesce(mo, -1), coalesce(mno, -1) FROM ` + tb(TDistrict) + `
LEFT JOIN (SELECT o_w_id, o_d_id, max(o_id) AS mo FROM ` + tb(TOrders) + ` GROUP BY o_w_id, o_d_id) o
  ON o.o_w_id = d_w_id AND o.o_d_id = d_id
LEFT JOIN (SELECT no_w_id, no_d_id, max(no_o_id) AS mno FROM ` + tb(TNewOrder) + ` GROUP BY no_w_id, no_d_id) n
  ON n.no_w_id = d_w_id AND n.no_d_id = d_id
WHERE d_next_o_id - 1 <> coalesce(mo, -1) OR (mno IS NOT NULL AND mno <> d_next_o_id - 1)
ORDER BY d_w_id, d_id`
		},
		describe: func(v []int64, _ []float64) string {
			return fmt.Sprintf("warehouse %d district %d: d_next_o_id - 1 = %d, max(o_id) = %s, max(no_o_id) = %s",
				v[0], v[1], v[2], orNone(v[3]), orNone(v[4]))
		},
	},
	{
		clause: "3.3.2.3", rule: "max(NO_O_ID) - min(NO_O_ID) + 1 = count(NEW-ORDER rows)", ncols: 5,
		sql: func(tb func(string) string) string {
			return `SELECT no_w_id, no_d_id, max(no_o_id), min(no_o_id), count(*) FROM ` + tb(TNewOrder) + `
GROUP BY no_w_id, no_d_id HAVING max(no_o_id) - min(no_o_id) + 1 <> count(*) ORDER BY no_w_id, no_d_id`
		},
		describe: func(v []int64, _ []float64) string {
			return fmt.Sprintf("warehouse %d district %d: max(no_o_id) %d - min(no_o_id) %d + 1 <> %d rows", v[0], v[1], v[2], v[3], v[4])
		},
	},
	{
		clause: "3.3.2.4", rule: "sum(O_OL_CNT) = count(ORDER-LINE rows)", ncols: 4,
		sql: func(tb func(string) string) string {
			return `SELECT o_w_id, o_d_id, so, coalesce(nl, 0) FROM
(SELECT o_w_id, o_d_id, sum(o_ol_cnt) AS so FROM ` + tb(TOrders) + ` GROUP BY o_w_id, o_d_id) o
LEFT JOIN (SELECT ol_w_id, ol_d_id, count(*) AS nl FROM ` + tb(TOrderLine) + ` GROUP BY ol_w_id, ol_d_id) l
  ON l.ol_w_id = o_w_id AND l.ol_d_id = o_d_id
WHERE so <> coalesce(nl, 0) ORDER BY o_w_id, o_d_id`
		},
		describe: func(v []int64, _ []float64) string {
			return fmt.Sprintf("warehouse %d district %d: sum(o_ol_cnt) %d, order lines %d", v[0], v[1], v[2], v[3])
		},
	},
	{
		clause: "3.3.2.5", rule: "O_CARRIER_ID is null exactly for orders with a NEW-ORDER row", ncols: 3,
		sql: func(tb func(string) string) string {
			return `SELECT o_w_id, o_d_id, count(*) FROM ` + tb(TOrders) + `
LEFT JOIN ` + tb(TNewOrder) + ` ON no_w_id = o_w_id AND no_d_id = o_d_id AND no_o_id = o_id
WHERE (o_carrier_id IS NULL AND no_o_id IS NULL) OR (o_carrier_id IS NOT NULL AND no_o_id IS NOT NULL)
GROUP BY o_w_id, o_d_id ORDER BY o_w_id, o_d_id`
		},
		describe: func(v []int64, _ []float64) string {
			return fmt.Sprintf("warehouse %d district %d: %d orders", v[0], v[1], v[2])
		},
	},
	{
		clause: "3.3.2.6", rule: "O_OL_CNT = count(ORDER-LINE rows) of each order", ncols: 3,
		sql: func(tb func(string) string) string {
			return `SELECT o_w_id, o_d_id, count(*) FROM ` + tb(TOrders) + `
LEFT JOIN (SELECT ol_w_id, ol_d_id, ol_o_id, count(*) AS n FROM ` + tb(TOrderLine) + `
  GROUP BY ol_w_id, ol_d_id, ol_o_id) l ON l.ol_w_id = o_w_id AND l.ol_d_id = o_d_id AND l.ol_o_id = o_id
WHERE o_ol_cnt <> coalesce(l.n, 0)
GROUP BY o_w_id, o_d_id ORDER BY o_w_id, o_d_id`
		},
		describe: func(v []int64, _ []float64) string {
			return fmt.Sprintf("warehouse %d district %d: %d orders", v[0], v[1], v[2])
		},
	},
	{
		clause: "3.3.2.7", rule: "OL_DELIVERY_D is null exactly when O_CARRIER_ID is", ncols: 3,
		sql: func(tb func(string) string) string {
			return `SELECT ol_w_id, ol_d_id, count(*) FROM ` + tb(TOrderLine) + `
JOIN ` + tb(TOrders) + ` ON o_w_id = ol_w_id AND o_d_id = ol_d_id AND o_id = ol_o_id
WHERE (ol_delivery_d IS NULL AND o_carrier_id IS NOT NULL) OR (ol_delivery_d IS NOT NULL AND o_carrier_id IS NULL)
GROUP BY ol_w_id, ol_d_id ORDER BY ol_w_id, ol_d_id`
		},
		describe: func(v []int64, _ []float64) string {
			return fmt.Sprintf("warehouse %d district %d: %d order lines", v[0], v[1], v[2])
		},
	},
	{
		clause: "3.3.2.8", rule: "W_YTD = sum(H_AMOUNT)", ncols: 1, nmoney: 2,
		sql: func(tb func(string) string) string {
			return `SELECT w_id, w_ytd, coalesce(s, 0) FROM ` + tb(TWarehouse) + `
LEFT JOIN (SELECT h_w_id, sum(h_amount) AS s FROM ` + tb(THistory) + ` GROUP BY h_w_id) h ON h.h_w_id = w_id
WHERE abs(w_ytd - coalesce(s, 0)) > ` + moneyTol + ` ORDER BY w_id`
		},
		describe: func(v []int64, f []float64) string {
			return fmt.Sprintf("warehouse %d: w_ytd %.2f, sum(h_amount) %.2f", v[0], f[0], f[1])
		},
	},
	{
		clause: "3.3.2.9", rule: "D_YTD = sum(H_AMOUNT)", ncols: 2, nmoney: 2,
		sql: func(tb func(string) string) string {
			return `SELECT d_w_id, d_id, d_ytd, coalesce(s, 0) FROM ` + tb(TDistrict) + `
LEFT JOIN (SELECT h_w_id, h_d_id, sum(h_amount) AS s FROM ` + tb(THistory) + ` GROUP BY h_w_id, h_d_id) h
  ON h.h_w_id = d_w_id AND h.h_d_id = d_id
WHERE abs(d_ytd - coalesce(s, 0)) > ` + moneyTol + ` ORDER BY d_w_id, d_id`
		},
		describe: func(v []int64, f []float64) string {
			return fmt.Sprintf("warehouse %d district %d: d_ytd %.2f, sum(h_amount) %.2f", v[0], v[1], f[0], f[1])
		},
	},
	{
		clause: "3.3.2.10", rule: "C_BALANCE = sum(delivered OL_AMOUNT) - sum(H_AMOUNT) per customer", ncols: 3,
		sql: func(tb func(string) string) string {
			return `SELECT c_w_id, c_d_id, count(*) FROM ` + tb(TCustomer) + `
LEFT JOIN (` + deliveredAmounts(tb) + `) ol ON ol.w = c_w_id AND ol.d = c_d_id AND ol.c = c_id
LEFT JOIN (SELECT h_c_w_id AS w, h_c_d_id AS d, h_c_id AS c, sum(h_amount) AS s FROM ` + tb(THistory) + `
  GROUP BY h_c_w_id, h_c_d_id, h_c_id) h ON h.w = c_w_id AND h.d = c_d_id AND h.c = c_id
WHERE abs(c_balance - (coalesce(ol.s, 0) - coalesce(h.s, 0))) > ` + moneyTol + `
GROUP BY c_w_id, c_d_id ORDER BY c_w_id, c_d_id`
		},
		describe: func(v []int64, _ []float64) string {
			return fmt.Sprintf("warehouse %d district %d: %d customers", v[0], v[1], v[2])
		},
	},
	{
		clause: "3.3.2.12", rule: "C_BALANCE + C_YTD_PAYMENT = sum(delivered OL_AMOUNT) per customer", ncols: 3,
		sql: func(tb func(string) string) string {
			return `SELECT c_w_id, c_d_id, count(*) FROM ` + tb(TCustomer) + `
LEFT JOIN (` + deliveredAmounts(tb) + `) ol ON ol.w = c_w_id AND ol.d = c_d_id AND ol.c = c_id
WHERE abs(c_balance + c_ytd_payment - coalesce(ol.s, 0)) > ` + moneyTol + `
GROUP BY c_w_id, c_d_id ORDER BY c_w_id, c_d_id`
		},
		describe: func(v []int64, _ []float64) string {
			return fmt.Sprintf("warehouse %d district %d: %d customers", v[0], v[1], v[2])
		},
	},
}

// deliveredAmounts is the sum of OL_AMOUNT over delivered order lines
// (OL_DELIVERY_D not null) per customer (w, d, c).
func deliveredAmounts(tb func(string) string) string {
	return `SELECT o_w_id AS w, o_d_id AS d, o_c_id AS c, sum(ol_amount) AS s FROM ` + tb(TOrders) + `
  JOIN ` + tb(TOrderLine) + ` ON ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id
  WHERE ol_delivery_d IS NOT NULL GROUP BY o_w_id, o_d_id, o_c_id`
}

func orNone(v int64) string {
	if v < 0 {
		return "none"
	}
	return fmt.Sprint(v)
}

// maxListed is how many offending warehouses/districts a condition lists.
const maxListed = 10

// PrintChecks writes one line per condition, PASS or FAIL, with up to
// maxListed offenders under each failure. It returns the number of failed
// conditions.
func PrintChecks(w io.Writer, results []CheckResult) int {
	failed := 0
	for _, r := range results {
		verdict := "PASS"
		if !r.Pass() {
			verdict = "FAIL"
			failed++
		}
		fmt.Fprintf(w, "  %-8s %-4s  %s (%.1fs)\n", r.Clause, verdict, r.Rule, r.Elapsed.Seconds())
		for i, f := range r.Failures {
			if i == maxListed {
				fmt.Fprintf(w, "                  … and %d more\n", len(r.Failures)-maxListed)
				break
			}
			fmt.Fprintf(w, "                  %s\n", f)
		}
	}
	if failed == 0 {
		fmt.Fprintf(w, "consistency: all %d conditions hold\n", len(results))
	} else {
		names := make([]string, 0, failed)
		for _, r := range results {
			if !r.Pass() {
				names = append(names, r.Clause)
			}
		}
		fmt.Fprintf(w, "consistency: %d of %d conditions FAIL (%s)\n", failed, len(results), strings.Join(names, ", "))
	}
	return failed
}
