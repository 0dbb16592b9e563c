// Command ceiling finds how much load a SQL database sustains and which
// resource sets the ceiling. See README.md.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/ceiling-db/ceiling/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// After the first Ctrl-C, a second one kills the process at once.
	go func() { <-ctx.Done(); stop() }()
	code := cli.Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
