// Package engines opens a target by the scheme of its DSN.
package engines

import (
	"context"
	"fmt"
	"strings"

	"github.com/ceiling-db/ceiling/internal/target"
	"github.com/ceiling-db/ceiling/internal/target/mysql"
	"github.com/ceiling-db/ceiling/internal/target/postgres"
	"github.com/ceiling-db/ceiling/internal/target/sqlite"
)

// DefaultDSN is used when neither --db nor CEILING_DB is given.
const DefaultDSN = "sqlite:ceiling.db"

// Schemes lists the DSN forms ceiling understands, for help texts.
const Schemes = "sqlite:PATH, postgres://USER[:PASS]@HOST[:PORT]/DB (or libpq's 'host=H dbname=DB ...'), mysql://USER[:PASS]@HOST[:PORT]/DB (or go-sql-driver's USER[:PASS]@tcp(HOST:PORT)/DB)"

// Open opens the target named by opts.DSN.
func Open(ctx context.Context, opts target.Options) (target.Target, error) {
	dsn := opts.DSN
	if isKeyValue(dsn) {
		// libpq's other connection string form, as psql and pgbench
		// take it: host=H port=P dbname=D user=U ...
		return postgres.Open(ctx, opts)
	}
	if mysql.IsDriverDSN(dsn) {
		// go-sql-driver's own form, as a Go program's configuration
		// holds it: user:pass@tcp(host:port)/db?params.
		u, err := mysql.FromDriverDSN(dsn)
		if err != nil {
			return nil, err
		}
		opts.DSN = u
		return mysql.Open(ctx, opts)
	}
	scheme, _, ok := strings.Cut(dsn, ":")
	if !ok || scheme == "" {
		return nil, fmt.Errorf("%w %q: want one of %s", target.ErrBadDSN, target.Redact(dsn), Schemes)
	}
	switch strings.ToLower(scheme) {
	case "sqlite", "sqlite3":
		if strings.ToLower(scheme) == "sqlite3" {
			opts.DSN = "sqlite:" + dsn[len("sqlite3:"):]
		}
		if _, err := sqlite.ParseDSN(opts.DSN); err != nil {
			return nil, fmt.Errorf("%w: %v", target.ErrBadDSN, err)
		}
		return sqlite.Open(ctx, opts)
	case "postgres", "postgresql":
		return postgres.Open(ctx, opts)
	case "mysql", "mariadb":
		if strings.ToLower(scheme) == "mariadb" {
			opts.DSN = "mysql:" + dsn[len("mariadb:"):]
		}
		return mysql.Open(ctx, opts)
	case "sqlserver", "mssql", "azuresql":
		return nil, fmt.Errorf("%w %q: SQL Server and Azure SQL are not supported yet (this ceiling measures %s)", target.ErrBadDSN, target.Redact(dsn), Schemes)
	}
	return nil, fmt.Errorf("%w %q: unknown scheme %q (want one of %s)", target.ErrBadDSN, target.Redact(dsn), scheme, Schemes)
}

// isKeyValue reports whether dsn is a libpq key/value connection string:
// its first word is one of libpq's keywords followed by '='.
func isKeyValue(dsn string) bool {
	k, _, ok := strings.Cut(strings.TrimSpace(dsn), "=")
	if !ok {
		return false
	}
	switch strings.TrimSpace(k) {
	case "host", "hostaddr", "port", "dbname", "user", "password", "passfile",
		"connect_timeout", "sslmode", "application_name", "options",
		"service", "target_session_attrs", "sslrootcert", "sslcert", "sslkey":
		return true
	}
	return false
}
