package report

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/ceiling-db/ceiling/internal/metrics"
)

// TestIsolatedShares checks the shares of the mix: time from the mix's own
// requests × mean latency (over all its operations), server costs from the
// mix share × the cost alone, a resource left out when one operation's cost
// is unknown, and the comparison of the weighted parts with the mix.
func TestIsolatedShares(t *testing.T) {
	r := &Result{
		Summary: Summary{Requests: 1000, OpOrder: []string{"a", "b"}, ByOp: map[string]OpResult{
			"a": {Requests: 600, LatencyMs: &metrics.Latency{Mean: 1}}, // 600 ms of request time
			"b": {Requests: 400, LatencyMs: &metrics.Latency{Mean: 6}}, // 2400 ms
		}},
		Costs: Costs{LogBytesPerOp: f64(2000)},
		Isolated: []Isolated{
			{Op: "a", Requests: 50, Costs: Costs{LogBytesPerOp: f64(1000), DataReadsPerOp: f64(2)}},
			{Op: "b", Requests: 50, Costs: Costs{LogBytesPerOp: f64(3500)}},
		},
	}
	SetIsolatedShares(r)
	a, b := r.Isolated[0], r.Isolated[1]
	near := func(what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-9 {
			t.Errorf("%s = %v, want %v", what, got, want)
		}
	}
	near("a mix %", *a.MixPct, 60)
	near("b mix %", *b.MixPct, 40)
	near("a time %", a.SharePct[ShareTime], 20)
	near("b time %", b.SharePct[ShareTime], 80)
	// log bytes: a 0.6×1000 = 600, b 0.4×3500 = 1400.
	near("a log bytes %", a.SharePct[ShareLogBytes], 30)
	near("b log bytes %", b.SharePct[ShareLogBytes], 70)
	if _, ok := a.SharePct[ShareDataReads]; ok {
		t.Errorf("data reads share given although b's reads were not measured: %v", a.SharePct)
	}
	// The weighted parts: 600 + 1400 = 2000 bytes, the mix measured 2000.
	if fit := IsolatedFit(r); !strings.Contains(fit, "log bytes 100%") || strings.Contains(fit, "data reads") || strings.Contains(fit, "rough") {
		t.Errorf("fit %q: want log bytes 100%% and no data reads", fit)
	}
	// Far from 100% (MariaDB's mixed run: data writes 912%, page flushes
	// that fall where they fall), the sentence says the shares are rough.
	r.Costs.LogBytesPerOp = f64(200)
	if fit := IsolatedFit(r); !strings.Contains(fit, "log bytes 1000% of the mix's measured cost per request; log bytes far from 100%: the operations cost differently together than alone") {
		t.Errorf("fit %q: want the caveat", fit)
	}
	r.Costs.LogBytesPerOp = f64(2000)

	// Next to nothing to share: a's 1 data read in 30,000 requests and no
	// other reads come to 0.00002 per request of the mix, below the floor
	// (MariaDB's mixed had shown inserts as "100%" of the data reads).
	r.Isolated[0].Costs.DataReadsPerOp, r.Isolated[1].Costs.DataReadsPerOp = f64(1.0/30000), f64(0)
	SetIsolatedShares(r)
	if _, ok := r.Isolated[0].SharePct[ShareDataReads]; ok {
		t.Errorf("data reads shared at 0.00002 per request: %v", r.Isolated[0].SharePct)
	}
	r.Isolated[0].Costs.DataReadsPerOp = f64(0.01) // 0.006 per request: shared
	SetIsolatedShares(r)
	near("a data reads % (b none)", r.Isolated[0].SharePct[ShareDataReads], 100)
	r.Isolated[0].Costs.DataReadsPerOp, r.Isolated[1].Costs.DataReadsPerOp = f64(2), nil
	SetIsolatedShares(r)

	// Only part of the mix ran alone (interrupted): time shares stay
	// relative to the whole mix; server-cost shares are not estimated.
	r.Isolated = r.Isolated[:1]
	r.Isolated[0].Partial = true
	SetIsolatedShares(r)
	near("a time % (alone: a only)", r.Isolated[0].SharePct[ShareTime], 20)
	if _, ok := r.Isolated[0].SharePct[ShareLogBytes]; ok {
		t.Errorf("log bytes share estimated from part of the mix: %v", r.Isolated[0].SharePct)
	}
	if fit := IsolatedFit(r); fit != "" {
		t.Errorf("fit %q from part of the mix", fit)
	}
	var out bytes.Buffer
	printIsolated(&out, r)
	if !strings.Contains(out.String(), "(interrupted)") {
		t.Errorf("console does not mark the interrupted operation:\n%s", out.String())
	}
}
