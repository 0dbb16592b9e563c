package vfs

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ncruces/go-sqlite3"
	_ "github.com/ncruces/go-sqlite3/driver"
	sqlitevfs "github.com/ncruces/go-sqlite3/vfs"

	"github.com/ceiling-db/ceiling/internal/target"
)

// dsn builds a driver DSN for path through vfsName with the given pragmas,
// in order. Spaces are not allowed in pragma arguments here.
func dsn(path, vfsName string, pragmas ...string) string {
	var b strings.Builder
	b.WriteString("file:" + path + "?vfs=" + vfsName)
	for _, p := range pragmas {
		if strings.HasPrefix(p, "_") {
			b.WriteString("&" + p) // driver option, e.g. _txlock=immediate
			continue
		}
		b.WriteString("&_pragma=" + p)
	}
	return b.String()
}

func openDB(t testing.TB, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite3", dsn)
	if err != nil {
		t.Fatalf("open %s: %v", dsn, err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// insertRows inserts n rows, one per autocommit transaction.
func insertRows(ctx context.Context, c interface {
	ExecContext(context.Context, string, ...any) (sql.Result, error)
}, n int, tag string) error {
	for i := range n {
		if _, err := c.ExecContext(ctx, `INSERT INTO t(tag, v) VALUES (?, ?)`, tag, fmt.Sprintf("row %d payload %0100d", i, i)); err != nil {
			return fmt.Errorf("insert %d: %w", i, err)
		}
	}
	return nil
}

func entry(stats []target.FileStat, name string) (target.FileStat, bool) {
	for _, s := range stats {
		if s.Name == name {
			return s, true
		}
	}
	return target.FileStat{}, false
}

func mustEntry(t *testing.T, stats []target.FileStat, name, role string) target.FileStat {
	t.Helper()
	s, ok := entry(stats, name)
	if !ok {
		t.Fatalf("no %q entry in %+v", name, stats)
	}
	if s.Role != role {
		t.Errorf("%s: Role = %q, want %q", name, s.Role, role)
	}
	return s
}

func journalMode(t *testing.T, db *sql.DB) string {
	t.Helper()
	var mode string
	if err := db.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil {
		t.Fatalf("journal_mode: %v", err)
	}
	return mode
}

func TestWALSyncsPerCommit(t *testing.T) {
	Register()
	const n = 200
	tests := []struct {
		name             string
		synchronous      string
		minSync, maxSync int64
	}{
		// n inserts + CREATE TABLE, and one header sync when the WAL starts.
		{"full", "full", n, n + 5},
		// Only checkpoints sync; n small commits stay below the
		// autocheckpoint threshold (1000 pages).
		{"normal", "normal", 0, n/10 - 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			path := filepath.Join(t.TempDir(), "ceiling.db")
			t.Cleanup(func() { Forget(path) })
			db := openDB(t, dsn(path, Name, "busy_timeout(10000)", "journal_mode(wal)", "synchronous("+tt.synchronous+")"))
			db.SetMaxOpenConns(1)

			if got := journalMode(t, db); got != "wal" {
				t.Fatalf("journal_mode = %q, want wal (shared memory not forwarded?)", got)
			}
			if _, err := db.ExecContext(ctx, `CREATE TABLE t(id INTEGER PRIMARY KEY, tag TEXT, v TEXT)`); err != nil {
				t.Fatal(err)
			}
			before := Stats(path)
			if err := insertRows(ctx, db, n, tt.name); err != nil {
				t.Fatal(err)
			}
			after := Stats(path)

			if len(after) < 2 || after[0].Role != RoleData || after[1].Role != RoleLog {
				t.Fatalf("Stats order: %+v", after)
			}
			// The WAL index is created on first use, not by the pragma.
			if _, err := os.Stat(path + "-shm"); err != nil {
				t.Errorf("WAL index file: %v", err)
			}
			// Switching a new database to WAL commits once through a rollback
			// journal; the inserts must not touch it.
			jBefore, _ := entry(before, "ceiling.db-journal")
			if jAfter, _ := entry(after, "ceiling.db-journal"); jAfter != jBefore {
				t.Errorf("WAL-mode inserts used the rollback journal: %+v -> %+v", jBefore, jAfter)
			}
			data := mustEntry(t, after, "ceiling.db", RoleData)
			if data.Reads == 0 || data.BytesRead < 100 {
				t.Errorf("data: Reads=%d BytesRead=%d, want the header read at least", data.Reads, data.BytesRead)
			}
			if data.ReadNs <= 0 {
				t.Errorf("data: ReadNs=%d, want > 0", data.ReadNs)
			}

			walBefore, _ := entry(before, "ceiling.db-wal")
			wal := mustEntry(t, after, "ceiling.db-wal", RoleLog)
			writes := wal.Writes - walBefore.Writes
			syncs := wal.Syncs
			bytes := wal.BytesWritten - walBefore.BytesWritten
			t.Logf("synchronous=%s: %d commits -> WAL writes=%d (%.1f/commit) bytes=%d (%.0f/commit) syncs=%d (total, incl. CREATE TABLE); data reads=%d writes=%d syncs=%d",
				tt.synchronous, n, writes, float64(writes)/n, bytes, float64(bytes)/n, syncs, data.Reads, data.Writes, data.Syncs)
			if writes < n {
				t.Errorf("WAL Writes = %d, want >= %d", writes, n)
			}
			if bytes <= n*100 {
				t.Errorf("WAL BytesWritten = %d, want > %d", bytes, n*100)
			}
			if syncs < tt.minSync || syncs > tt.maxSync {
				t.Errorf("WAL Syncs = %d, want in [%d, %d]", syncs, tt.minSync, tt.maxSync)
			}
			if wal.WriteNs <= 0 || (syncs > 0 && wal.SyncNs <= 0) {
				t.Errorf("WAL timings not recorded: %+v", wal)
			}

			// A checkpoint moves the pages to the data file and syncs it.
			if _, err := db.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
				t.Fatal(err)
			}
			data = mustEntry(t, Stats(path), "ceiling.db", RoleData)
			if data.Writes == 0 || data.BytesWritten%512 != 0 || data.Syncs == 0 {
				t.Errorf("data after checkpoint: Writes=%d BytesWritten=%d Syncs=%d, want whole pages written and synced",
					data.Writes, data.BytesWritten, data.Syncs)
			}
		})
	}
}

func TestRollbackJournal(t *testing.T) {
	t.Parallel()
	Register()
	const n = 20
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ceiling.db")
	t.Cleanup(func() { Forget(path) })
	db := openDB(t, dsn(path, Name, "busy_timeout(10000)", "journal_mode(delete)", "synchronous(full)"))
	db.SetMaxOpenConns(1)
	if got := journalMode(t, db); got != "delete" {
		t.Fatalf("journal_mode = %q, want delete", got)
	}
	if _, err := db.ExecContext(ctx, `CREATE TABLE t(id INTEGER PRIMARY KEY, tag TEXT, v TEXT)`); err != nil {
		t.Fatal(err)
	}
	if err := insertRows(ctx, db, n, "journal"); err != nil {
		t.Fatal(err)
	}
	stats := Stats(path)
	if _, ok := entry(stats, "ceiling.db-wal"); ok {
		t.Errorf("rollback-journal database reports a WAL: %+v", stats)
	}
	data := mustEntry(t, stats, "ceiling.db", RoleData)
	journal := mustEntry(t, stats, "ceiling.db-journal", RoleLog)
	t.Logf("data=%+v journal=%+v", data, journal)
	if journal.Writes < n || journal.Syncs < n {
		t.Errorf("journal: Writes=%d Syncs=%d, want >= %d each", journal.Writes, journal.Syncs, n)
	}
	// Every commit writes the changed pages into the database file itself.
	if data.Writes < n || data.Syncs < n {
		t.Errorf("data: Writes=%d Syncs=%d, want >= %d each", data.Writes, data.Syncs, n)
	}
	if busy, lockNs := Locks(path); busy != 0 || lockNs <= 0 {
		t.Errorf("Locks = (%d, %d), want (0, > 0) for a single connection", busy, lockNs)
	}
}

func TestConcurrentConns(t *testing.T) {
	t.Parallel()
	Register()
	const workers, perWorker = 4, 50
	tests := []struct {
		name, mode, log string
	}{
		{"wal", "wal", "ceiling.db-wal"},
		{"delete", "delete", "ceiling.db-journal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			path := filepath.Join(t.TempDir(), "ceiling.db")
			t.Cleanup(func() { Forget(path) })
			db := openDB(t, dsn(path, Name, "busy_timeout(20000)", "journal_mode("+tt.mode+")", "synchronous(normal)", "_txlock=immediate"))
			if _, err := db.ExecContext(ctx, `CREATE TABLE t(id INTEGER PRIMARY KEY, tag TEXT, v TEXT)`); err != nil {
				t.Fatal(err)
			}

			// A reader polls the counters while the workers write.
			done := make(chan struct{})
			var polls sync.WaitGroup
			polls.Go(func() {
				for {
					select {
					case <-done:
						return
					default:
						_ = Stats(path)
						_, _ = Locks(path)
					}
				}
			})

			errs := make(chan error, workers)
			var wg sync.WaitGroup
			for w := range workers {
				wg.Go(func() {
					conn, err := db.Conn(ctx)
					if err != nil {
						errs <- err
						return
					}
					defer conn.Close()
					if err := insertRows(ctx, conn, perWorker, fmt.Sprint("w", w)); err != nil {
						errs <- fmt.Errorf("worker %d: %w", w, err)
					}
				})
			}
			wg.Wait()
			close(done)
			polls.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}

			var rows int
			if err := db.QueryRowContext(ctx, `SELECT count(*) FROM t`).Scan(&rows); err != nil {
				t.Fatal(err)
			}
			if rows != workers*perWorker {
				t.Errorf("rows = %d, want %d", rows, workers*perWorker)
			}
			stats := Stats(path)
			log := mustEntry(t, stats, tt.log, RoleLog)
			if log.Writes < workers*perWorker {
				t.Errorf("%s Writes = %d, want >= %d", tt.log, log.Writes, workers*perWorker)
			}
			busy, lockNs := Locks(path)
			t.Logf("%s: log=%+v busy=%d lockNs=%d", tt.mode, log, busy, lockNs)
			if busy < 0 || lockNs <= 0 {
				t.Errorf("Locks = (%d, %d)", busy, lockNs)
			}
		})
	}
}

func TestStatsLookup(t *testing.T) {
	t.Parallel()
	Register()
	dir := t.TempDir()
	path := filepath.Join(dir, "ceiling.db")
	t.Cleanup(func() { Forget(path) })
	db := openDB(t, dsn(path, Name, "journal_mode(wal)"))
	if _, err := db.Exec(`CREATE TABLE t(x)`); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name string
		path string
		want bool
	}{
		{"as opened", path, true},
		{"unclean spelling", dir + "/./sub/../ceiling.db", true},
		{"unknown", filepath.Join(dir, "other.db"), false},
		{"empty", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Stats(tt.path)
			if (got != nil) != tt.want {
				t.Errorf("Stats(%q) = %+v, want found=%v", tt.path, got, tt.want)
			}
			if busy, ns := Locks(tt.path); !tt.want && (busy != 0 || ns != 0) {
				t.Errorf("Locks(%q) = (%d, %d), want zeros", tt.path, busy, ns)
			}
		})
	}

	// Through a symlinked directory: SQLite resolves the link, and
	// Stats finds the record under either spelling.
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Skipf("symlink: %v", err)
	}
	if Stats(filepath.Join(link, "ceiling.db")) == nil {
		t.Errorf("Stats through a symlinked directory: nil")
	}
}

func TestForget(t *testing.T) {
	t.Parallel()
	Register()
	path := filepath.Join(t.TempDir(), "ceiling.db")
	db := openDB(t, dsn(path, Name, "journal_mode(wal)"))
	if _, err := db.Exec(`CREATE TABLE t(x)`); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if Stats(path) == nil {
		t.Fatal("no stats before Forget")
	}
	Forget(path)
	Forget(path) // idempotent
	if got := Stats(path); got != nil {
		t.Errorf("Stats after Forget = %+v, want nil", got)
	}
}

func TestRegisterConcurrent(t *testing.T) {
	t.Parallel()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(Register)
	}
	wg.Wait()
	if _, ok := sqlitevfs.Find(Name).(*meteredVFS); !ok {
		t.Fatalf("vfs.Find(%q) = %T", Name, sqlitevfs.Find(Name))
	}
}

// TestUnattributed: a temporary table spilled to disk is opened without a
// name, so it is counted outside any database.
func TestUnattributed(t *testing.T) {
	t.Parallel()
	Register()
	path := filepath.Join(t.TempDir(), "ceiling.db")
	t.Cleanup(func() { Forget(path) })
	db := openDB(t, dsn(path, Name, "journal_mode(wal)", "temp_store(file)"))
	db.SetMaxOpenConns(1)
	stmts := []string{
		`CREATE TEMP TABLE tt(v)`,
		`PRAGMA temp.cache_size = 10`,
		`WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i < 2000)
		 INSERT INTO tt SELECT printf('%0500d', i) FROM c`,
	}
	before := unattributed.other.bytesWritten.Load()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	other := Unattributed()
	if len(other) != 1 || other[0].Role != RoleOther || other[0].Name != RoleOther {
		t.Fatalf("Unattributed() = %+v, want one other entry", other)
	}
	// ~1 MB of temp table through a 10-page cache must spill to the temp
	// file; other tests add at most a few KiB here.
	if delta := other[0].BytesWritten - before; delta < 100_000 {
		t.Errorf("unattributed BytesWritten grew by %d, want the temp table spill", delta)
	}
	for _, s := range Stats(path) {
		if s.Role == RoleOther {
			t.Errorf("nameless temp file attributed to the database: %+v", s)
		}
	}
}

func TestIsBusy(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err  error
		want bool
	}{
		{nil, false},
		{sqlite3.BUSY, true},
		{sqlite3.BUSY_SNAPSHOT, true},
		{sqlite3.IOERR_LOCK, false},
		{sqlite3.LOCKED, false},
		{errors.New("busy"), false},
		{sqlitevfs.SystemError(errors.New("x"), sqlite3.BUSY), false}, // code unreadable
	}
	for _, tt := range tests {
		if got := isBusy(tt.err); got != tt.want {
			t.Errorf("isBusy(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}

// TestForwarding checks the optional interfaces against a File that has
// none of them and against the OS file.
func TestForwarding(t *testing.T) {
	t.Parallel()

	t.Run("bare", func(t *testing.T) {
		f := &file{File: bareFile{}, db: &dbStats{}, c: &counters{}}
		if f.SharedMemory() != nil || f.MemoryMapper() != nil {
			t.Error("shared memory or mapper invented for a bare file")
		}
		if got := f.LockState(); got <= sqlitevfs.LOCK_EXCLUSIVE {
			t.Errorf("LockState = %v, want unknown (> EXCLUSIVE)", got)
		}
		for name, err := range map[string]error{
			"SizeHint":    f.SizeHint(1),
			"BeginAtomic": f.BeginAtomicWrite(),
		} {
			if !errors.Is(err, sqlite3.NOTFOUND) {
				t.Errorf("%s err = %v, want NOTFOUND", name, err)
			}
		}
		if _, err := f.HasMoved(); !errors.Is(err, sqlite3.NOTFOUND) {
			t.Errorf("HasMoved err = %v, want NOTFOUND", err)
		}
		if f.Unwrap() != (bareFile{}) {
			t.Error("Unwrap")
		}
	})

	t.Run("os", func(t *testing.T) {
		v := newVFS(sqlitevfs.Find("os"))
		flags := sqlitevfs.OPEN_READWRITE | sqlitevfs.OPEN_CREATE | sqlitevfs.OPEN_DELETEONCLOSE | sqlitevfs.OPEN_TEMP_DB
		vf, _, err := v.Open("", flags)
		if err != nil {
			t.Fatal(err)
		}
		defer vf.Close()
		f := vf.(*file)
		if f.db != &unattributed || f.c != &unattributed.other {
			t.Error("nameless file not counted as unattributed")
		}
		// Private counters: the unattributed bucket is shared with
		// parallel tests.
		f.c = &counters{}
		inner := f.Unwrap()
		if _, ok := inner.(sqlitevfs.FileLockState); !ok {
			t.Fatalf("OS file %T lacks LockState", inner)
		}
		if got := f.LockState(); got != sqlitevfs.LOCK_NONE {
			t.Errorf("LockState = %v, want NONE", got)
		}
		if err := f.Lock(sqlitevfs.LOCK_SHARED); err != nil {
			t.Fatal(err)
		}
		if got := f.LockState(); got != sqlitevfs.LOCK_SHARED {
			t.Errorf("LockState after Lock = %v, want SHARED", got)
		}
		if err := f.Unlock(sqlitevfs.LOCK_NONE); err != nil {
			t.Fatal(err)
		}
		f.SetPowersafeOverwrite(false)
		if f.PowersafeOverwrite() {
			t.Error("SetPowersafeOverwrite not forwarded")
		}
		f.SetPersistWAL(true)
		if !f.PersistWAL() {
			t.Error("SetPersistWAL not forwarded")
		}
		if moved, err := f.HasMoved(); err != nil || moved {
			// An anonymous temp file has no name to compare; accept what
			// the OS VFS says, but it must be forwarded (not NOTFOUND).
			if errors.Is(err, sqlite3.NOTFOUND) {
				t.Errorf("HasMoved not forwarded: %v", err)
			}
		}
		if _, err := f.WriteAt(make([]byte, 4096), 0); err != nil {
			t.Fatal(err)
		}
		if err := f.Sync(sqlitevfs.SYNC_NORMAL); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 100)
		if _, err := f.ReadAt(buf, 0); err != nil {
			t.Fatal(err)
		}
		got := f.c.snapshot("x", RoleOther)
		if got.Reads != 1 || got.Writes != 1 || got.Syncs != 1 || got.BytesRead != 100 || got.BytesWritten != 4096 {
			t.Errorf("counters = %+v", got)
		}
	})
}

// TestForwardsOSCapabilities guards the wrapper against library upgrades:
// every optional interface the OS file implements must be implemented by the
// wrapper too (else SQLite loses the capability behind it, WAL included),
// and the wrapper may add only interfaces known to be harmless.
func TestForwardsOSCapabilities(t *testing.T) {
	t.Parallel()
	type setDB interface{ SetDB(any) } // the library's unexported filePDB
	ifaces := []struct {
		name     string
		has      func(any) bool
		mayExtra bool // wrapper may have it when the OS file does not
	}{
		{"FileUnwrap", func(f any) bool { _, ok := f.(sqlitevfs.FileUnwrap); return ok }, true},
		{"FileLockState", func(f any) bool { _, ok := f.(sqlitevfs.FileLockState); return ok }, false},
		{"FilePersistWAL", func(f any) bool { _, ok := f.(sqlitevfs.FilePersistWAL); return ok }, false},
		{"FilePowersafeOverwrite", func(f any) bool { _, ok := f.(sqlitevfs.FilePowersafeOverwrite); return ok }, false},
		{"FileChunkSize", func(f any) bool { _, ok := f.(sqlitevfs.FileChunkSize); return ok }, false},
		{"FileSizeHint", func(f any) bool { _, ok := f.(sqlitevfs.FileSizeHint); return ok }, false},
		{"FileHasMoved", func(f any) bool { _, ok := f.(sqlitevfs.FileHasMoved); return ok }, false},
		{"FileOverwrite", func(f any) bool { _, ok := f.(sqlitevfs.FileOverwrite); return ok }, false},
		{"FileSync", func(f any) bool { _, ok := f.(sqlitevfs.FileSync); return ok }, false},
		{"FileCommitPhaseTwo", func(f any) bool { _, ok := f.(sqlitevfs.FileCommitPhaseTwo); return ok }, false},
		{"FileBatchAtomicWrite", func(f any) bool { _, ok := f.(sqlitevfs.FileBatchAtomicWrite); return ok }, true},
		{"FileCheckpoint", func(f any) bool { _, ok := f.(sqlitevfs.FileCheckpoint); return ok }, false},
		{"FilePragma", func(f any) bool { _, ok := f.(sqlitevfs.FilePragma); return ok }, false},
		{"FileBusyHandler", func(f any) bool { _, ok := f.(sqlitevfs.FileBusyHandler); return ok }, false},
		{"FileSharedMemory", func(f any) bool { _, ok := f.(sqlitevfs.FileSharedMemory); return ok }, false},
		{"FileMemoryMapper", func(f any) bool { _, ok := f.(sqlitevfs.FileMemoryMapper); return ok }, false},
		{"SetDB", func(f any) bool { _, ok := f.(setDB); return ok }, false},
	}

	flags := sqlitevfs.OPEN_READWRITE | sqlitevfs.OPEN_CREATE | sqlitevfs.OPEN_DELETEONCLOSE | sqlitevfs.OPEN_TEMP_DB
	osFile, _, err := sqlitevfs.Find("os").Open("", flags)
	if err != nil {
		t.Fatal(err)
	}
	defer osFile.Close()
	wrapped := &file{File: osFile, db: &dbStats{}, c: &counters{}}

	for _, it := range ifaces {
		osHas, wrapHas := it.has(osFile), it.has(wrapped)
		switch {
		case osHas && !wrapHas:
			t.Errorf("OS file %T implements %s but the wrapper does not forward it", osFile, it.name)
		case !osHas && wrapHas && !it.mayExtra:
			t.Errorf("wrapper implements %s, which the OS file %T lacks", it.name, osFile)
		}
	}
}

// bareFile implements vfs.File and nothing else.
type bareFile struct{}

func (bareFile) Close() error                                          { return nil }
func (bareFile) ReadAt([]byte, int64) (int, error)                     { return 0, nil }
func (bareFile) WriteAt(p []byte, _ int64) (int, error)                { return len(p), nil }
func (bareFile) Truncate(int64) error                                  { return nil }
func (bareFile) Sync(sqlitevfs.SyncFlag) error                         { return nil }
func (bareFile) Size() (int64, error)                                  { return 0, nil }
func (bareFile) Lock(sqlitevfs.LockLevel) error                        { return nil }
func (bareFile) Unlock(sqlitevfs.LockLevel) error                      { return nil }
func (bareFile) CheckReservedLock() (bool, error)                      { return false, nil }
func (bareFile) SectorSize() int                                       { return 4096 }
func (bareFile) DeviceCharacteristics() sqlitevfs.DeviceCharacteristic { return 0 }
