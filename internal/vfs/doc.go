// Package vfs is ceiling's instrumenting SQLite VFS: the embedded-target
// equivalent of SQL Server's sys.dm_io_virtual_file_stats.
//
// Register installs a VFS named [Name] ("ceiling") that wraps the default
// OS VFS of github.com/ncruces/go-sqlite3 and meters every file operation.
// Select it in a DSN with the vfs URI parameter:
//
//	file:/path/to/ceiling.db?vfs=ceiling
//
// The wrapper is transparent otherwise: it forwards exactly the optional
// capabilities of the OS file (shared memory for the WAL index, lock state,
// persistent WAL, powersafe overwrite, size hints, moved-file detection,
// memory mapping, batch atomic writes), so SQLite behaves as with the plain
// "os" VFS. Like every VFS of the library, the main database file also gets
// the library's checksum wrapper on top of this one.
//
// # What is counted
//
// Counters are kept per database, keyed by the full path of its main file as
// SQLite resolved it (absolute, symlinks evaluated), and shared by every
// connection to that database. Each file SQLite opens is given a role:
//
//   - "data": the main database file (Name is its base name, "ceiling.db");
//   - "log": the WAL ("ceiling.db-wal") and the rollback journal
//     ("ceiling.db-journal"), reported as separate entries;
//   - "other": super-journals ("ceiling.db-mj…") and any other named file
//     SQLite ties to the database, aggregated under Name "other".
//
// For every file the VFS counts ReadAt, WriteAt and Sync calls, the bytes
// moved, and the wall time spent inside them (monotonic clock). Lock calls on
// any file of a database are timed, and those that return SQLITE_BUSY are
// counted; see [Locks].
//
// Limits, all imposed by the SQLite VFS API or the library's version of it:
//
//   - Temporary files and statement sub-journals that spill to disk are opened
//     by SQLite without a name, so nothing ties them to a database. They are
//     counted in a process-wide bucket reported by [Unattributed].
//   - Reads served through memory mapping (PRAGMA mmap_size > 0; the default
//     is 0) bypass ReadAt and are not counted. The library's MemoryMapper
//     has unexported methods, so it is forwarded as is and cannot be metered.
//   - In WAL mode writers are serialised by WAL-index (shared-memory) locks,
//     not by file locks. Shared memory is forwarded untouched (its methods are
//     unexported as well), so WAL write-lock waits do not show in [Locks];
//     only database-file lock waits (rollback-journal mode, checkpoints,
//     journal mode changes, recovery) do.
//   - Truncate, Size, Unlock and CheckReservedLock are forwarded unmetered.
//
// # Concurrency
//
// All functions are safe for concurrent use. The read, write, sync and lock
// paths update counters with sync/atomic only; a mutex is taken only when a
// file is opened (to find or create the database's record) and by [Stats],
// [Locks] and [Forget] to look the record up. A snapshot returned by [Stats]
// is not atomic across counters: a read racing with IO can see, for example,
// Writes incremented before BytesWritten. Take deltas between snapshots, as
// with sys.dm_io_virtual_file_stats.
//
// [Forget] drops a database's record. Connections still open keep updating
// the dropped record, which no longer shows; a file opened afterwards starts
// a fresh one. Call Forget after the last connection closes.
//
// # Errors
//
// Errors from the wrapped VFS are returned unchanged, never wrapped: SQLite
// derives its result codes (SQLITE_BUSY, SQLITE_IOERR_*, …) from the concrete
// error value, and wrapping it would turn a BUSY into a generic I/O error.
package vfs
