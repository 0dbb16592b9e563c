package vfs

import (
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	sqlitevfs "github.com/ncruces/go-sqlite3/vfs"

	"github.com/ceiling-db/ceiling/internal/target"
)

// File roles, as in target.FileStat.Role.
const (
	RoleData  = "data"
	RoleLog   = "log"
	RoleOther = "other"
)

// counters is the cumulative IO of one file role of one database.
type counters struct {
	opened       atomic.Bool
	reads        atomic.Int64
	writes       atomic.Int64
	bytesRead    atomic.Int64
	bytesWritten atomic.Int64
	syncs        atomic.Int64
	readNs       atomic.Int64
	writeNs      atomic.Int64
	syncNs       atomic.Int64
	emulatedNs   atomic.Int64 // time spent waiting for the emulated device (Govern)
}

func (c *counters) snapshot(name, role string) target.FileStat {
	return target.FileStat{
		Name:         name,
		Role:         role,
		Reads:        c.reads.Load(),
		Writes:       c.writes.Load(),
		BytesRead:    c.bytesRead.Load(),
		BytesWritten: c.bytesWritten.Load(),
		Syncs:        c.syncs.Load(),
		ReadNs:       c.readNs.Load(),
		WriteNs:      c.writeNs.Load(),
		SyncNs:       c.syncNs.Load(),
		EmulatedNs:   c.emulatedNs.Load(),
	}
}

// dbStats is the record of one database. Its fields are immutable after
// creation except the atomics.
type dbStats struct {
	base    string // base name of the main file, e.g. "ceiling.db"
	data    counters
	wal     counters
	journal counters
	other   counters

	busy   atomic.Int64 // Lock calls that returned SQLITE_BUSY
	lockNs atomic.Int64 // nanoseconds spent inside Lock calls

	gov atomic.Pointer[governor] // emulated device limits (Govern), or nil
}

func (d *dbStats) files() []target.FileStat {
	var out []target.FileStat
	for _, e := range []struct {
		c          *counters
		name, role string
	}{
		{&d.data, d.base, RoleData},
		{&d.wal, d.base + "-wal", RoleLog},
		{&d.journal, d.base + "-journal", RoleLog},
		{&d.other, RoleOther, RoleOther},
	} {
		if e.c.opened.Load() {
			out = append(out, e.c.snapshot(e.name, e.role))
		}
	}
	return out
}

var (
	registryMu sync.Mutex
	// +checklocks:registryMu
	registry = map[string]*dbStats{}

	// unattributed collects files SQLite opens without a name (temporary
	// databases, sub-journals, sorter spills): nothing ties them to a
	// database. Only its other counters and lock counters are used.
	unattributed = dbStats{base: RoleOther}
)

// record returns the record of the database whose main file is at the full
// path key, creating it if needed. key must be the path as SQLite resolved it
// (through FullPathname), so that all files of a database share one record.
func record(key string) *dbStats {
	registryMu.Lock()
	defer registryMu.Unlock()
	d := registry[key]
	if d == nil {
		d = &dbStats{base: filepath.Base(key)}
		registry[key] = d
	}
	return d
}

// lookup finds the record for a user-supplied path: first its absolute,
// cleaned spelling, then the spelling SQLite itself uses (symlinks
// evaluated), so that both a path as opened and its resolved form match.
func lookup(path string) (string, *dbStats) {
	if path == "" {
		return "", nil
	}
	var keys []string
	if abs, err := filepath.Abs(path); err == nil {
		keys = append(keys, abs)
	}
	if base := sqlitevfs.Find("os"); base != nil {
		// FullPathname may return a non-nil "error" (SQLITE_OK_SYMLINK)
		// together with a valid path; the path is what matters here.
		if full, _ := base.FullPathname(path); full != "" {
			keys = append(keys, full)
		}
	}
	registryMu.Lock()
	defer registryMu.Unlock()
	for _, k := range keys {
		if d := registry[k]; d != nil {
			return k, d
		}
	}
	return "", nil
}

// Stats returns the cumulative IO statistics of the database whose main file
// is at path (as opened, relative or absolute; it is made absolute and
// cleaned, and symlinks are resolved as SQLite does, so both spellings match).
//
// There is one entry per file role that has been opened, in a stable order:
// the main file (Role "data"), then the WAL and the rollback journal (Role
// "log", Names "<db>-wal" and "<db>-journal"), then everything else
// aggregated as Role "other", Name "other". Stats returns nil for a database
// this VFS has not opened (or has forgotten).
func Stats(path string) []target.FileStat {
	_, d := lookup(path)
	if d == nil {
		return nil
	}
	return d.files()
}

// Locks returns lock statistics of the database whose main file is at path:
// how many Lock calls on its files returned SQLITE_BUSY (every retry of the
// busy handler counts), and the total nanoseconds spent inside Lock calls,
// successful or not. Both are zero for an unknown database.
//
// In WAL mode writers wait on WAL-index locks, which this VFS cannot see;
// there these figures cover database-file locks only.
func Locks(path string) (busy int64, lockNs int64) {
	_, d := lookup(path)
	if d == nil {
		return 0, 0
	}
	return d.busy.Load(), d.lockNs.Load()
}

// Forget drops the statistics of the database whose main file is at path.
// Use it when a target closes, after its last connection is closed.
func Forget(path string) {
	key, d := lookup(path)
	if d == nil {
		return
	}
	registryMu.Lock()
	defer registryMu.Unlock()
	if registry[key] == d {
		delete(registry, key)
	}
}

// Unattributed returns the cumulative IO of files SQLite opened through this
// VFS without a name (temporary databases and indices, statement
// sub-journals, sorter spills), which cannot be tied to a database. It is
// process-wide and never forgotten: take deltas. Nil until such a file has
// been opened.
func Unattributed() []target.FileStat {
	return unattributed.files()
}

// dbPathOf returns the main database path a WAL, journal or super-journal
// belongs to. It prefers SQLite's own answer (sqlite3_filename_database)
// and falls back to stripping the well-known suffix.
func dbPathOf(name *sqlitevfs.Filename, flags sqlitevfs.OpenFlag) string {
	if flags&(sqlitevfs.OPEN_WAL|sqlitevfs.OPEN_MAIN_JOURNAL) != 0 {
		if db := name.Database(); db != "" {
			return db
		}
	}
	return stripSuffix(name.String(), flags)
}

func stripSuffix(path string, flags sqlitevfs.OpenFlag) string {
	switch {
	case path == "":
		return ""
	case flags&sqlitevfs.OPEN_WAL != 0:
		return strings.TrimSuffix(path, "-wal")
	case flags&sqlitevfs.OPEN_MAIN_JOURNAL != 0:
		return strings.TrimSuffix(path, "-journal")
	case flags&sqlitevfs.OPEN_SUPER_JOURNAL != 0:
		// SQLite names super-journals "<main db>-mjXXXXXXXXX"
		// (vdbeCommit: "-mj%06X9%02X").
		if i := strings.LastIndex(path, "-mj"); i > 0 {
			return path[:i]
		}
	}
	return ""
}

// attribute finds the record and the counters a newly opened file reports to.
func attribute(name *sqlitevfs.Filename, flags sqlitevfs.OpenFlag) (*dbStats, *counters) {
	switch path := name.String(); {
	case path == "":
		return &unattributed, &unattributed.other
	case flags&sqlitevfs.OPEN_MAIN_DB != 0:
		d := record(path)
		return d, &d.data
	case flags&sqlitevfs.OPEN_WAL != 0:
		if db := dbPathOf(name, flags); db != "" {
			d := record(db)
			return d, &d.wal
		}
	case flags&sqlitevfs.OPEN_MAIN_JOURNAL != 0:
		if db := dbPathOf(name, flags); db != "" {
			d := record(db)
			return d, &d.journal
		}
	case flags&sqlitevfs.OPEN_SUPER_JOURNAL != 0:
		if db := dbPathOf(name, flags); db != "" {
			d := record(db)
			return d, &d.other
		}
	}
	return &unattributed, &unattributed.other
}

// attributeName is attribute for the string-named Open entry point, which
// SQLite itself does not use (it calls OpenFilename); no Filename API there.
func attributeName(path string, flags sqlitevfs.OpenFlag) (*dbStats, *counters) {
	switch {
	case path == "":
		return &unattributed, &unattributed.other
	case flags&sqlitevfs.OPEN_MAIN_DB != 0:
		d := record(path)
		return d, &d.data
	}
	if db := stripSuffix(path, flags); db != "" {
		d := record(db)
		switch {
		case flags&sqlitevfs.OPEN_WAL != 0:
			return d, &d.wal
		case flags&sqlitevfs.OPEN_MAIN_JOURNAL != 0:
			return d, &d.journal
		}
		return d, &d.other
	}
	return &unattributed, &unattributed.other
}
