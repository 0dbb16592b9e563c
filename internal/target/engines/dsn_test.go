package engines

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-db/ceiling/internal/target"
	"github.com/ceiling-db/ceiling/internal/testenv"
)

func TestIsKeyValue(t *testing.T) {
	for dsn, want := range map[string]bool{
		"host=db1 dbname=app":           true,
		" dbname = app user=u":          true,
		"user=postgres password='a b'":  true,
		"sqlite:x=1.db":                 false,
		"postgres://u@h/db?sslmode=off": false,
		"nonsense":                      false,
		"foo=bar":                       false,
		"mysql://root@127.0.0.1:3306/t": false,
		"ceiling.db":                    false,
	} {
		if got := isKeyValue(dsn); got != want {
			t.Errorf("isKeyValue(%q) = %v, want %v", dsn, got, want)
		}
	}
}

// TestOpenKeyValue: libpq's key/value form opens the PostgreSQL target
// (as psql and pgbench take it), its password is hidden in what the
// target reports, and a word that is no libpq keyword is still a
// malformed DSN.
func TestOpenKeyValue(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := Open(ctx, target.Options{DSN: "foo=bar", Durability: "server"}); !errors.Is(err, target.ErrBadDSN) {
		t.Errorf("Open(foo=bar) = %v, want a malformed DSN", err)
	}
	u, err := url.Parse(testenv.DSN(t, testenv.PostgresEnv))
	if err != nil {
		t.Fatal(err)
	}
	kv := []string{"host=" + u.Hostname(), "dbname=" + strings.TrimPrefix(u.Path, "/"), "user=" + u.User.Username(), "password=notusedbytrust"}
	if p := u.Port(); p != "" {
		kv = append(kv, "port="+p)
	}
	if m := u.Query().Get("sslmode"); m != "" {
		kv = append(kv, "sslmode="+m)
	}
	dsn := strings.Join(kv, " ")
	tg, err := Open(ctx, target.Options{DSN: dsn, Durability: "server"})
	if err != nil {
		t.Fatalf("Open(%q): %v", target.Redact(dsn), err)
	}
	defer tg.Close(ctx)
	info := tg.Info()
	if info.Engine != "postgres" {
		t.Errorf("engine = %q, want postgres", info.Engine)
	}
	if strings.Contains(info.DSN, "notusedbytrust") || !strings.Contains(info.DSN, "password="+target.Mask) {
		t.Errorf("target DSN %q: want the password masked", info.DSN)
	}
}
