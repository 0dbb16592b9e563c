// Package predict is ceiling's capacity model (DESIGN.md section 6): it
// divides a profile's resource limits by a result's per-request costs and
// takes the minimum as the predicted ceiling on that hardware or tier.
//
// Profiles are data: YAML files embedded from profiles/, a user's YAML file,
// or the JSON that `ceiling profile-host --out` writes. A figure a profile
// does not give, or a cost a result did not measure, is "not modelled" —
// never invented.
package predict

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

//go:embed profiles/*.yaml
var profileFS embed.FS

// Limits are a profile's resource limits; nil = not given.
type Limits struct {
	LogMBPerSec    *float64 `yaml:"log_mb_per_sec" json:"log_mb_per_sec"` // MiB/s
	LogSyncsPerSec *float64 `yaml:"log_syncs_per_sec" json:"log_syncs_per_sec"`
	DataIOPS       *float64 `yaml:"data_iops" json:"data_iops"`
	DataMBPerSec   *float64 `yaml:"data_mb_per_sec" json:"data_mb_per_sec"` // MiB/s
	Cores          *float64 `yaml:"cores" json:"cores"`
	// LogLatencyMs is what each log flush waits at least (the device's
	// latency for a commit's write); DataLatencyMs what each data-file
	// read waits at least (a read that missed the server's cache).
	// Milliseconds. They bound each connection, not the whole: see
	// Predict's latency limit.
	LogLatencyMs  *float64 `yaml:"log_latency_ms" json:"log_latency_ms"`
	DataLatencyMs *float64 `yaml:"data_latency_ms" json:"data_latency_ms"`
}

// Profile is a machine or cloud tier described by its limits.
type Profile struct {
	Name       string `yaml:"name" json:"name"`
	Title      string `yaml:"title" json:"title"`
	Source     string `yaml:"source" json:"source"`
	SourceDate string `yaml:"source_date" json:"source_date"`
	Kind       string `yaml:"kind" json:"kind"`
	Limits     Limits `yaml:"limits" json:"limits"`
	Notes      string `yaml:"notes" json:"notes,omitempty"`
	// Warning says why the profile's limits may not hold (a profile-host
	// run on a memory file system); predictions repeat it as a caveat.
	Warning string `yaml:"-" json:"warning,omitempty"`
}

// count is the number of limits the profile gives.
func (l Limits) count() int {
	n := 0
	for _, v := range []*float64{l.LogMBPerSec, l.LogSyncsPerSec, l.DataIOPS, l.DataMBPerSec, l.Cores, l.LogLatencyMs, l.DataLatencyMs} {
		if v != nil {
			n++
		}
	}
	return n
}

// Validate checks a profile has a name, a source, a date and at least one
// positive limit.
func (p Profile) Validate() error {
	var errs []string
	if p.Name == "" {
		errs = append(errs, "no name")
	}
	if strings.TrimSpace(p.Source) == "" {
		errs = append(errs, "no source")
	}
	if strings.TrimSpace(p.SourceDate) == "" {
		errs = append(errs, "no source_date")
	}
	if p.Limits.count() == 0 {
		errs = append(errs, "no limits")
	}
	for k, v := range map[string]*float64{"log_mb_per_sec": p.Limits.LogMBPerSec, "log_syncs_per_sec": p.Limits.LogSyncsPerSec,
		"data_iops": p.Limits.DataIOPS, "data_mb_per_sec": p.Limits.DataMBPerSec, "cores": p.Limits.Cores,
		"log_latency_ms": p.Limits.LogLatencyMs, "data_latency_ms": p.Limits.DataLatencyMs} {
		if v != nil && (!(*v > 0) || math.IsInf(*v, 0)) {
			errs = append(errs, fmt.Sprintf("limits.%s must be > 0, got %g", k, *v))
		}
	}
	if len(errs) > 0 {
		sort.Strings(errs)
		return errors.New(strings.Join(errs, "; "))
	}
	return nil
}

// parseYAML parses one YAML profile strictly (unknown keys are errors).
func parseYAML(b []byte) (Profile, error) {
	var p Profile
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&p); err != nil {
		return Profile{}, err
	}
	return p, p.Validate()
}

// Shipped returns the embedded profiles, sorted by name.
func Shipped() ([]Profile, error) {
	names, err := fs.Glob(profileFS, "profiles/*.yaml")
	if err != nil {
		return nil, err
	}
	out := make([]Profile, 0, len(names))
	for _, n := range names {
		b, err := profileFS.ReadFile(n)
		if err != nil {
			return nil, err
		}
		p, err := parseYAML(b)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", n, err)
		}
		out = append(out, p)
	}
	sort.SliceStable(out, func(i, j int) bool { return less(out[i], out[j]) })
	return out, nil
}

// less orders profiles by kind, then name without its last dash-separated
// token, then by their limits, so size classes and vCore counts ascend.
func less(a, b Profile) bool {
	if a.Kind != b.Kind {
		return a.Kind < b.Kind
	}
	stem := func(n string) string {
		if i := strings.LastIndexByte(n, '-'); i > 0 {
			return n[:i]
		}
		return n
	}
	if sa, sb := stem(a.Name), stem(b.Name); sa != sb {
		return sa < sb
	}
	la, lb := a.Limits.values(), b.Limits.values()
	for i := range la {
		if la[i] != lb[i] {
			return la[i] < lb[i]
		}
	}
	return a.Name < b.Name
}

func (l Limits) values() []float64 {
	out := make([]float64, 0, 5)
	for _, v := range []*float64{l.LogMBPerSec, l.LogSyncsPerSec, l.DataIOPS, l.DataMBPerSec, l.Cores} {
		if v == nil {
			out = append(out, -1)
		} else {
			out = append(out, *v)
		}
	}
	return out
}

// hostJSON is what `ceiling profile-host --out` writes.
type hostJSON struct {
	Name             string    `json:"name"`
	MeasuredAt       time.Time `json:"measured_at"`
	Source           string    `json:"source"`
	Dir              string    `json:"dir"`
	FsyncsPerSec     *float64  `json:"fsyncs_per_sec"`
	SeqWriteMBPerSec *float64  `json:"seq_write_mb_per_sec"`
	Cores            *float64  `json:"cores"`
	InMemory         string    `json:"in_memory"`
}

// FromHostJSON turns a profile-host JSON document into a profile:
// fsyncs_per_sec → log_syncs_per_sec, seq_write_mb_per_sec → log and data
// MB/s, cores → cores.
func FromHostJSON(b []byte) (Profile, error) {
	var h hostJSON
	if err := json.Unmarshal(b, &h); err != nil {
		return Profile{}, err
	}
	pos := func(v *float64) *float64 {
		if v == nil || !(*v > 0) {
			return nil
		}
		return v
	}
	p := Profile{
		Name:   h.Name,
		Title:  "this host, measured by ceiling profile-host",
		Source: h.Source,
		Kind:   "host",
		Limits: Limits{LogSyncsPerSec: pos(h.FsyncsPerSec), LogMBPerSec: pos(h.SeqWriteMBPerSec),
			DataMBPerSec: pos(h.SeqWriteMBPerSec), Cores: pos(h.Cores)},
		Notes: "flushes/s were measured at one writer (4 KiB write + fdatasync each); " +
			"log and data MB/s are both the sequential write rate",
	}
	if p.Name == "" {
		p.Name = "this-host"
	}
	if p.Source == "" {
		p.Source = "ceiling profile-host"
	}
	if h.Dir != "" {
		p.Source += " in " + h.Dir
	}
	if h.InMemory != "" {
		p.Warning = "measured on a " + h.InMemory + " (memory): its flush and write rates do not describe a disk"
	}
	if !h.MeasuredAt.IsZero() {
		p.SourceDate = h.MeasuredAt.UTC().Format("2006-01-02")
	}
	return p, p.Validate()
}

// Load finds a profile by shipped name, or reads it from a file: a YAML
// profile, or the JSON of `ceiling profile-host --out`.
func Load(arg string) (Profile, error) {
	shipped, err := Shipped()
	if err != nil {
		return Profile{}, err
	}
	for _, p := range shipped {
		if p.Name == arg {
			return p, nil
		}
	}
	b, err := os.ReadFile(arg)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) && !strings.ContainsAny(arg, `/\.`) {
			return Profile{}, fmt.Errorf("unknown profile %q (see ceiling profiles)", arg)
		}
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return Profile{}, fmt.Errorf("profile %s: %v", arg, err)
	}
	var p Profile
	if isHostJSON(b) {
		p, err = FromHostJSON(b)
	} else {
		p, err = parseYAML(b)
		if p.Name == "" && err != nil && p.Limits.count() > 0 {
			p.Name = strings.TrimSuffix(filepath.Base(arg), filepath.Ext(arg))
			err = p.Validate()
		}
	}
	if err != nil {
		return Profile{}, fmt.Errorf("profile %s: %v", arg, err)
	}
	return p, nil
}

// isHostJSON reports whether b is a JSON object with profile-host's keys.
func isHostJSON(b []byte) bool {
	t := bytes.TrimSpace(b)
	if len(t) == 0 || t[0] != '{' {
		return false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(t, &m) != nil {
		return false
	}
	_, a := m["fsyncs_per_sec"]
	_, c := m["seq_write_mb_per_sec"]
	return a || c
}

// Larger returns the profiles of all in p's family (the same kind:
// azure-mi-gp-file-128g's other file classes, azure-2014-s1's other tiers;
// without a kind, the same name but for its last dash-separated token) that
// give every limit p gives, none lower (no device latency higher) and at
// least one higher: the classes or tiers above p, in the order of
// ceiling profiles.
func Larger(p Profile, all []Profile) []Profile {
	family := func(q Profile) string {
		if q.Kind != "" {
			return q.Kind
		}
		if i := strings.LastIndexByte(q.Name, '-'); i > 0 {
			return q.Name[:i]
		}
		return q.Name
	}
	type pair struct{ a, b *float64 }
	var out []Profile
	for _, q := range all {
		if q.Name == p.Name || family(q) != family(p) {
			continue
		}
		ok, better := true, false
		for _, l := range []pair{{p.Limits.LogMBPerSec, q.Limits.LogMBPerSec}, {p.Limits.LogSyncsPerSec, q.Limits.LogSyncsPerSec},
			{p.Limits.DataIOPS, q.Limits.DataIOPS}, {p.Limits.DataMBPerSec, q.Limits.DataMBPerSec}, {p.Limits.Cores, q.Limits.Cores}} {
			switch {
			case l.a == nil && l.b == nil:
			case l.a == nil || l.b == nil || *l.b < *l.a:
				ok = false
			case *l.b > *l.a:
				better = true
			}
		}
		for _, l := range []pair{{p.Limits.LogLatencyMs, q.Limits.LogLatencyMs}, {p.Limits.DataLatencyMs, q.Limits.DataLatencyMs}} {
			switch {
			case l.a == nil && l.b == nil:
			case l.a == nil || l.b == nil || *l.b > *l.a:
				ok = false
			case *l.b < *l.a:
				better = true
			}
		}
		if ok && better {
			out = append(out, q)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return less(out[i], out[j]) })
	return out
}
