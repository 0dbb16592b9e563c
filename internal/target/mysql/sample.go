package mysql

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ceiling-db/ceiling/internal/metrics"
	"github.com/ceiling-db/ceiling/internal/target"
)

// Sample implements target.Sampler: one SHOW GLOBAL STATUS over the
// sampler's own session, reconnecting if that session was lost.
func (t *myTarget) Sample(ctx context.Context) (target.Sample, error) {
	t.mu.Lock()
	closed := t.closed
	t.mu.Unlock()
	if closed {
		return target.Sample{}, errors.New("mysql: sample: target is closed")
	}

	t.sampleMu.Lock()
	defer t.sampleMu.Unlock()
	for attempt := 0; ; attempt++ {
		if t.sampler == nil {
			c, err := t.conn(ctx)
			if err != nil {
				return target.Sample{}, fmt.Errorf("the sampler's session: %w", err) // "mysql: connect to …"
			}
			t.sampler = c
			if t.samplerSessions > 0 {
				// The session was lost: the server may have restarted,
				// with its configured durability, and whatever ended it
				// may have ended the admin session and its lock.
				t.recheckDurability(ctx, c)
				t.recheckLock(ctx)
			}
			t.samplerSessions++
		}
		start := time.Now()
		status, err := t.readStatus(ctx)
		if err == nil {
			end := time.Now()
			out := counters(status)
			t.addDiagnosis(out) // CPU from /proc: see diag.go
			if t.ps != nil {
				if err := t.ps.read(ctx, t.sampler, out); err != nil {
					return target.Sample{}, err
				}
			}
			if t.locks != nil {
				t.locks.read(ctx, t.sampler, out)
			}
			if t.replica != nil {
				if _, err := t.replica.read(ctx, t.sampler, out); err != nil {
					return target.Sample{}, fmt.Errorf("mysql: read the replica's position: %w", err)
				}
			}
			var files []target.FileStat
			if t.files != nil {
				if files, err = t.files.read(ctx, t.sampler); err != nil {
					return target.Sample{}, err
				}
			}
			return target.Sample{At: start.Add(end.Sub(start) / 2), Counters: out, Files: files}, nil
		}
		lost := Classify(err) == metrics.ErrConnLost
		if lost {
			// Drop the session; the next attempt takes a new one.
			_ = t.sampler.Raw(func(any) error { return driver.ErrBadConn })
			_ = t.sampler.Close()
			t.sampler = nil
		}
		if !lost || attempt > 0 || ctx.Err() != nil {
			return target.Sample{}, fmt.Errorf("mysql: sample: %w", err)
		}
	}
}

func (t *myTarget) readStatus(ctx context.Context) (map[string]string, error) {
	rows, err := t.sampler.QueryContext(ctx, "SHOW GLOBAL STATUS")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	status := make(map[string]string, 512)
	for rows.Next() {
		var name, value string
		if err := rows.Scan(&name, &value); err != nil {
			return nil, err
		}
		status[name] = value
	}
	return status, rows.Err()
}

// extraStatus are status variables outside Innodb_* kept under "mysql.".
var extraStatus = []string{
	"Com_commit", "Com_rollback", "Com_insert", "Com_update", "Com_delete",
	"Com_replace", "Com_select", "Questions", "Queries", "Handler_commit",
	"Handler_rollback", "Bytes_received", "Bytes_sent", "Binlog_bytes_written",
	"Connections", "Aborted_clients", "Threads_connected", "Threads_running",
	"Created_tmp_disk_tables", "Slow_queries", "Table_locks_waited",
}

// counters maps SHOW GLOBAL STATUS to sample counters:
//
//	Innodb_os_log_written              → log_bytes
//	Innodb_log_writes                  → log_writes
//	Innodb_os_log_fsyncs               → log_syncs (MySQL; MariaDB 10.11 lacks it: absent)
//	Innodb_data_fsyncs                 → data_syncs (on MariaDB this includes the log fsyncs)
//	Innodb_data_reads / _writes        → data_reads / data_writes
//	Innodb_data_read / _written        → data_bytes_read / data_bytes_write
//	Innodb_buffer_pool_read_requests   → cache_reads
//	read_requests - Innodb_buffer_pool_reads → cache_hits
//	Rpl_semi_sync_master_tx_wait_time  → repl_wait_ms (µs → ms; semi-synchronous replication)
//
// The generic commits / rollbacks counters are left absent: Com_commit
// counts COMMIT statements only, so autocommit work would show as zero
// commits, and Handler_commit counts every statement's internal commit,
// reads included. Both are kept as mysql.com_commit / mysql.handler_commit
// for whoever knows what they mean for their workload. Every numeric Innodb_*
// variable, and the few in extraStatus, are also kept as
// "mysql.<lower-case name>"; some Innodb_* ones (pages free, dirty, …) are
// levels rather than cumulative counts.
func counters(status map[string]string) map[string]float64 {
	num := func(name string) (float64, bool) {
		s, ok := status[name]
		if !ok {
			return 0, false
		}
		v, err := strconv.ParseFloat(s, 64)
		return v, err == nil
	}
	out := map[string]float64{}
	for name := range status {
		if len(name) > 7 && strings.EqualFold(name[:7], "Innodb_") {
			if v, ok := num(name); ok {
				out["mysql."+strings.ToLower(name)] = v
			}
		}
	}
	for _, name := range extraStatus {
		if v, ok := num(name); ok {
			out["mysql."+strings.ToLower(name)] = v
		}
	}
	copyTo := func(ctr, name string) {
		if v, ok := num(name); ok {
			out[ctr] = v
		}
	}
	copyTo(target.CtrLogBytes, "Innodb_os_log_written")
	copyTo(target.CtrLogWrites, "Innodb_log_writes")
	copyTo(target.CtrLogSyncs, "Innodb_os_log_fsyncs")
	copyTo(target.CtrDataSyncs, "Innodb_data_fsyncs")
	copyTo(target.CtrDataReads, "Innodb_data_reads")
	copyTo(target.CtrDataWrites, "Innodb_data_writes")
	copyTo(target.CtrDataBytesRead, "Innodb_data_read")
	copyTo(target.CtrDataBytesWrite, "Innodb_data_written")
	copyTo(target.CtrRowLockMs, "Innodb_row_lock_time")
	// µs; MySQL 8.0.26+'s rpl_semi_sync_source plugin names it "source".
	for _, name := range []string{"Rpl_semi_sync_master_tx_wait_time", "Rpl_semi_sync_source_tx_wait_time"} {
		if v, ok := num(name); ok {
			out[target.CtrReplWaitMs] = v / 1000
		}
	}
	if req, ok := num("Innodb_buffer_pool_read_requests"); ok {
		out[target.CtrCacheReads] = req
		if miss, ok := num("Innodb_buffer_pool_reads"); ok {
			out[target.CtrCacheHits] = max(req-miss, 0)
		}
	}
	return out
}

// recheckDurability puts the durability setting back where ceiling had
// set it and a restarted server came back with its configured value (the
// setting is global: a restart resets it), and records that in the
// durability's note. Called on a new sampler session after a lost one.
func (t *myTarget) recheckDurability(ctx context.Context, c *sql.Conn) {
	t.mu.Lock()
	changed, during := t.changed, t.info.Durability.During
	t.mu.Unlock()
	if !changed {
		return
	}
	v, err := t.readDurability(ctx, c)
	if err != nil || v == during {
		return
	}
	note := fmt.Sprintf("at %s the server had %s=%s (a restart?): ", time.Now().UTC().Format("15:04:05 UTC"), durabilitySetting, v)
	if _, err := c.ExecContext(ctx, "SET GLOBAL "+durabilitySetting+" = "+during); err != nil {
		note += "setting it to " + during + " again failed: " + err.Error()
	} else {
		note += "ceiling set it to " + during + " again"
	}
	t.mu.Lock()
	t.addDurabilityNote(note)
	t.mu.Unlock()
}
