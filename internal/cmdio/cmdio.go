// Package cmdio is what every command's Run gets besides its own options: the flags all
// commands share (--db, --rubric, --quiet), the standard streams, and the ways every command
// opens the database, writes its output (standard output or -o) and shows progress
// (docs/architecture.md, "How a command is wired"). The binary fills an IO from its root
// command's flags; a test fills one with a database in t.TempDir() and buffers as streams,
// and calls the command's Run with it, so that the tests run the command's own path.
package cmdio

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/m3bench/m3eval/annotations"
	"github.com/m3bench/m3eval/internal/rubric"
	"github.com/m3bench/m3eval/internal/store"
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

// MustExist fails with a plain sentence when the database file is missing, instead of
// creating an empty one for commands that only read.
func (e *IO) MustExist() error {
	if store.IsPostgres(e.DB) {
		return nil // a server: the store's open says when it holds no campaign
	}
	if _, err := os.Stat(e.DB); err != nil {
		return fmt.Errorf("no database at %s: import turns first (m3eval import FILE), or pass --db", e.DB)
	}
	return nil
}

// OpenStore opens --db and records the rubric r in use (none when r is nil or the store is
// read-only).
func (e *IO) OpenStore(ctx context.Context, r *rubric.Rubric, so store.Options) (*store.Store, error) {
	s, err := store.Open(ctx, e.DB, so)
	if err != nil {
		return nil, err
	}
	if r != nil && !so.ReadOnly {
		if err := s.RememberRubric(ctx, r.Version, r.Source); err != nil {
			s.Close()
			return nil, err
		}
	}
	return s, nil
}

// OpenDB is the opening the commands that work on a database share: the database must exist
// (unless create: import makes one), the rubric is --rubric or the guide's, and the store is
// opened with the rubric recorded (unless read-only).
func (e *IO) OpenDB(ctx context.Context, so store.Options, create bool) (*store.Store, *rubric.Rubric, error) {
	if !create {
		if err := e.MustExist(); err != nil {
			return nil, nil, err
		}
	}
	r, err := e.LoadRubric()
	if err != nil {
		return nil, nil, err
	}
	s, err := e.OpenStore(ctx, r, so)
	return s, r, err
}
