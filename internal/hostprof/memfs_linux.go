package hostprof

import "golang.org/x/sys/unix"

// InMemory reports whether dir is on a file system kept in memory (tmpfs,
// ramfs), whose flushes never reach a disk, and names it.
func InMemory(dir string) (name string, ok bool) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return "", false
	}
	switch uint32(st.Type) { // int64 or int32 by architecture; the magics are 32-bit
	case unix.TMPFS_MAGIC:
		return "tmpfs", true
	case unix.RAMFS_MAGIC:
		return "ramfs", true
	}
	return "", false
}
