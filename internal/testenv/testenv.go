// Package testenv tells the integration tests where the live servers are.
// Each server's DSN comes from an environment variable; off CI a test
// whose variable is unset skips with a message naming it (and an example
// value), and with CEILING_REQUIRE_SERVERS set, as .ci/run sets it, an
// unset variable fails the test instead: in CI a missing server is never a
// silent skip. Only tests import this package.
package testenv

import (
	"os"
	"testing"
)

// The environment variables.
const (
	// PostgresEnv holds a PostgreSQL DSN.
	PostgresEnv = "CEILING_TEST_PG_DSN"
	// MySQLEnv holds a MySQL/MariaDB DSN.
	MySQLEnv = "CEILING_TEST_MYSQL_DSN"
	// MySQLPSEnv holds the DSN of a MySQL/MariaDB with performance_schema
	// on (.ci/run starts a second MariaDB for it).
	MySQLPSEnv = "CEILING_TEST_MYSQL_PS_DSN"
	// MySQLTLSEnv holds the DSN of a MySQL/MariaDB with TLS on, whose
	// ssl-ca parameter names the CA that signed its certificate (for
	// 127.0.0.1, no host name), with client-cert.pem and client-key.pem
	// of the same CA beside it (.ci/run gives the 3307 server these).
	MySQLTLSEnv = "CEILING_TEST_MYSQL_TLS_DSN"
	// RequireEnv, when set, makes an unset DSN a failure.
	RequireEnv = "CEILING_REQUIRE_SERVERS"
)

// examples are values that work against the servers .ci/run starts.
var examples = map[string]string{
	PostgresEnv: "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable",
	MySQLEnv:    "mysql://root@127.0.0.1:3306/test",
	MySQLPSEnv:  "mysql://root@127.0.0.1:3307/test",
	MySQLTLSEnv: "mysql://root@127.0.0.1:3307/test?ssl-ca=/tmp/ceiling-mariadb-ps/tls/ca.pem",
}

// Required reports whether the servers must be reachable (CI).
func Required() bool { return os.Getenv(RequireEnv) != "" }

// DSN returns env's DSN. When it is unset, the test fails if the servers
// are required, and is skipped otherwise.
func DSN(t testing.TB, env string) string {
	t.Helper()
	dsn := os.Getenv(env)
	if dsn == "" {
		if Required() {
			t.Fatalf("%s not set but %s is: in CI the server must be reachable", env, RequireEnv)
		} else {
			t.Skip(unsetMsg(env))
		}
	}
	return dsn
}

// Optional is DSN for a test that covers several engines and goes on
// without this one: an unset DSN gives "" and a log line (a failure, the
// test going on, if the servers are required).
func Optional(t testing.TB, env string) string {
	t.Helper()
	dsn := os.Getenv(env)
	if dsn == "" {
		if Required() {
			t.Errorf("%s not set but %s is: in CI the server must be reachable", env, RequireEnv)
		} else {
			t.Log(unsetMsg(env))
		}
	}
	return dsn
}

func unsetMsg(env string) string {
	msg := env + " not set: skipping the integration test against a live server"
	if ex, ok := examples[env]; ok {
		msg += " (to run it: " + env + "=" + ex
		switch env {
		case MySQLPSEnv:
			msg += ", a server with performance_schema=ON; .ci/run starts one"
		case MySQLTLSEnv:
			msg += ", a server with TLS on whose certificate that CA signed; .ci/run makes them"
		}
		msg += ")"
	}
	return msg
}

// EachEngine runs test as a subtest per engine: SQLite at sqliteDSN
// (none when it is "") and each live server whose DSN is set (Optional:
// an unset one is logged, or an error when the servers are required).
// The subtests are named sqlite, postgres and mysql.
func EachEngine(t *testing.T, sqliteDSN string, test func(t *testing.T, dsn string)) {
	t.Helper()
	engs := []struct{ name, dsn string }{
		{"sqlite", sqliteDSN},
		{"postgres", Optional(t, PostgresEnv)},
		{"mysql", Optional(t, MySQLEnv)},
	}
	for _, e := range engs {
		if e.dsn == "" {
			continue
		}
		t.Run(e.name, func(t *testing.T) { test(t, e.dsn) })
	}
}
