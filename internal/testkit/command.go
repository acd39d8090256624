package testkit

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"testing"

	"github.com/spf13/pflag"

	"github.com/m3bench/m3eval/internal/cmdio"
)

// Command is a command's options struct as docs/architecture.md ("How a command is wired")
// describes it: it declares its flags and runs the whole command.
type Command interface {
	AddFlags(fs *pflag.FlagSet)
	Run(ctx context.Context, e *cmdio.IO) error
}

// RunCommand parses args into c's own flags and calls c.Run on the database at db, as the
// binary does with --db db and its output in a pipe: what it wrote to standard output and
// to standard error, and its error. A flag error comes back wrapped in ErrFlag (the binary
// exits 2 for it); stray arguments fail the test. Nothing of the command's wiring is copied
// here: c.Run is the command.
func RunCommand(t testing.TB, c Command, db string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	fs := pflag.NewFlagSet("m3eval", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	c.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		return "", "", fmt.Errorf("%w: %v", ErrFlag, err)
	}
	if fs.NArg() != 0 {
		t.Fatalf("%v: arguments %v", args, fs.Args())
	}
	var out, errw bytes.Buffer
	err = c.Run(context.Background(), &cmdio.IO{DB: db, Out: &out, Err: &errw})
	return out.String(), errw.String(), err
}
