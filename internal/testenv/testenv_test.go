package testenv

import (
	"fmt"
	"strings"
	"testing"
)

// recorder is a testing.TB that notes how a test would have ended (its
// Skip and Fatalf return instead of stopping the goroutine).
type recorder struct {
	testing.TB
	skipped, failed, logged string
}

func (r *recorder) Helper()                           {}
func (r *recorder) Skip(args ...any)                  { r.skipped = fmt.Sprint(args...) }
func (r *recorder) Fatalf(format string, args ...any) { r.failed = fmt.Sprintf(format, args...) }
func (r *recorder) Errorf(format string, args ...any) { r.failed = fmt.Sprintf(format, args...) }
func (r *recorder) Log(args ...any)                   { r.logged = fmt.Sprint(args...) }

// TestDSN: a set variable is returned; an unset one skips (naming the
// variable and an example) off CI and fails when servers are required.
func TestDSN(t *testing.T) {
	t.Setenv(PostgresEnv, "postgres://example/db")
	t.Setenv(RequireEnv, "")
	r := &recorder{}
	if got := DSN(r, PostgresEnv); got != "postgres://example/db" || r.skipped != "" || r.failed != "" {
		t.Errorf("set: DSN = %q, skipped %q, failed %q", got, r.skipped, r.failed)
	}

	t.Setenv(MySQLEnv, "")
	r = &recorder{}
	DSN(r, MySQLEnv)
	if r.failed != "" || !strings.Contains(r.skipped, MySQLEnv+" not set") || !strings.Contains(r.skipped, examples[MySQLEnv]) {
		t.Errorf("unset off CI: skipped %q, failed %q", r.skipped, r.failed)
	}
	r = &recorder{}
	if got := Optional(r, MySQLEnv); got != "" || r.failed != "" || !strings.Contains(r.logged, MySQLEnv+" not set") {
		t.Errorf("optional unset off CI: %q, logged %q, failed %q", got, r.logged, r.failed)
	}

	t.Setenv(RequireEnv, "1")
	r = &recorder{}
	DSN(r, MySQLEnv)
	if r.skipped != "" || !strings.Contains(r.failed, RequireEnv) {
		t.Errorf("unset in CI: skipped %q, failed %q", r.skipped, r.failed)
	}
	r = &recorder{}
	Optional(r, MySQLEnv)
	if r.logged != "" || !strings.Contains(r.failed, RequireEnv) {
		t.Errorf("optional unset in CI: logged %q, failed %q", r.logged, r.failed)
	}
}
