// Package diagnose names the bottleneck of a run (DESIGN.md section 6): it
// applies one small rule per resource to the figures a run measured and
// returns a Verdict — the binding resource, the evidence (numbers from the
// run) and what to try, each with a predicted gain.
//
// The package does not know the result document: the report package turns a
// result (or one open-loop step of it) into Figures. A figure that was not
// measured is nil, never 0, and a rule whose figures are missing is not
// applicable (it does not match, and says why).
//
// Scoring: every rule that matches gets a score in (0, 1], roughly the share
// of the time (or of the capacity) that its resource explains:
//
//	commit-flush   log-sync time per request ÷ mean request time; without the sync
//	               latency, the larger of the log-IO wait share and syncs per request
//	               × a local fsync probe's mean latency ÷ mean request time (an
//	               estimate), capped by the share of the request's time the server
//	               spends off its CPU
//	log-rate       the log-IO wait share when measured, else 0.75
//	storage-queue  the share of each data-file IO spent queueing, 1 − device ÷ file latency,
//	               weighted by the data-IO wait share when measured
//	memory         the data-read wait share when measured, else the cache miss ratio
//	cpu            the busy fraction of the cores (server or host, whichever is higher)
//	contention     the lock wait share, or busy waits per request (capped at 0.8)
//	client         the client's CPU fraction of its cores; 0.9 for scheduling lag; in an
//	               open loop, the share of the time ceiling's workers were busy
//	network        the round trip to a server on another host × round trips per
//	               request ÷ the request's time
//	replication    the share of the sessions' time waiting for a synchronous replica's
//	               confirmation (without wait categories: the server's total of those
//	               waits over the workers' time)
//
// The verdict is the matching rule with the highest score; the others that
// matched are kept in the evidence as runners-up, and every rule's outcome
// is listed in Verdict.Rules. No match gives "none".
package diagnose

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	names "github.com/ceiling-db/ceiling/internal/suggest" // "suggest" is this package's suggestion maker
)

// Bottleneck names (DESIGN.md section 7).
const (
	CommitFlush  = "commit-flush"
	LogRate      = "log-rate"
	StorageQueue = "storage-queue"
	Memory       = "memory"
	CPU          = "cpu"
	Contention   = "contention"
	Client       = "client"
	Network      = "network"
	// Replication: commits wait for a synchronous replica (PostgreSQL's
	// synchronous standbys, MySQL/MariaDB's semi-synchronous replicas) to
	// confirm them.
	Replication = "replication"
	None        = "none"
	// Errors is the verdict of a run too many of whose requests failed
	// for reasons the load does not explain (FailedShare): its rates and
	// costs are not the database's.
	Errors = "errors"
)

// Thresholds of the rules.
const (
	MinSyncsPerCommit   = 0.7  // commit-flush: log syncs per commit at least this
	MinCommitShare      = 0.4  // commit-flush: sync time at least this share of a request's time
	MinLatePct          = 1.0  // log-rate: requests queue (late % above this)
	MaxLogRateChange    = 0.10 // log-rate: log MB/s within 10% of the previous step's …
	MinFlatRateRise     = 1.2  // … where the requested rate rose at least this much (×)
	MinLogWaitShare     = 0.5  // log-rate (no steps): log-IO wait share at least this, or …
	MinLogBusy          = 0.6  // … the log device busy with the log's syncs at least this share of the time
	MinQueueFactor      = 10.0 // storage-queue: file latency at least this × device latency
	MaxCacheHitRatio    = 0.9  // memory: cache hit ratio below this
	MinDataReadsPerReq  = 1.0  // memory: data reads per request above this
	MinDiskReadShare    = 0.4  // memory: or disk reads' share of each request's time at least this
	MinCPUBusy          = 0.85 // cpu: busy fraction of the cores
	MinCPUWaitShare     = 0.6  // cpu: wait_cpu share, together with …
	MinHostBusyWithWait = 0.8  // … a host busy fraction of at least this
	MaxFailedShare      = 0.1  // errors: failed requests (FailedShare) at least this share of those attempted
	MinLockShare        = 0.3  // contention: lock wait share
	MinBusyWaitsPerReq  = 0.2  // contention (SQLite): busy waits per request
	MinClientCPU        = 85.0 // client: % of the client's cores
	MaxSchedLagP99Ms    = 10.0 // client (open loop): ceiling's own scheduling lag p99 …
	MinSlowStarts       = 10   // … over at least this many requests that started that late
	MinClientWaitShare  = 0.4  // client (closed loop): sessions waiting for ceiling's next request …
	MinClientCoresPerW  = 0.4  // … while ceiling burns at least this many cores per worker
	MinWorkerBusy       = 0.8  // client (open loop): ceiling's workers busy at least this share of the time …
	MaxServiceGrowth    = 1.5  // … while a request's service time is at most this × its time at low load
	MinReplWaitShare    = 0.4  // replication: waits for a synchronous replica's confirmation at least this share of the sessions' time
	MinRoundTripShare   = 0.5  // network: the round trip to a server on another host at least this share of a request's time
	BatchRows           = 10   // rows per commit the batching suggestion assumes
	maxGain             = 50.0 // predicted gains are capped here
)

// Wait categories (keys of Figures.WaitMs), as in the target package's
// wait_* counters.
const (
	WaitLog       = "log_io"
	WaitDataRead  = "data_read"
	WaitDataWrite = "data_write"
	WaitLock      = "lock"
	WaitCPU       = "cpu"
	WaitClient    = "client"
	WaitOther     = "other"
	WaitRepl      = "replication" // a commit waiting for a synchronous replica's confirmation
)

// Figures are the numbers the rules need, from a whole run or one step.
// Optional figures are nil when they were not measured.
type Figures struct {
	Scope          string   // what the figures cover, e.g. "run" or "step 3 (200/s)"
	Threads        int      // worker connections
	Requests       int64    // successful requests
	ElapsedS       float64  // measured seconds
	RequestsPerSec *float64 // achieved
	MeanLatencyMs  *float64
	P99Ms          *float64
	OpenLoop       bool
	// RowsPerTx is the rows each request writes in its one transaction,
	// where the workload's requests are such writes (bulk-load's batches,
	// single-inserts' rows_per_transaction);
	// nil otherwise.
	RowsPerTx *float64
	// RowsPerReq is the rows each request touched or examined (returned,
	// written, or scanned where the workload counts them); nil when not
	// known.
	RowsPerReq *float64
	// FixedTx names a workload whose transactions its specification sets
	// (TPC-C's), so more rows per transaction is no advice to give; "" for
	// the others.
	FixedTx string
	LatePct *float64 // open loop: late requests, % of scheduled
	// KeptUp marks an open loop (or step) that kept up with its scheduled
	// rate: its requests/s is the rate asked for, not what the database
	// could do, so no suggestion predicts requests/s from it.
	KeptUp        bool
	SchedLagP99Ms *float64 // open loop: ceiling's own scheduling lag
	// CPUPressure is the share of the time during which at least one
	// runnable task of the server's host waited for a core (Linux PSI,
	// /proc/pressure/cpu "some"); nil when not measured.
	CPUPressure *float64
	// ServerRunQueueMsPerReq is the time the database server's threads
	// spent runnable but waiting for a core, per request (ms; a local
	// server on Linux, from schedstat; a lower bound where threads
	// exit); nil when not measured.
	ServerRunQueueMsPerReq *float64
	// ClientRunQueueMsPerReq is the same for ceiling's own threads (the
	// load generator's, with the embedded engine's); nil when not
	// measured.
	ClientRunQueueMsPerReq *float64
	// SchedLagSlow is how many requests started more than
	// MaxSchedLagP99Ms late by ceiling's own scheduling (of the step whose
	// lag SchedLagP99Ms is); nil when not counted.
	SchedLagSlow *int64
	// Open loop: the step's mean service time (ms from each request's
	// actual start to its end, so without its wait for a free worker), the
	// lowest mean service time of the run's unsaturated steps below this
	// step's rate (the database's time at low load), and the p99 of the
	// wait for a free worker (start lag, ms).
	ServiceMs, MinServiceMs, StartLagP99Ms *float64
	// FullPages are PostgreSQL's full-page images in the WAL (pg_stat_wal
	// wal_fpi); nil where the server does not count them.
	FullPages *FullPageFigures
	// Checkpoints are SQLite's WAL checkpoints where its commits do not
	// sync (WAL mode at NORMAL); nil otherwise.
	Checkpoints *CheckpointFigures
	// Queue is an open-loop step's (or one-step run's) tail: its latency
	// p99 from the scheduled start against the database's own time per
	// request; nil when not measured.
	Queue *QueueFigures

	// CommitsPerReq is the server's commits per request; nil when the server
	// gives no commit counter (one transaction per request is then assumed).
	CommitsPerReq *float64
	// SyncsPerReq are log syncs per request; when the server has no log-sync
	// counter, all fsyncs (log+data) per request, and SyncsAll is true.
	SyncsPerReq *float64
	SyncsAll    bool
	SyncMs      *float64 // mean latency of one log sync, ms
	// DeviceSyncMs is the mean latency of one write+fdatasync measured by
	// ceiling on this host (a local server only): an estimate of the
	// device's flush latency, used when the server times neither its syncs
	// nor its log-IO waits.
	DeviceSyncMs *float64
	// LogDev* are the block device holding the server's log directory,
	// from the kernel's counters over the same interval (a local server
	// on Linux): the mean time of one cache flush (an fsync's flush; nil
	// when the device received none, e.g. a write-through device) and of
	// one write. They cover the whole device, not the log alone.
	LogDevName    string
	LogDevFlushMs *float64
	LogDevWriteMs *float64
	// LogDevReadMs is the device's mean read time and LogDevReadsPerSec
	// its reads per second (the data's device too where data and log
	// share it): how many of the server's data reads reached the disk
	// rather than the OS cache, and what each cost.
	LogDevReadMs      *float64
	LogDevReadsPerSec *float64
	// LogDevReadMBPerSec is what that device read, and DataReadMBPerSec
	// what the server read from its data files (its cache's misses), in
	// MiB/s; DataOnLogDev tells that the data files are on that device,
	// so that the difference is what the OS's page cache served.
	LogDevReadMBPerSec, DataReadMBPerSec *float64
	DataOnLogDev                         bool
	// LogDevBusy is the fraction of the time the log's device had a
	// request in flight (the kernel's io_ticks): near 1 where the device
	// is what caps the log rate.
	LogDevBusy *float64
	// LogDirectIO: the server writes its log with O_DIRECT (MariaDB), so a
	// log sync waits for the device's flush alone and relaxed durability
	// keeps the write.
	LogDirectIO bool
	// TLS describes the connections' encryption when they were encrypted
	// ("TLS 1.3, TLS_AES_256_GCM_SHA384"), else ""; TLSOff says how to
	// connect without it on this engine.
	TLS, TLSOff string
	// CommitsWait says whether, under the durability setting in force,
	// each commit waits for its log to be flushed (PostgreSQL
	// synchronous_commit on, InnoDB innodb_flush_log_at_trx_commit 1,
	// SQLite synchronous FULL); nil when not known. Syncs that commits do
	// not wait for (SQLite's checkpoints in WAL mode at NORMAL, a
	// background flush) are no commit's cost.
	CommitsWait *bool
	// Replication describes the synchronous replication the server's
	// commits wait for, where it has some; nil otherwise.
	Replication *ReplFigures
	// ReplWaitShare is the server's commits' wait for a semi-synchronous
	// replica over the workers' time, where no wait categories were
	// measured (MySQL without performance_schema:
	// Rpl_semi_sync_master_tx_wait_time); nil otherwise.
	ReplWaitShare *float64
	// LocksUntilFlush says that the engine releases a transaction's row
	// locks only once its commit's log flush is done (PostgreSQL), so a
	// lock wait includes the holder's flush; InnoDB releases them before
	// the flush.
	LocksUntilFlush bool
	LogMBPerSec     *float64
	// PrevLogMBPerSec is the log MB/s of the previous (next lower rate)
	// step, and RateRise this step's requested rate ÷ that step's.
	PrevLogMBPerSec *float64
	RateRise        *float64

	DataIOPS *float64 // data files, reads+writes per second
	// DataIOPSLimit and DataMBLimit are the data files' IOPS and MiB/s
	// limits, LogMBLimit the log's MiB/s (LogMBPerSec is in MiB/s too),
	// when the run held them to a profile's (--emulate: Profile names
	// it); nil otherwise.
	DataIOPSLimit   *float64
	DataMBLimit     *float64
	LogMBLimit      *float64
	DataMBPerSec    *float64 // data files, MiB read+written per second (with DataMBLimit)
	Profile         string
	DataLatencyMs   *float64 // data files, mean latency per IO
	DeviceLatencyMs *float64 // the device's own latency (e.g. the lowest per-interval average)
	// RoundTripMs is the round trip to a server on another host (p50 of
	// ceiling's pings before the run, at rest); nil for a local server or
	// when not timed. RoundTripsPerReq is how many round trips each
	// request made (counted by the connections); nil when not counted.
	RoundTripMs      *float64
	RoundTripsPerReq *float64

	ClientCPUPct *float64 // load generator, % of its cores
	// ThinkShare is the share of a closed loop's workers' time spent in the
	// workload's think times (nil: none).
	ThinkShare  *float64
	ClientCores int // the load generator's cores (0: unknown)
	// InProcess is true for an embedded engine (SQLite): it runs inside
	// ceiling's process, so ClientCPUPct is the engine's CPU too, and the
	// host's other CPU use is not the database's.
	InProcess      bool
	ServerCPUCores *float64 // database server CPU seconds per second (less ForeignCPUCores)
	// ForeignCPUCores is the CPU seconds per second of the server's
	// backends serving other sessions than ceiling's (nil: not measured);
	// it counts among the other work on the host.
	ForeignCPUCores *float64
	HostBusy        *float64 // host busy fraction of all cores, 0..1
	Cores           *float64 // cores of the server's host
	WaitMs          map[string]float64
	CacheHitRatio   *float64
	DataReadsPerReq *float64
	BusyWaitsPerReq *float64
	// RowLockShare is the sessions' row-lock waits as a share of their
	// time, from a server-wide counter (all sessions' waits over the
	// workers' time), where no wait categories were sampled.
	RowLockShare *float64
	// LockTables are the tables the sampled lock waits were attributed
	// to, the most waited-for first, each with its share of the
	// attributed waits (not of all lock waits: see
	// target.CtrLockTablePrefix); nil when none was.
	LockTables []TableShare

	Errors        int64
	ErrorsByClass map[string]int64
	// Deadlock is true when the run's first serialization error was a
	// deadlock (the class holds deadlocks and serialization failures).
	Deadlock bool
	// DeadlockTimeout is PostgreSQL's deadlock_timeout ("1s"): how long
	// a lock wait lasts before the server looks for a deadlock; "" where
	// deadlocks are found at once (InnoDB) or it is not known.
	DeadlockTimeout string
}

// TableShare is a table and its share of something, 0..1.
type TableShare struct {
	Table string
	Share float64
}

// lockTablesText describes where the lock waits were, "ceiling.warehouse
// 71%, ceiling.district 25% and 2 more tables 4%", with the hottest table
// alone; "" without any.
func lockTablesText(tables []TableShare) (text, hottest string) {
	if len(tables) == 0 {
		return "", ""
	}
	var parts []string
	rest, n := 0.0, 0
	for i, t := range tables {
		if i < 3 {
			parts = append(parts, fmt.Sprintf("%s %.0f%%", t.Table, 100*t.Share))
			continue
		}
		rest += t.Share
		n++
	}
	switch n {
	case 0:
	case 1:
		parts = append(parts, fmt.Sprintf("%s %.0f%%", tables[3].Table, 100*tables[3].Share))
	default:
		parts = append(parts, fmt.Sprintf("%d more tables %.0f%%", n, 100*rest))
	}
	return names.AndList(parts), tables[0].Table
}

// Suggestion is one thing to try, with its predicted effect (nil: unknown).
type Suggestion struct {
	Action                  string   `json:"action"`
	PredictedGain           *float64 `json:"predicted_gain"`             // × of requests/s (of rows/s for batching)
	PredictedRequestsPerSec *float64 `json:"predicted_requests_per_sec"` // requests/s
	// PredictedRowsPerSec replaces PredictedRequestsPerSec for batching,
	// whose requests carry more rows each: rows/s.
	PredictedRowsPerSec *float64 `json:"predicted_rows_per_sec,omitempty"`
}

// Rule is one rule's outcome, as recorded in the verdict.
type Rule struct {
	Name    string  `json:"name"`
	Matched bool    `json:"matched"`
	Score   float64 `json:"score"`
	Why     string  `json:"why"`
}

// Candidate is what a rule returns: its outcome and, when it matched, the
// evidence and suggestions of the verdict it would give.
type Candidate struct {
	Rule
	Evidence    []string
	Suggestions []Suggestion
	// near is, for a rule that was not matched only because a measured
	// figure stayed under its threshold, that figure over the threshold
	// (CPU 83% against 85%: 0.98); 0 otherwise. A "none" verdict names
	// the nearest ones.
	near float64
	// lead marks a candidate that set the measured rate itself, ahead of
	// any rule on how the database spent each request's time: an open
	// loop's workers, all busy while the database served each request
	// as fast as at lower rates (ClientRule).
	lead bool
}

// Verdict is the diagnosis of a run or a step (result key "verdict").
type Verdict struct {
	Bottleneck  string       `json:"bottleneck"`
	Evidence    []string     `json:"evidence"`
	Suggestions []Suggestion `json:"suggestions"`
	Rules       []Rule       `json:"rules"`
}

// Rules lists the rules in the order they are tried (ties go to the first).
var Rules = []func(Figures) Candidate{
	CommitFlushRule, LogRateRule, StorageQueueRule, MemoryRule, CPURule, ContentionRule, ClientRule, NetworkRule, ReplicationRule,
}

// Diagnose applies every rule to f and returns the verdict.
func Diagnose(f Figures) *Verdict {
	v := diagnose(f)
	addDeadlocks(v, f)
	addHeadOfLine(v, f)
	addFullPages(v, f)
	addCheckpoints(v, f)
	addThinSample(v, f)
	return v
}

// MinRelaxedSyncs is how many log syncs per request commits must wait
// for before the contention rule suggests relaxed durability on an engine
// that holds its locks through the flush.
const MinRelaxedSyncs = 0.1

// MinSampleRequests is how many successful requests a verdict's figures
// should rest on; below it, addThinSample says so.
const MinSampleRequests = 200

// MinSampleRows is how many rows the requests must touch or examine in
// all (table scans, bulk-load batches) for their figures to be averages
// over much work even when there are fewer than MinSampleRequests.
const MinSampleRows = 1000

// addThinSample says when the verdict rests on few requests: their
// figures per request and shares of time come from a handful of
// transactions, on which the server's own background work (checkpoints,
// vacuum, other sessions' commits) weighs more. TPC-C with
// --keying-thinking for 20 s, 10 users: 18 transactions. Not for
// requests that did much work in all (13 bulk-load batches of 100 rows,
// 20 full scans).
func addThinSample(v *Verdict, f Figures) {
	if f.Requests <= 0 || f.Requests >= MinSampleRequests {
		return
	}
	rows := 1.0
	for _, r := range []*float64{f.RowsPerReq, f.RowsPerTx} {
		if r != nil {
			rows = max(rows, *r)
		}
	}
	if float64(f.Requests)*rows >= MinSampleRows {
		return
	}
	in := ""
	switch {
	case f.ElapsedS >= 10:
		in = fmt.Sprintf(" in %.0f s", f.ElapsedS)
	case f.ElapsedS > 0:
		in = fmt.Sprintf(" in %.3g s", f.ElapsedS)
	}
	v.Evidence = append(v.Evidence, fmt.Sprintf(
		"a thin sample: %d requests%s (fewer than %d), so the figures per request and the shares of time above rest on few of them, and the server's own background work weighs more on them: run longer (-T) or with more workers for a firmer verdict",
		f.Requests, in, MinSampleRequests))
}

// CheckpointFigures are SQLite's WAL syncs and completed checkpoints
// (database-file syncs) per request at synchronous=NORMAL, where the WAL
// is synced only to checkpoint it; the checkpoints per request its
// threshold calls for (WAL pages per request ÷ wal_autocheckpoint), the
// threshold, and the syncs' share of the connections' time.
type CheckpointFigures struct {
	WALSyncsPerReq, DonePerReq, ExpectedPerReq float64
	AutoPages                                  int64
	SyncShare                                  float64
}

// MinCheckpointExcess is how many times the WAL syncs its threshold calls
// for (two per checkpoint: the WAL's and the database file's) SQLite must
// have made before addCheckpoints speaks.
const MinCheckpointExcess = 5.0

// addCheckpoints says when SQLite at synchronous=NORMAL synced its WAL
// far more often than its checkpoint threshold calls for: with several
// connections writing, the WAL seldom starts over (only when no other
// connection reads it), so it stays over the threshold and later commits
// checkpoint again. Single inserts at 2500/s on 2 workers: 0.290 WAL
// syncs and 0.135 completed checkpoints per request, where 1.0 WAL page
// per request and 1000 pages per checkpoint call for 0.001 (1 worker:
// 0.002 WAL syncs per request).
func addCheckpoints(v *Verdict, f Figures) {
	c := f.Checkpoints
	if c == nil || c.ExpectedPerReq <= 0 || c.WALSyncsPerReq < 0.01 || c.WALSyncsPerReq < MinCheckpointExcess*2*c.ExpectedPerReq {
		return
	}
	v.Evidence = append(v.Evidence, fmt.Sprintf(
		"SQLite synced its WAL %.3g times per request and completed %.3g checkpoints per request, where its threshold (wal_autocheckpoint %d pages) calls for about %.2g: at synchronous=NORMAL the WAL is synced only to checkpoint it, and with %s writing it stayed over the threshold (it starts over only when no other connection is reading it), so later commits checkpointed again; the syncs took %.0f%% of the connections' time",
		c.WALSyncsPerReq, c.DonePerReq, c.AutoPages, c.ExpectedPerReq, WorkersText(f.Threads), 100*c.SyncShare))
}

// FullPageFigures are the full-page images PostgreSQL wrote to its WAL
// per request, the WAL bytes per request, the page size, and the settings
// that decide how many there are and how large ("max_wal_size 1GB,
// checkpoint_timeout 5min, wal_compression off"; "" when not known).
type FullPageFigures struct {
	PerReq, LogBytesPerReq, PageBytes float64
	Settings                          string
}

// MinFullPageShare is the share of the WAL's bytes that full-page images
// may make up, at most, before addFullPages speaks.
const MinFullPageShare = 0.3

// addFullPages says, under a verdict on the log (log-rate, commit-flush),
// how much of the WAL was full-page images: the first change of a page
// after each checkpoint logs the whole page. PostgreSQL updates on 800,000
// rows after a checkpoint: 0.556 images per request, up to 4,554 of its
// 4,973 WAL bytes, against 580 bytes per update without them.
func addFullPages(v *Verdict, f Figures) {
	fp := f.FullPages
	if fp == nil || fp.PerReq <= 0 || fp.LogBytesPerReq <= 0 || fp.PageBytes <= 0 || (v.Bottleneck != LogRate && v.Bottleneck != CommitFlush) {
		return
	}
	bytes := math.Min(fp.PerReq*fp.PageBytes, fp.LogBytesPerReq)
	share := bytes / fp.LogBytesPerReq
	if share < MinFullPageShare {
		return
	}
	v.Evidence = append(v.Evidence, fmt.Sprintf(
		"%.3g full-page images per request (pg_stat_wal.wal_fpi), up to %.0f of its %.0f WAL bytes (%.0f%%): the first change of each page after a checkpoint logs the whole page",
		fp.PerReq, bytes, fp.LogBytesPerReq, 100*share))
	action := "fewer checkpoints (a larger max_wal_size or checkpoint_timeout) or wal_compression, for fewer or smaller page images in the WAL"
	if fp.Settings != "" {
		action += " (now " + fp.Settings + ")"
	}
	v.Suggestions = append(v.Suggestions, Suggestion{Action: action + "; gain not predicted"})
}

// QueueFigures are an open-loop step's latency p99 from the scheduled
// start, its requests' wait for a free worker (start lag p99), and the
// database's own time per request (service time p99 and max), in ms.
type QueueFigures struct {
	P99, StartLagP99, ServiceP99, ServiceMax float64
}

// Head-of-line thresholds (addHeadOfLine).
const (
	MinQueueTail     = 3.0 // the p99 at least this × the service time's p99 …
	MinStartLagShare = 0.5 // … and the wait for a free worker at least this share of it
	MinQueueTailMs   = 0.5 // … and at least this far above the service time's p99
)

// addHeadOfLine says when an open loop's tail is its requests' wait for
// a free worker behind a slow request rather than the database's time:
// SQLite single inserts at 2560/s on one worker had p99 5.80 ms from the
// scheduled start, 5.41 ms of it waiting for the worker, while the
// database served 99% of the requests within 0.083 ms: its checkpoints
// (up to 9.6 ms) held the one worker while the next requests queued;
// with 4 workers at 2500/s, p99 0.96 ms. Not where the workers were
// busy enough for the client rule (the rate is theirs, not a tail).
func addHeadOfLine(v *Verdict, f Figures) {
	q := f.Queue
	if !f.OpenLoop || q == nil || f.Threads <= 0 || v.Bottleneck == Client || v.Bottleneck == Stall {
		return
	}
	if busy, ok := workersBusy(f); ok && busy >= MinWorkerBusy {
		return
	}
	if q.P99 < MinQueueTail*q.ServiceP99 || q.StartLagP99 < MinStartLagShare*q.P99 || q.P99-q.ServiceP99 < MinQueueTailMs {
		return
	}
	if f.Threads > 1 && f.RequestsPerSec != nil && *f.RequestsPerSec > 0 {
		headOfLineMany(v, f)
		return
	}
	v.Evidence = append(v.Evidence, fmt.Sprintf(
		"the tail is a wait for ceiling's %s: p99 %s ms from the scheduled start, up to %s ms of it (start lag p99) before a worker was free, while the database served 99%% of the requests within %s ms; its slowest (%s ms) held a worker while the next requests queued behind it",
		WorkersText(f.Threads), MsText(q.P99), MsText(q.StartLagP99), MsText(q.ServiceP99), MsText(q.ServiceMax)))
	v.Suggestions = append(v.Suggestions, Suggestion{Action: fmt.Sprintf(
		"more workers (-c %d), so that a request need not wait behind a slow one (what it does to the p99 is not predicted: slow requests that hold a lock the others need would still hold them up)", 2*f.Threads)})
}

// MinSessionsPerCore is how many sessions per core of the server's host
// an open loop runs before headOfLineMany suggests fewer workers rather
// than more.
const MinSessionsPerCore = 8

// headOfLineMany is addHeadOfLine's case of several workers: one slow
// request cannot hold the others up, so the workers were held up
// together: all busy with requests that stalled together, or not run
// at all (the start lag counts from a request's scheduled time to its
// start, whichever kept it). More workers ride out a stall as long as
// the slowest request when there are rate × its time of them; but where
// the sessions far outnumber the cores, more sessions stall longer and
// fewer less: PostgreSQL direct selects at 2,000/s on 2 cores, p99
// 1.26-1.53 ms with 4 workers, 1.53-2.78 with 8, 12.0 with 16, 63.3 with
// 32 and 86.2 with 64 (the database's own p99 0.76 ms at 8, 9.5 at 32,
// 15.5 at 64); pgbench -c 32 behaves alike.
func headOfLineMany(v *Verdict, f Figures) {
	q, rate := f.Queue, *f.RequestsPerSec
	many := f.Cores != nil && *f.Cores > 0 && float64(f.Threads) >= MinSessionsPerCore**f.Cores
	why := "requests that stalled together"
	if many {
		why = fmt.Sprintf("requests that stalled together, or workers not run while %d sessions and their workers shared %s cores", f.Threads, Thousands(*f.Cores))
	}
	v.Evidence = append(v.Evidence, fmt.Sprintf(
		"the tail is a wait before a worker took the request up: p99 %s ms from the scheduled start, up to %s ms of it (start lag p99), while the database served 99%% of the requests within %s ms; with %s one slow request holds none of the others up, so they were held up together (%s; the slowest request took %s ms)",
		MsText(q.P99), MsText(q.StartLagP99), MsText(q.ServiceP99), WorkersText(f.Threads), why, MsText(q.ServiceMax)))
	if many {
		// Enough workers for twice the rate's mean concurrency, and
		// at least two per core.
		fewer := int(math.Max(2**f.Cores, 1))
		if f.ServiceMs != nil {
			fewer = max(fewer, int(math.Ceil(2*rate**f.ServiceMs/1000)))
		}
		if fewer <= f.Threads/2 {
			v.Suggestions = append(v.Suggestions, Suggestion{Action: fmt.Sprintf(
				"fewer workers (-c %d, twice the requests in flight on average and two per core): %d sessions on %s cores stall together, and more would stall longer (gain not predicted)",
				fewer, f.Threads, Thousands(*f.Cores))})
			return
		}
		// The rate needs about as many workers as it has, and the host
		// has more sessions than it runs well: neither fewer nor more
		// workers help (MariaDB single inserts at 11,497/s, 16 workers
		// on 2 cores, slowest 27 ms: "more workers (-c 314)" before).
		where := "more cores for the server"
		if _, client, _, ok := hostSplit(f); ok && client > 0 {
			where += fmt.Sprintf(", or ceiling on another host (it used %.0f%% of these cores)", 100*client)
		}
		inFlight := "about half as many requests in flight on average"
		if f.ServiceMs != nil {
			inFlight = fmt.Sprintf("%s requests in flight on average (%s/s × %s ms)", Thousands(math.Ceil(rate**f.ServiceMs/1000)), Thousands(rate), MsText(*f.ServiceMs))
		}
		v.Suggestions = append(v.Suggestions, Suggestion{Action: fmt.Sprintf(
			"%s: this rate keeps %s, which fewer than these %d workers would leave too little room for, and more sessions on %s cores would stall longer (gain not predicted)",
			where, inFlight, f.Threads, Thousands(*f.Cores))})
		return
	}
	ride := int(math.Ceil(rate * q.ServiceMax / 1000))
	more := max(2*f.Threads, ride)
	if f.Cores != nil && *f.Cores > 0 {
		if most := int(MinSessionsPerCore * *f.Cores); more > most {
			// Beyond MinSessionsPerCore a core, more sessions stall
			// longer (above): as many as the cores run well.
			v.Suggestions = append(v.Suggestions, Suggestion{Action: fmt.Sprintf(
				"more workers (-c %d, %d a core: more sessions on %s cores would stall together), to keep more free through a stall; riding out the slowest request (%s ms at %s/s) would take about %s (gain not predicted)",
				most, MinSessionsPerCore, Thousands(*f.Cores), MsText(q.ServiceMax), Thousands(rate), WorkersText(ride))})
			return
		}
	}
	v.Suggestions = append(v.Suggestions, Suggestion{Action: fmt.Sprintf(
		"more workers (-c %d), to keep one free through a stall as long as the slowest request (%s ms at %s/s: about %s) (gain not predicted)",
		more, MsText(q.ServiceMax), Thousands(rate), WorkersText(ride))})
}

// lockOrder is the suggestion for deadlocks.
const lockOrder = "locking the rows in one order in every transaction (e.g. updating them in ascending key order): transactions that lock in one order cannot deadlock"

// addDeadlocks says, under a verdict other than contention (whose
// evidence has it), that the run's serialization errors were deadlocks,
// how many, and what avoids them: on MariaDB, which finds deadlocks at
// once, transfers in random order were CPU-bound with 3% of them failing.
func addDeadlocks(v *Verdict, f Figures) {
	n := f.ErrorsByClass["serialization"]
	if v.Bottleneck == Contention || !f.Deadlock || n == 0 {
		return
	}
	s := fmt.Sprintf("%d serialization errors", n)
	if all := f.Requests + f.Errors; all > 0 {
		s += fmt.Sprintf(" (%.1f%% of the requests)", 100*float64(n)/float64(all))
	}
	v.Evidence = append(v.Evidence, s+"; "+deadlockEvidence(f))
	v.Suggestions = append(v.Suggestions, Suggestion{Action: lockOrder})
}

func diagnose(f Figures) *Verdict {
	var cands, misses []Candidate
	v := &Verdict{Evidence: []string{}, Suggestions: []Suggestion{}, Rules: []Rule{}}
	for _, r := range Rules {
		c := r(f)
		if !finite(c.Score) {
			c.Score = 0
		}
		c.Score = round(c.Score, 3)
		v.Rules = append(v.Rules, c.Rule)
		if c.Matched {
			cands = append(cands, c)
		} else if c.near > 0 {
			misses = append(misses, c)
		}
	}
	sort.SliceStable(cands, func(i, j int) bool {
		if cands[i].lead != cands[j].lead {
			return cands[i].lead
		}
		return cands[i].Score > cands[j].Score
	})
	c, ok := errorsVerdict(f)
	v.Rules = append(v.Rules, c.Rule)
	if ok {
		// The rules' outcomes stay listed, and their matches as
		// runners-up: they describe what the failing requests cost.
		v.Bottleneck = Errors
		v.Evidence = append(v.Evidence, c.Evidence...)
		v.Suggestions = append(v.Suggestions, c.Suggestions...)
		for _, m := range cands {
			v.Evidence = append(v.Evidence, fmt.Sprintf("runner-up: %s (score %.2f): %s", m.Name, m.Score, m.Why))
		}
		return v
	}
	// Users that pause most of their time on a server they leave idle:
	// their think times set the rate, whatever a rule found in the few
	// requests they made (TPC-C --keying-thinking on SQLite, 10 users for
	// 20 s: 18 transactions, "contention" from 10 busy waits when the
	// users' first keying times ended together).
	_, _, unsat := unsaturated(f)
	paced := unsat && thinkBound(f)
	if len(cands) == 0 || paced {
		v.Bottleneck = None
		near := nearMisses(misses)
		// The first line is the verdict's headline: when the cores were
		// mostly idle, the reason is that the run did not load the server.
		ev, s, unsat := unsaturated(f)
		switch {
		case unsat && thinkBound(f):
			v.Evidence = append(v.Evidence, "no clear bottleneck: the workload's think times set the pace, not the database")
		case unsat && oneWriter(f):
			v.Evidence = append(v.Evidence, "no clear bottleneck: SQLite's one writer at a time sets the pace of these writes")
		case unsat:
			v.Evidence = append(v.Evidence, "no clear bottleneck: the run did not load the server enough to find one")
		default:
			v.Evidence = append(v.Evidence, "no clear bottleneck: no rule matched")
		}
		v.Evidence = append(v.Evidence, topFigures(f)...)
		if unsat {
			v.Evidence = append(v.Evidence, ev)
			for _, c := range cands { // paced: what each request met, not what set the rate
				v.Evidence = append(v.Evidence, fmt.Sprintf("within the requests: %s (score %.2f): %s", c.Name, c.Score, c.Why))
			}
			v.Suggestions = append(v.Suggestions, s)
		} else {
			for _, m := range near {
				v.Evidence = append(v.Evidence, fmt.Sprintf("nearest: %s — %s", m.Name, m.Why))
			}
			if len(near) > 0 && !f.OpenLoop && f.Threads > 0 {
				// Between the rules' thresholds: the next limit shows
				// with more load.
				v.Suggestions = append(v.Suggestions, Suggestion{Action: fmt.Sprintf(
					"more load to see which of these limits comes first: %s (-c %d), or an open-loop ramp (--rates), or ceiling knee",
					Threads(2*f.Threads), 2*f.Threads)})
			}
		}
		if !f.OpenLoop && !thinkBound(f) && f.CommitsWait != nil && *f.CommitsWait && f.SyncsPerReq != nil && *f.SyncsPerReq >= 0.1 {
			// No rule blames the flushes (commits share them), yet each
			// commit still waits for its group's: MariaDB updates, 8
			// threads, 0.283 fsyncs per request, 'none' at full
			// durability ran 37% faster relaxed.
			v.Suggestions = append(v.Suggestions, Suggestion{Action: fmt.Sprintf(
				"--durability relaxed, to measure what the commits' waits for log flushes (%.3g %s per request, shared by commits) cost here (gain not predicted)",
				*f.SyncsPerReq, syncWord(f))})
		}
		why := "no other rule matched"
		if paced {
			why = "the think times set the pace"
		}
		v.Rules = append(v.Rules, Rule{Name: None, Matched: true, Why: why})
		return v
	}
	best := cands[0]
	v.Bottleneck = best.Name
	v.Evidence = append(v.Evidence, best.Evidence...)
	v.Suggestions = append(v.Suggestions, best.Suggestions...)
	for _, c := range cands[1:] {
		v.Evidence = append(v.Evidence, fmt.Sprintf("runner-up: %s (score %.2f): %s", c.Name, c.Score, c.Why))
	}
	if f.CommitsPerReq == nil && best.Name == CommitFlush {
		v.Evidence = append(v.Evidence, "assuming one transaction per request: the server gives no commit counter")
	}
	return v
}

// pctBelow prints a percentage v that is below the threshold thr (both
// in %) with as many decimals as keep it visibly below: "85%" for 84.6
// against 85 would read "85% < 85%", so it prints "84.6%".
func pctBelow(v, thr float64) string {
	prec := 0
	for prec < 2 && math.Round(v*math.Pow10(prec)) >= thr*math.Pow10(prec) {
		prec++
	}
	return strconv.FormatFloat(v, 'f', prec, 64) + "%"
}

// MinNear is how close to its threshold (the measured figure over it) a
// rule that did not match must be for a "none" verdict to name it.
const MinNear = 0.75

// nearMisses are the rules that came within MinNear of their threshold,
// nearest first, at most two.
func nearMisses(misses []Candidate) []Candidate {
	var out []Candidate
	for _, m := range misses {
		if m.near >= MinNear && m.near < 1 {
			out = append(out, m)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].near > out[j].near })
	return out[:min(len(out), 2)]
}

// loadErrors are the error classes a saturated or contended database
// gives by itself: deadlocks and serialization failures, lock and
// statement timeouts. They are evidence of the load (contention, a
// server too slow), not a broken run, so FailedShare leaves them out.
var loadErrors = map[string]bool{"serialization": true, "lock_timeout": true, "statement_timeout": true}

// FailedShare is the share of the attempted requests (successful plus
// failed) that failed with errors other than loadErrors (a missing table,
// a constraint violation, a lost connection, a workload finding nothing to
// work on), and how many those were; ok is false without any.
func FailedShare(f Figures) (share float64, failed int64, ok bool) {
	for class, n := range f.ErrorsByClass {
		if !loadErrors[class] {
			failed += n
		}
	}
	if failed == 0 || f.Requests+f.Errors <= 0 {
		return 0, 0, false
	}
	return float64(failed) / float64(f.Requests+f.Errors), failed, true
}

// errorsVerdict is the verdict of a run whose requests failed too often
// (FailedShare ≥ MaxFailedShare): its rates count only the requests that
// succeeded, its per-request costs include the failing ones' work, and
// neither is the database's ceiling.
func errorsVerdict(f Figures) (Candidate, bool) {
	c := Candidate{Rule: Rule{Name: Errors}}
	share, failed, ok := FailedShare(f)
	if !ok {
		c.Why = "no request failed but for lock or timeout errors"
		return c, false
	}
	counts := fmt.Sprintf("%s of %s requests failed", Thousands(float64(failed)), Thousands(float64(f.Requests+f.Errors)))
	if share < MaxFailedShare {
		c.Why = fmt.Sprintf("%s (%.3g%%) < %.0f%%, leaving out lock and timeout errors", counts, 100*share, 100*MaxFailedShare)
		return c, false
	}
	c.Matched, c.Score = true, round(share, 3)
	c.Why = fmt.Sprintf("%s (%.3g%%) ≥ %.0f%%, leaving out lock and timeout errors", counts, 100*share, 100*MaxFailedShare)
	c.Evidence = append(c.Evidence, fmt.Sprintf("%s (%.3g%% ≥ %.0f%%)", counts, 100*share, 100*MaxFailedShare))
	classes := make([]string, 0, len(f.ErrorsByClass))
	for class, n := range f.ErrorsByClass {
		if n > 0 {
			classes = append(classes, class)
		}
	}
	sort.Slice(classes, func(i, j int) bool { return f.ErrorsByClass[classes[i]] > f.ErrorsByClass[classes[j]] })
	for _, class := range classes {
		c.Evidence = append(c.Evidence, fmt.Sprintf("%s %s errors", Thousands(float64(f.ErrorsByClass[class])), class))
	}
	c.Evidence = append(c.Evidence, "the rates count the requests that succeeded and the per-request costs include the failing ones' work: neither is the database's ceiling")
	if n := f.ErrorsByClass["recovery_conflict"]; n > 0 {
		c.Evidence = append(c.Evidence, "recovery conflicts: the hot standby cancelled queries that the primary's changes, as they were replayed, would have removed rows from under (or locked them out of): the primary's work, not this load")
		c.Suggestions = append(c.Suggestions, Suggestion{Action: "on the standby, hot_standby_feedback = on (the primary then keeps the row versions the standby's queries still see; its tables bloat while they run) or a longer max_standby_streaming_delay (replay waits for the queries, and the standby falls behind the primary)"})
	}
	c.Suggestions = append(c.Suggestions, Suggestion{Action: "removing the cause of the errors (the first message of each class is in the summary), then running again"})
	return c, true
}

// Threads writes a thread count: "1 thread", "4 threads".
func Threads(n int) string {
	if n == 1 {
		return "1 thread"
	}
	return strconv.Itoa(n) + " threads"
}

// verbS is the "s" of a present-tense verb after Threads(n): "1 thread
// keeps", "2 threads keep".
func verbS(n int) string {
	if n == 1 {
		return "s"
	}
	return ""
}

// MaxUnsaturatedBusy is the busy share of the cores below which a closed
// loop with no bottleneck is said not to have loaded the database enough.
const MaxUnsaturatedBusy = 0.7

// unsaturated says, for a "none" verdict of a closed loop, that the cores
// were far from busy: the workers' own round trips set the pace, and more
// workers (or an open-loop ramp) would find the ceiling. No gain is
// predicted: how far the engine scales with more sessions (SQLite: one
// writer at a time) is what the next run measures.
func unsaturated(f Figures) (evidence string, s Suggestion, ok bool) {
	b := busy(f)
	if f.OpenLoop || b == nil || *b >= MaxUnsaturatedBusy || f.Threads < 1 {
		return "", Suggestion{}, false
	}
	if thinkBound(f) {
		// Users that pause: their think times, not the database, set
		// the rate (a custom file with think: exp 50ms and 200ms, 4
		// workers on SQLite: 47.8 req/s, the workers 99% in think times).
		evidence = fmt.Sprintf("the think times set the pace: the %s spent %.1f%% of their time in them, and the cores were %.3g%% busy",
			Threads(f.Threads), 100**f.ThinkShare, 100**b)
		s = Suggestion{Action: fmt.Sprintf("more users (-c %d) to load the database more at these think times, or a run without them (or an open-loop ramp, --rates) to find its ceiling", 4*f.Threads)}
		if f.FixedTx != "" {
			s.Action = fmt.Sprintf("more users (-c %d, with as many more warehouses: %s specification has 10 users a warehouse) to load the database more at these think times, or a run without them to find its ceiling", 4*f.Threads, f.FixedTx)
		}
		return evidence, s, true
	}
	if oneWriter(f) {
		// Writes to the embedded engine: one writer at a time whatever
		// the threads (single inserts: +4% at 2 threads, lock waits 47%
		// at 4), so the pace is one writer's.
		evidence = fmt.Sprintf("%s keep%s the cores %.3g%% busy (< %.0f%%), but SQLite takes one writer at a time: its writes go at one writer's pace, which more threads do not raise",
			Threads(f.Threads), verbS(f.Threads), 100**b, 100*MaxUnsaturatedBusy)
		s = Suggestion{Action: "several rows per transaction (one writer's commits are the pace; more threads would wait on the write lock)"}
		switch {
		case f.FixedTx != "":
			s.Action = fixedTxAction(f)
		case f.RowsPerTx != nil && *f.RowsPerTx >= 2:
			s.Action = fmt.Sprintf("more rows per transaction than these %s (one writer's commits are the pace; more threads would wait on the write lock)", Thousands(math.Round(*f.RowsPerTx)))
		}
		return evidence, s, true
	}
	evidence = fmt.Sprintf("not saturated: %s keep%s the cores %.3g%% busy (< %.0f%%) and no wait dominates: each worker runs one request at a time, so their number sets the pace",
		Threads(f.Threads), verbS(f.Threads), 100**b, 100*MaxUnsaturatedBusy)
	s = Suggestion{Action: fmt.Sprintf("more threads (-c %d) or an open-loop ramp (--rates) to find the ceiling", 2*f.Threads)}
	return evidence, s, true
}

// MinThinkShare is the share of the workers' time in think times from
// which an unsaturated closed loop is said to be paced by them.
const MinThinkShare = 0.5

// thinkBound says whether a closed loop's workers spent at least
// MinThinkShare of their time in think times.
func thinkBound(f Figures) bool {
	return !f.OpenLoop && f.ThinkShare != nil && *f.ThinkShare >= MinThinkShare
}

// fixedTxAction is the advice for writes that SQLite's one writer paces
// when the workload's transactions are not the user's to batch.
func fixedTxAction(f Figures) string {
	return fmt.Sprintf("a server engine (PostgreSQL, MySQL/MariaDB) to measure concurrent writers: SQLite takes one writer at a time, so more threads (-c) would wait on its write lock, and %s transactions are set by its specification, not to be batched (gain not predicted)", f.FixedTx)
}

// oneWriter says whether the run wrote to the embedded engine, which takes
// one writer at a time.
func oneWriter(f Figures) bool {
	return f.InProcess && f.LogMBPerSec != nil && *f.LogMBPerSec >= 0.005
}

// topFigures describes the headline figures, for a "none" verdict.
func topFigures(f Figures) []string {
	var out []string
	if f.RequestsPerSec != nil {
		s := fmt.Sprintf("%s req/s with %s", num(*f.RequestsPerSec), Threads(f.Threads))
		if f.MeanLatencyMs != nil {
			s += fmt.Sprintf(", mean latency %.3f ms", *f.MeanLatencyMs)
		}
		if f.P99Ms != nil {
			s += fmt.Sprintf(", p99 %.3f ms", *f.P99Ms)
		}
		out = append(out, s)
	}
	// A read-only run's syncs and log rate are about nothing: left out.
	if f.SyncsPerReq != nil && *f.SyncsPerReq >= 0.001 {
		s := fmt.Sprintf("%.3f %s per request", *f.SyncsPerReq, syncWord(f))
		if f.SyncMs != nil {
			s += fmt.Sprintf(", %.3f ms per sync", *f.SyncMs)
		} else if ms, what, ok := logDeviceSync(f); ok {
			s += fmt.Sprintf(", %s %.3f ms", what, ms)
		} else if f.DeviceSyncMs != nil {
			s += fmt.Sprintf(", a local fsync probe took %.3f ms", *f.DeviceSyncMs)
		}
		out = append(out, s)
	}
	if f.LogMBPerSec != nil && *f.LogMBPerSec >= 0.005 {
		out = append(out, fmt.Sprintf("log %.2f MB/s", *f.LogMBPerSec))
	}
	if f.DataReadsPerReq != nil && *f.DataReadsPerReq >= 0.01 {
		// Reads the server's cache missed: from the disk or, where the
		// engine reads through the OS, its page cache.
		s := fmt.Sprintf("%.3f data reads per request that the server's cache missed", *f.DataReadsPerReq)
		if f.CacheHitRatio != nil {
			s += fmt.Sprintf(" (hit ratio %.3f)", *f.CacheHitRatio)
		}
		out = append(out, s)
	}
	if b := busy(f); b != nil {
		if f.InProcess {
			// The engine runs in ceiling's process: one figure for both.
			out = append(out, fmt.Sprintf("ceiling with the embedded engine: CPU %.0f%% of the cores", 100**b))
		} else if server, client, _, ok := hostSplit(f); ok && cpuWhose(f, *b) == "server host's" {
			out = append(out, fmt.Sprintf("the server host's cores %.0f%% busy (the server's processes %.0f%%, ceiling %.0f%%)", 100**b, 100*server, 100*client))
		} else if cpuWhose(f, *b) == "server host's" {
			// The host's figure alone (the server's processes not
			// measured, e.g. after a restart changed its pid).
			out = append(out, fmt.Sprintf("the server host's cores %.0f%% busy", 100**b))
		} else {
			out = append(out, fmt.Sprintf("server CPU %.0f%% of the cores", 100**b))
		}
	}
	if f.ClientCPUPct != nil && !f.InProcess {
		out = append(out, fmt.Sprintf("load generator CPU %.0f%% of its cores", *f.ClientCPUPct)+clientQueueText(f))
	}
	if sh := shares(f.WaitMs); sh != nil {
		out = append(out, "wait shares: "+describeShares(sh))
	} else {
		if f.RowLockShare != nil && *f.RowLockShare >= 0.005 {
			out = append(out, fmt.Sprintf("row-lock waits %.0f%% of the sessions' time (the whole server's)", 100**f.RowLockShare))
		}
		if f.ReplWaitShare != nil && *f.ReplWaitShare >= 0.005 {
			out = append(out, fmt.Sprintf("waits for a semi-synchronous replica's acknowledgement %.0f%% of the sessions' time (the whole server's)", 100*math.Min(*f.ReplWaitShare, 1)))
		}
	}
	if f.Errors > 0 {
		out = append(out, fmt.Sprintf("%d errors", f.Errors))
	}
	return out
}

// requestMs is the time one worker spends per request: in an open loop the
// mean service time (latency from the scheduled start includes the wait
// for a free worker, which no resource of the database explains), else the
// mean latency, else threads ÷ requests/s.
func requestMs(f Figures) (float64, bool) {
	if f.ServiceMs != nil && *f.ServiceMs > 0 {
		return *f.ServiceMs, true
	}
	if f.MeanLatencyMs != nil && *f.MeanLatencyMs > 0 {
		return *f.MeanLatencyMs, true
	}
	if f.RequestsPerSec != nil && *f.RequestsPerSec > 0 && f.Threads > 0 {
		return 1000 * float64(f.Threads) / *f.RequestsPerSec, true
	}
	return 0, false
}

func syncWord(f Figures) string {
	if f.SyncsAll {
		return "fsyncs (log+data)"
	}
	return "log syncs"
}

// gainFromShare is Amdahl's law: removing a share s of the time.
func gainFromShare(s float64) float64 {
	if s >= 1-1/maxGain {
		return maxGain
	}
	return 1 / (1 - s)
}

func suggest(action string, gain float64, f Figures) Suggestion {
	if f.KeptUp {
		return Suggestion{Action: action + "; this load kept up with its rate, so the gain would show at higher rates"}
	}
	g := round(gain, 2)
	s := Suggestion{Action: action, PredictedGain: &g}
	if f.RequestsPerSec != nil && *f.RequestsPerSec > 0 {
		r := round(*f.RequestsPerSec*gain, 0)
		s.PredictedRequestsPerSec = &r
	}
	return s
}

// batchSuggest is suggest for batching BatchRows rows per commit: the gain
// is per row, so the predicted rate is rows/s (the run's requests/s times
// its rows per transaction, 1 unless known).
// Requests that write several rows in their transaction already are told
// BatchRows times as many.
func batchSuggest(bound string, gain float64, f Figures) Suggestion {
	rows := 1.0
	if f.RowsPerTx != nil && *f.RowsPerTx > 0 {
		rows = *f.RowsPerTx
	}
	action := fmt.Sprintf("batch %d rows per commit%s", BatchRows, bound)
	if rows >= 2 {
		action = fmt.Sprintf("batch %s rows per commit, %d× these %s%s", Thousands(math.Round(rows*BatchRows)), BatchRows, Thousands(math.Round(rows)), bound)
	}
	s := suggest(action, gain, f)
	if s.PredictedRequestsPerSec != nil {
		r := round(*f.RequestsPerSec*rows*gain, 0)
		s.PredictedRequestsPerSec, s.PredictedRowsPerSec = nil, &r
	}
	return s
}

// CommitFlushRule: every commit waits for its own log flush, and the flushes
// are a large share of each request's time.
func CommitFlushRule(f Figures) Candidate {
	c := Candidate{Rule: Rule{Name: CommitFlush}}
	if f.SyncsPerReq == nil {
		c.Why = "not applicable: log syncs not measured"
		return c
	}
	commits, assumed := 1.0, f.CommitsPerReq == nil
	if !assumed {
		commits = *f.CommitsPerReq
	}
	if commits <= 0 {
		c.Why = "not applicable: no commits"
		return c
	}
	perCommit := *f.SyncsPerReq / commits
	if perCommit < 0.001 {
		// Read-only work, or durability that never syncs at commit.
		c.Why = fmt.Sprintf("not applicable: %.3f %s per commit, the commits do not wait for flushes", perCommit, syncWord(f))
		return c
	}
	reqMs, okReq := requestMs(f)
	var share float64
	var how string
	bound := ""        // how the prediction is qualified: " (at least)", " (estimate)"
	estimated := false // share is sampled or from the pre-run probe
	switch {
	case f.SyncMs != nil && okReq:
		share = *f.SyncsPerReq * *f.SyncMs / reqMs
		how = fmt.Sprintf("%.2f %s per commit, %.3f ms per sync, = %.0f%% of each request's time (%.3f ms)",
			perCommit, syncWord(f), *f.SyncMs, 100*math.Min(share, 1), reqMs)
	case logDevMeasured(f) && okReq:
		// The log device's own time per flush (and write), measured by
		// the kernel over the run: time a committing session spends
		// waiting off its CPU, so a lower bound of its sync (PostgreSQL
		// at one connection: 62% of a request from write + flush where
		// relaxed durability removed 66%, also saving the sync's CPU;
		// MariaDB: 32% from the flush alone where relaxed, which still
		// writes, removed 40%). Sampled waits, when larger, are named.
		devMs, what, _ := logDeviceSync(f)
		share, bound = *f.SyncsPerReq*devMs/reqMs, " (at least)"
		how = fmt.Sprintf("%.2f %s per commit, %s %.3f ms, ≥ %.0f%% of each request's time (%.3f ms)",
			perCommit, syncWord(f), what, devMs, 100*math.Min(share, 1), reqMs)
		if sh := shares(f.WaitMs); sh != nil && sh[WaitLog] > share {
			how += fmt.Sprintf(" (sampled log-IO waits: %.0f%%)", 100*sh[WaitLog])
		}
	case shares(f.WaitMs) != nil || (f.DeviceSyncMs != nil && *f.DeviceSyncMs > 0 && okReq):
		// Sampled log-IO waits, or ceiling's own flush probe on this
		// host before the run, or both: then the larger. A short run's
		// sampled share is noisy (PostgreSQL at one connection: 31% in a
		// 2 s run, 55-83% in longer ones), and the probe models a
		// buffered write + fdatasync, as PostgreSQL's WAL flush does; the
		// CPU bound below caps either.
		estimated = true
		sh := shares(f.WaitMs)
		waitShare := sh[WaitLog]
		probeShare := -1.0
		if f.DeviceSyncMs != nil && *f.DeviceSyncMs > 0 && okReq {
			probeShare = *f.SyncsPerReq * *f.DeviceSyncMs / reqMs
		}
		if sh == nil || probeShare > waitShare {
			share = probeShare
			how = fmt.Sprintf("%.2f %s per commit, sync latency estimated from a local fsync probe of %.3f ms, ≈ %.0f%% of each request's time (%.3f ms)",
				perCommit, syncWord(f), *f.DeviceSyncMs, 100*math.Min(share, 1), reqMs)
			if waitShare > 0 {
				how += fmt.Sprintf(" (sampled log-IO waits: %.0f%%)", 100*waitShare)
			}
		} else {
			share = waitShare
			how = fmt.Sprintf("%.2f %s per commit; log-IO waits are %.0f%% of the sessions' time (sync latency not measured)",
				perCommit, syncWord(f), 100*share)
		}
	default:
		c.Why = fmt.Sprintf("not applicable: %.2f %s per commit but neither the sync latency, the log device's flushes, the wait times nor a local fsync probe (on the log's file system) were measured", perCommit, syncWord(f))
		return c
	}
	if cpuMs, ok := serverCPUPerReqMs(f); estimated && okReq && ok && share*reqMs > reqMs-cpuMs {
		// Both estimates can exceed the part of a request the server
		// spends off its CPU: PostgreSQL's sampled log-IO share at one
		// connection was 66-83% where relaxed durability's gain put the
		// syncs at 52-57% of a request, and the probe's write + flush
		// can cost more than the server's own flush (MariaDB: a log
		// written with O_DIRECT, whose relaxed mode still writes at
		// commit). It is no strict bound, as the server's CPU includes
		// the syncs' own (PostgreSQL on another day: 96 µs of CPU per
		// request at full durability, 61 µs relaxed, and x2.9 where the
		// bound gave x2.1), so the prediction is called an estimate.
		left := math.Max(reqMs-cpuMs, 0)
		share, bound = left/reqMs, " (estimate)"
		how += fmt.Sprintf(", but the server's CPU takes %.3f ms of each request's %.3f ms: syncs ≈ %.3f ms at most off its CPU, ≈ %.0f%% of its time",
			cpuMs, reqMs, left, 100*share)
	}
	share = math.Min(share, 1)
	if perCommit < MinSyncsPerCommit {
		c.Why = fmt.Sprintf("%.3f %s per commit < %.1f: commits share flushes", perCommit, syncWord(f), MinSyncsPerCommit)
		return c
	}
	if share < MinCommitShare {
		c.Why = fmt.Sprintf("log syncs are %s of each request's time < %.0f%%", pctBelow(100*share, 100*MinCommitShare), 100*MinCommitShare)
		c.near = share / MinCommitShare
		return c
	}
	c.Matched, c.Score, c.Why = true, share, how
	c.Evidence = append(c.Evidence, how)
	if f.RequestsPerSec != nil {
		c.Evidence = append(c.Evidence, fmt.Sprintf("%s req/s with %s: each worker waits for its own log flush on every commit", num(*f.RequestsPerSec), Threads(f.Threads)))
	}
	gain := gainFromShare(share)
	c.Suggestions = append(c.Suggestions, suggest("--durability relaxed"+bound, gain, f))
	// Batching k rows per commit leaves 1/k of the sync time per row
	// (not TPC-C's, whose transactions are set). SQLite's commit does
	// more than sync (it writes the pages it changed to the WAL, which
	// the rows of a batch share), so there the gain is a lower bound:
	// single inserts at full durability, 1 thread, ×4.3 predicted, ×9.4
	// measured with 10 rows a transaction.
	// On a server a batch's explicit BEGIN and COMMIT are two more round
	// trips per batch, each taken as costly as a statement's: PostgreSQL
	// single inserts, 1 connection, sync ≥ 48% of each request: ×1.75
	// predicted without them, ×1.65-1.71 measured; ×1.49 with them.
	if f.FixedTx == "" {
		batchBound, perRow := bound, 1.0
		switch {
		case f.InProcess && bound == "":
			batchBound = " (at least)"
		case !f.InProcess:
			perRow = float64(BatchRows+2) / BatchRows
		}
		c.Suggestions = append(c.Suggestions, batchSuggest(batchBound, 1/((1-share)*perRow+share/BatchRows), f))
	}
	return c
}

// serialSyncShare is the share of the run's time that the log's syncs
// take when one writer at a time commits (SQLite): syncs per second × the
// time of one sync, as the engine timed it.
func serialSyncShare(f Figures) (share float64, how string, ok bool) {
	if f.SyncsPerReq == nil || f.SyncMs == nil || f.RequestsPerSec == nil || *f.SyncsPerReq <= 0 {
		return 0, "", false
	}
	perSec := *f.SyncsPerReq * *f.RequestsPerSec
	share = math.Min(perSec**f.SyncMs/1000, 1)
	how = fmt.Sprintf("the writer holds the lock while its commit syncs the log: %s %s/s × %.3f ms = %.0f%% of the time",
		num(perSec), syncWord(f), *f.SyncMs, 100*share)
	return share, how, true
}

// logSyncBusy is the share of the time the log's syncs kept its device
// busy: syncs per second × (one write + one cache flush), from the
// device's counters over the run. A group commit writes and then flushes
// the log for a whole group, one group after another, so near 100% the
// commits queue for the log.
func logSyncBusy(f Figures) (busy float64, how string, ok bool) {
	if f.SyncsPerReq == nil || f.RequestsPerSec == nil || f.LogDevFlushMs == nil || *f.LogDevFlushMs <= 0 || f.LogDevWriteMs == nil {
		return 0, "", false
	}
	perSec := *f.SyncsPerReq * *f.RequestsPerSec
	busy = perSec * (*f.LogDevWriteMs + *f.LogDevFlushMs) / 1000
	formula := fmt.Sprintf("%s %s/s × (%.3f ms write + %.3f ms flush)", num(perSec), syncWord(f), *f.LogDevWriteMs, *f.LogDevFlushMs)
	how = fmt.Sprintf("the log's syncs kept its device (%s) busy %.0f%% of the time (%s, kernel counters)", f.LogDevName, 100*busy, formula)
	if busy > 1.05 {
		// More than the whole time: the device overlapped some of
		// them, or the count holds other syncs (MariaDB's data-file
		// fsyncs) and the mean write time larger writes.
		how = fmt.Sprintf("the log's syncs kept its device (%s) busy all of the time (%s = %.0f%%, more than the whole: some overlapped; kernel counters)",
			f.LogDevName, formula, 100*busy)
	}
	return busy, how, true
}

// commitsOrOne is the server's commits per request, or one transaction
// per request where it gives no (or no positive) commit count.
func commitsOrOne(f Figures) float64 {
	if f.CommitsPerReq != nil && *f.CommitsPerReq > 0 {
		return *f.CommitsPerReq
	}
	return 1
}

// groupCommitSuggestions: where commits share flushes, each commit still
// waits for at least one sync after its record is written, which relaxed
// durability would remove (the flush alone where the log is written with
// O_DIRECT): a lower bound of the gain.
//
// The device's time per sync is far less than a session's wait for it: a
// session also waits while another's group flushes (PostgreSQL's
// LWLock:WALWrite), and the kernel's fdatasync costs more than the
// device's flush. Where the sessions' sampled log-IO waits are the larger
// share, they give the estimate instead, capped by the server's CPU per
// request. PostgreSQL inserts/deletes at 8 connections: 0.08 ms of
// device time in a 0.365 ms request said ×1.3 at least; log-IO waits 64%
// say ×2.8, and relaxed ran ×2.8 (4 connections: ×2.6 said, ×3.9 ran;
// single inserts at 8: ×3.4 said, ×2.9 ran).
func groupCommitSuggestions(f Figures) []Suggestion {
	var out []Suggestion
	reqMs, okReq := requestMs(f)
	if devMs, _, ok := logDeviceSync(f); ok && okReq && logDevMeasured(f) {
		share := math.Min(commitsOrOne(f)*devMs/reqMs, 1)
		action := "--durability relaxed (at least)"
		if w, ok := sampledLogShare(f, reqMs); ok && w > share {
			share, action = w, "--durability relaxed (estimate, from the sessions' log-IO waits)"
		}
		out = append(out, suggest(action, gainFromShare(share), f))
	}
	return append(out, Suggestion{Action: "a log device with faster cache flushes, or more threads to fill each commit group"})
}

// sampledLogShare is the sessions' sampled log-IO share of their time,
// capped by the part of a request the server spends off its CPU where
// that was measured.
func sampledLogShare(f Figures, reqMs float64) (float64, bool) {
	sh := shares(f.WaitMs)
	if sh == nil || sh[WaitLog] <= 0 {
		return 0, false
	}
	w := sh[WaitLog]
	if cpuMs, ok := serverCPUPerReqMs(f); ok && reqMs > 0 {
		w = math.Min(w, math.Max(reqMs-cpuMs, 0)/reqMs)
	}
	return math.Min(w, 1), true
}

// logDevMeasured says whether the log device's flush time was measured
// over the run (with its write time unless the log is written O_DIRECT).
func logDevMeasured(f Figures) bool {
	return f.LogDevFlushMs != nil && *f.LogDevFlushMs > 0 && (f.LogDirectIO || f.LogDevWriteMs != nil)
}

// logDeviceSync is what one log sync costs on the device, when the server
// does not time its syncs: from the log device's counters over the run
// (a flush, plus a write unless the log is written with O_DIRECT, whose
// write completes before the sync), else ceiling's flush probe (one 4 KiB
// write + fdatasync). what describes the source for the evidence.
func logDeviceSync(f Figures) (ms float64, what string, ok bool) {
	if f.LogDevFlushMs != nil && *f.LogDevFlushMs > 0 {
		if f.LogDirectIO {
			return *f.LogDevFlushMs, fmt.Sprintf("the log is written with O_DIRECT, so a sync waits for the log device's (%s) cache flush alone, measured by the kernel over the run:", f.LogDevName), true
		}
		if f.LogDevWriteMs != nil {
			return *f.LogDevFlushMs + *f.LogDevWriteMs, fmt.Sprintf("sync ≈ one write + one cache flush on the log device (%s), %.3f + %.3f ms measured by the kernel over the run, =",
				f.LogDevName, *f.LogDevWriteMs, *f.LogDevFlushMs), true
		}
	}
	if f.DeviceSyncMs != nil && *f.DeviceSyncMs > 0 {
		return *f.DeviceSyncMs, "sync latency estimated from a local fsync probe of", true
	}
	return 0, "", false
}

// serverCPUPerReqMs is the database server's CPU time per request, ms, when
// it was measured for a server outside ceiling's process.
func serverCPUPerReqMs(f Figures) (float64, bool) {
	if f.InProcess || f.ServerCPUCores == nil || f.RequestsPerSec == nil || *f.RequestsPerSec <= 0 {
		return 0, false
	}
	return 1000 * *f.ServerCPUCores / *f.RequestsPerSec, true
}

// LogRateRule: the log write rate is flat at a level while requests queue
// (a step compared with the next lower rate), or, without steps, the
// sessions mostly wait on log IO although commits share their flushes.
func LogRateRule(f Figures) Candidate {
	c := Candidate{Rule: Rule{Name: LogRate}}
	if f.LogMBPerSec == nil {
		c.Why = "not applicable: log MB/s not measured"
		return c
	}
	sh := shares(f.WaitMs)
	groupCommit := false // commits share flushes, and the log device's counters give their time
	syncBound := false   // … and the log's syncs keep that device busy
	logShare, viaLock := sqliteLogShare(f, sh)
	score := 0.75
	if sh != nil {
		score = math.Max(logShare, 0.5)
	}
	notFlat := "" // why a step's log rate is not flat against the step below
	// Requests that wait for SQLite's one writer while it writes the log
	// queue for the log, in the database rather than in ceiling's
	// schedule.
	if f.OpenLoop && f.LatePct != nil && *f.LatePct <= MinLatePct && !queuedForWorkers(f) && viaLock < MinLockShare {
		// A step that kept up with its rate, with or without one below
		// it to compare: the log set no ceiling on it, whatever share
		// of its sessions' time went to log IO (the wait shares say;
		// commit-flush names a flush per commit). PostgreSQL updates at
		// 10/s, 8 threads: log-IO waits 60% at 0.03 MB/s.
		c.Why = fmt.Sprintf("late %.1f%% ≤ %g%%: requests do not queue", *f.LatePct, MinLatePct)
		return c
	}
	if f.OpenLoop && f.PrevLogMBPerSec != nil && f.LatePct != nil {
		if busy, _, ok := workersBound(f); ok {
			// The requests queued for ceiling's workers, not in the
			// database: its log rate follows the workers' pace.
			c.Why = fmt.Sprintf("requests queued for ceiling's %s (busy %.0f%%), not in the database: a flat log rate says nothing of the log", WorkersText(f.Threads), 100*busy)
			return c
		}
		if *f.PrevLogMBPerSec > 0 && *f.LogMBPerSec > 0 {
			change := *f.LogMBPerSec / *f.PrevLogMBPerSec - 1
			flat := math.Abs(change) <= MaxLogRateChange
			deviceIdle := f.LogDevBusy != nil && *f.LogDevBusy < MinLogBusy
			logWait := sh != nil && sh[WaitLog] >= MinLogWaitShare
			groupWait := logWait && f.CommitsWait != nil && *f.CommitsWait &&
				f.SyncsPerReq != nil && *f.SyncsPerReq/commitsOrOne(f) < MinSyncsPerCommit
			switch {
			case f.RateRise != nil && *f.RateRise < MinFlatRateRise:
				// Knee probes close together: a log rate that rose
				// about as little as the rate asked for is not flat.
				notFlat = fmt.Sprintf("the rate asked for rose only ×%.2f over the previous step's: too little to call the log rate (%+.0f%%) flat", *f.RateRise, 100*change)
			case flat && deviceIdle && groupWait:
				// Flat, and the sessions wait on the log, but for
				// flushes they share while the device is mostly idle:
				// flush latency and the number of sessions set the pace,
				// not the log's write rate.
				c.Matched, c.Score = true, sh[WaitLog]
				c.Why = fmt.Sprintf("log %.2f MB/s, flat (%+.0f%%) against the previous step's %.2f MB/s while requests queued, with its device (%s) busy only %.0f%%: the sessions wait for flushes they share (log-IO waits %.0f%% of their time, %.2f %s per commit), so flush latency and the number of sessions set the pace, not the log's write rate",
					*f.LogMBPerSec, 100*change, *f.PrevLogMBPerSec, f.LogDevName, 100**f.LogDevBusy, 100*sh[WaitLog], *f.SyncsPerReq/commitsOrOne(f), syncWord(f))
				groupCommit, syncBound = true, true
			case flat && deviceIdle && !logWait:
				// The log rate stopped rising, but its device was mostly
				// idle and the sessions did not wait on it: whatever
				// capped the requests capped the log with them.
				notFlat = fmt.Sprintf("log %.2f MB/s, flat (%+.0f%%) against the previous step's %.2f MB/s, but its device (%s) was busy only %s of the time (< %.0f%%): the log did not cap the rate",
					*f.LogMBPerSec, 100*change, *f.PrevLogMBPerSec, f.LogDevName, pctBelow(100**f.LogDevBusy, 100*MinLogBusy), 100*MinLogBusy)
			case flat:
				c.Matched, c.Score = true, score
				c.Why = fmt.Sprintf("log %.2f MB/s, flat (%+.0f%%) against the previous step's %.2f MB/s while %.1f%% of requests were late",
					*f.LogMBPerSec, 100*change, *f.PrevLogMBPerSec, *f.LatePct)
			default:
				notFlat = fmt.Sprintf("log %.2f MB/s vs %.2f MB/s at the previous step (%+.0f%%): not flat", *f.LogMBPerSec, *f.PrevLogMBPerSec, 100*change)
			}
		} else {
			notFlat = "no log writes"
		}
	}
	if !c.Matched {
		// Without a flat log rate (or a step to compare with), the
		// sessions' log-IO waits or the log device kept busy by the
		// log's syncs can still show it.
		busyLog, busyHow, okBusy := logSyncBusy(f)
		if f.CommitsWait == nil || !*f.CommitsWait {
			// Commits that do not wait for the flushes (SQLite at
			// NORMAL: the syncs are its checkpoints') queue for nothing
			// there.
			okBusy = false
		}
		if okBusy && f.OpenLoop && (f.LatePct == nil || *f.LatePct <= MinLatePct) && !queuedForWorkers(f) {
			// A scheduled rate that the server keeps up with: a busy
			// device is no ceiling while requests do not queue.
			okBusy = false
		}
		waitOK := sh != nil && logShare >= MinLogWaitShare
		switch {
		case sh == nil && !okBusy:
			c.Why = "not applicable: needs a previous step, wait times or the log device's counters"
			if notFlat != "" {
				c.Why = notFlat
			}
			return c
		case !waitOK && !(okBusy && busyLog >= MinLogBusy):
			var parts []string
			if notFlat != "" {
				parts = append(parts, notFlat)
			}
			if sh != nil {
				parts = append(parts, fmt.Sprintf("log-IO waits %s of the sessions' time < %.0f%%", pctBelow(100*logShare, 100*MinLogWaitShare), 100*MinLogWaitShare))
				c.near = logShare / MinLogWaitShare
			}
			if okBusy {
				parts = append(parts, fmt.Sprintf("the log's syncs kept its device busy %.3g%% of the time < %.0f%%", 100*busyLog, 100*MinLogBusy))
				c.near = math.Max(c.near, busyLog/MinLogBusy)
			}
			if notFlat != "" {
				c.near = 0 // a step whose log rate is not flat is no near miss
			}
			c.Why = strings.Join(parts, "; ")
			return c
		}
		if f.SyncsPerReq != nil {
			if *f.SyncsPerReq/commitsOrOne(f) >= MinSyncsPerCommit {
				c.Why = "log-IO waits dominate but every commit flushes: see commit-flush"
				return c
			}
		}
		c.Matched = true
		var parts []string
		if waitOK {
			c.Score = logShare
			if viaLock >= 0.005 { // what prints as 0% is left out
				parts = append(parts, fmt.Sprintf("log-IO waits are %.0f%% of the sessions' time, and waits for SQLite's one writer while it wrote the log another %.0f%%", 100*sh[WaitLog], 100*viaLock))
			} else {
				parts = append(parts, fmt.Sprintf("log-IO waits are %.0f%% of the sessions' time", 100*sh[WaitLog]))
			}
		}
		if okBusy && busyLog >= MinLogBusy {
			c.Score = math.Max(c.Score, math.Min(busyLog, 1))
			parts = append(parts, busyHow+",")
		}
		c.Why = fmt.Sprintf("log %.2f MB/s; %s although commits share their flushes", *f.LogMBPerSec, strings.Join(parts, "; "))
		groupCommit, syncBound = okBusy, okBusy && busyLog >= MinLogBusy
	}
	c.Evidence = append(c.Evidence, c.Why)
	if f.RequestsPerSec != nil && *f.RequestsPerSec > 0 {
		c.Evidence = append(c.Evidence, fmt.Sprintf("%.0f log bytes per request at %s req/s", *f.LogMBPerSec*(1<<20) / *f.RequestsPerSec, num(*f.RequestsPerSec)))
	}
	if f.LogMBLimit != nil && *f.LogMBPerSec >= MinLimitShare**f.LogMBLimit {
		c.Evidence = append(c.Evidence, fmt.Sprintf("log at %.3f MiB/s: the %g MiB/s limit of %s, held by --emulate", *f.LogMBPerSec, *f.LogMBLimit, f.Profile))
	}
	if groupCommit {
		c.Suggestions = append(c.Suggestions, groupCommitSuggestions(f)...)
	}
	if syncBound {
		// Commits queue for the log's syncs, not for its bytes: a faster
		// flush, relaxed durability or bigger groups move the ceiling.
		return c
	}
	if f.LogDevBusy != nil && *f.LogDevBusy < MinLogBusy {
		// The log's device had time to spare: a higher write rate is
		// not what it lacks.
		return c
	}
	c.Suggestions = append(c.Suggestions,
		Suggestion{Action: "a tier or disk with a higher log write rate (throughput scales with it)"},
		Suggestion{Action: "fewer log bytes per request (smaller rows, fewer indexes)"})
	return c
}

// StorageQueueRule: data-file IOs take far longer than the device needs:
// they queue (e.g. behind a per-file IOPS limit).
func StorageQueueRule(f Figures) Candidate {
	c := Candidate{Rule: Rule{Name: StorageQueue}}
	if f.DataLatencyMs == nil || f.DeviceLatencyMs == nil || *f.DeviceLatencyMs <= 0 {
		c.Why = "not applicable: data-file or device latency not known"
		return c
	}
	factor := *f.DataLatencyMs / *f.DeviceLatencyMs
	if factor < MinQueueFactor {
		c.Why = fmt.Sprintf("data-file latency %s ms is %.1f× the device's %s ms < %g×", MsText(*f.DataLatencyMs), factor, MsText(*f.DeviceLatencyMs), MinQueueFactor)
		return c
	}
	score := 1 - 1/factor
	sh := shares(f.WaitMs)
	dataShare, viaLock := sqliteHolderShare(f, sh, sh[WaitDataRead]+sh[WaitDataWrite], MinHolderDataShare)
	if sh != nil {
		score *= dataShare
	}
	c.Matched, c.Score = true, score
	c.Why = fmt.Sprintf("data-file latency %s ms = %.0f× the device's %s ms: IOs queue", MsText(*f.DataLatencyMs), factor, MsText(*f.DeviceLatencyMs))
	c.Evidence = append(c.Evidence, c.Why)
	if viaLock >= 0.005 {
		c.Evidence = append(c.Evidence, fmt.Sprintf("data-file IO waits are %.0f%% of the sessions' time, and waits for SQLite's one writer while it waited on the data file another %.0f%%", 100*(dataShare-viaLock), 100*viaLock))
	}
	switch {
	case f.DataIOPS != nil && f.DataIOPSLimit != nil && *f.DataIOPS >= MinLimitShare**f.DataIOPSLimit:
		c.Evidence = append(c.Evidence, fmt.Sprintf("data files at %.0f IOPS: the %.0f IOPS limit of %s, held by --emulate", *f.DataIOPS, *f.DataIOPSLimit, f.Profile))
	case f.DataMBPerSec != nil && f.DataMBLimit != nil && *f.DataMBPerSec >= MinLimitShare**f.DataMBLimit:
		c.Evidence = append(c.Evidence, fmt.Sprintf("data files at %.2f MiB/s: the %g MiB/s limit of %s, held by --emulate", *f.DataMBPerSec, *f.DataMBLimit, f.Profile))
	case f.DataIOPS != nil:
		c.Evidence = append(c.Evidence, fmt.Sprintf("data files at %.0f IOPS: likely the file's IOPS limit", *f.DataIOPS))
	}
	c.Suggestions = append(c.Suggestions, Suggestion{Action: "a bigger file class (pre-allocate the data file to the next size class) or faster storage for more IOPS"})
	return c
}

// MemoryRule: many requests read from disk because the cache misses.
func MemoryRule(f Figures) Candidate {
	c := Candidate{Rule: Rule{Name: Memory}}
	if f.CacheHitRatio == nil || f.DataReadsPerReq == nil {
		c.Why = "not applicable: cache hit ratio or data reads not measured"
		return c
	}
	readShare, readHow, timed := diskReadShare(f)
	if sh := shares(f.WaitMs); sh != nil {
		// The sessions' own timing of their data-file reads decides
		// where it is measured: it holds what the device's service
		// time leaves out (the system call, finding a free page for
		// the read), and leaves out the reads the engine made ahead
		// of them in the background (a scan's read-ahead: 4,134 device
		// reads of 0.815 ms per 760 ms scan, 4% of the sessions' time).
		readShare, timed = sh[WaitDataRead], true
		readHow = fmt.Sprintf("data-read waits %.0f%% of the sessions' time", 100*readShare)
	}
	if *f.CacheHitRatio >= MaxCacheHitRatio || *f.DataReadsPerReq <= MinDataReadsPerReq && (!timed || readShare < MinDiskReadShare) {
		c.Why = fmt.Sprintf("cache hit ratio %.3f, %.2f data reads per request (memory bound needs < %g and > %g)",
			*f.CacheHitRatio, *f.DataReadsPerReq, MaxCacheHitRatio, MinDataReadsPerReq)
		if timed {
			c.Why += fmt.Sprintf("; %s < %.0f%%", readHow, 100*MinDiskReadShare)
			if *f.CacheHitRatio < MaxCacheHitRatio {
				c.near = readShare / MinDiskReadShare
			}
		}
		return c
	}
	if share, ok := osCacheShare(f); ok && share >= MinOSCacheShare {
		// The server's cache missed, but the OS's page cache did not:
		// the reads cost a system call and a copy each (CPU), not a
		// wait for the disk. PostgreSQL range selects on 800,000 rows
		// (shared_buffers 128 MB): hit ratio 0.379, 28 reads per
		// request, 1 device read a second.
		c.Why = fmt.Sprintf("cache hit ratio %.3f, %.2f data reads per request, but the OS's page cache served %.1f%% of the bytes read (the device holding the data, %s, read %.2f of the server's %.2f MB/s); memory bound needs them from the disk",
			*f.CacheHitRatio, *f.DataReadsPerReq, 100*share, f.LogDevName, *f.LogDevReadMBPerSec, *f.DataReadMBPerSec)
		return c
	}
	if *f.DataReadsPerReq <= MinDataReadsPerReq {
		// Fewer reads, but slow ones: the disk's read time is a large
		// share of each request's.
		c.Matched, c.Score = true, math.Min(readShare, 1)
		c.Why = fmt.Sprintf("cache hit ratio %.3f, %.2f data reads per request; %s ≥ %.0f%%", *f.CacheHitRatio, *f.DataReadsPerReq, readHow, 100*MinDiskReadShare)
		c.Evidence = append(c.Evidence, c.Why)
		action, gain := "more memory for the cache, or a smaller working set (at best, the disk reads' time saved)", 1/(1-math.Min(readShare, 0.9))
		if b := busy(f); b != nil && *b > 0 && gain > 1 / *b {
			// Requests that no longer wait for the disk still need
			// the cores, and most of them are busy already.
			gain = math.Max(1, 1 / *b)
			action = fmt.Sprintf("more memory for the cache, or a smaller working set (at best until the cores, %.0f%% busy now, are full)", 100**b)
		}
		c.Suggestions = append(c.Suggestions, suggest(action, gain, f), fasterReads(readShare, f))
		return c
	}
	score := 1 - *f.CacheHitRatio
	if sh := shares(f.WaitMs); sh != nil {
		score = sh[WaitDataRead]
	}
	c.Matched, c.Score = true, score
	c.Why = fmt.Sprintf("cache hit ratio %.3f, %.2f data reads per request that the server's cache missed", *f.CacheHitRatio, *f.DataReadsPerReq)
	if timed {
		c.Why += "; " + readHow
	}
	c.Evidence = append(c.Evidence, c.Why)
	c.Suggestions = append(c.Suggestions, Suggestion{Action: "more memory for the cache, or a smaller working set"})
	if timed && readShare > 0 {
		c.Suggestions = append(c.Suggestions, fasterReads(readShare, f))
	}
	return c
}

// fasterReads suggests a disk whose reads take half the time, where they
// are share of each request's: at best that half saved, and no more than
// the cores leave (busy now at b, the requests need them still).
func fasterReads(share float64, f Figures) Suggestion {
	share = math.Min(share, 0.9)
	if share <= 0 {
		return Suggestion{Action: "a disk with faster reads"}
	}
	action, gain := "a disk with reads twice as fast (at best half the reads' time saved)", 1/(1-share/2)
	if b := busy(f); b != nil && *b > 0 && gain > 1 / *b {
		gain = math.Max(1, 1 / *b)
		action = fmt.Sprintf("a disk with reads twice as fast (at best until the cores, %.0f%% busy now, are full)", 100**b)
	}
	return suggest(action, gain, f)
}

// MinOSCacheShare is the share of the server's data reads (bytes) that
// the OS's page cache must have served for the memory rule to leave them
// out: reads from it are no disk wait.
const MinOSCacheShare = 0.9

// osCacheShare is the share of the server's data-file reads (bytes) that
// did not reach the device holding the data files: the OS's page cache
// served them. ok is false unless the data files are on the log's device,
// its counters are known and the server read at least 1 MiB/s.
func osCacheShare(f Figures) (float64, bool) {
	if !f.DataOnLogDev || f.LogDevReadMBPerSec == nil || f.DataReadMBPerSec == nil || *f.DataReadMBPerSec < 1 {
		return 0, false
	}
	return math.Max(0, 1 - *f.LogDevReadMBPerSec / *f.DataReadMBPerSec), true
}

// diskReadShare estimates the share of each request's time spent reading
// from the disk: the server's data reads per request that reached the
// device (at most the device's reads per request, which tells reads served
// by the OS cache apart), times the device's mean read time, over the time
// one worker spends per request. ok is false without the device's figures.
func diskReadShare(f Figures) (share float64, how string, ok bool) {
	if f.LogDevReadMs == nil || f.LogDevReadsPerSec == nil || f.RequestsPerSec == nil || *f.RequestsPerSec <= 0 || f.DataReadsPerReq == nil {
		return 0, "", false
	}
	reqMs, okReq := requestMs(f)
	if !okReq || reqMs <= 0 {
		return 0, "", false
	}
	perReq := math.Min(*f.DataReadsPerReq, *f.LogDevReadsPerSec / *f.RequestsPerSec)
	share = perReq * *f.LogDevReadMs / reqMs
	how = fmt.Sprintf("%.2f of them from the disk (%s) at %.3f ms each: %.0f%% of each request's time (%.3f ms)",
		perReq, f.LogDevName, *f.LogDevReadMs, 100*math.Min(share, 1), reqMs)
	if share > 1.05 {
		// One after another they would take longer than the request:
		// they overlapped (read-ahead, several reads in flight).
		how = fmt.Sprintf("%.2f of them from the disk (%s) at %.3f ms each: more than each request's time (%.3f ms), so they overlapped",
			perReq, f.LogDevName, *f.LogDevReadMs, reqMs)
	}
	return share, how, true
}

// busy is the busy fraction of the server's cores: the higher of the
// server processes' CPU and the host's, or nil.
func busy(f Figures) *float64 {
	if f.InProcess {
		if f.ClientCPUPct == nil {
			return nil
		}
		v := *f.ClientCPUPct / 100
		return &v
	}
	var b *float64
	if f.ServerCPUCores != nil && f.Cores != nil && *f.Cores > 0 {
		v := *f.ServerCPUCores / *f.Cores
		b = &v
	}
	if f.HostBusy != nil && (b == nil || *f.HostBusy > *b) {
		v := *f.HostBusy
		b = &v
	}
	return b
}

// cpuWhose names what busy measured: the server's processes, or the whole
// host of a local server (ceiling and other processes included) where that
// was the higher figure.
func cpuWhose(f Figures, b float64) string {
	if f.HostBusy != nil && *f.HostBusy == b && (f.ServerCPUCores == nil || f.Cores == nil || *f.ServerCPUCores / *f.Cores < b) {
		return "server host's"
	}
	return "server's"
}

// MaxCoresPerSession is how many busy cores per session still read as
// "one core per session" (the rest: a little work of other processes).
const MaxCoresPerSession = 1.2

// MinHolderLogShare is the share of its time SQLite's one writer must
// spend on log IO for the other writers' waits for its lock to count as
// waits for the log (log-rate rule). Measured: 4 writers under an
// emulated 0.36 MiB/s log, 0.73-0.89 (the lock's waits include the busy
// handler's sleeps past the lock's release); the README's main job, log
// 0.45 of the holder's time; inserts mostly on CPU, 0.31.
const MinHolderLogShare = 0.6

// MinHolderDataShare is the share of its time SQLite's one writer must
// spend waiting on the data file for the other writers' waits for its lock
// to count as waits for the data file (storage-queue rule). Measured:
// 4 writers of updates on 200,000 rows under an emulated 500 IOPS data
// file, 0.78.
const MinHolderDataShare = 0.6

// MinLimitShare is how close to an emulated limit a rate must be to be
// said to be held at it.
const MinLimitShare = 0.9

// sqliteHolderShare is share (a wait category's share of the sessions'
// time) with the waits for SQLite's lock added in the share the holder
// spends in that category, when it spends at least minHolder there, and
// that added part (viaLock; 0 for a server). See sqliteLogShare.
func sqliteHolderShare(f Figures, sh map[string]float64, share, minHolder float64) (total, viaLock float64) {
	if sh == nil {
		return share, 0
	}
	if f.InProcess && sh[WaitLock] > 0 && sh[WaitLock] < 1 {
		if holder := share / (1 - sh[WaitLock]); holder >= minHolder {
			viaLock = sh[WaitLock] * holder
		}
	}
	return share + viaLock, viaLock
}

// sqliteLogShare is the sessions' log-IO wait share, and the part of it
// that is waits for SQLite's lock while its holder writes the log
// (viaLock; 0 for a server). SQLite takes one writer at a time: the
// sessions waiting for its lock wait for the writer holding it, whose
// time is the rest of theirs, so they wait for the log in the share the
// holder does (a log held to an emulated rate: half the time writing it,
// half waiting for the writer). Only where the holder mostly waits on the
// log: a holder busy with other work too is SQLite's one writer at work,
// the contention rule's case.
func sqliteLogShare(f Figures, sh map[string]float64) (logShare, viaLock float64) {
	if sh == nil {
		return 0, 0
	}
	return sqliteHolderShare(f, sh, sh[WaitLog], MinHolderLogShare)
}

// CPURule: the server's cores are (nearly) all busy.
func CPURule(f Figures) Candidate {
	c := Candidate{Rule: Rule{Name: CPU}}
	b := busy(f)
	if b == nil {
		c.Why = "not applicable: server CPU not measured"
		return c
	}
	sh := shares(f.WaitMs)
	switch {
	case *b >= MinCPUBusy && f.InProcess:
		c.Why = fmt.Sprintf("ceiling with the embedded engine uses %.0f%% of the cores ≥ %.0f%%", 100**b, 100*MinCPUBusy)
	case *b >= MinCPUBusy:
		c.Why = fmt.Sprintf("CPU %.0f%% of the %s cores ≥ %.0f%%", 100**b, cpuWhose(f, *b), 100*MinCPUBusy)
	case !f.InProcess && sh != nil && sh[WaitCPU] >= MinCPUWaitShare && f.HostBusy != nil && *f.HostBusy >= MinHostBusyWithWait:
		c.Why = fmt.Sprintf("sessions on CPU %.0f%% of their time, host %.0f%% busy", 100*sh[WaitCPU], 100**f.HostBusy)
	case sh != nil && sh[WaitCPU] >= MinCPUWaitShare && f.Cores != nil && f.Threads > 0 &&
		float64(f.Threads) < *f.Cores && *b**f.Cores >= MinHostBusyWithWait*float64(f.Threads):
		// Fewer sessions than cores, each on CPU most of its time, and
		// the host busy for about as many cores as there are sessions:
		// each session is bound by one core.
		busyCores := *b * *f.Cores
		each := fmt.Sprintf("each of the %d sessions is", f.Threads)
		if f.Threads == 1 {
			each = "the one session is"
		}
		c.Why = fmt.Sprintf("%s on CPU %.0f%% of its time and keeps %.1f of the %.0f cores busy: bound by one core per session",
			each, 100*sh[WaitCPU], busyCores, *f.Cores)
		if busyCores > MaxCoresPerSession*float64(f.Threads) {
			// More cores busy than sessions: the server's parallel
			// workers (a PostgreSQL scan), or other processes (ceiling
			// on the server's host): not one core per session.
			c.Why = fmt.Sprintf("%s on CPU %.0f%% of its time, and %.1f of the %.0f cores are busy, more than one per session (the server's parallel workers, or other processes, ceiling's included): CPU-bound with %.1f cores to spare",
				each, 100*sh[WaitCPU], busyCores, *f.Cores, *f.Cores-busyCores)
		}
		c.Matched, c.Score = true, sh[WaitCPU]
		c.Evidence = append(c.Evidence, c.Why)
		if oneWriter(f) {
			// Writes to the embedded engine: a second thread would wait
			// for the one write lock, not use the idle core (single
			// inserts: +4% at 2 threads).
			action := "several rows per transaction, which spreads each commit's work over its rows: SQLite takes one writer at a time, so more threads (-c) would wait on its write lock, not use the idle cores (gain not predicted)"
			switch {
			case f.FixedTx != "":
				action = fixedTxAction(f)
			case f.RowsPerTx != nil && *f.RowsPerTx >= BatchRows:
				// Already many rows per commit: the rows' own work is
				// the one core's.
				action = fmt.Sprintf("a faster core: SQLite takes one writer at a time, so more threads (-c) would wait on its write lock, not use the idle cores, and these transactions already write %s rows each (gain not predicted)", Thousands(math.Round(*f.RowsPerTx)))
			}
			c.Suggestions = append(c.Suggestions, Suggestion{Action: action})
			return c
		}
		// At best the idle cores' share: the cores ÷ the busy ones
		// (more sessions use them, and the CPU already busy with them).
		gain := math.Min(*f.Cores/float64(f.Threads), *f.Cores/busyCores)
		c.Suggestions = append(c.Suggestions, suggest(fmt.Sprintf("%.0f threads, one per core, where the engine runs them concurrently (at best the idle cores' share)", *f.Cores),
			gain, f))
		return c
	default:
		c.Why = fmt.Sprintf("CPU %s of the %s cores < %.0f%%", pctBelow(100**b, 100*MinCPUBusy), cpuWhose(f, *b), 100*MinCPUBusy)
		if p := pressureText(f); p != "" {
			// Below the threshold, tasks may still have queued for
			// a core: what a latency objective feels first.
			c.Why += "; " + p
		}
		c.near = *b / MinCPUBusy
		return c
	}
	c.Matched, c.Score = true, math.Min(*b, 1)
	c.Evidence = append(c.Evidence, c.Why)
	if p := pressureText(f); p != "" {
		c.Evidence = append(c.Evidence, p)
	}
	if f.ServerCPUCores != nil && f.RequestsPerSec != nil && *f.RequestsPerSec > 0 {
		c.Evidence = append(c.Evidence, fmt.Sprintf("%.0f µs of server CPU per request", 1e6**f.ServerCPUCores / *f.RequestsPerSec))
	}
	server, client, other, split := hostSplit(f)
	if split && other >= MinOtherCPU {
		// Much of the busy CPU is neither the server's nor ceiling's:
		// the database shares its host with other work.
		msg := fmt.Sprintf("of the host's %.0f%% busy, the server's processes use %.0f%%, ceiling %.0f%% and other processes %.0f%%",
			100**f.HostBusy, 100*server, 100*client, 100*other)
		if f.ForeignCPUCores != nil && *f.ForeignCPUCores / *f.Cores >= 0.01 {
			msg += fmt.Sprintf(" (of which the server's backends for other sessions %.0f%%)", 100**f.ForeignCPUCores / *f.Cores)
		}
		c.Evidence = append(c.Evidence, msg)
		c.Score = math.Min(c.Score, 1-other)
		c.Suggestions = append(c.Suggestions, suggest(fmt.Sprintf("stopping the other work on this host, %.0f%% of its cores (at best)", 100*other), 1/(1-other), f))
	}
	if split && client >= MinClientHostCPU && server > 0 {
		// ceiling runs on the server's host and takes part of the cores
		// that are the limit: a load generator on another host leaves
		// them to the server. At best the server then does as much more
		// work as the cores it gains, at its measured CPU per request.
		if other < MinOtherCPU {
			c.Evidence = append(c.Evidence, fmt.Sprintf("ceiling runs on the server's host and uses %.0f%% of its cores, the server's processes %.0f%%: part of the limit is the load generator's",
				100*client, 100*server))
		}
		c.Suggestions = append(c.Suggestions, suggest(fmt.Sprintf("ceiling on another host, which leaves the server the %.0f%% of the cores ceiling uses here (at best)", 100*client),
			(server+client)/server, f))
	}
	if s, ok := flushWaitsUnderCPU(f, sh); ok {
		c.Suggestions = append(c.Suggestions, s)
	}
	// Throughput proportional to the cores, at best.
	c.Suggestions = append(c.Suggestions, suggest("twice the cores (at best proportional)", 2, f))
	if !f.InProcess {
		c.Evidence, c.Suggestions = tlsCost(f, c.Evidence, c.Suggestions)
	}
	return c
}

// flushWaitsUnderCPU: cores that are the limit while the sessions also
// spend most of their time waiting for log flushes at commit. The syncs,
// and the sleeps and wake-ups of the sessions that wait for them, cost
// the server CPU that relaxed durability frees: PostgreSQL inserts/deletes
// at 16 connections on 2 cores, "cpu" at 89% with 59% log-IO waits, 47 µs
// of server CPU per request; relaxed then ran ×2.15 at 23 µs, more than
// twice the cores' ×2 at best. How much CPU the flushes cost is not
// measured, so no gain is predicted.
func flushWaitsUnderCPU(f Figures, sh map[string]float64) (Suggestion, bool) {
	if sh == nil || sh[WaitLog] < MinLogWaitShare || f.CommitsWait == nil || !*f.CommitsWait ||
		f.SyncsPerReq == nil || *f.SyncsPerReq/commitsOrOne(f) < 0.001 {
		return Suggestion{}, false
	}
	return Suggestion{Action: fmt.Sprintf("--durability relaxed: the sessions also waited for log flushes %.0f%% of their time, and the syncs and those waits cost CPU that relaxed durability frees (gain not predicted: that CPU is not measured apart)", 100*sh[WaitLog])}, true
}

// tlsCost adds, for encrypted connections, that encryption is part of the
// CPU on both sides, and the suggestion to connect without it where the
// network is trusted. The gain is not measured by the run, so none is
// predicted (on this project's 2-core VM, PostgreSQL single inserts: 36%
// more server CPU per request and 26% fewer requests/s with TLS 1.3 over
// loopback than without).
func tlsCost(f Figures, ev []string, sug []Suggestion) ([]string, []Suggestion) {
	if f.TLS == "" {
		return ev, sug
	}
	ev = append(ev, fmt.Sprintf("the connections are encrypted (%s): every request and reply is encrypted and decrypted, by the server and by ceiling", f.TLS))
	how := ""
	if f.TLSOff != "" {
		how = " (" + f.TLSOff + ")"
	}
	return ev, append(sug, Suggestion{Action: "unencrypted connections where the network is trusted" + how + ": TLS costs CPU on both sides (gain not measured here: compare with a run without it)"})
}

// MinOtherCPU is the share of the host's cores used by processes other
// than the server's and ceiling's above which the CPU verdict says so.
const MinOtherCPU = 0.25

// MinClientHostCPU is the share of a local server's host cores used by
// ceiling itself above which the CPU verdict says so and suggests running
// ceiling from another host.
const MinClientHostCPU = 0.15

// pressureText is the host's CPU pressure in words, "" when not measured:
// the share of the time some runnable task waited for a core (Linux PSI).
// With the server's threads' own waits for a core (run-queue time), it
// adds them per request: the host's pressure counts ceiling's threads and
// other processes' too. Evidence only: no threshold on either is
// calibrated (PostgreSQL inserts/deletes, 8 workers, open loop: 0.10 ms
// per request at 12,000/s with the host 66% busy, 0.11 ms at 20,000/s and
// 81%).
func pressureText(f Figures) string {
	var parts []string
	if f.CPUPressure != nil {
		parts = append(parts, fmt.Sprintf("runnable tasks waited for a core %.0f%% of the time (the host's CPU pressure)", 100**f.CPUPressure))
	}
	if f.ServerRunQueueMsPerReq != nil {
		rq := fmt.Sprintf("the server's threads waited for a core %s ms per request", MsText(*f.ServerRunQueueMsPerReq))
		if reqMs, ok := requestMs(f); ok {
			rq += fmt.Sprintf(" (runnable, not running; a request takes %s ms)", MsText(reqMs))
		}
		parts = append(parts, rq)
	}
	return strings.Join(parts, "; ")
}

// hostSplit splits the host's busy CPU (fractions of all its cores) into
// the server's processes, ceiling's and the rest, where all three were
// measured on the same host (a local server).
func hostSplit(f Figures) (server, client, other float64, ok bool) {
	if f.InProcess || f.ServerCPUCores == nil || f.Cores == nil || *f.Cores <= 0 || f.HostBusy == nil || f.ClientCPUPct == nil {
		return 0, 0, 0, false
	}
	server = *f.ServerCPUCores / *f.Cores
	client = *f.ClientCPUPct / 100
	return server, client, max(*f.HostBusy-server-client, 0), true
}

// rowLockHow says where RowLockShare comes from.
const rowLockHow = "the server's row-lock wait time, all sessions', over the workers' time: no per-session waits sampled"

// ContentionRule: sessions mostly wait for locks (or SQLite's busy lock).
func ContentionRule(f Figures) Candidate {
	c := Candidate{Rule: Rule{Name: Contention}}
	sh := shares(f.WaitMs)
	switch {
	case sh != nil && sh[WaitLock] >= MinLockShare:
		c.Matched, c.Score = true, sh[WaitLock]
		c.Why = fmt.Sprintf("lock waits are %.0f%% of the sessions' time ≥ %.0f%%", 100*sh[WaitLock], 100*MinLockShare)
	case sh == nil && f.RowLockShare != nil && *f.RowLockShare >= MinLockShare:
		c.Matched, c.Score = true, math.Min(*f.RowLockShare, 1)
		c.Why = fmt.Sprintf("row-lock waits are %.0f%% of the sessions' time ≥ %.0f%% (%s)", 100**f.RowLockShare, 100*MinLockShare, rowLockHow)
	case f.BusyWaitsPerReq != nil && *f.BusyWaitsPerReq >= MinBusyWaitsPerReq && f.Threads > 1:
		c.Matched, c.Score = true, math.Min(*f.BusyWaitsPerReq, 0.8)
		c.Why = fmt.Sprintf("%.2f busy waits per request with %d writers ≥ %g", *f.BusyWaitsPerReq, f.Threads, MinBusyWaitsPerReq)
	case sh == nil && f.BusyWaitsPerReq == nil && f.RowLockShare == nil:
		c.Why = "not applicable: lock waits not measured"
		return c
	default:
		c.Why = "lock waits low"
		switch {
		case sh != nil:
			c.Why = fmt.Sprintf("lock waits are %s of the sessions' time < %.0f%%", pctBelow(100*sh[WaitLock], 100*MinLockShare), 100*MinLockShare)
			c.near = sh[WaitLock] / MinLockShare
		case f.RowLockShare != nil:
			c.Why = fmt.Sprintf("row-lock waits are %s of the sessions' time < %.0f%% (%s)", pctBelow(100**f.RowLockShare, 100*MinLockShare), 100*MinLockShare, rowLockHow)
			c.near = *f.RowLockShare / MinLockShare
		}
		return c
	}
	where, hottest := lockTablesText(f.LockTables)
	routine := strings.HasSuffix(hottest, "()")
	switch {
	case routine:
		// A routine's call waited (TPC-C --procedures on PostgreSQL:
		// SELECT * FROM ceiling_tpcc_delivery(…)): the sample shows
		// the call, not the table its statement waited on.
		c.Why += fmt.Sprintf(", most in calls of the routine %s (%.0f%% of those seen; which of its tables, the sample does not show)", hottest, 100*f.LockTables[0].Share)
	case hottest != "":
		// Also on the runner-up line, when another rule wins.
		c.Why += fmt.Sprintf(", most on %s (%.0f%% of those seen)", hottest, 100*f.LockTables[0].Share)
	}
	c.Evidence = append(c.Evidence, c.Why)
	if len(f.LockTables) > 1 {
		c.Evidence = append(c.Evidence, "the lock waits seen were on "+where+" (by the table of the waiting statement or lock)")
	}
	for _, k := range []string{"lock_timeout", "serialization"} {
		if n := f.ErrorsByClass[k]; n > 0 {
			c.Evidence = append(c.Evidence, fmt.Sprintf("%d %s errors", n, k))
		}
	}
	deadlocks := f.Deadlock && f.ErrorsByClass["serialization"] > 0
	if deadlocks {
		c.Evidence = append(c.Evidence, deadlockEvidence(f))
	}
	if f.InProcess {
		// SQLite: one writer at a time for the whole database, which it
		// holds while its commit syncs the log. The syncs' share of the
		// run's time is time no other writer can use; relaxed durability
		// (or batching) frees it: a lower bound of the gain, as the
		// lock's hand-offs shrink too (4 writers: x9 measured).
		if share, how, ok := serialSyncShare(f); ok && f.CommitsWait != nil && *f.CommitsWait {
			c.Evidence = append(c.Evidence, how)
			if share >= MinCommitShare {
				c.Suggestions = append(c.Suggestions, suggest("--durability relaxed (at least)", gainFromShare(share), f))
				if f.FixedTx == "" {
					c.Suggestions = append(c.Suggestions, batchSuggest(" (at least)", 1/(1-share+share/BatchRows), f))
				}
			}
		}
		action := "fewer writer threads or shorter write transactions: SQLite admits one writer at a time for the whole database (a server engine takes concurrent writers)"
		if len(c.Suggestions) > 0 {
			// Batching was suggested: longer transactions, fewer commits
			// (the lock is held for the commits' syncs), so not "shorter".
			action = "fewer writer threads: SQLite admits one writer at a time for the whole database (a server engine takes concurrent writers)"
		}
		c.Suggestions = append(c.Suggestions, Suggestion{Action: action})
		return c
	}
	if deadlocks {
		c.Suggestions = append(c.Suggestions, Suggestion{Action: lockOrder})
	}
	if f.LocksUntilFlush && f.CommitsWait != nil && *f.CommitsWait && f.SyncsPerReq != nil && *f.SyncsPerReq >= MinRelaxedSyncs {
		// The holders keep their locks through their flushes: relaxed
		// durability shortens every wait. PostgreSQL, 8 workers on one
		// row: 2,085 updates/s (lock waits 75%, 1.0 WAL syncs each),
		// 13,260/s at synchronous_commit off.
		ev := fmt.Sprintf("the lock holders kept their locks through their commits' log flushes (%.2f %s per request", *f.SyncsPerReq, syncWord(f))
		if f.SyncMs != nil {
			ev += fmt.Sprintf(", %s ms each", MsText(*f.SyncMs))
		}
		c.Evidence = append(c.Evidence, ev+"): the server releases a transaction's row locks only once its commit is flushed")
		c.Suggestions = append(c.Suggestions, Suggestion{Action: "--durability relaxed, which releases the locks without waiting for the flush, to measure how much of the lock waits were the holders' flushes (gain not predicted)"})
	}
	hot := "fewer concurrent writers, or partition the hot rows/tables"
	switch {
	case routine && f.LockTables[0].Share >= 0.5:
		hot = fmt.Sprintf("fewer concurrent writers, or spread the hot rows that %s's statements change (%.0f%% of the lock waits seen) over more rows or partitions", hottest, 100*f.LockTables[0].Share)
	case hottest != "" && f.LockTables[0].Share >= 0.5:
		hot = fmt.Sprintf("fewer concurrent writers, or spread the hot rows of %s (%.0f%% of the lock waits seen) over more rows or partitions", hottest, 100*f.LockTables[0].Share)
	}
	c.Suggestions = append(c.Suggestions, Suggestion{Action: hot})
	return c
}

// deadlockEvidence says that the serialization errors were deadlocks and,
// on PostgreSQL, what each cost: the server looks for a deadlock only after
// deadlock_timeout of waiting, so the transactions in one wait that long
// before one of them fails (InnoDB finds them at once).
func deadlockEvidence(f Figures) string {
	s := "the first serialization error was a deadlock: two transactions each waited for a row the other had locked"
	d, err := time.ParseDuration(pgDuration(f.DeadlockTimeout))
	if f.DeadlockTimeout == "" || err != nil || d <= 0 {
		return s
	}
	s += fmt.Sprintf("; PostgreSQL looks for one only after deadlock_timeout (%s) of waiting, so every deadlock held its transactions about %s", f.DeadlockTimeout, f.DeadlockTimeout)
	if f.P99Ms != nil && *f.P99Ms >= 0.9*float64(d.Milliseconds()) {
		s += fmt.Sprintf(" (p99 %s ms)", num(*f.P99Ms))
	}
	return s
}

// pgDuration turns a PostgreSQL time setting as SHOW gives it ("1s",
// "200ms", "1min") into Go's duration syntax.
func pgDuration(v string) string {
	if n, ok := strings.CutSuffix(v, "min"); ok {
		return n + "m"
	}
	if n, ok := strings.CutSuffix(v, "d"); ok {
		if x, err := strconv.Atoi(n); err == nil {
			return strconv.Itoa(24*x) + "h"
		}
	}
	return v
}

// clientQueueText is "; its threads waited for a core X ms per request"
// where ceiling's own threads' run-queue time was measured (Linux), else
// "". A load generator on a busy host can wait for cores with its own CPU
// far under the client rule's threshold, and that wait is in the
// latencies it measures: PostgreSQL inserts/deletes at 16 workers on the
// server's 2-core host, ceiling at 17% CPU. Evidence only.
func clientQueueText(f Figures) string {
	if f.ClientRunQueueMsPerReq == nil {
		return ""
	}
	s := fmt.Sprintf("; its threads waited for a core %s ms per request", MsText(*f.ClientRunQueueMsPerReq))
	if f.InProcess {
		s = fmt.Sprintf("; its threads (the engine's with them) waited for a core %s ms per request", MsText(*f.ClientRunQueueMsPerReq))
	}
	return s
}

// ClientRule: the load generator itself is the limit.
func ClientRule(f Figures) Candidate {
	c := Candidate{Rule: Rule{Name: Client}}
	busy, workersEv, workers := workersBound(f)
	if f.ClientCPUPct == nil && f.SchedLagP99Ms == nil && !workers {
		c.Why = "not applicable: client CPU not measured"
		return c
	}
	if f.ClientCPUPct != nil && *f.ClientCPUPct >= MinClientCPU {
		c.Matched, c.Score = true, math.Min(*f.ClientCPUPct/100, 1)
		c.Evidence = append(c.Evidence, fmt.Sprintf("load generator CPU %.0f%% of its cores ≥ %.0f%%", *f.ClientCPUPct, MinClientCPU)+clientQueueText(f))
	}
	if sh := shares(f.WaitMs); !f.OpenLoop && !f.InProcess && sh != nil && sh[WaitClient] >= MinClientWaitShare &&
		f.ClientCPUPct != nil && f.ClientCores > 0 && f.Threads > 0 {
		// The server's sessions sit idle waiting for the next request
		// while ceiling's workers are busy computing (not just waiting
		// on the network): making requests costs as much as serving them.
		perWorker := *f.ClientCPUPct / 100 * float64(f.ClientCores) / float64(f.Threads)
		if perWorker >= MinClientCoresPerW {
			c.Matched, c.Score = true, math.Max(c.Score, sh[WaitClient])
			c.Evidence = append(c.Evidence, fmt.Sprintf("the sessions wait for ceiling's next request %.0f%% of their time while ceiling uses %.2f cores per worker (≥ %.0f%%, ≥ %.1f)",
				100*sh[WaitClient], perWorker, 100*MinClientWaitShare, MinClientCoresPerW))
			if float64(f.Threads) < float64(f.ClientCores) {
				// Twice the workers at best double the rate, and no more
				// than the sessions' idle time allows.
				c.Suggestions = append(c.Suggestions, suggest(fmt.Sprintf("%d threads (-c), so requests are made while others are served (at best)", 2*f.Threads),
					math.Min(2, 1/(1-sh[WaitClient])), f))
			}
		}
	}
	lagged := f.OpenLoop && f.SchedLagP99Ms != nil && LagSuspect(*f.SchedLagP99Ms, f.SchedLagSlow)
	if lagged {
		c.Matched, c.Score = true, math.Max(c.Score, 0.9)
		ev := fmt.Sprintf("ceiling's own scheduling lag p99 %.1f ms > %g ms", *f.SchedLagP99Ms, MaxSchedLagP99Ms)
		if f.SchedLagSlow != nil {
			ev += fmt.Sprintf(" (%s requests started that late)", Thousands(float64(*f.SchedLagSlow)))
		}
		c.Evidence = append(c.Evidence, ev)
	}
	if workers {
		score := math.Min(busy, 1)
		if f.InProcess {
			// The embedded engine runs in the workers and takes one
			// writer at a time: another rule that explains the
			// service time (its syncs) comes first.
			score = math.Min(score, 0.5)
			workersEv += " (the embedded engine runs in the workers and takes one writer at a time: more workers help its reads, not its writes)"
		} else {
			// The rate measured is -c's: a rule on the database's time
			// per request (its syncs: 0.350 of 0.352 ms, PostgreSQL
			// single inserts on one worker at 2,827/s) explains that
			// time, not the rate, and is the runner-up.
			c.lead = true
		}
		c.Matched, c.Score = true, math.Max(c.Score, score)
		c.Evidence = append(c.Evidence, workersEv)
	}
	if !c.Matched {
		c.Why = "load generator keeps up"
		if f.ClientCPUPct != nil {
			c.Why = fmt.Sprintf("load generator CPU %s of its cores < %.0f%%", pctBelow(*f.ClientCPUPct, MinClientCPU), MinClientCPU) + clientQueueText(f)
			c.near = *f.ClientCPUPct / MinClientCPU
		}
		if f.OpenLoop && f.SchedLagP99Ms != nil && *f.SchedLagP99Ms > MaxSchedLagP99Ms {
			c.Why += "; " + FewSlowStarts(*f.SchedLagP99Ms, *f.SchedLagSlow, f.Requests)
		}
		return c
	}
	c.Why = c.Evidence[0]
	machine := (f.ClientCPUPct != nil && *f.ClientCPUPct >= MinClientCPU) || lagged
	if workers && !machine {
		// The -c setting, not the machine: the database was not slowed
		// by this load, so it was offered too few requests at once.
		c.Evidence = append(c.Evidence, "the figures describe ceiling's -c, not the database's ceiling")
		if oneWriter(f) {
			// Writes to the embedded engine: one writer at a time, so
			// more threads would queue on its lock, not in ceiling.
			action := "several rows per transaction: SQLite takes one writer at a time, so more threads (-c) would wait on its write lock instead of in ceiling"
			if f.FixedTx != "" {
				action = fixedTxAction(f)
			}
			c.Suggestions = append(c.Suggestions, Suggestion{Action: action})
			return c
		}
		c.Suggestions = append(c.Suggestions, Suggestion{Action: fmt.Sprintf("%d or more threads (-c), so more requests are in flight at once", max(2*f.Threads, 4))})
		return c
	}
	if !machine && len(c.Suggestions) > 0 {
		// Only the per-worker test matched and ceiling has cores to
		// spare: each worker's own request-making, serial with the
		// server's work, sets the pace, not the machine it runs on.
		c.Evidence = append(c.Evidence, fmt.Sprintf("ceiling's cores are not all busy (%.0f%% of %d): more workers use them, a bigger client machine would not help",
			*f.ClientCPUPct, f.ClientCores))
		return c
	}
	c.Evidence = append(c.Evidence, "the figures may understate the database")
	c.Suggestions = append(c.Suggestions, Suggestion{Action: "run ceiling on another (bigger) machine, or shard the load over several clients"})
	if f.ClientCPUPct != nil && *f.ClientCPUPct >= MinClientCPU {
		c.Evidence, c.Suggestions = tlsCost(f, c.Evidence, c.Suggestions)
	}
	return c
}

// LagSuspect reports whether ceiling's own scheduling lag (its p99 in ms,
// and how many requests started more than MaxSchedLagP99Ms late, nil when
// not counted) suspects the load generator. A p99 over few requests is one
// of the slowest few: a step of 50 requests at 10/s whose one request
// started 31 ms late (a pause of the client's host) is not a generator
// that could not keep up, so MinSlowStarts of them are needed.
func LagSuspect(p99Ms float64, slow *int64) bool {
	return p99Ms > MaxSchedLagP99Ms && (slow == nil || *slow >= MinSlowStarts)
}

// FewSlowStarts says why a scheduling lag p99 above MaxSchedLagP99Ms does
// not suspect the load generator (LagSuspect false; slow not nil).
func FewSlowStarts(p99Ms float64, slow, requests int64) string {
	of := ""
	if requests > 0 {
		of = " of " + Thousands(float64(requests))
	}
	return fmt.Sprintf("ceiling's scheduling lag p99 %.1f ms rests on %d request%s%s that started more than %g ms late (fewer than %d): pauses of ceiling's host, not a load it could not keep up with",
		p99Ms, slow, plural(int(slow), "", "s"), of, MaxSchedLagP99Ms, MinSlowStarts)
}

// NetworkRule: the server is on another host, and the round trips to it
// (timed at rest before the run, times the round trips each request made,
// one where they were not counted) are at least MinRoundTripShare of each
// request's time, so each connection waits on the network more than on
// the server.
func NetworkRule(f Figures) Candidate {
	c := Candidate{Rule: Rule{Name: Network}}
	if f.RoundTripMs == nil || *f.RoundTripMs <= 0 || f.InProcess {
		c.Why = "not applicable: no round trip timed (a server on this host, or --no-probe)"
		return c
	}
	rtt := *f.RoundTripMs
	reqMs, ok := requestMs(f)
	if !ok {
		c.Why = "not applicable: no request time measured"
		return c
	}
	trips, each := 1.0, ""
	if f.RoundTripsPerReq != nil && *f.RoundTripsPerReq >= 1 {
		trips = *f.RoundTripsPerReq
	}
	if trips >= 1.05 {
		each = fmt.Sprintf(" × %.3g round trips per request", trips)
	}
	netMs := rtt * trips
	share := math.Min(netMs/reqMs, 1)
	if share < MinRoundTripShare {
		c.Why = fmt.Sprintf("the round trip to the server (%s ms)%s is %s of each request's %s ms < %.0f%%", MsText(rtt), each, pctBelow(100*share, 100*MinRoundTripShare), MsText(reqMs), 100*MinRoundTripShare)
		c.near = share / MinRoundTripShare
		return c
	}
	c.Matched, c.Score = true, share
	c.Why = fmt.Sprintf("the round trip to the server on another host (%s ms at rest, before the run)%s is at least %.0f%% of each request's %s ms", MsText(rtt), each, 100*share, MsText(reqMs))
	c.Evidence = append(c.Evidence, c.Why+": the connections wait on the network more than on the server",
		fmt.Sprintf("one connection, one request at a time, makes at most %s requests/s over that network, whatever the server does", num(1000/netMs)))
	if f.Threads > 0 {
		c.Suggestions = append(c.Suggestions, suggest(fmt.Sprintf("%d threads (-c %d), so more round trips overlap (at best proportional, while the server keeps up)", 2*f.Threads, 2*f.Threads), 2, f))
	}
	c.Suggestions = append(c.Suggestions, suggest("ceiling nearer the server (its zone, or its host), where the round trip is shorter (at best, the network's time gone)", gainFromShare(share), f))
	if trips >= 1.05 {
		// Fewer round trips per request: at best one, the rest of the
		// network time removed.
		c.Suggestions = append(c.Suggestions, suggest(fmt.Sprintf("each request in one round trip instead of %.3g (a server-side procedure, or a batch)", trips),
			gainFromShare(share*(trips-1)/trips), f))
	} else {
		c.Suggestions = append(c.Suggestions, Suggestion{Action: "more work per round trip: several rows per statement, or the transaction's statements in one procedure call"})
	}
	return c
}

// ReplFigures describe a server's synchronous replication.
type ReplFigures struct {
	// Who names the replicas a commit waits for, and the setting that
	// makes it wait ("the synchronous standbys (synchronous_standby_names
	// = '*')").
	Who string
	// Level is PostgreSQL's synchronous_commit during the run (on,
	// remote_apply, remote_write: what a standby confirms); "" for
	// MySQL/MariaDB.
	Level string
	// SemiSync marks MySQL/MariaDB semi-synchronous replication: the
	// replica acknowledges events it received; --durability relaxed
	// (innodb_flush_log_at_trx_commit) does not skip the wait.
	SemiSync bool
}

// ReplicationRule: the sessions spent at least MinReplWaitShare of their
// time with commits waiting for a synchronous replica to confirm them
// (PostgreSQL's IPC:SyncRep; MySQL/MariaDB's semi-synchronous
// acknowledgements, from the server's own total): the replica's round
// trip and its write, flush or replay, more than this server's flush, set
// each commit's time. PostgreSQL, synchronous_commit on with a standby on
// the same host, single inserts: 66% of one session's time at 2,161
// req/s; MariaDB with a replica 1 ms away each way: 87% at 359 req/s.
func ReplicationRule(f Figures) Candidate {
	c := Candidate{Rule: Rule{Name: Replication}}
	r := f.Replication
	sh := shares(f.WaitMs)
	var share float64
	of := "the sessions' time"
	switch {
	case sh != nil:
		share = sh[WaitRepl]
	case f.ReplWaitShare != nil:
		share, of = math.Min(*f.ReplWaitShare, 1), "the workers' time (the server's count of its commits' waits)"
	default:
		c.Why = "not applicable: no wait times measured"
		return c
	}
	if share <= 0 {
		c.Why = "not applicable: no commit waited for a synchronous replica's confirmation"
		return c
	}
	if share < MinReplWaitShare {
		c.Why = fmt.Sprintf("waits for a synchronous replica's confirmation %s of %s < %.0f%%", pctBelow(100*share, 100*MinReplWaitShare), of, 100*MinReplWaitShare)
		c.near = share / MinReplWaitShare
		return c
	}
	c.Matched, c.Score = true, share
	who := "a synchronous replica"
	if r != nil && r.Who != "" {
		who = r.Who
	}
	c.Why = fmt.Sprintf("commits wait for %s to confirm them %.0f%% of %s", who, 100*share, of)
	what := "its flush of the WAL"
	switch {
	case r != nil && r.SemiSync:
		what = "its receipt of the binary log's events"
	case r != nil && r.Level == "remote_apply":
		what = "its replay of the WAL (synchronous_commit = remote_apply)"
	case r != nil && r.Level == "remote_write":
		what = "its write of the WAL (synchronous_commit = remote_write)"
	}
	c.Evidence = append(c.Evidence, c.Why+": each commit's time is the round trip to the replica and "+what+", more than the flush on this server")
	if lg := sh[WaitLog]; lg > 0 {
		c.Evidence = append(c.Evidence, fmt.Sprintf("the flushes of the log on this server are %.0f%% of the sessions' time", 100*lg))
	}
	if r != nil && r.SemiSync {
		c.Suggestions = append(c.Suggestions, suggest("asynchronous replication for these transactions (rpl_semi_sync_master_enabled OFF: a failover can lose the last commits; --durability relaxed changes the local flush only, not this wait) (estimate, from the waits)", gainFromShare(share), f))
	} else {
		c.Suggestions = append(c.Suggestions, suggest("--durability relaxed (synchronous_commit off: no wait for the standbys nor for this server's flush; the last commits can be lost in a crash or a failover) (estimate, from the sessions' waits)", gainFromShare(math.Min(share+sh[WaitLog], 1)), f))
		lower := "synchronous_commit = remote_write for these transactions (the standby confirms once its OS has the WAL, before its flush) or local (no wait for the standby; a failover can lose the last commits): gain not predicted"
		if r != nil && r.Level == "remote_write" {
			lower = "synchronous_commit = local for these transactions (no wait for the standby; a failover can lose the last commits): gain not predicted"
		}
		c.Suggestions = append(c.Suggestions, Suggestion{Action: lower})
	}
	if f.Threads > 0 && !f.OpenLoop {
		c.Suggestions = append(c.Suggestions, Suggestion{Action: fmt.Sprintf("more threads (-c %d): commits waiting at the same time are confirmed together (gain not predicted)", 2*f.Threads)})
	}
	if f.FixedTx == "" {
		c.Suggestions = append(c.Suggestions, Suggestion{Action: "several rows per transaction: one confirmation for them all (gain not predicted)"})
	}
	c.Suggestions = append(c.Suggestions, Suggestion{Action: "a replica nearer this server, or a faster one (gain not predicted)"})
	return c
}

// shares returns each wait category's share of the total wait time, or nil
// when no wait time was measured.
func shares(w map[string]float64) map[string]float64 {
	var tot float64
	for _, v := range w {
		if v > 0 {
			tot += v
		}
	}
	if tot <= 0 {
		return nil
	}
	out := make(map[string]float64, len(w))
	for k, v := range w {
		if v > 0 {
			out[k] = v / tot
		}
	}
	return out
}

func describeShares(sh map[string]float64) string {
	keys := make([]string, 0, len(sh))
	for k := range sh {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if sh[keys[i]] != sh[keys[j]] {
			return sh[keys[i]] > sh[keys[j]]
		}
		return keys[i] < keys[j]
	})
	s := ""
	for i, k := range keys {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%s %.0f%%", k, 100*sh[k])
	}
	return s
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

func round(v float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(v*p) / p
}

// num formats a rate with thousands separators: 9,800 or 12.5.
func num(v float64) string {
	if v < 100 {
		return fmt.Sprintf("%.1f", v)
	}
	return Thousands(math.Round(v))
}

// Thousands formats an integer-valued v as 12,345.
func Thousands(v float64) string {
	n := int64(v)
	neg := n < 0
	if neg {
		n = -n
	}
	s := fmt.Sprintf("%d", n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		s = "-" + s
	}
	return s
}

// workersBound reports whether an open-loop step was held back by ceiling's
// -c workers rather than by the database: the workers were busy at least
// MinWorkerBusy of the time (requests/s × mean service time ÷ workers),
// requests waited for a free one (start lag p99 at least 1 ms and at least
// a service time), and the database served each request within
// MaxServiceGrowth of its time at low load, so it did not queue them
// itself. With a fixed number of workers the rate an open loop reaches is
// at most workers ÷ service time, whatever the database could do with more.
// Not when the server's cores were busy (MinCPUBusy): its service time was
// then the saturated CPU's, already at the lower rates that give the
// comparison, and more workers would queue for the cores.
func workersBound(f Figures) (share float64, evidence string, ok bool) {
	share, ok = workersBusy(f)
	if !ok || f.MinServiceMs == nil || f.StartLagP99Ms == nil || *f.MinServiceMs <= 0 {
		return 0, "", false
	}
	growth := *f.ServiceMs / *f.MinServiceMs
	if share < MinWorkerBusy || growth > MaxServiceGrowth || *f.StartLagP99Ms < math.Max(1, *f.ServiceMs) {
		return share, "", false
	}
	if b := busy(f); !f.InProcess && b != nil && *b >= MinCPUBusy {
		return share, "", false
	}
	were := "were"
	if f.Threads == 1 {
		were = "was"
	}
	// Below 1 the lower rates' service was slower (a cold start in the
	// first step, or more workers than cores queueing in the server at
	// low load): "0.59× its fastest" would read as a contradiction.
	than := fmt.Sprintf("%.2f× its fastest at the lower rates (%s ms)", growth, MsText(*f.MinServiceMs))
	if growth < 1 {
		than = fmt.Sprintf("faster than at any lower rate (%s ms at best)", MsText(*f.MinServiceMs))
	}
	evidence = fmt.Sprintf("ceiling's %s %s busy %.0f%% of the time (%.0f req/s × %s ms each) and requests waited for a free one (start lag p99 %s ms), while the database served each in %s ms, %s: the requests queued in ceiling, not in the database",
		WorkersText(f.Threads), were, 100*share, *f.RequestsPerSec, MsText(*f.ServiceMs), MsText(*f.StartLagP99Ms), MsText(*f.ServiceMs), than)
	return share, evidence, true
}

// queuedForWorkers says whether an open-loop step's requests queued for
// ceiling's workers without (yet) being late: the workers busy ≥ 80% and
// the wait for a free one (start lag p99) at least 1 ms and ten times the
// service time. Whatever slows the workers' requests then caps the rate.
func queuedForWorkers(f Figures) bool {
	busy, ok := workersBusy(f)
	return ok && f.StartLagP99Ms != nil && busy >= MinWorkerBusy && *f.StartLagP99Ms >= math.Max(1, 10**f.ServiceMs)
}

// workersBusy is the share of the time ceiling's open-loop workers were
// busy: requests/s × mean service time ÷ workers.
func workersBusy(f Figures) (float64, bool) {
	if !f.OpenLoop || f.Threads <= 0 || f.RequestsPerSec == nil || f.ServiceMs == nil || *f.ServiceMs <= 0 {
		return 0, false
	}
	return *f.RequestsPerSec * *f.ServiceMs / 1000 / float64(f.Threads), true
}

// MsText writes milliseconds to three significant figures without an
// exponent: 0.189, 49.8, 1000.
func MsText(v float64) string {
	if v >= 100 {
		return strconv.FormatFloat(math.Round(v), 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// WorkersText is "1 worker" or "n workers".
func WorkersText(n int) string {
	if n == 1 {
		return "1 worker"
	}
	return fmt.Sprintf("%d workers", n)
}
