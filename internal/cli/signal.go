package cli

import (
	"context"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// Signal is the cause of a context that SignalContext cancelled.
type Signal struct{ Sig syscall.Signal }

func (s Signal) Error() string { return "stopped by " + s.Sig.String() }

// SignalContext returns a context cancelled, with a Signal as its cause,
// at the first SIGINT, SIGTERM or SIGHUP (the terminal or the SSH session
// the run was started from went away: stopping like Ctrl-C restores what
// the run changed on the server and writes the partial result, where the
// default action would kill the process on the spot). After that first
// one the handler is removed, so a second Ctrl-C ends the process at
// once. stop releases it.
func SignalContext() (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-ch:
			signal.Stop(ch)
			sig, _ := s.(syscall.Signal)
			cancel(Signal{Sig: sig})
		case <-done:
		}
	}()
	return ctx, sync.OnceFunc(func() {
		signal.Stop(ch)
		close(done)
		cancel(nil)
	})
}
