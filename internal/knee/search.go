package knee

import (
	"context"
	"errors"
	"fmt"
	"math"
)

// Outcome is what one probe found.
type Outcome struct {
	Pass   bool
	Failed []string // the SLO terms broken, with their values; empty when Pass
	// Thin names the broken percentile terms measured from too few
	// requests (SLO.Thin): a stray slow request may have set them.
	Thin []string
	// Need is how many requests in all a probe at the same rate needs
	// for the Thin terms to be measured (SLO.Need); 0 when none is thin.
	Need int64
	// Partial marks a probe cut short (interrupted): its outcome is not
	// used and the search stops.
	Partial bool
	// KeptUp marks a probe that ran at its rate (not saturated): when it
	// fails, the target's latency broke the SLO, not its capacity.
	KeptUp bool
	// Over is how far the probe broke the SLO's latency terms (SLO.Over):
	// 2 is twice a bound; +Inf when it broke a term of another kind.
	Over float64
}

// near reports whether a failing probe kept up with its rate and broke
// only latency terms, by at most MaxLowScanOver: the kind of failure a
// higher rate may not have (see Search).
func (o Outcome) near() bool { return o.KeptUp && o.Over <= MaxLowScanOver }

// ProbeFunc runs one probe at rate requests/s and reports its outcome; retry
// is 0 for a rate's first probe and n for its n-th re-run after failures. An
// error aborts the search.
type ProbeFunc func(ctx context.Context, rate float64, retry int) (Outcome, error)

// Params bound the search.
type Params struct {
	Start     float64 // first rate probed (requests/s)
	Max       float64 // highest rate probed
	Precision float64 // stop when (failing - passing) <= Precision × passing; 0.05 = 5%
	Factor    float64 // growth of the ramp-up (default 2)
	MaxProbes int     // safety bound on the number of probes, re-runs included (default 60)
	// Retries is how many times a failing probe is run again at the same
	// rate before the rate counts as failing: the rate passes when any of
	// its runs passes. 0 counts the first failure.
	Retries int
}

// MaxRetries bounds Params.Retries.
const MaxRetries = 5

// Validate checks the parameters.
func (p Params) Validate() error {
	var errs []error
	if !(p.Start > 0) {
		errs = append(errs, fmt.Errorf("start rate must be above 0, got %g", p.Start))
	}
	if !(p.Max >= p.Start) {
		errs = append(errs, fmt.Errorf("max rate (%g) must be at least the start rate (%g)", p.Max, p.Start))
	}
	if !(p.Precision > 0 && p.Precision < 1) {
		errs = append(errs, fmt.Errorf("precision must be above 0%% and below 100%%, got %g%%", 100*p.Precision))
	}
	if p.Retries < 0 || p.Retries > MaxRetries {
		errs = append(errs, fmt.Errorf("retries must be between 0 and %d, got %d", MaxRetries, p.Retries))
	}
	if p.Factor != 0 && !(p.Factor > 1) {
		errs = append(errs, fmt.Errorf("ramp factor must be above 1, got %g", p.Factor))
	}
	return errors.Join(errs...)
}

// Stop says why the search ended.
type Stop string

// Reasons the search stops.
const (
	StopConverged    Stop = "converged"    // the bracket is within the precision
	StopMaxPassed    Stop = "max-passed"   // the SLO holds at Max: the knee is at least Max
	StopStartFailed  Stop = "start-failed" // the SLO fails already at Start
	StopInterrupted  Stop = "interrupted"  // a probe was interrupted
	StopProbeLimit   Stop = "probe-limit"  // MaxProbes reached before converging
	StopProbeFailure Stop = "probe-error"  // a probe returned an error
	StopNoProgress   Stop = "no-progress"  // the bracket cannot be split further
)

// Probe is one probe of the search, in the order run.
type Probe struct {
	Rate  float64
	Retry int // 0: the rate's first probe; n: its n-th re-run after failures
	Outcome
}

// Result is the answer of the search.
type Result struct {
	// Knee is the highest rate that passed, 0 when none did.
	Knee float64
	// FirstFailing is the lowest rate that failed above Knee, 0 when none did.
	FirstFailing float64
	Probes       []Probe
	// Transient lists the rates whose probe failed and then passed when
	// run again, in the order probed: failures that did not recur.
	Transient []float64
	// FailsBelow lists the rates, ascending, that broke the SLO while
	// keeping up when the start rate had: the scan above the start for a
	// rate where the target's latency is lower (see Search). When one
	// passed, they lie below Knee.
	FailsBelow []float64
	Stop       Stop
}

// MaxLowScan bounds the probes of the scan above a start rate that broke
// the SLO while keeping up (Search).
const MaxLowScan = 8

// MaxLowScanOver is the most a start rate may break the SLO's latency
// terms by (10: ten times a bound) for the scan above it (Search): an idle
// host's wake-ups cost a few times a request's time, not orders of
// magnitude.
const MaxLowScanOver = 10

// Search finds the highest rate meeting the SLO. It ramps up geometrically
// (Start, Start×Factor, … capped at Max) until a probe fails or Max passes,
// then bisects between the highest passing and the lowest failing rate
// until they are within Precision of each other. It assumes that passing is
// monotonic in the rate. A failing probe is run again up to Retries times
// and its rate passes when any run passes, so that a one-off stall of the
// server (seconds of a checkpoint, a paused VM) does not cap the search at
// the rate it happened to hit; such rates are listed in Transient. A rate
// that fails every run bounds the search as before, and a noisy probe can
// only move the answer within the bracket it was probed in.
//
// Passing is not always monotonic at the low end: on an idle host (a VM
// whose cores sleep between requests, a server whose caches and
// connections cool) a request can take longer at 10/s than at 1,000/s.
// So when the start rate breaks the SLO in every run while keeping up
// with its rate, by latency terms only and by at most MaxLowScanOver
// times their bounds, Search goes on up the ramp (once per rate, no
// re-runs) while that holds, for at most MaxLowScan probes: the first
// rate that passes becomes the knee and the search carries on from there
// as usual, the rates below it listed in FailsBelow. When none passes, the
// search stops as StopStartFailed with the rates scanned in FailsBelow.
//
// Search returns what it found so far together with the error when a probe
// fails or ctx is cancelled.
func Search(ctx context.Context, p Params, probe ProbeFunc) (Result, error) {
	if err := p.Validate(); err != nil {
		return Result{}, err
	}
	if p.Factor == 0 {
		p.Factor = 2
	}
	if p.MaxProbes <= 0 {
		p.MaxProbes = 60
	}
	var res Result
	// run probes rate; it reports false when the search must stop.
	run := func(rate float64, retry int) (Outcome, bool, error) {
		if len(res.Probes) >= p.MaxProbes {
			res.Stop = StopProbeLimit
			return Outcome{}, false, nil
		}
		if err := ctx.Err(); err != nil {
			res.Stop = StopInterrupted
			return Outcome{}, false, err
		}
		out, err := probe(ctx, rate, retry)
		if err != nil {
			res.Stop = StopProbeFailure
			return out, false, err
		}
		res.Probes = append(res.Probes, Probe{Rate: rate, Retry: retry, Outcome: out})
		if out.Partial {
			res.Stop = StopInterrupted
			return out, false, ctx.Err()
		}
		return out, true, nil
	}
	// try probes rate, running a failing probe again up to p.Retries
	// times: the rate passes when any run passes; near is whether every
	// failing run was near (Outcome.near).
	try := func(rate float64) (pass, near, ok bool, err error) {
		near = true
		for retry := 0; ; retry++ {
			out, ok, err := run(rate, retry)
			switch {
			case !ok:
				return false, false, false, err
			case out.Pass:
				if retry > 0 {
					res.Transient = append(res.Transient, rate)
				}
				return true, near, true, nil
			}
			near = near && out.near()
			if retry >= p.Retries {
				return false, near, true, nil
			}
		}
	}

	// Ramp up.
	rate := p.Start
	for {
		pass, near, ok, err := try(rate)
		if !ok {
			return res, err
		}
		if !pass && rate == p.Start && near && rate < p.Max {
			// The start rate broke the SLO at a rate the target kept up
			// with: look above it for a rate where its latency is lower.
			found, ok, err := lowScan(&res, p, rate, run)
			if !ok {
				return res, err
			}
			if found == 0 {
				res.FirstFailing = p.Start
				res.Stop = StopStartFailed
				return res, nil
			}
			rate, pass = found, true
		}
		if !pass {
			res.FirstFailing = rate
			break
		}
		res.Knee = rate
		if rate >= p.Max {
			res.Stop = StopMaxPassed
			return res, nil
		}
		rate = math.Min(rate*p.Factor, p.Max)
	}
	if res.Knee == 0 {
		res.Stop = StopStartFailed
		return res, nil
	}

	// Bisect [Knee, FirstFailing].
	for res.FirstFailing-res.Knee > p.Precision*res.Knee {
		mid := midpoint(res.Knee, res.FirstFailing)
		if !(mid > res.Knee && mid < res.FirstFailing) {
			res.Stop = StopNoProgress
			return res, nil
		}
		pass, _, ok, err := try(mid)
		if !ok {
			return res, err
		}
		if pass {
			res.Knee = mid
		} else {
			res.FirstFailing = mid
		}
	}
	res.Stop = StopConverged
	return res, nil
}

// lowScan probes the ramp's rates above start, which broke the SLO while
// keeping up, once each while they keep failing near it, for at most
// MaxLowScan probes and up to p.Max. It returns the first rate that
// passed, 0 when none did; every rate that failed near it, the start's
// too, goes into res.FailsBelow. ok is false when the search must stop
// (run's).
func lowScan(res *Result, p Params, start float64, run func(float64, int) (Outcome, bool, error)) (float64, bool, error) {
	res.FailsBelow = append(res.FailsBelow, start)
	rate := start
	for range MaxLowScan {
		if rate >= p.Max {
			break
		}
		rate = math.Min(rate*p.Factor, p.Max)
		out, ok, err := run(rate, 0)
		if !ok {
			return 0, false, err
		}
		if out.Pass {
			return rate, true, nil
		}
		if !out.near() {
			break // fell behind, or broke the SLO by more: no longer the latency at rest
		}
		res.FailsBelow = append(res.FailsBelow, rate)
	}
	return 0, true, nil
}

// midpoint returns the middle of (lo, hi) rounded to three significant
// digits when that stays strictly inside, so the probed rates read well
// (740/s rather than 741.25/s).
func midpoint(lo, hi float64) float64 {
	mid := (lo + hi) / 2
	if r := roundSig(mid, 3); r > lo && r < hi {
		return r
	}
	return mid
}

func roundSig(v float64, digits int) float64 {
	if v == 0 {
		return 0
	}
	scale := math.Pow(10, float64(digits)-math.Ceil(math.Log10(math.Abs(v))))
	return math.Round(v*scale) / scale
}
