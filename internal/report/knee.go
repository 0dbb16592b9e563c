package report

import (
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/ceiling-db/ceiling/internal/runner"
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
	// Stop says why the search ended: converged, max-passed, start-failed,
	// interrupted, probe-limit, probe-error, no-progress.
	Stop   string      `json:"stop"`
	Probes []KneeProbe `json:"probes"` // in the order run
}

// KneeProbe is one probe of the search.
type KneeProbe struct {
	Rate        float64  `json:"rate"`
	Pass        bool     `json:"pass"`
	Partial     bool     `json:"partial"` // interrupted: its outcome was not used
	FailedTerms []string `json:"failed_terms"`
	Step        *int     `json:"step"` // index into steps[]; null when the probe measured nothing
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
	for _, r := range probes {
		for _, st := range r.Steps {
			p.Load.Steps = append(p.Load.Steps, runner.Step{Rate: st.Rate, Duration: time.Duration(k.StepS * float64(time.Second)), Warmup: st.Warmup})
		}
	}
	if len(p.Load.Steps) == 0 { // interrupted before anything was measured
		p.Load.Steps = []runner.Step{{Rate: k.Start, Duration: time.Duration(k.StepS * float64(time.Second))}}
	}
	res, err := Build(p, combine(probes, true))
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
	return res, nil
}

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
	var rows []rampRow
	for _, i := range order {
		st := r.Steps[i]
		mark := ""
		switch {
		case k.Rate != nil && st.Rate == *k.Rate:
			mark = "<- knee"
		case k.FirstFailingRate != nil && st.Rate == *k.FirstFailingRate:
			mark = "<- first failing"
		}
		rows = append(rows, rampRow{label: fmt.Sprintf("%d", i+1), step: st, mark: mark})
	}
	fmt.Fprintf(w, "\nprobes by rate (# = order run)\n")
	printRamp(w, r, "#", rows)

	fmt.Fprintln(w)
	switch {
	case k.Rate == nil && k.Stop == "start-failed":
		fmt.Fprintf(w, "knee: none — the SLO %s fails already at the start rate %s/s; try a lower --start\n", k.SLOApplied, fmtRate(k.Start))
	case k.Rate == nil:
		fmt.Fprintf(w, "knee: not found — the search stopped (%s) before any probe met %s\n", k.Stop, k.SLOApplied)
	case k.FirstFailingRate == nil && k.Stop == "max-passed":
		fmt.Fprintf(w, "knee: at least %s/s — the SLO %s still holds at --max; raise --max to search higher\n", fmtRate(*k.Rate), k.SLOApplied)
	case k.FirstFailingRate == nil:
		fmt.Fprintf(w, "knee: at least %s/s meets %s; no failing rate found before the search stopped (%s)\n", fmtRate(*k.Rate), k.SLOApplied, k.Stop)
	default:
		fmt.Fprintf(w, "knee: %s/s meets %s; %s/s does not", fmtRate(*k.Rate), k.SLOApplied, fmtRate(*k.FirstFailingRate))
		if k.Stop != "converged" {
			fmt.Fprintf(w, " (search stopped: %s)", k.Stop)
		}
		fmt.Fprintln(w)
	}
	for _, p := range k.Probes {
		if k.FirstFailingRate != nil && p.Rate == *k.FirstFailingRate && len(p.FailedTerms) > 0 {
			fmt.Fprintf(w, "at %s/s: %s\n", fmtRate(p.Rate), joinTerms(p.FailedTerms))
		}
	}
	if k.Stop == "interrupted" {
		fmt.Fprintln(w, "search interrupted: the answer above covers the probes that finished")
	}
}

func joinTerms(ts []string) string {
	out := ""
	for i, t := range ts {
		if i > 0 {
			out += "; "
		}
		out += t
	}
	return out
}
