//go:build unix

package osstat

import (
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// DiskOf finds the block device holding the file system of path (or of its
// nearest existing parent, as for a directory a server names but that
// this user may not list): ok is false when path is on no device that
// /proc/diskstats lists (tmpfs, overlay and btrfs have anonymous device
// numbers) or outside Linux.
func DiskOf(path string) (DiskDevice, bool) {
	if path == "" {
		return DiskDevice{}, false
	}
	p := filepath.Clean(path)
	for {
		fi, err := os.Stat(p)
		if err == nil {
			st, ok := fi.Sys().(*syscall.Stat_t)
			if !ok {
				return DiskDevice{}, false
			}
			dev := uint64(st.Dev) //nolint:unconvert // int32 on some systems
			d := DiskDevice{Major: unix.Major(dev), Minor: unix.Minor(dev), Path: p}
			s, ok := ReadDisk(d)
			if !ok {
				return DiskDevice{}, false
			}
			d.Name = s.Name
			return d, true
		}
		parent := filepath.Dir(p)
		if parent == p {
			return DiskDevice{}, false
		}
		p = parent
	}
}
