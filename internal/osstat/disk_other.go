//go:build !unix

package osstat

// DiskOf finds the block device holding path's file system: not available
// on this system.
func DiskOf(path string) (DiskDevice, bool) { return DiskDevice{}, false }
