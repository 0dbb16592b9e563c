//go:build !linux

package seqsel

import (
	"errors"
	"os"
)

// dropFilePages would drop f's pages from the OS cache; posix_fadvise is
// not available here.
func dropFilePages(*os.File) error {
	return errors.New("posix_fadvise is not available on this system")
}

// syncAll does nothing: the page cache is dropped through Linux's
// drop_caches only, which does not exist here.
func syncAll() {}
