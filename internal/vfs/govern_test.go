package vfs

import (
	"context"
	"path/filepath"
	"testing"
	"time"
)

// TestGovern: with a log write limit, 100 single-row commits take at least
// their bytes ÷ the limit (less the lane's burst), their WAL writes carry
// the emulated wait, and the log's rate over the inserts stays at the
// limit or under it; without limits (Govern with Limits{}) the same
// inserts wait for nothing. Slower machines only make the inserts slower,
// which the bounds allow.
func TestGovern(t *testing.T) {
	Register()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ceiling.db")
	t.Cleanup(func() { Forget(path) })
	db := openDB(t, dsn(path, Name, "busy_timeout(10000)", "journal_mode(wal)", "synchronous(normal)"))
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, `CREATE TABLE t(id INTEGER PRIMARY KEY, tag TEXT, v TEXT)`); err != nil {
		t.Fatal(err)
	}
	const rate = 1 << 20 // 1 MiB/s: a 4 KiB WAL frame per commit is ~4 ms
	Govern(path, Limits{LogBytesPerSec: rate})
	before := mustEntry(t, Stats(path), "ceiling.db-wal", RoleLog)
	start := time.Now()
	if err := insertRows(ctx, db, 100, "governed"); err != nil {
		t.Fatal(err)
	}
	el := time.Since(start)
	after := mustEntry(t, Stats(path), "ceiling.db-wal", RoleLog)
	bytes := after.BytesWritten - before.BytesWritten
	if bytes < 100*4096 {
		t.Fatalf("100 commits wrote %d WAL bytes, want at least a page each", bytes)
	}
	least := time.Duration(float64(bytes)/rate*float64(time.Second)) - laneBurst
	if el < least {
		t.Errorf("%d WAL bytes at ≤ 1 MiB/s took %v, want at least %v", bytes, el, least)
	}
	waited := after.EmulatedNs - before.EmulatedNs
	if waited <= 0 || waited > after.WriteNs-before.WriteNs {
		t.Errorf("emulated wait %v, want > 0 and within the writes' time %v", time.Duration(waited), time.Duration(after.WriteNs-before.WriteNs))
	}
	if d := mustEntry(t, Stats(path), "ceiling.db", RoleData); d.EmulatedNs != 0 {
		t.Errorf("the data file waited %v with only a log limit", time.Duration(d.EmulatedNs))
	}

	Govern(path, Limits{})
	before = after
	if err := insertRows(ctx, db, 100, "free"); err != nil {
		t.Fatal(err)
	}
	after = mustEntry(t, Stats(path), "ceiling.db-wal", RoleLog)
	if after.EmulatedNs != before.EmulatedNs {
		t.Errorf("without limits the WAL still waited %v", time.Duration(after.EmulatedNs-before.EmulatedNs))
	}
}

// TestGovernWait: the lanes charge what each limit says, and only there:
// log writes by bytes, log syncs one each, data-file IOs the larger of
// their IOPS and bytes cost; WAL reads and data-file syncs nothing.
func TestGovernWait(t *testing.T) {
	g := &governor{lim: Limits{LogBytesPerSec: 1 << 20, LogSyncsPerSec: 100, DataIOPS: 1000, DataBytesPerSec: 1 << 20}}
	for _, c := range []struct {
		role  string
		op    byte
		n     int
		least time.Duration
	}{
		{RoleLog, opWrite, 1 << 14, 15 * time.Millisecond}, // 16 KiB at 1 MiB/s: 15.6 ms
		{RoleLog, opSync, 0, 10 * time.Millisecond},        // 100 syncs/s
		{RoleData, opRead, 1 << 12, 3 * time.Millisecond},  // 4 KiB at 1 MiB/s (3.9 ms) > 1 ms per IO
		{RoleData, opWrite, 16, 1 * time.Millisecond},      // 1000 IOPS
	} {
		// A new governor each time, its lanes just freed: no credit from
		// the burst.
		g = &governor{lim: g.lim}
		g.logBytes.free, g.logSyncs.free, g.io.free = time.Now(), time.Now(), time.Now()
		if got := g.wait(c.role, c.op, c.n); got < c.least {
			t.Errorf("%s %c %d bytes waited %v, want at least %v", c.role, c.op, c.n, got, c.least)
		}
	}
	for _, c := range []struct {
		role string
		op   byte
	}{{RoleLog, opRead}, {RoleData, opSync}, {RoleOther, opWrite}} {
		if got := g.wait(c.role, c.op, 1<<20); got != 0 {
			t.Errorf("%s %c waited %v, want nothing", c.role, c.op, got)
		}
	}
}

// TestGovernLatency: a log sync latency makes every commit at full
// durability wait at least that long, as the device's time (in the syncs'
// time, not in the emulated wait); the data file's read latency applies to
// its reads only.
func TestGovernLatency(t *testing.T) {
	Register()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ceiling.db")
	t.Cleanup(func() { Forget(path) })
	db := openDB(t, dsn(path, Name, "busy_timeout(10000)", "journal_mode(wal)", "synchronous(full)"))
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, `CREATE TABLE t(id INTEGER PRIMARY KEY, tag TEXT, v TEXT)`); err != nil {
		t.Fatal(err)
	}
	const lat = 5 * time.Millisecond
	Govern(path, Limits{LogSyncLatency: lat})
	before := mustEntry(t, Stats(path), "ceiling.db-wal", RoleLog)
	start := time.Now()
	if err := insertRows(ctx, db, 20, "slow"); err != nil {
		t.Fatal(err)
	}
	el := time.Since(start)
	after := mustEntry(t, Stats(path), "ceiling.db-wal", RoleLog)
	syncs := after.Syncs - before.Syncs
	if syncs < 20 {
		t.Fatalf("20 commits at synchronous=FULL synced the WAL %d times", syncs)
	}
	if least := time.Duration(syncs) * lat; el < least || time.Duration(after.SyncNs-before.SyncNs) < least {
		t.Errorf("%d syncs at +%v took %v (syncs %v), want at least %v", syncs, lat, el, time.Duration(after.SyncNs-before.SyncNs), least)
	}
	if after.EmulatedNs != before.EmulatedNs {
		t.Errorf("latency counted as emulated wait: %v", time.Duration(after.EmulatedNs-before.EmulatedNs))
	}
	g := &governor{lim: Limits{LogSyncLatency: lat, DataReadLatency: 2 * lat}}
	for _, c := range []struct {
		role string
		op   byte
		want time.Duration
	}{{RoleLog, opSync, lat}, {RoleLog, opWrite, 0}, {RoleData, opRead, 2 * lat}, {RoleData, opWrite, 0}, {RoleData, opSync, 0}, {RoleOther, opRead, 0}} {
		if got := g.latency(c.role, c.op); got != c.want {
			t.Errorf("%s %c latency %v, want %v", c.role, c.op, got, c.want)
		}
	}
}
