package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ceiling-db/ceiling/internal/target"
)

// schemaComment is the full COMMENT on the ceiling schema; only its
// SchemaMarker prefix is checked.
const schemaComment = SchemaMarker + " (github.com/ceiling-db/ceiling); `ceiling cleanup` drops it with everything in it"

// tableComment marks each table ceiling creates.
const tableComment = SchemaMarker + " (table)"

// schema implements target.Schema in the "ceiling" schema. Operations run
// on the target's admin session, one at a time. Names must be plain SQL
// identifiers; like the unquoted names workloads write through
// Dialect.Table, they are case-insensitive.
type schema struct {
	t *pgTarget
}

var _ target.Schema = schema{}

// objState says whose an object is.
type objState int

const (
	missing objState = iota
	ours
	foreign
)

// querier is what both *pgx.Conn and pgx.Tx offer.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// CreateTable implements target.Schema.
func (s schema) CreateTable(ctx context.Context, name, body string) error {
	if err := checkName("table", name); err != nil {
		return err
	}
	qname := Schema + "." + name
	return s.t.withAdmin(ctx, func(c *pgx.Conn) error {
		if err := ensureSchema(ctx, c); err != nil {
			return err
		}
		// DDL is transactional: the old table is never gone without
		// the new one in place.
		err := pgx.BeginFunc(ctx, c, func(tx pgx.Tx) error {
			st, err := tableState(ctx, tx, name)
			if err != nil {
				return err
			}
			switch st {
			case foreign:
				return foreignTable(name)
			case ours:
				if err := tableAccess(ctx, tx, name); err != nil {
					return err
				}
				if _, err := tx.Exec(ctx, "DROP TABLE "+qname); err != nil {
					return fmt.Errorf("drop previous table: %w", err)
				}
			}
			if _, err := tx.Exec(ctx, "CREATE TABLE "+qname+" ("+body+")"); err != nil {
				return err
			}
			_, err = tx.Exec(ctx, "COMMENT ON TABLE "+qname+" IS "+quoteLiteral(tableComment))
			return err
		})
		if err != nil && !errors.Is(err, target.ErrForeignObject) {
			return fmt.Errorf("postgres: create table %s: %w", qname, err)
		}
		return err
	})
}

// CreateIndex implements target.Schema.
func (s schema) CreateIndex(ctx context.Context, table, index, cols string) error {
	if err := checkName("table", table); err != nil {
		return err
	}
	if err := checkName("index", index); err != nil {
		return err
	}
	return s.t.withAdmin(ctx, func(c *pgx.Conn) error {
		st, err := schemaState(ctx, c)
		if err != nil {
			return err
		}
		switch st {
		case missing:
			return fmt.Errorf("postgres: create index %s: schema %q does not exist", index, Schema)
		case foreign:
			return foreignSchema()
		}
		if st, err = tableState(ctx, c, table); err != nil {
			return err
		}
		switch st {
		case missing:
			return fmt.Errorf("postgres: create index %s: table %s.%s does not exist", index, Schema, table)
		case foreign:
			return foreignTable(table)
		}
		sql := "CREATE INDEX " + index + " ON " + Schema + "." + table + " (" + cols + ")"
		if _, err := c.Exec(ctx, sql); err != nil {
			return fmt.Errorf("postgres: create index %s on %s.%s: %w", index, Schema, table, err)
		}
		return nil
	})
}

// DropTable implements target.Schema.
func (s schema) DropTable(ctx context.Context, name string) error {
	if err := checkName("table", name); err != nil {
		return err
	}
	return s.t.withAdmin(ctx, func(c *pgx.Conn) error {
		st, err := schemaState(ctx, c)
		if err != nil || st == missing {
			return err
		}
		if st == foreign {
			return foreignSchema()
		}
		if st, err = tableState(ctx, c, name); err != nil || st == missing {
			return err
		}
		if st == foreign {
			return foreignTable(name)
		}
		if _, err := c.Exec(ctx, "DROP TABLE IF EXISTS "+Schema+"."+name); err != nil {
			return fmt.Errorf("postgres: drop table %s.%s: %w", Schema, name, err)
		}
		return nil
	})
}

// Tables implements target.Schema. A "ceiling" schema that ceiling did not
// create is reported as ErrForeignObject rather than as empty.
func (s schema) Tables(ctx context.Context) ([]string, error) {
	var names []string
	err := s.t.withAdmin(ctx, func(c *pgx.Conn) error {
		st, err := schemaState(ctx, c)
		if err != nil || st == missing {
			return err
		}
		if st == foreign {
			return foreignSchema()
		}
		rows, err := c.Query(ctx, `
			SELECT c.relname FROM pg_catalog.pg_class c
			WHERE c.relnamespace = $1::regnamespace AND c.relkind IN ('r', 'p')
			  AND left(coalesce(obj_description(c.oid, 'pg_class'), ''), length($2)) = $2
			ORDER BY c.relname`, Schema, SchemaMarker)
		if err != nil {
			return fmt.Errorf("postgres: list tables: %w", err)
		}
		names, err = pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return fmt.Errorf("postgres: list tables: %w", err)
		}
		return nil
	})
	return names, err
}

// DropAll implements target.Schema: it drops the ceiling schema with
// everything in it, but only when ceiling made the schema and every
// table, view or foreign table in it. Anything else in there is someone's
// work and makes DropAll refuse (ErrForeignObject) without dropping
// anything.
// HasNamespace implements target.NamespaceHolder: whether a schema named
// ceiling exists (ceiling's or not).
func (s schema) HasNamespace(ctx context.Context) (bool, error) {
	var st objState
	err := s.t.withAdmin(ctx, func(c *pgx.Conn) error {
		var err error
		st, err = schemaState(ctx, c)
		return err
	})
	return st != missing, err
}

var _ target.NamespaceHolder = schema{}

func (s schema) DropAll(ctx context.Context) error {
	return s.t.withAdmin(ctx, func(c *pgx.Conn) error {
		st, err := schemaState(ctx, c)
		if err != nil || st == missing {
			return err
		}
		if st == foreign {
			return foreignSchema()
		}
		rows, err := c.Query(ctx, `
			SELECT c.relname FROM pg_catalog.pg_class c
			WHERE c.relnamespace = $1::regnamespace AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
			  AND left(coalesce(obj_description(c.oid, 'pg_class'), ''), length($2)) <> $2
			ORDER BY c.relname`, Schema, SchemaMarker)
		if err != nil {
			return fmt.Errorf("postgres: drop all: %w", err)
		}
		others, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return fmt.Errorf("postgres: drop all: %w", err)
		}
		if len(others) > 0 {
			return fmt.Errorf("postgres: drop all: schema %q holds objects ceiling did not create (%s): %w",
				Schema, strings.Join(others, ", "), target.ErrForeignObject)
		}
		if _, err := c.Exec(ctx, "DROP SCHEMA "+Schema+" CASCADE"); err != nil {
			return fmt.Errorf("postgres: drop schema %s: %w", Schema, err)
		}
		return nil
	})
}

// ensureSchema creates the ceiling schema if it is missing and fails if it
// exists without ceiling's marker.
func ensureSchema(ctx context.Context, c *pgx.Conn) error {
	for attempt := 0; ; attempt++ {
		st, err := schemaState(ctx, c)
		if err != nil {
			return err
		}
		switch st {
		case ours:
			return schemaAccess(ctx, c)
		case foreign:
			return foreignSchema()
		}
		err = pgx.BeginFunc(ctx, c, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, "CREATE SCHEMA "+Schema); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, "COMMENT ON SCHEMA "+Schema+" IS "+quoteLiteral(schemaComment))
			return err
		})
		if err == nil {
			return nil
		}
		// Another session may have created it meanwhile (42P06, or 23505
		// from the catalog's unique index): look again, once.
		var pgErr *pgconn.PgError
		if attempt == 0 && errors.As(err, &pgErr) && (pgErr.Code == "42P06" || pgErr.Code == "23505") {
			continue
		}
		if errors.As(err, &pgErr) && pgErr.Code == "42501" {
			// insufficient_privilege: say what would do.
			return fmt.Errorf("postgres: create schema %s: %w (ceiling keeps its tables in schema %s: the user needs CREATE on this database, e.g. GRANT CREATE ON DATABASE %s TO %s, or a database of its own)",
				Schema, err, Schema, pgx.Identifier{c.Config().Database}.Sanitize(), pgx.Identifier{c.Config().User}.Sanitize())
		}
		return fmt.Errorf("postgres: create schema %s: %w", Schema, err)
	}
}

// schemaAccess fails, saying what would do, when ceiling's schema (which
// exists) belongs to a role whose tables the session's user may not make
// there: ceiling run before as another user of the same database.
func schemaAccess(ctx context.Context, c *pgx.Conn) error {
	var (
		owner string
		ok    bool
	)
	err := c.QueryRow(ctx, `
		SELECT pg_get_userbyid(nspowner), has_schema_privilege(oid, 'USAGE') AND has_schema_privilege(oid, 'CREATE')
		FROM pg_catalog.pg_namespace WHERE nspname = $1`, Schema).Scan(&owner, &ok)
	if err != nil {
		return fmt.Errorf("postgres: look up schema %s: %w", Schema, err)
	}
	if ok {
		return nil
	}
	user := pgx.Identifier{c.Config().User}.Sanitize()
	return fmt.Errorf("postgres: schema %s belongs to role %s (a ceiling run as that role made it), and %s may not create tables in it: connect as %s, have it run GRANT USAGE, CREATE ON SCHEMA %s TO %s, or use a database of your own",
		Schema, pgx.Identifier{owner}.Sanitize(), user, pgx.Identifier{owner}.Sanitize(), Schema, user)
}

// tableAccess fails, saying what would do, when ceiling's table name (which
// exists) belongs to a role the session's user is not a member of: the
// table cannot be replaced.
func tableAccess(ctx context.Context, q querier, name string) error {
	var (
		owner string
		ok    bool
	)
	err := q.QueryRow(ctx, `
		SELECT pg_get_userbyid(c.relowner), pg_has_role(c.relowner, 'USAGE') FROM pg_catalog.pg_class c
		WHERE c.relnamespace = $1::regnamespace AND c.relname = $2`,
		Schema, strings.ToLower(name)).Scan(&owner, &ok)
	if err != nil {
		return fmt.Errorf("postgres: look up table %s.%s: %w", Schema, name, err)
	}
	if ok {
		return nil
	}
	return fmt.Errorf("it exists and belongs to role %s (a ceiling run as that role made it), which this user cannot replace: connect as %s, or have it run ceiling cleanup for the workload",
		pgx.Identifier{owner}.Sanitize(), pgx.Identifier{owner}.Sanitize())
}

// schemaState says whether the ceiling schema exists and is ceiling's.
func schemaState(ctx context.Context, q querier) (objState, error) {
	var comment *string
	err := q.QueryRow(ctx,
		`SELECT obj_description(oid, 'pg_namespace') FROM pg_catalog.pg_namespace WHERE nspname = $1`,
		Schema).Scan(&comment)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return missing, nil
	case err != nil:
		return missing, fmt.Errorf("postgres: look up schema %s: %w", Schema, err)
	case comment != nil && strings.HasPrefix(*comment, SchemaMarker):
		return ours, nil
	}
	return foreign, nil
}

// tableState says whether ceiling.name exists and is a ceiling-made table.
// The schema must exist.
func tableState(ctx context.Context, q querier, name string) (objState, error) {
	var (
		kind    string
		comment *string
	)
	err := q.QueryRow(ctx, `
		SELECT c.relkind::text, obj_description(c.oid, 'pg_class') FROM pg_catalog.pg_class c
		WHERE c.relnamespace = $1::regnamespace AND c.relname = $2`,
		Schema, strings.ToLower(name)).Scan(&kind, &comment)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return missing, nil
	case err != nil:
		return missing, fmt.Errorf("postgres: look up table %s.%s: %w", Schema, name, err)
	case (kind == "r" || kind == "p") && comment != nil && strings.HasPrefix(*comment, SchemaMarker):
		return ours, nil
	}
	return foreign, nil
}

func foreignSchema() error {
	return fmt.Errorf("postgres: schema %q exists but has no %q comment: %w", Schema, SchemaMarker, target.ErrForeignObject)
}

func foreignTable(name string) error {
	return fmt.Errorf("postgres: %s.%s exists but is not a table ceiling created: %w", Schema, name, target.ErrForeignObject)
}

// checkName accepts plain SQL identifiers only, so names need no quoting
// and behave the same in DDL and in workloads' SQL.
func checkName(kind, name string) error {
	if name == "" || len(name) > 63 {
		return fmt.Errorf("postgres: invalid %s name %q: want 1 to 63 characters", kind, name)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9' {
			continue
		}
		return fmt.Errorf("postgres: invalid %s name %q: want letters, digits and _", kind, name)
	}
	return nil
}

// quoteLiteral quotes s as a SQL string literal (standard_conforming_strings).
func quoteLiteral(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}
