package vfs

import (
	"reflect"
	"time"

	"github.com/ncruces/go-sqlite3/util/vfsutil"
	sqlitevfs "github.com/ncruces/go-sqlite3/vfs"
)

// file meters one open file and forwards everything else to the wrapped one.
//
// The library finds optional file capabilities by type assertion on the
// File it was handed (vfs.FileSharedMemory, vfs.FileLockState, …), so a
// wrapper hides whatever it does not implement, and advertises whatever it
// does. file implements exactly the optional interfaces the OS file has
// (TestForwardsOSCapabilities keeps that true across library upgrades) and
// forwards each through vfsutil, which falls back to what "not implemented"
// means to SQLite if the wrapped file lacks it. Implementing more would not
// be free: SQLite issues SQLITE_FCNTL_PRAGMA on every transaction, and a
// FilePragma wrapper costs a string copy each time only to answer NOTFOUND.
//
// The wrapped File is an interface embedded as a field, so no method of the
// concrete OS file leaks through other than those of vfs.File and the ones
// below.
type file struct {
	sqlitevfs.File
	db   *dbStats
	c    *counters
	role string // RoleData, RoleLog or RoleOther, for the emulated limits
}

func newFile(f sqlitevfs.File, db *dbStats, c *counters) *file {
	c.opened.Store(true)
	role := RoleOther
	switch c {
	case &db.data:
		role = RoleData
	case &db.wal, &db.journal:
		role = RoleLog
	}
	return &file{File: f, db: db, c: c, role: role}
}

// emulate holds an operation (opRead, opWrite or opSync) of n bytes for
// the database's emulated device limits, if any (Govern).
func (f *file) emulate(op byte, n int) {
	if g := f.db.gov.Load(); g != nil {
		f.c.emulatedNs.Add(int64(g.wait(f.role, op, n)))
		if d := g.latency(f.role, op); d > 0 {
			time.Sleep(d) // the device's time: in the operation's, not the wait
		}
	}
}

var (
	_ sqlitevfs.FileUnwrap             = (*file)(nil)
	_ sqlitevfs.FileSharedMemory       = (*file)(nil)
	_ sqlitevfs.FileMemoryMapper       = (*file)(nil)
	_ sqlitevfs.FileLockState          = (*file)(nil)
	_ sqlitevfs.FilePersistWAL         = (*file)(nil)
	_ sqlitevfs.FilePowersafeOverwrite = (*file)(nil)
	_ sqlitevfs.FileSizeHint           = (*file)(nil)
	_ sqlitevfs.FileHasMoved           = (*file)(nil)
	_ sqlitevfs.FileBatchAtomicWrite   = (*file)(nil)
)

// ReadAt implements vfs.File, counting the call and the bytes read.
func (f *file) ReadAt(p []byte, off int64) (int, error) {
	start := time.Now()
	f.emulate(opRead, len(p))
	n, err := f.File.ReadAt(p, off)
	f.c.readNs.Add(int64(time.Since(start)))
	f.c.reads.Add(1)
	f.c.bytesRead.Add(int64(n))
	return n, err
}

// WriteAt implements vfs.File, counting the call and the bytes written.
func (f *file) WriteAt(p []byte, off int64) (int, error) {
	start := time.Now()
	f.emulate(opWrite, len(p))
	n, err := f.File.WriteAt(p, off)
	f.c.writeNs.Add(int64(time.Since(start)))
	f.c.writes.Add(1)
	f.c.bytesWritten.Add(int64(n))
	return n, err
}

// Sync implements vfs.File, counting the call.
func (f *file) Sync(flags sqlitevfs.SyncFlag) error {
	start := time.Now()
	f.emulate(opSync, 0)
	err := f.File.Sync(flags)
	f.c.syncNs.Add(int64(time.Since(start)))
	f.c.syncs.Add(1)
	return err
}

// Lock implements vfs.File, timing the call and counting SQLITE_BUSY.
func (f *file) Lock(lock sqlitevfs.LockLevel) error {
	start := time.Now()
	err := f.File.Lock(lock)
	f.db.lockNs.Add(int64(time.Since(start)))
	if err != nil && isBusy(err) {
		f.db.busy.Add(1)
	}
	return err
}

// isBusy reports whether a VFS error carries the SQLITE_BUSY primary result
// code (SQLITE_BUSY, SQLITE_BUSY_SNAPSHOT, …). The OS VFS returns its
// unexported uint32 result-code type; sqlite3.ErrorCode (uint8) and
// sqlite3.ExtendedErrorCode (uint16) are accepted too. This mirrors how the
// library itself turns errors into result codes.
func isBusy(err error) bool {
	const sqliteBusy = 5
	switch v := reflect.ValueOf(err); v.Kind() {
	case reflect.Uint8, reflect.Uint16, reflect.Uint32:
		return v.Uint()&0xff == sqliteBusy
	}
	return false
}

// Unwrap implements vfs.FileUnwrap.
func (f *file) Unwrap() sqlitevfs.File { return f.File }

// SharedMemory implements vfs.FileSharedMemory. This is what makes WAL mode
// work: without it the library hands SQLite io_methods without xShm*, and
// SQLite silently refuses journal_mode=WAL (outside exclusive locking mode).
// The wrapped file's instance is returned as is, so it is the same for the
// life of the file, as the library requires.
func (f *file) SharedMemory() sqlitevfs.SharedMemory {
	return vfsutil.WrapSharedMemory(f.File)
}

// MemoryMapper implements vfs.FileMemoryMapper. Reads through the mapping
// (only with PRAGMA mmap_size > 0) are not metered.
func (f *file) MemoryMapper() sqlitevfs.MemoryMapper {
	return vfsutil.WrapMemoryMapper(f.File)
}

// LockState implements vfs.FileLockState.
func (f *file) LockState() sqlitevfs.LockLevel { return vfsutil.WrapLockState(f.File) }

// PersistWAL implements vfs.FilePersistWAL.
func (f *file) PersistWAL() bool { return vfsutil.WrapPersistWAL(f.File) }

// SetPersistWAL implements vfs.FilePersistWAL.
func (f *file) SetPersistWAL(keep bool) { vfsutil.WrapSetPersistWAL(f.File, keep) }

// PowersafeOverwrite implements vfs.FilePowersafeOverwrite.
func (f *file) PowersafeOverwrite() bool { return vfsutil.WrapPowersafeOverwrite(f.File) }

// SetPowersafeOverwrite implements vfs.FilePowersafeOverwrite.
func (f *file) SetPowersafeOverwrite(psow bool) { vfsutil.WrapSetPowersafeOverwrite(f.File, psow) }

// SizeHint implements vfs.FileSizeHint.
func (f *file) SizeHint(size int64) error { return vfsutil.WrapSizeHint(f.File, size) }

// HasMoved implements vfs.FileHasMoved.
func (f *file) HasMoved() (bool, error) { return vfsutil.WrapHasMoved(f.File) }

// BeginAtomicWrite implements vfs.FileBatchAtomicWrite (F2FS atomic writes).
// The OS file has it on linux/amd64, arm64 and riscv64; elsewhere it answers
// NOTFOUND, and SQLite only uses it when DeviceCharacteristics reports
// IOCAP_BATCH_ATOMIC, which is forwarded unchanged.
func (f *file) BeginAtomicWrite() error { return vfsutil.WrapBeginAtomicWrite(f.File) }

// CommitAtomicWrite implements vfs.FileBatchAtomicWrite.
func (f *file) CommitAtomicWrite() error { return vfsutil.WrapCommitAtomicWrite(f.File) }

// RollbackAtomicWrite implements vfs.FileBatchAtomicWrite.
func (f *file) RollbackAtomicWrite() error { return vfsutil.WrapRollbackAtomicWrite(f.File) }
