package postgres

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ceiling-db/ceiling/internal/metrics"
)

// Classify maps an error from this package (or from pgx) to an error
// class:
//
//   - any FATAL or PANIC error (the server ends the session after those)
//     → ErrConnLost, whatever its SQLSTATE (a hot standby terminating a
//     session in conflict with recovery says 40001);
//   - SQLSTATE 40001 with "conflict with recovery" in its message (a hot
//     standby cancelling a query that replay would conflict with) →
//     ErrRecoveryConflict;
//   - SQLSTATE 40001 serialization_failure, 40P01 deadlock_detected →
//     ErrSerialization;
//   - 55P03 lock_not_available (lock_timeout, NOWAIT) → ErrLockTimeout;
//   - class 23 (unique, foreign key, not-null, check, exclusion) →
//     ErrConstraint;
//   - 57014 query_canceled (statement_timeout, pg_cancel_backend) and a
//     client-side deadline → ErrTimeout;
//   - class 08, 57P01/57P02/57P03 (terminated, crash, starting up), and
//     network-level failures (EOF, reset, closed connection, anything pgx
//     marks safe to retry) → ErrConnLost;
//   - anything else → ErrOther.
func Classify(err error) metrics.ErrClass {
	if err == nil {
		return metrics.ErrOther
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		if pgErr.Code == "40001" && pgErr.Severity == "ERROR" && strings.Contains(pgErr.Message, "conflict with recovery") {
			return metrics.ErrRecoveryConflict
		}
		return classifyCode(pgErr.Code, pgErr.Severity)
	}
	switch {
	case pgconn.Timeout(err), errors.Is(err, context.DeadlineExceeded):
		return metrics.ErrTimeout
	case errors.Is(err, pgconn.ErrConnClosed),
		pgconn.SafeToRetry(err),
		errors.Is(err, io.EOF),
		errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, net.ErrClosed):
		return metrics.ErrConnLost
	}
	var netErr net.Error
	if errors.As(err, &netErr) {
		return metrics.ErrConnLost
	}
	var connectErr *pgconn.ConnectError
	if errors.As(err, &connectErr) {
		return metrics.ErrConnLost
	}
	return metrics.ErrOther
}

// classifyCode maps a SQLSTATE (and the severity it came with).
func classifyCode(code, severity string) metrics.ErrClass {
	if severity == "FATAL" || severity == "PANIC" {
		return metrics.ErrConnLost
	}
	switch code {
	case "40001", "40P01":
		return metrics.ErrSerialization
	case "55P03":
		return metrics.ErrLockTimeout
	case "57014":
		return metrics.ErrTimeout
	case "57P01", "57P02", "57P03":
		return metrics.ErrConnLost
	}
	switch {
	case strings.HasPrefix(code, "23"):
		return metrics.ErrConstraint
	case strings.HasPrefix(code, "08"):
		return metrics.ErrConnLost
	}
	return metrics.ErrOther
}
