package testenv

import (
	"context"
	"io"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-db/ceiling/internal/target"
)

// Forwarder listens on one of this host's addresses that is not a loopback
// one and forwards each connection to to (host:port): a local server
// reached as a server on another host would be, which ceiling must not
// take for a local one (no /proc figures). Each piece of data waits delay
// on its way, each way: a request and its reply take at least 2 × delay
// more (a network's round trip). It returns the listening address,
// host:port, and skips the test when the host has no such address. The
// listener and its connections close when the test ends.
func Forwarder(t testing.TB, to string, delay time.Duration) string {
	t.Helper()
	// Under CEILING_REQUIRE_SERVERS (CI) the remote-server tests must run:
	// a host that cannot give them an address fails them.
	skip := t.Skipf
	if Required() {
		skip = t.Fatalf
	}
	ip := nonLoopback()
	if ip == nil {
		skip("this host has no IPv4 address besides loopback to reach a server as if remote")
	}
	l, err := net.Listen("tcp", net.JoinHostPort(ip.String(), "0"))
	if err != nil {
		skip("cannot listen on %s to reach a server as if remote: %v", ip, err)
	}
	conns := closeAtEnd(t, l)
	go func() {
		for {
			in, err := l.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", to)
			if err != nil {
				_ = in.Close()
				continue
			}
			conns.add(in, out)
			go pipe(in, out, delay)
			go pipe(out, in, delay)
		}
	}()
	return l.Addr().String()
}

// pipe copies from src to dst, each piece delay after it came, until
// either ends, then closes both.
func pipe(dst, src net.Conn, delay time.Duration) {
	defer func() {
		_ = dst.Close()
		_ = src.Close()
	}()
	if delay <= 0 {
		_, _ = io.Copy(dst, src)
		return
	}
	buf := make([]byte, 64<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			time.Sleep(delay)
			if _, err := dst.Write(buf[:n]); err != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// nonLoopback returns an IPv4 address of this host that is not a loopback
// one, or nil.
func nonLoopback() net.IP {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
			return n.IP
		}
	}
	return nil
}

// Remote returns dsn, a URL, with its host and port replaced by those of a
// Forwarder to them that delays each piece by delay (defaultPort: the
// engine's, when dsn names none). It skips the test when dsn is not a URL
// with a host.
func Remote(t testing.TB, dsn, defaultPort string, delay time.Duration) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil || u.Host == "" {
		t.Skip("the test DSN is not a URL with a host, to reach its server through a forwarder")
	}
	port := u.Port()
	if port == "" {
		port = defaultPort
	}
	u.Host = Forwarder(t, net.JoinHostPort(u.Hostname(), port), delay)
	return u.String()
}

// CheckNotLocal checks that tg, opened through a Forwarder (dsn), is taken
// for a server on another host: no CPU or log device read from this host's
// /proc, missing_evidence saying why, and the server's own counters there.
func CheckNotLocal(t *testing.T, tg target.Target, dsn string) {
	t.Helper()
	info := tg.Info()
	if info.Local || info.LogDevice != nil || !strings.Contains(info.Settings["missing_evidence"], target.NotLocalEvidence) {
		t.Fatalf("through %s: local %v, log device %+v, missing_evidence %q; want a remote server, the host figures named missing",
			target.Redact(dsn), info.Local, info.LogDevice, info.Settings["missing_evidence"])
	}
	s, err := tg.(target.Sampler).Sample(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{target.CtrServerCPUSec, target.CtrHostCPUBusy, target.CtrLogDevFlushes} {
		if v, ok := s.Counters[k]; ok {
			t.Errorf("remote server: %s = %v read from this host", k, v)
		}
	}
	if _, ok := s.Counters[target.CtrLogBytes]; !ok {
		t.Errorf("remote server: no %s (the server's own counters): %v", target.CtrLogBytes, s.Counters)
	}
}

// CheckPings checks tg's round trips (target.Pinger) through a Forwarder
// that delays each way by delay: as many as asked within the budget, no
// more than target.MinPings past it, and none shorter than the delay twice.
func CheckPings(t *testing.T, tg target.Target, delay time.Duration) {
	t.Helper()
	p, ok := tg.(target.Pinger)
	if !ok {
		t.Fatal("the target does not time round trips (target.Pinger)")
	}
	times, what, err := p.Pings(context.Background(), 5, time.Minute)
	if err != nil || len(times) != 5 || what == "" {
		t.Fatalf("5 pings within a minute: %d of them (%q), %v", len(times), what, err)
	}
	times, _, err = p.Pings(context.Background(), 200, delay)
	if err != nil || len(times) != target.MinPings {
		t.Fatalf("200 pings within %v, each longer: %d of them, %v; want %d", delay, len(times), err, target.MinPings)
	}
	for _, d := range times {
		if d < 2*delay {
			t.Fatalf("a round trip of %v through a forwarder delaying each way by %v", d, delay)
		}
	}
}

// CheckRoundTrips checks that tg's connections count their round trips
// (target.RoundTripCounter): one per statement, BEGIN and COMMIT, and one
// more for a statement's first use, which prepares it. It makes table
// "rtc" in ceiling's namespace and drops it.
func CheckRoundTrips(t *testing.T, tg target.Target) {
	t.Helper()
	ctx := context.Background()
	s, d := tg.Schema(), tg.Dialect()
	if err := s.CreateTable(ctx, "rtc", "id int PRIMARY KEY"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.DropTable(context.Background(), "rtc") })
	c, err := tg.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rc, ok := c.(target.RoundTripCounter)
	if !ok {
		t.Fatalf("%s connections do not count their round trips (target.RoundTripCounter)", d.Engine)
	}
	insert := "INSERT INTO " + d.Table("rtc") + " (id) VALUES (" + d.Placeholder(1) + ")"
	query := "SELECT id FROM " + d.Table("rtc") + " WHERE id > " + d.Placeholder(1)
	id := 0
	for _, step := range []struct {
		what string
		do   func() error
		want int64
	}{
		{"BEGIN", func() error { return c.Begin(ctx) }, 1},
		{"an insert's first use", func() error { id++; _, err := c.Exec(ctx, insert, id); return err }, 2},
		{"the same insert again", func() error { id++; _, err := c.Exec(ctx, insert, id); return err }, 1},
		{"a query's first use", func() error { r, err := c.Query(ctx, query, 0); closeRows(r); return err }, 2},
		{"the same query again", func() error { r, err := c.Query(ctx, query, 0); closeRows(r); return err }, 1},
		{"COMMIT", func() error { return c.Commit(ctx) }, 1},
	} {
		before := rc.RoundTrips()
		if err := step.do(); err != nil {
			t.Fatalf("%s: %v", step.what, err)
		}
		if got := rc.RoundTrips() - before; got != step.want {
			t.Errorf("%s: %d round trips counted, want %d", step.what, got, step.want)
		}
	}
}

// closeRows reads and closes r (nil: nothing to do).
func closeRows(r target.Rows) {
	if r == nil {
		return
	}
	for r.Next() {
	}
	_ = r.Close()
}
