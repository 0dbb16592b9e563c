package engines

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-db/ceiling/internal/target"
	"github.com/ceiling-db/ceiling/internal/target/mysql"
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

// TestDriverDSN: go-sql-driver's own DSN form, as Go programs hold it,
// becomes ceiling's URL form with its parts and parameters, and opens the
// MySQL/MariaDB target with the password hidden in what it reports; a
// malformed one is a malformed DSN whose message hides the password.
func TestDriverDSN(t *testing.T) {
	for in, want := range map[string]string{
		"root@tcp(127.0.0.1:3306)/test":                     "mysql://root@127.0.0.1:3306/test",
		"u:p@ss/w@tcp(db.example:3307)/app?tls=skip-verify": "mysql://u:p%40ss%2Fw@db.example:3307/app?tls=skip-verify",
		"u:pw@unix(/run/mysqld/mysqld.sock)/app?timeout=5s": "mysql://u:pw@/app?socket=%2Frun%2Fmysqld%2Fmysqld.sock&timeout=5s",
		"tcp(localhost:3306)/x":                             "mysql://localhost:3306/x",
	} {
		if !mysql.IsDriverDSN(in) {
			t.Errorf("IsDriverDSN(%q) = false", in)
			continue
		}
		got, err := mysql.FromDriverDSN(in)
		if err != nil || got != want {
			t.Errorf("FromDriverDSN(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, not := range []string{"mysql://root@127.0.0.1/test", "sqlite:tcp(x)/y.db", "host=tcp(x)/"} {
		if mysql.IsDriverDSN(not) && !strings.HasPrefix(not, "host=") {
			t.Errorf("IsDriverDSN(%q) = true", not)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := Open(ctx, target.Options{DSN: "root:s3cretpw@tcp(127.0.0.1:3306)/test?badparam=%zz", Durability: "server"})
	if !errors.Is(err, target.ErrBadDSN) || strings.Contains(err.Error(), "s3cretpw") {
		t.Fatalf("malformed: %v", err)
	}
	u, err := url.Parse(testenv.DSN(t, testenv.MySQLEnv))
	if err != nil {
		t.Fatal(err)
	}
	addr := u.Host
	if u.Port() == "" {
		addr += ":3306"
	}
	user := u.User.Username()
	if p, ok := u.User.Password(); ok {
		user += ":" + p
	}
	native := user + "@tcp(" + addr + ")" + u.Path
	tg, err := Open(ctx, target.Options{DSN: native, Durability: "server"})
	if err != nil {
		t.Fatalf("Open(%s): %v", target.Redact(native), err)
	}
	defer tg.Close(ctx)
	if info := tg.Info(); info.Engine != "mysql" || !strings.HasPrefix(info.DSN, "mysql://") {
		t.Fatalf("info: engine %s, DSN %s", info.Engine, info.DSN)
	}
	if _, ok := u.User.Password(); !ok { // a wrong password: refused, not shown
		wrong := u.User.Username() + ":wrongpass1@tcp(" + addr + ")" + u.Path
		_, err := Open(ctx, target.Options{DSN: wrong, Durability: "server"})
		if err == nil || strings.Contains(err.Error(), "wrongpass1") || strings.Contains(err.Error(), "\n") {
			t.Fatalf("wrong password: %v", err)
		}
	}
}
