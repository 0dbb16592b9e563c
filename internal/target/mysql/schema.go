package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/ceiling-db/ceiling/internal/target"
)

// tableComment is the full COMMENT on ceiling's tables; only its
// TableMarker prefix is checked.
const tableComment = TableMarker + " (github.com/ceiling-db/ceiling)"

// schema implements target.Schema with ceiling_-prefixed tables in the
// DSN's database. Operations run on the target's admin session, one at a
// time. MySQL DDL is not transactional: CreateTable drops ceiling's old
// table and then creates the new one.
type schema struct {
	t *myTarget
}

var _ target.Schema = schema{}

type objState int

const (
	missing objState = iota
	ours
	foreign
)

// CreateTable implements target.Schema.
func (s schema) CreateTable(ctx context.Context, name, body string) error {
	if err := checkName("table", name); err != nil {
		return err
	}
	tbl := Prefix + name
	return s.t.withAdmin(ctx, func(c *sql.Conn) error {
		st, err := tableState(ctx, c, tbl)
		if err != nil {
			return err
		}
		switch st {
		case foreign:
			return foreignTable(tbl)
		case ours:
			if err := dropTables(ctx, c, []string{tbl}); err != nil {
				return err
			}
		}
		q := "CREATE TABLE " + tbl + " (" + body + ") COMMENT = '" + tableComment + "'"
		if _, err := c.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("mysql: create table %s: %w", tbl, err)
		}
		return nil
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
	tbl := Prefix + table
	return s.t.withAdmin(ctx, func(c *sql.Conn) error {
		st, err := tableState(ctx, c, tbl)
		if err != nil {
			return err
		}
		switch st {
		case missing:
			return fmt.Errorf("mysql: create index %s: table %s does not exist", index, tbl)
		case foreign:
			return foreignTable(tbl)
		}
		if _, err := c.ExecContext(ctx, "CREATE INDEX "+index+" ON "+tbl+" ("+cols+")"); err != nil {
			return fmt.Errorf("mysql: create index %s on %s: %w", index, tbl, err)
		}
		return nil
	})
}

// DropTable implements target.Schema.
func (s schema) DropTable(ctx context.Context, name string) error {
	if err := checkName("table", name); err != nil {
		return err
	}
	tbl := Prefix + name
	return s.t.withAdmin(ctx, func(c *sql.Conn) error {
		st, err := tableState(ctx, c, tbl)
		if err != nil || st == missing {
			return err
		}
		if st == foreign {
			return foreignTable(tbl)
		}
		return dropTables(ctx, c, []string{tbl})
	})
}

// Tables implements target.Schema.
func (s schema) Tables(ctx context.Context) ([]string, error) {
	var names []string
	err := s.t.withAdmin(ctx, func(c *sql.Conn) error {
		tbls, err := ourTables(ctx, c)
		if err != nil {
			return err
		}
		names = make([]string, len(tbls))
		for i, t := range tbls {
			names[i] = strings.TrimPrefix(t, Prefix)
		}
		return nil
	})
	return names, err
}

// DropAll implements target.Schema: it drops every table carrying
// ceiling's marker. ceiling_ tables without the marker are left alone
// (and are no error: DropAll does not touch them).
func (s schema) DropAll(ctx context.Context) error {
	return s.t.withAdmin(ctx, func(c *sql.Conn) error {
		tbls, err := ourTables(ctx, c)
		if err != nil || len(tbls) == 0 {
			return err
		}
		return dropTables(ctx, c, tbls)
	})
}

// tableState says whether table tbl (prefixed) exists in the current
// database and carries ceiling's marker.
func tableState(ctx context.Context, c *sql.Conn, tbl string) (objState, error) {
	var typ, comment string
	err := c.QueryRowContext(ctx, `
		SELECT TABLE_TYPE, COALESCE(TABLE_COMMENT, '') FROM information_schema.TABLES
		WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?`, tbl).Scan(&typ, &comment)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return missing, nil
	case err != nil:
		return missing, fmt.Errorf("mysql: look up table %s: %w", tbl, err)
	case typ == "BASE TABLE" && strings.HasPrefix(comment, TableMarker):
		return ours, nil
	}
	return foreign, nil
}

// ourTables lists the marked ceiling_ tables (prefixed names).
func ourTables(ctx context.Context, c *sql.Conn) ([]string, error) {
	rows, err := c.QueryContext(ctx, `
		SELECT TABLE_NAME FROM information_schema.TABLES
		WHERE TABLE_SCHEMA = DATABASE() AND TABLE_TYPE = 'BASE TABLE'
		  AND LEFT(TABLE_NAME, ?) = ? AND LEFT(TABLE_COMMENT, ?) = ?
		ORDER BY TABLE_NAME`, len(Prefix), Prefix, len(TableMarker), TableMarker)
	if err != nil {
		return nil, fmt.Errorf("mysql: list tables: %w", err)
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, fmt.Errorf("mysql: list tables: %w", err)
		}
		names = append(names, n)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("mysql: list tables: %w", err)
	}
	return names, nil
}

// dropTables drops the given (checked, prefixed) tables with foreign key
// checks off for the statement, so ceiling's tables that reference each
// other can go in any order; the session's setting is put back after.
func dropTables(ctx context.Context, c *sql.Conn, tbls []string) (err error) {
	var fkc string
	if err := c.QueryRowContext(ctx, "SELECT @@SESSION.foreign_key_checks").Scan(&fkc); err != nil {
		return fmt.Errorf("mysql: drop table: %w", err)
	}
	if _, err := c.ExecContext(ctx, "SET SESSION foreign_key_checks = 0"); err != nil {
		return fmt.Errorf("mysql: drop table: %w", err)
	}
	defer func() {
		if _, rerr := c.ExecContext(ctx, "SET SESSION foreign_key_checks = "+fkc); rerr != nil && err == nil {
			err = fmt.Errorf("mysql: drop table: restore foreign_key_checks: %w", rerr)
		}
	}()
	if _, err := c.ExecContext(ctx, "DROP TABLE IF EXISTS "+strings.Join(tbls, ", ")); err != nil {
		return fmt.Errorf("mysql: drop table %s: %w", strings.Join(tbls, ", "), err)
	}
	return nil
}

func foreignTable(tbl string) error {
	return fmt.Errorf("mysql: table %s exists but has no %q comment: %w", tbl, TableMarker, target.ErrForeignObject)
}

// checkName accepts plain SQL identifiers only, so names need no quoting
// and behave the same in DDL and in workloads' SQL. With the prefix, a
// table name must fit MySQL's 64 characters.
func checkName(kind, name string) error {
	if max := 64 - len(Prefix); name == "" || len(name) > max {
		return fmt.Errorf("mysql: invalid %s name %q: want 1 to %d characters", kind, name, max)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9' {
			continue
		}
		return fmt.Errorf("mysql: invalid %s name %q: want letters, digits and _", kind, name)
	}
	return nil
}
