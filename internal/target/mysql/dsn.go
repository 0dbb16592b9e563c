package mysql

import (
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strings"

	"github.com/go-sql-driver/mysql"

	"github.com/ceiling-db/ceiling/internal/target"
)

// DefaultPort is used when a DSN names no port.
const DefaultPort = "3306"

// defaultDialTimeout bounds connecting when the DSN sets no timeout
// (the target applies it to the whole of a session's set-up).
const defaultDialTimeout = target.ConnectTimeout

// driverDSN matches go-sql-driver's own DSN form, as Go programs hold it:
// [user[:password]@]net(address)/dbname[?params], net being tcp, tcp6 or
// unix.
var driverDSN = regexp.MustCompile(`^(?:.*@)?(?:tcp|tcp6|unix)\([^)]*\)/`)

// IsDriverDSN reports whether dsn is in go-sql-driver's own form
// ("root:pw@tcp(127.0.0.1:3306)/test") rather than a URL.
func IsDriverDSN(dsn string) bool { return driverDSN.MatchString(dsn) }

// FromDriverDSN converts a DSN in go-sql-driver's form into ceiling's
// URL form (mysql://user:password@host:port/dbname?params, the
// parameters as written; a unix socket as ?socket=PATH). Errors wrap
// target.ErrBadDSN and never contain the password.
func FromDriverDSN(dsn string) (string, error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return "", fmt.Errorf("mysql: %w (go-sql-driver's form user:password@tcp(host:port)/dbname): %s", target.ErrBadDSN, scrubDriver(err.Error(), dsn))
	}
	u := url.URL{Scheme: "mysql", Path: "/" + cfg.DBName}
	switch {
	case cfg.User != "" && cfg.Passwd != "":
		u.User = url.UserPassword(cfg.User, cfg.Passwd)
	case cfg.User != "":
		u.User = url.User(cfg.User)
	}
	q := url.Values{}
	if slash := strings.LastIndex(dsn, "/"); slash >= 0 {
		if _, raw, ok := strings.Cut(dsn[slash:], "?"); ok {
			if q, err = url.ParseQuery(raw); err != nil {
				return "", fmt.Errorf("mysql: %w: its parameters: %s", target.ErrBadDSN, scrubDriver(err.Error(), dsn))
			}
		}
	}
	if cfg.Net == "unix" {
		q.Set("socket", cfg.Addr)
	} else {
		u.Host = cfg.Addr
	}
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// scrubDriver hides the password of a go-sql-driver DSN in msg.
func scrubDriver(msg, dsn string) string {
	at := strings.LastIndex(strings.SplitN(dsn, "(", 2)[0], "@")
	if at < 0 {
		return msg
	}
	if _, pass, ok := strings.Cut(dsn[:at], ":"); ok && pass != "" {
		msg = strings.ReplaceAll(msg, pass, target.Mask)
	}
	return msg
}

// parseDSN converts a URL DSN into go-sql-driver's configuration:
//
//	mysql://user:password@host:port/dbname?param=value&…
//
// mariadb:// is accepted as a synonym. The port defaults to 3306 and the
// host to 127.0.0.1; the database name is required (ceiling creates its
// tables in it). ?socket=/path/to/mysqld.sock connects over a Unix socket
// instead of TCP. ?ssl-ca=FILE verifies the server's certificate against
// the CA certificates in FILE (PEM) instead of the system's, and
// ?ssl-cert=FILE&ssl-key=FILE present a client certificate (see setTLS).
// Every other parameter is handed to go-sql-driver as is (tls, timeout,
// readTimeout, collation, …). Unless the DSN says
// otherwise, parseTime is on (DATETIME scans into time.Time) and dialing
// times out after 10s. The driver's own logging is silenced: its errors
// reach the caller anyway.
//
// Errors wrap target.ErrBadDSN and never contain the password.
func parseDSN(dsn string) (*mysql.Config, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		// url.Error quotes pieces of the input, which may be pieces of
		// the password: say what is wrong without them.
		return nil, fmt.Errorf("mysql: %w %s: not a URL (escape special characters in the password as %%XX)", target.ErrBadDSN, target.Redact(dsn))
	}
	switch u.Scheme {
	case "mysql", "mariadb":
	default:
		return nil, fmt.Errorf("mysql: %w %s: want mysql://user:password@host:3306/dbname", target.ErrBadDSN, target.Redact(dsn))
	}
	db := strings.TrimPrefix(u.Path, "/")
	if db == "" || strings.Contains(db, "/") {
		return nil, fmt.Errorf("mysql: %w %s: names no database; want mysql://user:password@host:3306/dbname", target.ErrBadDSN, target.Redact(dsn))
	}
	q := u.Query()
	socket := q.Get("socket")
	q.Del("socket")
	var files tlsFiles
	for _, f := range []struct {
		name string
		dst  *string
	}{{"ssl-ca", &files.ca}, {"ssl-cert", &files.cert}, {"ssl-key", &files.key}} {
		*f.dst = q.Get(f.name)
		q.Del(f.name)
	}

	// Let the driver parse and validate the parameters; user, password,
	// address and database are set from the URL afterwards so that no
	// character in them needs escaping for the driver's own DSN syntax.
	cfg, err := mysql.ParseDSN("/?" + q.Encode())
	if err != nil {
		return nil, fmt.Errorf("mysql: %w %s: %s", target.ErrBadDSN, target.Redact(dsn), target.Scrub(err.Error(), dsn))
	}
	if u.User != nil {
		cfg.User = u.User.Username()
		cfg.Passwd, _ = u.User.Password()
	}
	if socket != "" {
		cfg.Net, cfg.Addr = "unix", socket
	} else {
		host, port := u.Hostname(), u.Port()
		if host == "" {
			host = "127.0.0.1"
		}
		if port == "" {
			port = DefaultPort
		}
		cfg.Net, cfg.Addr = "tcp", net.JoinHostPort(host, port)
	}
	if err := setTLS(cfg, files); err != nil {
		return nil, fmt.Errorf("mysql: %w %s: %w", target.ErrBadDSN, target.Redact(dsn), err)
	}
	cfg.DBName = db
	if !q.Has("parseTime") {
		cfg.ParseTime = true
	}
	if !q.Has("timeout") {
		cfg.Timeout = defaultDialTimeout
	}
	cfg.Logger = &mysql.NopLogger{}
	return cfg, nil
}
