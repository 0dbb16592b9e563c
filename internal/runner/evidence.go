package runner

import (
	"strings"

	"github.com/ceiling-db/ceiling/internal/target"
)

// Evidence is the change in the server's counters over a period.
type Evidence struct {
	Seconds  float64
	Counters map[string]float64 // deltas; a counter the server lacks is absent
	Files    []target.FileStat  // per-file deltas
	// Restarted says the server's cumulative counters went back within
	// the period (a restart starts them from zero again): the server's
	// counters are left out, as no delta of them is known; those ceiling
	// reads from this host's kernel (hostSide) stay.
	Restarted bool
}

// restartCounters are cumulative server counters that only a restart (or
// a statistics reset) makes go back. Not commits: PostgreSQL's are the
// server's, published up to a second late, less ceiling's own sampler
// transactions, counted at once, so they can dip between two samples.
var restartCounters = []string{target.CtrLogBytes, target.CtrLogWrites, target.CtrLogSyncs, target.CtrDataReads,
	target.CtrDataWrites, target.CtrDataSyncs, target.CtrCacheReads}

// restarted says whether the server's counters went back from a to b: a
// restart starts them all from zero, so at least two of them (or the only
// one the server has) must have.
func restarted(a, b *target.Sample) bool {
	present, back := 0, 0
	for _, k := range restartCounters {
		av, ok1 := a.Counters[k]
		bv, ok2 := b.Counters[k]
		if ok1 && ok2 {
			present++
			if bv < av {
				back++
			}
		}
	}
	return back >= 2 || present == 1 && back == 1
}

// hostSide says whether counter k is read from this host's kernel (host
// CPU, the log device, ceiling's own threads), not from the server, so a
// server restart leaves it running.
func hostSide(k string) bool {
	return strings.HasPrefix(k, "host_") || strings.HasPrefix(k, "log_dev_") || k == target.CtrClientRunQueueSec
}

// dropServer leaves the server's counters out of e: a restart within its
// period.
func (e *Evidence) dropServer() {
	for k := range e.Counters {
		if !hostSide(k) {
			delete(e.Counters, k)
		}
	}
	e.Restarted = true
}

// Delta returns b - a. Counters present in only one sample are left out,
// but for the sparse ones (per-table lock waits, wait events: see
// target.Sparse), which appear with their first wait: absent from a, they
// count from zero.
func Delta(a, b *target.Sample) *Evidence {
	e := &Evidence{Seconds: b.At.Sub(a.At).Seconds(), Counters: make(map[string]float64, len(b.Counters))}
	for k, v := range b.Counters {
		av, ok := a.Counters[k]
		if !ok && target.Sparse(k) {
			av, ok = 0, true
		}
		if ok {
			if target.IsLevel(k) {
				e.Counters[k] = v
			} else {
				e.Counters[k] = v - av
			}
		}
	}
	for _, f := range b.Files {
		d := f
		for _, g := range a.Files {
			if g.Name == f.Name && g.Role == f.Role {
				d.Reads -= g.Reads
				d.Writes -= g.Writes
				d.BytesRead -= g.BytesRead
				d.BytesWritten -= g.BytesWritten
				d.Syncs -= g.Syncs
				d.ReadNs -= g.ReadNs
				d.WriteNs -= g.WriteNs
				d.SyncNs -= g.SyncNs
				d.EmulatedNs -= g.EmulatedNs
				if d.Reads < 0 || d.Writes < 0 || d.Syncs < 0 || d.ReadNs < 0 || d.WriteNs < 0 || d.SyncNs < 0 {
					// Its counts started again (a server that
					// restarted, a file made anew): from zero.
					d = f
				}
				break
			}
		}
		e.Files = append(e.Files, d)
	}
	return e
}

// Add accumulates o into e (used to total intervals). A total with a
// restarted part keeps only the host's counters.
func (e *Evidence) Add(o *Evidence) {
	e.Seconds += o.Seconds
	if e.Counters == nil {
		e.Counters = map[string]float64{}
	}
	if o.Restarted && !e.Restarted {
		e.dropServer()
	}
	for k, v := range o.Counters {
		if e.Restarted && !hostSide(k) {
			continue
		}
		if target.IsLevel(k) {
			e.Counters[k] = v
		} else {
			e.Counters[k] += v
		}
	}
	for _, f := range o.Files {
		found := false
		for i := range e.Files {
			g := &e.Files[i]
			if g.Name == f.Name && g.Role == f.Role {
				g.Add(f)
				found = true
				break
			}
		}
		if !found {
			e.Files = append(e.Files, f)
		}
	}
}
