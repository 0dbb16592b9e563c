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
	conns := closeAtEnd(t, l)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			conns.add(c)
		}
	}()
	return l.Addr().String()
}

// openConns are a test's connections, closed with their listener when the
// test ends.
type openConns struct {
	mu    sync.Mutex
	conns []net.Conn
}

func (o *openConns) add(cs ...net.Conn) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.conns = append(o.conns, cs...)
}

// closeAtEnd closes l, and the connections added to what it returns, when
// the test ends.
func closeAtEnd(t testing.TB, l net.Listener) *openConns {
	o := &openConns{}
	t.Cleanup(func() {
		_ = l.Close()
		o.mu.Lock()
		defer o.mu.Unlock()
		for _, c := range o.conns {
			_ = c.Close()
		}
	})
	return o
}
