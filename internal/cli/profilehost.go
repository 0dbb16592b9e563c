package cli

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/ceiling-db/ceiling/internal/hostprof"
)

// profileHostRuns and profileHostMB size the probes of profile-host.
const (
	profileHostRuns = 500
	profileHostMB   = 64
)

// hostProfile is the "this machine" profile profile-host writes.
type hostProfile struct {
	Name             string      `json:"name"`
	MeasuredAt       time.Time   `json:"measured_at"`
	Source           string      `json:"source"`
	Dir              string      `json:"dir"`
	FsyncMs          hostLatency `json:"fsync_ms"`
	FsyncsPerSec     float64     `json:"fsyncs_per_sec"`
	SeqWriteMBPerSec float64     `json:"seq_write_mb_per_sec"`
	Cores            int         `json:"cores"`
	// InMemory names the memory file system (tmpfs, ramfs) Dir is on:
	// its figures then describe memory, not a disk.
	InMemory string `json:"in_memory,omitempty"`
}

type hostLatency struct {
	P50  float64 `json:"p50"`
	P99  float64 `json:"p99"`
	Mean float64 `json:"mean"`
}

func (e *env) profileHostCmd() *cobra.Command {
	var dir, out string
	cmd := &cobra.Command{
		Use:   "profile-host [flags]",
		Short: "Measure this machine's flush latency, sequential write rate and cores",
		Long: fmt.Sprintf(`profile-host measures the machine ceiling runs on: %d writes of 4 KiB, each
followed by fdatasync, of a temporary file in --dir (the latency of one flush,
as a commit waits for, and flushes per second at one writer), %d MiB of
sequential 1 MiB writes with one final fsync (MB/s), and the cores. The
temporary files are removed.

It prints a table and, with --out, writes the figures as a small JSON
profile named "this-host". Run it with --dir on the disk that holds the
database's log for figures that describe that disk.`, profileHostRuns, profileHostMB),
		Example: `  ceiling profile-host
  ceiling profile-host --dir /var/lib/postgresql --out this-host.json
  ceiling profile-host --dir /mnt/data`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if dir == "" {
				dir = os.TempDir()
			}
			if err := checkDir(dir); err != nil {
				return usagef("--dir %s", err)
			}
			if out != "" {
				if st, err := os.Stat(filepath.Dir(out)); err != nil || !st.IsDir() {
					return usagef("--out %s: directory %s does not exist", out, filepath.Dir(out))
				}
			}
			ctx := cmd.Context()
			fs, err := hostprof.FsyncProbe(ctx, dir, profileHostRuns)
			if err != nil {
				return err
			}
			mbps, err := hostprof.SeqWrite(ctx, dir, profileHostMB)
			if err != nil {
				return err
			}
			p := hostProfile{
				Name: "this-host", MeasuredAt: time.Now().UTC().Truncate(time.Second), Source: "ceiling profile-host", Dir: dir,
				FsyncMs:          hostLatency{P50: round3(fs.P50Ms), P99: round3(fs.P99Ms), Mean: round3(fs.MeanMs)},
				FsyncsPerSec:     math.Round(fs.SyncsPerSec),
				SeqWriteMBPerSec: math.Round(mbps*10) / 10,
				Cores:            hostprof.Cores(),
			}
			fmt.Fprintf(e.stdout, "this host, measured in %s\n", dir)
			fmt.Fprintf(e.stdout, "  %-34s %10s %10s %10s\n", "", "p50 ms", "p99 ms", "mean ms")
			fmt.Fprintf(e.stdout, "  %-34s %10.3f %10.3f %10.3f\n", fmt.Sprintf("4 KiB write + %s (×%d)", fs.SyncCallName, fs.N), fs.P50Ms, fs.P99Ms, fs.MeanMs)
			fmt.Fprintf(e.stdout, "  %-34s %10.0f\n", "flushes/s (one writer)", fs.SyncsPerSec)
			fmt.Fprintf(e.stdout, "  %-34s %10.1f\n", fmt.Sprintf("sequential write MB/s (%d MiB)", profileHostMB), mbps)
			fmt.Fprintf(e.stdout, "  %-34s %10d\n", "cores", p.Cores)
			if name, ok := hostprof.InMemory(dir); ok {
				p.InMemory = name
				fmt.Fprintf(e.stdout, "warning: %s is on a %s, kept in memory: its flushes never reach a disk, so these figures do not describe one; measure a disk directory with --dir\n", dir, name)
			}
			if out == "" {
				return nil
			}
			b, err := json.MarshalIndent(p, "", "  ")
			if err != nil {
				return err
			}
			tmp := out + ".tmp"
			if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
				return fmt.Errorf("--out %s: %v", out, unwrapPath(err))
			}
			if err := os.Rename(tmp, out); err != nil {
				os.Remove(tmp)
				return fmt.Errorf("--out %s: %v", out, unwrapPath(err))
			}
			fmt.Fprintf(e.stdout, "profile: %s\n", out)
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "directory to measure (default "+os.TempDir()+"); put it on the database's log disk")
	cmd.Flags().StringVar(&out, "out", "", "write the profile as JSON to this file")
	return cmd
}
