package sqlite

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/ceiling-db/ceiling/internal/target"
)

// metaTable records the tables ceiling created in this file; a ceiling_
// table not listed there belongs to someone else and is never touched.
const metaTable = "ceiling_meta"

type schema struct{ t *Target }

func (s *schema) withConn(ctx context.Context, fn func(*conn) error) error {
	c, err := s.t.open(ctx)
	if err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	defer c.Close()
	if _, err := c.Exec(ctx, "CREATE TABLE IF NOT EXISTS "+metaTable+" (name TEXT PRIMARY KEY, kind TEXT NOT NULL)"); err != nil {
		return fmt.Errorf("sqlite: create %s: %w", metaTable, err)
	}
	return fn(c)
}

func exists(ctx context.Context, c *conn, kind, name string) (bool, error) {
	var n int64
	r, err := c.Query(ctx, "SELECT count(*) FROM sqlite_schema WHERE type = ? AND name = ?", kind, name)
	if err != nil {
		return false, err
	}
	defer r.Close()
	if r.Next() {
		err = r.Scan(&n)
	}
	return n > 0, err
}

func owned(ctx context.Context, c *conn, name string) (bool, error) {
	r, err := c.Query(ctx, "SELECT count(*) FROM "+metaTable+" WHERE name = ?", name)
	if err != nil {
		return false, err
	}
	defer r.Close()
	var n int64
	if r.Next() {
		err = r.Scan(&n)
	}
	return n > 0, err
}

// checkOurs fails with ErrForeignObject if name exists but is not ceiling's.
func checkOurs(ctx context.Context, c *conn, kind, name string) (bool, error) {
	ex, err := exists(ctx, c, kind, name)
	if err != nil || !ex {
		return false, err
	}
	ok, err := owned(ctx, c, name)
	if err != nil {
		return false, err
	}
	if !ok {
		return true, fmt.Errorf("sqlite: %s %s: %w", kind, name, target.ErrForeignObject)
	}
	return true, nil
}

func (s *schema) CreateTable(ctx context.Context, name, body string) error {
	full := s.t.Dialect().Table(name)
	return s.withConn(ctx, func(c *conn) error {
		ex, err := checkOurs(ctx, c, "table", full)
		if err != nil {
			return err
		}
		if ex {
			if _, err := c.Exec(ctx, "DROP TABLE "+full); err != nil {
				return fmt.Errorf("sqlite: drop %s: %w", full, err)
			}
		}
		if _, err := c.Exec(ctx, "CREATE TABLE "+full+" ("+body+")"); err != nil {
			return fmt.Errorf("sqlite: create %s: %w", full, err)
		}
		_, err = c.Exec(ctx, "INSERT OR REPLACE INTO "+metaTable+" (name, kind) VALUES (?, 'table')", full)
		return err
	})
}

func (s *schema) CreateIndex(ctx context.Context, table, index, cols string) error {
	full := s.t.Dialect().Table(index)
	return s.withConn(ctx, func(c *conn) error {
		if _, err := checkOurs(ctx, c, "index", full); err != nil {
			return err
		}
		if _, err := c.Exec(ctx, "DROP INDEX IF EXISTS "+full); err != nil {
			return err
		}
		if _, err := c.Exec(ctx, "CREATE INDEX "+full+" ON "+s.t.Dialect().Table(table)+" ("+cols+")"); err != nil {
			return fmt.Errorf("sqlite: create index %s: %w", full, err)
		}
		_, err := c.Exec(ctx, "INSERT OR REPLACE INTO "+metaTable+" (name, kind) VALUES (?, 'index')", full)
		return err
	})
}

func (s *schema) DropTable(ctx context.Context, name string) error {
	full := s.t.Dialect().Table(name)
	return s.withConn(ctx, func(c *conn) error {
		ex, err := checkOurs(ctx, c, "table", full)
		if err != nil || !ex {
			return err
		}
		if _, err := c.Exec(ctx, "DROP TABLE "+full); err != nil {
			return fmt.Errorf("sqlite: drop %s: %w", full, err)
		}
		_, err = c.Exec(ctx, "DELETE FROM "+metaTable+" WHERE name = ?", full)
		return err
	})
}

func (s *schema) Tables(ctx context.Context) ([]string, error) {
	var out []string
	err := s.withConn(ctx, func(c *conn) error {
		r, err := c.Query(ctx, "SELECT m.name FROM "+metaTable+" m JOIN sqlite_schema s ON s.name = m.name AND s.type = 'table' WHERE m.kind = 'table' ORDER BY m.name")
		if err != nil {
			return err
		}
		defer r.Close()
		for r.Next() {
			var n string
			if err := r.Scan(&n); err != nil {
				return err
			}
			out = append(out, strings.TrimPrefix(n, s.t.Dialect().Prefix))
		}
		return r.Err()
	})
	return out, err
}

func (s *schema) DropAll(ctx context.Context) error {
	tables, err := s.Tables(ctx)
	if err != nil {
		return err
	}
	for _, n := range tables {
		if err := s.DropTable(ctx, n); err != nil {
			return err
		}
	}
	var remove bool
	err = s.withConn(ctx, func(c *conn) error {
		if _, err := c.Exec(ctx, "DROP TABLE "+metaTable); err != nil {
			return err
		}
		// A file ceiling created and that now holds nothing is removed.
		var id, objects int64
		if err := c.queryRow(ctx, "PRAGMA application_id", &id); err != nil {
			return err
		}
		if err := c.queryRow(ctx, "SELECT count(*) FROM sqlite_schema", &objects); err != nil {
			return err
		}
		remove = id == appID && objects == 0
		return nil
	})
	if err != nil || !remove {
		return err
	}
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := os.Remove(s.t.path + suffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("sqlite: remove %s: %w", s.t.path+suffix, err)
		}
	}
	return nil
}
