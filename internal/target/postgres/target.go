// Package postgres is ceiling's PostgreSQL target, also usable for
// PostgreSQL-wire databases. It is opened from a postgres:// or
// postgresql:// DSN (or a libpq key/value string); the libpq environment
// variables (PGHOST, PGUSER, PGPASSWORD, PGDATABASE, PGSSLMODE, …) fill in
// whatever the DSN leaves out.
//
// Every worker gets its own native *pgx.Conn (not database/sql) in pgx's
// default statement-cache mode, so a statement with arguments is prepared
// once per connection and then executed by name. Statements without
// arguments go over the simple protocol, which costs one round trip either
// way.
//
// Namespace: ceiling's tables live only in the schema "ceiling", which
// ceiling creates and marks with a COMMENT (see [SchemaMarker]); each table
// it creates is marked with a COMMENT too. A "ceiling" schema or table
// without the marker is someone else's and is never touched
// ([target.ErrForeignObject]).
//
// Durability: synchronous_commit is set for each worker session at connect
// time (full → on, relaxed → off, server → left alone). Nothing changes on
// the server, so there is nothing to restore.
//
// Server evidence ([target.Sampler]) comes from pg_stat_wal,
// pg_stat_database, pg_stat_bgwriter, pg_stat_checkpointer (17+) and
// pg_stat_io (16+), read over a dedicated connection. Which views and
// columns exist is probed once; whatever is missing is left out of the
// sample, never reported as zero.
package postgres

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ceiling-db/ceiling/internal/metrics"
	"github.com/ceiling-db/ceiling/internal/osstat"
	"github.com/ceiling-db/ceiling/internal/target"
	"github.com/ceiling-db/ceiling/internal/target/blockio"
)

// Namespace names.
const (
	// Schema is the schema that holds every object ceiling creates.
	Schema = "ceiling"
	// SchemaMarker starts the COMMENT ceiling puts on its schema and tables;
	// an object without it was not created by ceiling.
	SchemaMarker = "ceiling: created by ceiling"
)

// settingNames are the server settings recorded in Info().Settings.
var settingNames = []string{
	"synchronous_commit", "fsync", "wal_sync_method", "track_wal_io_timing",
	"track_io_timing", "shared_buffers", "max_connections", "checkpoint_timeout",
	"max_wal_size", "full_page_writes", "wal_level", "commit_delay",
	"wal_writer_delay", "synchronous_standby_names", "block_size",
	"server_version_num", "data_directory", "deadlock_timeout", "wal_compression",
	"default_transaction_read_only", "in_hot_standby",
}

// closeTimeout bounds how long closing a connection may take; Conn.Close
// has no context of its own.
const closeTimeout = 5 * time.Second

// pgTarget implements target.Target and target.Sampler.
type pgTarget struct {
	dsn  string          // as given; only ever shown through target.Redact
	cfg  *pgx.ConnConfig // admin sessions
	scfg *pgx.ConnConfig // sampler sessions: cfg, each query one transaction (see Open)
	wcfg *pgx.ConnConfig // worker sessions: cfg plus the durability setting
	here bool            // the server runs on this host (onThisHost, read at Open)

	// during is the synchronous_commit the workers' sessions run with
	// ("" at --durability server: the server's own). wcfgSET is wcfg
	// without it in the start-up packet, used once durBySET is set (a
	// pooler refused or dropped the parameter: Connect sets it with SET).
	during   string
	wcfgSET  *pgx.ConnConfig
	durBySET atomic.Bool

	// pooled: the sessions go through a connection pooler in session mode
	// (checkPooler); adminPID is the admin session's server backend.
	pooled   bool
	adminPID int64

	mu     sync.Mutex // guards info and closed
	info   target.Info
	closed bool
	done   chan struct{} // closed by Close (ends the wait sampler's sleeps)

	adminMu    sync.Mutex // guards admin; serialises schema operations
	admin      *pgx.Conn
	locked     bool // the admin session holds the namespace lock (lock.go)
	lockShared bool // that lock is a shard's, shared (LockNamespaceShared)

	sampleMu    sync.Mutex // guards sampler, samplerLost and postmaster
	sampler     *pgx.Conn
	samplerLost bool // the sampler's session was lost: recheck the lock on the next one
	postmaster  int  // the server's postmaster pid on this host; 0 not looked for yet, -1 not found, -2 lost (see serverCPU)
	// cpuBase + the postmaster tree's CPU seconds is the server CPU
	// counter; cpuLast its last value (both move on a restart, see
	// serverCPU).
	cpuBase, cpuLast float64
	runQueue         osstat.RunQueue // the postmaster tree's threads' waits for a core

	probe *probe // statistics views and columns; set by Open, read-only after

	// own counts the transactions ceiling's sampler sessions committed in
	// this database (statistics reads, the wait sampler's rounds): about
	// 22 a second, which pg_stat_database's xact_commit counts with the
	// workload's. Sample leaves them out of the commits counter.
	own atomic.Int64
	// standby: the server is a hot standby (in recovery), where a query's
	// serialization failure is a conflict with recovery (Classify).
	standby bool
}

var (
	_ target.Target  = (*pgTarget)(nil)
	_ target.Sampler = (*pgTarget)(nil)
)

// Open connects to the PostgreSQL server named by opts.DSN, reads its
// version and settings, and prepares the durability setting workers will
// use. It fails with a one-line error (never containing the password) when
// the server cannot be reached, refuses the login, or has no such database.
func Open(ctx context.Context, opts target.Options) (target.Target, error) {
	mode, err := target.ParseDurability(string(opts.Durability))
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	cfg, err := pgx.ParseConfig(opts.DSN)
	if err != nil {
		return nil, &openError{
			msg:  "postgres: " + target.ErrBadDSN.Error() + ": " + oneLine(target.Scrub(err.Error(), opts.DSN)),
			err:  err,
			kind: target.ErrBadDSN,
		}
	}
	if cfg.ConnectTimeout == 0 && !strings.Contains(opts.DSN, "connect_timeout") && os.Getenv("PGCONNECT_TIMEOUT") == "" {
		// libpq waits for ever by default; a server that accepts and
		// never answers would hang ceiling.
		cfg.ConnectTimeout = target.ConnectTimeout
	}
	if _, ok := cfg.RuntimeParams["application_name"]; !ok {
		cfg.RuntimeParams["application_name"] = "ceiling"
	}
	t := &pgTarget{dsn: opts.DSN, cfg: cfg, done: make(chan struct{})}
	// The sampler sessions' queries run unprepared (one Parse, Bind,
	// Execute and Sync each): a statement prepared on first use would be
	// a transaction of its own, which ceiling's count of its sampler
	// transactions (own) would miss.
	t.scfg = cfg.Copy()
	t.scfg.DefaultQueryExecMode = pgx.QueryExecModeExec

	admin, err := t.connect(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if t.adminPID, t.pooled, err = t.checkPooler(ctx, admin); err != nil {
		_ = admin.Close(ctx)
		return nil, err
	}
	t.admin = admin

	info, err := t.readInfo(ctx, admin)
	if err != nil {
		_ = admin.Close(ctx)
		if t.pooled && sharedStatements(err) {
			// A pooler in transaction mode that checkPooler's sessions
			// did not catch out.
			return nil, t.poolerRefusal("a statement this session prepared was not found: " + oneLine(target.Scrub(err.Error(), t.dsn)))
		}
		return nil, err
	}
	if info.ReadOnly != "" && mode != target.DurabilityServer {
		_ = admin.Close(ctx)
		return nil, target.ReadOnlyDurability("postgres", info.DSN, info.ReadOnly, mode)
	}
	// Find the statistics views now, so that Info can say what evidence
	// this server cannot give.
	if t.probe, err = probeViews(ctx, admin); err != nil {
		_ = admin.Close(ctx)
		return nil, err
	}
	t.probe.blockSize = blockSize(info.Settings)
	t.probe.standby = t.standby
	m := t.probe.missing(info.Settings)
	if info.Local && info.LogDir == "" {
		// A local server whose WAL directory is not known: its device
		// cannot be found, so no device figures (flushes, busy).
		m = strings.TrimPrefix(m+", the log device's counters (data_directory, where pg_wal is, is shown only to superusers and members of pg_read_all_settings)", ", ")
	}
	if !info.Local {
		m = strings.TrimPrefix(m+", "+target.NotLocalEvidence, ", ")
	}
	if m != "" {
		info.Settings["missing_evidence"] = m
	}
	info.Durability = target.DurabilityInfo{
		Mode:    mode,
		Setting: "synchronous_commit",
		Scope:   "session",
		Before:  info.Settings["synchronous_commit"],
	}
	t.wcfg = cfg.Copy()
	// Worker sessions block in the kernel like C clients (see the blockio
	// package, workerDial), and run their prepared statements straight on
	// the socket (see execWire).
	t.wcfg.DialFunc = wrapDial(workerDial(opts.MaxConns, opts.Multiplexed, opts.OpenLoop))
	if t.wcfg.RuntimeParams["application_name"] == "ceiling" {
		// Worker backends are told apart from the admin and sampler
		// sessions, e.g. by Settle and by an operator reading pg_stat_activity.
		t.wcfg.RuntimeParams["application_name"] = WorkerAppName
	}
	switch mode {
	case target.DurabilityFull:
		info.Durability.During = "on"
	case target.DurabilityRelaxed:
		info.Durability.During = "off"
	default:
		info.Durability.During = info.Durability.Before
	}
	if mode != target.DurabilityServer {
		// Sent in the startup packet: the setting holds for the whole
		// session, including sessions re-established after a lost
		// connection, at no extra round trip (Connect reads it back,
		// and where a pooler refused or dropped it, sets it with SET).
		t.during = info.Durability.During
		t.wcfgSET = t.wcfg.Copy()
		t.wcfg.RuntimeParams["synchronous_commit"] = info.Durability.During
	}
	if t.pooled {
		info.Pooler = target.PoolerSession
	}
	t.info = info
	return t, nil
}

// connect opens one session, turning a failure into a one-line error that
// names the (redacted) DSN and carries no password.
func (t *pgTarget) connect(ctx context.Context, cfg *pgx.ConnConfig) (*pgx.Conn, error) {
	c, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		msg := target.Scrub(err.Error(), t.dsn, cfg.Password)
		if ctx.Err() == nil && cfg.ConnectTimeout > 0 && errors.Is(err, context.DeadlineExceeded) {
			msg = target.NoReply("PostgreSQL", net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port))), cfg.ConnectTimeout, "connect_timeout=")
		}
		return nil, &openError{
			msg: "postgres: connect to " + t.redactedDSN() + ": " + oneLine(msg) + target.CertHint(err, "sslrootcert", cfg.TLSConfig != nil && cfg.TLSConfig.RootCAs != nil, "sslmode=require"),
			err: err,
		}
	}
	return c, nil
}

// readInfo reads the version and the settings snapshot.
func (t *pgTarget) readInfo(ctx context.Context, c *pgx.Conn) (target.Info, error) {
	if t.pooled {
		// The DSN's host and the session's addresses are the pooler's.
		t.here = localBackend(t.adminPID)
	} else {
		t.here = onThisHost(ctx, c, t.cfg.Host)
	}
	info := target.Info{Engine: "postgres", DSN: t.redactedDSN(), Local: t.here, Settings: map[string]string{}}
	// The workers' sessions negotiate as this one did (the same sslmode
	// and server): with sslmode=prefer, the default, that is TLS wherever
	// the server has ssl on (Debian's packages do, with a snakeoil
	// certificate), loopback included.
	info.TLS = target.TLSOff
	if tc, ok := c.PgConn().Conn().(*tls.Conn); ok {
		st := tc.ConnectionState()
		info.TLS = target.TLSText(st.Version, tls.CipherSuiteName(st.CipherSuite))
	}
	if err := c.QueryRow(ctx, "SHOW server_version").Scan(&info.Version); err != nil {
		return info, fmt.Errorf("postgres: read server_version: %w", err)
	}
	rows, err := c.Query(ctx,
		`SELECT name, current_setting(name) FROM pg_catalog.pg_settings WHERE name = ANY($1)`,
		settingNames)
	if err != nil {
		return info, fmt.Errorf("postgres: read settings: %w", err)
	}
	for rows.Next() {
		var name, value string
		if err := rows.Scan(&name, &value); err != nil {
			rows.Close()
			return info, fmt.Errorf("postgres: read settings: %w", err)
		}
		info.Settings[name] = value
	}
	if err := rows.Err(); err != nil {
		return info, fmt.Errorf("postgres: read settings: %w", err)
	}
	if _, ok := info.Settings["synchronous_commit"]; !ok {
		return info, errors.New("postgres: server has no synchronous_commit setting")
	}
	info.ReadOnly, t.standby = readOnly(ctx, c)
	// data_directory is shown to superusers and pg_read_all_settings only.
	if d := info.Settings["data_directory"]; d != "" {
		info.LogDir = path.Join(d, "pg_wal")
		if info.Local {
			info.LogDevice = target.FindLogDevice(info.LogDir)
			info.DataOnLogDevice = target.DataOnLogDevice(d, info.LogDevice)
		}
	}
	return info, nil
}

// readOnly says why the server takes no writes from c's sessions (a hot
// standby: standby, default_transaction_read_only), "" when it takes them or does
// not say (a PostgreSQL-wire server without these functions): the
// writes then fail with their own errors.
func readOnly(ctx context.Context, c *pgx.Conn) (why string, standby bool) {
	var ro string
	if err := c.QueryRow(ctx, "SELECT pg_is_in_recovery(), current_setting('transaction_read_only')").Scan(&standby, &ro); err != nil {
		return "", false
	}
	switch {
	case standby:
		return "a hot standby: pg_is_in_recovery() is true", true
	case ro == "on":
		return "its sessions are read-only: default_transaction_read_only is on for this user, database or connection", false
	}
	return "", false
}

// redactedDSN is the DSN for results and messages. With an empty DSN
// (everything from PG* environment variables) it describes the session;
// a DSN that leaves the user, host or database to the environment or the
// defaults ("postgres://", "dbname=x") is followed by the session it
// made, so that a result names the server it measured.
func (t *pgTarget) redactedDSN() string {
	db := t.cfg.Database
	if db == "" {
		db = t.cfg.User // the server's default: the database named as the user
	}
	session := fmt.Sprintf("postgres://%s@%s/%s", t.cfg.User, hostPort(t.cfg.Host, t.cfg.Port), db)
	d := strings.TrimSpace(t.dsn)
	switch {
	case d == "":
		return session
	case namesSession(d):
		return target.Redact(t.dsn)
	}
	return target.Redact(t.dsn) + target.ConnectedAs + session + ")"
}

// namesSession reports whether dsn, a URL or libpq's key/value form,
// gives the user, the host and the database itself.
func namesSession(dsn string) bool {
	has := map[string]bool{}
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			return false
		}
		has["user"] = u.User != nil && u.User.Username() != ""
		has["host"] = u.Hostname() != ""
		has["dbname"] = strings.Trim(u.Path, "/") != ""
		for k, v := range u.Query() {
			if len(v) > 0 && v[0] != "" {
				has[k] = true
			}
		}
	} else {
		for _, f := range strings.Fields(dsn) {
			if k, v, ok := strings.Cut(f, "="); ok && v != "" && v != "''" {
				has[k] = true
			}
		}
	}
	return has["user"] && has["host"] && (has["dbname"] || has["database"])
}

func hostPort(host string, port uint16) string {
	if strings.HasPrefix(host, "/") { // Unix socket directory
		return "[" + host + "]:" + strconv.Itoa(int(port))
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return host + ":" + strconv.Itoa(int(port))
}

// Info implements target.Target.
func (t *pgTarget) Info() target.Info {
	t.mu.Lock()
	defer t.mu.Unlock()
	info := t.info
	info.Settings = make(map[string]string, len(t.info.Settings))
	for k, v := range t.info.Settings {
		info.Settings[k] = v
	}
	return info
}

// Dialect implements target.Target.
func (t *pgTarget) Dialect() target.Dialect {
	return target.Dialect{Engine: "postgres", Prefix: Schema + ".", Dollar: true}
}

// Connect implements target.Target: one new session with the durability
// setting applied.
func (t *pgTarget) Connect(ctx context.Context) (target.Conn, error) {
	t.mu.Lock()
	closed := t.closed
	t.mu.Unlock()
	if closed {
		return nil, errors.New("postgres: connect: target is closed")
	}
	cfg := t.wcfg
	if t.durBySET.Load() {
		cfg = t.wcfgSET
	}
	c, err := t.connect(ctx, cfg)
	if refused := startupRefused(err, "synchronous_commit"); refused != "" && t.during != "" && cfg != t.wcfgSET {
		t.setDurabilityNote("synchronous_commit could not go in the sessions' start-up packets (" + oneLine(refused) + "): set with SET on each session")
		t.durBySET.Store(true)
		c, err = t.connect(ctx, t.wcfgSET)
	}
	if err != nil {
		return nil, err
	}
	if err := t.checkSession(ctx, c); err != nil {
		closeSession(ctx, c)
		return nil, err
	}
	w := &conn{c: c}
	if s, ok := c.PgConn().Conn().(*sessConn); ok && !wireOff {
		w.sess = s
	}
	return w, nil
}

// Classify implements target.Target.
// On a hot standby a query's serialization failure is a conflict with
// recovery whatever language the server's messages are in: its sessions
// only read.
func (t *pgTarget) Classify(err error) metrics.ErrClass {
	c := Classify(err)
	var pgErr *pgconn.PgError
	if c == metrics.ErrSerialization && t.standby && errors.As(err, &pgErr) && pgErr.Code == "40001" {
		return metrics.ErrRecoveryConflict
	}
	return c
}

// Schema implements target.Target.
func (t *pgTarget) Schema() target.Schema { return schema{t: t} }

// Close implements target.Target. Worker settings were per session, so
// nothing needs restoring; After records the server's value as read now.
// Close is safe to call more than once.
func (t *pgTarget) Close(ctx context.Context) error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	t.closed = true
	close(t.done)
	t.mu.Unlock()

	var errs []error
	after := ""
	// Not reading it (the server gone) is no failure of the command:
	// session settings end with their sessions, so the server's value
	// cannot have changed through ceiling.
	_ = t.withAdmin(ctx, func(c *pgx.Conn) error {
		return c.QueryRow(ctx, "SHOW synchronous_commit").Scan(&after)
	})
	t.mu.Lock()
	if after == "" {
		after = t.info.Durability.Before
	}
	t.info.Durability.After = after
	t.mu.Unlock()

	t.adminMu.Lock()
	if t.admin != nil {
		t.unlockNamespace(ctx, t.admin)
		if err := t.admin.Close(ctx); err != nil {
			errs = append(errs, fmt.Errorf("postgres: close: %w", err))
		}
		t.admin = nil
	}
	t.adminMu.Unlock()

	t.sampleMu.Lock()
	if t.sampler != nil {
		if err := t.sampler.Close(ctx); err != nil {
			errs = append(errs, fmt.Errorf("postgres: close sampler: %w", err))
		}
		t.sampler = nil
	}
	t.sampleMu.Unlock()
	return errors.Join(errs...)
}

// Pings times n empty queries on the admin session (target.Pinger): one
// round trip each, which the server answers without parsing anything.
func (t *pgTarget) Pings(ctx context.Context, n int, budget time.Duration) ([]time.Duration, string, error) {
	var times []time.Duration
	err := t.withAdmin(ctx, func(c *pgx.Conn) error {
		times = make([]time.Duration, 0, n)
		for begin := time.Now(); target.PingMore(len(times), n, begin, budget); {
			start := time.Now()
			if err := c.PgConn().Ping(ctx); err != nil {
				return fmt.Errorf("postgres: ping: %w", err)
			}
			times = append(times, time.Since(start))
		}
		return nil
	})
	return times, "empty query", err
}

// withAdmin runs fn on the admin session, (re)connecting first if needed.
// If fn fails because the session was lost, it is retried once on a new
// session. Calls are serialised.
func (t *pgTarget) withAdmin(ctx context.Context, fn func(*pgx.Conn) error) error {
	t.adminMu.Lock()
	defer t.adminMu.Unlock()
	for attempt := 0; ; attempt++ {
		if t.admin == nil || t.admin.IsClosed() {
			c, err := t.connect(ctx, t.cfg)
			if err != nil {
				return err
			}
			t.admin = c
		}
		err := fn(t.admin)
		if err == nil || attempt > 0 || Classify(err) != metrics.ErrConnLost || ctx.Err() != nil {
			return err
		}
		_ = t.admin.Close(ctx)
		t.admin = nil
	}
}

// openError is a connect or DSN error: a one-line, password-free message
// that still unwraps to the driver's error (and, for a DSN that cannot be
// parsed, to target.ErrBadDSN) for errors.Is/As.
type openError struct {
	msg  string
	err  error
	kind error // target.ErrBadDSN or nil
}

func (e *openError) Error() string { return e.msg }

func (e *openError) Unwrap() []error {
	if e.kind == nil {
		return []error{e.err}
	}
	return []error{e.kind, e.err}
}

// oneLine folds a multi-line driver message (pgx lists each host it tried
// on its own line) into one line. A line that repeats an earlier one is
// dropped: with sslmode=prefer (the default) pgx tries each host with TLS
// and then without, and a refused connection or an unknown role fails both
// attempts with the same line.
func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	var b strings.Builder
	seen := map[string]bool{}
	for _, line := range strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' }) {
		line = strings.TrimSpace(line)
		if line == "" || seen[line] {
			continue
		}
		seen[line] = true
		if b.Len() > 0 {
			if strings.HasSuffix(b.String(), ":") {
				b.WriteByte(' ')
			} else {
				b.WriteString("; ")
			}
		}
		b.WriteString(line)
	}
	return b.String()
}

// workerDial picks how worker sessions wait for the server; nil means Go's
// netpoller. CEILING_PG_IO=netpoll|poll|raw|mux|muxpoll forces one
// (CEILING_PG_NETPOLL=1 is netpoll, =0 poll, kept for older scripts).
//
//   - mux (default for up to 16 workers): raw, and the session may turn
//     cooperative (target.Cooperative) when the runner multiplexes several
//     workers on one thread (runner/mux.go), as pgbench -j does; otherwise
//     it behaves as raw.
//   - raw: blocking send/recv on the worker's own thread, keeping the
//     scheduler out (see blockio.DialRaw); never cooperative.
//     Client CPU per single-row insert on the 2-core VM: 22 µs at 1
//     connection, 33 µs at 4, 39 µs at 16 (netpoll: 70, 61, 48 µs).
//   - muxpoll (default for more workers when the run will be multiplexed,
//     target.Options.Multiplexed): like mux, but until it turns
//     cooperative the session waits as poll does, holding no P. Single-row
//     inserts with synchronous_commit off, 32 workers in two groups: 32-38k
//     req/s at 13-15 µs of client CPU per request, against 25-29k and
//     16-19 µs through the netpoller.
//   - poll: blocking poll(2) then read through ordinary system calls.
//   - netpoll: Go's netpoller, as any Go program: the default for more
//     workers in a run that is not multiplexed (TPC-C's pausing virtual
//     users, an open loop of more than maxOpenLoopRaw), where a thread
//     blocked per connection cost more (open loop at 5,000 req/s with 64
//     threads: 96-100 µs of client CPU per request through poll, 75-91
//     through the netpoller; TPC-C with 32 virtual users: 380-590 against
//     530-710 transactions/s). The admin and sampler sessions always use
//     it.
//
// An open loop (target.Options.OpenLoop) keeps its sessions mux (raw) up
// to maxOpenLoopRaw workers: through the netpoller a response waits for
// the scheduler to run its goroutine, which the service time counts.
// Direct selects at 2,000/s on the 2-core VM, 20 workers, three
// alternated 8 s runs: service time p90 0.31-0.48 ms raw against
// 1.8-4.1 ms through the netpoller (p99 2.7-6.2 against 14-21 ms), at
// 14-17% of the cores against 15-24%; at 17 workers (the old limit + 1)
// p90 0.31 against 7-9 ms. At 64 workers, three alternated 6 s runs at
// 2,000 and at 5,000/s each: service time p90 0.24-0.43 ms raw against
// 0.43-1.5 ms, p99 from the scheduled start 1.8-3.8 against 3.4-31 ms,
// 104-163 against 120-228 µs of client CPU per request (an earlier
// reading that the netpoller did better at 64 and 5,000/s did not
// recur); MariaDB alike (p90 0.25-0.37 against 0.39-2.6 ms). Beyond 64
// the raw sessions' raised GOMAXPROCS is not measured, so the
// netpoller stays.
func workerDial(workers int, multiplexed, openLoop bool) pgconn.DialFunc {
	mode := os.Getenv("CEILING_PG_IO")
	switch os.Getenv("CEILING_PG_NETPOLL") {
	case "1":
		mode = "netpoll"
	case "0":
		mode = "poll"
	}
	if mode == "" {
		switch {
		case workers <= 0:
			mode = "netpoll"
		case workers <= maxRawWorkers, openLoop && workers <= maxOpenLoopRaw:
			mode = "mux"
		case multiplexed:
			mode = "muxpoll"
		default:
			mode = "netpoll"
		}
	}
	switch mode {
	case "mux":
		return blockio.DialMux
	case "muxpoll":
		return blockio.DialMuxPoll
	case "raw":
		return blockio.DialRaw
	case "poll":
		return blockio.DialBlocking
	}
	return nil
}

// maxRawWorkers bounds the worker count for which mux (raw until
// cooperative) is the default; a raw connection holds a P.
const maxRawWorkers = 16

// maxOpenLoopRaw is maxRawWorkers for an open loop (workerDial).
const maxOpenLoopRaw = 64
