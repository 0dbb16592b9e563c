package predict

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/ceiling-db/ceiling/internal/diagnose"
	"github.com/ceiling-db/ceiling/internal/report"
	"github.com/ceiling-db/ceiling/internal/target"
)

// Resource names, in the order they are reported.
const (
	LogMB    = "log-mb"    // log MiB/s ÷ log bytes per request
	LogSyncs = "log-syncs" // log flushes/s ÷ log flushes per request
	DataIOPS = "data-iops" // data IOPS ÷ data reads+writes per request
	DataMB   = "data-mb"   // data MiB/s ÷ data bytes per request
	CPU      = "cpu"       // cores ÷ CPU seconds per request
	// Latency is the connections ÷ the device latency each request waits
	// (log flushes × the log's latency + data reads × the data file's):
	// a bound of each connection, which more connections raise.
	Latency = "latency"
)

// Limit is one resource of a prediction.
type Limit struct {
	Resource string   `json:"resource"`
	Limit    *float64 `json:"limit"`     // the profile's figure; null = not given
	Unit     string   `json:"unit"`      // of Limit
	Cost     *float64 `json:"cost"`      // per request, from the result; null = not measured
	CostUnit string   `json:"cost_unit"` // of Cost
	// Capacity is Limit ÷ Cost in requests/s; null when not modelled or when
	// the cost is 0 (the resource does not bound the rate).
	Capacity    *float64 `json:"capacity_requests_per_sec"`
	Headroom    *float64 `json:"headroom"` // Capacity ÷ the predicted ceiling
	Binding     bool     `json:"binding"`
	NotModelled string   `json:"not_modelled,omitempty"` // why, when not modelled
	Note        string   `json:"note,omitempty"`
}

// Prediction is the predicted ceiling of a result's workload under a profile.
type Prediction struct {
	Profile    string `json:"profile"`
	Title      string `json:"title"`
	Source     string `json:"source"`
	SourceDate string `json:"source_date"`
	// RequestsPerSec is min over the modelled limits' capacities; null when
	// nothing could be modelled.
	RequestsPerSec         *float64 `json:"requests_per_sec"`
	Binding                string   `json:"binding"` // resource of the minimum; "" when none
	MeasuredRequestsPerSec float64  `json:"measured_requests_per_sec"`
	Limits                 []Limit  `json:"limits"`
	Caveats                []string `json:"caveats,omitempty"`
}

func f64(v float64) *float64 { return &v }

// counterPerOp is evidence counter key ÷ requests, or nil.
func counterPerOp(r *report.Result, keys ...string) *float64 {
	if r.Evidence == nil || r.Summary.Requests <= 0 {
		return nil
	}
	sum := 0.0
	for _, k := range keys {
		v, ok := r.Evidence.Counters[k]
		if !ok {
			return nil
		}
		sum += v
	}
	return f64(sum / float64(r.Summary.Requests))
}

// UpperBoundCaveat is the caveat of a prediction that leaves out a
// resource the workload uses (Unlimited).
const UpperBoundCaveat = "a prediction is an upper bound where the profile gives no limit for a resource the workload would use at that rate (\"(no limit)\" under not modelled): that resource can only lower it"

// material is, per resource, the rate of use below which any server or
// tier copes: 0.1 core, 100 flushes or IOs a second, 1 MiB/s.
var material = map[string]float64{LogMB: 1 << 20, LogSyncs: 100, DataIOPS: 100, DataMB: 1 << 20, CPU: 0.1}

// Unlimited lists the resources the run used that the profile gives no
// limit for, where the workload would use a material amount of them at the
// predicted rate (or, without one, the measured rate): the prediction
// leaves them out, so it is an upper bound.
func Unlimited(pr Prediction) []string {
	rate := pr.MeasuredRequestsPerSec
	if pr.RequestsPerSec != nil {
		rate = *pr.RequestsPerSec
	}
	var out []string
	for _, l := range pr.Limits {
		if l.Resource == Latency {
			continue // a bound of each connection, not a resource used up
		}
		if l.Limit == nil && l.Cost != nil && *l.Cost*rate >= material[l.Resource] {
			out = append(out, l.Resource)
		}
	}
	return out
}

// Predict divides each of the profile's limits by the result's cost per
// request of that resource; the predicted ceiling is the minimum and the
// binding resource its argmin. A limit or cost that is missing is listed as
// not modelled.
func Predict(r *report.Result, p Profile) Prediction {
	pr := Prediction{Profile: p.Name, Title: p.Title, Source: p.Source, SourceDate: p.SourceDate,
		MeasuredRequestsPerSec: r.Summary.RequestsPerSec}
	c := r.Costs

	// log MB/s
	logMB := Limit{Resource: LogMB, Limit: p.Limits.LogMBPerSec, Unit: "MiB/s", Cost: c.LogBytesPerOp, CostUnit: "bytes/req"}
	logMB.Capacity, logMB.NotModelled = capacity(logMB.Limit, c.LogBytesPerOp, report.MB, "log bytes per request")

	// log flushes/s
	syncs := Limit{Resource: LogSyncs, Limit: p.Limits.LogSyncsPerSec, Unit: "flushes/s", Cost: c.LogSyncsPerOp, CostUnit: "flushes/req"}
	if syncs.Cost == nil && c.DataSyncsPerOp != nil {
		syncs.Cost = c.DataSyncsPerOp
		syncs.Note = "log flushes not counted separately (MariaDB): data_syncs_per_op, log and data fsyncs together, used as the flush cost"
	}
	syncs.Capacity, syncs.NotModelled = capacity(syncs.Limit, syncs.Cost, 1, "log flushes per request")

	// data IOPS
	iops := Limit{Resource: DataIOPS, Limit: p.Limits.DataIOPS, Unit: "IOPS", CostUnit: "IOs/req"}
	if c.DataReadsPerOp != nil && c.DataWritesPerOp != nil {
		iops.Cost = f64(*c.DataReadsPerOp + *c.DataWritesPerOp)
	}
	iops.Capacity, iops.NotModelled = capacity(iops.Limit, iops.Cost, 1, "data reads and writes per request")

	// data MB/s
	dmb := Limit{Resource: DataMB, Limit: p.Limits.DataMBPerSec, Unit: "MiB/s", CostUnit: "bytes/req",
		Cost: counterPerOp(r, target.CtrDataBytesRead, target.CtrDataBytesWrite)}
	dmb.Capacity, dmb.NotModelled = capacity(dmb.Limit, dmb.Cost, report.MB, "data bytes read and written per request")

	// CPU
	cpu := Limit{Resource: CPU, Limit: p.Limits.Cores, Unit: "cores", CostUnit: "CPU s/req"}
	if c.CPUusPerOp != nil {
		cpu.Cost = f64(*c.CPUusPerOp / 1e6)
	} else {
		cpu.Cost = counterPerOp(r, target.CtrServerCPUSec)
		if cpu.Cost != nil {
			cpu.Note = "CPU per request = evidence server_cpu_s ÷ requests"
		}
	}
	cpu.Capacity, cpu.NotModelled = capacity(cpu.Limit, cpu.Cost, 1, "server CPU per request")

	lat := latencyLimit(r, p.Limits, syncs.Cost, c.DataReadsPerOp)

	pr.Limits = []Limit{logMB, syncs, iops, dmb, cpu, lat}
	best := -1
	for i, l := range pr.Limits {
		if l.Capacity != nil && (best < 0 || *l.Capacity < *pr.Limits[best].Capacity) {
			best = i
		}
	}
	if best >= 0 {
		ceil := *pr.Limits[best].Capacity
		pr.RequestsPerSec = f64(ceil)
		pr.Binding = pr.Limits[best].Resource
		pr.Limits[best].Binding = true
		for i := range pr.Limits {
			if cp := pr.Limits[i].Capacity; cp != nil && ceil > 0 {
				pr.Limits[i].Headroom = f64(*cp / ceil)
			}
		}
		if len(Unlimited(pr)) > 0 {
			pr.Caveats = append(pr.Caveats, UpperBoundCaveat)
		}
	} else {
		pr.Caveats = append(pr.Caveats, "nothing modelled: no limit of the profile has a measured cost in the result")
	}
	if r.Verdict != nil && r.Verdict.Bottleneck == diagnose.CommitFlush {
		pr.Caveats = append(pr.Caveats, fmt.Sprintf("the run was commit-flush bound (latency-bound at %s): "+
			"the prediction assumes enough concurrency to reach the profile's limits", diagnose.Threads(r.Load.Threads)))
	}
	if r.Verdict != nil && r.Verdict.Bottleneck == diagnose.LogRate && p.Limits.LogLatencyMs == nil && syncs.Cost != nil && *syncs.Cost > 0 {
		if w := report.CommitsWait(r.Target.Durability); w != nil && *w {
			// log-rate also names a log whose flushes keep its device
			// busy (the verdict says which): their time is a latency,
			// which this profile does not give.
			pr.Caveats = append(pr.Caveats, "the run was log-bound (verdict log-rate) with its commits waiting for log flushes: where the flushes' time set that limit (the verdict says), the profile, which gives no log latency (log_latency_ms), does not model it, and the prediction assumes flushes as fast as its other limits need")
		}
	}
	if n := r.Network; n != nil && n.RoundTripMs.P50 > 0 && pr.RequestsPerSec != nil {
		// Little's law: at the predicted rate, each request at least one
		// round trip long, that many requests must be in flight at once.
		inFlight := math.Ceil(*pr.RequestsPerSec * n.RoundTripMs.P50 / 1000)
		pr.Caveats = append(pr.Caveats, fmt.Sprintf("the server was on another host, %.3g ms away (round trip, p50): %s req/s over that round trip needs at least %s requests in flight at once (connections, -c), each request one round trip",
			n.RoundTripMs.P50, diagnose.Thousands(math.Round(*pr.RequestsPerSec)), diagnose.Thousands(inFlight)))
	}
	if pr.Binding == CPU {
		if note := lightCPUCaveat(r); note != "" {
			pr.Caveats = append(pr.Caveats, note)
		}
	}
	if r.Verdict != nil && r.Verdict.Bottleneck == diagnose.Stall {
		pr.Caveats = append(pr.Caveats, "the run stalled (verdict stall): no request completed for a large part of it, so its rate is no ceiling; the costs per request are those of the requests that completed")
	}
	if r.Verdict != nil && r.Verdict.Bottleneck == diagnose.Errors {
		pr.Caveats = append(pr.Caveats, "too many of the run's requests failed (verdict errors): its costs per request include the failing ones' work and are not the workload's")
	}
	if r.Partial {
		pr.Caveats = append(pr.Caveats, "the result is partial: its costs may not be representative")
	}
	if p.Warning != "" {
		pr.Caveats = append(pr.Caveats, "profile "+p.Name+" was "+p.Warning)
	}
	if r.Target.Engine != "" {
		pr.Caveats = append(pr.Caveats, fmt.Sprintf("costs per request are %s's as measured; another engine's may differ", r.Target.Engine))
	}
	return pr
}

// MaxLightCPU is the server's busy share of its host's cores below which a
// CPU-bound prediction says its cost per request was measured at a light
// load. (MariaDB inserts/deletes at 1,000 req/s, 14.5% of the cores: 290
// µs per request, 232 µs in a closed loop at 6,773 req/s, whose ceiling
// the prediction from the light run, 6,897, came close to.)
const MaxLightCPU = 0.1

// lightCPUCaveat says when the run kept the server's CPU below
// MaxLightCPU of the host's cores: its CPU per request then carries work
// that does not grow with the rate (background processes, the statistics
// ceiling samples) spread over few requests, and at load it may be much
// lower (or, with contention, higher). PostgreSQL, a custom file whose 4 users paused 99% of
// their time: 49.6 req/s at 1,371 µs of server CPU per request, where
// direct selects at load cost about 80 µs.
func lightCPUCaveat(r *report.Result) string {
	if r.Evidence == nil || r.Evidence.Seconds <= 0 {
		return ""
	}
	cpu, ok := r.Evidence.Counters[target.CtrServerCPUSec]
	cores, cok := r.Evidence.Counters[target.CtrHostCores]
	if !ok || !cok || cores <= 0 {
		return ""
	}
	share := cpu / r.Evidence.Seconds / cores
	if share >= MaxLightCPU {
		return ""
	}
	why := "a run at a light load"
	if r.Client.ThinkShare != nil && *r.Client.ThinkShare >= diagnose.MinThinkShare {
		why = fmt.Sprintf("its workers spent %.0f%% of their time in think times", 100**r.Client.ThinkShare)
	}
	return fmt.Sprintf("the server's CPU was %.1f%% of its host's cores (%s): its CPU per request includes work that does not grow with the rate (background processes, the statistics ceiling samples) spread over few requests, so at load it may be much lower and the CPU-bound ceiling higher; a run at a higher load (more threads, ceiling knee) measures the cost where it matters", 100*share, why)
}

// latencyLimit is the bound the profile's device latencies put on the
// run. Two limits, the lower of which holds:
//   - each connection waits, per request, the log's latency for every
//     commit that waits for its flush (durability full; none when relaxed)
//     and the data file's latency for every data read (one that missed the
//     cache), one after the other: threads ÷ that wait;
//   - the log device flushes one after another: 1 ÷ (flushes per request
//     × the log's latency), the flushes per request as measured (group
//     commit shares one among several commits; SQLite, one writer at a
//     time, syncs each commit in turn).
//
// Limit is the threads (more connections raise the first). Not modelled
// when the profile gives no latency, or a count it needs was not measured.
func latencyLimit(r *report.Result, l Limits, syncsPerReq, readsPerReq *float64) Limit {
	lat := Limit{Resource: Latency, Unit: "connections", CostUnit: "ms/req"}
	if l.LogLatencyMs == nil && l.DataLatencyMs == nil {
		lat.NotModelled = "no latency in the profile"
		return lat
	}
	threads := float64(r.Load.Threads)
	lat.Limit = &threads
	var missing []string
	wait, serial := 0.0, math.Inf(1)
	if l.LogLatencyMs != nil {
		waits := report.CommitsWait(r.Target.Durability)
		switch {
		case syncsPerReq == nil:
			missing = append(missing, "log flushes per request")
		case waits == nil:
			missing = append(missing, "whether commits wait for their flush (durability setting)")
		default:
			if *waits {
				commits := 1.0 // one transaction per request where the server counts none
				if c := r.Costs.CommitsPerOp; c != nil && r.Target.Engine != "sqlite" {
					commits = *c
				} else if r.Target.Engine == "sqlite" {
					commits = *syncsPerReq // each commit syncs its own, in turn
				}
				wait += commits * *l.LogLatencyMs
			}
			if *syncsPerReq > 0 {
				serial = 1000 / (*syncsPerReq * *l.LogLatencyMs)
			}
		}
	}
	if l.DataLatencyMs != nil {
		if readsPerReq == nil {
			missing = append(missing, "data reads per request")
		} else {
			wait += *readsPerReq * *l.DataLatencyMs
		}
	}
	if len(missing) > 0 {
		lat.NotModelled = strings.Join(missing, " and ") + " not measured"
		return lat
	}
	lat.Cost = &wait
	conns := math.Inf(1)
	if wait > 0 {
		conns = threads * 1000 / wait
	}
	ms := func(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }
	switch {
	case math.IsInf(conns, 1) && math.IsInf(serial, 1):
		return lat // no request waits for the device: no bound
	case serial < conns:
		lat.Capacity = f64(serial)
		lat.Note = fmt.Sprintf("the log flushes one after another: %s ms each × %s flushes per request", ms(*l.LogLatencyMs), ms(*syncsPerReq))
	default:
		lat.Capacity = f64(conns)
		lat.Note = fmt.Sprintf("%s, each waiting %s ms of device latency per request", diagnose.Threads(r.Load.Threads), ms(wait))
	}
	return lat
}

// capacity is limit×scale ÷ cost, or why it is not modelled. A cost of 0
// does not bound the rate: nil capacity with no reason.
func capacity(limit, cost *float64, scale float64, what string) (*float64, string) {
	switch {
	case limit == nil && cost == nil:
		return nil, "no limit in the profile; " + what + " not measured"
	case limit == nil:
		return nil, "no limit in the profile"
	case cost == nil:
		return nil, what + " not measured"
	case *cost <= 0 || math.IsNaN(*cost):
		return nil, ""
	}
	return f64(*limit * scale / *cost), ""
}
