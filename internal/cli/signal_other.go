//go:build !unix

package cli

import (
	"os"
	"syscall"
)

// reraise ends the process as the signal would have: where signals cannot
// be raised again, with 128 + its number as the exit status.
func reraise(sig syscall.Signal) {
	os.Exit(128 + int(sig))
}

// ignorePipe: no SIGPIPE here; a write to a closed pipe fails (pipeOut).
func ignorePipe() {}
