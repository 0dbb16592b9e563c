package seqsel

import (
	"os"

	"golang.org/x/sys/unix"
)

// dropFilePages asks the kernel to drop f's clean pages from its cache.
func dropFilePages(f *os.File) error {
	return unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
}

// syncAll writes every file system's dirty data back (sync(2)).
func syncAll() { unix.Sync() }
