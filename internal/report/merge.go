package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/ceiling-db/ceiling/internal/diagnose"
	"github.com/ceiling-db/ceiling/internal/metrics"
	"github.com/ceiling-db/ceiling/internal/target"
)

// Merge makes one result of the results of a sharded run's shards (run
// --shard I/N, each given once): the requests, rows, errors and rates of
// all shards added up, the latencies from their histograms merged (exact
// percentiles), the server's evidence from one shard (the server's
// counters are the whole server's, every shard's requests in them; an
// embedded database's are each process's own, and are added up), the
// per-request costs over all shards' requests, and a verdict made again
// from the merged figures. files name the results, for the document.
func Merge(shards []*Result, files []string) (*Result, error) {
	if len(shards) == 0 {
		return nil, errors.New("merge: no results")
	}
	first := shards[0]
	if first.Load.Shard == nil {
		return nil, fmt.Errorf("%s is not a shard's result (run --shard I/N)", resultName(files, 0))
	}
	n, key := first.Load.Shard.N, first.Load.Shard.Key
	shards, cut := commonProbes(shards)
	first = shards[0]
	byShard := make([]*Result, n)
	for k, r := range shards {
		sh := r.Load.Shard
		switch {
		case sh == nil || sh.I < 0:
			return nil, fmt.Errorf("%s is not a shard's result (run --shard I/N)", resultName(files, k))
		case sh.N != n || sh.Key != key:
			return nil, fmt.Errorf("%s is shard %d/%d of run %s, %s shard %d/%d of run %s: not one run", resultName(files, k), sh.I, sh.N, sh.Key, resultName(files, 0), first.Load.Shard.I, n, key)
		case sh.I >= n:
			return nil, fmt.Errorf("%s: shard %d of %d", resultName(files, k), sh.I, n)
		case byShard[sh.I] != nil:
			return nil, fmt.Errorf("%s: shard %d/%d given twice", resultName(files, k), sh.I, n)
		case r.Workload.Name != first.Workload.Name:
			return nil, fmt.Errorf("%s ran %s, %s %s", resultName(files, k), r.Workload.Name, resultName(files, 0), first.Workload.Name)
		case (r.Knee == nil) != (first.Knee == nil):
			return nil, fmt.Errorf("%s is %s result, %s %s: not one run", resultName(files, k), kindOf(r), resultName(files, 0), kindOf(first))
		case len(r.Steps) != len(first.Steps):
			return nil, fmt.Errorf("%s has %d steps, %s %d", resultName(files, k), len(r.Steps), resultName(files, 0), len(first.Steps))
		}
		byShard[sh.I] = r
	}
	var missing []string
	for i, r := range byShard {
		if r == nil {
			missing = append(missing, fmt.Sprint(i))
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("merge: shard %s of %d missing (run %s): give every shard's result", strings.Join(missing, ", "), n, key)
	}
	if err := sameSearch(byShard); err != nil {
		return nil, err
	}
	embedded := first.Target.Engine == "sqlite" // its counters are each process's

	base := byShard[0]
	m := &Result{
		Schema: Schema, Tool: base.Tool, StartedAt: base.StartedAt, Target: base.Target,
		Workload: base.Workload, Load: base.Load, Steps: []Step{}, Runs: []RunSummary{},
		Histograms: map[string]string{}, Files: []File{}, Host: base.Host, Network: base.Network, LogDevice: base.LogDevice,
	}
	m.Load.Shard = &Shard{I: -1, N: n, Key: key, Threads: base.Load.Shard.Threads, Hosts: base.Load.Shard.Hosts, Files: files}
	m.Load.Threads = 0
	var ops int64
	for _, r := range byShard {
		if r.StartedAt.Before(m.StartedAt) {
			m.StartedAt = r.StartedAt
		}
		m.Partial = m.Partial || r.Partial
		m.Load.Threads += r.Load.Threads
		if r.Load.Ops != nil {
			ops += *r.Load.Ops
		}
	}
	if base.Load.Ops != nil {
		m.Load.Ops = &ops
	}
	if base.Load.Rate != nil {
		m.Load.Rate = f64(*base.Load.Rate * float64(n))
	}
	m.Load.Rates = nil
	for _, r := range base.Load.Rates {
		m.Load.Rates = append(m.Load.Rates, r*float64(n))
	}
	m.ID = strings.TrimSuffix(base.ID, fmt.Sprintf("-shard%dof%d", 0, n)) + fmt.Sprintf("-merged%d", n)

	if err := mergeSummary(m, byShard); err != nil {
		return nil, err
	}
	if err := mergeSteps(m, byShard, embedded); err != nil {
		return nil, err
	}
	if base.Knee != nil {
		k := *base.Knee
		m.Knee = &k
		kneeStepRates(m)
	}
	mergeEvidence(m, byShard, embedded)
	dbFigs := base.Load.Shard.DatabaseFigures
	m.Load.Shard.DatabaseFigures = dbFigs
	figs := make([]map[string]float64, len(byShard))
	for i, r := range byShard {
		figs[i] = r.Figures
	}
	m.Figures = mergeFigures(figs, dbFigs)
	if d := m.LogDevice; d != nil && d.FlushesPerSec != nil && m.Summary.RequestsPerSec > 0 {
		c := *d // the whole device's figures; per request over every shard's
		c.FlushesPerOp = f64(*d.FlushesPerSec / m.Summary.RequestsPerSec)
		m.LogDevice = &c
	}
	mergeClient(m, byShard)
	mergeIntervals(m, byShard, embedded)

	figNote := ""
	if len(dbFigs) > 0 && len(m.Figures) > 0 {
		figNote = fmt.Sprintf("; %s counted from the database: shard 0's (each shard's counts every shard's work)", strings.Join(dbFigs, ", "))
	}
	m.Notes = append(m.Notes, fmt.Sprintf("merged from %d shards of run %s (%s): requests, rows, errors and rates added up, latencies from the shards' histograms merged; %s%s",
		n, key, hostsText(m.Load.Shard.Hosts), evidenceText(embedded), figNote))
	for i, r := range byShard {
		if r.Tool.Version != base.Tool.Version {
			m.Notes = append(m.Notes, fmt.Sprintf("shard %d ran ceiling %s, shard 0 %s: their figures may not be alike", i, r.Tool.Version, base.Tool.Version))
		}
		if d := r.StartedAt.Sub(m.StartedAt); d > time.Second {
			m.Notes = append(m.Notes, fmt.Sprintf("shard %d started %.1fs after the first: the shards did not measure the same span", i, d.Seconds()))
		}
		for _, note := range r.Notes {
			if !strings.HasPrefix(note, fmt.Sprintf("shard %d/%d:", i, n)) && !strings.Contains(note, foreignWorkMark) {
				m.Notes = append(m.Notes, fmt.Sprintf("shard %d: %s", i, note))
			}
		}
	}
	if cut > 0 {
		m.Partial = true
		what := "probe ran on some shards only and is"
		if cut > 1 {
			what = fmt.Sprintf("%d probes ran on some shards only and are", cut)
		}
		m.Notes = append(m.Notes, fmt.Sprintf("the search was interrupted: its last %s left out of the probes (the totals still count their requests)", what))
	}
	m.Summary.Stalls = stallsOf(m)
	setMergedVerdicts(m, shardsDeviceLatency(byShard))
	if m.Knee != nil {
		setKneeVerdict(m)
	}
	return m, nil
}

// commonProbes cuts the results of an interrupted knee search's shards to
// the probes (steps) every shard ran: a shard interrupted before a probe
// started has none of it. cut is how many steps the longest lost.
func commonProbes(rs []*Result) (out []*Result, cut int) {
	if rs[0].Knee == nil {
		return rs, 0
	}
	least, most := len(rs[0].Steps), 0
	for _, r := range rs {
		if r.Knee == nil {
			return rs, 0 // sameSearch says why
		}
		least, most = min(least, len(r.Steps)), max(most, len(r.Steps))
	}
	if least == most {
		return rs, 0
	}
	out = make([]*Result, len(rs))
	for i, r := range rs {
		c := *r
		c.Steps = r.Steps[:least]
		if len(c.Load.Rates) > least {
			c.Load.Rates = c.Load.Rates[:least]
		}
		out[i] = &c
	}
	return out, most - least
}

// sameSearch checks that the shards' results are all of a knee search,
// the same one (the shards judged every probe together, so their answers
// and probes agree), or none is.
func sameSearch(rs []*Result) error {
	k0 := rs[0].Knee
	for i, r := range rs[1:] {
		k := r.Knee
		switch {
		case k == nil || k0 == nil: // Merge refused a mix

			continue
		case !samePtr(k.Rate, k0.Rate) || !samePtr(k.FirstFailingRate, k0.FirstFailingRate) || k.Stop != k0.Stop || len(k.Probes) != len(k0.Probes):
			return fmt.Errorf("shard %d's knee search (%s) and shard 0's (%s) did not end alike: not the shards of one search", i+1, KneeAnswer(k), KneeAnswer(k0))
		}
		for j, p := range k.Probes {
			if q := k0.Probes[j]; p.Rate != q.Rate || p.Pass != q.Pass {
				return fmt.Errorf("probe %d: shard %d probed %s/s (pass %v), shard 0 %s/s (pass %v): not the shards of one search", j+1, i+1, fmtRate(p.Rate), p.Pass, fmtRate(q.Rate), q.Pass)
			}
		}
	}
	return nil
}

// kindOf says what made r, for errors.
func kindOf(r *Result) string {
	if r.Knee != nil {
		return "a knee search's"
	}
	return "a run's"
}

func samePtr(a, b *float64) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

// kneeStepRates gives a merged knee search's steps the rates the search
// probed (the shards' parts added up may differ in the last digit).
func kneeStepRates(m *Result) {
	for _, p := range m.Knee.Probes {
		if p.Step == nil || *p.Step >= len(m.Steps) {
			continue
		}
		s := &m.Steps[*p.Step]
		s.Rate = p.Rate
		if s.AchievedPerSec != nil && s.Rate > 0 {
			s.AchievedPct = f64(100 * *s.AchievedPerSec / s.Rate)
		}
		if *p.Step < len(m.Load.Rates) {
			m.Load.Rates[*p.Step] = p.Rate
		}
	}
}

// resultName names the k-th result given to Merge, for its errors.
func resultName(files []string, k int) string {
	if k < len(files) {
		return files[k]
	}
	return fmt.Sprintf("result %d", k+1)
}

func hostsText(hosts []string) string {
	count := map[string]int{}
	var order []string
	for _, h := range hosts {
		if h == "" {
			h = "unknown host"
		}
		if count[h] == 0 {
			order = append(order, h)
		}
		count[h]++
	}
	parts := make([]string, len(order))
	for i, h := range order {
		parts[i] = fmt.Sprintf("%d on %s", count[h], h)
	}
	return strings.Join(parts, ", ")
}

func evidenceText(embedded bool) string {
	if embedded {
		return "the embedded database's file IO and counters added up (each process counted its own)"
	}
	return "the server's counters from shard 0 (they count every shard's requests), per-request costs over all shards' requests"
}

// mergeFigures merges the shards' workload figures: those counted from
// the database (every shard's work in each) from shard 0, the others
// added up; a figure some shard lacks is left out (not measured there).
func mergeFigures(figs []map[string]float64, fromDB []string) map[string]float64 {
	if len(figs) == 0 || figs[0] == nil {
		return nil
	}
	out := map[string]float64{}
	for k, v := range figs[0] {
		if slices.Contains(fromDB, k) {
			out[k] = v
			continue
		}
		sum, all := v, true
		for _, f := range figs[1:] {
			x, ok := f[k]
			if !ok {
				all = false
				break
			}
			sum += x
		}
		if all {
			out[k] = sum
		}
	}
	return out
}

func addPtr(a *int64, b *int64) *int64 {
	if a == nil || b == nil {
		return nil
	}
	v := *a + *b
	return &v
}

func addF(a, b *float64) *float64 {
	if a == nil || b == nil {
		return nil
	}
	return f64(*a + *b)
}

// mergeSummary adds up the shards' summaries; rates are the sum of each
// shard's rate (they ran at once), latencies the merged histograms'.
func mergeSummary(m *Result, rs []*Result) error {
	s := Summary{ErrorsByClass: map[string]int64{}, ByOp: map[string]OpResult{}, OpOrder: rs[0].Summary.OpOrder}
	tot := OpResult{Bytes: f64i(0), MBPerMin: f64(0)}
	var all []string
	var sched *int64
	if rs[0].Summary.Scheduled != nil {
		sched = new(int64)
	}
	for _, r := range rs {
		x := r.Summary
		s.ElapsedS = max(s.ElapsedS, x.ElapsedS)
		addOp(&tot, OpResult{Requests: x.Requests, RequestsPerSec: x.RequestsPerSec, Rows: x.Rows, RowsPerSec: x.RowsPerSec,
			Bytes: x.Bytes, MBPerMin: x.MBPerMin, Errors: x.Errors, RowsExamined: x.RowsExamined, RoundTrips: x.RoundTrips})
		for c, v := range x.ErrorsByClass {
			s.ErrorsByClass[c] += v
		}
		for c, v := range x.FirstErrors {
			if s.FirstErrors == nil {
				s.FirstErrors = map[string]string{}
			}
			if _, ok := s.FirstErrors[c]; !ok {
				s.FirstErrors[c] = v
			}
		}
		s.Late += x.Late
		if sched != nil && x.Scheduled != nil {
			*sched += *x.Scheduled
		}
		s.Reconnects += x.Reconnects
		s.InFlightAtEnd.Requests += x.InFlightAtEnd.Requests
		s.InFlightAtEnd.OldestMs = max(s.InFlightAtEnd.OldestMs, x.InFlightAtEnd.OldestMs)
		s.InFlightAtEnd.Unfinished += x.InFlightAtEnd.Unfinished
		s.InFlightAtEnd.Reconnecting += x.InFlightAtEnd.Reconnecting
		s.InFlightAtEnd.ReconnectingMs = max(s.InFlightAtEnd.ReconnectingMs, x.InFlightAtEnd.ReconnectingMs)
	}
	s.Scheduled = sched
	s.Requests, s.RequestsPerSec, s.Rows, s.RowsPerSec = tot.Requests, tot.RequestsPerSec, tot.Rows, tot.RowsPerSec
	s.Bytes, s.MBPerMin, s.Errors = tot.Bytes, tot.MBPerMin, tot.Errors
	s.RowsExamined, s.RowsExaminedPerRequest = tot.RowsExamined, tot.RowsExaminedPerRequest
	s.RoundTrips, s.RoundTripsPerRequest = tot.RoundTrips, tot.RoundTripsPerRequest
	for _, op := range s.OpOrder {
		o := OpResult{Bytes: f64i(0), MBPerMin: f64(0)}
		var encs []string
		for _, r := range rs {
			addOp(&o, r.Summary.ByOp[op])
			encs = append(encs, r.Histograms[op])
			all = append(all, r.Histograms[op])
		}
		h, err := metrics.MergeHists(encs)
		if err != nil {
			return fmt.Errorf("merge %s's histograms: %w", op, err)
		}
		o.LatencyMs = metrics.LatencyOf(h)
		if h != nil {
			enc, err := metrics.EncodeHist(h)
			if err != nil {
				return err
			}
			m.Histograms[op] = enc
		}
		s.ByOp[op] = o
	}
	h, err := metrics.MergeHists(all)
	if err != nil {
		return fmt.Errorf("merge the histograms: %w", err)
	}
	s.LatencyMs = metrics.LatencyOf(h)
	m.Summary = s
	return nil
}

// addOp adds x's counts and rates into o (rates add up: the shards ran
// at once); a byte count either lacks makes o's nil (not measured).
func addOp(o *OpResult, x OpResult) {
	o.Requests += x.Requests
	o.RequestsPerSec += x.RequestsPerSec
	o.Rows += x.Rows
	o.RowsPerSec += x.RowsPerSec
	o.Bytes, o.MBPerMin = addPtr(o.Bytes, x.Bytes), addF(o.MBPerMin, x.MBPerMin)
	o.Errors += x.Errors
	if x.RowsExamined != nil {
		o.RowsExamined = addPtr(orZero(o.RowsExamined), x.RowsExamined)
	}
	if o.RowsExamined != nil && o.Requests > 0 {
		o.RowsExaminedPerRequest = f64(float64(*o.RowsExamined) / float64(o.Requests))
	}
	if x.RoundTrips != nil {
		o.RoundTrips = addPtr(orZero(o.RoundTrips), x.RoundTrips)
	}
	if o.RoundTrips != nil && o.Requests > 0 {
		o.RoundTripsPerRequest = f64(float64(*o.RoundTrips) / float64(o.Requests))
	}
}

func f64i(v int64) *int64 { return &v }

func orZero(p *int64) *int64 {
	if p == nil {
		return f64i(0)
	}
	return p
}

// scaleCosts turns costs per one shard's requests into costs per all
// shards' requests (a server's counters count every shard's).
func scaleCosts(c Costs, shardReqs, allReqs int64) Costs {
	if allReqs <= 0 {
		return Costs{}
	}
	k := float64(shardReqs) / float64(allReqs)
	sc := func(p *float64) *float64 {
		if p == nil {
			return nil
		}
		return f64(*p * k)
	}
	return Costs{LogBytesPerOp: sc(c.LogBytesPerOp), LogSyncsPerOp: sc(c.LogSyncsPerOp), LogWritesPerOp: sc(c.LogWritesPerOp),
		DataReadsPerOp: sc(c.DataReadsPerOp), DataWritesPerOp: sc(c.DataWritesPerOp), DataSyncsPerOp: sc(c.DataSyncsPerOp),
		CommitsPerOp: sc(c.CommitsPerOp), CPUusPerOp: sc(c.CPUusPerOp)}
}

// meanCosts is the request-weighted mean of per-shard costs (each
// process's own counters: the embedded database).
func meanCosts(cs []Costs, reqs []int64) Costs {
	var total int64
	for _, r := range reqs {
		total += r
	}
	if total == 0 {
		return Costs{}
	}
	get := []func(*Costs) **float64{
		func(c *Costs) **float64 { return &c.LogBytesPerOp }, func(c *Costs) **float64 { return &c.LogSyncsPerOp },
		func(c *Costs) **float64 { return &c.LogWritesPerOp }, func(c *Costs) **float64 { return &c.DataReadsPerOp },
		func(c *Costs) **float64 { return &c.DataWritesPerOp }, func(c *Costs) **float64 { return &c.DataSyncsPerOp },
		func(c *Costs) **float64 { return &c.CommitsPerOp }, func(c *Costs) **float64 { return &c.CPUusPerOp },
	}
	var out Costs
	for _, g := range get {
		sum, ok := 0.0, true
		for i := range cs {
			p := *g(&cs[i])
			if p == nil {
				ok = false
				break
			}
			sum += *p * float64(reqs[i])
		}
		if ok {
			*g(&out) = f64(sum / float64(total))
		}
	}
	return out
}

// withClientQueues is a server's evidence (one shard's: the server is the
// same for all) with ceiling's own threads' run-queue time, which is each
// shard's process's, summed over the shards (per request it is then the
// shards' mean); without it where a shard lacks it.
func withClientQueues(ev *Evidence, rs []*Result) *Evidence {
	if ev == nil || ev.Counters == nil {
		return ev
	}
	if _, ok := ev.Counters[target.CtrClientRunQueueSec]; !ok {
		return ev
	}
	out := *ev
	out.Counters = maps.Clone(ev.Counters)
	sum := 0.0
	for _, r := range rs {
		v, ok := 0.0, false
		if r.Evidence != nil {
			v, ok = r.Evidence.Counters[target.CtrClientRunQueueSec]
		}
		if !ok {
			delete(out.Counters, target.CtrClientRunQueueSec)
			return &out
		}
		sum += v
	}
	out.Counters[target.CtrClientRunQueueSec] = sum
	return &out
}

// mergeEvidence sets the merged run's evidence, costs and files.
func mergeEvidence(m *Result, rs []*Result, embedded bool) {
	if !embedded {
		base := rs[0]
		m.Evidence = withClientQueues(base.Evidence, rs)
		m.Files = append(m.Files, base.Files...)
		if ev := base.Evidence; ev != nil && ev.Counters != nil && !ev.ServerRestarted {
			m.Costs = costsOf(ev.Counters, m.Summary.Requests)
			if note := foreignWorkNote(m.Costs, ev.Counters[target.CtrCommits]-float64(m.Summary.Requests), ev.Seconds); note != "" {
				m.Notes = append(m.Notes, note)
			}
		}
		return
	}
	var cs []Costs
	var reqs []int64
	ev := &Evidence{Counters: map[string]float64{}, PerSec: map[string]float64{}}
	files := map[string]*File{}
	var order []string
	for _, r := range rs {
		cs, reqs = append(cs, r.Costs), append(reqs, r.Summary.Requests)
		if r.Evidence != nil {
			ev.Seconds = max(ev.Seconds, r.Evidence.Seconds)
			for k, v := range r.Evidence.Counters {
				// The host's CPU pressure is a time span, not a sum of
				// work: shards on one host each count all of it (on
				// several, the most pressed host's is kept).
				if target.IsLevel(k) || k == target.CtrHostCPUPressure {
					ev.Counters[k] = max(ev.Counters[k], v)
				} else {
					ev.Counters[k] += v
				}
			}
		}
		for _, f := range r.Files {
			g, ok := files[f.Name]
			if !ok {
				c := f
				files[f.Name] = &c
				order = append(order, f.Name)
				continue
			}
			g.Reads += f.Reads
			g.Writes += f.Writes
			g.BytesRead += f.BytesRead
			g.BytesWritten += f.BytesWritten
			g.Syncs += f.Syncs
			g.ReadMs += f.ReadMs
			g.WriteMs += f.WriteMs
			g.SyncMs += f.SyncMs
			g.IOPS += f.IOPS
			g.MBPerSec += f.MBPerSec
			g.NoSyncs = g.NoSyncs || f.NoSyncs
			g.NoWriteTime = g.NoWriteTime || f.NoWriteTime
		}
	}
	for k, v := range ev.Counters {
		if ev.Seconds > 0 && !target.IsLevel(k) {
			ev.PerSec[k] = v / ev.Seconds
		}
	}
	m.Evidence = ev
	m.Costs = meanCosts(cs, reqs)
	for _, name := range order {
		f := files[name]
		avg := func(ms float64, n int64) *float64 {
			if n == 0 {
				return nil
			}
			return f64(ms / float64(n))
		}
		f.AvgReadMs, f.AvgWriteMs, f.AvgSyncMs = avg(f.ReadMs, f.Reads), avg(f.WriteMs, f.Writes), avg(f.SyncMs, f.Syncs)
		if f.NoWriteTime {
			f.AvgWriteMs = nil
		}
		if f.Writes > 0 {
			f.KBPerWrite = f64(float64(f.BytesWritten) / 1024 / float64(f.Writes))
		}
		if m.Summary.Requests > 0 && !f.NoSyncs {
			f.SyncsPerTxn = f64(float64(f.Syncs) / float64(m.Summary.Requests))
		}
		m.Files = append(m.Files, *f)
	}
}

// mergeClient keeps the busiest host's load generator: shards on one host
// share its cores (their CPU added up), shards on others do not.
func mergeClient(m *Result, rs []*Result) {
	perHost := map[string]*Client{}
	for i, r := range rs {
		h := ""
		if i < len(m.Load.Shard.Hosts) {
			h = m.Load.Shard.Hosts[i]
		}
		c, ok := perHost[h]
		if !ok {
			cc := r.Client
			perHost[h] = &cc
			continue
		}
		c.CPUSeconds, c.CPUPctCores = addF(c.CPUSeconds, r.Client.CPUSeconds), addF(c.CPUPctCores, r.Client.CPUPctCores)
	}
	hosts := make([]string, 0, len(perHost))
	for h := range perHost {
		hosts = append(hosts, h)
	}
	sort.Strings(hosts)
	for _, h := range hosts {
		c := perHost[h]
		if m.Client.CPUPctCores == nil || (c.CPUPctCores != nil && *c.CPUPctCores > *m.Client.CPUPctCores) {
			m.Client = *c
		}
	}
}

// mergeIntervals adds up the shards' series point by point (they started
// together, at the same interval), the k-th point of a step with the k-th
// of the same step (a knee search's shards start each probe together, but
// one may have a point more in a probe); a point's latency is that of the
// shards' histograms of it merged, null where a shard's point has none (a
// result of a version that kept none, or a point only some shards have).
func mergeIntervals(m *Result, rs []*Result, embedded bool) {
	type at struct{ step, k int }
	places := func(ivs []IntervalPoint) []at {
		out := make([]at, len(ivs))
		seen := map[int]int{}
		for i, p := range ivs {
			s := -1
			if p.Step != nil {
				s = *p.Step
			}
			out[i] = at{s, seen[s]}
			seen[s]++
		}
		return out
	}
	others := make([]map[at]IntervalPoint, len(rs))
	for j, r := range rs[1:] {
		pl := places(r.Intervals)
		others[j] = make(map[at]IntervalPoint, len(pl))
		for i, a := range pl {
			others[j][a] = r.Intervals[i]
		}
	}
	base := rs[0].Intervals
	for i, a := range places(base) {
		q := base[i]
		q.LatencyMs, q.Files, q.Histogram = nil, nil, ""
		encs := []string{base[i].Histogram}
		for j := range rs[1:] {
			o, ok := others[j][a]
			if !ok {
				encs = append(encs, "")
				continue
			}
			encs = append(encs, o.Histogram)
			q.Requests += o.Requests
			q.RequestsPerSec += o.RequestsPerSec
			q.RowsPerSec += o.RowsPerSec
			q.MBPerMin = addF(q.MBPerMin, o.MBPerMin)
			q.Errors += o.Errors
			q.Late += o.Late
			q.OldestInFlightMs = max(q.OldestInFlightMs, o.OldestInFlightMs)
			if o.ClientCPUPct != nil && (q.ClientCPUPct == nil || *o.ClientCPUPct > *q.ClientCPUPct) {
				q.ClientCPUPct = o.ClientCPUPct
			}
			if embedded {
				q.LogMBPerSec, q.LogSyncsPerSec, q.DataIOPS = addF(q.LogMBPerSec, o.LogMBPerSec), addF(q.LogSyncsPerSec, o.LogSyncsPerSec), addF(q.DataIOPS, o.DataIOPS)
			}
		}
		if !slices.Contains(encs, "") {
			if h, err := metrics.MergeHists(encs); err == nil {
				q.LatencyMs = metrics.LatencyOf(h)
			}
		}
		m.Intervals = append(m.Intervals, q)
	}
}

// mergeSteps adds up the shards' ramp steps, each from its own requests;
// the latencies from the steps' histograms (kept by shards' results).
func mergeSteps(m *Result, rs []*Result, embedded bool) error {
	n := float64(len(rs))
	for i := range rs[0].Steps {
		b := rs[0].Steps[i]
		s := Step{Index: b.Index, Rate: b.Rate * n, ErrorsByClass: map[string]int64{}, WarmupS: b.WarmupS, BacklogCap: b.BacklogCap}
		var encs []string
		var achieved, rows, mb *float64 = f64(0), f64(0), f64(0)
		var cs []Costs
		var reqs []int64
		for j, r := range rs {
			x := r.Steps[i]
			s.Scheduled += x.Scheduled
			s.Completed += x.Completed
			s.Late += x.Late
			s.Failed += x.Failed
			for c, v := range x.ErrorsByClass {
				s.ErrorsByClass[c] += v
			}
			achieved, rows, mb = addF(achieved, x.AchievedPerSec), addF(rows, x.RowsPerSec), addF(mb, x.MBPerMin)
			s.DurationS = max(s.DurationS, x.DurationS)
			s.Partial = s.Partial || x.Partial
			s.MaxBacklog += x.MaxBacklog
			if x.ClientCPUPct != nil && (s.ClientCPUPct == nil || *x.ClientCPUPct > *s.ClientCPUPct) {
				s.ClientCPUPct = x.ClientCPUPct
			}
			if x.SchedLagMs != nil && (s.SchedLagMs == nil || x.SchedLagMs.P99 > s.SchedLagMs.P99) {
				s.SchedLagMs = x.SchedLagMs // the worst shard's: the lag is each generator's own
			}
			if j == 0 {
				s.SchedLagSlow = x.SchedLagSlow
			} else if s.SchedLagSlow != nil && x.SchedLagSlow != nil {
				s.SchedLagSlow = f64i(*s.SchedLagSlow + *x.SchedLagSlow)
			} else {
				s.SchedLagSlow = nil // a shard that did not count them
			}
			encs = append(encs, x.Histogram)
			cs, reqs = append(cs, x.Costs), append(reqs, x.Completed)
			if embedded {
				s.LogMBPerSec, s.LogSyncsPerSec, s.DataIOPS = addF(orZeroF(s.LogMBPerSec), x.LogMBPerSec), addF(orZeroF(s.LogSyncsPerSec), x.LogSyncsPerSec), addF(orZeroF(s.DataIOPS), x.DataIOPS)
			}
		}
		s.AchievedPerSec, s.RowsPerSec, s.MBPerMin = achieved, rows, mb
		if achieved != nil && s.Rate > 0 {
			s.AchievedPct = f64(100 * *achieved / s.Rate)
		}
		if s.Scheduled > 0 {
			s.LatePct = f64(100 * float64(s.Late) / float64(s.Scheduled))
		}
		h, err := metrics.MergeHists(encs)
		if err != nil {
			return fmt.Errorf("merge step %d's histograms: %w", i+1, err)
		}
		s.LatencyMs = metrics.LatencyOf(h)
		if embedded {
			s.Costs = meanCosts(cs, reqs)
		} else {
			s.LogMBPerSec, s.LogSyncsPerSec, s.DataIOPS, s.FsyncsPerSec = b.LogMBPerSec, b.LogSyncsPerSec, b.DataIOPS, b.FsyncsPerSec
			s.Costs = scaleCosts(b.Costs, b.Completed, s.Completed)
		}
		s.SaturatedBy = saturation(s.LatePct, s.AchievedPct)
		s.Saturated = len(s.SaturatedBy) > 0
		figs := make([]map[string]float64, len(rs))
		for k, r := range rs {
			figs[k] = r.Steps[i].Figures
		}
		s.Figures = mergeFigures(figs, rs[0].Load.Shard.DatabaseFigures)
		m.Steps = append(m.Steps, s)
	}
	return nil
}

func orZeroF(p *float64) *float64 {
	if p == nil {
		return f64(0)
	}
	return p
}

// shardsDeviceLatency is deviceLatency over the shards' intervals, from
// their data files' figures (the lowest mean time per IO of an interval
// with enough of them): what the device took when least queued.
func shardsDeviceLatency(rs []*Result) *float64 {
	var best *float64
	for _, r := range rs {
		for _, iv := range r.Intervals {
			if iv.Warmup {
				continue
			}
			ios, ms, emulated := iv.DataFileIO()
			ms -= emulated // the real device's time: an emulated limit's wait queues in front of it
			if ios < minDeviceIOs {
				continue
			}
			if v := ms / float64(ios); best == nil || v < *best {
				best = f64(v)
			}
		}
	}
	return best
}

// setMergedVerdicts diagnoses the merged steps and run as setVerdicts does
// a run's, from the merged figures; dev is the device latency estimate.
func setMergedVerdicts(m *Result, dev *float64) {
	var first *Step
	var prevLog *float64
	order := make([]int, len(m.Steps))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return m.Steps[order[a]].Rate < m.Steps[order[b]].Rate })
	for _, i := range order {
		s := &m.Steps[i]
		if s.Completed > 0 {
			s.Verdict = diagnose.Diagnose(stepFigures(m, s, nil, prevLog, nil, dev))
			if s.Saturated && first == nil {
				first = s
			}
		}
		prevLog = s.LogMBPerSec
	}
	if first != nil && first.Verdict != nil {
		v := *first.Verdict
		v.Evidence = append(slices.Clone(v.Evidence), fmt.Sprintf("from step %d (%s/s), the lowest saturated rate", first.Index+1, fmtRate(first.Rate)))
		m.Verdict = &v
		return
	}
	if m.Summary.Requests > 0 && !math.IsNaN(m.Summary.RequestsPerSec) {
		m.Verdict = diagnose.Diagnose(runFigures(m, dev))
	}
}

// The markers around a result printed into a log (run --print-result),
// for ceiling merge to find it there (a Kubernetes pod's log).
const (
	FramedBegin = "-----BEGIN CEILING RESULT-----"
	FramedEnd   = "-----END CEILING RESULT-----"
)

// WriteFramed prints res as one line of JSON between the markers.
func WriteFramed(w io.Writer, res *Result) error {
	b, err := json.Marshal(res)
	if err != nil {
		return fmt.Errorf("encode result: %w", err)
	}
	_, err = fmt.Fprintf(w, "%s\n%s\n%s\n", FramedBegin, b, FramedEnd)
	return err
}

// ReadFramed finds the results printed by WriteFramed in a log (lines
// may carry a prefix, as `kubectl logs --prefix` adds); none is no error.
func ReadFramed(log []byte) ([]*Result, error) {
	var out []*Result
	lines := strings.Split(string(log), "\n")
	for k := 0; k+1 < len(lines); k++ {
		if !strings.Contains(lines[k], FramedBegin) {
			continue
		}
		line := lines[k+1]
		i := strings.IndexByte(line, '{')
		if i < 0 {
			return nil, fmt.Errorf("line %d: no result after %s", k+2, FramedBegin)
		}
		var r Result
		if err := json.Unmarshal([]byte(strings.TrimSpace(line[i:])), &r); err != nil {
			return nil, fmt.Errorf("line %d: the result after %s: %w (a log cut short?)", k+2, FramedBegin, err)
		}
		out = append(out, &r)
		k++
	}
	return out, nil
}
