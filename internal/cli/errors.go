package cli

import (
	"errors"
	"fmt"
)

// Exit codes.
const (
	ExitOK    = 0
	ExitRun   = 1 // the run failed: server unreachable, wrong password, SQL error …
	ExitUsage = 2 // bad command line, flag value, DSN or workload name
)

// UsageError marks an error in what the user typed.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

func usagef(format string, a ...any) error {
	return &UsageError{Err: fmt.Errorf(format, a...)}
}

// exitCode maps an error to the process exit code.
func exitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var u *UsageError
	if errors.As(err, &u) {
		return ExitUsage
	}
	return ExitRun
}
