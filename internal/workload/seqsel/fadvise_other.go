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
