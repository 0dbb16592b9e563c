package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ceiling-db/ceiling/internal/metrics"
)

// retryable mimics pgconn's unexported errors that are safe to retry.
type retryable struct{}

func (retryable) Error() string     { return "conn busy" }
func (retryable) SafeToRetry() bool { return true }

func TestClassifyConstructed(t *testing.T) {
	pg := func(code, severity string) error {
		return fmt.Errorf("postgres: exec: %w", &pgconn.PgError{Code: code, Severity: severity, Message: "m"})
	}
	tests := []struct {
		name string
		err  error
		want metrics.ErrClass
	}{
		{"nil", nil, metrics.ErrOther},
		{"serialization", pg("40001", "ERROR"), metrics.ErrSerialization},
		{"deadlock", pg("40P01", "ERROR"), metrics.ErrSerialization},
		{"lock not available", pg("55P03", "ERROR"), metrics.ErrLockTimeout},
		{"unique", pg("23505", "ERROR"), metrics.ErrConstraint},
		{"foreign key", pg("23503", "ERROR"), metrics.ErrConstraint},
		{"not null", pg("23502", "ERROR"), metrics.ErrConstraint},
		{"check", pg("23514", "ERROR"), metrics.ErrConstraint},
		{"query canceled", pg("57014", "ERROR"), metrics.ErrTimeout},
		{"admin shutdown", pg("57P01", "FATAL"), metrics.ErrConnLost},
		{"crash shutdown", pg("57P02", "FATAL"), metrics.ErrConnLost},
		{"cannot connect now", pg("57P03", "FATAL"), metrics.ErrConnLost},
		{"connection failure", pg("08006", "FATAL"), metrics.ErrConnLost},
		{"idle session timeout", pg("57P05", "FATAL"), metrics.ErrConnLost},
		{"syntax", pg("42601", "ERROR"), metrics.ErrOther},
		{"undefined table", pg("42P01", "ERROR"), metrics.ErrOther},
		{"eof", fmt.Errorf("x: %w", io.EOF), metrics.ErrConnLost},
		{"unexpected eof", io.ErrUnexpectedEOF, metrics.ErrConnLost},
		{"conn closed", fmt.Errorf("x: %w", pgconn.ErrConnClosed), metrics.ErrConnLost},
		{"safe to retry", retryable{}, metrics.ErrConnLost},
		{"net reset", &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}, metrics.ErrConnLost},
		{"net closed", net.ErrClosed, metrics.ErrConnLost},
		{"connect error", &pgconn.ConnectError{}, metrics.ErrConnLost},
		{"deadline", context.DeadlineExceeded, metrics.ErrTimeout},
		{"canceled", context.Canceled, metrics.ErrOther},
		{"commit rollback", fmt.Errorf("postgres: commit: %w", pgx.ErrTxCommitRollback), metrics.ErrOther},
		{"plain", errors.New("boom"), metrics.ErrOther},
		// A hot standby: a query cancelled in conflict with recovery, and
		// a session ended for one (the connection is gone).
		{"recovery conflict", &pgconn.PgError{Code: "40001", Severity: "ERROR", Message: "canceling statement due to conflict with recovery"}, metrics.ErrRecoveryConflict},
		{"recovery conflict, session ended", &pgconn.PgError{Code: "40001", Severity: "FATAL", Message: "terminating connection due to conflict with recovery"}, metrics.ErrConnLost},
		{"database dropped on the standby", pg("57P04", "FATAL"), metrics.ErrConnLost},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Classify(tt.err); got != tt.want {
				t.Errorf("Classify(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}

func TestOneLine(t *testing.T) {
	tests := []struct{ in, want string }{
		{"a", "a"},
		{"failed to connect to `user=u database=d`:\n\t[::1]:5432 (localhost): refused\n\t127.0.0.1:5432 (localhost): refused",
			"failed to connect to `user=u database=d`: [::1]:5432 (localhost): refused; 127.0.0.1:5432 (localhost): refused"},
		{"x\r\n\r\ny\n", "x; y"},
		// sslmode=prefer: the same failure with TLS and without.
		{"failed to connect to `user=u database=d`:\n\t127.0.0.1:5433 (127.0.0.1): dial error: refused\n\t127.0.0.1:5433 (127.0.0.1): dial error: refused",
			"failed to connect to `user=u database=d`: 127.0.0.1:5433 (127.0.0.1): dial error: refused"},
	}
	for _, tt := range tests {
		if got := oneLine(tt.in); got != tt.want {
			t.Errorf("oneLine(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestCheckName(t *testing.T) {
	for _, ok := range []string{"t", "rows_1", "_x", "Orders"} {
		if err := checkName("table", ok); err != nil {
			t.Errorf("checkName(%q) = %v, want nil", ok, err)
		}
	}
	for _, bad := range []string{"", "1t", "a-b", "a.b", `a"b`, "a b", "x;drop", string(make([]byte, 64))} {
		if err := checkName("table", bad); err == nil {
			t.Errorf("checkName(%q) = nil, want an error", bad)
		}
	}
}

// TestClassifyOnStandby: on a hot standby a query's serialization
// failure is a conflict with recovery, in whatever language the server
// words it; on a primary it stays a serialization failure.
func TestClassifyOnStandby(t *testing.T) {
	localized := fmt.Errorf("postgres: query: %w", &pgconn.PgError{Code: "40001", Severity: "ERROR", Message: "Abbruch der Anweisung wegen Konflikt mit der Wiederherstellung"})
	if got := (&pgTarget{standby: true}).Classify(localized); got != metrics.ErrRecoveryConflict {
		t.Errorf("standby: %v, want recovery_conflict", got)
	}
	if got := (&pgTarget{}).Classify(localized); got != metrics.ErrSerialization {
		t.Errorf("primary: %v, want serialization", got)
	}
	deadlock := &pgconn.PgError{Code: "40P01", Severity: "ERROR", Message: "deadlock detected"}
	if got := (&pgTarget{standby: true}).Classify(deadlock); got != metrics.ErrSerialization {
		t.Errorf("deadlock on a standby: %v, want serialization", got)
	}
}
