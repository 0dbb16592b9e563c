package postgres

import (
	"context"
	"errors"
	"io"
	"net"
	"runtime"
	"testing"
	"time"
)

func listenEcho(t *testing.T, echo bool) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				if echo {
					io.Copy(c, c)
				} else {
					io.Copy(io.Discard, c)
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// dials are the blocking connection flavours under test.
var dials = []struct {
	name string
	dial func(context.Context, string, string) (net.Conn, error)
}{{"poll", dialBlocking}, {"raw", dialRaw}}

func TestBlockingConnRoundTrip(t *testing.T) {
	for _, d := range dials {
		t.Run(d.name, func(t *testing.T) { testRoundTrip(t, d.dial) })
	}
}

func testRoundTrip(t *testing.T, dial func(context.Context, string, string) (net.Conn, error)) {
	c, err := dial(context.Background(), "tcp", listenEcho(t, true))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, ok := c.(*blockingConn); !ok {
		t.Fatalf("dialBlocking over TCP returned %T, want *blockingConn", c)
	}
	msg := []byte("hello, server")
	if n, err := c.Write(msg); err != nil || n != len(msg) {
		t.Fatalf("write: %d, %v", n, err)
	}
	buf := make([]byte, len(msg))
	if _, err := io.ReadFull(c, buf); err != nil || string(buf) != string(msg) {
		t.Fatalf("read back %q, %v", buf, err)
	}
}

// TestBlockingConnDeadlineInterruptsRead: pgx cancels a query by setting a
// deadline on the connection while a read is blocked; the read must return
// a timeout error instead of waiting for the server.
func TestBlockingConnDeadlineInterruptsRead(t *testing.T) {
	for _, d := range dials {
		t.Run(d.name, func(t *testing.T) { testDeadline(t, d.dial) })
	}
}

func testDeadline(t *testing.T, dial func(context.Context, string, string) (net.Conn, error)) {
	c, err := dial(context.Background(), "tcp", listenEcho(t, false))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	done := make(chan error, 1)
	go func() {
		_, err := c.Read(make([]byte, 10))
		done <- err
	}()
	time.Sleep(20 * time.Millisecond)
	if err := c.SetReadDeadline(time.Now()); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() {
			t.Fatalf("read returned %v, want a timeout error", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("read did not return after its deadline passed")
	}
}

func TestBlockingConnPeerClose(t *testing.T) {
	for _, d := range dials {
		t.Run(d.name, func(t *testing.T) { testPeerClose(t, d.dial) })
	}
}

func testPeerClose(t *testing.T, dial func(context.Context, string, string) (net.Conn, error)) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err == nil {
			c.Close()
		}
	}()
	c, err := dial(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Read(make([]byte, 10)); !errors.Is(err, io.EOF) {
		t.Fatalf("read after the peer closed: %v, want io.EOF", err)
	}
}

// TestRawConnAllowsStopTheWorld: a raw read blocked in the kernel holds its
// P; a garbage collection (which stops the world) must still complete while
// the read waits, and the read must then still return the data.
func TestRawConnAllowsStopTheWorld(t *testing.T) {
	c, err := dialRaw(context.Background(), "tcp", listenEcho(t, true))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if bc, ok := c.(*blockingConn); !ok || !bc.raw {
		t.Fatalf("dialRaw over TCP returned %T, want a raw *blockingConn", c)
	}
	got := make(chan string, 1)
	go func() {
		buf := make([]byte, 4)
		_, err := io.ReadFull(c, buf)
		if err != nil {
			got <- err.Error()
			return
		}
		got <- string(buf)
	}()
	time.Sleep(20 * time.Millisecond) // let the read block
	gcDone := make(chan struct{})
	go func() { runtime.GC(); close(gcDone) }()
	select {
	case <-gcDone:
	case <-time.After(10 * time.Second):
		t.Fatal("a garbage collection did not complete while a raw read was blocked")
	}
	if _, err := c.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	select {
	case s := <-got:
		if s != "ping" {
			t.Fatalf("read %q, want ping", s)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the raw read did not return the echoed data")
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("second close: %v", err)
	}
}
