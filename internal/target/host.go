package target

import (
	"context"
	"net"
	"strconv"
	"strings"
	"time"
)

// DirectOnThisHost says whether a TCP session reaches a server that runs
// on this host, though named by an address other than a loopback one (the
// host's name or one of its own addresses): the socket's far end (remote)
// is an address of one of this host's interfaces, and the server saw the
// session come from the socket's near end (local) itself, as seen: the
// client's address as the server reports it ("ip:port", "name:port", or
// an address or name and port given apart, port "" then). A proxy or
// forwarder between them, which the server may be anywhere behind, shows
// the server another address: not this host, as ceiling can tell.
func DirectOnThisHost(ctx context.Context, local, remote net.Addr, seen, port string) bool {
	la, ok1 := local.(*net.TCPAddr)
	ra, ok2 := remote.(*net.TCPAddr)
	if !ok1 || !ok2 || !hostAddr(ra.IP) {
		return false
	}
	host := seen
	if port == "" {
		h, p, err := splitSeen(seen)
		if err != nil {
			return false
		}
		host, port = h, p
	}
	if p, err := strconv.Atoi(port); err != nil || p != la.Port {
		return false
	}
	if ip := net.ParseIP(strings.Trim(host, "[]")); ip != nil {
		return ip.Equal(la.IP)
	}
	// A server that resolves its clients' names (MariaDB by default).
	lctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupIPAddr(lctx, host)
	if err != nil {
		return false
	}
	for _, a := range addrs {
		if a.IP.Equal(la.IP) {
			return true
		}
	}
	return false
}

// splitSeen splits "host:port", where host may be a bare IPv6 address
// ("::1:5432", as MySQL's process list shows one).
func splitSeen(s string) (host, port string, err error) {
	if h, p, err := net.SplitHostPort(s); err == nil {
		return h, p, nil
	}
	i := strings.LastIndexByte(s, ':')
	if i <= 0 {
		return "", "", &net.AddrError{Err: "no port", Addr: s}
	}
	return s[:i], s[i+1:], nil
}

// hostAddr says whether ip is a loopback address or one of this host's
// interfaces'.
func hostAddr(ip net.IP) bool {
	if ip.IsLoopback() {
		return true
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return false
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.Equal(ip) {
			return true
		}
	}
	return false
}
