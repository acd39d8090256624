package main

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/m3bench/m3eval/internal/progress"
)

// newBar starts a progress bar for cmd's long work on its standard error (cmdio.IO.NewBar):
// drawn only on a terminal and without --quiet (a persistent flag of the root).
func newBar(cmd *cobra.Command, label string, total int64, unit progress.Unit) *progress.Bar {
	return cmdIO(cmd).NewBar(label, total, unit)
}

// withBar runs work under a progress bar whose total the work reports (cmdio.IO.WithBar).
func withBar(cmd *cobra.Command, label string, unit progress.Unit, work func(report progress.Func, out, errw io.Writer) error) error {
	return cmdIO(cmd).WithBar(label, unit, work)
}
