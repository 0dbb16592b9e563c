// Package mysql is ceiling's MySQL and MariaDB target, opened from a
// mysql://user:password@host:port/dbname DSN (see parseDSN for the
// details).
//
// It uses go-sql-driver/mysql through database/sql: every worker pins one
// *sql.Conn and keeps one prepared *sql.Stmt per SQL text, so a statement
// with arguments is prepared once per connection. Statements without
// arguments go over the text protocol.
//
// Namespace: MySQL has no schemas inside a database, so ceiling's tables
// are named ceiling_<name> in the DSN's database, and each one carries the
// table COMMENT [TableMarker]. A ceiling_<name> table without that comment
// (or a view of that name) is someone else's and is never touched
// ([target.ErrForeignObject]). The marker lives on the table itself, so
// there is no bookkeeping table to fall out of step with what exists.
//
// Durability: innodb_flush_log_at_trx_commit is global. Open reads it, sets
// it (full → 1, relaxed → 2) when it differs, and Close puts the old value
// back; [target.Info] records before, during and after. Changing it needs
// SYSTEM_VARIABLES_ADMIN (MySQL 8) or SUPER (MariaDB, MySQL 5.7); without
// that, Open fails and says so. A process that is killed (SIGKILL) cannot
// restore the value, and two ceiling runs changing it at the same time
// would restore each other's value: run one at a time per server.
//
// Server evidence ([target.Sampler]) comes from SHOW GLOBAL STATUS over a
// dedicated connection; see counters for the mapping and its caveats.
package mysql

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/ceiling-db/ceiling/internal/metrics"
	"github.com/ceiling-db/ceiling/internal/osstat"
	"github.com/ceiling-db/ceiling/internal/target"
)

// Namespace names.
const (
	// Prefix starts the name of every table ceiling creates.
	Prefix = "ceiling_"
	// TableMarker starts the COMMENT of every table ceiling creates.
	TableMarker = "ceiling: created by ceiling"
)

// durabilitySetting is the server variable the durability mode sets.
const durabilitySetting = "innodb_flush_log_at_trx_commit"

// restoreTimeout bounds restoring the durability setting when Open fails
// half-way.
const restoreTimeout = 10 * time.Second

// settingNames are the server variables recorded in Info().Settings.
var settingNames = []string{
	"innodb_flush_log_at_trx_commit", "sync_binlog", "log_bin", "binlog_format",
	"innodb_buffer_pool_size", "innodb_log_file_size", "innodb_log_buffer_size",
	"innodb_flush_method", "innodb_doublewrite", "innodb_io_capacity",
	"max_connections", "performance_schema", "version_comment",
	"innodb_page_size", "max_prepared_stmt_count", "transaction_isolation", "tx_isolation",
	"datadir", "innodb_log_group_home_dir", "innodb_log_file_buffering",
	"innodb_deadlock_detect", "innodb_lock_wait_timeout", "read_only", "super_read_only",
	"rpl_semi_sync_master_enabled", "rpl_semi_sync_master_wait_point",
	"rpl_semi_sync_source_enabled", "rpl_semi_sync_source_wait_point",
}

// myTarget implements target.Target and target.Sampler.
type myTarget struct {
	dsn string // as given; only ever shown through target.Redact
	db  *sql.DB
	io  ioMode // how worker sessions wait (workerIO)
	// connectTimeout bounds establishing a session (conn); addr is the
	// server's, caGiven whether the DSN named a CA (ssl-ca) and plain
	// whether it asked for no TLS, for its error.
	connectTimeout time.Duration
	addr           string
	caGiven        bool
	plain          bool

	mu      sync.Mutex // guards info, changed and closed
	info    target.Info
	changed bool // ceiling set the durability variable and must restore it
	// recorded: the value to restore is in durabilityTable (restore.go)
	recorded bool
	closed   bool

	adminMu  sync.Mutex // guards admin and lockName; serialises schema operations
	admin    *sql.Conn
	lockName string // the namespace lock the admin session holds (lock.go)

	sampleMu        sync.Mutex // guards sampler and samplerSessions
	sampler         *sql.Conn
	samplerSessions int // sessions the sampler opened: from the second, after a lost one

	ps *psWaits // wait categories; nil when performance_schema is off
	// replica follows a replica's application of its primary's binary
	// log (a read-only server with replication set up); nil otherwise.
	replica *replicaPos
	// files reads the per-file IO (psfiles.go); nil when performance_schema
	// does not time InnoDB's files.
	files *psFiles
	// locks attributes row-lock waits to tables (locktables.go); nil when
	// the server does not list its lock waits.
	locks *lockTables

	// adminNC is the admin session's network connection (nil if the pool
	// handed it an existing one), for onThisHost.
	adminNC net.Conn
	// here: the server runs on this host (onThisHost, read at Open).
	here bool

	// serverPID is the local server's process (from @@pid_file), or 0
	// when it could not be found: then every mariadbd/mysqld on the host
	// counts as the server (diag.go).
	serverPID int
	runQueue  osstat.RunQueue // serverPID's threads' waits for a core; guarded by sampleMu
}

var (
	_ target.Target  = (*myTarget)(nil)
	_ target.Sampler = (*myTarget)(nil)
)

// Open connects to the server named by opts.DSN, reads its version and
// settings and applies the durability mode (see the package comment). It
// fails with a one-line error (never containing the password) when the
// server cannot be reached, refuses the login, has no such database, or
// the user may not change the durability setting.
func Open(ctx context.Context, opts target.Options) (target.Target, error) {
	mode, err := target.ParseDurability(string(opts.Durability))
	if err != nil {
		return nil, fmt.Errorf("mysql: %w", err)
	}
	cfg, err := parseDSN(opts.DSN)
	if err != nil {
		return nil, err
	}
	cfg.DialFunc = recordDial
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, fmt.Errorf("mysql: %w %s: %s", target.ErrBadDSN, target.Redact(opts.DSN), target.Scrub(err.Error(), opts.DSN, cfg.Passwd))
	}
	db := sql.OpenDB(connector)
	if opts.MaxConns > 0 {
		// Workers, the admin and sampler sessions, and room for
		// reconnects while a lost connection is still being torn down.
		db.SetMaxOpenConns(2*opts.MaxConns + 8)
	}
	t := &myTarget{dsn: opts.DSN, db: db, io: workerIO(opts.MaxConns, opts.Multiplexed, opts.OpenLoop), connectTimeout: cfg.Timeout, addr: cfg.Addr,
		caGiven: cfg.TLS != nil && cfg.TLS.RootCAs != nil, plain: cfg.TLS == nil}

	slot := &dialSlot{} // the admin session's socket, for onThisHost
	admin, err := t.conn(context.WithValue(ctx, dialSlotKey{}, slot))
	if err != nil {
		_ = db.Close()
		return nil, err
	}
	t.admin = admin
	t.adminNC = slot.nc
	recovered := t.recoverDurability(ctx)
	if err := t.readInfo(ctx); err != nil {
		t.closeAll()
		return nil, err
	}
	if ro := t.Info().ReadOnly; ro != "" && mode != target.DurabilityServer {
		t.closeAll()
		return nil, target.ReadOnlyDurability("mysql", target.Redact(t.dsn), ro, mode)
	}
	if err := t.applyDurability(ctx, mode); err != nil {
		// Close restores the setting if it was changed before the
		// failure, even if ctx is cancelled by now.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), restoreTimeout)
		defer cancel()
		return nil, errors.Join(err, t.Close(cctx))
	}
	if recovered != "" {
		t.mu.Lock()
		t.addDurabilityNote(recovered)
		t.mu.Unlock()
	}
	return t, nil
}

// conn takes a new session from the pool, turning a failure into a
// one-line error that names the (redacted) DSN and carries no password.
// The whole of it (dial, TLS, greeting, login) is bounded by the DSN's
// timeout (target.ConnectTimeout by default), which the driver applies to
// the dial alone.
func (t *myTarget) conn(ctx context.Context) (*sql.Conn, error) {
	cctx, cancel := ctx, context.CancelFunc(func() {})
	if t.connectTimeout > 0 { // timeout=0 in the DSN: no bound
		cctx, cancel = context.WithTimeout(ctx, t.connectTimeout)
	}
	defer cancel()
	c, err := t.db.Conn(cctx)
	if err != nil {
		msg := oneLine(target.Scrub(err.Error(), t.dsn))
		if ctx.Err() == nil && errors.Is(cctx.Err(), context.DeadlineExceeded) {
			msg = target.NoReply("MySQL or MariaDB", t.addr, t.connectTimeout, "timeout=")
		}
		hint := target.CertHint(err, "ssl-ca", t.caGiven, "tls=skip-verify")
		var myErr *mysql.MySQLError
		if t.plain && errors.As(err, &myErr) && myErr.Number == erAccessDenied {
			// MariaDB refuses an unencrypted login to a server with
			// require_secure_transport ON with this error too (MySQL
			// says so: error 3159).
			hint = " (if the user and password are right: a MariaDB server with require_secure_transport=ON refuses unencrypted logins with this same error; ?tls=true or ?ssl-ca=FILE in the DSN encrypts them)"
		}
		return nil, &openError{msg: "mysql: connect to " + target.Redact(t.dsn) + ": " + msg + hint, err: err}
	}
	return c, nil
}

// readInfo reads the version and the settings snapshot on the admin session.
func (t *myTarget) readInfo(ctx context.Context) error {
	t.here = t.onThisHost(ctx)
	info := target.Info{Engine: "mysql", DSN: target.Redact(t.dsn), Local: t.here, Settings: map[string]string{}}
	if err := t.admin.QueryRowContext(ctx, "SELECT VERSION()").Scan(&info.Version); err != nil {
		return fmt.Errorf("mysql: read version: %w", err)
	}
	info.TLS = sessionTLS(ctx, t.admin)
	// The names are constants: quote them inline rather than bind them,
	// as SHOW is not preparable everywhere.
	rows, err := t.admin.QueryContext(ctx,
		"SHOW GLOBAL VARIABLES WHERE Variable_name IN ('"+strings.Join(settingNames, "', '")+"')")
	if err != nil {
		return fmt.Errorf("mysql: read settings: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var name, value string
		if err := rows.Scan(&name, &value); err != nil {
			return fmt.Errorf("mysql: read settings: %w", err)
		}
		info.Settings[name] = value
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("mysql: read settings: %w", err)
	}
	var name, value string
	err = t.admin.QueryRowContext(ctx, "SHOW GLOBAL STATUS LIKE 'Innodb_os_log_fsyncs'").Scan(&name, &value)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		noteMissing(info.Settings, "Innodb_os_log_fsyncs (log fsyncs are counted in Innodb_data_fsyncs)")
	case err != nil:
		return fmt.Errorf("mysql: read status: %w", err)
	}
	info.LogDir = logDir(info.Settings["datadir"], info.Settings["innodb_log_group_home_dir"])
	// See counters (sample.go): no status variable counts the commits of
	// autocommit statements alone.
	noteMissing(info.Settings, "commits (Com_commit counts COMMIT statements, not autocommit ones)")
	if strings.Contains(strings.ToLower(info.Version), "mariadb") {
		info.Settings["flavor"] = "mariadb"
	} else {
		info.Settings["flavor"] = "mysql"
	}
	psDenied := false // performance_schema is on, but this user may not read it
	if psOn(info.Settings) {
		ps := newPSWaits()
		switch err := ps.probe(ctx, t.admin); {
		case denied(err):
			psDenied = true
			noteMissing(info.Settings, "wait categories and per-file IO (performance_schema is on, but this user may not read it: GRANT SELECT ON performance_schema.* gives them)")
		case err != nil:
			return err
		default:
			t.ps = ps
		}
	}
	if !psDenied {
		noteWaitEvidence(info.Settings, t.ps) // see diag.go
	}
	if cfg, err := parseDSN(t.dsn); err == nil {
		files, missing, err := probePSFiles(ctx, t.admin, info.Settings, cfg.DBName)
		if denied(err) {
			files, missing, err = nil, "", nil // said above
		}
		if err != nil {
			return err
		}
		t.files = files
		if missing != "" {
			noteMissing(info.Settings, missing)
		}
		locks, missing := probeLockTables(ctx, t.admin, cfg.DBName)
		t.locks = locks
		if missing != "" {
			noteMissing(info.Settings, missing)
		}
	}
	// MariaDB 10.11 writes the redo log with O_DIRECT unless
	// innodb_log_file_buffering is ON (MySQL and older MariaDB lack the
	// variable and buffer the log).
	info.LogDirectIO = strings.EqualFold(info.Settings["innodb_log_file_buffering"], "OFF")
	if info.Local {
		t.serverPID = findServerPID(ctx, t.admin)
		info.LogDevice = target.FindLogDevice(info.LogDir)
		info.DataOnLogDevice = target.DataOnLogDevice(info.Settings["datadir"], info.LogDevice)
	} else {
		noteMissing(info.Settings, target.NotLocalEvidence)
	}
	info.ReadOnly = readOnly(ctx, t.admin, info.Settings)
	if info.ReadOnly != "" {
		t.replica = replicaStatus(ctx, t.admin)
	}
	t.info = info
	return nil
}

// readOnly says why the server takes no writes from ceiling (settings:
// the global variables read), "" when it takes them. A server with
// read_only ON is taken for a replica even where this user could write
// (SUPER, READ_ONLY ADMIN): its tables are the primary's copies.
func readOnly(ctx context.Context, c *sql.Conn, settings map[string]string) string {
	on := func(v string) bool { return v == "1" || strings.EqualFold(v, "ON") }
	switch {
	case on(settings["super_read_only"]):
		return "super_read_only is ON, as on a replica"
	case on(settings["read_only"]):
		return "read_only is ON, as on a replica; ceiling writes nothing there even as a user allowed to"
	}
	// The session's default (a DSN's transaction_read_only=1): MySQL 8
	// and MariaDB 11.1+ name it transaction_read_only, older ones
	// tx_read_only.
	for _, name := range []string{"transaction_read_only", "tx_read_only"} {
		var v sql.NullString
		if err := c.QueryRowContext(ctx, "SELECT @@session."+name).Scan(&v); err == nil {
			if on(v.String) {
				return "its sessions are read-only: " + name + " is ON"
			}
			break
		}
	}
	return ""
}

// applyDurability reads the global setting and changes it when the mode
// asks for another value.
func (t *myTarget) applyDurability(ctx context.Context, mode target.Durability) error {
	before, err := t.readDurability(ctx, t.admin)
	if err != nil {
		return err
	}
	t.info.Durability = target.DurabilityInfo{
		Mode: mode, Setting: durabilitySetting, Scope: "global", Before: before, During: before,
	}
	want := map[target.Durability]string{target.DurabilityFull: "1", target.DurabilityRelaxed: "2"}[mode]
	if want == "" || want == before {
		return nil
	}
	if _, err := t.admin.ExecContext(ctx, "SET GLOBAL "+durabilitySetting+" = "+want); err != nil {
		if denied(err) {
			return fmt.Errorf("mysql: --durability %s needs %s=%s (it is %s) but this user may not change it: "+
				"grant SYSTEM_VARIABLES_ADMIN (MySQL 8) or SUPER (MariaDB), or use --durability server: %w",
				mode, durabilitySetting, want, before, err)
		}
		return fmt.Errorf("mysql: set %s=%s: %w", durabilitySetting, want, err)
	}
	t.changed = true
	during, err := t.readDurability(ctx, t.admin)
	if err != nil {
		return err
	}
	t.info.Durability.During = during
	return nil
}

func (t *myTarget) readDurability(ctx context.Context, c *sql.Conn) (string, error) {
	var v string
	if err := c.QueryRowContext(ctx, "SELECT @@GLOBAL."+durabilitySetting).Scan(&v); err != nil {
		return "", fmt.Errorf("mysql: read %s: %w", durabilitySetting, err)
	}
	return v, nil
}

// Info implements target.Target.
func (t *myTarget) Info() target.Info {
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
func (t *myTarget) Dialect() target.Dialect {
	return target.Dialect{Engine: "mysql", Prefix: Prefix}
}

// Connect implements target.Target.
func (t *myTarget) Connect(ctx context.Context) (target.Conn, error) {
	t.mu.Lock()
	closed := t.closed
	t.mu.Unlock()
	if closed {
		return nil, errors.New("mysql: connect: target is closed")
	}
	slot := &dialSlot{io: t.io}
	c, err := t.conn(context.WithValue(ctx, dialSlotKey{}, slot))
	if err != nil {
		return nil, err
	}
	var id int64
	if err := c.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("mysql: read connection id: %w", err)
	}
	cn := &conn{c: c, nc: slot.nc, t: t, id: id, stmts: map[string]prepared{}}
	if t.ps != nil {
		t.ps.register(id)
		cn.ps = t.ps
	}
	return cn, nil
}

// Classify implements target.Target.
func (t *myTarget) Classify(err error) metrics.ErrClass { return Classify(err) }

// Schema implements target.Target.
func (t *myTarget) Schema() target.Schema { return schema{t: t} }

// Close implements target.Target: it restores innodb_flush_log_at_trx_commit
// if Open changed it (on a fresh session if the admin one was lost), records
// the value after, and closes every connection. If the restore fails, the
// error says which statement to run by hand. Close is safe to call more
// than once.
func (t *myTarget) Close(ctx context.Context) error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	t.closed = true
	t.mu.Unlock()

	var errs []error
	err := t.withAdmin(ctx, func(c *sql.Conn) error {
		t.mu.Lock()
		changed, before := t.changed, t.info.Durability.Before
		t.mu.Unlock()
		if changed {
			if _, err := c.ExecContext(ctx, "SET GLOBAL "+durabilitySetting+" = "+before); err != nil {
				return fmt.Errorf("mysql: restore %s to %s (run SET GLOBAL %s = %s by hand): %w",
					durabilitySetting, before, durabilitySetting, before, err)
			}
			t.mu.Lock()
			t.changed = false
			t.mu.Unlock()
		}
		if err := t.forgetDurability(ctx, c); err != nil {
			return err
		}
		after, err := t.readDurability(ctx, c)
		if err != nil {
			return err
		}
		t.mu.Lock()
		t.info.Durability.After = after
		t.mu.Unlock()
		return nil
	})
	if err != nil {
		errs = append(errs, err)
	}
	t.closeAll()
	return errors.Join(errs...)
}

// closeAll releases the admin and sampler sessions and the pool.
func (t *myTarget) closeAll() {
	t.adminMu.Lock()
	if t.admin != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		t.unlockNamespace(ctx, t.admin)
		cancel()
		_ = t.admin.Close()
		t.admin = nil
	}
	t.adminMu.Unlock()
	t.sampleMu.Lock()
	if t.sampler != nil {
		_ = t.sampler.Close()
		t.sampler = nil
	}
	t.sampleMu.Unlock()
	_ = t.db.Close()
}

// Pings times n COM_PINGs on the admin session (target.Pinger): one round
// trip each, which the server answers without a statement.
func (t *myTarget) Pings(ctx context.Context, n int, budget time.Duration) ([]time.Duration, string, error) {
	var times []time.Duration
	err := t.withAdmin(ctx, func(c *sql.Conn) error {
		times = make([]time.Duration, 0, n)
		for begin := time.Now(); target.PingMore(len(times), n, begin, budget); {
			start := time.Now()
			if err := c.PingContext(ctx); err != nil {
				return fmt.Errorf("mysql: ping: %w", err)
			}
			times = append(times, time.Since(start))
		}
		return nil
	})
	return times, "COM_PING", err
}

// withAdmin runs fn on the admin session. If fn fails because the session
// was lost, it is retried once on a new session.
func (t *myTarget) withAdmin(ctx context.Context, fn func(*sql.Conn) error) error {
	t.adminMu.Lock()
	defer t.adminMu.Unlock()
	for attempt := 0; ; attempt++ {
		if t.admin == nil {
			c, err := t.conn(ctx)
			if err != nil {
				return err
			}
			t.admin = c
		}
		err := fn(t.admin)
		if err == nil || attempt > 0 || Classify(err) != metrics.ErrConnLost {
			return err
		}
		_ = t.admin.Raw(func(any) error { return driver.ErrBadConn })
		_ = t.admin.Close()
		t.admin = nil
	}
}

// openError is a connect error: a one-line, password-free message that
// still unwraps to the driver's error for errors.Is/As.
type openError struct {
	msg string
	err error
}

func (e *openError) Error() string { return e.msg }
func (e *openError) Unwrap() error { return e.err }

// oneLine folds a multi-line message into one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.TrimSpace(s)), " ")
}

// logDir is the redo log's directory: innodb_log_group_home_dir, relative
// to datadir unless absolute (its default is "./", the data directory).
func logDir(datadir, home string) string {
	if path.IsAbs(home) {
		return path.Clean(home)
	}
	if datadir == "" {
		return ""
	}
	return path.Join(datadir, home)
}

// sessionTLS describes the encryption of the admin session (target.Info.TLS),
// which the workers' connections share (the same DSN and server), from the
// session's Ssl_version and Ssl_cipher (empty when unencrypted); "" when
// the server does not say.
func sessionTLS(ctx context.Context, db *sql.Conn) string {
	rows, err := db.QueryContext(ctx, "SHOW SESSION STATUS WHERE Variable_name IN ('Ssl_version', 'Ssl_cipher')")
	if err != nil {
		return ""
	}
	defer rows.Close()
	st := map[string]string{}
	for rows.Next() {
		var name, value string
		if rows.Scan(&name, &value) != nil {
			return ""
		}
		st[strings.ToLower(name)] = value
	}
	if rows.Err() != nil || len(st) < 2 {
		return ""
	}
	if st["ssl_version"] == "" {
		return target.TLSOff
	}
	// "TLSv1.3" as Go names it, "TLS 1.3".
	return strings.Replace(st["ssl_version"], "TLSv", "TLS ", 1) + ", " + st["ssl_cipher"]
}

// erAccessDenied is the server refusing a login (ER_ACCESS_DENIED_ERROR).
const erAccessDenied = 1045

// denied says whether err is the server refusing this user something:
// a privilege (1227), a database (1044), a table (1142) or a column (1143).
func denied(err error) bool {
	var me *mysql.MySQLError
	if !errors.As(err, &me) {
		return false
	}
	switch me.Number {
	case 1044, 1045, 1142, 1143, 1227:
		return true
	}
	return false
}
