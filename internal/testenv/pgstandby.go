package testenv

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// PgStandby starts a PostgreSQL primary and a hot standby streaming from
// it, both of the machine's PostgreSQL binaries (initdb, pg_basebackup and
// pg_ctl of Debian's postgresql package), each on a free loopback port
// with trust authentication, and returns their DSNs (user postgres,
// database postgres). The primary commits only once the standby has
// applied the commit (synchronous_commit = remote_apply), so what a test
// writes there is on the standby when the write returns; it runs with
// fsync off (its own flushes are no test's subject). Both stop, and
// their files go, when the test ends. Without the binaries the test is
// skipped, or fails where the servers are required (CI).
func PgStandby(t testing.TB) (primary, standby string) {
	t.Helper()
	bin := pgBinDir()
	if bin == "" {
		if Required() {
			t.Fatalf("PostgreSQL's initdb not found (/usr/lib/postgresql/*/bin) but %s is set", RequireEnv)
		}
		t.Skip("PostgreSQL's initdb not found (/usr/lib/postgresql/*/bin): skipping the hot standby test")
	}
	dir, err := os.MkdirTemp("", "ceiling-standby-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	// initdb and the servers refuse to run as root: run them as postgres,
	// which then owns the directory.
	var runAs []string
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Fatalf("PostgreSQL cannot run as root and there is no user postgres to run it as")
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
		runAs = []string{"runuser", "-u", "postgres", "--"}
	}
	// command is PostgreSQL's program name with args, as that user.
	command := func(name string, args ...string) *exec.Cmd {
		argv := append(append(append([]string{}, runAs...), filepath.Join(bin, name)), args...)
		return exec.Command(argv[0], argv[1:]...)
	}
	run := func(name string, args ...string) {
		t.Helper()
		out, err := command(name, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v: %s", name, err, out)
		}
	}
	pdata, sdata := filepath.Join(dir, "primary"), filepath.Join(dir, "standby")
	pport, sport := freePort(t), freePort(t)
	opts := func(port int) string {
		return fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c max_connections=60 -c shared_buffers=32MB", port, dir)
	}
	stop := func(data string) func() {
		return func() { _ = command("pg_ctl", "-D", data, "-m", "immediate", "-w", "stop").Run() }
	}

	run("initdb", "-D", pdata, "-A", "trust", "-U", "postgres", "--no-sync")
	conf := "host replication all 127.0.0.1/32 trust\n"
	if err := appendFile(filepath.Join(pdata, "pg_hba.conf"), conf); err != nil {
		t.Fatal(err)
	}
	if err := appendFile(filepath.Join(pdata, "postgresql.conf"),
		"synchronous_standby_names = '*'\nsynchronous_commit = remote_apply\nfsync = off\n"); err != nil {
		t.Fatal(err)
	}
	run("pg_ctl", "-D", pdata, "-o", opts(pport), "-l", filepath.Join(dir, "primary.log"), "-w", "start")
	t.Cleanup(stop(pdata))
	run("pg_basebackup", "-h", "127.0.0.1", "-p", strconv.Itoa(pport), "-U", "postgres", "-D", sdata, "-R", "--no-sync")
	run("pg_ctl", "-D", sdata, "-o", opts(sport), "-l", filepath.Join(dir, "standby.log"), "-w", "start")
	t.Cleanup(stop(sdata))
	dsn := func(port int) string {
		return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)
	}
	return dsn(pport), dsn(sport)
}

// pgBinDir is the newest /usr/lib/postgresql/N/bin holding initdb, or "".
func pgBinDir() string {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return versionOf(dirs[i]) > versionOf(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d
		}
	}
	return ""
}

func versionOf(binDir string) int {
	n, _ := strconv.Atoi(strings.TrimSuffix(filepath.Base(filepath.Dir(binDir)), "/"))
	return n
}

func appendFile(name, text string) error {
	f, err := os.OpenFile(name, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(text)
	return errors.Join(err, f.Close())
}

// freePort is a loopback TCP port nothing listens on now.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("find a free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
