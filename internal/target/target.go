// Package target defines how ceiling reaches a database under test: a Target
// opened from a DSN, per-worker Conns, the SQL dialect, durability switching,
// error classification and the server-side evidence (Sample) read during a run.
//
// Engines live in sub-packages (sqlite, postgres, mysql) and are opened through
// Open, which picks the engine from the DSN scheme.
package target

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"time"

	"github.com/ceiling-db/ceiling/internal/metrics"
	"github.com/ceiling-db/ceiling/internal/osstat"
)

// Durability is the commit durability a run asks for.
type Durability string

// Durability modes. DurabilityServer leaves the server's setting untouched.
const (
	DurabilityServer  Durability = "server"
	DurabilityFull    Durability = "full"
	DurabilityRelaxed Durability = "relaxed"
)

// ParseDurability validates a --durability value.
func ParseDurability(s string) (Durability, error) {
	switch d := Durability(s); d {
	case DurabilityServer, DurabilityFull, DurabilityRelaxed:
		return d, nil
	case "":
		return DurabilityServer, nil
	}
	return "", errors.New(`durability must be one of server, full, relaxed; got "` + s + `"`)
}

// Options configure how a target is opened.
type Options struct {
	DSN        string
	Durability Durability
	// MaxConns is a hint: how many worker connections the run will open
	// (the target's own admin and sampler sessions come on top).
	MaxConns int
	// Multiplexed is a hint: the runner will serve the worker connections
	// a few per thread (target.Cooperative; runner.Multiplexes), so a
	// target may dial them for that even when there are many.
	Multiplexed bool
	// OpenLoop is a hint: the runner schedules the requests at a rate
	// (run --rate/--rates, knee), each worker waiting for the server one
	// request at a time and sleeping until its next, so a target may
	// keep more of its worker sessions on their own threads than it
	// would for workers that pause for long (TPC-C's keying times).
	OpenLoop bool
	// MustExist: the command only reads or removes what is there (check,
	// cleanup), so an embedded database file that does not exist is an
	// error wrapping ErrNoDatabase instead of being created.
	MustExist bool
}

// Target is one database under test. It is safe for concurrent use by
// multiple goroutines; Conns obtained from it are not.
type Target interface {
	// Info describes the target; DSN is always redacted. After Close, the
	// durability After field holds the setting as it was restored.
	Info() Info
	// Dialect gives the SQL details workloads need.
	Dialect() Dialect
	// Connect opens one connection for one worker, with the session-level
	// durability setting applied.
	Connect(ctx context.Context) (Conn, error)
	// Classify maps a driver error to an error class.
	Classify(err error) metrics.ErrClass
	// Schema gives the namespace-safe DDL operations.
	Schema() Schema
	// Close releases the target and restores any server setting ceiling
	// changed. It must be called even after Ctrl-C, with a context that is
	// not already cancelled.
	Close(ctx context.Context) error
}

// NotLocalEvidence is what a server on another host cannot give, for
// Settings["missing_evidence"]: ceiling reads CPU and the log device from
// this host's kernel.
const NotLocalEvidence = "server CPU, host CPU and the log device's counters (the server is not on this host, and ceiling reads them from its own host's /proc)"

// Info describes a target for results and the console.
type Info struct {
	Engine  string `json:"engine"` // "sqlite" | "postgres" | "mysql"
	Version string `json:"version"`
	DSN     string `json:"dsn"` // password redacted
	// Local is true when the server runs on this host (SQLite always; a
	// server reached by Unix socket, localhost or a loopback address), so
	// host measurements (CPU, a flush probe) describe the server's machine.
	Local      bool              `json:"local"`
	Durability DurabilityInfo    `json:"durability"`
	Settings   map[string]string `json:"settings,omitempty"` // relevant server settings at open
	// LogDir is the directory of the server's transaction log as the
	// server names it (a path on the server's host), from its settings;
	// empty when the server does not say (e.g. without the privilege).
	LogDir string `json:"log_dir,omitempty"`
	// LogDevice is the block device holding LogDir, for a local target
	// on Linux; nil when it could not be told.
	LogDevice *LogDevice `json:"log_device,omitempty"`
	// DataOnLogDevice tells whether the server's data directory is on
	// LogDevice too, so that the device's reads are the data files'
	// (DataOnLogDevice): nil when that could not be told.
	DataOnLogDevice *bool `json:"data_on_log_device,omitempty"`
	// LogDirectIO is true when the server writes its log with O_DIRECT,
	// so that a log sync waits for the device's cache flush alone (the
	// write completed before it); MariaDB with innodb_log_file_buffering
	// OFF.
	LogDirectIO bool `json:"log_direct_io,omitempty"`
	// TLS describes the encryption of the connections to a server, as
	// negotiated for ceiling's first session: "off", or the protocol
	// version and cipher suite ("TLS 1.3, TLS_AES_256_GCM_SHA384").
	// Empty where there is no connection (SQLite) or it was not told.
	// Encryption costs CPU on both sides of every request.
	TLS string `json:"tls,omitempty"`
	// Pooler is PoolerSession where the sessions go through a connection
	// pooler (PgBouncer and the like) that keeps a server connection per
	// session; empty where ceiling talks to the server itself. Server
	// figures then include the pooler's server connections of other
	// clients, and the latencies the pooler's own hop.
	Pooler string `json:"pooler,omitempty"`
	// ReadOnly says why the server takes no writes from ceiling's
	// sessions ("a hot standby: pg_is_in_recovery() is true", "read_only
	// is ON"); empty when it takes them or could not be told. There
	// ceiling only runs workloads that read, on tables prepared on the
	// primary (--reuse), and changes no setting.
	ReadOnly string `json:"read_only,omitempty"`
	// NamespaceLock tells what happened to the namespace lock (Exclusive)
	// during the run, when something did: ceiling's sessions were lost (a
	// restart, an administrator ending them) and the lock with them, and
	// it was taken again, or another session had it by then.
	NamespaceLock string `json:"namespace_lock,omitempty"`
	// Emulation is the resource profile the measured phase was held to
	// (--emulate, the embedded target), or nil.
	Emulation *Emulation `json:"emulation,omitempty"`
}

// Emulation is a resource profile whose limits the embedded target's
// files are held to while a run measures (run --emulate): the log's write
// rate and syncs, the data file's IOPS and MB/s, on top of what the real
// device takes. A limit the profile does not give is nil and not held;
// NotEmulated names the profile's limits ceiling cannot hold (cores).
type Emulation struct {
	Profile        string   `json:"profile"`
	LogMBPerSec    *float64 `json:"log_mb_per_sec"` // MiB/s
	LogSyncsPerSec *float64 `json:"log_syncs_per_sec"`
	DataIOPS       *float64 `json:"data_iops"`
	DataMBPerSec   *float64 `json:"data_mb_per_sec"` // MiB/s
	// LogLatencyMs is added to each log sync, DataLatencyMs to each read
	// of the data file: device time, not a queue (they are not in the
	// files' emulated_wait_ms).
	LogLatencyMs  *float64 `json:"log_latency_ms,omitempty"`
	DataLatencyMs *float64 `json:"data_latency_ms,omitempty"`
	NotEmulated   []string `json:"not_emulated,omitempty"`
}

// Emulator is implemented by targets that can hold their files to an
// Emulation (the SQLite target's VFS). Emulate(e) holds them from now on
// and records e in Info; Emulate(nil) lets them go (Info keeps e).
type Emulator interface {
	Emulate(e *Emulation)
}

// LockNote is Info.NamespaceLock after ceiling's sessions were lost at at:
// the lock taken again, or the session that has it (holder describes it,
// "" when it cannot tell).
func LockNote(at time.Time, retaken bool, holder func() string) string {
	s := "at " + at.UTC().Format("15:04:05 UTC") + " ceiling's sessions were lost, and the namespace lock with them: "
	if retaken {
		return s + "taken again"
	}
	who := holder()
	if who == "" {
		who = "another session"
	}
	return s + who + " holds it now: a second ceiling may have changed this run's tables since"
}

// TLSOff is Info.TLS for an unencrypted connection.
const TLSOff = "off"

// Encrypted says whether the connections were encrypted (TLS known and
// not off).
func (i Info) Encrypted() bool { return i.TLS != "" && i.TLS != TLSOff }

// TLSProtocol is the protocol of encrypted connections ("TLS 1.3"), ""
// otherwise.
func (i Info) TLSProtocol() string {
	if !i.Encrypted() {
		return ""
	}
	return strings.SplitN(i.TLS, ",", 2)[0]
}

// TLSText describes a connection's TLS state for Info.TLS.
func TLSText(version uint16, cipher string) string {
	if version == 0 {
		return TLSOff
	}
	return tls.VersionName(version) + ", " + cipher
}

// LogDevice names the block device of the log directory.
type LogDevice struct {
	Name string `json:"name"` // as /proc/diskstats lists it, e.g. "vda"
	// Dir is the directory examined: LogDir, or its nearest parent this
	// user may examine (a separate WAL disk mounted below an unreadable
	// directory would then be missed).
	Dir          string `json:"dir"`
	Major, Minor uint32 `json:"-"`
}

// DurabilityInfo records the durability setting before, during and after a run.
type DurabilityInfo struct {
	Mode    Durability `json:"mode"`
	Setting string     `json:"setting"` // e.g. "synchronous_commit"
	Scope   string     `json:"scope"`   // "session" | "global" | "connection"
	Before  string     `json:"before"`
	During  string     `json:"during"`
	After   string     `json:"after"`
	// Note tells what happened to the setting during the run, when
	// something did (a restarted server came back with its configured
	// value, and ceiling set its own again).
	Note string `json:"note,omitempty"`
}

// Conn is one worker's connection. It is used by one goroutine at a time.
// Statements are prepared on first use and cached per connection, so a
// workload can pass the same SQL text on every request. Arguments are
// nil, int64, int, int32, bool, float64, string, []byte and time.Time, or
// pointers *int64, *bool, *float64, *string and *time.Time, which are sent
// as the value they point to (a nil one as NULL; see NilPointer).
type Conn interface {
	// Exec runs a statement and returns the number of rows it affected.
	Exec(ctx context.Context, sql string, args ...any) (int64, error)
	// Query runs a statement returning rows. The caller must Close the rows.
	Query(ctx context.Context, sql string, args ...any) (Rows, error)
	// Begin, Commit and Rollback run an explicit transaction on this connection.
	Begin(ctx context.Context) error
	Commit(ctx context.Context) error
	Rollback(ctx context.Context) error
	Close() error
}

// RoundTripCounter is implemented by Conns that count the round trips to
// their server they made: each statement they send and wait for (a
// statement's first use, which prepares it, counts two), BEGIN, COMMIT and
// ROLLBACK. Like every Conn method, RoundTrips is called by the goroutine
// using the Conn.
type RoundTripCounter interface {
	RoundTrips() int64
}

// PHolder is implemented by Conns that may wait for the server with raw
// system calls, holding their goroutine's P (blockio.DialRaw): the process
// then has a P for each of them. HoldsP reports whether this one does now.
// The open loop's worker then also sleeps its last stretch before a
// request's start holding its P (runner/clock_linux.go), which an ordinary
// sleep would hand to another thread, waking the runtime's monitor at
// every request.
type PHolder interface {
	HoldsP() bool
}

// Cooperative is implemented by Conns whose socket I/O can give way to the
// other connections served by the same OS thread, instead of blocking it
// (the runner's multiplexed closed loop, runner/mux.go).
//
// SetWaiter(wait) makes the connection call wait(fd, write) whenever its
// socket is not ready to read (write false) or to write (write true).
// wait returns true once fd may be ready, or after at most about 100 ms so
// that the connection re-checks its deadlines; the connection then retries.
// wait returns false when it cannot suspend its caller (it was called from
// another goroutine); the connection then blocks by itself. SetWaiter(nil)
// restores blocking I/O. SetWaiter reports whether the connection accepted:
// one that does not (its I/O mode cannot give way) keeps blocking.
// Like every Conn method, it is called by the goroutine using the Conn.
type Cooperative interface {
	SetWaiter(wait func(fd int, write bool) bool) bool
}

// RingCooperative is implemented by Cooperative Conns that can also hand
// their sends and receives to the runner, which then submits those of a
// whole group of connections together through io_uring (runner/mux_ring.go).
// SetRingIO(io), on a Conn that has a waiter, makes it call io(fd, write,
// p) for each send (write true) or recv of p on its socket: io returns
// the bytes sent or received, or the errno the system call would have
// returned (EAGAIN when the wait was cut short so that the Conn re-checks
// its deadlines, then it retries), with ok true; with ok false (io was
// called from another goroutine), the Conn does the call itself.
// SetRingIO(nil), or SetWaiter(nil), stops it. It reports whether the Conn
// accepted.
type RingCooperative interface {
	SetRingIO(io func(fd int, write bool, p []byte) (n int, errno syscall.Errno, ok bool)) bool
}

// Rows is the result of Conn.Query.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close() error
}

// Exclusive is implemented by the server targets. LockNamespace takes a
// lock on ceiling's namespace in the target's database, held by the
// target's admin session until Close: a second ceiling on the same database
// fails with ErrNamespaceBusy instead of dropping and reloading the tables
// of the first one's run under it (which made the first one's deletes miss
// their rows, silently).
type Exclusive interface {
	LockNamespace(ctx context.Context) error
}

// ShardLocker is implemented by Exclusive targets whose namespace lock
// can also be taken shared: the shards of one run (run --shard) hold it
// together, and no ceiling that wants it alone gets it meanwhile (nor do
// the shards while such a ceiling holds it).
type ShardLocker interface {
	LockNamespaceShared(ctx context.Context) error
}

// ErrNamespaceBusy is LockNamespace's error when another ceiling holds the
// lock.
var ErrNamespaceBusy = errors.New("another ceiling is using this database")

// RetryBusy runs lock until it does not fail with ErrNamespaceBusy, for up
// to two seconds: a ceiling that has just ended may hold the lock until
// its session is gone.
func RetryBusy(ctx context.Context, lock func() error) error {
	deadline := time.Now().Add(2 * time.Second)
	for {
		err := lock()
		if !errors.Is(err, ErrNamespaceBusy) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// NamespaceBusy is the one-line error of a namespace lock another ceiling
// holds; holder describes it ("" when unknown).
func NamespaceBusy(holder string) error {
	if holder != "" {
		holder = " (" + holder + ")"
	}
	return fmt.Errorf("%w%s: two runs on one database would drop and reload each other's tables and count each other's work; wait for it to finish, or use another database", ErrNamespaceBusy, holder)
}

// RawRows is implemented by the Rows of a target that can give the current
// row's values as the server sent them, undecoded. A reader that needs only
// their sizes (the row workloads count rows and bytes, never look at the
// values) uses it instead of Scan, so ceiling does not spend its CPU turning
// every column into a Go value: a client work no server needs, which on a
// shared host takes cores from the server (PostgreSQL sequential selects,
// 4 workers: a numeric column alone went through math/big and strconv).
type RawRows interface {
	Rows
	// RawLens appends to dst the byte length of each column of the
	// current row as sent (-1 for NULL).
	RawLens(dst []int) ([]int, error)
}

// QueryRow runs a query expected to return at most one row into dest. It
// reports whether there was a row.
func QueryRow(ctx context.Context, c Conn, sql string, dest []any, args ...any) (bool, error) {
	rows, err := c.Query(ctx, sql, args...)
	if err != nil {
		return false, err
	}
	defer rows.Close()
	if !rows.Next() {
		return false, rows.Err()
	}
	if err := rows.Scan(dest...); err != nil {
		return false, err
	}
	for rows.Next() { // drain, so the statement can be reused
	}
	if err := rows.Err(); err != nil {
		return false, err
	}
	return true, rows.Close()
}

// ValueRows is implemented by Rows that can give the current row's values
// decoded, however many columns it has: a custom workload's col S C takes
// a column of an earlier statement's first row. The values are what the
// driver decodes (int64, float64, string, []byte, time.Time, its own
// numeric types) and go back to it as arguments unchanged.
type ValueRows interface {
	Rows
	Values() ([]any, error)
}

// Dialect holds what differs in SQL text between engines.
type Dialect struct {
	Engine string // "sqlite" | "postgres" | "mysql"
	// Prefix qualifies a table name into ceiling's namespace:
	// "ceiling." on PostgreSQL, "ceiling_" elsewhere.
	Prefix string
	// Dollar is true when placeholders are $1, $2 … (PostgreSQL), else ?.
	Dollar bool
}

// Table returns the namespaced name of table name.
func (d Dialect) Table(name string) string { return d.Prefix + name }

// Placeholder returns the n-th (1-based) bind placeholder.
func (d Dialect) Placeholder(n int) string {
	if !d.Dollar {
		return "?"
	}
	return "$" + itoa(n)
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

// Schema creates and drops objects inside ceiling's namespace only. Every
// object it creates is marked as ceiling's; an existing object with the same
// name that is not marked is an error (ErrForeignObject), never overwritten.
type Schema interface {
	// CreateTable creates table name (unqualified) with the given body, the
	// text between the parentheses of CREATE TABLE, replacing a previous
	// ceiling-made table of that name.
	CreateTable(ctx context.Context, name, body string) error
	// CreateIndex creates an index on a ceiling table: cols is the text
	// between the parentheses, e.g. "c_w_id, c_d_id, c_last".
	CreateIndex(ctx context.Context, table, index, cols string) error
	// DropTable drops a ceiling-made table; missing is not an error.
	DropTable(ctx context.Context, name string) error
	// Tables lists the ceiling-made tables that exist now (unqualified).
	Tables(ctx context.Context) ([]string, error)
	// DropAll removes every object ceiling made (and the namespace itself
	// where ceiling created it).
	DropAll(ctx context.Context) error
}

// NamespaceHolder is implemented by schemas whose namespace is an object
// of its own (PostgreSQL's ceiling schema): HasNamespace says whether it
// exists, so that cleanup only reports dropping one that was there.
type NamespaceHolder interface {
	HasNamespace(ctx context.Context) (bool, error)
}

// ErrForeignObject is returned when an object in ceiling's namespace exists
// but was not created by ceiling.
var ErrForeignObject = errors.New("object exists but was not created by ceiling; refusing to touch it")

// Sampler is implemented by targets that can read server-side evidence.
// Sample returns cumulative counters; the runner computes per-interval deltas.
type Sampler interface {
	Sample(ctx context.Context) (Sample, error)
}

// Sample is one reading of cumulative server-side counters.
type Sample struct {
	At time.Time
	// Counters holds cumulative values. A counter the server does not have
	// is absent, never zero. Well-known names are the Ctr* constants;
	// engine-specific names (e.g. "pg.blks_hit") may be added freely.
	Counters map[string]float64
	// Files holds cumulative per-file IO statistics where the target can
	// measure them (the SQLite VFS; later performance_schema, pg_stat_io).
	Files []FileStat
}

// Well-known counter names, shared by every engine that can supply them.
const (
	CtrLogBytes       = "log_bytes"        // bytes written to the transaction log / WAL
	CtrLogWrites      = "log_writes"       // write calls to the log
	CtrLogSyncs       = "log_syncs"        // fsyncs of the log
	CtrLogWriteMs     = "log_write_ms"     // time spent writing the log
	CtrLogSyncMs      = "log_sync_ms"      // time spent syncing the log
	CtrDataReads      = "data_reads"       // reads from data files (from disk, not cache)
	CtrDataWrites     = "data_writes"      // writes to data files
	CtrDataBytesRead  = "data_bytes_read"  // bytes read from data files
	CtrDataBytesWrite = "data_bytes_write" // bytes written to data files
	CtrDataSyncs      = "data_syncs"       // fsyncs of data files
	CtrCacheHits      = "cache_hits"       // logical reads served from cache
	CtrCacheReads     = "cache_reads"      // logical reads (hits + misses)
	CtrCommits        = "commits"          // transactions committed (server view)
	CtrRollbacks      = "rollbacks"        // transactions rolled back (server view)
	CtrCheckpoints    = "checkpoints"      // checkpoints completed
	CtrBusyWaits      = "busy_waits"       // lock attempts that found the lock busy (SQLite)
	// CtrRowLockMs is the time sessions spent waiting for row locks, the
	// whole server's (MySQL/MariaDB: Innodb_row_lock_time), readable where
	// no per-session wait categories are sampled (performance_schema off).
	CtrRowLockMs = "row_lock_ms"
)

// FileStat is cumulative IO for one database file.
type FileStat struct {
	Name         string `json:"name"`
	Role         string `json:"role"` // "data" | "log" | "other"
	Reads        int64  `json:"reads"`
	Writes       int64  `json:"writes"`
	BytesRead    int64  `json:"bytes_read"`
	BytesWritten int64  `json:"bytes_written"`
	Syncs        int64  `json:"syncs"`
	ReadNs       int64  `json:"-"`
	WriteNs      int64  `json:"-"`
	SyncNs       int64  `json:"-"`
	// EmulatedNs is the part of ReadNs, WriteNs and SyncNs spent waiting
	// for emulated device limits (SQLite with --emulate), else 0.
	EmulatedNs int64 `json:"-"`
	// NoSyncs: the target cannot tell this file's syncs from its other
	// calls (Syncs and SyncNs are 0: not measured). NoWriteTime: its
	// writes are asynchronous, and WriteNs times their submission, not
	// the device's work (InnoDB's page writes under performance_schema).
	NoSyncs     bool `json:"-"`
	NoWriteTime bool `json:"-"`
}

// Add adds o's counts to f's; what either did not measure stays marked.
func (f *FileStat) Add(o FileStat) {
	f.Reads += o.Reads
	f.Writes += o.Writes
	f.BytesRead += o.BytesRead
	f.BytesWritten += o.BytesWritten
	f.Syncs += o.Syncs
	f.ReadNs += o.ReadNs
	f.WriteNs += o.WriteNs
	f.SyncNs += o.SyncNs
	f.EmulatedNs += o.EmulatedNs
	f.NoSyncs = f.NoSyncs || o.NoSyncs
	f.NoWriteTime = f.NoWriteTime || o.NoWriteTime
}

// TimedIO is the file's reads and writes whose time is the IO's own, and
// that time: its writes are left out when they are asynchronous
// (NoWriteTime).
func (f FileStat) TimedIO() (ios, ns int64) {
	if f.NoWriteTime {
		return f.Reads, f.ReadNs
	}
	return f.Reads + f.Writes, f.ReadNs + f.WriteNs
}

// ErrPoolerFull marks a worker's session that a connection pooler gave
// no server connection: its pool is smaller than the run's sessions (not
// the server's connection limit).
var ErrPoolerFull = errors.New("the connection pooler gave the session no server connection")

// ErrBadDSN marks a DSN that cannot be parsed (a usage error, exit code 2).
var ErrBadDSN = errors.New("malformed DSN")

// ConnectTimeout bounds establishing a session (connecting, TLS, the
// server's greeting and the login) where the DSN sets no bound of its own:
// a server that accepts the connection and never answers (another service
// on the port, a firewall, a server stuck starting up) is an error, not a
// hang.
const ConnectTimeout = 10 * time.Second

// NoReply is the error text of a session that was not established within
// d: what answers at addr did not speak engine's protocol in time. param
// names the DSN's setting of the bound.
func NoReply(engine, addr string, d time.Duration, param string) string {
	return fmt.Sprintf("no reply from %s within %v: is a %s server listening there, and up? (%s in the DSN sets the wait)", addr, d, engine, param)
}

// ReadOnlyDurability is the error of Open for --durability full or
// relaxed (d) on a server that takes no writes (why, Info.ReadOnly):
// ceiling commits nothing there to make durable, and changes no setting
// of a server that is read-only, as a replica usually is.
func ReadOnlyDurability(engine, dsn, why string, d Durability) error {
	return fmt.Errorf("%s: %s takes no writes (%s): there is nothing of ceiling's to commit there, so --durability %s has nothing to change; leave it out", engine, dsn, why, d)
}

// PoolerSession is Info.Pooler for a pooler in session mode.
const PoolerSession = "session"

// CertHint is what to add to a connection error where the server's TLS
// certificate is signed by a CA the client does not trust (a private CA, a
// cloud provider's own): the DSN parameter that names a CA file (ca, as
// "sslrootcert"), or, where the DSN gave one (given), that its CA did not
// sign it; and the setting that encrypts without checking (skip, as
// "sslmode=require"). Empty for any other error.
func CertHint(err error, ca string, given bool, skip string) string {
	var unknown x509.UnknownAuthorityError
	if !errors.As(err, &unknown) {
		return ""
	}
	if given {
		return fmt.Sprintf(" (no CA certificate in the DSN's %s signed the server's; %s encrypts without checking it)", ca, skip)
	}
	return fmt.Sprintf(" (%s=FILE in the DSN names the CA certificate that signed the server's; %s encrypts without checking it)", ca, skip)
}

// ErrNoDatabase: the database a command needs does not exist (an embedded
// database file opened with Options.MustExist).
var ErrNoDatabase = errors.New("no such database")

// Pinger is implemented by server targets that can time round trips to
// their server: Pings sends up to n requests that the server answers with
// the least work it can (PostgreSQL's empty query, MySQL's COM_PING), one
// after another on one session, and returns each one's time and what was
// sent. It stops early, after MinPings at least, once budget has passed (a
// far server's round trips are long).
type Pinger interface {
	Pings(ctx context.Context, n int, budget time.Duration) (times []time.Duration, what string, err error)
}

// MinPings is how many round trips Pinger.Pings times whatever its budget.
const MinPings = 10

// PingMore says whether Pings should send another request: fewer than n
// done, and fewer than MinPings or still within budget since start.
func PingMore(done, n int, start time.Time, budget time.Duration) bool {
	return done < n && (done < MinPings || time.Since(start) < budget)
}

// Settler is implemented by targets whose statistics lag behind the work
// (PostgreSQL backends publish theirs about once a second and at exit). The
// runner calls Settle after closing the worker connections and before the
// final sample, so the last part of a run is not missing from the evidence.
type Settler interface {
	Settle(ctx context.Context) error
}

// Diagnosis counters (cumulative, like the others; absent when not measured).
// Wait time is split into the categories of the source articles: log IO
// (WRITELOG-like), data-file read IO (PAGEIOLATCH-like), lock, CPU (running,
// no wait), client/network (idle in a session that has work to do) and other.
// On PostgreSQL they are estimated by sampling ceiling's own sessions in
// pg_stat_activity (sessions in a category × sampling period); on SQLite they
// are the time spent in the VFS.
const (
	CtrWaitLogMs       = "wait_log_io_ms"
	CtrWaitDataReadMs  = "wait_data_read_ms"
	CtrWaitDataWriteMs = "wait_data_write_ms"
	CtrWaitLockMs      = "wait_lock_ms"
	CtrWaitCPUMs       = "wait_cpu_ms"
	CtrWaitClientMs    = "wait_client_ms"
	CtrWaitOtherMs     = "wait_other_ms"
	// CtrWaitReplMs is the sessions' time waiting for a synchronous
	// replica to confirm their commits (PostgreSQL's SyncRep waits;
	// MySQL's semi-synchronous acknowledgements, CtrReplWaitMs).
	CtrWaitReplMs  = "wait_replication_ms"
	CtrWaitSamples = "wait_samples" // sampling rounds taken (sampled engines)
	// CtrReplWaitMs is the time the server's commits (all sessions')
	// waited for a semi-synchronous replica's acknowledgement (MySQL and
	// MariaDB: Rpl_semi_sync_master_tx_wait_time), where the server
	// counts it; CtrWaitReplMs holds it as a wait category where wait
	// categories are measured (performance_schema on).
	CtrReplWaitMs = "repl_wait_ms"
	// CtrReplayBytes counts the bytes of its primary's log a replica has
	// applied (PostgreSQL: the hot standby's replay position in the WAL;
	// MySQL/MariaDB: the binary log executed, SHOW REPLICA STATUS): its
	// delta is the primary's changes the replica applied beside the run.
	CtrReplayBytes = "replay_bytes"

	// CtrLockTablePrefix + a table's name counts the lock-wait time
	// attributed to that table (ms; sampled like the wait categories):
	// the table of the rows or pages waited for, where the server names
	// it, else the table of the statement that waited. The lock waits
	// not attributed to any table are the rest of CtrWaitLockMs. A
	// table's counter appears with its first wait: a sample without it
	// stands for zero (see runner.Delta).
	CtrLockTablePrefix = "lock_wait_ms:"
	// CtrWaitEventPrefix + a wait event's name counts the time ceiling's
	// sessions spent in that event (ms), the detail of the categories
	// above: PostgreSQL's "type:event" from pg_stat_activity ("IO:WALSync",
	// "LWLock:WALWrite"; "CPU" for active without a wait, "Client:idle"
	// for idle), MySQL's performance_schema event names without "wait/"
	// ("io/file/innodb/innodb_data_file", "idle"). Like the per-table lock
	// waits, a counter appears with its event's first wait.
	CtrWaitEventPrefix = "wait_event_ms:"

	CtrServerCPUSec = "server_cpu_s"     // CPU seconds of the database server's processes (local server only)
	CtrHostCPUBusy  = "host_cpu_busy_s"  // busy CPU seconds of the whole host (local target only), all cores
	CtrHostCPUTotal = "host_cpu_total_s" // elapsed CPU seconds of the host, all cores (busy + idle)
	CtrHostCores    = "host_cores"       // a level, not a counter: cores of the host (see IsLevel)
	// CtrHostCPUPressure is the seconds during which at least one
	// runnable task of the host waited for a core (/proc/pressure/cpu,
	// "some"; local target with PSI only).
	CtrHostCPUPressure = "host_cpu_pressure_s"
	// CtrServerRunQueueSec is the seconds the database server's threads
	// spent runnable but waiting for a core (local server on Linux,
	// /proc/PID/task/TID/schedstat; a lower bound where threads exit:
	// osstat.RunQueue). PostgreSQL: the postmaster and its children;
	// MySQL/MariaDB: the server's process from its pid file.
	CtrServerRunQueueSec = "server_runqueue_s"
	// CtrClientRunQueueSec is the seconds ceiling's own threads (the load
	// generator's, and the embedded engine's with them) spent runnable
	// but waiting for a core (Linux schedstat, read by the runner with
	// each sample of the target's evidence).
	CtrClientRunQueueSec = "client_runqueue_s"

	// The block device holding the server's log directory (local target
	// only, Linux /proc/diskstats): the whole device's requests, not only
	// the log's. Times are summed over requests, ms.
	CtrLogDevReads   = "log_dev_reads"
	CtrLogDevReadB   = "log_dev_read_bytes"
	CtrLogDevReadMs  = "log_dev_read_ms"
	CtrLogDevWrites  = "log_dev_writes"
	CtrLogDevWriteMs = "log_dev_write_ms"
	CtrLogDevFlushes = "log_dev_flushes" // cache flushes (what an fsync sends to a write-back device)
	CtrLogDevFlushMs = "log_dev_flush_ms"
	CtrLogDevBusyMs  = "log_dev_busy_ms" // time with a request in flight
)

// Sparse says whether counter k is one of those that appear only once
// there is something to count (per table, per wait event): a sample
// without it stands for zero.
func Sparse(k string) bool {
	return strings.HasPrefix(k, CtrLockTablePrefix) || strings.HasPrefix(k, CtrWaitEventPrefix)
}

// AddHostCPU adds the host's CPU counters from /proc (a local target's:
// busy and total CPU seconds, cores, and the CPU pressure where the kernel
// gives it) to out; nothing it cannot read.
func AddHostCPU(out map[string]float64) {
	if h, ok := osstat.ReadHostCPU(); ok {
		out[CtrHostCPUBusy] = h.BusySec
		out[CtrHostCPUTotal] = h.TotalSec
		out[CtrHostCores] = float64(h.Cores)
	}
	if p, ok := osstat.ReadCPUPressure(); ok {
		out[CtrHostCPUPressure] = p
	}
}

// AddLogDevice adds the counters of the log's block device d (from
// Info.LogDevice) to out; nothing when d is nil or cannot be read.
func AddLogDevice(out map[string]float64, d *LogDevice) {
	if d == nil {
		return
	}
	s, ok := osstat.ReadDisk(osstat.DiskDevice{Major: d.Major, Minor: d.Minor})
	if !ok {
		return
	}
	out[CtrLogDevReads], out[CtrLogDevReadMs], out[CtrLogDevReadB] = float64(s.Reads), float64(s.ReadMs), float64(s.ReadBytes)
	out[CtrLogDevWrites], out[CtrLogDevWriteMs] = float64(s.Writes), float64(s.WriteMs)
	out[CtrLogDevBusyMs] = float64(s.IOTicksMs)
	if s.HasFlush {
		out[CtrLogDevFlushes], out[CtrLogDevFlushMs] = float64(s.Flushes), float64(s.FlushMs)
	}
}

// FindLogDevice finds the block device of a local target's log directory;
// nil when the directory is unknown or on no listed block device.
func FindLogDevice(logDir string) *LogDevice {
	d, ok := osstat.DiskOf(logDir)
	if !ok {
		return nil
	}
	return &LogDevice{Name: d.Name, Dir: d.Path, Major: d.Major, Minor: d.Minor}
}

// DataOnLogDevice tells whether dataDir is on the block device d (the
// log's); nil when either is unknown.
func DataOnLogDevice(dataDir string, d *LogDevice) *bool {
	if d == nil || dataDir == "" {
		return nil
	}
	dd, ok := osstat.DiskOf(dataDir)
	if !ok {
		return nil
	}
	same := dd.Major == d.Major && dd.Minor == d.Minor
	return &same
}

// RowSource feeds rows to BulkInserter.BulkInsert, one row per Next. It has
// the shape of pgx.CopyFromSource. Values may reuse its slice between rows.
type RowSource interface {
	Next() bool
	Values() ([]any, error)
	Err() error
}

// BulkInserter is implemented by Conns that have a bulk load path: COPY on
// PostgreSQL, multi-row INSERT statements on MySQL/MariaDB (split to fit
// max_allowed_packet), and prepared inserts on SQLite. BulkInsert inserts
// every row of rows into table (unqualified; the Conn adds ceiling's
// namespace) in the given columns and returns how many rows it inserted.
//
// It runs inside the caller's transaction when one is open (Begin); without
// one, each engine commits the batch as one unit where it can (COPY is one
// statement; MySQL and SQLite wrap the batch in a transaction).
type BulkInserter interface {
	BulkInsert(ctx context.Context, table string, cols []string, rows RowSource) (int64, error)
}

// SliceRows is a RowSource over rows held in memory.
type SliceRows struct {
	Rows [][]any
	i    int
}

// Next implements RowSource.
func (s *SliceRows) Next() bool { s.i++; return s.i <= len(s.Rows) }

// Values implements RowSource.
func (s *SliceRows) Values() ([]any, error) { return s.Rows[s.i-1], nil }

// Err implements RowSource.
func (s *SliceRows) Err() error { return nil }

// IsLevel says whether a sample counter is a level (a value at the moment
// of the sample, such as the host's cores) rather than a cumulative count:
// evidence keeps its latest value instead of a difference, and it has no
// rate per second.
func IsLevel(counter string) bool {
	return counter == CtrHostCores
}
