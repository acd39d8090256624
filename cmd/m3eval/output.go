package main

import (
	"io"

	"github.com/spf13/cobra"
)

// writeOutput runs fn on the command's output, standard output or the -o file path, through
// cmdio.IO.Write (which says how it guards both), with the command's --format.
func writeOutput(cmd *cobra.Command, path string, fn func(w io.Writer, color bool) error) error {
	format := ""
	if f := cmd.Flag("format"); f != nil {
		format = f.Value.String()
	}
	return cmdIO(cmd).Write(path, format, fn)
}
