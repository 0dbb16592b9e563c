package mysql

import (
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ceiling-db/ceiling/internal/target"
	"github.com/ceiling-db/ceiling/internal/testenv"
)

// TestTLS runs against a server with TLS on whose certificate names
// 127.0.0.1 only and is signed by the CA that CEILING_TEST_MYSQL_TLS_DSN's
// ssl-ca names (.ci/run makes them): ssl-ca verifies the server and the
// sessions are encrypted; the certificate is checked against the DSN's host
// (by the name localhost the same server is refused); without ssl-ca the
// system's CAs refuse it, and the error says what to do (also where the
// server requires TLS and MariaDB refuses a plain login as a wrong
// password); a user that must
// present a client certificate logs in with ssl-cert and ssl-key, and is
// refused without them.
func TestTLS(t *testing.T) {
	dsn := testenv.DSN(t, testenv.MySQLTLSEnv)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatalf("%s: %v", testenv.MySQLTLSEnv, err)
	}
	ca := u.Query().Get("ssl-ca")
	if ca == "" || u.Hostname() != "127.0.0.1" {
		t.Fatalf("%s = %s: want a server at 127.0.0.1 and ssl-ca=FILE", testenv.MySQLTLSEnv, dsn)
	}
	with := func(host string, set map[string]string) string {
		v := *u
		if host != "" {
			v.Host = host + ":" + u.Port()
		}
		q := v.Query()
		for k, val := range set {
			if val == "" {
				q.Del(k)
			} else {
				q.Set(k, val)
			}
		}
		v.RawQuery = q.Encode()
		return v.String()
	}

	t.Run("verified", func(t *testing.T) {
		tg := openTarget(t, dsn, target.DurabilityServer)
		ver := workerTLS(t, tg)
		info := tg.Info().TLS
		if ver == "" || !strings.HasPrefix(info, strings.Replace(ver, "TLSv", "TLS ", 1)+", ") {
			t.Errorf("Info.TLS %q, a worker session's Ssl_version %q: want both encrypted, alike", info, ver)
		}
		t.Logf("TLS: %s", info)
	})
	t.Run("host name checked", func(t *testing.T) {
		checkOpenError(t, target.Options{DSN: with("localhost", nil)}, "wanted to match localhost")
		checkOpenError(t, target.Options{DSN: with("localhost", map[string]string{"tls": "true"})}, "wanted to match localhost")
	})
	t.Run("CA not trusted", func(t *testing.T) {
		checkOpenError(t, target.Options{DSN: with("", map[string]string{"ssl-ca": "", "tls": "true"})},
			"certificate signed by unknown authority (ssl-ca=FILE in the DSN names the CA certificate")
		other, _, _ := testenv.SelfSignedCA(t)
		checkOpenError(t, target.Options{DSN: with("", map[string]string{"ssl-ca": other})},
			"certificate signed by unknown authority (no CA certificate in the DSN's ssl-ca signed the server's")
	})
	t.Run("secure transport required", func(t *testing.T) {
		// MariaDB refuses an unencrypted login with "Access denied" when
		// the server requires TLS: the error says that this may be why.
		db, err := rawDB(dsn) // encrypted: it can turn the setting off again
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if _, err := db.Exec("SET GLOBAL require_secure_transport = OFF"); err != nil {
				t.Errorf("restore require_secure_transport: %v", err)
			}
			_ = db.Close()
		})
		if _, err := db.ExecContext(testCtx(t), "SET GLOBAL require_secure_transport = ON"); err != nil {
			t.Fatal(err)
		}
		checkOpenError(t, target.Options{DSN: with("", map[string]string{"ssl-ca": ""})},
			"require_secure_transport=ON refuses unencrypted logins with this same error; ?tls=true or ?ssl-ca=FILE in the DSN encrypts them")
		openTarget(t, dsn, target.DurabilityServer) // encrypted: let in
	})
	t.Run("client certificate", func(t *testing.T) {
		db, err := rawDB(dsn)
		if err != nil {
			t.Fatal(err)
		}
		const acct = "'ceiling_t_x509'@'%'"
		t.Cleanup(func() {
			if _, err := db.Exec("DROP USER IF EXISTS " + acct); err != nil {
				t.Errorf("drop %s: %v", acct, err)
			}
			_ = db.Close()
		})
		for _, q := range []string{
			"DROP USER IF EXISTS " + acct,
			"CREATE USER " + acct + " REQUIRE X509",
			"GRANT ALL ON " + strings.TrimPrefix(u.Path, "/") + ".* TO " + acct,
		} {
			if _, err := db.ExecContext(testCtx(t), q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		v := *u
		v.User = url.User("ceiling_t_x509")
		dir := filepath.Dir(ca)
		userDSN := func(set map[string]string) string {
			w := v
			q := w.Query()
			for k, val := range set {
				q.Set(k, val)
			}
			w.RawQuery = q.Encode()
			return w.String()
		}
		checkOpenError(t, target.Options{DSN: userDSN(nil)}, "Access denied")
		tg := openTarget(t, userDSN(map[string]string{
			"ssl-cert": filepath.Join(dir, "client-cert.pem"),
			"ssl-key":  filepath.Join(dir, "client-key.pem"),
		}), target.DurabilityServer)
		var user string
		rows, err := connect(t, tg).Query(testCtx(t), "SELECT CURRENT_USER()")
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			if err := rows.Scan(&user); err != nil {
				t.Fatal(err)
			}
		}
		rows.Close()
		if !strings.HasPrefix(user, "ceiling_t_x509@") {
			t.Errorf("CURRENT_USER() = %q, want ceiling_t_x509", user)
		}
	})
}
