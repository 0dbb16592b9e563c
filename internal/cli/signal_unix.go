//go:build unix

package cli

import (
	"os"
	"os/signal"
	"syscall"
)

// reraise ends the process by sig, with its default action, as if no
// handler had caught it (the shell then reports 128 + its number).
func reraise(sig syscall.Signal) {
	signal.Reset(sig)
	_ = syscall.Kill(os.Getpid(), sig)
	select {} // the signal ends the process
}

// ignorePipe makes a write to a pipe whose reader has gone fail with
// EPIPE instead of ending the process (SIGPIPE's default action, which Go
// keeps for standard output and error).
func ignorePipe() { signal.Ignore(syscall.SIGPIPE) }
