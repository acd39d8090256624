package main

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/m3bench/m3eval/internal/progress"
)

// newBar starts a progress bar for cmd's long work on its standard error: drawn only on a
// terminal and without --quiet (a persistent flag of the root).
func newBar(cmd *cobra.Command, label string, total int64, unit progress.Unit) *progress.Bar {
	quiet := false
	if f := cmd.Flag("quiet"); f != nil {
		quiet = f.Value.String() == "true"
	}
	return progress.New(cmd.ErrOrStderr(), quiet, label, total, unit)
}

// withBar runs work under a progress bar (see newBar) whose total the work reports. work gets
// the callback for its internal options, and cmd's standard output and error wrapped so that
// what it prints appears above the bar. The bar ends with its summary line when work succeeds
// and without one when it fails (the error says the rest).
func withBar(cmd *cobra.Command, label string, unit progress.Unit, work func(report progress.Func, out, errw io.Writer) error) error {
	bar := newBar(cmd, label, -1, unit)
	if err := work(bar.Report, bar.Above(cmd.OutOrStdout()), bar.Above(cmd.ErrOrStderr())); err != nil {
		bar.Stop()
		return err
	}
	bar.Finish()
	return nil
}
