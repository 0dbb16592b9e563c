package knee

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/ceiling-db/ceiling/internal/metrics"
)

func TestParseSLO(t *testing.T) {
	tests := []struct {
		spec string
		want string // canonical form; "" when an error is expected
		err  string // in the error
	}{
		{"p99<50ms,late<1%", "p99<50ms,late<1%", ""},
		{" p99 < 50ms , late < 1% ", "p99<50ms,late<1%", ""},
		{"p50<2ms,p90<5ms,p95<10ms,p99<=20ms,p999<1s", "p50<2ms,p90<5ms,p95<10ms,p99<=20ms,p999<1s", ""},
		{"p99.9<1500us", "p999<1.5ms", ""},
		{"P99<50ms", "p99<50ms", ""},
		{"errors<0.1%,achieved>95%", "errors<0.1%,achieved>95%", ""},
		{"achieved>=99.5%", "achieved>=99.5%", ""},
		{"max<2s,mean<1ms", "max<2s,mean<1ms", ""},
		{"late<=0%", "late<=0%", ""},
		{"", "", "empty SLO"},
		{"   ", "", "empty SLO"},
		{"p99<50ms,", "", "empty SLO term"},
		{"p99", "", "no comparison"},
		{"p99<", "", "no limit"},
		{"p99<50", "", "needs a unit"},
		{"p99<fast", "", "not a duration"},
		{"p99<0ms", "", "above zero"},
		{"p99<-5ms", "", "above zero"},
		{"p99>50ms", "", "upper bound"},
		{"p98<50ms", "", `unknown metric "p98"`},
		{"late<1", "", "write it with %"},
		{"late<abc%", "", "not a percentage"},
		{"late<150%", "", "between 0 and 100"},
		{"late>1%", "", "upper bound"},
		{"late<0%", "", "never hold"},
		{"achieved<95%", "", "lower bound"},
		{"achieved>100%", "", "never hold"},
		{"p99<50ms,p99<60ms", "", "given twice"},
		{"p99<<50ms", "", "more than one comparison"},
		{"p99=50ms", "", "comparison must be"},
	}
	for _, tc := range tests {
		t.Run(tc.spec, func(t *testing.T) {
			slo, err := ParseSLO(tc.spec)
			if tc.err != "" {
				if err == nil {
					t.Fatalf("got %v, want an error mentioning %q", slo, tc.err)
				}
				if !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %q does not mention %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if got := slo.String(); got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestWithImplied(t *testing.T) {
	tests := []struct{ spec, want string }{
		{"p99<50ms", "p99<50ms,late<1%,errors<1%"},
		{"p99<50ms,late<2%", "p99<50ms,late<2%,errors<1%"},
		{"p99<50ms,achieved>90%", "p99<50ms,achieved>90%,errors<1%"},
		{"late<1%,errors<=0%", "late<1%,errors<=0%"},
	}
	for _, tc := range tests {
		slo, err := ParseSLO(tc.spec)
		if err != nil {
			t.Fatal(err)
		}
		if got := slo.WithImplied().String(); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.spec, got, tc.want)
		}
	}
}

func TestCheck(t *testing.T) {
	slo, err := ParseSLO("p99<50ms,late<1%,errors<1%,achieved>95%")
	if err != nil {
		t.Fatal(err)
	}
	ok := Figures{Rate: 100, Achieved: 99, Scheduled: 1000, Completed: 990, Late: 5, Failed: 0, Latency: &metrics.Latency{P99: 10}}
	tests := []struct {
		name   string
		change func(*Figures)
		want   []string // substrings of the failed terms, in order; none = pass
	}{
		{"pass", func(*Figures) {}, nil},
		{"slow", func(f *Figures) { f.Latency = &metrics.Latency{P99: 62.1} }, []string{"p99 62.100ms ≥ 50ms"}},
		{"at the limit fails a strict bound", func(f *Figures) { f.Latency = &metrics.Latency{P99: 50} }, []string{"p99 50.000ms ≥ 50ms"}},
		{"late", func(f *Figures) { f.Late = 20 }, []string{"late 2.00% ≥ 1%"}},
		{"errors", func(f *Figures) { f.Failed = 20 }, []string{"errors 1.98% ≥ 1%"}},
		{"behind", func(f *Figures) { f.Achieved = 90 }, []string{"achieved 90.00% ≤ 95%"}},
		{"several", func(f *Figures) { f.Late = 500; f.Achieved = 50 }, []string{"late", "achieved"}},
		{"nothing completed", func(f *Figures) { f.Completed, f.Achieved, f.Latency = 0, 0, nil }, []string{"no request completed", "achieved"}},
		{"nothing scheduled", func(f *Figures) { f.Scheduled = 0 }, []string{"late not measured"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := ok
			tc.change(&f)
			got := slo.Check(f)
			if len(got) != len(tc.want) {
				t.Fatalf("got %q, want %d terms like %q", got, len(tc.want), tc.want)
			}
			for i := range got {
				if !strings.Contains(got[i], tc.want[i]) {
					t.Fatalf("term %d: got %q, want it to contain %q", i, got[i], tc.want[i])
				}
			}
		})
	}
}

// capacity is a fake target that meets the SLO up to limit requests/s.
func capacity(limit float64, calls *[]float64) ProbeFunc {
	return func(_ context.Context, rate float64, _ int) (Outcome, error) {
		*calls = append(*calls, rate)
		if rate <= limit {
			return Outcome{Pass: true}, nil
		}
		return Outcome{Failed: []string{"p99 too high"}}, nil
	}
}

func TestSearch(t *testing.T) {
	tests := []struct {
		name      string
		p         Params
		limit     float64
		stop      Stop
		knee      float64 // exact, or 0 with converge
		firstFail float64 // exact when knee is exact
		converge  bool    // knee within precision below limit
	}{
		{"converges", Params{Start: 10, Max: 1e6, Precision: 0.05}, 730, StopConverged, 0, 0, true},
		{"converges finely", Params{Start: 10, Max: 1e6, Precision: 0.001}, 730, StopConverged, 0, 0, true},
		{"converges from a high start", Params{Start: 500, Max: 1e6, Precision: 0.02}, 12345, StopConverged, 0, 0, true},
		{"limit on a ramp rate", Params{Start: 10, Max: 1e6, Precision: 0.05}, 640, StopConverged, 0, 0, true},
		{"passes at max", Params{Start: 10, Max: 100, Precision: 0.05}, 730, StopMaxPassed, 100, 0, false},
		{"start equals max", Params{Start: 50, Max: 50, Precision: 0.05}, 730, StopMaxPassed, 50, 0, false},
		{"fails at start", Params{Start: 1000, Max: 1e6, Precision: 0.05}, 730, StopStartFailed, 0, 1000, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var calls []float64
			res, err := Search(context.Background(), tc.p, capacity(tc.limit, &calls))
			if err != nil {
				t.Fatal(err)
			}
			if res.Stop != tc.stop {
				t.Fatalf("stop %q, want %q (probes %v)", res.Stop, tc.stop, calls)
			}
			if len(res.Probes) != len(calls) {
				t.Fatalf("%d probes recorded, %d run", len(res.Probes), len(calls))
			}
			for i, pr := range res.Probes {
				if pr.Rate != calls[i] || pr.Pass != (pr.Rate <= tc.limit) {
					t.Fatalf("probe %d: %+v, ran %g", i, pr, calls[i])
				}
				if pr.Rate < tc.p.Start || pr.Rate > tc.p.Max {
					t.Fatalf("probe %d at %g outside [%g, %g]", i, pr.Rate, tc.p.Start, tc.p.Max)
				}
			}
			if !tc.converge {
				if res.Knee != tc.knee || res.FirstFailing != tc.firstFail {
					t.Fatalf("knee %g first failing %g, want %g and %g", res.Knee, res.FirstFailing, tc.knee, tc.firstFail)
				}
				return
			}
			if res.Knee > tc.limit || res.Knee < tc.limit/(1+tc.p.Precision) {
				t.Fatalf("knee %g, want within %g%% below %g (probes %v)", res.Knee, 100*tc.p.Precision, tc.limit, calls)
			}
			if res.FirstFailing <= tc.limit || res.FirstFailing-res.Knee > tc.p.Precision*res.Knee {
				t.Fatalf("bracket [%g, %g] not within precision around %g", res.Knee, res.FirstFailing, tc.limit)
			}
			if len(calls) > 40 {
				t.Fatalf("%d probes: the search should take far fewer", len(calls))
			}
		})
	}
}

func TestSearchRampSequence(t *testing.T) {
	var calls []float64
	res, err := Search(context.Background(), Params{Start: 10, Max: 1e6, Precision: 0.05}, capacity(730, &calls))
	if err != nil {
		t.Fatal(err)
	}
	// Ramp ×2 to the first failure, then bisect [640, 1280].
	want := []float64{10, 20, 40, 80, 160, 320, 640, 1280, 960, 800, 720, 760, 740}
	if len(calls) != len(want) {
		t.Fatalf("probes %v, want %v", calls, want)
	}
	for i := range want {
		if calls[i] != want[i] {
			t.Fatalf("probes %v, want %v", calls, want)
		}
	}
	if res.Knee != 720 || res.FirstFailing != 740 {
		t.Fatalf("knee %g first failing %g, want 720 and 740", res.Knee, res.FirstFailing)
	}
}

func TestSearchStops(t *testing.T) {
	boom := errors.New("connection refused")
	t.Run("probe error", func(t *testing.T) {
		n := 0
		res, err := Search(context.Background(), Params{Start: 10, Max: 1000, Precision: 0.05}, func(context.Context, float64, int) (Outcome, error) {
			n++
			if n == 3 {
				return Outcome{}, boom
			}
			return Outcome{Pass: true}, nil
		})
		if !errors.Is(err, boom) || res.Stop != StopProbeFailure || len(res.Probes) != 2 || res.Knee != 20 {
			t.Fatalf("err %v stop %q probes %d knee %g", err, res.Stop, len(res.Probes), res.Knee)
		}
	})
	t.Run("interrupted", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		res, err := Search(ctx, Params{Start: 10, Max: 1000, Precision: 0.05}, func(_ context.Context, rate float64, _ int) (Outcome, error) {
			if rate == 40 {
				cancel()
				return Outcome{Partial: true}, nil
			}
			return Outcome{Pass: true}, nil
		})
		if !errors.Is(err, context.Canceled) || res.Stop != StopInterrupted || len(res.Probes) != 3 || res.Knee != 20 || res.FirstFailing != 0 {
			t.Fatalf("err %v stop %q probes %d knee %g first failing %g", err, res.Stop, len(res.Probes), res.Knee, res.FirstFailing)
		}
	})
	t.Run("probe limit", func(t *testing.T) {
		var calls []float64
		res, err := Search(context.Background(), Params{Start: 1, Max: 1e8, Precision: 1e-9, MaxProbes: 12}, capacity(730, &calls))
		if err != nil || res.Stop != StopProbeLimit || len(calls) != 12 {
			t.Fatalf("err %v stop %q probes %d", err, res.Stop, len(calls))
		}
		if res.Knee > 730 || res.FirstFailing <= 730 {
			t.Fatalf("bracket [%g, %g] does not hold 730", res.Knee, res.FirstFailing)
		}
	})
	t.Run("bad params", func(t *testing.T) {
		for _, p := range []Params{{Start: 0, Max: 10, Precision: 0.05}, {Start: 10, Max: 5, Precision: 0.05}, {Start: 1, Max: 10, Precision: 0}, {Start: 1, Max: 10, Precision: 1}, {Start: 1, Max: 10, Precision: 0.1, Factor: 1}, {Start: 1, Max: 10, Precision: 0.1, Retries: -1}, {Start: 1, Max: 10, Precision: 0.1, Retries: MaxRetries + 1}} {
			if _, err := Search(context.Background(), p, func(context.Context, float64, int) (Outcome, error) { return Outcome{}, nil }); err == nil {
				t.Errorf("%+v: want an error", p)
			}
		}
	})
}

// stalls is a fake target that meets the SLO up to limit requests/s except
// that the probes numbered in stallAt (0-based, in the order run) fail, as
// a server stall would make them.
func stalls(limit float64, stallAt map[int]bool, calls *[]float64, retries *[]int) ProbeFunc {
	return func(_ context.Context, rate float64, retry int) (Outcome, error) {
		n := len(*calls)
		*calls = append(*calls, rate)
		*retries = append(*retries, retry)
		if rate <= limit && !stallAt[n] {
			return Outcome{Pass: true}, nil
		}
		return Outcome{Failed: []string{"p99 too high"}}, nil
	}
}

func TestSearchRetries(t *testing.T) {
	p := Params{Start: 10, Max: 1e6, Precision: 0.05}
	t.Run("a stall on the ramp bounds the search without retries", func(t *testing.T) {
		var calls []float64
		var retries []int
		res, err := Search(context.Background(), p, stalls(2000, map[int]bool{7: true}, &calls, &retries))
		if err != nil {
			t.Fatal(err)
		}
		if res.FirstFailing != 1280 || res.Knee > 1280 || len(res.Transient) != 0 {
			t.Fatalf("knee %g first failing %g transient %v (probes %v)", res.Knee, res.FirstFailing, res.Transient, calls)
		}
	})
	t.Run("a stall that does not recur is run again and passed over", func(t *testing.T) {
		var calls []float64
		var retries []int
		p := p
		p.Retries = 1
		res, err := Search(context.Background(), p, stalls(2000, map[int]bool{7: true}, &calls, &retries))
		if err != nil {
			t.Fatal(err)
		}
		// probe 7 (1280/s) failed, its re-run passed, and the ramp went on.
		if calls[7] != 1280 || calls[8] != 1280 || retries[7] != 0 || retries[8] != 1 || calls[9] != 2560 {
			t.Fatalf("probes %v retries %v", calls, retries)
		}
		if res.Knee > 2000 || res.Knee < 2000/(1+p.Precision) || res.FirstFailing <= 2000 {
			t.Fatalf("knee %g first failing %g, want the bracket around 2000 (probes %v)", res.Knee, res.FirstFailing, calls)
		}
		if len(res.Transient) != 1 || res.Transient[0] != 1280 {
			t.Fatalf("transient %v, want [1280]", res.Transient)
		}
		if pr := res.Probes[8]; pr.Rate != 1280 || pr.Retry != 1 || !pr.Pass || res.Probes[7].Pass {
			t.Fatalf("probes[7..8] %+v %+v", res.Probes[7], pr)
		}
	})
	t.Run("a failure that recurs bounds the search", func(t *testing.T) {
		var calls []float64
		var retries []int
		p := p
		p.Retries = 2
		res, err := Search(context.Background(), p, stalls(730, nil, &calls, &retries))
		if err != nil {
			t.Fatal(err)
		}
		if res.Knee > 730 || res.Knee < 730/(1+p.Precision) || res.FirstFailing <= 730 || len(res.Transient) != 0 {
			t.Fatalf("knee %g first failing %g transient %v", res.Knee, res.FirstFailing, res.Transient)
		}
		// Every failing rate was run three times in a row, every passing one once.
		for i := 0; i < len(calls); {
			n := 1
			for i+n < len(calls) && calls[i+n] == calls[i] {
				n++
			}
			want := 1
			if calls[i] > 730 {
				want = 3
			}
			if n != want {
				t.Fatalf("rate %g probed %d times in a row, want %d (probes %v)", calls[i], n, want, calls)
			}
			for j := 0; j < n; j++ {
				if retries[i+j] != j || res.Probes[i+j].Retry != j {
					t.Fatalf("probe %d at %g: retry %d, want %d", i+j, calls[i], retries[i+j], j)
				}
			}
			i += n
		}
	})
	t.Run("the start rate is run again before the search gives up", func(t *testing.T) {
		var calls []float64
		var retries []int
		p := p
		p.Retries = 1
		res, err := Search(context.Background(), p, stalls(2000, map[int]bool{0: true}, &calls, &retries))
		if err != nil {
			t.Fatal(err)
		}
		if res.Stop != StopConverged || calls[0] != 10 || calls[1] != 10 || res.Transient[0] != 10 {
			t.Fatalf("stop %q probes %v transient %v", res.Stop, calls, res.Transient)
		}
	})
	t.Run("re-runs count against the probe limit", func(t *testing.T) {
		var calls []float64
		var retries []int
		p := Params{Start: 10, Max: 1e6, Precision: 0.05, Retries: 3, MaxProbes: 9}
		res, err := Search(context.Background(), p, stalls(100, nil, &calls, &retries))
		if err != nil {
			t.Fatal(err)
		}
		// 10..80 pass (4), 160 fails 4 times (8), 120 once more hits the limit.
		if res.Stop != StopProbeLimit || len(calls) != 9 || res.FirstFailing != 160 || res.Knee != 80 {
			t.Fatalf("stop %q probes %v knee %g first failing %g", res.Stop, calls, res.Knee, res.FirstFailing)
		}
	})
}

// TestThin: a broken percentile measured from too few requests says which
// slowest request it is and is named by Thin; with enough requests above
// it, or a term that is no percentile, it is not.
func TestThin(t *testing.T) {
	slo, err := ParseSLO("p99<5ms,p50<5ms,max<100ms,late<1%")
	if err != nil {
		t.Fatal(err)
	}
	f := Figures{Rate: 10, Achieved: 10, Scheduled: 100, Completed: 100, Latency: &metrics.Latency{P99: 13.1, P50: 1, Max: 200}}
	got := slo.Check(f)
	if len(got) != 2 || got[0] != "p99 13.100ms ≥ 5ms (of 100 requests: the 2nd slowest)" || got[1] != "max 200.000ms ≥ 100ms" {
		t.Fatalf("Check: %q", got)
	}
	if thin := slo.Thin(f); len(thin) != 1 || thin[0] != "p99" {
		t.Fatalf("Thin: %q, want [p99]", thin)
	}
	f.Completed, f.Scheduled = 1000, 1000 // 10 requests above p99: measured
	if got := slo.Check(f); strings.Contains(got[0], "slowest") || len(slo.Thin(f)) != 0 {
		t.Fatalf("1000 requests: %q, thin %q", got, slo.Thin(f))
	}
	f.Latency.P50 = 9 // p50 of 1000: 500 above it
	if thin := slo.Thin(f); len(thin) != 0 {
		t.Fatalf("p50 of 1000 requests is measured: thin %q", thin)
	}
	for m, want := range map[string]int64{"p99": 1000, "p999": 10000, "p95": 200, "p90": 100, "p50": 20, "max": 0, "late": 0} {
		if got := RequestsFor(m); got != want {
			t.Errorf("RequestsFor(%s) = %d, want %d", m, got, want)
		}
	}
	for n, want := range map[int64]string{1: "1st", 2: "2nd", 3: "3rd", 4: "4th", 11: "11th", 12: "12th", 21: "21st", 113: "113th"} {
		if got := ordinal(n); got != want {
			t.Errorf("ordinal(%d) = %s", n, got)
		}
	}
}

// TestOperationTerms: a latency term may name one of the workload's
// operations (new_order.p90<5s); it is checked on that operation's
// requests, thin by their count, and a probe needs as many more requests
// in all as the operation's share asks. Other metrics are per probe, and
// an operation the workload lacks is an error.
func TestOperationTerms(t *testing.T) {
	slo, err := ParseSLO("new_order.p90<5s, delivery.p99.9<20s, p99<50ms")
	if err != nil {
		t.Fatal(err)
	}
	if slo[0].Operation != "new_order" || slo[0].Metric != "p90" || slo[1].Metric != "p999" || slo[2].Operation != "" {
		t.Fatalf("parsed %+v", slo)
	}
	if got := slo.String(); got != "new_order.p90<5s,delivery.p999<20s,p99<50ms" {
		t.Fatalf("String: %q", got)
	}
	for spec, want := range map[string]string{
		"new_order.late<1%":                "only a latency",
		".p90<5s":                          "no operation before the dot",
		"insert.p99<1s,insert.p99<2s":      "insert.p99 is given twice",
		"new_order.p90<5s,payment.nope<1s": `unknown metric "nope"`,
	} {
		if _, err := ParseSLO(spec); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", spec, err, want)
		}
	}
	if err := slo.CheckOps([]string{"new_order", "payment", "delivery"}); err != nil {
		t.Fatal(err)
	}
	if err := slo.CheckOps([]string{"insert", "delete"}); err == nil || !strings.Contains(err.Error(), `no operation "new_order" (it has: insert, delete)`) {
		t.Fatalf("CheckOps: %v", err)
	}

	// 1,000 requests, 40 of them Deliveries: the whole probe's p99 is
	// measured, Delivery's p99.9 is not (it needs 10,000 Deliveries:
	// 250,000 requests at this mix).
	f := Figures{Rate: 100, Achieved: 100, Scheduled: 1000, Completed: 1000, Latency: &metrics.Latency{P99: 10},
		ByOp: map[string]OpFigures{
			"new_order": {Completed: 450, Latency: &metrics.Latency{P90: 6000}},
			"delivery":  {Completed: 40, Latency: &metrics.Latency{P999: 25000}},
		}}
	got := slo.Check(f)
	if len(got) != 2 || got[0] != "new_order.p90 6000.000ms ≥ 5s" || got[1] != "delivery.p999 25000.000ms ≥ 20s (of 40 requests: the 1st slowest)" {
		t.Fatalf("Check: %q", got)
	}
	if thin := slo.Thin(f); len(thin) != 1 || thin[0] != "delivery.p999" {
		t.Fatalf("Thin: %q", thin)
	}
	if need := slo.Need(f); need != 250000 {
		t.Fatalf("Need %d, want 10,000 Deliveries at 40 in 1,000 = 250,000", need)
	}
	delete(f.ByOp, "delivery") // none completed: not measured, not passed, too few
	if got := slo.Check(f); len(got) != 2 || got[1] != "delivery.p999 not measured (no delivery request completed)" {
		t.Fatalf("no Delivery: %q", got)
	}
	if thin, need := slo.Thin(f), slo.Need(f); len(thin) != 1 || thin[0] != "delivery.p999" || need != 10000*1001 {
		t.Fatalf("no Delivery: thin %q, need %d (want 10,000 × 1,001: its share is below 1 in 1,000)", thin, need)
	}
}

// idle is a fake target that keeps up with every rate up to saturate
// requests/s but meets the SLO only from slowBelow up to limit: below
// slowBelow its latency at rest breaks it, as an idle VM's wake-ups do,
// by over times the bound. It runs the search and returns its result with
// the rates and re-run numbers probed.
func idle(t *testing.T, p Params, slowBelow, limit, saturate, over float64) (res Result, calls []float64, retries []int) {
	t.Helper()
	res, err := Search(context.Background(), p, func(_ context.Context, rate float64, retry int) (Outcome, error) {
		calls, retries = append(calls, rate), append(retries, retry)
		if rate >= slowBelow && rate <= limit {
			return Outcome{Pass: true, KeptUp: true}, nil
		}
		return Outcome{Failed: []string{"p99 too high"}, KeptUp: rate <= saturate, Over: over}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return res, calls, retries
}

func TestSearchLowRates(t *testing.T) {
	p := Params{Start: 10, Max: 1e6, Precision: 0.05, Retries: 1}
	t.Run("a start that fails while keeping up scans upward and searches from the first pass", func(t *testing.T) {
		res, calls, retries := idle(t, p, 50, 730, 1e9, 2)
		// 10 fails twice (a re-run), 20 and 40 once each, 80 passes; then
		// the ramp and bisection as usual.
		want := []float64{10, 10, 20, 40, 80, 160, 320, 640, 1280, 1280}
		if !slices.Equal(calls[:len(want)], want) {
			t.Fatalf("probes %v, want them to start %v", calls, want)
		}
		if !slices.Equal(res.FailsBelow, []float64{10, 20, 40}) {
			t.Fatalf("fails below %v, want [10 20 40]", res.FailsBelow)
		}
		if res.Stop != StopConverged || res.Knee > 730 || res.Knee < 730/1.05 || res.FirstFailing <= 730 {
			t.Fatalf("stop %q knee %g first failing %g (probes %v)", res.Stop, res.Knee, res.FirstFailing, calls)
		}
		for i, r := range calls {
			if r > 10 && r < 80 && retries[i] != 0 {
				t.Fatalf("scan probe at %g re-run (%v %v)", r, calls, retries)
			}
		}
	})
	for _, tc := range []struct {
		name                      string
		slowBelow, saturate, over float64
		probes                    []float64
		failsBelow                []float64
	}{
		{"the scan stops at the first rate the target cannot keep up with", 1e9, 30, 2, []float64{10, 10, 20, 40}, []float64{10, 20}},
		{"the scan is bounded", 1e9, 1e9, 2, []float64{10, 10, 20, 40, 80, 160, 320, 640, 1280, 2560}, []float64{10, 20, 40, 80, 160, 320, 640, 1280, 2560}},
		{"a start far over the SLO's bound stops the search", 50, 1e9, MaxLowScanOver + 1, []float64{10, 10}, nil},
		{"a start the target cannot keep up with stops the search", 50, 5, 2, []float64{10, 10}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, calls, _ := idle(t, p, tc.slowBelow, 730, tc.saturate, tc.over)
			if !slices.Equal(calls, tc.probes) || res.Stop != StopStartFailed || res.Knee != 0 || res.FirstFailing != 10 || !slices.Equal(res.FailsBelow, tc.failsBelow) {
				t.Fatalf("probes %v stop %q knee %g first failing %g fails below %v", calls, res.Stop, res.Knee, res.FirstFailing, res.FailsBelow)
			}
		})
	}
}

func TestOver(t *testing.T) {
	slo, err := ParseSLO("p99<5ms,p50<1ms,late<1%")
	if err != nil {
		t.Fatal(err)
	}
	lat := &metrics.Latency{P50: 2.5, P99: 7.5}
	for _, tc := range []struct {
		name string
		f    Figures
		want float64
	}{
		{"two latency terms broken: the larger ratio", Figures{Scheduled: 100, Completed: 100, Latency: lat}, 2.5},
		{"none broken", Figures{Scheduled: 100, Completed: 100, Latency: &metrics.Latency{P50: 0.5, P99: 4}}, 0},
		{"late broken too", Figures{Scheduled: 100, Completed: 98, Late: 2, Latency: lat}, math.Inf(1)},
		{"nothing completed", Figures{Scheduled: 100}, math.Inf(1)},
	} {
		if got := slo.Over(tc.f); got != tc.want {
			t.Errorf("%s: over %g, want %g", tc.name, got, tc.want)
		}
	}
}
