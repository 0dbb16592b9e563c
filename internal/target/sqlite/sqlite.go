// Package sqlite is ceiling's embedded target: a SQLite database file opened
// through ceiling's instrumenting VFS (internal/vfs), in WAL mode, with one
// connection per worker and a busy timeout. The VFS provides the per-file IO
// evidence (reads, writes, syncs and their latency for the data file and the
// WAL) that a server would give through its statistics views.
package sqlite

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ncruces/go-sqlite3"

	"github.com/ceiling-db/ceiling/internal/metrics"
	"github.com/ceiling-db/ceiling/internal/target"
	"github.com/ceiling-db/ceiling/internal/vfs"
)

// BusyTimeout is how long a connection waits for a lock before SQLITE_BUSY
// (busyWait).
const BusyTimeout = 10 * time.Second

// ParseDSN returns the file path of a sqlite: DSN ("sqlite:PATH" or
// "sqlite://PATH").
func ParseDSN(dsn string) (string, error) {
	rest, ok := strings.CutPrefix(dsn, "sqlite:")
	if !ok {
		return "", fmt.Errorf("not a sqlite DSN: %q (want sqlite:PATH)", dsn)
	}
	rest = strings.TrimPrefix(rest, "//")
	if i := strings.IndexByte(rest, '?'); i >= 0 {
		return "", fmt.Errorf("sqlite DSN %q: options after '?' are not supported", dsn)
	}
	if rest == "" {
		return "", fmt.Errorf("sqlite DSN %q has no file path (want sqlite:PATH, e.g. sqlite:ceiling.db)", dsn)
	}
	if rest == ":memory:" || strings.HasPrefix(rest, "file:") {
		// SQLite would take these as a private in-memory database per
		// connection or a URI; ceiling would make a file of that name.
		return "", fmt.Errorf("sqlite DSN %q: in-memory and file: URI databases are not supported (each worker has its own connection, and ceiling measures the database's files); give a path, e.g. sqlite:/dev/shm/ceiling.db for a database held in RAM", dsn)
	}
	return rest, nil
}

// Target is an open SQLite database.
type Target struct {
	path    string // absolute
	dsn     string
	version string
	info    target.Info
	sync    string // PRAGMA synchronous value applied per connection, "" = untouched
	created bool   // Open made the file: Close removes it if it is left empty (removeIfEmpty)

	mu         sync.Mutex
	schema     *schema
	lock       *os.File // LockNamespace's lock file, held until Close
	lockShared bool     // the lock is a shard's, shared (LockNamespaceShared)

	// busyNs is the time the target's connections waited for a lock held
	// by another connection (busyWait): SQLite's single write lock above
	// all, a WAL-index lock the VFS cannot see.
	busyNs atomic.Int64
}

var _ target.Target = (*Target)(nil)
var _ target.Sampler = (*Target)(nil)

// appID is the application_id ceiling writes into the database files it
// creates ("CEIL"): a file with it is ceiling's to remove when empty.
const appID = 0x4345494c

// Open opens (creating if needed) the database file of a sqlite: DSN.
func Open(ctx context.Context, opts target.Options) (*Target, error) {
	p, err := ParseDSN(opts.DSN)
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return nil, fmt.Errorf("sqlite: path %q: %w", p, err)
	}
	dir := filepath.Dir(abs)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("%w: sqlite: directory %s does not exist", target.ErrBadDSN, dir)
	}
	if err := checkWritable(dir); err != nil {
		return nil, fmt.Errorf("%w: sqlite: cannot write in %s: %v", target.ErrBadDSN, dir, err)
	}
	vfs.Register()
	t := &Target{path: abs, dsn: opts.DSN}
	_, statErr := os.Stat(abs)
	created := errors.Is(statErr, fs.ErrNotExist)
	t.created = created
	if created && opts.MustExist {
		return nil, fmt.Errorf("sqlite: %s: %w (the file does not exist)", abs, target.ErrNoDatabase)
	}
	c, err := t.open(ctx)
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", abs, err)
	}
	defer c.Close()
	if created {
		// Mark the file as ceiling's: cleanup removes it once it holds
		// nothing (Schema.DropAll).
		if _, err := c.Exec(ctx, fmt.Sprintf("PRAGMA application_id = %d", appID)); err != nil {
			return nil, fmt.Errorf("sqlite: mark %s: %w", abs, err)
		}
	}
	var mode string
	if err := c.queryRow(ctx, "PRAGMA journal_mode=WAL", &mode); err != nil {
		return nil, fmt.Errorf("sqlite: %s is not a usable database: %w", abs, err)
	}
	if !strings.EqualFold(mode, "wal") {
		return nil, fmt.Errorf("sqlite: could not switch %s to WAL mode (got %q)", abs, mode)
	}
	// The default synchronous level of a connection to a WAL database can
	// differ from the one in force while switching modes: read it from a
	// fresh connection, as a worker will see it.
	c2, err := t.open(ctx)
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", abs, err)
	}
	var before int64
	err = c2.queryRow(ctx, "PRAGMA synchronous", &before)
	c2.Close()
	if err != nil {
		return nil, fmt.Errorf("sqlite: read synchronous: %w", err)
	}
	if err := c.queryRow(ctx, "SELECT sqlite_version()", &t.version); err != nil {
		return nil, fmt.Errorf("sqlite: version: %w", err)
	}
	// What sets how often a commit checkpoints the WAL: a connection's
	// threshold (pages; the workers' connections keep the default too)
	// and the database's page size.
	var pageSize, autoCkpt int64
	if err := c.queryRow(ctx, "PRAGMA wal_autocheckpoint", &autoCkpt); err != nil {
		return nil, fmt.Errorf("sqlite: read wal_autocheckpoint: %w", err)
	}
	if err := c.queryRow(ctx, "PRAGMA page_size", &pageSize); err != nil {
		return nil, fmt.Errorf("sqlite: read page_size: %w", err)
	}
	d := target.DurabilityInfo{Mode: opts.Durability, Setting: "synchronous", Scope: "connection",
		Before: syncName(before), During: syncName(before), After: syncName(before)}
	switch opts.Durability {
	case target.DurabilityFull:
		t.sync, d.During = "FULL", "FULL"
	case target.DurabilityRelaxed:
		t.sync, d.During = "NORMAL", "NORMAL"
	case target.DurabilityServer, "":
		d.Mode = target.DurabilityServer
	default:
		return nil, fmt.Errorf("sqlite: unknown durability %q", opts.Durability)
	}
	t.info = target.Info{
		Engine: "sqlite", Version: t.version, DSN: "sqlite:" + abs, Local: true, Durability: d,
		Settings: map[string]string{"journal_mode": "wal", "busy_timeout_ms": fmt.Sprint(BusyTimeout.Milliseconds()), "vfs": vfs.Name,
			"page_size": fmt.Sprint(pageSize), "wal_autocheckpoint": fmt.Sprint(autoCkpt),
			"missing_evidence": "commits (SQLite keeps no commit counter), server CPU (the engine runs inside ceiling: its CPU is the load generator's)"},
		LogDir: filepath.Dir(abs),
	}
	t.info.LogDevice = target.FindLogDevice(t.info.LogDir)
	t.info.DataOnLogDevice = target.DataOnLogDevice(t.info.LogDir, t.info.LogDevice) // the WAL sits beside the database
	t.schema = &schema{t: t}
	return t, nil
}

func checkWritable(dir string) error {
	f, err := os.CreateTemp(dir, ".ceiling-probe-*")
	if err != nil {
		return errors.Unwrap(err)
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}

func syncName(v int64) string {
	switch v {
	case 0:
		return "OFF"
	case 1:
		return "NORMAL"
	case 2:
		return "FULL"
	case 3:
		return "EXTRA"
	}
	return fmt.Sprint(v)
}

func (t *Target) open(ctx context.Context) (*conn, error) {
	u := url.URL{Scheme: "file", Path: t.path, RawQuery: "vfs=" + vfs.Name}
	sc, err := sqlite3.OpenFlags(u.String(), sqlite3.OPEN_READWRITE|sqlite3.OPEN_CREATE|sqlite3.OPEN_URI|sqlite3.OPEN_NOMUTEX)
	if err != nil {
		return nil, err
	}
	bw := &busyWait{total: &t.busyNs}
	if err := sc.BusyHandler(bw.handle); err != nil {
		sc.Close()
		return nil, err
	}
	return &conn{c: sc, stmts: map[string]*sqlite3.Stmt{}}, nil
}

// Info implements target.Target.
func (t *Target) Info() target.Info { return t.info }

var _ target.Emulator = (*Target)(nil)

// Emulate implements target.Emulator through the VFS (vfs.Govern).
func (t *Target) Emulate(e *target.Emulation) {
	if e == nil {
		vfs.Govern(t.path, vfs.Limits{})
		return
	}
	t.info.Emulation = e
	val := func(v *float64) float64 { // a limit not given is 0: none
		if v == nil {
			return 0
		}
		return *v
	}
	const mib = 1 << 20
	ms := func(v *float64) time.Duration { return time.Duration(val(v) * float64(time.Millisecond)) }
	vfs.Govern(t.path, vfs.Limits{LogBytesPerSec: val(e.LogMBPerSec) * mib, LogSyncsPerSec: val(e.LogSyncsPerSec),
		DataIOPS: val(e.DataIOPS), DataBytesPerSec: val(e.DataMBPerSec) * mib,
		LogSyncLatency: ms(e.LogLatencyMs), DataReadLatency: ms(e.DataLatencyMs)})
}

// Dialect implements target.Target.
func (t *Target) Dialect() target.Dialect {
	return target.Dialect{Engine: "sqlite", Prefix: "ceiling_"}
}

// Path is the database file's absolute path.
func (t *Target) Path() string { return t.path }

// Connect implements target.Target.
func (t *Target) Connect(ctx context.Context) (target.Conn, error) {
	c, err := t.open(ctx)
	if err != nil {
		return nil, fmt.Errorf("sqlite: connect: %w", err)
	}
	if t.sync != "" {
		if err := c.c.Exec("PRAGMA synchronous=" + t.sync); err != nil {
			c.Close()
			return nil, fmt.Errorf("sqlite: set synchronous: %w", err)
		}
	}
	return c, nil
}

// Classify implements target.Target.
func (t *Target) Classify(err error) metrics.ErrClass { return Classify(err) }

// Classify maps a SQLite error to an error class.
func Classify(err error) metrics.ErrClass {
	switch {
	case err == nil:
		return metrics.ErrOther
	case errors.Is(err, sqlite3.BUSY), errors.Is(err, sqlite3.LOCKED):
		return metrics.ErrLockTimeout
	case errors.Is(err, sqlite3.CONSTRAINT):
		return metrics.ErrConstraint
	case errors.Is(err, sqlite3.INTERRUPT), errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return metrics.ErrTimeout
	}
	return metrics.ErrOther
}

// Schema implements target.Target.
func (t *Target) Schema() target.Schema { return t.schema }

// Sample implements target.Sampler from the VFS counters.
func (t *Target) Sample(context.Context) (target.Sample, error) {
	s := target.Sample{At: time.Now(), Counters: map[string]float64{}, Files: vfs.Stats(t.path)}
	for _, f := range s.Files {
		switch f.Role {
		case "log":
			s.Counters[target.CtrLogBytes] += float64(f.BytesWritten)
			s.Counters[target.CtrLogWrites] += float64(f.Writes)
			s.Counters[target.CtrLogSyncs] += float64(f.Syncs)
			s.Counters[target.CtrLogWriteMs] += float64(f.WriteNs) / 1e6
			s.Counters[target.CtrLogSyncMs] += float64(f.SyncNs) / 1e6
		case "data":
			s.Counters[target.CtrDataReads] += float64(f.Reads)
			s.Counters[target.CtrDataWrites] += float64(f.Writes)
			s.Counters[target.CtrDataBytesRead] += float64(f.BytesRead)
			s.Counters[target.CtrDataBytesWrite] += float64(f.BytesWritten)
			s.Counters[target.CtrDataSyncs] += float64(f.Syncs)
		}
	}
	busy, lockNs := vfs.Locks(t.path)
	s.Counters[target.CtrBusyWaits] = float64(busy)
	s.Counters["sqlite.lock_ms"] = float64(lockNs) / 1e6
	busyNs := t.busyNs.Load()
	s.Counters["sqlite.busy_wait_ms"] = float64(busyNs) / 1e6
	addDiagnosis(s.Counters, s.Files, lockNs+busyNs, t.info.LogDevice) // waits and host CPU: see diag.go
	return s, nil
}

// Close implements target.Target. SQLite's synchronous setting is per
// connection, so there is nothing to restore on the server side.
func (t *Target) Close(ctx context.Context) error {
	if t.info.Emulation != nil {
		vfs.Govern(t.path, vfs.Limits{})
	}
	err := t.removeIfEmpty(ctx)
	t.unlock()
	return err
}

// removeIfEmpty removes the database file Open created when it holds
// nothing of ceiling's but its empty table of tables: a command that
// failed before it created a table (a tpcc run without its dataset)
// leaves no file behind. Not a shard's (another process may use the
// file), and not a file someone else marked or filled meanwhile.
func (t *Target) removeIfEmpty(ctx context.Context) error {
	t.mu.Lock()
	shared := t.lock != nil && t.lockShared
	t.mu.Unlock()
	if !t.created || shared {
		return nil
	}
	if _, err := os.Stat(t.path); err != nil {
		return nil // gone (cleanup removed it): opening would make it again
	}
	c, err := t.open(ctx)
	if err != nil {
		return nil // gone, or not ours to judge
	}
	var id, objects, entries int64
	empty := c.queryRow(ctx, "PRAGMA application_id", &id) == nil && id == appID &&
		c.queryRow(ctx, "SELECT count(*) FROM sqlite_schema WHERE name NOT IN ('"+metaTable+"', 'sqlite_autoindex_"+metaTable+"_1')", &objects) == nil && objects == 0
	if empty && c.queryRow(ctx, "SELECT count(*) FROM sqlite_schema WHERE name = '"+metaTable+"'", &entries) == nil && entries == 1 {
		empty = c.queryRow(ctx, "SELECT count(*) FROM "+metaTable, &entries) == nil && entries == 0
	}
	c.Close()
	if !empty {
		return nil
	}
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := os.Remove(t.path + suffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("sqlite: remove the empty %s: %w", t.path+suffix, err)
		}
	}
	return nil
}
