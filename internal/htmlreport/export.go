package htmlreport

import (
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/ceiling-db/ceiling/internal/diagnose"
	"github.com/ceiling-db/ceiling/internal/metrics"
	"github.com/ceiling-db/ceiling/internal/report"
)

// cell formats a figure for CSV: full precision, empty when not measured.
func cell(v *float64) string {
	if v == nil {
		return ""
	}
	return strconv.FormatFloat(*v, 'g', -1, 64)
}

func fcell(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

func latCells(l *metrics.Latency) []string {
	if l == nil {
		return make([]string, 7)
	}
	return []string{fcell(l.P50), fcell(l.P90), fcell(l.P95), fcell(l.P99), fcell(l.P999), fcell(l.Max), fcell(l.Mean)}
}

var latHead = []string{"p50_ms", "p90_ms", "p95_ms", "p99_ms", "p999_ms", "max_ms", "mean_ms"}

// baseName is the file name of a result without its extension.
func baseName(path string) string {
	b := filepath.Base(path)
	return strings.TrimSuffix(b, filepath.Ext(b))
}

// WriteCSV writes each result's per-interval series (NAME.intervals.csv)
// and, when it has steps, per-step series (NAME.steps.csv) and, with
// repeats, per-run figures (NAME.runs.csv) into dir, NAME being the result
// file's name without .json. A figure not measured is an empty cell. It
// returns the paths written.
func WriteCSV(dir string, ins []Input) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("csv directory %s: %w", dir, err)
	}
	var paths []string
	seen := map[string]int{}
	for _, in := range ins {
		name := baseName(in.Path)
		if n := seen[name]; n > 0 {
			name = fmt.Sprintf("%s-%d", name, n+1)
		}
		seen[baseName(in.Path)]++
		r := in.Result
		files := []struct {
			suffix string
			rows   [][]string
		}{{"intervals", intervalRows(r)}}
		if len(r.Steps) > 0 {
			files = append(files, struct {
				suffix string
				rows   [][]string
			}{"steps", stepRows(r)})
		}
		if len(r.Runs) > 0 {
			files = append(files, struct {
				suffix string
				rows   [][]string
			}{"runs", runRows(r)})
		}
		for _, f := range files {
			p := filepath.Join(dir, name+"."+f.suffix+".csv")
			if err := writeCSVFile(p, f.rows); err != nil {
				return paths, err
			}
			paths = append(paths, p)
		}
	}
	return paths, nil
}

func writeCSVFile(path string, rows [][]string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	w := csv.NewWriter(f)
	if err := w.WriteAll(rows); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

func intRef(p *int) string {
	if p == nil {
		return ""
	}
	return strconv.Itoa(*p)
}

// csvWaits are the wait categories of the intervals' columns in the order
// they were first exported; later ones follow the last column.
var csvWaits = []string{diagnose.WaitLog, diagnose.WaitDataWrite, diagnose.WaitDataRead, diagnose.WaitLock, diagnose.WaitCPU, diagnose.WaitOther, diagnose.WaitClient}

func intervalRows(r *report.Result) [][]string {
	head := []string{"run", "step", "t_s", "seconds", "warmup", "requests", "requests_per_sec", "rows_per_sec", "mb_per_min", "errors", "late"}
	head = append(head, latHead...)
	head = append(head, "log_mb_per_sec", "log_syncs_per_sec", "data_iops", "data_latency_ms", "log_sync_latency_ms",
		"client_cpu_pct_of_cores", "server_cpu_pct_of_cores", "host_cpu_busy_pct")
	for _, w := range csvWaits {
		head = append(head, "wait_"+w+"_ms_per_sec")
	}
	// Last: the columns before them kept their places.
	head = append(head, "fsyncs_per_sec", "wait_"+diagnose.WaitRepl+"_ms_per_sec")
	rows := [][]string{head}
	for i := range r.Intervals {
		pt := &r.Intervals[i]
		row := []string{intRef(pt.Run), intRef(pt.Step), fcell(pt.T), fcell(pt.Seconds), strconv.FormatBool(pt.Warmup),
			strconv.FormatInt(pt.Requests, 10), fcell(pt.RequestsPerSec), fcell(pt.RowsPerSec), cell(pt.MBPerMin),
			strconv.FormatInt(pt.Errors, 10), strconv.FormatInt(pt.Late, 10)}
		row = append(row, latCells(pt.LatencyMs)...)
		row = append(row, cell(pt.LogMBPerSec), cell(pt.LogSyncsPerSec), cell(pt.DataIOPS), nanCell(dataLatency(pt)), nanCell(logSyncLatency(pt)),
			cell(pt.ClientCPUPct), cell(pt.ServerCPUPct), cell(pt.HostCPUPct))
		wait := func(w string) string {
			if v, ok := pt.WaitMsPerSec[w]; ok {
				return fcell(v)
			}
			return ""
		}
		for _, w := range csvWaits {
			row = append(row, wait(w))
		}
		row = append(row, cell(pt.FsyncsPerSec), wait(diagnose.WaitRepl))
		rows = append(rows, row)
	}
	return rows
}

func nanCell(v float64) string {
	if v != v {
		return ""
	}
	return fcell(v)
}

func stepRows(r *report.Result) [][]string {
	head := []string{"step", "rate", "batch", "threads", "achieved_per_sec", "achieved_pct", "scheduled", "completed", "late", "late_pct", "failed", "rows_per_sec", "mb_per_min"}
	head = append(head, latHead...)
	head = append(head, "log_mb_per_sec", "log_syncs_per_sec", "data_iops", "log_bytes_per_op", "log_syncs_per_op", "log_bytes_per_data_byte", "client_cpu_pct_of_cores", "saturated", "bottleneck",
		"service_mean_ms", "service_p99_ms", "fsyncs_per_sec")
	rows := [][]string{head}
	for _, s := range r.Steps {
		bn := ""
		if s.Verdict != nil {
			bn = s.Verdict.Bottleneck
		}
		row := []string{strconv.Itoa(s.Index + 1), fcell(s.Rate), intRef(s.Batch), intRef(s.Threads), cell(s.AchievedPerSec), cell(s.AchievedPct),
			strconv.FormatInt(s.Scheduled, 10), strconv.FormatInt(s.Completed, 10), strconv.FormatInt(s.Late, 10), cell(s.LatePct),
			strconv.FormatInt(s.Failed, 10), cell(s.RowsPerSec), cell(s.MBPerMin)}
		row = append(row, latCells(s.LatencyMs)...)
		row = append(row, cell(s.LogMBPerSec), cell(s.LogSyncsPerSec), cell(s.DataIOPS), cell(s.Costs.LogBytesPerOp), cell(s.Costs.LogSyncsPerOp),
			cell(s.LogBytesPerDataByte), cell(s.ClientCPUPct), strconv.FormatBool(s.Saturated), bn)
		svcMean, svcP99 := "", ""
		if l := s.ServiceMs; l != nil {
			svcMean, svcP99 = fcell(l.Mean), fcell(l.P99)
		}
		row = append(row, svcMean, svcP99, cell(s.FsyncsPerSec))
		rows = append(rows, row)
	}
	return rows
}

func runRows(r *report.Result) [][]string {
	head := []string{"run", "partial", "elapsed_s", "requests", "requests_per_sec", "rows_per_sec", "mb_per_min", "errors", "late_pct"}
	head = append(head, latHead...)
	for _, c := range costRows {
		head = append(head, c.key)
	}
	rows := [][]string{head}
	for _, run := range r.Runs {
		row := []string{strconv.Itoa(run.Run), strconv.FormatBool(run.Partial), fcell(run.ElapsedS), strconv.FormatInt(run.Requests, 10),
			fcell(run.RequestsPerSec), fcell(run.RowsPerSec), cell(run.MBPerMin), strconv.FormatInt(run.Errors, 10), cell(run.LatePct)}
		row = append(row, latCells(run.LatencyMs)...)
		for _, c := range costRows {
			row = append(row, cell(c.get(run.Costs)))
		}
		rows = append(rows, row)
	}
	return rows
}

// Summary is the compact summary of one result for scripts
// (ceiling report --json).
type Summary struct {
	File           string                  `json:"file"`
	ID             string                  `json:"id"`
	Workload       string                  `json:"workload"`
	Engine         string                  `json:"engine"`
	Durability     string                  `json:"durability"`
	TLS            string                  `json:"tls,omitempty"` // target.tls: "off", or the protocol and cipher suite
	Model          string                  `json:"model"`
	Threads        int                     `json:"threads"`
	Repeat         int                     `json:"repeat"`
	Partial        bool                    `json:"partial"`
	ElapsedS       float64                 `json:"elapsed_s"`
	RequestsPerSec float64                 `json:"requests_per_sec"`
	RowsPerSec     float64                 `json:"rows_per_sec"`
	LatencyMs      *metrics.Latency        `json:"latency_ms"`
	Errors         int64                   `json:"errors"`
	LatePct        *float64                `json:"late_pct"`
	Costs          report.Costs            `json:"costs"`
	Figures        map[string]float64      `json:"figures,omitempty"`
	RepeatStats    map[string]*report.Stat `json:"repeat_stats,omitempty"`
	Bottleneck     *string                 `json:"bottleneck"`
	Suggestions    []SummarySuggestion     `json:"suggestions"`
	// MaxSustainedRate is, for a ramp, the highest requested rate below the
	// lowest saturated step; null otherwise (or when the first step was
	// saturated already).
	MaxSustainedRate *float64 `json:"max_sustained_rate"`
	// KneeRate and KneeSLO are a knee search's answer (the highest rate that
	// met the SLO) and the SLO with its implied terms; null otherwise.
	KneeRate *float64 `json:"knee_rate"`
	KneeSLO  *string  `json:"knee_slo"`
	// PeakThreads and PeakRequestsPerSec are, for a thread ramp, the
	// thread count that did the most requests/s and that rate; absent
	// otherwise.
	PeakThreads        *int     `json:"peak_threads,omitempty"`
	PeakRequestsPerSec *float64 `json:"peak_requests_per_sec,omitempty"`
	// ThinkShare is client.think_share: the share of the workers' time in
	// think times; absent when they did not pause.
	ThinkShare *float64 `json:"think_share,omitempty"`
}

// SummarySuggestion is a verdict's suggestion with its predicted gain.
type SummarySuggestion struct {
	Action        string   `json:"action"`
	PredictedGain *float64 `json:"predicted_gain"`
}

// Summaries returns the compact summary of each result.
func Summaries(ins []Input) []Summary {
	out := make([]Summary, 0, len(ins))
	for _, in := range ins {
		r := in.Result
		s := Summary{File: in.Path, ID: r.ID, Workload: r.Workload.Name, Engine: r.Target.Engine, Durability: string(r.Target.Durability.Mode), TLS: r.Target.TLS,
			Model: r.Load.Model, Threads: r.Load.Threads, Repeat: max(r.Load.Repeat, 1), Partial: r.Partial, ElapsedS: r.Summary.ElapsedS,
			RequestsPerSec: r.Summary.RequestsPerSec, RowsPerSec: r.Summary.RowsPerSec, LatencyMs: r.Summary.LatencyMs, Errors: r.Summary.Errors,
			Costs: r.Costs, Figures: r.Figures, RepeatStats: r.RepeatStats, Suggestions: []SummarySuggestion{}, ThinkShare: r.Client.ThinkShare}
		if r.Summary.Scheduled != nil {
			s.LatePct = pct(r.Summary.Late, *r.Summary.Scheduled)
		}
		if r.Verdict != nil {
			bn := r.Verdict.Bottleneck
			s.Bottleneck = &bn
			for _, sg := range r.Verdict.Suggestions {
				s.Suggestions = append(s.Suggestions, SummarySuggestion{Action: sg.Action, PredictedGain: sg.PredictedGain})
			}
		}
		s.MaxSustainedRate = maxSustained(r.Steps)
		if i := report.PeakThreadStep(r.Steps); i >= 0 {
			s.PeakThreads, s.PeakRequestsPerSec = r.Steps[i].Threads, r.Steps[i].AchievedPerSec
		}
		if k := r.Knee; k != nil {
			// A knee search's probes are not a ramp: a transient failure
			// is no ceiling, and its answer is the knee.
			s.MaxSustainedRate, s.KneeRate, s.KneeSLO = nil, k.Rate, &k.SLOApplied
		}
		out = append(out, s)
	}
	return out
}

// maxSustained is the highest requested rate below the lowest saturated
// step, or nil (no rate steps, or the lowest step saturated).
func maxSustained(steps []report.Step) *float64 {
	var rates []report.Step
	for _, st := range steps {
		if st.Batch == nil && st.Rate > 0 && !st.Partial {
			rates = append(rates, st)
		}
	}
	sort.SliceStable(rates, func(i, j int) bool { return rates[i].Rate < rates[j].Rate })
	var best *float64
	for _, st := range rates {
		if st.Saturated {
			break
		}
		best = f64(st.Rate)
	}
	return best
}
