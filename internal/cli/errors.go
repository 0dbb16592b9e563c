package cli

import (
	"context"
	"errors"
	"fmt"
)

// Exit codes.
const (
	ExitOK    = 0
	ExitRun   = 1 // the run failed: server unreachable, wrong password, SQL error …
	ExitUsage = 2 // bad command line, flag value, DSN or workload name
	// A command stopped by a signal exits with 128 + the signal's number,
	// as shells report it: 130 after Ctrl-C (SIGINT), 143 after SIGTERM, 129
	// after SIGHUP.
	exitSignalBase = 128
)

// UsageError marks an error in what the user typed.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

func usagef(format string, a ...any) error {
	return &UsageError{Err: fmt.Errorf(format, a...)}
}

// exitCode maps an error to the process exit code; ctx is the context the
// command ran under, so that a command a signal stopped exits as such.
func exitCode(ctx context.Context, err error) int {
	if err == nil {
		return ExitOK
	}
	var sig Signal
	if errors.As(context.Cause(ctx), &sig) && sig.Sig > 0 {
		return exitSignalBase + int(sig.Sig)
	}
	var u *UsageError
	if errors.As(err, &u) {
		return ExitUsage
	}
	return ExitRun
}
