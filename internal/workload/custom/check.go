package custom

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/ceiling-db/ceiling/internal/target"
)

// CheckResult is one of a file's checks as run.
type CheckResult struct {
	Name string
	Pass bool
	Got  string // the value the query returned ("no row" when none)
	Want string
}

// Check runs the file's checks (its checks: list) on the tables as they
// are, in the file's order: each query's first column of its first row
// must equal the check's want, numerically when both are numbers. A query
// the database refuses is an error naming the check.
func (c *Custom) Check(ctx context.Context, t target.Target) ([]CheckResult, error) {
	if c.spec == nil {
		return nil, errors.New("custom: the file was not read (Validate)")
	}
	d := t.Dialect()
	conn, err := t.Connect(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	var out []CheckResult
	for _, ck := range c.spec.File.Checks {
		text, ok := ck.SQL.For(d.Engine)
		if !ok {
			return out, fmt.Errorf("check %s has no sql for %s", ck.Name, d.Engine)
		}
		sql, err := rewrite(text, func(name string) (string, bool) { return d.Table(TablePrefix + name), true }, d.Placeholder)
		if err != nil {
			return out, fmt.Errorf("check %s: %w", ck.Name, err)
		}
		got, err := firstValue(ctx, conn, sql)
		if err != nil {
			return out, fmt.Errorf("check %s: %w", ck.Name, err)
		}
		out = append(out, CheckResult{Name: ck.Name, Got: got, Want: ck.Want.Value, Pass: same(got, ck.Want.Value)})
	}
	return out, nil
}

// PostCheck implements workload.PostChecker: the file's checks, as lines
// "name: ok (value)" or "name: FAILED, got X, want Y".
func (c *Custom) PostCheck(ctx context.Context, t target.Target) ([]string, int, error) {
	if c.spec == nil || len(c.spec.File.Checks) == 0 {
		return nil, 0, nil
	}
	res, err := c.Check(ctx, t)
	var lines []string
	failed := 0
	for _, r := range res {
		if r.Pass {
			lines = append(lines, fmt.Sprintf("%s: ok (%s)", r.Name, r.Got))
		} else {
			failed++
			lines = append(lines, fmt.Sprintf("%s: FAILED, got %s, want %s", r.Name, r.Got, r.Want))
		}
	}
	return lines, failed, err
}

// firstValue is the first column of the query's first row as text, "no
// row" when it returns none, "NULL" for a NULL.
func firstValue(ctx context.Context, conn target.Conn, sql string) (string, error) {
	rows, err := conn.Query(ctx, sql)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	if !rows.Next() {
		return "no row", rows.Err()
	}
	vr, ok := rows.(target.ValueRows)
	if !ok {
		return "", errors.New("this target cannot give a row's values")
	}
	vals, err := vr.Values()
	if err != nil {
		return "", err
	}
	if len(vals) == 0 {
		return "no column", nil
	}
	return text(vals[0]), rows.Close()
}

// text writes a driver's value as text.
func text(v any) string {
	if vl, ok := v.(driver.Valuer); ok { // e.g. pgx's numeric
		if dv, err := vl.Value(); err == nil {
			v = dv
		}
	}
	switch v := v.(type) {
	case nil:
		return "NULL"
	case []byte:
		return string(v)
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	return fmt.Sprint(v)
}

// same compares a check's result with its want: as numbers when both are
// (0 = 0.00), else as texts.
func same(got, want string) bool {
	g, err1 := strconv.ParseFloat(strings.TrimSpace(got), 64)
	w, err2 := strconv.ParseFloat(strings.TrimSpace(want), 64)
	if err1 == nil && err2 == nil {
		return g == w || math.Abs(g-w) <= 1e-9*math.Max(math.Abs(g), math.Abs(w))
	}
	return got == want
}
