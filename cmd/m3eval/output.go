package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"

	"github.com/m3bench/m3eval/internal/outfile"
	"github.com/m3bench/m3eval/internal/textsafe"
)

// writeOutput runs fn on the command's output: standard output, or the -o file (see
// outfile.Write). color is true only for a terminal, and never under NO_COLOR. Every -o of
// every command goes through here, so every one of them is guarded against the open database.
//
// Text from data reaches the output unchanged in files and pipes, with two guards: JSON
// escapes the controls encoding/json leaves raw (DEL, C1, bidirectional: faithful, and safe
// to show), and any other format but the tables (which neutralize their cells themselves and
// may be colored) is neutralized when it goes to a terminal (textsafe.NewWriter).
func writeOutput(cmd *cobra.Command, path string, fn func(w io.Writer, color bool) error) error {
	color, terminal := false, false
	if f, ok := cmd.OutOrStdout().(*os.File); ok && (path == "" || path == "-") {
		terminal = isatty.IsTerminal(f.Fd())
		color = terminal && os.Getenv("NO_COLOR") == ""
	}
	if err := checkOutputDir(path); err != nil {
		return err
	}
	var protect []string
	if f := cmd.Flag("db"); f != nil && f.Value.String() != "" {
		protect = append(protect, f.Value.String())
	}
	format := ""
	if f := cmd.Flag("format"); f != nil {
		format = f.Value.String()
	}
	return outfile.Write(path, cmd.OutOrStdout(), protect, func(w io.Writer) error {
		var guard *textsafe.Writer
		switch {
		case strings.HasPrefix(format, "json"):
			guard = textsafe.NewJSONWriter(w)
		case terminal && format != "" && format != "table":
			guard = textsafe.NewWriter(w)
		}
		if guard == nil {
			return fn(w, color)
		}
		if err := fn(guard, color); err != nil {
			return err
		}
		return guard.Flush()
	})
}

// checkOutputDir refuses an -o whose directory is not there, in words: the writer would
// otherwise fail on resolving the path ("lstat /nonexistent: no such file or directory").
// A missing directory is not created: a typo in -o should not leave directories behind.
func checkOutputDir(path string) error {
	if path == "" || path == "-" {
		return nil
	}
	dir := filepath.Dir(path)
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("output %s: the directory %s does not exist: create it first, or choose another -o", path, dir)
	case errors.Is(err, syscall.ENOTDIR) || (err == nil && !fi.IsDir()):
		return fmt.Errorf("output %s: %s is not a directory", path, dir)
	}
	return nil
}
