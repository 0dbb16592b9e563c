package mysql

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"

	"github.com/go-sql-driver/mysql"
)

// tlsFiles are a DSN's ssl-ca, ssl-cert and ssl-key parameters: paths of
// PEM files, named as the mysql and mariadb clients name their options.
type tlsFiles struct{ ca, cert, key string }

func (f tlsFiles) set() bool { return f.ca != "" || f.cert != "" || f.key != "" }

// setTLS completes cfg's TLS configuration once parseDSN has set its
// address.
//
// The server's certificate is checked against the DSN's host (a Unix
// socket: localhost). go-sql-driver names the server from the address it
// parsed the parameters with, which in parseDSN is still its default,
// 127.0.0.1: left so, tls=true against db.example.com would refuse the
// server's certificate for not naming 127.0.0.1, and against localhost
// would accept one that names 127.0.0.1 only.
//
// ssl-ca=FILE checks the server's certificate against the CA certificates
// in FILE instead of the system's (a private CA, a cloud provider's
// bundle), as tls=true does otherwise; it turns TLS on where tls is not
// given, and contradicts tls=skip-verify, preferred and false.
// ssl-cert=FILE and ssl-key=FILE (both or neither) present a client
// certificate, with any tls mode but false. cfg.TLSConfig is the tls mode
// as the driver parsed it ("true", "false", "skip-verify", "preferred" or
// "" when not given).
func setTLS(cfg *mysql.Config, f tlsFiles) error {
	if f.set() {
		mode := cfg.TLSConfig
		switch mode {
		case "", "true":
			if cfg.TLS == nil {
				cfg.TLS = &tls.Config{}
				cfg.TLSConfig = "true"
			}
		case "skip-verify", "preferred":
			if f.ca != "" {
				return fmt.Errorf("ssl-ca checks the server's certificate and tls=%s does not: give one of them", mode)
			}
		default:
			return fmt.Errorf("ssl-ca, ssl-cert and ssl-key need TLS, which tls=%s turns off", mode)
		}
		if f.ca != "" {
			pem, err := os.ReadFile(f.ca)
			if err != nil {
				return fmt.Errorf("ssl-ca: %w", err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return fmt.Errorf("ssl-ca %s holds no PEM certificate", f.ca)
			}
			cfg.TLS.RootCAs = pool
		}
		if (f.cert == "") != (f.key == "") {
			return errors.New("ssl-cert and ssl-key go together (the client's certificate and its private key)")
		}
		if f.cert != "" {
			pair, err := tls.LoadX509KeyPair(f.cert, f.key)
			if err != nil {
				return fmt.Errorf("ssl-cert %s and ssl-key %s: %w", f.cert, f.key, err)
			}
			cfg.TLS.Certificates = []tls.Certificate{pair}
		}
	}
	if cfg.TLS != nil && !cfg.TLS.InsecureSkipVerify {
		host := "localhost"
		if cfg.Net != "unix" {
			if h, _, err := net.SplitHostPort(cfg.Addr); err == nil {
				host = h
			}
		}
		cfg.TLS.ServerName = host
	}
	return nil
}
