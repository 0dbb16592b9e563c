package cli

import (
	"context"
	"errors"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
)

// pipeOut is standard output when it is a pipe or a file: the first write
// that finds the reading end of a pipe closed (`ceiling run … | head`)
// calls gone, which stops the command as a Ctrl-C would (the server
// setting restored, the partial result written), and the writes after it
// are dropped. Without it (SIGPIPE ignored, see SignalContext) the writes
// would fail one by one; with SIGPIPE's default action the process would
// end on the spot, leaving a changed server setting and ceiling's tables
// behind.
type pipeOut struct {
	w    io.Writer
	gone func()
	once sync.Once
	shut atomic.Bool
}

func (p *pipeOut) Write(b []byte) (int, error) {
	if p.shut.Load() {
		return len(b), nil
	}
	n, err := p.w.Write(b)
	if err != nil && errors.Is(err, syscall.EPIPE) {
		p.shut.Store(true)
		p.once.Do(p.gone)
		return len(b), nil
	}
	return n, err
}

// watchPipe wraps stdout, when it is a file but not a terminal, in a
// pipeOut that cancels the returned context, with SIGPIPE as its Signal
// cause (exit status 141), once the reader has gone; the returned func
// releases the context.
func watchPipe(ctx context.Context, stdout io.Writer) (context.Context, io.Writer, func()) {
	f, ok := stdout.(*os.File)
	if !ok || isTerminal(f) {
		return ctx, stdout, func() {}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	return ctx, &pipeOut{w: f, gone: func() { cancel(Signal{Sig: syscall.SIGPIPE}) }}, func() { cancel(nil) }
}
