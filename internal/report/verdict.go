package report

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/ceiling-db/ceiling/internal/diagnose"
	"github.com/ceiling-db/ceiling/internal/runner"
	"github.com/ceiling-db/ceiling/internal/target"
)

// waitCounters maps the wait_* counters to the diagnose wait categories.
var waitCounters = map[string]string{
	target.CtrWaitLogMs:       diagnose.WaitLog,
	target.CtrWaitDataReadMs:  diagnose.WaitDataRead,
	target.CtrWaitDataWriteMs: diagnose.WaitDataWrite,
	target.CtrWaitLockMs:      diagnose.WaitLock,
	target.CtrWaitCPUMs:       diagnose.WaitCPU,
	target.CtrWaitClientMs:    diagnose.WaitClient,
	target.CtrWaitOtherMs:     diagnose.WaitOther,
	target.CtrWaitReplMs:      diagnose.WaitRepl,
}

// minDeviceIOs is how many data-file IOs an interval needs before its
// average latency counts towards the device-latency estimate.
const minDeviceIOs = 10

// setVerdicts diagnoses the document: every measured step, then the run.
// For an open-loop run with a saturated step, the run's verdict is that of
// the saturated step with the lowest rate (where the ceiling was hit).
// dev is the storage device's own latency (deviceLatencyOf), or nil.
func setVerdicts(res *Result, r *runner.Result, dev *float64) {
	order := make([]int, len(res.Steps))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return res.Steps[order[a]].Rate < res.Steps[order[b]].Rate })
	// A step is compared with the step below its rate; steps at the same
	// rate (a knee probe run again) are not compared with each other.
	// minService is the lowest service time of the unsaturated steps below
	// the current rate: the database's time at low load.
	var prevLog, lastLog, minService, lastMin *float64
	var prevRate, lastRate float64
	groupRate := math.Inf(-1)
	var first *Step
	for _, i := range order {
		s := &res.Steps[i]
		if s.Rate != groupRate {
			groupRate, prevLog, minService, prevRate = s.Rate, lastLog, lastMin, lastRate
		}
		stepLog := s.LogMBPerSec
		if s.Completed > 0 && i < len(r.Steps) {
			f := stepFigures(res, s, r.Steps[i].Evidence, prevLog, minService, dev)
			if f.LogMBPerSec != nil {
				stepLog = f.LogMBPerSec // as the verdict took it (statsLagScale)
			}
			if prevRate > 0 && s.Rate > 0 {
				f.RateRise = f64(s.Rate / prevRate)
			}
			s.Verdict = diagnose.Diagnose(f)
			if s.StatsLagScale != nil {
				s.Verdict.Evidence = append(s.Verdict.Evidence, fmt.Sprintf(
					"PostgreSQL publishes its statistics up to a second late: the step's counters held %.2f commits per request against the run's %.2f, so its server figures were taken per commit (×%.2f)",
					*s.Costs.CommitsPerOp, *res.Costs.CommitsPerOp, *s.StatsLagScale))
			}
			if s.Saturated && first == nil {
				first = s
			}
		}
		lastLog, lastRate = stepLog, s.Rate
		if sv := serviceMs(*s); sv != nil && !s.Saturated && s.Completed >= minServiceRequests && (lastMin == nil || *sv < *lastMin) {
			lastMin = sv
		}
	}
	if first != nil {
		v := *first.Verdict
		v.Evidence = append([]string{}, v.Evidence...)
		v.Evidence = append(v.Evidence, fmt.Sprintf("from step %d (%s/s), the lowest saturated rate", first.Index+1, fmtRate(first.Rate)))
		res.Verdict = &v
		return
	}
	if res.Summary.Requests > 0 {
		res.Verdict = diagnose.Diagnose(runFigures(res, dev))
		if top := topRate(res.Steps); top > 0 && res.Knee == nil && !anySaturated(res.Steps) {
			// A ramp that kept up everywhere: the ceiling is above it,
			// whatever the run's figures say about where time goes.
			if planned := slices.Max(append([]float64{0}, res.Load.Rates...)); res.Partial && planned > top {
				// Interrupted before the ramp's end: the ceiling is above
				// what was reached, which says nothing of the rest.
				res.Verdict.Evidence = append(res.Verdict.Evidence, fmt.Sprintf("no step saturated before the run was interrupted: every rate up to %s/s was sustained; the ramp's higher steps (to %s/s) were not run", fmtRate(top), fmtRate(planned)))
				res.Verdict.Suggestions = append(res.Verdict.Suggestions, diagnose.Suggestion{
					Action: fmt.Sprintf("the rest of the ramp, from %s/s to %s/s, with enough threads (-c) to keep that many requests in flight", fmtRate(top), fmtRate(planned))})
				return
			}
			res.Verdict.Evidence = append(res.Verdict.Evidence, fmt.Sprintf("no step saturated: every rate up to %s/s was sustained, so the ceiling is above the ramp", fmtRate(top)))
			res.Verdict.Suggestions = append(res.Verdict.Suggestions, diagnose.Suggestion{
				Action: fmt.Sprintf("a ramp to higher rates (e.g. --rates %s:%s:x2), with enough threads (-c) to keep that many requests in flight", fmtRate(top), fmtRate(8*top))})
		}
	}
}

// addAdvice appends the workload's own suggestions (Params.Advice) to the
// run's verdict, once: a verdict made again (repeats with stalls, a knee)
// may already hold them.
func addAdvice(res *Result, p Params) {
	if p.Advice == nil || res.Verdict == nil {
		return
	}
	for _, a := range p.Advice(res.Target.Engine, res.Verdict.Bottleneck) {
		if res.Target.DSN != "" {
			a = WithDB(a, target.Redact(target.GivenDSN(res.Target.DSN)))
		}
		if !slices.ContainsFunc(res.Verdict.Suggestions, func(s diagnose.Suggestion) bool { return s.Action == a }) {
			res.Verdict.Suggestions = append(res.Verdict.Suggestions, diagnose.Suggestion{Action: a})
		}
	}
}

// topRate is the highest requested rate of the steps, 0 without steps.
func topRate(steps []Step) float64 {
	var top float64
	for _, s := range steps {
		top = max(top, s.Rate)
	}
	return top
}

// runFigures gathers the figures of the whole run.
func runFigures(res *Result, dev *float64) diagnose.Figures {
	s := res.Summary
	f := diagnose.Figures{Scope: "run", Threads: res.Load.Threads, Requests: s.Requests, ElapsedS: s.ElapsedS,
		OpenLoop: res.Load.Model == "open", ClientCPUPct: res.Client.CPUPctCores, ThinkShare: res.Client.ThinkShare, DeviceLatencyMs: dev,
		KeptUp: res.Load.Model == "open" && len(res.Steps) > 0 && !anySaturated(res.Steps),
		Errors: s.Errors, ErrorsByClass: s.ErrorsByClass,
		Deadlock:        deadlocked(s),
		DeadlockTimeout: res.Target.Settings["deadlock_timeout"]}
	if s.ElapsedS > 0 {
		f.RequestsPerSec = f64(s.RequestsPerSec)
	}
	if s.Requests > 0 {
		rows := s.Rows
		if s.RowsExamined != nil {
			rows = max(rows, *s.RowsExamined)
		}
		f.RowsPerReq = f64(float64(rows) / float64(s.Requests))
	}
	f.FixedTx = fixedTx(res)
	if n, ok := ParamNumber(res.Workload.Params["rows_per_transaction"]); ok && n >= 1 {
		f.RowsPerTx = f64(n) // single-inserts (--batch)
	}
	if res.Workload.Name == "bulk-load" && s.Requests > 0 {
		// One batch per request, in one transaction.
		f.RowsPerTx = f64(float64(s.Rows) / float64(s.Requests))
	}
	if s.LatencyMs != nil {
		f.MeanLatencyMs, f.P99Ms = f64(s.LatencyMs.Mean), f64(s.LatencyMs.P99)
	}
	if s.Scheduled != nil && *s.Scheduled > 0 {
		f.LatePct = f64(100 * float64(s.Late) / float64(*s.Scheduled))
	}
	var svcSum float64
	var svcN int64
	for _, st := range res.Steps {
		if st.SchedLagMs != nil && (f.SchedLagP99Ms == nil || st.SchedLagMs.P99 > *f.SchedLagP99Ms) {
			f.SchedLagP99Ms, f.SchedLagSlow = f64(st.SchedLagMs.P99), st.SchedLagSlow
		}
		if st.ServiceMs != nil && st.Completed > 0 {
			svcSum += st.ServiceMs.Mean * float64(st.Completed)
			svcN += st.Completed
		}
	}
	if svcN > 0 {
		// A request's own time over the steps (without its wait for a
		// free worker and ceiling's scheduling lag).
		f.ServiceMs = f64(svcSum / float64(svcN))
	}
	if len(res.Steps) == 1 {
		f.Queue = queueFigures(res.Steps[0]) // a run at one rate: its step's tail
	}
	var counters map[string]float64
	var secs float64
	if res.Evidence != nil {
		counters, secs = res.Evidence.Counters, res.Evidence.Seconds
	}
	fillServer(&f, counters, secs, res.Files, res.Costs, res.Client.Cores)
	fullPages(&f, counters, secs, res.Target)
	sqliteCheckpoints(&f, res.Files, counters, secs, res.Target)
	emulatedLog(&f, res.Target.Emulation)
	emulatedData(&f, res.Target.Emulation, res.Files)
	if res.Evidence != nil {
		fillInProcess(&f, res.Target.Engine, res.Load.Model == "closed", res.Evidence.Seconds)
		discountIdle(&f, res.Target.Engine, res.Load.Model == "closed", res.Evidence.Seconds)
	}
	f.DeviceSyncMs = deviceSync(res)
	logDevice(&f, res.Target)
	roundTrip(&f, res.Network, res.Summary.RoundTripsPerRequest)
	return f
}

// ctrFullPages is PostgreSQL's count of full-page images in the WAL
// (pg_stat_wal.wal_fpi), as its sampler names it.
const ctrFullPages = "pg.wal_fpi"

// fullPages gives the rules PostgreSQL's full-page images per request,
// with the settings that govern them; nothing where they are not counted.
func fullPages(f *diagnose.Figures, c map[string]float64, secs float64, t target.Info) {
	n, ok := c[ctrFullPages]
	lb, okb := c[target.CtrLogBytes]
	perReq, okr := perRequest(f, secs)
	if !ok || !okb || !okr {
		return
	}
	page := 8192.0 // PostgreSQL's default block size
	if v, err := strconv.ParseFloat(t.Settings["block_size"], 64); err == nil && v > 0 {
		page = v
	}
	var set []string
	for _, k := range []string{"max_wal_size", "checkpoint_timeout", "wal_compression"} {
		if v := t.Settings[k]; v != "" {
			set = append(set, k+" "+v)
		}
	}
	f.FullPages = &diagnose.FullPageFigures{PerReq: perReq(n), LogBytesPerReq: perReq(lb), PageBytes: page, Settings: strings.Join(set, ", ")}
}

// perRequest turns a counter's delta over secs into a figure per request
// at f's requests/s, as the log-rate rule takes the log's bytes; ok is
// false without either.
func perRequest(f *diagnose.Figures, secs float64) (func(float64) float64, bool) {
	if secs <= 0 || f.RequestsPerSec == nil || *f.RequestsPerSec <= 0 {
		return nil, false
	}
	rps := *f.RequestsPerSec
	return func(v float64) float64 { return v / secs / rps }, true
}

// sqliteCheckpoints gives the rules SQLite's checkpoints where its
// commits do not sync (WAL mode at NORMAL): the WAL's syncs and the
// database file's (one per completed checkpoint) per request, and the
// checkpoints per request that its threshold calls for.
func sqliteCheckpoints(f *diagnose.Figures, files []File, c map[string]float64, secs float64, t target.Info) {
	perReq, okr := perRequest(f, secs)
	if cw := commitsWait(t.Durability); t.Engine != "sqlite" || cw == nil || *cw || !okr || f.Threads <= 0 {
		return
	}
	page, err1 := strconv.ParseFloat(t.Settings["page_size"], 64)
	auto, err2 := strconv.ParseInt(t.Settings["wal_autocheckpoint"], 10, 64)
	logBytes, ok := c[target.CtrLogBytes]
	if err1 != nil || err2 != nil || page <= 0 || auto <= 0 || !ok {
		return
	}
	var walSyncs, dbSyncs int64
	var syncMs float64
	for _, fl := range files {
		switch fl.Role {
		case "log":
			walSyncs += fl.Syncs
		case "data":
			dbSyncs += fl.Syncs
		default:
			continue
		}
		syncMs += fl.SyncMs
	}
	const walFrameHeader = 24 // bytes before each page in the WAL
	f.Checkpoints = &diagnose.CheckpointFigures{WALSyncsPerReq: perReq(float64(walSyncs)), DonePerReq: perReq(float64(dbSyncs)),
		ExpectedPerReq: perReq(logBytes) / (page + walFrameHeader) / float64(auto), AutoPages: auto,
		SyncShare: math.Min(syncMs/1000/secs/float64(f.Threads), 1)}
}

// tlsOff tells how to connect without TLS, by engine.
var tlsOff = map[string]string{
	"postgres": "sslmode=disable in the DSN",
	"mysql":    "no tls parameter in the DSN, and require_secure_transport off",
}

// roundTrip gives the rules the round trip to a server on another host
// (its probe's p50) and the round trips per request (the run's: a step's
// requests are the same workload's).
func roundTrip(f *diagnose.Figures, n *Network, perReq *float64) {
	if n != nil && n.N > 0 && n.RoundTripMs.P50 > 0 {
		f.RoundTripMs = f64(n.RoundTripMs.P50)
	}
	f.RoundTripsPerReq = perReq
}

// logDevice names the log's device and how the server writes its log.
func logDevice(f *diagnose.Figures, t target.Info) {
	if t.Encrypted() {
		f.TLS, f.TLSOff = t.TLS, tlsOff[t.Engine]
	}
	if t.LogDevice != nil {
		f.LogDevName = t.LogDevice.Name
	}
	f.LogDirectIO = t.LogDirectIO
	f.DataOnLogDev = t.DataOnLogDevice != nil && *t.DataOnLogDevice
	f.CommitsWait = commitsWait(t.Durability)
	f.Replication = replication(t)
	f.LocksUntilFlush = t.Engine == "postgres"
}

// replication describes the synchronous replication of t's commits from
// its settings, or nil: PostgreSQL's synchronous standbys where
// synchronous_commit makes commits wait for them, MySQL/MariaDB's
// semi-synchronous replication where it is on.
func replication(t target.Info) *diagnose.ReplFigures {
	s := t.Settings
	switch t.Engine {
	case "postgres":
		names, level := s["synchronous_standby_names"], t.Durability.During
		if names == "" || level != "on" && !strings.HasPrefix(level, "remote_") {
			return nil
		}
		return &diagnose.ReplFigures{Who: fmt.Sprintf("the synchronous standbys (synchronous_standby_names = '%s')", names), Level: level}
	case "mysql":
		for _, v := range []string{"master", "source"} {
			if strings.EqualFold(s["rpl_semi_sync_"+v+"_enabled"], "ON") {
				return &diagnose.ReplFigures{Who: fmt.Sprintf("a semi-synchronous replica (rpl_semi_sync_%s_enabled, wait point %s)", v, s["rpl_semi_sync_"+v+"_wait_point"]), SemiSync: true}
			}
		}
	}
	return nil
}

// commitsWait says whether each commit waits for its log flush under the
// durability setting in force during the run; nil when it cannot tell.
// deadlocked says whether the run's serialization errors were deadlocks:
// the class holds deadlocks and serialization failures, and its first
// message tells which.
func deadlocked(s Summary) bool {
	return s.ErrorsByClass["serialization"] > 0 && strings.Contains(strings.ToLower(s.FirstErrors["serialization"]), "deadlock")
}

// CommitsWait says whether a commit waits for its log flush under the
// durability setting in force during a run; nil when that is not known.
func CommitsWait(d target.DurabilityInfo) *bool { return commitsWait(d) }

func commitsWait(d target.DurabilityInfo) *bool {
	v := strings.ToLower(strings.TrimSpace(d.During))
	var wait bool
	switch d.Setting {
	case "synchronous": // SQLite in WAL mode: NORMAL syncs at checkpoints only
		switch v {
		case "full", "extra", "2", "3":
			wait = true
		case "normal", "off", "1", "0":
		default:
			return nil
		}
	case "synchronous_commit": // PostgreSQL: local, remote_write, on, remote_apply wait
		switch v {
		case "off":
		case "local", "remote_write", "on", "remote_apply":
			wait = true
		default:
			return nil
		}
	case "innodb_flush_log_at_trx_commit": // 1 (and MariaDB's 3) flush at commit
		switch v {
		case "1", "3":
			wait = true
		case "0", "2":
		default:
			return nil
		}
	default:
		return nil
	}
	return &wait
}

// fillInProcess completes SQLite's wait categories, which are the time
// spent in the VFS only. In a closed loop every worker is inside a request
// all the time, so the rest of the workers' time (threads × seconds − VFS
// time) is the engine and ceiling computing in-process: it counts as CPU.
// In an open loop workers idle between requests: their time in requests is
// at most requests × mean latency (which also holds the wait for a free
// worker, so it is capped at threads × seconds). Without this, the shares
// would be shares of the IO time alone.
func fillInProcess(f *diagnose.Figures, engine string, closed bool, secs float64) {
	if engine != "sqlite" {
		return
	}
	f.InProcess = true
	if f.WaitMs == nil {
		return
	}
	if _, ok := f.WaitMs[diagnose.WaitCPU]; ok {
		return
	}
	var sum float64
	for _, v := range f.WaitMs {
		sum += v
	}
	total := float64(f.Threads) * secs * 1000
	if !closed {
		if f.MeanLatencyMs == nil {
			return
		}
		total = min(total, float64(f.Requests)**f.MeanLatencyMs)
	}
	cpu := max(total-sum, 0)
	if f.HostBusy != nil && *f.HostBusy < diagnose.MinHostBusyWithWait && f.ClientCPUPct != nil && f.ClientCores > 0 && secs > 0 {
		// With cores to spare a runnable worker gets one at once, so the
		// rest is CPU only as far as the process used it: time neither in
		// the VFS nor on a core is no resource's, and is left out (the
		// evidence spans the run's end too, where each worker, its last
		// request done, waits for the others and the closing sample).
		// SQLite updates by 4 writers under an emulated 500-IOPS data
		// file, 3 s measured, 4.9 s of evidence: the rest was 29% of the
		// workers' time while the process used 4% of it.
		cpu = min(cpu, *f.ClientCPUPct/100*float64(f.ClientCores)*secs*1000)
	}
	f.WaitMs[diagnose.WaitCPU] = cpu
}

// discountIdle takes the workers' idle time out of a server's "client"
// wait category in an open loop. A server session waits for ceiling's next
// request while a request is under way (the round trip, ceiling's own
// work: a cost) and, in an open loop, while none is scheduled (idle by
// design, no resource's). The workers were busy at most requests × mean
// service time out of threads × seconds; the rest of the sampled time is
// idle and leaves the client category, in proportion. Without this, a
// PostgreSQL step at 1000/s on 4 workers whose table was locked for 3 s of
// 10 had lock waits at 30% of the sessions' time (verdict none) where they
// were 90% of the requests' time.
func discountIdle(f *diagnose.Figures, engine string, closed bool, secs float64) {
	if closed || engine == "sqlite" || f.WaitMs == nil || secs <= 0 || f.Threads <= 0 {
		return
	}
	client, ok := f.WaitMs[diagnose.WaitClient]
	svc := f.ServiceMs
	if svc == nil {
		svc = f.MeanLatencyMs // from the scheduled start: a busy time too long, so an idle time too short
	}
	if !ok || svc == nil {
		return
	}
	total := float64(f.Threads) * secs * 1000
	busy := math.Min(float64(f.Requests+f.Errors)**svc, total)
	var sum float64
	for _, v := range f.WaitMs {
		sum += v
	}
	f.WaitMs[diagnose.WaitClient] = math.Max(client-(1-busy/total)*sum, 0)
}

// deviceSync is the mean latency of the host's flush probe, or nil: no
// probe, or one known to be on another file system than the server's log.
func deviceSync(res *Result) *float64 {
	if res.Host == nil || res.Host.FsyncMs.Mean <= 0 {
		return nil
	}
	if res.Host.SameFSAsLog != nil && !*res.Host.SameFSAsLog {
		return nil // measured another file system than the log's (a tmpfs /tmp)
	}
	return f64(res.Host.FsyncMs.Mean)
}

// minServiceRequests is how many requests a step needs before its mean
// service time counts as the database's time at low load.
const minServiceRequests = 50

// serviceMs is a step's mean service time, from each request's actual start
// to its end; nil when not measured.
func serviceMs(s Step) *float64 {
	if s.ServiceMs == nil {
		return nil
	}
	return f64(s.ServiceMs.Mean)
}

// queueFigures are an open-loop step's tail figures for the head-of-line
// evidence, nil when it lacks them.
func queueFigures(s Step) *diagnose.QueueFigures {
	if s.LatencyMs == nil || s.StartLagMs == nil || s.ServiceMs == nil || s.Completed == 0 {
		return nil
	}
	return &diagnose.QueueFigures{P99: s.LatencyMs.P99, StartLagP99: s.StartLagMs.P99, ServiceP99: s.ServiceMs.P99, ServiceMax: s.ServiceMs.Max}
}

// anySaturated reports whether any step saturated.
func anySaturated(steps []Step) bool {
	for _, s := range steps {
		if s.Saturated {
			return true
		}
	}
	return false
}

// MinStatsLag is how far a PostgreSQL step's commits per request must
// stray from the run's for statsLagScale to correct its counters.
const MinStatsLag = 0.03

// statsLagCounters are the PostgreSQL counters its backends (and WAL
// writer) publish with their commits, at most once a second: a step's
// delta of them misses up to a second of its end and holds as much of the
// step before. The CPU, device, wait and background-write counters are
// read as they happen.
var statsLagCounters = []string{target.CtrLogBytes, target.CtrLogWrites, target.CtrLogSyncs, target.CtrLogWriteMs,
	target.CtrLogSyncMs, target.CtrCommits, target.CtrRollbacks, target.CtrDataReads, target.CtrDataBytesRead,
	target.CtrCacheHits, target.CtrCacheReads, ctrFullPages}

// statsLagScale is the factor that puts a PostgreSQL step's late-published
// counters back on its own requests: the run's commits per request (its
// window is long, so a second of lag hardly shows) over the step's. A ramp
// on PostgreSQL single inserts at 2,000/s for 5 s counted 0.80 commits and
// 0.80 log syncs per request, the step after 0.96 and the last 1.17, at
// 1.00 syncs per commit throughout: each step's last second of counts was
// published in the next. 0 when it does not apply: another engine, no
// commits counted, commits within MinStatsLag of the run's, or more
// commits gained or lost than statsLagSeconds of the step's or the step
// before's requests would hold: then other sessions committed (at 10/s
// for 50 s, after a probe at 10/s, PostgreSQL counted 1.52 commits per
// request, the extra ones read-only and flushing nothing, while every
// update flushed its own: scaled, its 1.02 log syncs per request became
// 0.67 per commit, "commits share flushes", which they did not).
func statsLagScale(res *Result, s *Step) float64 {
	if res.Target.Engine != "postgres" || res.Costs.CommitsPerOp == nil || s.Costs.CommitsPerOp == nil {
		return 0
	}
	run, step := *res.Costs.CommitsPerOp, *s.Costs.CommitsPerOp
	if run <= 0 || step <= 0 || math.Abs(run/step-1) < MinStatsLag {
		return 0
	}
	if s.AchievedPerSec != nil && s.Completed > 0 {
		rate := *s.AchievedPerSec
		if i := s.Index - 1; i >= 0 && i < len(res.Steps) && res.Steps[i].AchievedPerSec != nil {
			rate = math.Max(rate, *res.Steps[i].AchievedPerSec)
		}
		if math.Abs(step-run)*float64(s.Completed) > statsLagSeconds*rate*run {
			return 0
		}
	}
	return run / step
}

// statsLagSeconds is how many seconds of a step's or its neighbour's
// commits PostgreSQL's late publishing may move between them: its
// backends publish at most once a second (PGSTAT_MIN_INTERVAL), with half
// a second's margin.
const statsLagSeconds = 1.5

// lagScaled returns counters and costs with statsLagCounters scaled by k.
func lagScaled(c map[string]float64, costs Costs, k float64) (map[string]float64, Costs) {
	out := make(map[string]float64, len(c))
	for key, v := range c {
		out[key] = v
	}
	for _, key := range statsLagCounters {
		if v, ok := out[key]; ok {
			out[key] = v * k
		}
	}
	costs.LogBytesPerOp, costs.LogWritesPerOp, costs.LogSyncsPerOp = scaled(costs.LogBytesPerOp, k), scaled(costs.LogWritesPerOp, k), scaled(costs.LogSyncsPerOp, k)
	costs.DataReadsPerOp, costs.CommitsPerOp = scaled(costs.DataReadsPerOp, k), scaled(costs.CommitsPerOp, k)
	return out, costs
}

// stepFigures gathers the figures of one open-loop step, and records on s
// the stats_lag_scale they applied (statsLagScale).
// ParamNumber is a workload parameter's number: an int as the workload
// gave it, a float64 as JSON reads it back.
func ParamNumber(v any) (float64, bool) {
	switch x := v.(type) {
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

// fixedTx names a workload whose transactions its specification sets
// (diagnose.Figures.FixedTx), or "".
func fixedTx(res *Result) string {
	if res.Workload.Name == "tpcc" {
		return "TPC-C's"
	}
	return ""
}

func stepFigures(res *Result, s *Step, ev *runner.Evidence, prevLog, minService, dev *float64) diagnose.Figures {
	f := diagnose.Figures{Scope: fmt.Sprintf("step %d (%s/s)", s.Index+1, fmtRate(s.Rate)), Threads: res.Load.Threads,
		Requests: s.Completed, ElapsedS: s.DurationS, RequestsPerSec: s.AchievedPerSec, OpenLoop: true, LatePct: s.LatePct,
		ClientCPUPct: s.ClientCPUPct, PrevLogMBPerSec: prevLog, DeviceLatencyMs: dev, Errors: s.Failed, ErrorsByClass: s.ErrorsByClass}
	if s.LatencyMs != nil {
		f.MeanLatencyMs, f.P99Ms = f64(s.LatencyMs.Mean), f64(s.LatencyMs.P99)
	}
	if s.RowsPerSec != nil && s.AchievedPerSec != nil && *s.AchievedPerSec > 0 {
		f.RowsPerReq = f64(*s.RowsPerSec / *s.AchievedPerSec)
	}
	if s.SchedLagMs != nil {
		f.SchedLagP99Ms, f.SchedLagSlow = f64(s.SchedLagMs.P99), s.SchedLagSlow
	}
	if s.StartLagMs != nil {
		f.ServiceMs, f.MinServiceMs, f.StartLagP99Ms = serviceMs(*s), minService, f64(s.StartLagMs.P99)
		f.Queue = queueFigures(*s)
	}
	f.KeptUp = !s.Saturated
	f.FixedTx = fixedTx(res)
	var counters map[string]float64
	var secs float64
	var files []File
	if ev != nil {
		counters, secs = ev.Counters, ev.Seconds
		for _, fs := range ev.Files {
			files = append(files, fileOf(fs, ev.Seconds, s.Completed))
		}
	}
	costs := s.Costs
	if k := statsLagScale(res, s); k > 0 && counters != nil {
		counters, costs = lagScaled(counters, costs, k)
		s.StatsLagScale = f64(math.Round(k*1000) / 1000)
	}
	fillServer(&f, counters, secs, files, costs, res.Client.Cores)
	fullPages(&f, counters, secs, res.Target)
	sqliteCheckpoints(&f, files, counters, secs, res.Target)
	emulatedLog(&f, res.Target.Emulation)
	emulatedData(&f, res.Target.Emulation, files)
	fillInProcess(&f, res.Target.Engine, false, secs)
	discountIdle(&f, res.Target.Engine, false, secs)
	f.DeviceSyncMs = deviceSync(res)
	logDevice(&f, res.Target)
	roundTrip(&f, res.Network, res.Summary.RoundTripsPerRequest)
	return f
}

// fillServer adds the server-side figures: costs, files and counters over
// secs seconds. Figures the server did not give stay nil.
// emulatedLog drops the log device's busy share when the run held the log
// to an emulated write rate or sync rate (--emulate): the real device,
// idle under the emulated limit, is not the log the verdict judges, and
// its spare time would stop the log-rate rule from suggesting a higher
// log rate.
func emulatedLog(f *diagnose.Figures, e *target.Emulation) {
	if e != nil && (e.LogMBPerSec != nil || e.LogSyncsPerSec != nil) {
		f.LogDevBusy = nil
		f.LogMBLimit, f.Profile = e.LogMBPerSec, e.Profile
	}
}

// emulatedData gives the verdict the data files' limits when the run held
// them to a profile's (--emulate), and their MiB/s to compare.
func emulatedData(f *diagnose.Figures, e *target.Emulation, files []File) {
	if e == nil || (e.DataIOPS == nil && e.DataMBPerSec == nil) {
		return
	}
	f.DataIOPSLimit, f.DataMBLimit, f.Profile = e.DataIOPS, e.DataMBPerSec, e.Profile
	var mb float64
	var data bool
	for _, fl := range files {
		if fl.Role == "data" {
			mb += fl.MBPerSec
			data = true
		}
	}
	if data {
		f.DataMBPerSec = f64(mb)
	}
}

func fillServer(f *diagnose.Figures, c map[string]float64, secs float64, files []File, costs Costs, clientCores int) {
	f.ClientCores = clientCores
	f.CommitsPerReq = costs.CommitsPerOp
	f.SyncsPerReq = costs.LogSyncsPerOp
	if f.SyncsPerReq == nil && costs.DataSyncsPerOp != nil {
		f.SyncsPerReq, f.SyncsAll = costs.DataSyncsPerOp, true // MariaDB: fsyncs of log and data together
	}
	f.DataReadsPerReq = costs.DataReadsPerOp

	var logSyncs int64
	var logSyncMs, dataIOPS, dataMs float64
	var dataIOs int64
	var dataFiles bool
	for _, fl := range files {
		switch fl.Role {
		case "log":
			logSyncs += fl.Syncs
			logSyncMs += fl.SyncMs
		case "data":
			dataFiles = true
			dataIOPS += fl.IOPS
			n, ms := fl.TimedIO()
			dataIOs += n
			dataMs += ms
		}
	}
	if logSyncs > 0 {
		f.SyncMs = f64(logSyncMs / float64(logSyncs))
	} else if n, ok := c[target.CtrLogSyncs]; ok && n > 0 {
		if ms, ok := c[target.CtrLogSyncMs]; ok {
			f.SyncMs = f64(ms / n)
		}
	}
	if dataFiles && secs > 0 {
		f.DataIOPS = f64(dataIOPS)
	} else if r, w, ok := readsWrites(c); ok && secs > 0 {
		f.DataIOPS = f64((r + w) / secs)
	}
	if dataIOs > 0 {
		f.DataLatencyMs = f64(dataMs / float64(dataIOs))
	}
	if logDeviceMismatch(c) == "" {
		if n := c[target.CtrLogDevFlushes]; n >= minDevRequests {
			f.LogDevFlushMs = f64(c[target.CtrLogDevFlushMs] / n)
		}
		if n := c[target.CtrLogDevWrites]; n >= minDevRequests {
			f.LogDevWriteMs = f64(c[target.CtrLogDevWriteMs] / n)
		}
		if n := c[target.CtrLogDevReads]; n >= minDevRequests && secs > 0 {
			f.LogDevReadMs = f64(c[target.CtrLogDevReadMs] / n)
			f.LogDevReadsPerSec = f64(n / secs)
		}
		if ms, ok := c[target.CtrLogDevBusyMs]; ok && secs > 0 {
			f.LogDevBusy = f64(math.Min(ms/1000/secs, 1))
		}
		if b, ok := c[target.CtrLogDevReadB]; ok && secs > 0 {
			f.LogDevReadMBPerSec = f64(b / MB / secs)
		}
	}
	if b, ok := c[target.CtrDataBytesRead]; ok && secs > 0 {
		f.DataReadMBPerSec = f64(b / MB / secs)
	}
	if v, ok := c[target.CtrLogBytes]; ok && secs > 0 {
		f.LogMBPerSec = f64(v / MB / secs)
	}

	if secs > 0 {
		if v, ok := c[target.CtrServerCPUSec]; ok {
			// Other sessions' backends (another client of the same
			// server) are other work, not the server's work for ceiling.
			if fv, ok := c[target.CtrForeignCPUSec]; ok && fv > 0 {
				v = max(v-fv, 0)
				f.ForeignCPUCores = f64(fv / secs)
			}
			f.ServerCPUCores = f64(v / secs)
		}
		if tot, ok := c[target.CtrHostCPUTotal]; ok && tot > 0 {
			if b, ok := c[target.CtrHostCPUBusy]; ok {
				f.HostBusy = f64(b / tot)
			}
		}
		if pr, ok := c[target.CtrHostCPUPressure]; ok {
			f.CPUPressure = f64(math.Min(pr/secs, 1))
		}
		if rq, ok := c[target.CtrServerRunQueueSec]; ok && f.Requests > 0 {
			f.ServerRunQueueMsPerReq = f64(1000 * rq / float64(f.Requests))
		}
		if rq, ok := c[target.CtrClientRunQueueSec]; ok && f.Requests > 0 {
			f.ClientRunQueueMsPerReq = f64(1000 * rq / float64(f.Requests))
		}
	}
	// host_cores is a level (its latest value); without it, the host's CPU
	// seconds per second, then the client's cores (the server CPU counters
	// are only read for a local server).
	switch {
	case c[target.CtrHostCores] > 0:
		f.Cores = f64(c[target.CtrHostCores])
	case c[target.CtrHostCPUTotal] > 0 && secs > 0:
		f.Cores = f64(math.Round(c[target.CtrHostCPUTotal] / secs))
	case clientCores > 0:
		f.Cores = f64(float64(clientCores))
	}
	for ctr, cat := range waitCounters {
		if v, ok := c[ctr]; ok {
			if f.WaitMs == nil {
				f.WaitMs = map[string]float64{}
			}
			f.WaitMs[cat] = v
		}
	}
	f.LockTables = lockTables(c)
	if reads, ok := c[target.CtrCacheReads]; ok && reads > 0 {
		if hits, ok := c[target.CtrCacheHits]; ok {
			f.CacheHitRatio = f64(hits / reads)
		}
	}
	if v, ok := c[target.CtrBusyWaits]; ok && f.Requests > 0 {
		f.BusyWaitsPerReq = f64(v / float64(f.Requests))
	}
	if v, ok := c[target.CtrRowLockMs]; ok && f.WaitMs == nil && f.Threads > 0 && secs > 0 {
		// Without sampled waits, the server's row-lock time over the
		// workers' time (in an open loop they also idle: a lower share).
		f.RowLockShare = f64(v / (float64(f.Threads) * secs * 1000))
	}
	if v, ok := c[target.CtrReplWaitMs]; ok && f.WaitMs == nil && f.Threads > 0 && secs > 0 {
		f.ReplWaitShare = f64(v / (float64(f.Threads) * secs * 1000))
	}
}

// lockTables are the tables the lock waits were attributed to
// (target.CtrLockTablePrefix), the most waited-for first, by name when
// even; nil when none was.
func lockTables(c map[string]float64) []diagnose.TableShare {
	var out []diagnose.TableShare
	sum := 0.0
	for k, v := range c {
		if tb, ok := strings.CutPrefix(k, target.CtrLockTablePrefix); ok && v > 0 {
			out = append(out, diagnose.TableShare{Table: tb, Share: v})
			sum += v
		}
	}
	for i := range out {
		out[i].Share /= sum
	}
	slices.SortFunc(out, func(a, b diagnose.TableShare) int {
		if a.Share != b.Share {
			return cmp.Compare(b.Share, a.Share)
		}
		return strings.Compare(a.Table, b.Table)
	})
	return out
}

func readsWrites(c map[string]float64) (r, w float64, ok bool) {
	r, rok := c[target.CtrDataReads]
	w, wok := c[target.CtrDataWrites]
	return r, w, rok || wok
}

// deviceLatencyOf is deviceLatency over r's intervals, or, for a run
// combined from several (p.runs: repeats, knee probes), over theirs.
func deviceLatencyOf(p Params, r *runner.Result) *float64 {
	if len(p.runs) == 0 {
		return deviceLatency(r.Intervals)
	}
	var ivs []runner.Interval
	for _, q := range p.runs {
		ivs = append(ivs, q.Intervals...)
	}
	return deviceLatency(ivs)
}

// deviceLatency estimates the storage device's own latency as the lowest
// per-interval average data-file latency of the measured intervals (with at
// least minDeviceIOs IOs); nil when no interval measured data-file latency.
func deviceLatency(ivs []runner.Interval) *float64 {
	var best *float64
	for _, iv := range ivs {
		if iv.Warmup || iv.Evidence == nil {
			continue
		}
		var ios, ns int64
		for _, fs := range iv.Evidence.Files {
			if fs.Role == "data" {
				n, t := fs.TimedIO()
				ios += n
				// The real device's time: an emulated limit's wait
				// (--emulate) is queueing in front of it.
				ns += t - fs.EmulatedNs
			}
		}
		if ios < minDeviceIOs {
			continue
		}
		if ms := float64(ns) / 1e6 / float64(ios); best == nil || ms < *best {
			best = f64(ms)
		}
	}
	return best
}

// PrintVerdict prints the verdict: the bottleneck with its first evidence,
// the rest of the evidence indented, and the suggestions with their
// predicted gains.
func PrintVerdict(w io.Writer, v *diagnose.Verdict) {
	if v == nil {
		return
	}
	first := ""
	if len(v.Evidence) > 0 {
		first = " — " + v.Evidence[0]
	}
	fmt.Fprintf(w, "\nverdict: %s%s\n", v.Bottleneck, first)
	for i := 1; i < len(v.Evidence); i++ {
		fmt.Fprintf(w, "   %s\n", v.Evidence[i])
	}
	for _, s := range v.Suggestions {
		fmt.Fprintf(w, "   try %s%s\n", s.Action, gainText(s))
	}
}

// gainText is ": predicted ×3.1 (≈ 9,800 req/s)", or "" when unknown.
func gainText(s diagnose.Suggestion) string {
	if s.PredictedGain == nil {
		return ""
	}
	t := fmt.Sprintf(": predicted ×%.1f", *s.PredictedGain)
	switch {
	case s.PredictedRequestsPerSec != nil:
		t += " (≈ " + ApproxRate(*s.PredictedRequestsPerSec) + " req/s)"
	case s.PredictedRowsPerSec != nil:
		t += " (≈ " + ApproxRate(*s.PredictedRowsPerSec) + " rows/s)"
	}
	return t
}

// ApproxRate formats a predicted request rate to three significant
// digits ("9,800", "713", "4.27"): an estimate, shown as one on the
// console and in reports alike.
func ApproxRate(v float64) string {
	if v >= 100 {
		return diagnose.Thousands(sig3(v))
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// printStepVerdicts prints one line per diagnosed step (printVerdicts).
func printStepVerdicts(w io.Writer, title string, rows []rampRow) {
	var vs []verdictRow
	for _, row := range rows {
		v := row.step.Verdict
		if v == nil {
			continue
		}
		// A step that ran at its rate: what each request's time is made
		// of, not where the rate tops out.
		keptUp := !row.step.Saturated && v.Bottleneck != diagnose.None && v.Bottleneck != diagnose.Errors
		vs = append(vs, verdictRow{label: row.label, v: v, keptUp: keptUp})
	}
	printVerdicts(w, title, vs)
}

// verdictRow is one step's verdict for printVerdicts: its label (step,
// probe or batch size) and whether the step kept up with its rate.
type verdictRow struct {
	label  string
	v      *diagnose.Verdict
	keptUp bool
}

// printVerdicts prints one line per verdict under title; neighbouring
// rows with the same line are printed as one, labelled with the first and
// last of them and how many they are, so a knee of twenty probes that all
// found nothing takes one line.
func printVerdicts(w io.Writer, title string, rows []verdictRow) {
	type group struct {
		first, last string
		n           int
		text        string
	}
	var groups []group
	keptUp := false
	for _, row := range rows {
		v := row.v
		line := string(v.Bottleneck)
		if row.keptUp {
			line += " (kept up)"
			keptUp = true
		}
		if len(v.Evidence) > 0 {
			line += " — " + v.Evidence[0]
		}
		if near := NearestRules(v); near != "" {
			line += " (nearest: " + near + ")"
		}
		if len(v.Suggestions) > 0 {
			line += "; try " + v.Suggestions[0].Action + gainText(v.Suggestions[0])
		}
		line = strings.TrimRight(line, " ")
		if k := len(groups) - 1; k >= 0 && groups[k].text == line {
			groups[k].last = row.label
			groups[k].n++
			continue
		}
		groups = append(groups, group{first: row.label, last: row.label, n: 1, text: line})
	}
	if len(groups) == 0 {
		return
	}
	fmt.Fprintf(w, "  %s:\n", title)
	for _, g := range groups {
		label := g.first
		if g.n > 1 {
			label = fmt.Sprintf("%s … %s (%d)", g.first, g.last, g.n)
		}
		fmt.Fprintf(w, "  %5s %s\n", label, g.text)
	}
	if keptUp {
		fmt.Fprintln(w, "  (kept up) = the step ran at its rate: its verdict says what each request's time is made of, not where the rate tops out")
	}
}

// NearestRules names the rules a verdict of no bottleneck found closest
// to matching ("commit-flush", "commit-flush, cpu"), from its "nearest:"
// evidence, or "" when it has none. The names only, so that neighbouring
// steps near the same rule share one line; the figures are in the
// verdict's evidence (JSON, HTML).
func NearestRules(v *diagnose.Verdict) string {
	if v.Bottleneck != diagnose.None {
		return ""
	}
	var names []string
	for _, e := range v.Evidence {
		if rest, ok := strings.CutPrefix(e, "nearest: "); ok {
			name, _, _ := strings.Cut(rest, " — ")
			names = append(names, name)
		}
	}
	return strings.Join(names, ", ")
}

// sig3 rounds v to three significant digits: 14,086 → 14,100.
func sig3(v float64) float64 {
	if v <= 0 {
		return v
	}
	p := math.Pow(10, math.Floor(math.Log10(v))-2)
	return math.Round(v/p) * p
}
