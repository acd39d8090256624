package cmdutil

import (
	"github.com/spf13/cobra"

	"github.com/m3bench/m3eval/internal/progress"
)

// NewBar starts a progress bar for cmd's long work on its standard error: drawn only on a
// terminal and without --quiet (a persistent flag of the root).
func NewBar(cmd *cobra.Command, label string, total int64, unit progress.Unit) *progress.Bar {
	quiet := false
	if f := cmd.Flag("quiet"); f != nil {
		quiet = f.Value.String() == "true"
	}
	return progress.New(cmd.ErrOrStderr(), quiet, label, total, unit)
}
