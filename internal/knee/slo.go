// Package knee finds the highest request rate a target sustains within a
// service-level objective (SLO): the "knee" of the load curve.
//
// The search (Search) is a pure function over a probe callback, probe(rate)
// → Outcome, so it is tested without a database: the command line runs each
// probe as one open-loop step on the target and checks its figures against
// the SLO (SLO.Check).
package knee

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ceiling-db/ceiling/internal/metrics"
)

// Metrics an SLO term can bound.
const (
	MetricLate     = "late"     // % of scheduled requests that could not start in time
	MetricErrors   = "errors"   // % of finished requests that failed
	MetricAchieved = "achieved" // achieved rate as a % of the requested rate
)

// latencyMetrics are the latency percentiles a term can bound, in milliseconds.
var latencyMetrics = map[string]func(*metrics.Latency) float64{
	"p50":   func(l *metrics.Latency) float64 { return l.P50 },
	"p90":   func(l *metrics.Latency) float64 { return l.P90 },
	"p95":   func(l *metrics.Latency) float64 { return l.P95 },
	"p99":   func(l *metrics.Latency) float64 { return l.P99 },
	"p999":  func(l *metrics.Latency) float64 { return l.P999 },
	"max":   func(l *metrics.Latency) float64 { return l.Max },
	"mean":  func(l *metrics.Latency) float64 { return l.Mean },
	"p99.9": nil, // alias of p999, resolved by ParseSLO
}

// Term is one condition of an SLO, such as p99<50ms, late<1% or
// new_order.p90<5s.
type Term struct {
	// Operation, when set, restricts a latency term to one of the
	// workload's operations (new_order.p90<5s: TPC-C bounds each
	// transaction type's response time); "" is every request.
	Operation string
	Metric    string  // p50 … p999, max, mean, late, errors, achieved
	Op        string  // "<" or "<=" (upper bounds), ">" or ">=" (achieved)
	Limit     float64 // milliseconds for latencies, percent otherwise
	// Implied marks a term ceiling added because the SLO said nothing about
	// that aspect (see SLO.WithImplied).
	Implied bool
}

func (t Term) String() string {
	if _, ok := latencyMetrics[t.Metric]; ok {
		return fmt.Sprintf("%s%s%s", t.Name(), t.Op, fmtMs(t.Limit))
	}
	return fmt.Sprintf("%s%s%s%%", t.Metric, t.Op, strconv.FormatFloat(t.Limit, 'g', -1, 64))
}

// Name is the term's metric, with its operation when it has one
// (new_order.p90).
func (t Term) Name() string {
	if t.Operation != "" {
		return t.Operation + "." + t.Metric
	}
	return t.Metric
}

// fmtMs writes a millisecond limit the way a user would type it.
func fmtMs(ms float64) string {
	if ms >= 1000 && ms == float64(int64(ms)) && int64(ms)%1000 == 0 {
		return strconv.FormatInt(int64(ms)/1000, 10) + "s"
	}
	return strconv.FormatFloat(ms, 'g', -1, 64) + "ms"
}

// SLO is a conjunction of terms: a probe passes when every term holds.
type SLO []Term

func (s SLO) String() string {
	parts := make([]string, len(s))
	for i, t := range s {
		parts[i] = t.String()
	}
	return strings.Join(parts, ",")
}

// ParseSLO parses a comma-separated list of terms:
//
//	p50|p90|p95|p99|p999|p99.9|max|mean < DURATION   e.g. p99<50ms, p999<=1s
//	late < PERCENT                                    e.g. late<1%
//	errors < PERCENT                                  e.g. errors<0.1%
//	achieved > PERCENT (of the requested rate)        e.g. achieved>95%
//	OPERATION.LATENCY < DURATION                      e.g. new_order.p90<5s
//
// Durations need a unit; percentages need the % sign. Each metric may
// appear once (per operation). Errors name the offending term; the
// operations are checked against the workload's by CheckOps.
func ParseSLO(spec string) (SLO, error) {
	if strings.TrimSpace(spec) == "" {
		return nil, errors.New("empty SLO: give terms such as 'p99<50ms,late<1%'")
	}
	var slo SLO
	seen := map[string]bool{}
	for _, raw := range strings.Split(spec, ",") {
		term, err := parseTerm(strings.TrimSpace(raw))
		if err != nil {
			return nil, err
		}
		if seen[term.Name()] {
			return nil, fmt.Errorf("SLO term %q: %s is given twice", raw, term.Name())
		}
		seen[term.Name()] = true
		slo = append(slo, term)
	}
	return slo, nil
}

func parseTerm(s string) (Term, error) {
	if s == "" {
		return Term{}, errors.New("empty SLO term (stray comma?)")
	}
	i := strings.IndexAny(s, "<>=")
	if i < 0 {
		return Term{}, fmt.Errorf("SLO term %q has no comparison: write e.g. p99<50ms", s)
	}
	metric := strings.ToLower(strings.TrimSpace(s[:i]))
	rest := s[i:]
	op := ""
	for _, o := range []string{"<=", ">=", "<", ">"} {
		if strings.HasPrefix(rest, o) {
			op = o
			break
		}
	}
	if op == "" {
		return Term{}, fmt.Errorf("SLO term %q: comparison must be <, <=, > or >=", s)
	}
	val := strings.TrimSpace(rest[len(op):])
	if val == "" {
		return Term{}, fmt.Errorf("SLO term %q has no limit", s)
	}
	if strings.ContainsAny(val, "<>=") {
		return Term{}, fmt.Errorf("SLO term %q has more than one comparison", s)
	}
	operation := ""
	if o, m, ok := strings.Cut(metric, "."); ok && metric != "p99.9" {
		operation, metric = strings.TrimSpace(o), strings.TrimSpace(m)
		if operation == "" {
			return Term{}, fmt.Errorf("SLO term %q: no operation before the dot (e.g. new_order.p90<5s)", s)
		}
	}
	if metric == "p99.9" {
		metric = "p999"
	}
	if operation != "" && (metric == MetricLate || metric == MetricErrors || metric == MetricAchieved) {
		return Term{}, fmt.Errorf("SLO term %q: only a latency (p50 … p999, max, mean) can be bounded per operation", s)
	}
	upper := op == "<" || op == "<="
	switch {
	case latencyMetrics[metric] != nil:
		if !upper {
			return Term{}, fmt.Errorf("SLO term %q: a latency takes an upper bound (< or <=)", s)
		}
		if _, err := strconv.ParseFloat(val, 64); err == nil {
			return Term{}, fmt.Errorf("SLO term %q: the limit needs a unit, e.g. %sms", s, val)
		}
		d, err := time.ParseDuration(val)
		if err != nil {
			return Term{}, fmt.Errorf("SLO term %q: %q is not a duration (e.g. 50ms, 1s)", s, val)
		}
		if d <= 0 {
			return Term{}, fmt.Errorf("SLO term %q: the limit must be above zero", s)
		}
		return Term{Operation: operation, Metric: metric, Op: op, Limit: float64(d) / float64(time.Millisecond)}, nil
	case metric == MetricLate || metric == MetricErrors || metric == MetricAchieved:
		if metric == MetricAchieved && upper {
			return Term{}, fmt.Errorf("SLO term %q: achieved takes a lower bound (> or >=), e.g. achieved>95%%", s)
		}
		if metric != MetricAchieved && !upper {
			return Term{}, fmt.Errorf("SLO term %q: %s takes an upper bound (< or <=), e.g. %s<1%%", s, metric, metric)
		}
		num, ok := strings.CutSuffix(val, "%")
		if !ok {
			return Term{}, fmt.Errorf("SLO term %q: the limit is a percentage: write it with %%, e.g. %s%s%s%%", s, metric, op, val)
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
		if err != nil {
			return Term{}, fmt.Errorf("SLO term %q: %q is not a percentage", s, val)
		}
		if !(v >= 0 && v <= 100) {
			return Term{}, fmt.Errorf("SLO term %q: the percentage must be between 0 and 100", s)
		}
		if (op == "<" && v == 0) || (op == ">" && v == 100) {
			return Term{}, fmt.Errorf("SLO term %q can never hold: use %s instead", s, strings.Replace(s, op, op+"=", 1))
		}
		return Term{Metric: metric, Op: op, Limit: v}, nil
	default:
		return Term{}, fmt.Errorf("SLO term %q: unknown metric %q (want p50, p90, p95, p99, p999, max, mean, late, errors or achieved)", s, metric)
	}
}

// CheckOps checks that every operation the SLO names is one of ops (the
// workload's).
func (s SLO) CheckOps(ops []string) error {
	for _, t := range s {
		if t.Operation != "" && !slices.Contains(ops, t.Operation) {
			return fmt.Errorf("SLO term %s: the workload has no operation %q (it has: %s)", t, t.Operation, strings.Join(ops, ", "))
		}
	}
	return nil
}

// Default limits of the implied terms.
const (
	ImpliedLatePct   = 1.0
	ImpliedErrorsPct = 1.0
)

// WithImplied returns the SLO with the terms a sustained rate needs that s
// does not state: late<1% when s bounds neither lateness nor the achieved
// rate (otherwise a rate where most requests are skipped could pass on the
// latency of the few that run), and errors<1% when s does not bound errors
// (otherwise a rate where requests fail fast could pass).
func (s SLO) WithImplied() SLO {
	has := map[string]bool{}
	for _, t := range s {
		has[t.Metric] = true
	}
	out := append(SLO(nil), s...)
	if !has[MetricLate] && !has[MetricAchieved] {
		out = append(out, Term{Metric: MetricLate, Op: "<", Limit: ImpliedLatePct, Implied: true})
	}
	if !has[MetricErrors] {
		out = append(out, Term{Metric: MetricErrors, Op: "<", Limit: ImpliedErrorsPct, Implied: true})
	}
	return out
}

// Figures are what one probe measured.
type Figures struct {
	Rate      float64 // requested, requests/s
	Achieved  float64 // completed requests/s
	Scheduled int64
	Completed int64
	Late      int64
	Failed    int64
	Latency   *metrics.Latency // of completed requests; nil when none completed
	// ByOp are the completed requests of each operation and their
	// latency, for the terms that name one.
	ByOp map[string]OpFigures
}

// OpFigures are one operation's part of a probe.
type OpFigures struct {
	Completed int64
	Latency   *metrics.Latency // nil when none completed
}

// unseen reports whether t names an operation of which none completed in
// a probe where others did: too few requests, as a thin percentile.
func (t Term) unseen(f Figures) bool {
	return t.Operation != "" && t.completed(f) == 0 && f.Completed > 0
}

// completed is how many requests t's figure was taken from.
func (t Term) completed(f Figures) int64 {
	if t.Operation != "" {
		return f.ByOp[t.Operation].Completed
	}
	return f.Completed
}

// Check returns the terms f breaks, each with the measured value, e.g.
// "p99 62.1ms ≥ 50ms"; none means f meets the SLO. A probe where no request
// completed breaks the SLO whatever its terms.
func (s SLO) Check(f Figures) []string {
	var failed []string
	if f.Completed == 0 {
		failed = append(failed, "no request completed")
	}
	for _, t := range s {
		v, ok := t.value(f)
		if !ok {
			switch {
			case t.unseen(f):
				failed = append(failed, fmt.Sprintf("%s not measured (no %s request completed)", t.Name(), t.Operation))
			case f.Completed > 0:
				failed = append(failed, t.Name()+" not measured")
			}
			continue
		}
		if !t.holds(v) {
			msg := t.Name() + " " + t.format(v) + " " + negate(t.Op) + " " + t.limitText()
			if k, ok := t.thin(f); ok {
				msg += fmt.Sprintf(" (of %d requests: the %s slowest)", t.completed(f), ordinal(k))
			}
			failed = append(failed, msg)
		}
	}
	return failed
}

// Over is how far f breaks s's latency terms: the largest ratio of a
// broken latency term's figure to its limit (3: three times the bound),
// +Inf when f breaks a term of another kind or one it does not measure,
// and 0 when it breaks none.
func (s SLO) Over(f Figures) float64 {
	over := 0.0
	if f.Completed == 0 {
		return math.Inf(1)
	}
	for _, t := range s {
		v, ok := t.value(f)
		switch {
		case !ok: // not measured: Check counts it broken
			return math.Inf(1)
		case t.holds(v):
		case latencyMetrics[t.Metric] == nil || t.Limit <= 0:
			return math.Inf(1)
		default:
			over = math.Max(over, v/t.Limit)
		}
	}
	return over
}

// quantiles are the percentile metrics' fractions.
var quantiles = map[string]float64{"p50": 0.5, "p90": 0.9, "p95": 0.95, "p99": 0.99, "p999": 0.999}

// ThinRequests is how many requests must lie above a percentile for a
// probe to measure it rather than pick it out of its few slowest: below
// it, one stray slow request (a stall of the host, a cold connection's
// first statement) sets the figure.
const ThinRequests = 10

// thin reports whether t is a percentile that f measured from so few
// requests that fewer than ThinRequests lie above it, and which slowest
// request (1: the slowest) it then is.
func (t Term) thin(f Figures) (int64, bool) {
	q, ok := quantiles[t.Metric]
	n := t.completed(f)
	if !ok || n <= 0 {
		return 0, false
	}
	above := int64(math.Floor(float64(n)*(1-q) + 1e-9))
	return above + 1, above < ThinRequests
}

// Thin returns the broken terms of s that f measured from too few
// requests (see ThinRequests), by name (p99, new_order.p90); none when
// every broken term had enough, or none is broken.
func (s SLO) Thin(f Figures) []string {
	var out []string
	for _, t := range s {
		if t.unseen(f) {
			out = append(out, t.Name())
		} else if v, ok := t.value(f); ok && !t.holds(v) {
			if _, thin := t.thin(f); thin {
				out = append(out, t.Name())
			}
		}
	}
	return out
}

// Need is how many requests in all a probe like f needs for its broken
// thin terms (Thin) to be measured: RequestsFor the term's percentile, of
// the term's operation where it names one, scaled by that operation's
// share of f's requests (below one in f's requests when none of it
// completed). 0 when no broken term is thin.
func (s SLO) Need(f Figures) int64 {
	var need int64
	for _, t := range s {
		if t.unseen(f) {
			// Its share is below one in f.Completed.
			need = max(need, RequestsFor(t.Metric)*(f.Completed+1))
			continue
		}
		v, ok := t.value(f)
		if !ok || t.holds(v) {
			continue
		}
		if _, thin := t.thin(f); !thin {
			continue
		}
		n := RequestsFor(t.Metric)
		if c := t.completed(f); t.Operation != "" && c > 0 {
			n = int64(math.Ceil(float64(n) * float64(f.Completed) / float64(c)))
		}
		need = max(need, n)
	}
	return need
}

// HasPercentile reports whether s bounds a percentile (p50 … p999).
func (s SLO) HasPercentile() bool {
	for _, t := range s {
		if _, ok := quantiles[t.Metric]; ok {
			return true
		}
	}
	return false
}

// RequestsFor is how many requests a probe needs for percentile metric to
// be measured (ThinRequests above it); 0 for a metric that is no
// percentile.
func RequestsFor(metric string) int64 {
	q, ok := quantiles[metric]
	if !ok {
		return 0
	}
	return int64(math.Ceil(ThinRequests/(1-q) - 1e-9))
}

func ordinal(n int64) string {
	switch {
	case n%100 >= 11 && n%100 <= 13:
		return fmt.Sprintf("%dth", n)
	case n%10 == 1:
		return fmt.Sprintf("%dst", n)
	case n%10 == 2:
		return fmt.Sprintf("%dnd", n)
	case n%10 == 3:
		return fmt.Sprintf("%drd", n)
	}
	return fmt.Sprintf("%dth", n)
}

// Value returns the term's metric in f (ms for latencies, % otherwise),
// and false when f does not measure it.
func (t Term) Value(f Figures) (float64, bool) { return t.value(f) }

// Shown is the latency term a probe's line shows: the SLO's first, or
// p99 of every request when it bounds none.
func (s SLO) Shown() Term {
	for _, t := range s {
		if latencyMetrics[t.Metric] != nil {
			return t
		}
	}
	return Term{Metric: "p99"}
}

// value returns the term's metric in f, and false when f does not measure it.
func (t Term) value(f Figures) (float64, bool) {
	if get := latencyMetrics[t.Metric]; get != nil {
		l := f.Latency
		if t.Operation != "" {
			l = f.ByOp[t.Operation].Latency
		}
		if l == nil {
			return 0, false
		}
		return get(l), true
	}
	switch t.Metric {
	case MetricLate:
		if f.Scheduled <= 0 {
			return 0, false
		}
		return 100 * float64(f.Late) / float64(f.Scheduled), true
	case MetricErrors:
		n := f.Completed + f.Failed
		if n <= 0 {
			return 0, false
		}
		return 100 * float64(f.Failed) / float64(n), true
	case MetricAchieved:
		if f.Rate <= 0 {
			return 0, false
		}
		return 100 * f.Achieved / f.Rate, true
	}
	return 0, false
}

// Violated reports whether a value v of the term's metric breaks it.
func (t Term) Violated(v float64) bool { return !t.holds(v) }

func (t Term) holds(v float64) bool {
	switch t.Op {
	case "<":
		return v < t.Limit
	case "<=":
		return v <= t.Limit
	case ">":
		return v > t.Limit
	default:
		return v >= t.Limit
	}
}

func (t Term) format(v float64) string {
	if _, ok := latencyMetrics[t.Metric]; ok {
		return strconv.FormatFloat(v, 'f', 3, 64) + "ms"
	}
	return strconv.FormatFloat(v, 'f', 2, 64) + "%"
}

func (t Term) limitText() string {
	if _, ok := latencyMetrics[t.Metric]; ok {
		return fmtMs(t.Limit)
	}
	return strconv.FormatFloat(t.Limit, 'g', -1, 64) + "%"
}

func negate(op string) string {
	switch op {
	case "<":
		return "≥"
	case "<=":
		return ">"
	case ">":
		return "≤"
	default:
		return "<"
	}
}
