package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/ceiling-db/ceiling/internal/diagnose"
	"github.com/ceiling-db/ceiling/internal/knee"
	"github.com/ceiling-db/ceiling/internal/runner"
	"github.com/ceiling-db/ceiling/internal/suggest"
	"github.com/ceiling-db/ceiling/internal/target"
)

// Knee is the answer of `ceiling knee` (knee in the result).
type Knee struct {
	// Rate is the highest probed rate that met the SLO; null when none did.
	Rate *float64 `json:"rate"`
	// FirstFailingRate is the lowest probed rate above Rate that broke the
	// SLO; null when none did (the SLO held up to max).
	FirstFailingRate *float64 `json:"first_failing_rate"`
	SLO              string   `json:"slo"`         // as given
	SLOApplied       string   `json:"slo_applied"` // with the implied terms
	Start            float64  `json:"start"`
	Max              float64  `json:"max"`
	PrecisionPct     float64  `json:"precision_pct"`
	StepS            float64  `json:"step_s"`
	StepWarmupS      float64  `json:"step_warmup_s"`
	// Retries is how many times a failing probe was run again at its rate
	// (--retries); a rate failed only when every run did.
	Retries int `json:"retries"`
	// TransientRates are the rates whose probe failed and then passed when
	// run again (a stall that did not recur), in the order probed.
	TransientRates []float64 `json:"transient_rates"`
	// FailsBelow are the rates, ascending, that broke the SLO while the
	// target kept up with them, probed once each above a start rate that
	// had (the start's included): with Rate set they lie below it, the
	// target's latency being higher at low rates than at Rate; with Rate
	// null no rate up to the last of them met it (the scan stopped there,
	// or at the next rate, which fell behind or broke the SLO by more).
	// Absent when the start passed or could not be kept up with.
	FailsBelow []float64 `json:"fails_below,omitempty"`
	// Stop says why the search ended: converged, max-passed, start-failed,
	// interrupted, probe-limit, probe-error, no-progress.
	Stop   string      `json:"stop"`
	Probes []KneeProbe `json:"probes"` // in the order run
	// RunArgs are the flags the search was given that a run at its
	// rate must repeat (--rows=20000, --arrival=poisson), as --name=value.
	RunArgs []string `json:"run_args,omitempty"`
}

// KneeProbe is one probe of the search.
type KneeProbe struct {
	Rate        float64  `json:"rate"`
	Pass        bool     `json:"pass"`
	Partial     bool     `json:"partial"` // interrupted: its outcome was not used
	FailedTerms []string `json:"failed_terms"`
	// ThinTerms are the failed percentile terms (p99 …) measured from
	// too few requests for the figure to be more than one of the probe's
	// few slowest (knee.ThinRequests); none when there were enough.
	ThinTerms []string `json:"thin_terms,omitempty"`
	// NeedRequests is how many requests in all a probe at this rate needs
	// for the thin terms to be measured; absent when none is thin.
	NeedRequests int64 `json:"need_requests,omitempty"`
	Retry        int   `json:"retry"` // 0: the rate's first probe; n: its n-th re-run after failures
	Step         *int  `json:"step"`  // index into steps[]; null when the probe measured nothing
	// DurationS is the probe's planned measured duration when it is not
	// step_s: a re-run lengthened to hold the requests a percentile needs,
	// after a run that broke the SLO only by percentiles of too few.
	DurationS float64 `json:"duration_s,omitempty"`
}

// BuildKnee assembles the document of a knee search: probes[i] is the run
// of the i-th probe (one open-loop step each), k the search's answer. The
// probes' steps become steps[] in the order run, and the intervals one time
// line across the probes.
func BuildKnee(p Params, probes []*runner.Result, k Knee) (*Result, error) {
	if len(probes) == 0 {
		return nil, fmt.Errorf("no probe to report")
	}
	p.Load.Steps = nil
	for i, r := range probes {
		secs := k.StepS
		if i < len(k.Probes) && k.Probes[i].DurationS > 0 {
			secs = k.Probes[i].DurationS
		}
		for _, st := range r.Steps {
			p.Load.Steps = append(p.Load.Steps, runner.Step{Rate: st.Rate, Duration: time.Duration(secs * float64(time.Second)), Warmup: st.Warmup})
		}
	}
	if len(p.Load.Steps) == 0 { // interrupted before anything was measured
		p.Load.Steps = []runner.Step{{Rate: k.Start, Duration: time.Duration(k.StepS * float64(time.Second))}}
	}
	pk := p
	pk.runs = probes
	res, err := Build(pk, combine(probes, true))
	if err != nil {
		return nil, err
	}
	res.Intervals = nil
	var offset float64
	step := 0
	for _, r := range probes {
		d, err := Build(p, r)
		if err != nil {
			return nil, err
		}
		end := 0.0
		for _, pt := range d.Intervals {
			s := step + *pt.Step
			pt.Step = &s
			end = pt.T
			pt.T += offset
			res.Intervals = append(res.Intervals, pt)
		}
		offset += end
		step += len(r.Steps)
	}
	res.Knee = &k
	setKneeVerdict(res)
	addAdvice(res, p)
	return res, nil
}

// KeptUp reports whether a knee probe ran at its rate: not saturated by
// the ramp's rule (late at most SatLatePct of scheduled, achieved at least
// SatAchievedPct of requested).
func KeptUp(f knee.Figures) bool {
	var late, achieved *float64
	if f.Scheduled > 0 {
		late = f64(100 * float64(f.Late) / float64(f.Scheduled))
	}
	if f.Rate > 0 {
		achieved = f64(100 * f.Achieved / f.Rate)
	}
	return f.Completed > 0 && len(saturation(late, achieved)) == 0
}

// setKneeVerdict makes a knee search's verdict that of the probe that set
// its answer: the last run at the first failing rate (every run there broke
// the SLO), or, when none failed, the passing run at the knee. A probe whose
// failure did not recur is not where the ceiling lies, so the ramp's rule
// (the lowest saturated step) does not apply.
func setKneeVerdict(res *Result) {
	k := res.Knee
	var pick *KneeProbe
	why := ""
	for i := range k.Probes {
		p := &k.Probes[i]
		if p.Step == nil || *p.Step >= len(res.Steps) || res.Steps[*p.Step].Verdict == nil {
			continue
		}
		switch {
		case k.FirstFailingRate != nil && p.Rate == *k.FirstFailingRate && !p.Pass:
			pick, why = p, "the lowest rate that broke the SLO"
		case k.FirstFailingRate == nil && k.Rate != nil && p.Rate == *k.Rate && p.Pass:
			pick, why = p, "the highest rate that met the SLO (none broke it)"
			if k.Stop != "max-passed" {
				why = fmt.Sprintf("the highest rate that met the SLO before the search stopped (%s)", k.Stop)
			}
		}
	}
	if pick == nil {
		return
	}
	v := *res.Steps[*pick.Step].Verdict
	v.Evidence = append(append([]string{}, v.Evidence...), fmt.Sprintf("at %s/s (probe %d), %s", fmtRate(pick.Rate), *pick.Step+1, why))
	if flat, term := flatLatency(res); flat != "" {
		v.Evidence = append(v.Evidence, flat)
		v.Suggestions = append(append([]diagnose.Suggestion{}, v.Suggestions...), diagnose.Suggestion{
			Action: fmt.Sprintf("an objective this target meets at rest (a looser %s), or a shorter time per request at rest (the evidence above says what it is made of), before reading the knee as a capacity", term.Name())})
	}
	res.Verdict = &v
}

// flatMinDrop is how many times the lowest rate probed a failing rate must
// be for the two to tell whether the latency grew with the rate.
const flatMinDrop = 2

// flatShare: a latency at the lowest rate at least this share of the one
// at the failing rate did not grow with the rate.
const flatShare = 0.9

// flatLatency says when a knee search's answer is set by the target's
// latency at rest rather than by a rate it cannot keep up with: a rate at
// least flatMinDrop times the lowest one probed broke a latency term (of
// every request) in every run while keeping up, and the lowest rate had
// already come within flatShare of it, with the first failing rate kept up
// too; or the start rate broke such a term while keeping up, measured from
// enough requests. It returns the evidence and the term, "" when neither
// holds.
func flatLatency(res *Result) (string, knee.Term) {
	k := res.Knee
	if k == nil || k.FirstFailingRate == nil {
		return "", knee.Term{}
	}
	slo, err := knee.ParseSLO(k.SLOApplied)
	if err != nil {
		return "", knee.Term{}
	}
	step := func(p KneeProbe) *Step {
		if p.Step == nil || *p.Step >= len(res.Steps) || p.Partial {
			return nil
		}
		return &res.Steps[*p.Step]
	}
	var rates []float64 // probed, ascending
	for _, p := range k.Probes {
		if step(p) != nil && !slices.Contains(rates, p.Rate) {
			rates = append(rates, p.Rate)
		}
	}
	if len(rates) == 0 {
		return "", knee.Term{}
	}
	slices.Sort(rates)
	startFailed := k.Rate == nil && k.Stop == string(knee.StopStartFailed)
	if !startFailed {
		// Rates that failed below the knee are slow at rest, not the
		// latency the search rose from.
		rates = slices.DeleteFunc(rates, func(r float64) bool { return slices.Contains(k.FailsBelow, r) })
		if len(rates) == 0 {
			return "", knee.Term{}
		}
	}
	low, first := rates[0], *k.FirstFailingRate
	if !startFailed && k.Rate == nil {
		return "", knee.Term{}
	}
	for _, t := range slo {
		if t.Operation != "" || t.Metric == knee.MetricLate || t.Metric == knee.MetricErrors || t.Metric == knee.MetricAchieved {
			continue
		}
		value := func(s *Step) (float64, bool) {
			if s.LatencyMs == nil {
				return 0, false
			}
			return t.Value(knee.Figures{Completed: s.Completed, Latency: s.LatencyMs})
		}
		// kept reports whether every run at rate kept up and broke t, with
		// the best of their figures and the best of those not thin (step
		// -1 when all were).
		kept := func(rate float64) (best float64, measured float64, measuredStep int, ok bool) {
			best, measured, measuredStep = math.Inf(1), math.Inf(1), -1
			n := 0
			for _, p := range k.Probes {
				s := step(p)
				if s == nil || p.Rate != rate {
					continue
				}
				v, vok := value(s)
				if !vok || s.Saturated || p.Pass || !t.Violated(v) {
					return 0, 0, -1, false
				}
				best, n = math.Min(best, v), n+1
				if v < measured && !slices.Contains(p.ThinTerms, t.Name()) {
					measured, measuredStep = v, *p.Step
				}
			}
			return best, measured, measuredStep, n > 0
		}
		_, v, at, ok := kept(first)
		if !ok {
			continue
		}
		if !startFailed && len(k.FailsBelow) > 0 {
			// Rates below the knee failed too: a knee that passed
			// narrowly lies where the spread fell, between failures.
			if pass, step, ok := narrowPass(k, t, step, value); ok {
				return fmt.Sprintf("%s/s passed narrowly (%s %s, probe %d) between rates that broke %s below it (%s) and above it (%s at %s/s): %s is about this target's latency at any load, so the knee is where the measurements' spread fell, not where the target tops out",
					fmtRate(*k.Rate), t.Name(), fmtMsValue(pass), step+1, t, failsBelowList(k), fmtMsValue(v), fmtRate(first), t), t
			}
		}
		if startFailed {
			if at < 0 {
				// Every figure thin: one stray slow request may have set
				// it (thinStart's advice stands).
				continue
			}
			s := fmt.Sprintf("the target kept up with %s/s, the start rate, and %s was %s there (probe %d, of enough requests): its latency at rest is above %s, which a lower rate seldom changes",
				fmtRate(first), t.Name(), fmtMsValue(v), at+1, t)
			if n := len(k.FailsBelow); n > 1 {
				s += fmt.Sprintf("; the rates above it up to %s/s, kept up with too, broke it as well", fmtRate(k.FailsBelow[n-1]))
			}
			return s, t
		}
		// The highest rate, at least flatMinDrop × the lowest, that broke t
		// in every run while keeping up.
		var fail, atFail float64
		for _, r := range rates {
			if r < low*flatMinDrop {
				continue
			}
			if v, _, _, ok := kept(r); ok {
				fail, atFail = r, v
			}
		}
		if fail == 0 {
			continue
		}
		// At the lowest rate: the best of its runs (a failure there that
		// did not recur is not its latency at rest).
		atLow, lowStep := math.Inf(1), 0
		for _, p := range k.Probes {
			if s := step(p); s != nil && p.Rate == low {
				if v, ok := value(s); ok && v < atLow {
					atLow, lowStep = v, *p.Step
				}
			}
		}
		if math.IsInf(atLow, 1) || atLow < flatShare*atFail {
			continue
		}
		return fmt.Sprintf("latency did not grow with the rate: %s %s at %s/s (probe %d), %s at %s/s, which kept up with its rate; %s is about this target's latency at any load, so the knee is where the measurements' spread fell, not where the target tops out",
			t.Name(), fmtMsValue(atLow), fmtRate(low), lowStep+1, fmtMsValue(atFail), fmtRate(fail), t), t
	}
	return "", knee.Term{}
}

// narrowMargin: a passing figure of a latency term within this share of
// its limit passed narrowly.
const narrowMargin = 0.9

// narrowPass reports whether every run that passed, at any rate, passed
// t only narrowly (at least narrowMargin of its limit), with the knee
// rate's best figure and its step. A knee found by bisection passes
// narrowly where the latency grows with the rate; rates well below the
// limit elsewhere tell such a knee from one the spread set.
func narrowPass(k *Knee, t knee.Term, step func(KneeProbe) *Step, value func(*Step) (float64, bool)) (float64, int, bool) {
	best, at := math.Inf(1), -1
	for _, p := range k.Probes {
		s := step(p)
		if s == nil || !p.Pass {
			continue
		}
		v, ok := value(s)
		if !ok || t.Limit <= 0 || v < narrowMargin*t.Limit {
			return 0, 0, false
		}
		if p.Rate == *k.Rate && v < best {
			best, at = v, *p.Step
		}
	}
	return best, at, at >= 0
}

// failsBelowList names a knee's FailsBelow rates: "10/s, 20/s and 40/s".
func failsBelowList(k *Knee) string {
	rates := make([]string, len(k.FailsBelow))
	for i, r := range k.FailsBelow {
		rates[i] = fmtRate(r) + "/s"
	}
	return suggest.AndList(rates)
}

// Answer is KneeAnswer for r's search, whose start rate's advice it
// changes when the target kept up with that rate and still broke the SLO
// (flatLatency): a lower start would not help.
func Answer(r *Result) string {
	k := r.Knee
	a := KneeAnswer(k)
	if k.Rate == nil && k.Stop == string(knee.StopStartFailed) {
		if flat, _ := flatLatency(r); flat != "" {
			a = strings.TrimSuffix(a, "; try a lower --start") + "; the target kept up with that rate, so its latency at rest is what breaks the SLO (the verdict says what it is made of)"
		}
	}
	return a
}

// fmtMsValue writes a latency in ms with three significant digits.
func fmtMsValue(ms float64) string { return fmt.Sprintf("%.3g ms", ms) }

// PrintKnee prints the end of a knee search: every probe as a ramp-table
// row in rate order, the knee and first failing rate marked, and the answer.
func PrintKnee(w io.Writer, r *Result) {
	k := r.Knee
	if k == nil {
		return
	}
	order := make([]int, len(r.Steps))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return r.Steps[order[a]].Rate < r.Steps[order[b]].Rate })
	byStep := map[int]KneeProbe{}
	for _, p := range k.Probes {
		if p.Step != nil {
			byStep[*p.Step] = p
		}
	}
	transient := transientSet(k)
	var rows []rampRow
	for _, i := range order {
		st := r.Steps[i]
		p, known := byStep[i]
		failed := known && !p.Pass
		// The search's rate: a shard's step holds its part of it.
		rate := st.Rate
		if known {
			rate = p.Rate
		}
		mark := ""
		switch {
		case transient[rate] && failed:
			mark = "failed, passed when run again"
		case k.Rate != nil && rate == *k.Rate && !failed:
			mark = "<- knee"
		case k.FirstFailingRate != nil && rate == *k.FirstFailingRate:
			mark = "<- first failing"
		case failed && k.Rate != nil && rate < *k.Rate && slices.Contains(k.FailsBelow, rate):
			mark = "failed below the knee"
		case failed && slices.Contains(k.FailsBelow, rate):
			mark = "failed too"
		}
		rows = append(rows, rampRow{label: fmt.Sprintf("%d", i+1), step: st, mark: mark})
	}
	if sh := r.Load.Shard; sh != nil && sh.I >= 0 {
		fmt.Fprintf(w, "\nthis shard's part of the probes (1/%d of each rate), by rate (# = order run)\n", sh.N)
	} else {
		fmt.Fprintf(w, "\nprobes by rate (# = order run)\n")
	}
	printRamp(w, r, "#", rows)

	fmt.Fprintln(w)
	fmt.Fprintln(w, Answer(r))
	if k.FirstFailingRate != nil {
		var fails []KneeProbe
		for _, p := range k.Probes {
			if p.Rate == *k.FirstFailingRate && len(p.FailedTerms) > 0 {
				fails = append(fails, p)
			}
		}
		for _, p := range fails {
			at := fmtRate(p.Rate) + "/s"
			if len(fails) > 1 && p.Step != nil {
				at += fmt.Sprintf(" (probe %d)", *p.Step+1)
			}
			fmt.Fprintf(w, "at %s: %s\n", at, joinTerms(p.FailedTerms))
		}
	}
	for _, line := range TransientLines(r) {
		fmt.Fprintln(w, line)
	}
	if k.Stop == "interrupted" {
		fmt.Fprintln(w, "search interrupted: the answer above covers the probes that finished")
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	PrintVerdict(w, r.Verdict)
}

// KneeAnswer is the answer of a knee search in one line.
func KneeAnswer(k *Knee) string {
	switch {
	case k.Rate == nil && k.Stop == "start-failed":
		s := fmt.Sprintf("knee: none — the SLO %s fails already at the start rate %s/s", k.SLOApplied, fmtRate(k.Start))
		if need, thin := thinStart(k); thin != "" {
			// A lower start would give the percentile fewer requests still.
			return s + fmt.Sprintf(", but only by its %s, taken from too few requests to be more than a stray slow one: a probe at %s/s needs %s for %d requests (--step-duration), or start higher (--start)",
				thin, fmtRate(k.Start), ProbeSecs(float64(need)/k.Start), need)
		}
		if n := len(k.FailsBelow); n > 1 {
			// The scan above the start found no rate that met it either.
			return s + fmt.Sprintf(", and at every rate above it probed up to %s/s", fmtRate(k.FailsBelow[n-1]))
		}
		return s + "; try a lower --start"
	case k.Rate == nil:
		return fmt.Sprintf("knee: not found — the search stopped (%s) before any probe met %s", k.Stop, k.SLOApplied)
	case k.FirstFailingRate == nil && k.Stop == "max-passed":
		return fmt.Sprintf("knee: at least %s/s — the SLO %s still holds at --max; raise --max to search higher", fmtRate(*k.Rate), k.SLOApplied)
	case k.FirstFailingRate == nil:
		return fmt.Sprintf("knee: at least %s/s meets %s; no failing rate found before the search stopped (%s)", fmtRate(*k.Rate), k.SLOApplied, k.Stop)
	}
	s := fmt.Sprintf("knee: %s/s meets %s; %s/s does not", fmtRate(*k.Rate), k.SLOApplied, fmtRate(*k.FirstFailingRate))
	if k.Stop != "converged" {
		s += fmt.Sprintf(" (search stopped: %s)", k.Stop)
	}
	return s + failsBelowNote(k)
}

// failsBelowNote says, after a knee's answer, which rates below it broke
// the SLO while keeping up (Knee.FailsBelow); "" when none did.
func failsBelowNote(k *Knee) string {
	if len(k.FailsBelow) == 0 || k.Rate == nil {
		return ""
	}
	var thin []string
	for _, r := range k.FailsBelow {
		// Thin: every run at r broke the SLO only by percentiles of too
		// few requests.
		th := true
		for _, p := range k.Probes {
			if p.Rate == r && !p.Pass && !p.Partial && len(p.ThinTerms) < len(p.FailedTerms) {
				th = false
			}
		}
		if th {
			thin = append(thin, fmtRate(r)+"/s")
		}
	}
	lowest := math.Inf(1) // the lowest rate that passed
	for _, p := range k.Probes {
		if p.Pass && !p.Partial {
			lowest = math.Min(lowest, p.Rate)
		}
	}
	s := fmt.Sprintf("; below %s/s it fails too: %s broke it while keeping up with their rate, so this target's latency is higher at low rates (an idle host's cores, caches and connections wake up for each request)",
		fmtRate(lowest), failsBelowList(k))
	switch {
	case len(thin) == len(k.FailsBelow):
		s += ", though each only by a percentile of too few requests, which one stray slow request sets"
	case len(thin) > 0:
		s += fmt.Sprintf(", though %s only by a percentile of too few requests", suggest.AndList(thin))
	}
	return s
}

// thinStart tells whether every failing probe at the start rate failed
// only on percentiles measured from too few requests: it names them
// ("p99") and gives the requests a probe needs to measure them; "" when
// some failure was of another kind.
func thinStart(k *Knee) (int64, string) {
	var names []string
	var need int64
	failed := false
	for _, p := range k.Probes {
		if p.Rate != k.Start || p.Pass || p.Partial {
			continue
		}
		failed = true
		if len(p.ThinTerms) == 0 || len(p.ThinTerms) < len(p.FailedTerms) {
			return 0, ""
		}
		need = max(need, p.NeedRequests)
		for _, m := range p.ThinTerms {
			need = max(need, knee.RequestsFor(m)) // results without need_requests
			if !slices.Contains(names, m) {
				names = append(names, m)
			}
		}
	}
	if !failed {
		return 0, ""
	}
	return need, strings.Join(names, " and ")
}

// ProbeSecs writes a probe duration in whole seconds, as --step-duration
// takes it.
func ProbeSecs(s float64) string {
	return fmt.Sprintf("%.0fs", math.Ceil(s))
}

// Transients names the probes that failed and passed when run again: a
// heading, one item per failing run (its broken terms and worst interval)
// and what the search made of them; ok is false when there were none.
func Transients(r *Result) (head string, items []string, tail string, ok bool) {
	k := r.Knee
	if k == nil || len(k.TransientRates) == 0 {
		return "", nil, "", false
	}
	transient := transientSet(k)
	for _, p := range k.Probes {
		if !transient[p.Rate] || p.Pass || p.Partial {
			continue
		}
		s := fmtRate(p.Rate) + "/s"
		if p.Step != nil {
			s += fmt.Sprintf(" (probe %d)", *p.Step+1)
		}
		s += ": " + joinTerms(p.FailedTerms)
		if p.Step != nil {
			byLate := slices.ContainsFunc(p.FailedTerms, func(t string) bool { return strings.HasPrefix(t, "late") })
			if w := worstInterval(r, *p.Step, byLate); w != "" {
				s += "; " + w
			}
		}
		items = append(items, s)
	}
	head = fmt.Sprintf("transient failures: %d of %d probes broke the SLO, and a re-run at the same rate passed:", len(items), len(k.Probes))
	tail = "a failure that does not recur at the same rate is taken as a stall, not the rate's limit (--retries 0 counts it)"
	if len(k.TransientRates) > 1 {
		tail += fmt.Sprintf("; stalls came at %d rates, so over a longer window the SLO may not hold at the knee either", len(k.TransientRates))
	}
	if k.Rate != nil {
		tail += fmt.Sprintf(": to check, run at the knee for longer (%s)", kneeRunCommand(r, *k.Rate))
	}
	return head, items, tail, true
}

// TransientLines are Transients as console lines, the items and the tail
// indented; none when there were none.
func TransientLines(r *Result) []string {
	head, items, tail, ok := Transients(r)
	if !ok {
		return nil
	}
	lines := []string{head}
	for _, it := range items {
		lines = append(lines, "  "+it)
	}
	return append(lines, "  "+tail)
}

// transientSet is the set of k's transient rates.
func transientSet(k *Knee) map[float64]bool {
	set := make(map[float64]bool, len(k.TransientRates))
	for _, v := range k.TransientRates {
		set[v] = true
	}
	return set
}

// worstInterval describes the worst interval of step, by what broke the
// SLO: with byLate the one with the most late requests, else (or among
// equals) the one with the highest p99, e.g. "worst interval: 27 late,
// p99 156 ms, max 164 ms, 3-4 s into the probe"; "" when the step has no
// intervals with latency or late requests. A probe that broke only its
// p99 is shown its slow interval, not one where a single request of the
// stall went late (MariaDB, a table lock at 400/s: "1 late, p99 2.98
// ms" had been shown for a p99 of 784 ms).
func worstInterval(r *Result, step int, byLate bool) string {
	var worst *IntervalPoint
	start := -1.0
	for i := range r.Intervals {
		pt := &r.Intervals[i]
		if pt.Step == nil || *pt.Step != step {
			continue
		}
		if start < 0 {
			start = pt.T - pt.Seconds
		}
		switch {
		case worst == nil:
			if pt.Late > 0 || pt.LatencyMs != nil {
				worst = pt
			}
		case byLate && pt.Late != worst.Late:
			if pt.Late > worst.Late {
				worst = pt
			}
		case pt.LatencyMs != nil && (worst.LatencyMs == nil || pt.LatencyMs.P99 > worst.LatencyMs.P99):
			worst = pt
		}
	}
	if worst == nil {
		return ""
	}
	var parts []string // what broke the SLO first
	if l := worst.LatencyMs; l != nil {
		parts = append(parts, fmt.Sprintf("p99 %.3g ms, max %.3g ms", l.P99, l.Max))
	}
	if worst.Late > 0 {
		late := fmt.Sprintf("%d late", worst.Late)
		if byLate {
			parts = append([]string{late}, parts...)
		} else {
			parts = append(parts, late)
		}
	}
	from := worst.T - worst.Seconds - start
	return fmt.Sprintf("worst interval: %s, %.0f-%.0f s into the probe", strings.Join(parts, ", "), from, from+worst.Seconds)
}

func joinTerms(ts []string) string { return strings.Join(ts, "; ") }

// kneeRunCommand is the command that holds rate for ten minutes on the
// search's target, threads and durability (the DSN as the result records
// it, password redacted).
func kneeRunCommand(r *Result, rate float64) string {
	cmd := fmt.Sprintf("ceiling run %s --rate %s -T 10m", r.Workload.Name, fmtRate(rate))
	threads := r.Load.Threads
	if sh := r.Load.Shard; sh != nil {
		threads = sh.Threads // the whole search's: each shard takes its part
	}
	if threads > 1 {
		cmd += fmt.Sprintf(" -c %d", threads)
	}
	if m := r.Target.Durability.Mode; m != "" && m != target.DurabilityServer {
		cmd += " --durability " + string(m)
	}
	if r.Target.DSN != "" {
		cmd += " --db '" + target.Redact(target.GivenDSN(r.Target.DSN)) + "'"
	}
	if r.Knee != nil {
		for _, a := range r.Knee.RunArgs {
			cmd += " " + ShellWord(a)
		}
	}
	if sh := r.Load.Shard; sh != nil {
		cmd += fmt.Sprintf(" --shard I/%d, I from 0 to %d on each of the %d load generators", sh.N, sh.N-1, sh.N)
	}
	return cmd
}
