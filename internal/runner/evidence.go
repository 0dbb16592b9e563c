package runner

import "github.com/ceiling-db/ceiling/internal/target"

// Evidence is the change in the server's counters over a period.
type Evidence struct {
	Seconds  float64
	Counters map[string]float64 // deltas; a counter the server lacks is absent
	Files    []target.FileStat  // per-file deltas
}

// Delta returns b - a. Counters present in only one sample are left out.
func Delta(a, b *target.Sample) *Evidence {
	e := &Evidence{Seconds: b.At.Sub(a.At).Seconds(), Counters: make(map[string]float64, len(b.Counters))}
	for k, v := range b.Counters {
		if av, ok := a.Counters[k]; ok {
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
				break
			}
		}
		e.Files = append(e.Files, d)
	}
	return e
}

// Add accumulates o into e (used to total intervals).
func (e *Evidence) Add(o *Evidence) {
	e.Seconds += o.Seconds
	if e.Counters == nil {
		e.Counters = map[string]float64{}
	}
	for k, v := range o.Counters {
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
				g.Reads += f.Reads
				g.Writes += f.Writes
				g.BytesRead += f.BytesRead
				g.BytesWritten += f.BytesWritten
				g.Syncs += f.Syncs
				g.ReadNs += f.ReadNs
				g.WriteNs += f.WriteNs
				g.SyncNs += f.SyncNs
				found = true
				break
			}
		}
		if !found {
			e.Files = append(e.Files, f)
		}
	}
}
