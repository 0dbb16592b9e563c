// Package hostprof measures this machine's storage and CPU: the latency of a
// flush (write + fdatasync of one 4 KiB block, as a commit's log flush
// does), the rate of sequential writes, and the cores. ceiling uses the
// flush latency as an estimate of a local server's log-flush latency when
// the server itself does not time its syncs.
package hostprof

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sort"
	"time"
)

// BlockSize is the size of each probe write: one 4 KiB block.
const BlockSize = 4096

// Fsync is the result of FsyncProbe.
type Fsync struct {
	Dir          string
	N            int     // syncs done
	P50Ms        float64 // latency of write+fdatasync, ms
	P99Ms        float64 // ms
	MeanMs       float64 // ms
	MaxMs        float64 // ms
	SyncsPerSec  float64 // N ÷ elapsed
	ElapsedS     float64 // whole probe, seconds
	SyncCallName string  // "fdatasync" or "fsync"
}

// FsyncProbe creates a temporary file in dir and does n times: write 4 KiB
// at offset 0, then fdatasync (fsync where fdatasync does not exist). It
// reports the latency of each write+sync pair and removes the file.
func FsyncProbe(ctx context.Context, dir string, n int) (Fsync, error) {
	if n <= 0 {
		return Fsync{}, fmt.Errorf("fsync probe: n must be positive, got %d", n)
	}
	f, err := os.CreateTemp(dir, ".ceiling-fsync-*")
	if err != nil {
		return Fsync{}, fmt.Errorf("fsync probe in %s: %w", dir, unwrapPath(err))
	}
	name := f.Name()
	defer func() {
		f.Close()
		os.Remove(name)
	}()
	buf := make([]byte, BlockSize)
	for i := range buf {
		buf[i] = byte(i)
	}
	// The first write allocates the block; sync it before timing, so the
	// probe measures overwrites of an allocated block, like a log's.
	if _, err := f.WriteAt(buf, 0); err != nil {
		return Fsync{}, fmt.Errorf("fsync probe: write: %w", err)
	}
	if err := f.Sync(); err != nil {
		return Fsync{}, fmt.Errorf("fsync probe: fsync: %w", err)
	}
	lat := make([]float64, 0, n)
	start := time.Now()
	for i := 0; i < n; i++ {
		if err := ctx.Err(); err != nil {
			return Fsync{}, err
		}
		buf[0] = byte(i)
		t0 := time.Now()
		if _, err := f.WriteAt(buf, 0); err != nil {
			return Fsync{}, fmt.Errorf("fsync probe: write: %w", err)
		}
		if err := datasync(f); err != nil {
			return Fsync{}, fmt.Errorf("fsync probe: %s: %w", syncCall, err)
		}
		lat = append(lat, float64(time.Since(t0).Nanoseconds())/1e6)
	}
	el := time.Since(start).Seconds()
	r := Fsync{Dir: dir, N: n, ElapsedS: el, SyncCallName: syncCall}
	l := Summarize(lat)
	r.MeanMs, r.P50Ms, r.P99Ms, r.MaxMs = l.MeanMs, l.P50Ms, l.P99Ms, l.MaxMs
	if el > 0 {
		r.SyncsPerSec = float64(n) / el
	}
	return r, nil
}

// Latency summarises a probe's latencies, ms.
type Latency struct {
	N                           int
	P50Ms, P99Ms, MeanMs, MaxMs float64
}

// Summarize returns the nearest-rank p50 and p99, the mean and the maximum
// of ms (the zero Latency for none).
func Summarize(ms []float64) Latency {
	if len(ms) == 0 {
		return Latency{}
	}
	sorted := append([]float64(nil), ms...)
	sort.Float64s(sorted)
	var sum float64
	for _, v := range sorted {
		sum += v
	}
	return Latency{N: len(sorted), P50Ms: quantile(sorted, 0.50), P99Ms: quantile(sorted, 0.99),
		MeanMs: sum / float64(len(sorted)), MaxMs: sorted[len(sorted)-1]}
}

// quantile is the nearest-rank quantile of sorted values.
func quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.999999) - 1
	if i < 0 {
		i = 0
	}
	if i >= len(sorted) {
		i = len(sorted) - 1
	}
	return sorted[i]
}

// SeqWrite writes mb MiB sequentially in 1 MiB writes to a temporary file
// in dir, fsyncs it once at the end, removes it, and returns MB/s (MiB/s)
// over the whole, the final fsync included.
func SeqWrite(ctx context.Context, dir string, mb int) (float64, error) {
	if mb <= 0 {
		return 0, fmt.Errorf("sequential write probe: size must be positive, got %d MiB", mb)
	}
	f, err := os.CreateTemp(dir, ".ceiling-seq-*")
	if err != nil {
		return 0, fmt.Errorf("sequential write probe in %s: %w", dir, unwrapPath(err))
	}
	name := f.Name()
	defer func() {
		f.Close()
		os.Remove(name)
	}()
	buf := make([]byte, 1<<20)
	for i := range buf {
		buf[i] = byte(i * 7)
	}
	start := time.Now()
	for i := 0; i < mb; i++ {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		buf[0] = byte(i)
		if _, err := f.Write(buf); err != nil {
			return 0, fmt.Errorf("sequential write probe: write: %w", err)
		}
	}
	if err := f.Sync(); err != nil {
		return 0, fmt.Errorf("sequential write probe: fsync: %w", err)
	}
	el := time.Since(start).Seconds()
	if el <= 0 {
		return 0, errors.New("sequential write probe: no time elapsed")
	}
	return float64(mb) / el, nil
}

// Cores is the number of logical CPUs usable by this process.
func Cores() int { return runtime.NumCPU() }

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
