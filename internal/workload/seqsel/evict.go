package seqsel

import (
	"context"
	"fmt"
	"os"

	"github.com/ceiling-db/ceiling/internal/target"
)

// evict makes a best effort to empty the caches between the engine and the
// disk before the run, and says what it did and could not do, per cache.
// It never changes a server setting.
func evict(ctx context.Context, t target.Target) map[string]string {
	info := t.Info()
	out := map[string]string{}
	switch info.Engine {
	case "sqlite":
		out["engine_cache"] = "empty: every worker opens a new connection after the load, and SQLite's page cache belongs to the connection"
		p, ok := t.(interface{ Path() string })
		if !ok {
			out["os_cache"] = "not evicted: the database file's path is unknown"
			break
		}
		out["os_cache"] = fadviseDontNeed(p.Path(), p.Path()+"-wal")
	case "postgres":
		out["engine_cache"] = "not evicted: shared_buffers cannot be emptied without restarting the server (DISCARD does not evict; a table larger than shared_buffers is read from outside it)"
		out["os_cache"] = dropOSCache(info)
	case "mysql":
		out["engine_cache"] = "not evicted: the InnoDB buffer pool cannot be emptied online without shrinking the global innodb_buffer_pool_size, which ceiling does not change (use a table larger than the buffer pool)"
		if m := flushMethod(ctx, t); m == "O_DIRECT" || m == "O_DIRECT_NO_FSYNC" {
			out["os_cache"] = "not involved: innodb_flush_method=" + m + " reads data files around the OS cache"
		} else {
			out["os_cache"] = dropOSCache(info)
		}
	default:
		out["engine_cache"] = "not evicted: no method for engine " + info.Engine
		out["os_cache"] = "not evicted"
	}
	return out
}

// fadviseDontNeed writes back and drops the OS cache pages of the given
// files (those that exist), the SQLite equivalent of a cold start.
func fadviseDontNeed(paths ...string) string {
	var done []string
	for _, p := range paths {
		f, err := os.Open(p)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return fmt.Sprintf("not evicted: %v", err)
		}
		// Dirty pages are not dropped: write them back first.
		err = f.Sync()
		if err == nil {
			err = dropFilePages(f)
		}
		f.Close()
		if err != nil {
			return fmt.Sprintf("not evicted: posix_fadvise(DONTNEED) on %s: %v", p, err)
		}
		done = append(done, p)
	}
	if len(done) == 0 {
		return "not evicted: no database file found"
	}
	return fmt.Sprintf("dropped with fsync + posix_fadvise(DONTNEED) on %v (the kernel may keep pages it cannot drop)", done)
}

// dropCaches is the host-wide page cache control (Linux).
const dropCaches = "/proc/sys/vm/drop_caches"

// dropOSCache drops the host's page cache when the server is on this host
// and ceiling runs as root; otherwise it says why it could not.
func dropOSCache(info target.Info) string {
	if !info.Local {
		return "not evicted: the server is not on this host"
	}
	if os.Geteuid() != 0 {
		return "not evicted: dropping the OS page cache (" + dropCaches + ") needs root"
	}
	syncAll()
	if err := os.WriteFile(dropCaches, []byte("1"), 0); err != nil {
		return fmt.Sprintf("not evicted: writing %s failed: %v", dropCaches, err)
	}
	return "dropped host-wide (sync, then 1 > " + dropCaches + ", as root: the whole host's page cache, not only this server's)"
}

// flushMethod reads innodb_flush_method, or "" when it cannot.
func flushMethod(ctx context.Context, t target.Target) string {
	c, err := t.Connect(ctx)
	if err != nil {
		return ""
	}
	defer c.Close()
	rows, err := c.Query(ctx, "SELECT @@innodb_flush_method")
	if err != nil {
		return ""
	}
	defer rows.Close()
	var m string
	if rows.Next() && rows.Scan(&m) == nil {
		return m
	}
	return ""
}
