package mysql

import (
	"crypto/x509"
	"errors"
	"strings"
	"testing"

	"github.com/ceiling-db/ceiling/internal/target"
	"github.com/ceiling-db/ceiling/internal/testenv"
)

// TestParseDSNTLS: the server's certificate is checked against the DSN's
// host, not the driver's default address; ssl-ca, ssl-cert and ssl-key
// set the CA and the client certificate; contradictions are malformed
// DSNs that name the problem.
func TestParseDSNTLS(t *testing.T) {
	ca, key, caCert := testenv.SelfSignedCA(t)
	tests := []struct {
		name, dsn  string
		serverName string // "" when the certificate is not checked
		skip       bool   // InsecureSkipVerify
		roots      bool   // RootCAs from ssl-ca
		client     bool   // a client certificate
	}{
		{name: "tls=true remote", dsn: "mysql://u@db.example.com:3306/app?tls=true", serverName: "db.example.com"},
		{name: "tls=1 localhost", dsn: "mysql://u@localhost/app?tls=1", serverName: "localhost"},
		{name: "tls=true IPv6", dsn: "mysql://u@[::1]:3307/app?tls=true", serverName: "::1"},
		{name: "tls=true socket", dsn: "mysql://u@/app?socket=/run/mysqld/mysqld.sock&tls=true", serverName: "localhost"},
		{name: "skip-verify", dsn: "mysql://u@db.example.com/app?tls=skip-verify", skip: true},
		{name: "preferred", dsn: "mysql://u@db.example.com/app?tls=preferred", skip: true},
		{name: "ssl-ca alone turns TLS on", dsn: "mysql://u@db.example.com/app?ssl-ca=" + ca, serverName: "db.example.com", roots: true},
		{name: "ssl-ca with tls=true", dsn: "mysql://u@10.0.0.5:3306/app?tls=true&ssl-ca=" + ca, serverName: "10.0.0.5", roots: true},
		{name: "client certificate", dsn: "mysql://u@db.example.com/app?ssl-cert=" + ca + "&ssl-key=" + key, serverName: "db.example.com", client: true},
		{name: "client certificate, skip-verify", dsn: "mysql://u@db.example.com/app?tls=skip-verify&ssl-cert=" + ca + "&ssl-key=" + key, skip: true, client: true},
		{name: "all three", dsn: "mysql://u@db.example.com/app?ssl-ca=" + ca + "&ssl-cert=" + ca + "&ssl-key=" + key, serverName: "db.example.com", roots: true, client: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := parseDSN(tc.dsn)
			if err != nil {
				t.Fatalf("parseDSN: %v", err)
			}
			if cfg.TLS == nil {
				t.Fatal("no TLS configuration")
			}
			if cfg.TLS.ServerName != tc.serverName || cfg.TLS.InsecureSkipVerify != tc.skip {
				t.Errorf("ServerName %q, InsecureSkipVerify %v; want %q, %v", cfg.TLS.ServerName, cfg.TLS.InsecureSkipVerify, tc.serverName, tc.skip)
			}
			if got := cfg.TLS.RootCAs != nil; got != tc.roots {
				t.Errorf("RootCAs set %v, want %v", got, tc.roots)
			} else if tc.roots {
				// The pool holds ssl-ca's certificate: a chain to it verifies.
				if _, err := caCert.Verify(x509.VerifyOptions{Roots: cfg.TLS.RootCAs}); err != nil {
					t.Errorf("the ssl-ca certificate does not verify against RootCAs: %v", err)
				}
			}
			if got := len(cfg.TLS.Certificates); got != map[bool]int{false: 0, true: 1}[tc.client] {
				t.Errorf("%d client certificates, want client=%v", got, tc.client)
			}
			if strings.Contains(cfg.Params["ssl-ca"]+cfg.Params["ssl-cert"]+cfg.Params["ssl-key"], "/") {
				t.Errorf("ssl-* parameters passed on to the server: %v", cfg.Params)
			}
		})
	}

	// No tls, no files: no TLS at all.
	if cfg, err := parseDSN("mysql://u@db.example.com/app"); err != nil || cfg.TLS != nil {
		t.Errorf("plain DSN: TLS %v, err %v; want none", cfg.TLS, err)
	}

	bad := []struct{ dsn, want string }{
		{"mysql://u:" + testPassword + "@h/app?tls=skip-verify&ssl-ca=" + ca, "ssl-ca checks the server's certificate and tls=skip-verify does not"},
		{"mysql://u:" + testPassword + "@h/app?tls=preferred&ssl-ca=" + ca, "tls=preferred does not"},
		{"mysql://u:" + testPassword + "@h/app?tls=false&ssl-ca=" + ca, "need TLS, which tls=false turns off"},
		{"mysql://u:" + testPassword + "@h/app?ssl-cert=" + ca, "ssl-cert and ssl-key go together"},
		{"mysql://u:" + testPassword + "@h/app?ssl-key=" + key, "ssl-cert and ssl-key go together"},
		{"mysql://u:" + testPassword + "@h/app?ssl-ca=" + ca + ".missing", "no such file"},
		{"mysql://u:" + testPassword + "@h/app?ssl-ca=" + key, "holds no PEM certificate"},
		{"mysql://u:" + testPassword + "@h/app?ssl-cert=" + ca + "&ssl-key=" + ca, "ssl-cert " + ca + " and ssl-key " + ca},
	}
	for _, b := range bad {
		_, err := parseDSN(b.dsn)
		if err == nil {
			t.Errorf("parseDSN(%s) succeeded, want %q", target.Redact(b.dsn), b.want)
			continue
		}
		if !errors.Is(err, target.ErrBadDSN) || !strings.Contains(err.Error(), b.want) || strings.Contains(err.Error(), testPassword) || strings.Contains(err.Error(), "\n") {
			t.Errorf("parseDSN(%s) = %q; want one line, a malformed DSN, with %q and no password", target.Redact(b.dsn), err, b.want)
		}
	}
}
