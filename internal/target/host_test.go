package target

import (
	"context"
	"net"
	"testing"
)

// TestDirectOnThisHost: a session to one of this host's addresses is on
// this host when the server saw it come from the session's own socket
// (an address, or a name of it, and its port); another address or port
// (a forwarder, a proxy) or a far end that is not this host's is not.
func TestDirectOnThisHost(t *testing.T) {
	ctx := context.Background()
	lo := net.ParseIP("127.0.0.1")
	local := &net.TCPAddr{IP: lo, Port: 40001}
	server := &net.TCPAddr{IP: lo, Port: 5432}
	far := &net.TCPAddr{IP: net.ParseIP("203.0.113.9"), Port: 5432} // TEST-NET-3: no host's
	for _, c := range []struct {
		name       string
		remote     net.Addr
		seen, port string
		want       bool
	}{
		{"its socket", server, "127.0.0.1:40001", "", true},
		{"address and port apart", server, "127.0.0.1", "40001", true},
		{"by name (MariaDB resolves its clients)", server, "localhost:40001", "", true},
		{"another port: a forwarder's", server, "127.0.0.1:40002", "", false},
		{"another address", server, "127.0.0.2:40001", "", false},
		{"no port", server, "127.0.0.1", "", false},
		{"a far end not this host's", far, "127.0.0.1:40001", "", false},
		{"not TCP", &net.UnixAddr{Name: "/run/x.sock", Net: "unix"}, "127.0.0.1:40001", "", false},
	} {
		if got := DirectOnThisHost(ctx, local, c.remote, c.seen, c.port); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	// One of this host's own addresses, not a loopback one, as the far end.
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		n, ok := a.(*net.IPNet)
		if !ok || n.IP.IsLoopback() || n.IP.To4() == nil {
			continue
		}
		own := &net.TCPAddr{IP: n.IP, Port: 40001}
		if !DirectOnThisHost(ctx, own, &net.TCPAddr{IP: n.IP, Port: 5432}, net.JoinHostPort(n.IP.String(), "40001"), "") {
			t.Errorf("a session from %v to this host's %v, seen from its socket: not on this host", own, n.IP)
		}
		if DirectOnThisHost(ctx, own, &net.TCPAddr{IP: n.IP, Port: 5432}, "127.0.0.1:51000", "") {
			t.Errorf("a session to this host's %v that the server saw come from a forwarder: on this host", n.IP)
		}
		return
	}
	t.Log("this host has no IPv4 address besides loopback: its own address as the far end not tried")
}

// TestSplitSeen: MySQL's process list shows an IPv6 client bare.
func TestSplitSeen(t *testing.T) {
	for in, want := range map[string][2]string{
		"127.0.0.1:5": {"127.0.0.1", "5"},
		"[::1]:6":     {"::1", "6"},
		"::1:7":       {"::1", "7"},
		"db.local:8":  {"db.local", "8"},
	} {
		h, p, err := splitSeen(in)
		if err != nil || h != want[0] || p != want[1] {
			t.Errorf("splitSeen(%q) = %q, %q, %v; want %q, %q", in, h, p, err, want[0], want[1])
		}
	}
	if _, _, err := splitSeen("localhost"); err == nil {
		t.Error(`splitSeen("localhost"): no error`)
	}
}
