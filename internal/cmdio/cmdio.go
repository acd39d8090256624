// Package cmdio is what every command's Run gets besides its own options: the flags all
// commands share (--db, --rubric, --quiet), the standard streams, and the ways every command
// reads its rubric, writes its output (standard output or -o) and shows progress
// (docs/architecture.md, "How a command is wired"). It has no SQL, so engines of the domain
// layer (simulate, illusion, the converters) take an IO too; opening the database from an IO
// is internal/cmdstore's. The binary fills an IO from its root
// command's flags; a test fills one with a database in t.TempDir() and buffers as streams,
// and calls the command's Run with it, so that the tests run the command's own path.
package cmdio

import (
	"io"
	"os"

	"github.com/m3bench/m3eval/annotations"
	"github.com/m3bench/m3eval/internal/rubric"
)

// IO is what a command's Run gets besides its options. The zero value of a stream is
// io.Discard for Out and Err and an empty reader for In.
type IO struct {
	DB         string // --db: an SQLite file or a postgres:// address
	RubricPath string // --rubric: a rubric file, "-" for standard input, "" for the guide's
	Quiet      bool   // --quiet: no progress bars
	In         io.Reader
	Out, Err   io.Writer
	// Rubric is the rubric once read (LoadRubric): --rubric - reads standard input, which
	// can be read only once, so the binary reads it before the command runs and hands it on.
	Rubric *rubric.Rubric
}

// Stdout is where the command's output goes when it is not written to a file.
func (e *IO) Stdout() io.Writer {
	if e.Out == nil {
		return io.Discard
	}
	return e.Out
}

// Stderr is where notes, warnings and the progress bar go.
func (e *IO) Stderr() io.Writer {
	if e.Err == nil {
		return io.Discard
	}
	return e.Err
}

// LoadRubric reads --rubric, or the built-in rubric of the annotation guide, once.
func (e *IO) LoadRubric() (*rubric.Rubric, error) {
	if e.Rubric != nil {
		return e.Rubric, nil
	}
	in := e.In
	if in == nil {
		in = os.Stdin
	}
	r, err := rubric.Load(e.RubricPath, in, annotations.DefaultRubric) // --rubric - reads stdin
	if err != nil {
		return nil, err
	}
	actions, err := rubric.ParseActions(annotations.Actions)
	if err != nil {
		return nil, err
	}
	// A turn whose action type the catalogue lacks (imported with --allow-unknown-actions)
	// gets every field asked, not one fixed to NA by a guess.
	r.SetActionTypes(actions.Names())
	e.Rubric = r
	return r, nil
}
