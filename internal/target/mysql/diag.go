package mysql

import (
	"net"
	"strings"

	"github.com/ceiling-db/ceiling/internal/osstat"
	"github.com/ceiling-db/ceiling/internal/target"
)

// serverProcs are the command names of the server process.
var serverProcs = []string{"mariadbd", "mysqld"}

// addDiagnosis adds the CPU counters from /proc when the server runs on this
// host (Unix socket, localhost or a loopback address). The wait categories
// are left absent: see noteWaitEvidence.
func (t *myTarget) addDiagnosis(out map[string]float64) {
	if !t.local() {
		return
	}
	if h, ok := osstat.ReadHostCPU(); ok {
		out[target.CtrHostCPUBusy] = h.BusySec
		out[target.CtrHostCPUTotal] = h.TotalSec
		out[target.CtrHostCores] = float64(h.Cores)
	}
	// Every mariadbd/mysqld on this host: a second local instance would be
	// counted too.
	if sec, n, ok := osstat.ProcsCPU(serverProcs...); ok && n > 0 {
		out[target.CtrServerCPUSec] = sec
	}
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
	if prev := settings["missing_evidence"]; prev != "" {
		m = prev + ", " + m
	}
	settings["missing_evidence"] = m
}
