package testenv

import (
	"net"
	"sync"
	"testing"
)

// SilentServer listens on a loopback port, accepts connections and never
// sends a byte: a server that a client reaches but that never answers
// (another service on the port, a server stuck starting up). It returns
// the address, host:port; the listener and its connections close when the
// test ends.
func SilentServer(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen on loopback: %v", err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	return l.Addr().String()
}
