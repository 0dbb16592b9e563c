package osstat

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
)

// Disk is one block device's counters from /proc/diskstats, cumulative
// since boot (Documentation/admin-guide/iostats.rst). Times are the sums of
// the requests' times from issue to completion, ms.
type Disk struct {
	Name      string
	Reads     uint64 // reads completed
	ReadBytes uint64 // bytes read (sectors of 512 bytes, whatever the device's own)
	ReadMs    uint64
	Writes    uint64 // writes completed
	WriteMs   uint64
	IOTicksMs uint64 // time with at least one request in flight
	// Flushes and FlushMs are the cache-flush requests completed and their
	// time (kernel 5.5 and later; HasFlush is false on older kernels). An
	// fsync or fdatasync on a device with a volatile write cache sends one.
	Flushes  uint64
	FlushMs  uint64
	HasFlush bool
}

// DiskDevice names a block device by its device number, as stat(2) gives
// it for a file on a file system the device holds.
type DiskDevice struct {
	Major, Minor uint32
	Name         string // as /proc/diskstats lists it, e.g. "vda", "nvme0n1p2", "dm-0"
	// Path is the directory whose file system was examined: the one asked
	// about, or its nearest parent that could be examined.
	Path string
}

// ReadDisk reads the counters of device d from /proc/diskstats.
func ReadDisk(d DiskDevice) (Disk, bool) {
	if runtime.GOOS != "linux" {
		return Disk{}, false
	}
	b, err := os.ReadFile(filepath.Join(Root, "diskstats"))
	if err != nil {
		return Disk{}, false
	}
	st, err := ParseDiskStats(string(b), d.Major, d.Minor)
	return st, err == nil
}

// ParseDiskStats finds device major:minor in the text of /proc/diskstats.
func ParseDiskStats(text string, major, minor uint32) (Disk, error) {
	mj, mn := strconv.FormatUint(uint64(major), 10), strconv.FormatUint(uint64(minor), 10)
	for line := range strings.SplitSeq(text, "\n") {
		f := strings.Fields(line)
		if len(f) < 14 || f[0] != mj || f[1] != mn {
			continue
		}
		var v [17]uint64 // the fields after the name
		n := min(len(f)-3, len(v))
		for i := range n {
			x, err := strconv.ParseUint(f[3+i], 10, 64)
			if err != nil {
				return Disk{}, errors.New("osstat: bad line in /proc/diskstats: " + line)
			}
			v[i] = x
		}
		d := Disk{Name: f[2], Reads: v[0], ReadBytes: 512 * v[2], ReadMs: v[3], Writes: v[4], WriteMs: v[7], IOTicksMs: v[9]}
		if n >= 17 {
			d.Flushes, d.FlushMs, d.HasFlush = v[15], v[16], true
		}
		return d, nil
	}
	return Disk{}, errors.New("osstat: device " + mj + ":" + mn + " not in /proc/diskstats")
}
