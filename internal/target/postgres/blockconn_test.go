package postgres

import (
	"context"
	"errors"
	"io"
	"net"
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

func TestBlockingConnRoundTrip(t *testing.T) {
	c, err := dialBlocking(context.Background(), "tcp", listenEcho(t, true))
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
	c, err := dialBlocking(context.Background(), "tcp", listenEcho(t, false))
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
	c, err := dialBlocking(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Read(make([]byte, 10)); !errors.Is(err, io.EOF) {
		t.Fatalf("read after the peer closed: %v, want io.EOF", err)
	}
}
