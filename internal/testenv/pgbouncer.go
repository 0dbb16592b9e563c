package testenv

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// PgBouncer starts a PgBouncer (Debian's package pgbouncer; .ci/run
// installs it) in front of the PostgreSQL server of pgDSN, in pool mode
// mode (session, transaction or statement), on a free loopback port, with
// trust authentication for pgDSN's user and any database, and extra
// settings of its [pgbouncer] section ("ignore_startup_parameters =
// extra_float_digits,synchronous_commit"). It returns pgDSN pointed at the
// pooler; the pooler stops when the test ends. Without the binary the test
// is skipped, or fails where the servers are required (CI).
func PgBouncer(t testing.TB, pgDSN, mode string, extra ...string) string {
	t.Helper()
	bin := lookBin("pgbouncer")
	if bin == "" {
		if Required() {
			t.Fatalf("pgbouncer not found but %s is set: .ci/run installs it (apt-get install pgbouncer)", RequireEnv)
		}
		t.Skip("pgbouncer not found: skipping the connection pooler test (apt-get install pgbouncer)")
	}
	u, err := url.Parse(pgDSN)
	if err != nil || u.Scheme != "postgres" && u.Scheme != "postgresql" {
		t.Fatalf("PgBouncer: %s is not a postgres:// URL", pgDSN)
	}
	host, port := u.Hostname(), u.Port()
	if port == "" {
		port = "5432"
	}
	if host == "" {
		host = "127.0.0.1"
	}
	pgUser := "postgres"
	if u.User != nil && u.User.Username() != "" {
		pgUser = u.User.Username()
	}

	listen := freePort(t)

	// PgBouncer refuses to run as root: started as root it is told to
	// become postgres, which must then read the configuration and write
	// the log, so the directory is open to it.
	dir, err := os.MkdirTemp("", "ceiling-pgbouncer-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	args := []string{}
	if os.Geteuid() == 0 {
		runAs := "postgres"
		if _, err := user.Lookup(runAs); err != nil {
			t.Fatalf("PgBouncer cannot run as root and there is no user %s to run it as", runAs)
		}
		args = append(args, "-u", runAs)
		if err := os.Chmod(dir, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	cfg := fmt.Sprintf(`[databases]
* = host=%s port=%s
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = %d
unix_socket_dir =
auth_type = trust
auth_file = %s
pool_mode = %s
max_client_conn = 200
logfile = %s
%s
`, host, port, listen, filepath.Join(dir, "users.txt"), mode, filepath.Join(dir, "pgbouncer.log"), strings.Join(extra, "\n"))
	if !strings.Contains(strings.Join(extra, "\n"), "default_pool_size") {
		cfg += "default_pool_size = 40\n"
	}
	for name, body := range map[string]string{
		"pgbouncer.ini": cfg,
		"users.txt":     fmt.Sprintf("%q \"\"\n", pgUser),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(bin, append(args, filepath.Join(dir, "pgbouncer.ini"))...)
	out := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start pgbouncer: %v", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(listen))
	for deadline := time.Now().Add(10 * time.Second); ; {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			_ = c.Close()
			break
		}
		select {
		case <-exited:
			log, _ := os.ReadFile(filepath.Join(dir, "pgbouncer.log"))
			t.Fatalf("pgbouncer exited: %s %s", out.String(), log)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("pgbouncer did not listen on %s within 10 s: %s", addr, out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	v := *u
	v.Host = addr
	return v.String()
}
