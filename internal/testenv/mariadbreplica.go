package testenv

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// MariaDBReplica starts a MariaDB primary with its binary log and
// semi-synchronous replication on (a commit returns once a replica has
// its binary log events), and a replica of it (read_only ON), both of the
// machine's mariadbd (Debian's mariadb-server) on free loopback ports with
// root and no password, and returns their DSNs (database test). With
// delay > 0 the replica reaches the primary through a Forwarder that holds
// each piece of data that long each way: a replica on another host.
// primaryFlags are more of the primary's mariadbd flags
// ("--performance-schema=ON"). Both stop,
// and their files go, when the test ends. Without the binaries the test
// is skipped, or fails where the servers are required (CI).
func MariaDBReplica(t testing.TB, delay time.Duration, primaryFlags ...string) (primary, replica string) {
	t.Helper()
	server, install := lookBin("mariadbd"), lookBin("mariadb-install-db")
	client := lookBin("mariadb")
	if server == "" || install == "" || client == "" {
		if Required() {
			t.Fatalf("mariadbd, mariadb-install-db or mariadb not found but %s is set", RequireEnv)
		}
		t.Skip("mariadbd, mariadb-install-db or mariadb not found: skipping the replication test")
	}
	dir, err := os.MkdirTemp("", "ceiling-replica-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	user := []string{}
	if os.Geteuid() == 0 {
		user = []string{"--user=root"}
	}
	pdata, rdata := filepath.Join(dir, "primary"), filepath.Join(dir, "replica")
	out, err := exec.Command(install, append([]string{"--no-defaults", "--datadir=" + pdata, "--auth-root-authentication-method=normal", "--skip-test-db"}, user...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("mariadb-install-db: %v: %s", err, out)
	}
	// The replica starts from the same empty server.
	if out, err := exec.Command("cp", "-a", pdata, rdata).CombinedOutput(); err != nil {
		t.Fatalf("copy the data directory: %v: %s", err, out)
	}
	start := func(name, data string, port int, extra ...string) {
		t.Helper()
		args := append([]string{"--no-defaults", "--datadir=" + data, "--port=" + strconv.Itoa(port), "--bind-address=127.0.0.1",
			"--socket=" + filepath.Join(dir, name+".sock"), "--log-error=" + filepath.Join(dir, name+".err"),
			"--pid-file=" + filepath.Join(dir, name+".pid"), "--innodb-buffer-pool-size=32M"}, user...)
		cmd := exec.Command(server, append(args, extra...)...)
		if err := cmd.Start(); err != nil {
			t.Fatalf("start mariadbd (%s): %v", name, err)
		}
		exited := make(chan struct{})
		go func() { _ = cmd.Wait(); close(exited) }()
		t.Cleanup(func() {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-exited:
			case <-time.After(20 * time.Second):
				_ = cmd.Process.Kill()
				<-exited
			}
		})
		for deadline := time.Now().Add(30 * time.Second); ; {
			if exec.Command(client, "-h127.0.0.1", "-P"+strconv.Itoa(port), "-uroot", "-e", "SELECT 1").Run() == nil {
				return
			}
			select {
			case <-exited:
				log, _ := os.ReadFile(filepath.Join(dir, name+".err"))
				t.Fatalf("mariadbd (%s) exited: %s", name, log)
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("mariadbd (%s) not answering on port %d within 30 s", name, port)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	sql := func(port int, stmt string) string {
		t.Helper()
		out, err := exec.Command(client, "-h127.0.0.1", "-P"+strconv.Itoa(port), "-uroot", "-N", "-e", stmt).CombinedOutput()
		if err != nil {
			t.Fatalf("%s on port %d: %v: %s", stmt, port, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	pport, rport := freePort(t), freePort(t)
	start("primary", pdata, pport, append([]string{"--server-id=1", "--log-bin=" + filepath.Join(pdata, "bin"),
		"--rpl-semi-sync-master-enabled=ON", "--rpl-semi-sync-master-timeout=10000"}, primaryFlags...)...)
	start("replica", rdata, rport, "--server-id=2", "--rpl-semi-sync-slave-enabled=ON", "--read-only=ON")
	host, port := "127.0.0.1", strconv.Itoa(pport)
	if delay > 0 {
		host, port, _ = net.SplitHostPort(Forwarder(t, net.JoinHostPort(host, port), delay))
	}
	sql(rport, fmt.Sprintf("CHANGE MASTER TO MASTER_HOST='%s', MASTER_PORT=%s, MASTER_USER='root', MASTER_USE_GTID=slave_pos; START SLAVE", host, port))
	// The primary waits for the replica only once it is connected.
	for deadline := time.Now().Add(30 * time.Second); sql(pport, "SHOW STATUS LIKE 'Rpl_semi_sync_master_clients'") != "Rpl_semi_sync_master_clients\t1"; {
		if time.Now().After(deadline) {
			t.Fatalf("the replica did not connect to the primary as a semi-synchronous replica within 30 s: %s", sql(rport, "SHOW SLAVE STATUS\\G"))
		}
		time.Sleep(100 * time.Millisecond)
	}
	// Once the replica is there: before, the commit would wait out the
	// timeout (rpl_semi_sync_master_wait_no_slave).
	sql(pport, "CREATE DATABASE test")
	// Run first of the cleanups: with the replica gone, the primary's
	// last commits (at shutdown too) would each wait out the timeout.
	t.Cleanup(func() {
		_ = exec.Command(client, "-h127.0.0.1", "-P"+strconv.Itoa(pport), "-uroot", "-e", "SET GLOBAL rpl_semi_sync_master_enabled = OFF").Run()
	})
	dsn := func(port int) string { return fmt.Sprintf("mysql://root@127.0.0.1:%d/test", port) }
	return dsn(pport), dsn(rport)
}

// lookBin finds a program in PATH or in /usr/sbin and /usr/bin, or "".
func lookBin(name string) string {
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	for _, d := range []string{"/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin"} {
		if _, err := os.Stat(filepath.Join(d, name)); err == nil {
			return filepath.Join(d, name)
		}
	}
	return ""
}
