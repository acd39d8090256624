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
	cmd, err := newRootCmd().ExecuteContextC(ctx)
	// Read ctx before cancelling it: after cancel every error would look like an interrupt.
	path := "m3eval"
	if cmd != nil {
		path = cmd.CommandPath()
	}
	code, message := exitCode(ctx, path, err)
	cancel()
	if message != "" {
		// Errors quote data (file names, sample ids, values): shown, never obeyed.
		fmt.Fprintln(os.Stderr, textsafe.String(message))
	}
	os.Exit(code)
}

// exitCode maps an error to the process exit status (0 ok, 1 error, 2 usage, 130
// interrupted) and the sentence that tells the user; a usage error points to the help of the
// command that was run (path, e.g. "m3eval score").
func exitCode(ctx context.Context, path string, err error) (int, string) {
	if err == nil {
		return 0, ""
	}
	var ue *usageError
	switch {
	// cobra reports an unknown subcommand with an untyped error; it is a usage error too.
	case errors.As(err, &ue), strings.HasPrefix(err.Error(), "unknown command"):
		return 2, fmt.Sprintf("m3eval: %v\nRun '%s --help' for usage.", err, path)
	case ctx.Err() != nil:
		return 130, "m3eval: interrupted"
	default:
		return 1, "m3eval: " + err.Error()
	}
}
