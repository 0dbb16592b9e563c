package sqlite

import (
	"github.com/ceiling-db/ceiling/internal/target"
)

// addDiagnosis adds the wait categories the VFS can measure and the host CPU
// counters to a sample's counters (files are the VFS stats of the sample,
// lockNs the time spent in Lock calls and in the busy handler):
//
//	wait_log_io_ms     write + sync time of the log files (WAL, rollback journal)
//	wait_data_read_ms  read time of the main database file
//	wait_data_write_ms write + sync time of the main database file
//	wait_lock_ms       time inside the VFS Lock calls (database-file locks)
//	                   plus the time connections waited in the busy handler
//	                   for a lock another one held (busyWait): above all
//	                   SQLite's single write lock, a WAL-index lock the VFS
//	                   cannot see
//
// CPU and client time cannot be told apart from the caller's own work in
// an embedded engine, and nothing is sampled: wait_cpu_ms, wait_client_ms,
// wait_other_ms and wait_samples are absent. server_cpu_s is absent too:
// the engine runs inside ceiling's own process, so its CPU is ceiling's.
// The host CPU counters are always given (the database is local).
func addDiagnosis(out map[string]float64, files []target.FileStat, lockNs int64, dev *target.LogDevice) {
	var logMs, readMs, writeMs float64
	for _, f := range files {
		switch f.Role {
		case "log":
			logMs += float64(f.WriteNs+f.SyncNs) / 1e6
		case "data":
			readMs += float64(f.ReadNs) / 1e6
			writeMs += float64(f.WriteNs+f.SyncNs) / 1e6
		}
	}
	out[target.CtrWaitLogMs] = logMs
	out[target.CtrWaitDataReadMs] = readMs
	out[target.CtrWaitDataWriteMs] = writeMs
	out[target.CtrWaitLockMs] = float64(lockNs) / 1e6
	target.AddHostCPU(out)
	target.AddLogDevice(out, dev)
}
