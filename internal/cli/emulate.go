package cli

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/ceiling-db/ceiling/internal/diagnose"
	"github.com/ceiling-db/ceiling/internal/predict"
	"github.com/ceiling-db/ceiling/internal/report"
	"github.com/ceiling-db/ceiling/internal/target"
)

// emulationOf turns a predict profile (shipped name or file, --emulate;
// predict.Load has checked its limits are positive) into the limits the embedded target's files are held to. Cores cannot
// be held (the engine runs in ceiling's process, which the Go runtime
// schedules): they are named in NotEmulated. A profile with no IO limit
// is an error.
func emulationOf(arg string) (*target.Emulation, error) {
	p, err := predict.Load(arg)
	if err != nil {
		return nil, fmt.Errorf("--emulate: %w", err)
	}
	l := p.Limits
	e := &target.Emulation{Profile: p.Name, LogMBPerSec: l.LogMBPerSec, LogSyncsPerSec: l.LogSyncsPerSec, DataIOPS: l.DataIOPS, DataMBPerSec: l.DataMBPerSec,
		LogLatencyMs: l.LogLatencyMs, DataLatencyMs: l.DataLatencyMs}
	if l.Cores != nil {
		e.NotEmulated = append(e.NotEmulated, "cores")
	}
	if l.LogMBPerSec == nil && l.LogSyncsPerSec == nil && l.DataIOPS == nil && l.DataMBPerSec == nil && l.LogLatencyMs == nil && l.DataLatencyMs == nil {
		return nil, fmt.Errorf("--emulate %s: the profile gives no log or data-file limit to hold (only %s)", arg, strings.Join(e.NotEmulated, ", "))
	}
	return e, nil
}

// errEmulateServer refuses --emulate on a server target.
var errEmulateServer = errors.New("--emulate holds the embedded SQLite target's files to a profile's limits; a server's own devices cannot be slowed by ceiling (use `ceiling predict` on its result instead)")

// holdLimits holds t's files to emulation e, if any, and returns what
// lets them go again; it prints what is held when say is set.
func (e *env) holdLimits(t target.Target, em *target.Emulation, say bool) (release func()) {
	h, ok := t.(target.Emulator)
	if !ok || em == nil {
		return func() {}
	}
	if say {
		fmt.Fprintln(e.stdout, EmulationText(em))
	}
	h.Emulate(em)
	return func() { h.Emulate(nil) }
}

// isSQLite says whether dsn names the embedded target.
func isSQLite(dsn string) bool {
	scheme, _, _ := strings.Cut(dsn, ":")
	return strings.EqualFold(scheme, "sqlite") || strings.EqualFold(scheme, "sqlite3")
}

// EmulationText describes an emulation for the console: the limits held
// and what is not.
func EmulationText(e *target.Emulation) string {
	var held []string
	if e.LogMBPerSec != nil {
		held = append(held, fmt.Sprintf("log writes ≤ %.4g MiB/s", *e.LogMBPerSec))
	}
	if e.LogSyncsPerSec != nil {
		held = append(held, fmt.Sprintf("log syncs ≤ %.4g/s", *e.LogSyncsPerSec))
	}
	if e.DataIOPS != nil {
		held = append(held, fmt.Sprintf("data-file IOs ≤ %.4g/s", *e.DataIOPS))
	}
	if e.DataMBPerSec != nil {
		held = append(held, fmt.Sprintf("data-file IO ≤ %.4g MiB/s", *e.DataMBPerSec))
	}
	if e.LogLatencyMs != nil {
		held = append(held, fmt.Sprintf("each log sync +%.4g ms", *e.LogLatencyMs))
	}
	if e.DataLatencyMs != nil {
		held = append(held, fmt.Sprintf("each data-file read +%.4g ms", *e.DataLatencyMs))
	}
	s := "emulating " + e.Profile + ": " + strings.Join(held, ", ") + " (on top of this machine's device)"
	if len(e.NotEmulated) > 0 {
		s += "; not emulated: " + strings.Join(e.NotEmulated, ", ")
	}
	return s
}

// suggestLarger adds to the verdict of a run held to a shipped profile,
// when that profile's IO limit is what bound it (storage-queue, log-rate),
// the next class or tier of the profile's family that predict says would
// raise the ceiling: the seeds' "pre-allocate the file to the next size
// class" with its figure. The gain is the ratio of the two predictions,
// applied to the rate measured (a ramp's: the highest a step achieved,
// sustained).
func suggestLarger(doc *report.Result) {
	em, v := doc.Target.Emulation, doc.Verdict
	base := sustained(doc)
	if em == nil || v == nil || base <= 0 ||
		v.Bottleneck != diagnose.StorageQueue && v.Bottleneck != diagnose.LogRate {
		return
	}
	all, err := predict.Shipped()
	if err != nil {
		return
	}
	i := slices.IndexFunc(all, func(p predict.Profile) bool { return p.Name == em.Profile })
	if i < 0 {
		return // a profile of the user's own
	}
	cur := predict.Predict(doc, all[i])
	if cur.RequestsPerSec == nil || *cur.RequestsPerSec <= 0 {
		return
	}
	// The next size up: of the larger ones, the one predicted to gain
	// least but still to gain (one that lifts only a limit the run did not
	// reach does not).
	var next predict.Profile
	gain := math.Inf(1)
	for _, q := range predict.Larger(all[i], all) {
		pr := predict.Predict(doc, q)
		if pr.RequestsPerSec == nil {
			continue
		}
		if g := *pr.RequestsPerSec / *cur.RequestsPerSec; g >= 1.05 && g < gain {
			next, gain = q, g
		}
	}
	if next.Name == "" {
		return
	}
	g, r := math.Round(gain*100)/100, math.Round(base*gain)
	s := diagnose.Suggestion{
		Action:        fmt.Sprintf("the next size up, %s (%s), as predict models it (--emulate %s measures it)", next.Name, next.Title, next.Name),
		PredictedGain: &g, PredictedRequestsPerSec: &r,
	}
	v.Suggestions = slices.Insert(v.Suggestions, min(1, len(v.Suggestions)), s)
}

// sustained is the request rate a run measured its limit at: a closed
// loop's requests/s; a ramp's (open loop's) highest achieved rate of a
// step; 0 when none.
func sustained(doc *report.Result) float64 {
	if doc.Load.Model == "closed" {
		return doc.Summary.RequestsPerSec
	}
	best := 0.0
	for _, s := range doc.Steps {
		if s.AchievedPerSec != nil && *s.AchievedPerSec > best {
			best = *s.AchievedPerSec
		}
	}
	return best
}
