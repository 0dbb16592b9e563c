package postgres

import (
	"maps"
	"slices"
	"testing"

	"github.com/ceiling-db/ceiling/internal/target"
)

// PostgreSQL 15: pg_stat_wal has the write/sync counts, no pg_stat_io.
func TestCountersPG15(t *testing.T) {
	raw := map[string]float64{
		"wal.wal_records": 10, "wal.wal_bytes": 1000, "wal.wal_write": 7, "wal.wal_sync": 6,
		"wal.wal_write_time": 0, "wal.wal_sync_time": 0, "wal.wal_fpi": 1,
		"database.xact_commit": 5, "database.xact_rollback": 1,
		"database.blks_read": 3, "database.blks_hit": 97, "database.tup_inserted": 4,
		"database.blk_read_time":     0,
		"bgwriter.checkpoints_timed": 2, "bgwriter.checkpoints_req": 1,
		"bgwriter.buffers_checkpoint": 10, "bgwriter.buffers_clean": 20, "bgwriter.buffers_backend": 30,
	}
	got := counters(raw, nil, timing{}, 8192)
	want := map[string]float64{
		target.CtrLogBytes: 1000, target.CtrLogWrites: 7, target.CtrLogSyncs: 6,
		target.CtrCommits: 5, target.CtrRollbacks: 1,
		target.CtrDataReads: 3, target.CtrDataBytesRead: 3 * 8192,
		target.CtrCacheHits: 97, target.CtrCacheReads: 100,
		target.CtrCheckpoints: 3, target.CtrDataWrites: 60, target.CtrDataBytesWrite: 60 * 8192,
		"pg.tup_inserted": 4, "pg.wal_records": 10, "pg.wal_fpi": 1,
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("counter %s = %v (present %v), want %v", k, g, ok, v)
		}
	}
	for _, absent := range []string{
		target.CtrLogWriteMs, target.CtrLogSyncMs, target.CtrDataSyncs,
		"pg.wal_write_time", "pg.wal_sync_time", "pg.blk_read_time",
	} {
		if v, ok := got[absent]; ok {
			t.Errorf("counter %s = %v, want absent (not measured)", absent, v)
		}
	}

	got = counters(raw, nil, timing{wal: true, io: true}, 8192)
	for _, k := range []string{target.CtrLogWriteMs, target.CtrLogSyncMs, "pg.wal_sync_time", "pg.blk_read_time"} {
		if _, ok := got[k]; !ok {
			t.Errorf("with timing on, counter %s is absent; keys: %v", k, slices.Sorted(maps.Keys(got)))
		}
	}
}

// PostgreSQL 17: checkpointer split out, backend writes only in pg_stat_io.
func TestCountersPG17(t *testing.T) {
	raw := map[string]float64{
		"wal.wal_bytes": 1000, "wal.wal_write": 7, "wal.wal_sync": 6,
		"bgwriter.buffers_clean": 20,
		"checkpointer.num_timed": 4, "checkpointer.num_requested": 1, "checkpointer.buffers_written": 11,
	}
	io := []ioRow{
		{"client backend", "relation", "normal", map[string]float64{"reads": 5, "writes": 3, "fsyncs": 0, "op_bytes": 8192, "read_time": 0}},
		{"checkpointer", "relation", "normal", map[string]float64{"writes": 11, "fsyncs": 2, "op_bytes": 8192}},
		{"client backend", "temp relation", "normal", map[string]float64{"reads": 1, "op_bytes": 8192}},
	}
	got := counters(raw, io, timing{}, 8192)
	want := map[string]float64{
		target.CtrCheckpoints: 5, target.CtrDataWrites: 14, target.CtrDataSyncs: 2,
		"pg.io.relation.reads": 5, "pg.io.relation.read_bytes": 5 * 8192, "pg.io.temp_relation.reads": 1,
		"pg.checkpointer.buffers_written": 11, target.CtrLogSyncs: 6,
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("counter %s = %v (present %v), want %v", k, g, ok, v)
		}
	}
	for _, absent := range []string{"pg.io.relation.read_time", "pg.io.relation.op_bytes"} {
		if _, ok := got[absent]; ok {
			t.Errorf("counter %s present, want absent", absent)
		}
	}
}

// PostgreSQL 18: WAL writes and syncs only in pg_stat_io; num_done.
func TestCountersPG18(t *testing.T) {
	raw := map[string]float64{
		"wal.wal_bytes": 1000, "wal.wal_records": 9,
		"checkpointer.num_timed": 4, "checkpointer.num_requested": 1, "checkpointer.num_done": 2,
	}
	io := []ioRow{
		{"client backend", "wal", "normal", map[string]float64{"writes": 8, "fsyncs": 6, "write_bytes": 1000, "fsync_time": 1.5}},
		{"walwriter", "wal", "normal", map[string]float64{"writes": 2, "fsyncs": 1, "write_bytes": 100, "fsync_time": 0.5}},
	}
	got := counters(raw, io, timing{wal: true}, 8192)
	want := map[string]float64{
		target.CtrCheckpoints: 2, target.CtrLogWrites: 10, target.CtrLogSyncs: 7, target.CtrLogSyncMs: 2,
		target.CtrLogBytes: 1000, "pg.io.wal.write_bytes": 1100,
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("counter %s = %v (present %v), want %v", k, g, ok, v)
		}
	}
	got = counters(raw, io, timing{}, 8192)
	if _, ok := got[target.CtrLogSyncMs]; ok {
		t.Errorf("counter %s present with track_wal_io_timing off, want absent", target.CtrLogSyncMs)
	}
}

// TestMissingViews: what a server lacks is named with what it would have
// given; before 17 the checkpoints come from pg_stat_bgwriter, so the
// absent pg_stat_checkpointer is not reported.
func TestMissingViews(t *testing.T) {
	pg15 := &probe{cols: map[string][]string{
		"pg_stat_wal": {"wal_records"}, "pg_stat_database": {"xact_commit"}, "pg_stat_bgwriter": {"checkpoints_timed", "buffers_clean"},
	}}
	got := pg15.missing(map[string]string{"track_wal_io_timing": "off"})
	want := "pg_stat_io (PostgreSQL 16+: data-file syncs, reads and writes by backend type), WAL write/sync times (track_wal_io_timing is off)"
	if got != want {
		t.Errorf("PostgreSQL 15: %q, want %q", got, want)
	}
	pg13 := &probe{cols: map[string][]string{"pg_stat_database": {"xact_commit"}, "pg_stat_bgwriter": {"buffers_clean"}}}
	got = pg13.missing(map[string]string{"track_wal_io_timing": "on"})
	want = "pg_stat_wal (PostgreSQL 14+: WAL records, bytes, writes and syncs), pg_stat_checkpointer (PostgreSQL 17+: checkpoints), pg_stat_io (PostgreSQL 16+: data-file syncs, reads and writes by backend type)"
	if got != want {
		t.Errorf("without checkpoint counters: %q, want %q", got, want)
	}
	pg17 := &probe{cols: map[string][]string{
		"pg_stat_wal": {"wal_records"}, "pg_stat_database": {"xact_commit"}, "pg_stat_bgwriter": {"buffers_clean"},
		"pg_stat_checkpointer": {"num_timed"}, "pg_stat_io": {"reads"},
	}}
	if got := pg17.missing(map[string]string{"track_wal_io_timing": "on"}); got != "" {
		t.Errorf("PostgreSQL 17 with timing: %q, want nothing", got)
	}
}
