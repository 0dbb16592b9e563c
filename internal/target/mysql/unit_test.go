package mysql

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/ceiling-db/ceiling/internal/metrics"
	"github.com/ceiling-db/ceiling/internal/osstat"
	"github.com/ceiling-db/ceiling/internal/target"
	"github.com/ceiling-db/ceiling/internal/testenv"
)

const testPassword = "Sup3rS3cretPw"

func TestParseDSN(t *testing.T) {
	tests := []struct {
		name, dsn                         string
		user, pass, netw, addr, db, param string // param: "k=v" expected in Params, or ""
		parseTime                         bool
		timeout                           time.Duration
	}{
		{name: "full", dsn: "mysql://u:pw@db.example:3307/shop",
			user: "u", pass: "pw", netw: "tcp", addr: "db.example:3307", db: "shop", parseTime: true, timeout: 10 * time.Second},
		{name: "default port", dsn: "mysql://root@127.0.0.1/test",
			user: "root", netw: "tcp", addr: "127.0.0.1:3306", db: "test", parseTime: true, timeout: 10 * time.Second},
		{name: "default host", dsn: "mysql:///test",
			netw: "tcp", addr: "127.0.0.1:3306", db: "test", parseTime: true, timeout: 10 * time.Second},
		{name: "ipv6", dsn: "mysql://u@[::1]:3306/d",
			user: "u", netw: "tcp", addr: "[::1]:3306", db: "d", parseTime: true, timeout: 10 * time.Second},
		{name: "escaped password", dsn: "mysql://u:p%40ss%2Fw%3Ard@h/d",
			user: "u", pass: "p@ss/w:rd", netw: "tcp", addr: "h:3306", db: "d", parseTime: true, timeout: 10 * time.Second},
		{name: "mariadb scheme", dsn: "mariadb://u@h:3306/d",
			user: "u", netw: "tcp", addr: "h:3306", db: "d", parseTime: true, timeout: 10 * time.Second},
		{name: "socket", dsn: "mysql://u@localhost/d?socket=/run/mysqld/mysqld.sock",
			user: "u", netw: "unix", addr: "/run/mysqld/mysqld.sock", db: "d", parseTime: true, timeout: 10 * time.Second},
		{name: "driver params", dsn: "mysql://u@h/d?parseTime=false&timeout=2s&sql_mode=%27ANSI%27",
			user: "u", netw: "tcp", addr: "h:3306", db: "d", parseTime: false, timeout: 2 * time.Second, param: "sql_mode='ANSI'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := parseDSN(tt.dsn)
			if err != nil {
				t.Fatalf("parseDSN(%q): %v", tt.dsn, err)
			}
			got := fmt.Sprintf("%s|%s|%s|%s|%s|%v|%v", cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName, cfg.ParseTime, cfg.Timeout)
			want := fmt.Sprintf("%s|%s|%s|%s|%s|%v|%v", tt.user, tt.pass, tt.netw, tt.addr, tt.db, tt.parseTime, tt.timeout)
			if got != want {
				t.Errorf("parseDSN(%q) = %s, want %s", tt.dsn, got, want)
			}
			if tt.param != "" {
				k, v, _ := strings.Cut(tt.param, "=")
				if cfg.Params[k] != v {
					t.Errorf("Params[%q] = %q, want %q", k, cfg.Params[k], v)
				}
			}
			if _, ok := cfg.Logger.(*mysql.NopLogger); !ok {
				t.Errorf("Logger = %T, want the no-op logger", cfg.Logger)
			}
		})
	}
}

func TestParseDSNErrors(t *testing.T) {
	for _, tt := range []struct{ name, dsn, want string }{
		{"no database", "mysql://u:" + testPassword + "@h:3306", "names no database"},
		{"slash only", "mysql://u:" + testPassword + "@h:3306/", "names no database"},
		{"nested path", "mysql://u:" + testPassword + "@h/a/b", "names no database"},
		{"wrong scheme", "postgres://u:" + testPassword + "@h/d", "want mysql://"},
		{"driver form", "u:" + testPassword + "@tcp(h:3306)/d", "want mysql://"},
		{"bad url", "mysql://u:" + testPassword[:5] + "/" + testPassword[5:] + "@h:3306/d", "not a URL"},
		{"bad param", "mysql://u:" + testPassword + "@h/d?parseTime=maybe", "invalid bool"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseDSN(tt.dsn)
			if err == nil {
				t.Fatalf("parseDSN(%q) succeeded, want an error", tt.dsn)
			}
			if !errors.Is(err, target.ErrBadDSN) {
				t.Errorf("parseDSN(%q) error does not wrap ErrBadDSN", tt.dsn)
			}
			msg := err.Error()
			if !strings.Contains(msg, tt.want) {
				t.Errorf("error %q does not contain %q", msg, tt.want)
			}
			for _, piece := range []string{testPassword, testPassword[:5], testPassword[5:]} {
				if strings.Contains(msg, piece) {
					t.Errorf("error %q contains password text %q", msg, piece)
				}
			}
		})
	}
}

func TestClassifyConstructed(t *testing.T) {
	my := func(n uint16) error {
		return fmt.Errorf("mysql: exec: %w", &mysql.MySQLError{Number: n, Message: "m"})
	}
	tests := []struct {
		name string
		err  error
		want metrics.ErrClass
	}{
		{"nil", nil, metrics.ErrOther},
		{"deadlock", my(1213), metrics.ErrSerialization},
		{"lock wait timeout", my(1205), metrics.ErrLockTimeout},
		{"duplicate", my(1062), metrics.ErrConstraint},
		{"no referenced row", my(1452), metrics.ErrConstraint},
		{"row is referenced", my(1451), metrics.ErrConstraint},
		{"bad null", my(1048), metrics.ErrConstraint},
		{"check mysql", my(3819), metrics.ErrConstraint},
		{"check mariadb", my(4025), metrics.ErrConstraint},
		{"max execution time", my(3024), metrics.ErrTimeout},
		{"max statement time", my(1969), metrics.ErrTimeout},
		{"interrupted", my(1317), metrics.ErrTimeout},
		{"killed", my(1927), metrics.ErrConnLost},
		{"gone away", my(2006), metrics.ErrConnLost},
		{"lost", my(2013), metrics.ErrConnLost},
		{"syntax", my(1064), metrics.ErrOther},
		{"no table", my(1146), metrics.ErrOther},
		{"bad conn", fmt.Errorf("x: %w", driver.ErrBadConn), metrics.ErrConnLost},
		{"invalid conn", mysql.ErrInvalidConn, metrics.ErrConnLost},
		{"conn done", sql.ErrConnDone, metrics.ErrConnLost},
		{"eof", io.EOF, metrics.ErrConnLost},
		{"unexpected eof", io.ErrUnexpectedEOF, metrics.ErrConnLost},
		{"net reset", &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}, metrics.ErrConnLost},
		{"deadline", context.DeadlineExceeded, metrics.ErrTimeout},
		{"canceled", context.Canceled, metrics.ErrOther},
		{"plain", errors.New("boom"), metrics.ErrOther},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Classify(tt.err); got != tt.want {
				t.Errorf("Classify(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}

func TestCounters(t *testing.T) {
	mariadb := map[string]string{
		"Innodb_os_log_written": "1000", "Innodb_log_writes": "9", "Innodb_data_fsyncs": "7",
		"Innodb_data_reads": "3", "Innodb_data_writes": "11", "Innodb_data_read": "49152", "Innodb_data_written": "180224",
		"Innodb_buffer_pool_read_requests": "100", "Innodb_buffer_pool_reads": "4",
		"Innodb_buffer_pool_dump_status": "Dumping of buffer pool not started",
		"Com_commit":                     "2", "Com_rollback": "1", "Handler_commit": "50", "Uptime": "99",
	}
	got := counters(mariadb)
	want := map[string]float64{
		target.CtrLogBytes: 1000, target.CtrLogWrites: 9, target.CtrDataSyncs: 7,
		target.CtrDataReads: 3, target.CtrDataWrites: 11, target.CtrDataBytesRead: 49152, target.CtrDataBytesWrite: 180224,
		target.CtrCacheReads: 100, target.CtrCacheHits: 96,
		"mysql.innodb_data_fsyncs": 7, "mysql.innodb_os_log_written": 1000, "mysql.handler_commit": 50,
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("counter %s = %v (present %v), want %v", k, g, ok, v)
		}
	}
	for _, absent := range []string{target.CtrCommits, target.CtrRollbacks, target.CtrLogSyncs, "mysql.innodb_buffer_pool_dump_status", "mysql.uptime", target.CtrLogSyncMs} {
		if _, ok := got[absent]; ok {
			t.Errorf("counter %s present, want absent", absent)
		}
	}

	mysql8 := map[string]string{"Innodb_os_log_fsyncs": "5", "Innodb_data_fsyncs": "8"}
	got = counters(mysql8)
	if got[target.CtrLogSyncs] != 5 || got[target.CtrDataSyncs] != 8 {
		t.Errorf("MySQL 8: log_syncs = %v, data_syncs = %v, want 5, 8", got[target.CtrLogSyncs], got[target.CtrDataSyncs])
	}
}

func TestCheckName(t *testing.T) {
	for _, ok := range []string{"t", "rows_1", "_x", strings.Repeat("a", 56)} {
		if err := checkName("table", ok); err != nil {
			t.Errorf("checkName(%q) = %v, want nil", ok, err)
		}
	}
	for _, bad := range []string{"", "1t", "a-b", "a.b", "a`b", "a b", strings.Repeat("a", 57)} {
		if err := checkName("table", bad); err == nil {
			t.Errorf("checkName(%q) = nil, want an error", bad)
		}
	}
}

func TestOpenClosedPort(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skip("no loopback:", err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	checkOpenError(t, target.Options{DSN: fmt.Sprintf("mysql://u:%s@127.0.0.1:%d/test", testPassword, port)}, "connection refused")
}

// TestOpenSilentServer: a server that accepts the connection and never
// sends its greeting is a one-line error after the DSN's timeout (10 s
// without one: the driver bounds the dial alone), not a hang.
func TestOpenSilentServer(t *testing.T) {
	addr := testenv.SilentServer(t)
	checkOpenError(t, target.Options{DSN: fmt.Sprintf("mysql://u:%s@%s/test?timeout=1s", testPassword, addr)},
		"no reply from "+addr+" within 1s: is a MySQL or MariaDB server listening there, and up? (timeout= in the DSN sets the wait)")
}

// checkOpenError asserts that Open fails with a one-line error free of the
// password, containing mustContain.
func checkOpenError(t *testing.T, opts target.Options, mustContain string, passwords ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tg, err := Open(ctx, opts)
	if err == nil {
		_ = tg.Close(ctx)
		t.Fatalf("Open(%s) succeeded, want an error", target.Redact(opts.DSN))
	}
	msg := err.Error()
	t.Logf("error: %s", msg)
	for _, pw := range append(passwords, testPassword) {
		if strings.Contains(msg, pw) {
			t.Errorf("error contains the password %q: %q", pw, msg)
		}
	}
	if strings.ContainsAny(msg, "\r\n") {
		t.Errorf("error is not one line: %q", msg)
	}
	if !strings.HasPrefix(msg, "mysql: ") {
		t.Errorf("error %q lacks the package prefix", msg)
	}
	if !strings.Contains(msg, mustContain) {
		t.Errorf("error %q does not contain %q", msg, mustContain)
	}
}

func TestReturnsRows(t *testing.T) {
	tests := map[string]bool{
		"SELECT 1":                               true,
		"  select * from t where id = ?":         true,
		"(SELECT 1) UNION (SELECT 2)":            true,
		"/* hint */ SELECT ?":                    true,
		"-- note\nSELECT ?":                      true,
		"WITH x AS (SELECT 1) SELECT * FROM x":   true,
		"SHOW TABLES":                            true,
		"INSERT INTO t VALUES (?) RETURNING id":  true,
		"DELETE FROM t WHERE id = ? returning *": true,
		"INSERT INTO t (id) VALUES (?)":          false,
		"UPDATE t SET v = ? WHERE id = ?":        false,
		"INSERT INTO t (returning_x) VALUES (?)": false,
		"DELETE FROM t WHERE id = ?":             false,
		"/* unterminated":                        false,
		"":                                       false,
	}
	for q, want := range tests {
		if got := returnsRows(q); got != want {
			t.Errorf("returnsRows(%q) = %v, want %v", q, got, want)
		}
	}
}

// TestServerPID: for a local server ceiling finds the server's own process
// from its pid file (so that a second instance on the host is not counted
// as the server's CPU); with the performance_schema instance of CI beside
// it, the two targets name different processes.
func TestServerPID(t *testing.T) {
	tg := openTarget(t, testDSN(t), target.DurabilityServer).(*myTarget)
	if !tg.info.Local {
		t.Skip("the test server is not local")
	}
	if tg.serverPID <= 0 {
		t.Fatalf("no server pid found for a local server (pid file unreadable?)")
	}
	if _, comm, ok := osstat.PidCPU(tg.serverPID); !ok || !slices.Contains(serverProcs, comm) {
		t.Fatalf("pid %d is %q, want one of %v", tg.serverPID, comm, serverProcs)
	}
	if ps := os.Getenv(testenv.MySQLPSEnv); ps != "" {
		other := openTarget(t, ps, target.DurabilityServer).(*myTarget)
		if other.serverPID == tg.serverPID || other.serverPID <= 0 {
			t.Errorf("second instance: pid %d, first %d; want a different process", other.serverPID, tg.serverPID)
		}
	}
}

func TestLogDir(t *testing.T) {
	for _, c := range []struct{ datadir, home, want string }{
		{"/var/lib/mysql/", "./", "/var/lib/mysql"},
		{"/var/lib/mysql/", "", "/var/lib/mysql"},
		{"/var/lib/mysql", "redo", "/var/lib/mysql/redo"},
		{"/var/lib/mysql/", "/fast/log/", "/fast/log"},
		{"", "./", ""},
	} {
		if got := logDir(c.datadir, c.home); got != c.want {
			t.Errorf("logDir(%q, %q) = %q, want %q", c.datadir, c.home, got, c.want)
		}
	}
}
