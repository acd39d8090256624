// Package testkit holds the fixtures and helpers that the tests of several packages share:
// opening a database with the guide's rubric, importing files through the importer, the
// estimate fixture, the demo labels, the model judge's fake endpoint. They were copied into
// each package when issue #28 moved the engine checks beside the code they check; here they
// are written once. Only tests import it (internal/docscheck checks that no other code does).
package testkit

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/m3bench/m3eval/annotations"
	"github.com/m3bench/m3eval/internal/importer"
	"github.com/m3bench/m3eval/internal/rubric"
	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/usage"
)

// ErrFlag marks an error of flag parsing in a test's run of a command (RunCommand): the
// command reports it as a usage error too.
var ErrFlag = errors.New("flag")

// IsUsage says whether the command would exit 2 for err.
func IsUsage(err error) bool { return errors.Is(err, usage.Err) || errors.Is(err, ErrFlag) }

// DefaultRubric is the guide's rubric, the one the commands use without --rubric.
func DefaultRubric(t testing.TB) *rubric.Rubric {
	t.Helper()
	r, err := rubric.Load("", nil, annotations.DefaultRubric)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// OpenDB opens (or creates) the database at path with the guide's rubric recorded unless
// read-only, as the commands do. The test's cleanup does not close it: the caller does.
func OpenDB(t testing.TB, path string, o store.Options) (*store.Store, *rubric.Rubric) {
	t.Helper()
	return OpenDBWith(t, path, o, DefaultRubric(t))
}

// OpenDBWith is OpenDB under rubric r (m3eval --rubric FILE).
func OpenDBWith(t testing.TB, path string, o store.Options, r *rubric.Rubric) (*store.Store, *rubric.Rubric) {
	t.Helper()
	s, err := store.Open(context.Background(), path, o)
	if err != nil {
		t.Fatal(err)
	}
	if !o.ReadOnly {
		if err := s.RememberRubric(context.Background(), r.Version, r.Source); err != nil {
			t.Fatal(err)
		}
	}
	return s, r
}

// ImportFiles is m3eval import [--annotator NAME] FILE... (no files: --demo); it fails the
// test on an error.
func ImportFiles(t testing.TB, db, annotator string, files ...string) {
	t.Helper()
	s, r := OpenDB(t, db, store.Options{})
	defer s.Close()
	o := importer.Options{Rubric: r, Annotator: annotator, DB: db, Out: io.Discard}
	if err := importer.New(s, o).Run(context.Background(), files, len(files) == 0); err != nil {
		t.Fatalf("import %v: %v", files, err)
	}
}

// ImportScores is m3eval import-scores --judge NAME FILE...; it fails the test on an error.
func ImportScores(t testing.TB, db, judge string, files ...string) {
	t.Helper()
	s, r := OpenDB(t, db, store.Options{})
	defer s.Close()
	if err := importer.Scores(context.Background(), s, files, importer.ScoreOptions{Rubric: r, Judge: judge, Out: io.Discard}); err != nil {
		t.Fatalf("import-scores %v: %v", files, err)
	}
}
