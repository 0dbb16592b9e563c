package sqlite

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ceiling-db/ceiling/internal/target"
)

// lockPath is the lock file of the database at path: in the temporary
// directory, named after the path, so that nothing is written next to
// the user's database. Two ceilings on one host meet there; a database on
// a network file system used from two hosts is not covered.
func lockPath(path string) string {
	sum := sha256.Sum256([]byte(path))
	return filepath.Join(os.TempDir(), "ceiling-sqlite-"+hex.EncodeToString(sum[:8])+".lock")
}

// LockNamespace implements target.Exclusive with an flock on the
// database's lock file, held until Close (or the process ends), which
// removes the file. It is best effort: a lock file this user may not open
// (another user's) is passed over.
func (t *Target) LockNamespace(context.Context) error { return t.lockNamespace(false) }

// LockNamespaceShared implements target.ShardLocker: a shared flock on
// the same file, which the shards of one run hold together; the file is
// left in place when they let go (another shard may still hold it).
func (t *Target) LockNamespaceShared(context.Context) error { return t.lockNamespace(true) }

func (t *Target) lockNamespace(shared bool) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.lock != nil {
		return nil
	}
	path := lockPath(t.path)
	for attempt := 0; attempt < 3; attempt++ {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return nil
		}
		busy, err := tryLock(f, shared)
		if busy {
			holder := ""
			if b, rerr := os.ReadFile(path); rerr == nil {
				if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); perr == nil && pid > 0 {
					holder = "process " + strconv.Itoa(pid) + " on this host"
				}
			}
			f.Close()
			return target.NamespaceBusy(holder)
		}
		if err != nil {
			f.Close()
			return nil
		}
		// The holder before us removes the file as it lets go: a lock on
		// a file no longer at the path guards nothing, so take the one
		// that is there now.
		if fi, ferr := f.Stat(); ferr != nil {
			f.Close()
			return nil
		} else if pi, perr := os.Stat(path); perr != nil || !os.SameFile(fi, pi) {
			f.Close()
			continue
		}
		if !shared {
			_ = f.Truncate(0)
			_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
		}
		t.lock, t.lockShared = f, shared
		return nil
	}
	return nil
}

// unlock releases the lock of LockNamespace and removes its file (while
// still holding it: see LockNamespace).
func (t *Target) unlock() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.lock != nil {
		if !t.lockShared {
			_ = os.Remove(t.lock.Name())
		}
		_ = t.lock.Close()
		t.lock = nil
	}
}

var (
	_ target.Exclusive   = (*Target)(nil)
	_ target.ShardLocker = (*Target)(nil)
)
