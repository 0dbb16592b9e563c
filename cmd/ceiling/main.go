// Command ceiling finds how much load a SQL database sustains and which
// resource sets the ceiling. See README.md.
package main

import (
	"os"

	"github.com/ceiling-db/ceiling/internal/cli"
)

func main() {
	// The first Ctrl-C (or SIGTERM, SIGHUP) stops the command cleanly; a second
	// one ends the process at once.
	ctx, stop := cli.SignalContext(os.Stderr)
	code := cli.Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
