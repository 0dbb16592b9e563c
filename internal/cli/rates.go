package cli

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// maxRampSteps bounds a --rates spec, so a typo such as 1:100000:1 is an
// error rather than a run of days.
const maxRampSteps = 1000

// maxRate is the highest rate accepted (the runner's limit).
const maxRate = 1e8

// parseRates parses a --rates spec into the requested rate of each step:
//
//	START:STOP:STEP   arithmetic, STOP included when it falls on a step: 20:200:20
//	START:STOP:xF     geometric by factor F > 1, STOP included likewise: 10:1000:x2
//	R1,R2,…           an explicit list, in the order given: 50,100,200
//
// Every rate must be above 0 (requests/s; decimals allowed).
func parseRates(spec string) ([]float64, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return nil, errors.New("empty: give START:STOP:STEP (20:200:20), START:STOP:xFACTOR (10:1000:x2) or a list (50,100,200)")
	}
	if strings.Contains(spec, ":") {
		return parseRange(spec)
	}
	var rates []float64
	for _, f := range strings.Split(spec, ",") {
		r, err := parseRate(f)
		if err != nil {
			return nil, err
		}
		rates = append(rates, r)
	}
	if len(rates) > maxRampSteps {
		return nil, fmt.Errorf("%d steps: at most %d", len(rates), maxRampSteps)
	}
	return rates, nil
}

func parseRange(spec string) ([]float64, error) {
	parts := strings.Split(spec, ":")
	if len(parts) != 3 {
		return nil, fmt.Errorf("%q: a range is START:STOP:STEP or START:STOP:xFACTOR", spec)
	}
	start, err := parseRate(parts[0])
	if err != nil {
		return nil, fmt.Errorf("start: %w", err)
	}
	stop, err := parseRate(parts[1])
	if err != nil {
		return nil, fmt.Errorf("stop: %w", err)
	}
	if stop < start {
		return nil, fmt.Errorf("%q: stop %s is below start %s", spec, parts[1], parts[0])
	}
	inc := strings.TrimSpace(parts[2])
	var rates []float64
	// eps tolerates rounding in the last step: 0.1:0.3:0.1 has 3 steps.
	const eps = 1e-9
	if f, ok := strings.CutPrefix(strings.ToLower(inc), "x"); ok {
		factor, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || math.IsNaN(factor) || math.IsInf(factor, 0) {
			return nil, fmt.Errorf("%q: factor %q is not a number", spec, f)
		}
		if factor <= 1 {
			return nil, fmt.Errorf("%q: factor must be above 1, got %s", spec, f)
		}
		for i := 0; ; i++ {
			r := start * math.Pow(factor, float64(i))
			if r > stop*(1+eps) {
				break
			}
			if len(rates) == maxRampSteps {
				return nil, fmt.Errorf("%q: more than %d steps", spec, maxRampSteps)
			}
			rates = append(rates, cleanRate(r))
		}
		return rates, nil
	}
	step, err := strconv.ParseFloat(inc, 64)
	if err != nil || math.IsNaN(step) || math.IsInf(step, 0) {
		return nil, fmt.Errorf("%q: step %q is not a number (or xFACTOR for a geometric ramp)", spec, inc)
	}
	if step <= 0 {
		return nil, fmt.Errorf("%q: step must be above 0, got %s", spec, inc)
	}
	n := math.Floor((stop-start)/step+eps) + 1
	if n > maxRampSteps {
		return nil, fmt.Errorf("%q: %.0f steps, at most %d", spec, n, maxRampSteps)
	}
	for i := 0; i < int(n); i++ {
		rates = append(rates, cleanRate(start+float64(i)*step))
	}
	return rates, nil
}

// parseRate parses one rate in requests/s.
func parseRate(s string) (float64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, errors.New("empty rate")
	}
	r, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(r) || math.IsInf(r, 0) {
		return 0, fmt.Errorf("%q is not a rate (requests/s)", s)
	}
	if r <= 0 {
		return 0, fmt.Errorf("rate %s: must be above 0", s)
	}
	if r > maxRate {
		return 0, fmt.Errorf("rate %s: at most %.0f requests/s", s, maxRate)
	}
	return r, nil
}

// cleanRate rounds away floating-point noise (0.30000000000000004 → 0.3).
func cleanRate(r float64) float64 {
	c, err := strconv.ParseFloat(strconv.FormatFloat(r, 'g', 12, 64), 64)
	if err != nil {
		return r
	}
	return c
}

// MinStep is the shortest ramp step or knee probe: a step's achieved rate,
// lateness and latency are measured over its duration, and a 1 ms step
// (at 100/s, no request at all) reported 2030% achieved and steps with no
// request as saturated.
const MinStep = 100 * time.Millisecond

// MinInterval is the finest time series (--interval): CPU times come from
// /proc in 10 ms ticks, so a 5 ms interval read 0% server CPU in one and
// 100% host CPU in the next, and the samplers, which query the server
// once an interval, fell behind (165 intervals in a 3 s run at 5 ms).
const MinInterval = 100 * time.Millisecond
