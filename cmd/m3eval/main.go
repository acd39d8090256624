// Command m3eval annotates, scores and converts multi-turn VLM evaluation data of M3Bench.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := newRootCmd().ExecuteContext(ctx)
	cancel()
	os.Exit(exitCode(ctx, err))
}

// exitCode maps an error to the process exit status: 0 ok, 1 error, 2 usage, 130 interrupted.
// The error has already been printed by the caller's reporter unless it is nil.
func exitCode(ctx context.Context, err error) int {
	if err == nil {
		return 0
	}
	var ue *usageError
	switch {
	case errors.As(err, &ue):
		fmt.Fprintf(os.Stderr, "m3eval: %v\nRun 'm3eval --help' for usage.\n", err)
		return 2
	case ctx.Err() != nil:
		fmt.Fprintln(os.Stderr, "m3eval: interrupted")
		return 130
	default:
		fmt.Fprintf(os.Stderr, "m3eval: %v\n", err)
		return 1
	}
}
