// Command m3eval annotates, scores and converts multi-turn VLM evaluation data of M3Bench.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/m3bench/m3eval/internal/textsafe"
)

func main() {
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := newRootCmd().ExecuteContext(ctx)
	// Read ctx before cancelling it: after cancel every error would look like an interrupt.
	code, message := exitCode(ctx, err)
	cancel()
	if message != "" {
		// Errors quote data (file names, sample ids, values): shown, never obeyed.
		fmt.Fprintln(os.Stderr, textsafe.String(message))
	}
	os.Exit(code)
}

// exitCode maps an error to the process exit status (0 ok, 1 error, 2 usage, 130
// interrupted) and the sentence that tells the user.
func exitCode(ctx context.Context, err error) (int, string) {
	if err == nil {
		return 0, ""
	}
	var ue *usageError
	switch {
	// cobra reports an unknown subcommand with an untyped error; it is a usage error too.
	case errors.As(err, &ue), strings.HasPrefix(err.Error(), "unknown command"):
		return 2, fmt.Sprintf("m3eval: %v\nRun 'm3eval --help' for usage.", err)
	case ctx.Err() != nil:
		return 130, "m3eval: interrupted"
	default:
		return 1, "m3eval: " + err.Error()
	}
}
