package cmdio

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

	"github.com/m3bench/m3eval/internal/outfile"
	"github.com/m3bench/m3eval/internal/progress"
	"github.com/m3bench/m3eval/internal/textsafe"
)

// Write runs fn on the command's output: Out, or the -o file path (see outfile.Write).
// format is the command's --format ("" when it has none). color is true only for a
// terminal, and never under NO_COLOR. Every -o of every command goes through here, so every
// one of them is guarded against the open database.
//
// Text from data reaches the output unchanged in files and pipes, with two guards: JSON
// escapes the controls encoding/json leaves raw (DEL, C1, bidirectional: faithful, and safe
// to show), and any other format but the tables (which neutralize their cells themselves and
// may be colored) is neutralized when it goes to a terminal (textsafe.NewWriter).
func (e *IO) Write(path, format string, fn func(w io.Writer, color bool) error) error {
	color, terminal := false, false
	if f, ok := e.Stdout().(*os.File); ok && (path == "" || path == "-") {
		terminal = isatty.IsTerminal(f.Fd())
		color = terminal && os.Getenv("NO_COLOR") == ""
	}
	if err := checkOutputDir(path); err != nil {
		return err
	}
	var protect []string
	if e.DB != "" {
		protect = append(protect, e.DB)
	}
	return outfile.Write(path, e.Stdout(), protect, func(w io.Writer) error {
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

// NewBar starts a progress bar on Err for a command's long work: drawn only on a terminal
// and without --quiet.
func (e *IO) NewBar(label string, total int64, unit progress.Unit) *progress.Bar {
	return progress.New(e.Stderr(), e.Quiet, label, total, unit)
}

// WithBar runs work under a progress bar (see NewBar) whose total the work reports. work
// gets the callback for its internal options, and Out and Err wrapped so that what it prints
// appears above the bar. The bar ends with its summary line when work succeeds and without
// one when it fails (the error says the rest).
func (e *IO) WithBar(label string, unit progress.Unit, work func(report progress.Func, out, errw io.Writer) error) error {
	bar := e.NewBar(label, -1, unit)
	if err := work(bar.Report, bar.Above(e.Stdout()), bar.Above(e.Stderr())); err != nil {
		bar.Stop()
		return err
	}
	bar.Finish()
	return nil
}
