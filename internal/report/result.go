// Package report turns what a run measured into the JSON result document
// (schema ceiling.result/v1, DESIGN.md section 7) and the console output.
//
// A figure that was not measured is null in the JSON and "n/a" on the
// console, never 0.
package report

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/ceiling-db/ceiling/internal/diagnose"
	"github.com/ceiling-db/ceiling/internal/metrics"
	"github.com/ceiling-db/ceiling/internal/runner"
	"github.com/ceiling-db/ceiling/internal/target"
	"github.com/ceiling-db/ceiling/internal/workload"
)

// Schema is the version of the result document.
const Schema = "ceiling.result/v1"

// MB is the unit of data volume: 2^20 bytes.
const MB = 1 << 20

// Result is the JSON result document. Keys listed in DESIGN.md section 7 are
// stable; add freely, never rename without bumping Schema.
type Result struct {
	Schema    string          `json:"schema"`
	Tool      Tool            `json:"tool"`
	ID        string          `json:"id"`
	StartedAt time.Time       `json:"started_at"`
	Partial   bool            `json:"partial"`
	Target    target.Info     `json:"target"`
	Workload  Workload        `json:"workload"`
	Load      Load            `json:"load"`
	Summary   Summary         `json:"summary"`
	Costs     Costs           `json:"costs"`
	Files     []File          `json:"files"`
	Evidence  *Evidence       `json:"evidence"`
	Client    Client          `json:"client"`
	Intervals []IntervalPoint `json:"intervals"`
	Steps     []Step          `json:"steps"` // open loop: one per step (a plain --rate is one step)
	Runs      []RunSummary    `json:"runs"`  // one per repeat when --repeat > 1
	// RepeatStats is the spread of the headline figures over the repeats
	// (null without --repeat): {metric: {mean, stddev, ci95_low, ci95_high, n}}.
	RepeatStats map[string]*Stat `json:"repeat_stats"`
	Knee        *Knee            `json:"knee,omitempty"` // ceiling knee only
	// Host is ceiling's flush probe of this host, taken before the run when
	// the server is local (null otherwise, or with --no-probe).
	Host *Host `json:"host"`
	// Network is the round trip to a server on another host, timed
	// before the run (absent for a local server, or with --no-probe).
	Network *Network `json:"network,omitempty"`
	// LogDevice is the block device of the server's log directory over
	// the measured run, from the kernel's counters (a local target on
	// Linux; absent otherwise).
	LogDevice  *LogDeviceStats   `json:"log_device,omitempty"`
	Verdict    *diagnose.Verdict `json:"verdict"` // null when nothing was measured
	Histograms map[string]string `json:"histograms"`
	Notes      []string          `json:"notes,omitempty"`
	// Figures are workload-specific headline figures measured from the
	// database (tpcc: "nopm", "tpm", ...); absent when the workload has none.
	Figures map[string]float64 `json:"figures,omitempty"`
	// Isolated is each operation type of a mixed workload run alone after
	// the measured mix (run --isolate); absent otherwise.
	Isolated []Isolated `json:"isolated,omitempty"`
}

// Tool identifies the ceiling build.
type Tool struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Workload names the workload and its parameters.
type Workload struct {
	Name   string         `json:"name"`
	Params map[string]any `json:"params"`
	// Definition is the text that defines a user's workload (a custom
	// workload's YAML file, as read), so that the result can be read and
	// run again without it; empty for the built-in workloads.
	Definition string `json:"definition,omitempty"`
}

// Load is the load model.
type Load struct {
	Model     string   `json:"model"` // "closed" | "open"
	Threads   int      `json:"threads"`
	DurationS *float64 `json:"duration_s"` // planned measured duration (a ramp: all steps); null with --ops
	Ops       *int64   `json:"ops"`        // planned requests; null with a duration
	WarmupS   float64  `json:"warmup_s"`   // a ramp: every step's warm-up together
	// Rate is the requested rate of a single-rate open-loop run (--rate);
	// null in closed loop and for a ramp, whose rates are in Rates.
	Rate  *float64  `json:"rate"`
	Rates []float64 `json:"rates"` // ramp (--rates) or knee probes: each step's requested rate; null otherwise
	// StepS and StepWarmupS are each step's measured duration and warm-up
	// (ramps and knee probes); null otherwise.
	StepS       *float64 `json:"step_s"`
	StepWarmupS *float64 `json:"step_warmup_s"`
	Arrival     *string  `json:"arrival"`      // "uniform" | "poisson"; null in closed loop
	LateAfterS  *float64 `json:"late_after_s"` // lateness limit; null in closed loop
	Seed        *uint64  `json:"seed"`         // seed of the poisson arrivals; null in closed loop
	Repeat      int      `json:"repeat"`       // runs merged into this document (1 without --repeat)
	// Shard is set when the run was one shard of several (run --shard)
	// or their merge (ceiling merge); absent otherwise.
	Shard *Shard `json:"shard,omitempty"`
}

// Shard describes a sharded run: one shard's part, or the merge of all.
type Shard struct {
	// I is this shard (0 … N-1); -1 in a merged result.
	I int `json:"i"`
	N int `json:"n"`
	// Key names the run the shards met under (the same for all).
	Key string `json:"key"`
	// Threads is the workers of all shards together (Load.Threads is this
	// shard's, or all of them in a merged result); FirstWorker is this
	// shard's first worker's number among them.
	Threads     int `json:"threads_total"`
	FirstWorker int `json:"first_worker"`
	// Hosts are the shards' hosts, by shard, as they met.
	Hosts []string `json:"hosts,omitempty"`
	// Files are the merged shards' result files (merge only).
	Files []string `json:"files,omitempty"`
	// DatabaseFigures name the figures counted from the database, every
	// shard's work in each shard's (workload.DatabaseFigurer): merge
	// takes them from one shard and adds up the others.
	DatabaseFigures []string `json:"database_figures,omitempty"`
}

// Summary is the headline figures of the measured phase.
type Summary struct {
	ElapsedS       float64             `json:"elapsed_s"`
	Requests       int64               `json:"requests"`
	RequestsPerSec float64             `json:"requests_per_sec"`
	Rows           int64               `json:"rows"`
	RowsPerSec     float64             `json:"rows_per_sec"`
	Bytes          *int64              `json:"bytes"`      // null where the workload does not count data bytes (tpcc)
	MBPerMin       *float64            `json:"mb_per_min"` // null likewise
	Errors         int64               `json:"errors"`
	ErrorsByClass  map[string]int64    `json:"errors_by_class"`
	FirstErrors    map[string]string   `json:"first_errors,omitempty"`
	Late           int64               `json:"late"`
	Scheduled      *int64              `json:"scheduled"` // open loop: requests scheduled in the measured parts; null in closed loop
	Reconnects     int64               `json:"reconnects"`
	LatencyMs      *metrics.Latency    `json:"latency_ms"`
	ByOp           map[string]OpResult `json:"by_op"`
	OpOrder        []string            `json:"op_order"`
	// RowsExamined is the rows the requests examined (scanned), where the
	// workload reports it (indirect selects: the key range); absent otherwise.
	RowsExamined           *int64   `json:"rows_examined,omitempty"`
	RowsExaminedPerRequest *float64 `json:"rows_examined_per_request,omitempty"`
	// RoundTrips is the round trips to the server the successful requests
	// made (each statement, BEGIN, COMMIT, ROLLBACK; a statement's first
	// use, which prepares it, two), where the target counts them (servers,
	// not SQLite); absent otherwise.
	RoundTrips           *int64   `json:"round_trips,omitempty"`
	RoundTripsPerRequest *float64 `json:"round_trips_per_request,omitempty"`
	// InFlightAtEnd is what was still waiting for the database when the
	// measured phase ended: in no count or latency above.
	InFlightAtEnd InFlightAtEnd `json:"in_flight_at_end"`
	// Stalls are the spans of the measured phase in which no request
	// completed, each at least the stall threshold long (stall.go).
	Stalls []Stall `json:"stalls,omitempty"`
}

// InFlightAtEnd: requests in flight when the measured phase ended, how
// long the oldest had been waiting, and how many had not returned a grace
// period later (then cancelled).
type InFlightAtEnd struct {
	Requests   int     `json:"requests"`
	OldestMs   float64 `json:"oldest_ms"`
	Unfinished int     `json:"unfinished"`
	// Reconnecting: workers getting a new connection after losing theirs,
	// the first of them for ReconnectingMs.
	Reconnecting   int     `json:"reconnecting"`
	ReconnectingMs float64 `json:"reconnecting_ms"`
}

// OpResult is the figures of one operation type.
type OpResult struct {
	Requests       int64            `json:"requests"`
	RequestsPerSec float64          `json:"requests_per_sec"`
	Rows           int64            `json:"rows"`
	RowsPerSec     float64          `json:"rows_per_sec"`
	Bytes          *int64           `json:"bytes"`
	MBPerMin       *float64         `json:"mb_per_min"`
	Errors         int64            `json:"errors"`
	LatencyMs      *metrics.Latency `json:"latency_ms"`
	// RowsExamined as in Summary; absent for an operation that reports none.
	RowsExamined           *int64   `json:"rows_examined,omitempty"`
	RowsExaminedPerRequest *float64 `json:"rows_examined_per_request,omitempty"`
	// RoundTrips as in Summary.
	RoundTrips           *int64   `json:"round_trips,omitempty"`
	RoundTripsPerRequest *float64 `json:"round_trips_per_request,omitempty"`
}

// examined returns a count (rows examined, round trips) and its mean per
// request, or nils when none were reported.
func examined(n, requests int64) (*int64, *float64) {
	if n <= 0 {
		return nil, nil
	}
	var per *float64
	if requests > 0 {
		per = f64(float64(n) / float64(requests))
	}
	return &n, per
}

// Costs are per-request server costs; null when the server did not give
// the counter.
type Costs struct {
	LogBytesPerOp   *float64 `json:"log_bytes_per_op"`
	LogSyncsPerOp   *float64 `json:"log_syncs_per_op"`
	LogWritesPerOp  *float64 `json:"log_writes_per_op"`
	DataReadsPerOp  *float64 `json:"data_reads_per_op"`
	DataWritesPerOp *float64 `json:"data_writes_per_op"`
	DataSyncsPerOp  *float64 `json:"data_syncs_per_op"`
	CommitsPerOp    *float64 `json:"commits_per_op"`
	// CPUusPerOp is the database server's CPU time per request, µs
	// (local server only: its processes' CPU from /proc).
	CPUusPerOp *float64 `json:"cpu_us_per_op"`
}

// LogDeviceStats are the log directory's block device's requests over the
// measured run: the whole device's, the log's and anything else on it. A
// mean time is nil under minDevRequests such requests.
type LogDeviceStats struct {
	Name          string   `json:"name"`
	ReadsPerSec   float64  `json:"reads_per_sec"`
	ReadMs        *float64 `json:"read_ms"` // mean per read, from issue to completion
	WritesPerSec  float64  `json:"writes_per_sec"`
	WriteMs       *float64 `json:"write_ms"`
	FlushesPerSec *float64 `json:"flushes_per_sec"` // nil: the kernel does not count flushes (before 5.5)
	FlushMs       *float64 `json:"flush_ms"`
	FlushesPerOp  *float64 `json:"flushes_per_op"`
	BusyPct       float64  `json:"busy_pct"` // time with a request in flight
	// Note says why the verdict did not use the device's figures (they
	// do not look like the log's device); empty when it could.
	Note string `json:"note,omitempty"`
}

// logDeviceMismatch says, when the server counted at least minDevRequests
// syncs, whether its log device received fewer than half as many cache
// flushes: then the log is not on that device as ceiling sees it (a server
// in a container, whose log_dir is a path inside it; a directory mounted
// below one ceiling may not examine) or the device has no write-back cache,
// and its times say nothing about the log's syncs.
func logDeviceMismatch(c map[string]float64) string {
	syncs, ok := c[target.CtrLogSyncs]
	if !ok {
		syncs = c[target.CtrDataSyncs] // MariaDB: log and data fsyncs together
	}
	flushes, fok := c[target.CtrLogDevFlushes]
	if syncs < minDevRequests || !fok || flushes >= syncs/2 {
		return ""
	}
	return fmt.Sprintf("the device received %.0f cache flushes for the server's %.0f syncs: the log is not on it as ceiling sees it (a server in a container?) or it has no write-back cache; not used by the verdict", flushes, syncs)
}

// minDevRequests is the fewest requests of a kind over which a mean time
// is taken from the device's counters: the kernel gives their summed time
// in whole milliseconds, so the mean is off by up to 1 ms ÷ requests.
const minDevRequests = 100

// logDeviceOf computes the log device's figures from the run's counters.
func logDeviceOf(name string, c map[string]float64, secs float64, requests int64) *LogDeviceStats {
	if _, ok := c[target.CtrLogDevWrites]; !ok || secs <= 0 {
		return nil
	}
	mean := func(ms, n string) *float64 {
		if c[n] < minDevRequests {
			return nil
		}
		return f64(c[ms] / c[n])
	}
	d := &LogDeviceStats{Name: name, ReadsPerSec: c[target.CtrLogDevReads] / secs, ReadMs: mean(target.CtrLogDevReadMs, target.CtrLogDevReads),
		WritesPerSec: c[target.CtrLogDevWrites] / secs, WriteMs: mean(target.CtrLogDevWriteMs, target.CtrLogDevWrites),
		BusyPct: min(100*c[target.CtrLogDevBusyMs]/1000/secs, 100)}
	if n, ok := c[target.CtrLogDevFlushes]; ok {
		d.FlushesPerSec = f64(n / secs)
		d.FlushMs = mean(target.CtrLogDevFlushMs, target.CtrLogDevFlushes)
		if requests > 0 {
			d.FlushesPerOp = f64(n / float64(requests))
		}
	}
	d.Note = logDeviceMismatch(c)
	return d
}

// AnyMissing says whether a per-request cost is not available.
func (c Costs) AnyMissing() bool {
	for _, v := range []*float64{c.LogBytesPerOp, c.LogSyncsPerOp, c.LogWritesPerOp, c.DataReadsPerOp,
		c.DataWritesPerOp, c.DataSyncsPerOp, c.CommitsPerOp, c.CPUusPerOp} {
		if v == nil {
			return true
		}
	}
	return false
}

// File is per-file IO over the measured phase, with derived rates.
type File struct {
	Name         string   `json:"name"`
	Role         string   `json:"role"`
	Reads        int64    `json:"reads"`
	Writes       int64    `json:"writes"`
	BytesRead    int64    `json:"bytes_read"`
	BytesWritten int64    `json:"bytes_written"`
	Syncs        int64    `json:"syncs"`
	ReadMs       float64  `json:"read_ms"`
	WriteMs      float64  `json:"write_ms"`
	SyncMs       float64  `json:"sync_ms"`
	IOPS         float64  `json:"iops"`
	MBPerSec     float64  `json:"mb_per_sec"`
	AvgReadMs    *float64 `json:"avg_read_ms"`
	AvgWriteMs   *float64 `json:"avg_write_ms"`
	AvgSyncMs    *float64 `json:"avg_sync_ms"`
	KBPerWrite   *float64 `json:"kb_per_write"`
	SyncsPerTxn  *float64 `json:"syncs_per_txn"`
	// EmulatedWaitMs is the part of read_ms, write_ms and sync_ms spent
	// waiting for the emulated limits (run --emulate); absent otherwise.
	EmulatedWaitMs *float64 `json:"emulated_wait_ms,omitempty"`
	// NoSyncs: the target does not count this file's syncs (target.FileStat);
	// syncs and sync_ms are null in JSON. NoWriteTime: its writes are
	// asynchronous, their time the submission's; write_ms is null.
	NoSyncs     bool `json:"-"`
	NoWriteTime bool `json:"-"`
}

// fileJSON is File as JSON, with the figures a target did not measure
// null.
type fileJSON struct {
	plainFile
	Syncs   *int64   `json:"syncs"`
	SyncMs  *float64 `json:"sync_ms"`
	WriteMs *float64 `json:"write_ms"`
}

type plainFile File

// MarshalJSON writes syncs, sync_ms and write_ms as null where they were
// not measured.
func (f File) MarshalJSON() ([]byte, error) {
	j := fileJSON{plainFile: plainFile(f)}
	if !f.NoSyncs {
		j.Syncs, j.SyncMs = &f.Syncs, &f.SyncMs
	}
	if !f.NoWriteTime {
		j.WriteMs = &f.WriteMs
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads what MarshalJSON writes: a null syncs or write_ms
// marks the figure as not measured.
func (f *File) UnmarshalJSON(b []byte) error {
	var j fileJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*f = File(j.plainFile)
	f.NoSyncs, f.NoWriteTime = j.Syncs == nil, j.WriteMs == nil
	if j.Syncs != nil {
		f.Syncs = *j.Syncs
	}
	if j.SyncMs != nil {
		f.SyncMs = *j.SyncMs
	}
	if j.WriteMs != nil {
		f.WriteMs = *j.WriteMs
	}
	return nil
}

// TimedIO is the file's reads and writes whose time is the IO's own, and
// that time in ms: its writes are left out when they are asynchronous
// (NoWriteTime).
func (f File) TimedIO() (ios int64, ms float64) {
	if f.NoWriteTime {
		return f.Reads, f.ReadMs
	}
	return f.Reads + f.Writes, f.ReadMs + f.WriteMs
}

// Evidence is the server counters over the measured phase.
type Evidence struct {
	Seconds  float64            `json:"seconds"`
	Counters map[string]float64 `json:"counters"`
	PerSec   map[string]float64 `json:"per_sec"`
	Error    string             `json:"error,omitempty"`
	// FailedSamples is how many samples of the server's evidence failed
	// (Error is the first one's), the first FirstFailedS seconds into the
	// run; the figures over the run then lack the intervals they bound.
	FailedSamples int      `json:"failed_samples,omitempty"`
	FirstFailedS  *float64 `json:"first_failed_s,omitempty"`
	// ServerRestarted: the server's counters went back within the period
	// (a restart), so only the host's counters are in Counters.
	ServerRestarted bool `json:"server_restarted,omitempty"`
}

// Client is the load generator's own resource use.
type Client struct {
	CPUSeconds  *float64 `json:"cpu_seconds"`
	CPUPctCores *float64 `json:"cpu_pct_of_cores"` // 100 = every core busy
	Cores       int      `json:"cores"`
	// WorkerGroups is how many threads the workers shared (closed loop,
	// several coroutines per thread, as pgbench -j); absent when each
	// worker had its own.
	WorkerGroups int `json:"worker_groups,omitempty"`
	// WorkerIO is how those groups waited for their sockets: "io_uring"
	// or "ppoll".
	WorkerIO string `json:"worker_io,omitempty"`
	// ThinkShare is the share of the closed loop's workers' time (threads
	// × measured seconds) they spent in the workload's think times
	// (TPC-C --keying-thinking, a custom file's think:); absent when they
	// did not pause.
	ThinkShare *float64 `json:"think_share,omitempty"`
}

// IntervalPoint is one point of the per-interval series.
type IntervalPoint struct {
	T              float64          `json:"t"` // seconds since the start, end of the interval
	Seconds        float64          `json:"seconds"`
	Warmup         bool             `json:"warmup,omitempty"`
	Requests       int64            `json:"requests"`
	RequestsPerSec float64          `json:"requests_per_sec"`
	RowsPerSec     float64          `json:"rows_per_sec"`
	MBPerMin       *float64         `json:"mb_per_min"`
	Errors         int64            `json:"errors"`
	Late           int64            `json:"late"`
	LatencyMs      *metrics.Latency `json:"latency_ms"`
	// Histogram is the interval's latency histogram (metrics.EncodeHist),
	// kept by a shard's result only (run --shard), so that merge can make
	// the run's latency per interval.
	Histogram string `json:"histogram,omitempty"`
	// OldestInFlightMs is how long the oldest request still waiting for
	// the database at the interval's end had waited (0: none).
	OldestInFlightMs float64  `json:"oldest_in_flight_ms"`
	Step             *int     `json:"step,omitempty"` // open loop: index into steps[]
	Run              *int     `json:"run,omitempty"`  // --repeat: which run (1-based); t restarts at each run
	LogMBPerSec      *float64 `json:"log_mb_per_sec"`
	LogSyncsPerSec   *float64 `json:"log_syncs_per_sec"`
	// FsyncsPerSec is the log's and data files' fsyncs together, per
	// second, where the server counts no log syncs of its own (MariaDB:
	// Innodb_data_fsyncs); absent otherwise.
	FsyncsPerSec *float64 `json:"fsyncs_per_sec,omitempty"`
	DataIOPS     *float64 `json:"data_iops"`
	ClientCPUPct *float64 `json:"client_cpu_pct_of_cores"`
	// ServerCPUPct is the database server's CPU and HostCPUPct the host's
	// busy CPU in the interval, % of the host's cores (local server only;
	// null when not measured).
	ServerCPUPct *float64 `json:"server_cpu_pct_of_cores"`
	HostCPUPct   *float64 `json:"host_cpu_busy_pct"`
	// WaitMsPerSec is the sessions' wait time in the interval by category
	// (log_io, data_read, data_write, lock, cpu, client, other), ms per
	// second (1000 = one session waiting all the time); absent when the
	// server gives no wait counters.
	WaitMsPerSec map[string]float64 `json:"wait_ms_per_sec,omitempty"`
	// LogDev* are the log's block device in the interval (as log_device;
	// a mean time is null under 100 requests in the interval).
	LogDevFlushesPerSec *float64 `json:"log_dev_flushes_per_sec,omitempty"`
	LogDevFlushMs       *float64 `json:"log_dev_flush_ms,omitempty"`
	LogDevWriteMs       *float64 `json:"log_dev_write_ms,omitempty"`
	LogDevBusyPct       *float64 `json:"log_dev_busy_pct,omitempty"`
	// Files is per-file IO in the interval (where the target measures it),
	// with the same derived figures as the run's files[].
	Files []File `json:"files,omitempty"`
}

// DataFileIO sums the interval's data-file IO: reads and writes, their
// time in ms, and the part of it spent waiting for an emulated limit
// (run --emulate).
func (p *IntervalPoint) DataFileIO() (ios int64, ms, emulatedMs float64) {
	for _, f := range p.Files {
		if f.Role == "data" {
			n, t := f.TimedIO()
			ios += n
			ms += t
			if f.EmulatedWaitMs != nil {
				emulatedMs += *f.EmulatedWaitMs
			}
		}
	}
	return ios, ms, emulatedMs
}

func f64(v float64) *float64 { return &v }

func perSec(n int64, s float64) float64 {
	if s <= 0 {
		return 0
	}
	return float64(n) / s
}

func mbPerMin(bytes int64, s float64) float64 {
	if s <= 0 {
		return 0
	}
	return float64(bytes) / MB / s * 60
}

// byteCount is bytes where the workload counts data bytes, else nil.
func byteCount(bytes int64, noBytes bool) *int64 {
	if noBytes {
		return nil
	}
	return &bytes
}

// mbRate is mbPerMin where the workload counts data bytes, else nil (not
// measured, so never shown as 0).
func mbRate(bytes int64, s float64, noBytes bool) *float64 {
	if noBytes {
		return nil
	}
	return f64(mbPerMin(bytes, s))
}

// Params carries what the result needs besides the run itself.
type Params struct {
	Version    string
	Workload   string
	WParams    map[string]any
	Definition string // workload.Definer's text, or ""
	Load       runner.Config
	Info       target.Info
	Cores      int
	CommandRaw string
	Host       *Host    // the flush probe, or nil
	Network    *Network // the round-trip probe, or nil
	// Figures computes the workload's headline figures (workload.Observer)
	// from what it counted over the measured phase; nil when it has none.
	Figures func(workload.Span) map[string]float64
	// NoBytes says the workload does not count the data bytes of its
	// requests (workload.NoByteCounts): MB/min is then null, not 0.
	NoBytes bool
	// Advice gives the workload's own suggestions for the run's verdict
	// (workload.Advisor); nil when it has none.
	Advice func(engine, bottleneck string) []string

	// runs are the runs a combined document is built from (repeats, knee
	// probes), whose intervals the combined run lacks: the device-latency
	// estimate of its verdicts is taken over theirs.
	runs []*runner.Result
}

// Host is a flush probe of the local host (result key "host").
type Host struct {
	FsyncMs      HostLatency `json:"fsync_ms"`
	FsyncsPerSec float64     `json:"fsyncs_per_sec"`
	N            int         `json:"n"`
	Dir          string      `json:"dir"`
	Note         string      `json:"note"`
	// SameFSAsLog says whether Dir is on the file system of the server's
	// log directory (target.log_dir); nil when that could not be told.
	SameFSAsLog *bool `json:"same_fs_as_log,omitempty"`
}

// Network is ceiling's round-trip probe of a server on another host
// (result key "network"): N requests the server answers with the least
// work it can (What: PostgreSQL's empty query, MySQL's COM_PING), one
// after another on one session before the run. Each of the run's requests
// waits at least one round trip, whatever the server does.
type Network struct {
	RoundTripMs HostLatency `json:"round_trip_ms"`
	N           int         `json:"n"`
	What        string      `json:"what"`
}

// HostLatency is the latency of one 4 KiB write + fdatasync, ms.
type HostLatency struct {
	P50  float64 `json:"p50"`
	P99  float64 `json:"p99"`
	Mean float64 `json:"mean"`
}

// HostNote explains what a flush probe measured in dir.
func HostNote(dir string) string {
	return "measured by ceiling with fdatasync on a file in " + dir +
		"; an estimate of the device's flush latency, not the server's log file"
}

// openLoop reports whether the load model is the open loop.
func (p Params) openLoop() bool { return p.Load.Rate > 0 || len(p.Load.Steps) > 0 }

// Build assembles the result document.
func Build(p Params, r *runner.Result) (*Result, error) {
	el := r.Elapsed.Seconds()
	res := &Result{
		Schema:     Schema,
		Tool:       Tool{Name: "ceiling", Version: p.Version},
		StartedAt:  r.Started.UTC(),
		Partial:    r.Partial,
		Target:     p.Info,
		Workload:   Workload{Name: p.Workload, Params: p.WParams, Definition: p.Definition},
		Load:       LoadOf(p.Load),
		Steps:      []Step{},
		Runs:       []RunSummary{},
		Histograms: map[string]string{},
		Files:      []File{},
		Host:       p.Host,
		Network:    p.Network,
	}
	res.ID = fmt.Sprintf("%s-%s-%s", r.Started.UTC().Format("20060102-150405"), p.Workload, p.Info.Engine)

	tot := r.Total.Total()
	s := Summary{
		ElapsedS: el, Requests: tot.Requests, RequestsPerSec: perSec(tot.Requests, el),
		Rows: tot.Rows, RowsPerSec: perSec(tot.Rows, el), Bytes: byteCount(tot.Bytes, p.NoBytes), MBPerMin: mbRate(tot.Bytes, el, p.NoBytes),
		Errors: tot.ErrorCount(), ErrorsByClass: map[string]int64{}, Late: tot.Late, Reconnects: r.Total.Reconnects,
		LatencyMs: metrics.LatencyOf(tot.Hist), ByOp: map[string]OpResult{},
		InFlightAtEnd: InFlightAtEnd{Requests: r.InFlight.Requests, OldestMs: float64(r.InFlight.Oldest) / 1e6, Unfinished: r.InFlight.Unfinished,
			Reconnecting: r.InFlight.Reconnecting, ReconnectingMs: float64(r.InFlight.ReconnectingFor) / 1e6},
	}
	s.RowsExamined, s.RowsExaminedPerRequest = examined(tot.Examined, tot.Requests)
	s.RoundTrips, s.RoundTripsPerRequest = examined(tot.RoundTrips, tot.Requests)
	for _, c := range metrics.ErrClasses() {
		if n := tot.Errors[c]; n > 0 {
			s.ErrorsByClass[c.String()] = n
			if s.FirstErrors == nil {
				s.FirstErrors = map[string]string{}
			}
			s.FirstErrors[c.String()] = target.Redact(r.Total.FirstErr[c])
		}
	}
	for _, op := range r.Total.Ops {
		s.OpOrder = append(s.OpOrder, op.Name)
		o := OpResult{
			Requests: op.Requests, RequestsPerSec: perSec(op.Requests, el), Rows: op.Rows, RowsPerSec: perSec(op.Rows, el),
			Bytes: byteCount(op.Bytes, p.NoBytes), MBPerMin: mbRate(op.Bytes, el, p.NoBytes), Errors: op.ErrorCount(), LatencyMs: metrics.LatencyOf(op.Hist),
		}
		o.RowsExamined, o.RowsExaminedPerRequest = examined(op.Examined, op.Requests)
		o.RoundTrips, o.RoundTripsPerRequest = examined(op.RoundTrips, op.Requests)
		s.ByOp[op.Name] = o
		enc, err := metrics.EncodeHist(op.Hist)
		if err != nil {
			return nil, err
		}
		res.Histograms[op.Name] = enc
	}
	if p.openLoop() {
		var late, sched int64
		for i, st := range r.Steps {
			res.Steps = append(res.Steps, stepOf(i, st, p.Cores, p.NoBytes))
			late += st.Late
			sched += st.Scheduled
		}
		s.Late, s.Scheduled = late, &sched
	}
	res.Summary = s

	if n := res.Target.Durability.Note; n != "" {
		res.Notes = append(res.Notes, "durability: "+n)
	}
	if n := res.Target.NamespaceLock; n != "" {
		res.Notes = append(res.Notes, "namespace lock: "+n)
	}
	if r.Evidence != nil {
		ev := &Evidence{Seconds: r.Evidence.Seconds, Counters: r.Evidence.Counters, PerSec: map[string]float64{}}
		for k, v := range ev.Counters {
			if ev.Seconds > 0 && !target.IsLevel(k) {
				ev.PerSec[k] = v / ev.Seconds
			}
		}
		sampleErr(ev, r)
		ev.ServerRestarted = r.Evidence.Restarted
		if ev.ServerRestarted {
			res.Notes = append(res.Notes, "the server's counters went back during the run (a restart?): no delta of them is known across it, so the server's figures over the run (per-request costs, log and data rates, commits) are n/a; the host's and the log device's stay, and the intervals before and after the restart have their own")
		}
		res.Evidence = ev
		res.Costs = costsOf(ev.Counters, tot.Requests)
		if res.Target.LogDevice != nil {
			res.LogDevice = logDeviceOf(res.Target.LogDevice.Name, ev.Counters, ev.Seconds, tot.Requests)
		}
		if note := foreignWorkNote(res.Costs, ev.Counters[target.CtrCommits]-float64(tot.Requests), ev.Seconds); note != "" {
			res.Notes = append(res.Notes, note)
		}
		// The same check per step: other work may have come and gone
		// during a ramp, polluting only some steps' evidence.
		for i, st := range r.Steps {
			if i >= len(res.Steps) || st.Evidence == nil {
				continue
			}
			if note := foreignWorkNote(res.Steps[i].Costs, st.Evidence.Counters[target.CtrCommits]-float64(st.Completed), st.Evidence.Seconds); note != "" {
				res.Notes = append(res.Notes, fmt.Sprintf("step %d (%s/s): %s", i+1, fmtRate(st.Rate), note))
			}
		}
		for _, f := range r.Evidence.Files {
			res.Files = append(res.Files, fileOf(f, r.Evidence.Seconds, tot.Requests))
		}
	} else if r.SampleErr != "" {
		res.Evidence = &Evidence{}
		sampleErr(res.Evidence, r)
	}

	res.Client.Cores = p.Cores
	res.Client.WorkerGroups, res.Client.WorkerIO = r.WorkerGroups, r.WorkerIO
	if el > 0 && p.Load.Threads > 0 {
		if share := r.PausedSeconds / el / float64(p.Load.Threads); share >= minThinkShare {
			res.Client.ThinkShare = f64(min(1, share))
		}
	}
	if r.ClientCPUSeconds >= 0 {
		res.Client.CPUSeconds = f64(r.ClientCPUSeconds)
		if el > 0 && p.Cores > 0 {
			res.Client.CPUPctCores = f64(100 * r.ClientCPUSeconds / el / float64(p.Cores))
		}
	}
	for _, iv := range r.Intervals {
		pt := intervalOf(iv, p.Cores, p.NoBytes)
		if p.openLoop() {
			pt.Step = &iv.Step
		}
		res.Intervals = append(res.Intervals, pt)
	}
	if note := coldStartNote(res); note != "" {
		res.Notes = append(res.Notes, note)
	}
	var figNote string
	if res.Figures, figNote = figuresOf(p, r); figNote != "" {
		res.Notes = append(res.Notes, figNote)
	}
	addStepFigures(p, r, res)
	res.Summary.Stalls = stallsOf(res)
	setVerdicts(res, r, deviceLatencyOf(p, r))
	applyStalls(res, p.Load.Grace)
	addAdvice(res, p)
	return res, nil
}

// minThinkShare is the least share of the workers' time in pauses that
// client.think_share reports: under it is the timing of pauses that did
// not wait (TPC-C without --keying-thinking is a Pauser too), not think
// times.
const minThinkShare = 0.01

// LoadOf describes the load model of cfg.
func LoadOf(cfg runner.Config) Load {
	l := Load{Model: "closed", Threads: cfg.Threads, WarmupS: cfg.Warmup.Seconds(), Repeat: 1}
	if cfg.Duration > 0 {
		l.DurationS = f64(cfg.Duration.Seconds())
	}
	if cfg.Ops > 0 {
		ops := cfg.Ops
		l.Ops = &ops
	}
	if cfg.Rate > 0 || len(cfg.Steps) > 0 {
		l.fillOpen(cfg)
	}
	return l
}

func costsOf(c map[string]float64, requests int64) Costs {
	per := func(key string) *float64 {
		v, ok := c[key]
		if !ok || requests == 0 {
			return nil
		}
		return f64(v / float64(requests))
	}
	return Costs{
		LogBytesPerOp: per(target.CtrLogBytes), LogSyncsPerOp: per(target.CtrLogSyncs), LogWritesPerOp: per(target.CtrLogWrites),
		DataReadsPerOp: per(target.CtrDataReads), DataWritesPerOp: per(target.CtrDataWrites),
		DataSyncsPerOp: per(target.CtrDataSyncs), CommitsPerOp: per(target.CtrCommits),
		CPUusPerOp: scaled(serverCPUPerOp(c, requests), 1e6),
	}
}

// serverCPUPerOp is the server's CPU seconds per request, less the other
// sessions' backends where they were measured; nil when not measured.
func serverCPUPerOp(c map[string]float64, requests int64) *float64 {
	v, ok := c[target.CtrServerCPUSec]
	if !ok || requests == 0 {
		return nil
	}
	if fv, ok := c[target.CtrForeignCPUSec]; ok {
		v = max(v-fv, 0)
	}
	return f64(v / float64(requests))
}

// scaled returns v×k, or nil when v is nil.
func scaled(v *float64, k float64) *float64 {
	if v == nil {
		return nil
	}
	return f64(*v * k)
}

func fileOf(f target.FileStat, secs float64, requests int64) File {
	out := File{Name: f.Name, Role: f.Role, Reads: f.Reads, Writes: f.Writes, BytesRead: f.BytesRead,
		BytesWritten: f.BytesWritten, Syncs: f.Syncs,
		ReadMs: float64(f.ReadNs) / 1e6, WriteMs: float64(f.WriteNs) / 1e6, SyncMs: float64(f.SyncNs) / 1e6,
		NoSyncs: f.NoSyncs, NoWriteTime: f.NoWriteTime}
	if f.EmulatedNs > 0 {
		out.EmulatedWaitMs = f64(float64(f.EmulatedNs) / 1e6)
	}
	if secs > 0 {
		out.IOPS = float64(f.Reads+f.Writes) / secs
		out.MBPerSec = float64(f.BytesRead+f.BytesWritten) / MB / secs
	}
	if f.Reads > 0 {
		out.AvgReadMs = f64(out.ReadMs / float64(f.Reads))
	}
	if f.Writes > 0 {
		if !f.NoWriteTime {
			out.AvgWriteMs = f64(out.WriteMs / float64(f.Writes))
		}
		out.KBPerWrite = f64(float64(f.BytesWritten) / 1024 / float64(f.Writes))
	}
	if f.Syncs > 0 {
		out.AvgSyncMs = f64(out.SyncMs / float64(f.Syncs))
	}
	if requests > 0 && !f.NoSyncs {
		out.SyncsPerTxn = f64(float64(f.Syncs) / float64(requests))
	}
	return out
}

func intervalOf(iv runner.Interval, cores int, noBytes bool) IntervalPoint {
	secs := (iv.End - iv.Start).Seconds()
	t := iv.Snap.Total()
	p := IntervalPoint{T: iv.End.Seconds(), Seconds: secs, Warmup: iv.Warmup, Requests: t.Requests,
		RequestsPerSec: perSec(t.Requests, secs), RowsPerSec: perSec(t.Rows, secs), MBPerMin: mbRate(t.Bytes, secs, noBytes),
		Errors: t.ErrorCount(), Late: t.Late, LatencyMs: metrics.LatencyOf(t.Hist), OldestInFlightMs: float64(iv.OldestInFlight) / 1e6}
	if iv.Latency != nil {
		p.LatencyMs = iv.Latency
	}
	p.Histogram = iv.Hist
	p.LogMBPerSec, p.LogSyncsPerSec, p.DataIOPS = ioRates(iv.Evidence)
	p.FsyncsPerSec = fsyncRate(iv.Evidence)
	p.ServerCPUPct, p.HostCPUPct, p.WaitMsPerSec = cpuAndWaits(iv.Evidence)
	if e := iv.Evidence; e != nil {
		if d := logDeviceOf("", e.Counters, e.Seconds, t.Requests); d != nil {
			p.LogDevFlushesPerSec, p.LogDevFlushMs, p.LogDevWriteMs, p.LogDevBusyPct = d.FlushesPerSec, d.FlushMs, d.WriteMs, f64(d.BusyPct)
		}
		for _, f := range e.Files {
			if f.Reads != 0 || f.Writes != 0 || f.Syncs != 0 {
				p.Files = append(p.Files, fileOf(f, e.Seconds, t.Requests))
			}
		}
	}
	if iv.ClientCPU >= 0 && secs > 0 && cores > 0 {
		p.ClientCPUPct = f64(100 * iv.ClientCPU / secs / float64(cores))
	}
	return p
}

// ioRates returns the log MB/s, log syncs/s and data-file IOPS of e; each
// is nil when e lacks the counter (or is nil).
func ioRates(e *runner.Evidence) (logMB, logSyncs, dataIOPS *float64) {
	if e == nil || e.Seconds <= 0 {
		return nil, nil, nil
	}
	if v, ok := e.Counters[target.CtrLogBytes]; ok {
		logMB = f64(v / MB / e.Seconds)
	}
	if v, ok := e.Counters[target.CtrLogSyncs]; ok {
		logSyncs = f64(v / e.Seconds)
	}
	r, rok := e.Counters[target.CtrDataReads]
	w, wok := e.Counters[target.CtrDataWrites]
	if rok || wok {
		dataIOPS = f64((r + w) / e.Seconds)
	}
	return logMB, logSyncs, dataIOPS
}

// fsyncRate is e's fsyncs of log and data files together per second,
// where it has no log syncs of their own (MariaDB), else nil.
func fsyncRate(e *runner.Evidence) *float64 {
	if e == nil || e.Seconds <= 0 {
		return nil
	}
	if _, ok := e.Counters[target.CtrLogSyncs]; ok {
		return nil
	}
	if v, ok := e.Counters[target.CtrDataSyncs]; ok {
		return f64(v / e.Seconds)
	}
	return nil
}

// SyncsCell is a syncs/s cell of the console's tables: the log's syncs
// per second, else the fsyncs of log and data together marked "†" (see
// FsyncsNote), else n/a.
func SyncsCell(logSyncs, fsyncs *float64) string {
	switch {
	case logSyncs != nil:
		return fmt.Sprintf("%.0f", *logSyncs)
	case fsyncs != nil:
		return fmt.Sprintf("%.0f†", *fsyncs)
	}
	return "n/a"
}

// FsyncsNote explains a syncs/s cell marked "†".
const FsyncsNote = "syncs/s † = fsyncs of the log and the data files together: the server counts no log syncs of its own"

// cpuAndWaits returns the server's and the host's CPU (% of the host's
// cores) and the wait time by category (ms per second) of e; each is nil
// when e lacks the counters (or is nil).
func cpuAndWaits(e *runner.Evidence) (server, host *float64, waits map[string]float64) {
	if e == nil || e.Seconds <= 0 {
		return nil, nil, nil
	}
	if total, ok := e.Counters[target.CtrHostCPUTotal]; ok && total > 0 {
		if v, ok := e.Counters[target.CtrServerCPUSec]; ok {
			server = f64(100 * v / total)
		}
		if v, ok := e.Counters[target.CtrHostCPUBusy]; ok {
			host = f64(100 * v / total)
		}
	}
	for ctr, cat := range waitCounters {
		if v, ok := e.Counters[ctr]; ok {
			if waits == nil {
				waits = map[string]float64{}
			}
			waits[cat] = v / e.Seconds
		}
	}
	return server, host, waits
}

// OutFile reports whether out (the --out flag) names the result file itself
// rather than a directory for it: it ends in ".json" and is not an existing
// directory.
func OutFile(out string) bool {
	if !strings.EqualFold(filepath.Ext(out), ".json") {
		return false
	}
	fi, err := os.Stat(out)
	return err != nil || !fi.IsDir()
}

// Write writes the result atomically (temporary file, then rename) and
// returns its path. out is a directory, where the file is named after the
// result's ID (with "-partial" for a partial result), or, when it ends in
// ".json" (OutFile), the file itself, replaced if it exists.
func Write(out string, res *Result) (string, error) {
	dir, path := out, ""
	if OutFile(out) {
		dir, path = filepath.Dir(out), out
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("results directory %s: %w", dir, err)
	}
	if path == "" {
		name := res.ID
		if res.Partial {
			name += "-partial"
		}
		path = filepath.Join(dir, name+".json")
	}
	tmp, err := os.CreateTemp(dir, ".ceiling-result-*")
	if err != nil {
		return "", fmt.Errorf("write result in %s: %w", dir, err)
	}
	enc := json.NewEncoder(tmp)
	enc.SetIndent("", "  ")
	if err := enc.Encode(res); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return "", fmt.Errorf("encode result: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return "", fmt.Errorf("write result: %w", err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return "", fmt.Errorf("write result: %w", err)
	}
	// A temporary file is created 0600; a result holds no secret (the DSN
	// is redacted) and is read by others as the HTML report is.
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		os.Remove(tmp.Name())
		return "", fmt.Errorf("write result: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return "", fmt.Errorf("write result: %w", err)
	}
	return path, nil
}

// sortedKeys returns the keys of m in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// foreignWorkNote warns when the server committed clearly more transactions
// than ceiling sent requests: its counters are server-wide, so other work on
// the server is then mixed into the evidence and the per-request costs.
// Every workload ceiling has commits at most about one transaction per
// request (reads included); ceiling's own samplers' transactions (about 22
// a second on PostgreSQL) are left out of the commits counter, but the
// server publishes them up to about a second late. So both the ratio
// (> 1.5) and the excess rate (> 250/s) must be clearly above that.
// foreignWorkMark is the part of foreignWorkNote's text that tells it
// (a shard's result drops it: the other work is the other shards').
const foreignWorkMark = "other work on the server is mixed into"

// DropForeignWork removes foreignWorkNote's notes from a shard's result,
// whose server counters hold the other shards' requests: ceiling merge
// checks again over all of them.
func DropForeignWork(res *Result) {
	res.Notes = slices.DeleteFunc(res.Notes, func(n string) bool { return strings.Contains(n, foreignWorkMark) })
}

func foreignWorkNote(c Costs, excess, seconds float64) string {
	if c.CommitsPerOp == nil || *c.CommitsPerOp <= 1.5 || seconds <= 0 || excess/seconds <= 250 {
		return ""
	}
	return fmt.Sprintf("the server committed %.1f transactions per request ceiling sent: "+foreignWorkMark+" its server-wide counters, so the server evidence and per-request costs overstate this workload", *c.CommitsPerOp)
}

// sampleErr records in ev the run's failed samples of server evidence.
func sampleErr(ev *Evidence, r *runner.Result) {
	if r.SampleErr == "" {
		return
	}
	ev.Error, ev.FailedSamples = r.SampleErr, max(r.SampleErrs, 1)
	at := math.Round(r.SampleErrAt.Seconds()*10) / 10
	ev.FirstFailedS = &at
}
