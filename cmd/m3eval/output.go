package main

import (
	"io"
	"os"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"

	"github.com/m3bench/m3eval/internal/outfile"
)

// writeOutput runs fn on the command's output: standard output, or the -o file (see
// outfile.Write). color is true only for a terminal, and never under NO_COLOR. Every -o of
// every command goes through here, so every one of them is guarded against the open database.
func writeOutput(cmd *cobra.Command, path string, fn func(w io.Writer, color bool) error) error {
	color := false
	if f, ok := cmd.OutOrStdout().(*os.File); ok && (path == "" || path == "-") {
		color = isatty.IsTerminal(f.Fd()) && os.Getenv("NO_COLOR") == ""
	}
	var protect []string
	if f := cmd.Flag("db"); f != nil && f.Value.String() != "" {
		protect = append(protect, f.Value.String())
	}
	return outfile.Write(path, cmd.OutOrStdout(), protect, func(w io.Writer) error { return fn(w, color) })
}
