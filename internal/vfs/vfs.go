package vfs

import (
	"sync"

	"github.com/ncruces/go-sqlite3/util/vfsutil"
	sqlitevfs "github.com/ncruces/go-sqlite3/vfs"
)

// Name is the VFS name to use in a DSN: file:/path/db?vfs=ceiling
const Name = "ceiling"

var registerMu sync.Mutex

// Register registers the VFS. It is safe to call many times and
// concurrently; it (re)registers only if no ceiling VFS is registered under
// Name, so it also recovers from a vfs.Unregister(Name).
func Register() {
	registerMu.Lock()
	defer registerMu.Unlock()
	if _, ok := sqlitevfs.Find(Name).(*meteredVFS); ok {
		return
	}
	sqlitevfs.Register(Name, newVFS(sqlitevfs.Find("os")))
}

// meteredVFS wraps another VFS and meters the files it opens.
type meteredVFS struct {
	base sqlitevfs.VFS
}

func newVFS(base sqlitevfs.VFS) *meteredVFS {
	return &meteredVFS{base: base}
}

var _ sqlitevfs.VFSFilename = (*meteredVFS)(nil)

// Open implements vfs.VFS. SQLite calls OpenFilename instead; Open exists
// for callers that only have a name.
func (v *meteredVFS) Open(name string, flags sqlitevfs.OpenFlag) (sqlitevfs.File, sqlitevfs.OpenFlag, error) {
	f, flags, err := vfsutil.WrapOpen(v.base, name, flags)
	if err != nil {
		// Unwrapped on purpose: SQLite reads the result code off the
		// concrete error value.
		return nil, flags, err
	}
	db, c := attributeName(name, flags)
	return newFile(f, db, c), flags, nil
}

// OpenFilename implements vfs.VFSFilename.
func (v *meteredVFS) OpenFilename(name *sqlitevfs.Filename, flags sqlitevfs.OpenFlag) (sqlitevfs.File, sqlitevfs.OpenFlag, error) {
	f, flags, err := vfsutil.WrapOpenFilename(v.base, name, flags)
	if err != nil {
		return nil, flags, err // unwrapped: see Open
	}
	db, c := attribute(name, flags)
	return newFile(f, db, c), flags, nil
}

// Delete implements vfs.VFS.
func (v *meteredVFS) Delete(name string, syncDir bool) error {
	return v.base.Delete(name, syncDir)
}

// Access implements vfs.VFS.
func (v *meteredVFS) Access(name string, flags sqlitevfs.AccessFlag) (bool, error) {
	return v.base.Access(name, flags)
}

// FullPathname implements vfs.VFS. The base may return SQLITE_OK_SYMLINK as
// an "error" alongside a valid path; it is passed through for SQLite.
func (v *meteredVFS) FullPathname(name string) (string, error) {
	return v.base.FullPathname(name)
}
