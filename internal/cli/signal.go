package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
)

// Signal is the cause of a context that SignalContext cancelled.
type Signal struct{ Sig syscall.Signal }

func (s Signal) Error() string {
	if s.Sig == syscall.SIGPIPE {
		return "stopped: the reader of standard output went away (broken pipe)"
	}
	return "stopped by " + s.Sig.String()
}

// stopSignals are the signals that stop a command cleanly: Ctrl-C, SIGTERM,
// and SIGHUP (the terminal or the SSH session the run was started from
// went away: stopping like Ctrl-C restores what the run changed on the
// server and writes the partial result, where the default action would
// kill the process on the spot).
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// unrestored says, while a target that changed a server-wide setting is
// open, what is left changed if the process ends now (a second Ctrl-C);
// nil otherwise. Set by env.open, cleared by closeTarget.
var unrestored atomic.Pointer[string]

// SignalContext returns a context cancelled, with a Signal as its cause,
// at the first of stopSignals. A second one ends the process at once, by
// that signal, after one line on stderr saying so (and what server
// setting it leaves changed, if any). stop releases the handler.
func SignalContext(stderr io.Writer) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	// A closed pipe on standard output is then an error of the write
	// (pipeOut), not the end of the process.
	ignorePipe()
	ch := make(chan os.Signal, 2) // both, when the second comes at once
	signal.Notify(ch, stopSignals...)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-ch:
			sig, _ := s.(syscall.Signal)
			cancel(Signal{Sig: sig})
		case <-done:
			return
		}
		select {
		case s := <-ch:
			sig, _ := s.(syscall.Signal)
			msg := "ceiling: stopped at once (second signal: " + sig.String() + ")"
			if u := unrestored.Load(); u != nil {
				msg += ": " + *u
			}
			fmt.Fprintln(stderr, msg)
			signal.Stop(ch)
			reraise(sig)
		case <-done:
		}
	}()
	return ctx, sync.OnceFunc(func() {
		signal.Stop(ch)
		close(done)
		cancel(nil)
	})
}
