package mysql

import (
	"context"
	"database/sql"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/ceiling-db/ceiling/internal/osstat"
	"github.com/ceiling-db/ceiling/internal/target"
)

// serverProcs are the command names of the server process.
var serverProcs = []string{"mariadbd", "mysqld"}

// addDiagnosis adds the CPU counters from /proc when the server runs on this
// host (onThisHost). The wait categories are left absent: see
// noteWaitEvidence.
func (t *myTarget) addDiagnosis(out map[string]float64) {
	if !t.here {
		return
	}
	target.AddHostCPU(out)
	target.AddLogDevice(out, t.info.LogDevice)
	// The server's own process when its pid file told which one it is;
	// otherwise every mariadbd/mysqld on this host (a second local
	// instance would be counted too).
	if t.serverPID > 0 {
		if sec, _, ok := osstat.PidCPU(t.serverPID); ok {
			out[target.CtrServerCPUSec] = sec
		}
		if rq, ok := t.runQueue.Read([]int{t.serverPID}); ok {
			out[target.CtrServerRunQueueSec] = rq
		}
		return
	}
	if sec, n, ok := osstat.ProcsCPU(serverProcs...); ok && n > 0 {
		out[target.CtrServerCPUSec] = sec
	}
}

// findServerPID reads the server's pid file (@@pid_file) on c and returns
// the pid when that process is a mariadbd/mysqld on this host, else 0.
func findServerPID(ctx context.Context, c *sql.Conn) int {
	var path string
	if err := c.QueryRowContext(ctx, "SELECT @@pid_file").Scan(&path); err != nil || path == "" {
		return 0
	}
	if !filepath.IsAbs(path) {
		var datadir string
		if err := c.QueryRowContext(ctx, "SELECT @@datadir").Scan(&datadir); err != nil {
			return 0
		}
		path = filepath.Join(datadir, path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0
	}
	if _, comm, ok := osstat.PidCPU(pid); !ok || !slices.Contains(serverProcs, comm) {
		return 0
	}
	return pid
}

// onThisHost says whether the server runs on this host: the DSN names it
// by a Unix socket, localhost or a loopback address, or the server saw the
// admin session come straight from its socket to an address of this host
// (its name, one of its own addresses: target.DirectOnThisHost).
func (t *myTarget) onThisHost(ctx context.Context) bool {
	return t.local() || t.direct(ctx)
}

// direct says whether the server saw the admin session come straight
// from its socket to an address of this host.
func (t *myTarget) direct(ctx context.Context) bool {
	if t.adminNC == nil {
		return false
	}
	var seen string
	err := t.admin.QueryRowContext(ctx, "SELECT HOST FROM information_schema.PROCESSLIST WHERE ID = CONNECTION_ID()").Scan(&seen)
	if err != nil {
		return false
	}
	return target.DirectOnThisHost(ctx, t.adminNC.LocalAddr(), t.adminNC.RemoteAddr(), seen, "")
}

// local says whether the DSN names a server on this host.
func (t *myTarget) local() bool {
	cfg, err := parseDSN(t.dsn)
	if err != nil {
		return false
	}
	if cfg.Net == "unix" {
		return true
	}
	host, _, err := net.SplitHostPort(cfg.Addr)
	if err != nil {
		return false
	}
	return isLocalHost(host)
}

func isLocalHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// noteWaitEvidence records in settings["missing_evidence"] what the wait
// categories lack: all of them with performance_schema off; the log-IO
// waits when the redo log has no timed file instrument (MariaDB 10.11), in
// which case the commits' log flushes are part of "other".
func noteWaitEvidence(settings map[string]string, ps *psWaits) {
	var m string
	switch {
	case ps == nil:
		m = "wait categories (performance_schema is off)"
	case !ps.logInstrumented:
		m = "log-IO waits (the redo log has no timed performance_schema instrument; log flushes count as other)"
	default:
		return
	}
	noteMissing(settings, m)
}

// noteMissing adds m to settings["missing_evidence"], the comma-separated
// list of the evidence this server cannot give.
func noteMissing(settings map[string]string, m string) {
	if prev := settings["missing_evidence"]; prev != "" {
		m = prev + ", " + m
	}
	settings["missing_evidence"] = m
}
