// Package storetest is the one home of the test fixtures that need a database: a store on a
// real SQLite file in the test's temporary directory (never :memory:, where each pooled
// connection would get its own empty database), closed when the test ends, and the same
// store with the demo episodes imported. Only tests import it.
package storetest

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/m3bench/m3eval/annotations"
	"github.com/m3bench/m3eval/internal/ingest"
	"github.com/m3bench/m3eval/internal/rubric"
	"github.com/m3bench/m3eval/internal/store"
)

// Open opens a store on path, or on m3eval.db in the test's temporary directory when path
// is "", and closes it when the test ends. Its clock starts at 2026-03-01 09:00 UTC and
// advances a second on every reading (see Clock), so stored times are deterministic.
func Open(tb testing.TB, path string, opts store.Options) *store.Store {
	tb.Helper()
	if path == "" {
		path = filepath.Join(tb.TempDir(), "m3eval.db")
	}
	s, err := store.Open(context.Background(), path, opts)
	if err != nil {
		tb.Fatal(err)
	}
	s.Now = Clock()
	tb.Cleanup(func() { s.Close() })
	return s
}

// Clock returns a clock that starts at 2026-03-01 09:00 UTC and advances a second on every
// reading. It is safe for concurrent use: the screens save from their own goroutines.
func Clock() func() time.Time {
	var mu sync.Mutex
	t := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		t = t.Add(time.Second)
		return t
	}
}

// Rubric is the annotation guide's rubric, which m3eval uses when --rubric is not given.
func Rubric(tb testing.TB) *rubric.Rubric {
	tb.Helper()
	r, err := rubric.Parse(annotations.DefaultRubric)
	if err != nil {
		tb.Fatal(err)
	}
	return r
}

// Demo opens a store as Open does (path "": in the test's temporary directory) and imports
// the demo episodes (annotations/demo/episodes.jsonl) into it, as m3eval import --demo does.
func Demo(tb testing.TB, path string) *store.Store {
	tb.Helper()
	s := Open(tb, path, store.Options{})
	ImportDemo(tb, s)
	return s
}

// ImportDemo imports the demo episodes into s in one transaction.
func ImportDemo(tb testing.TB, s *store.Store) {
	tb.Helper()
	f, err := annotations.Demo.Open("demo/episodes.jsonl")
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	src := ingest.NewReader("episodes.jsonl", f)
	if _, err := Import(s, "episodes.jsonl", src, ingest.LabelOptions{Rubric: Rubric(tb)}); err != nil {
		tb.Fatal(err)
	}
}

// Import imports the records of src into s in one transaction, as m3eval import does: on
// an error nothing is written.
func Import(s *store.Store, name string, src ingest.Source, lo ingest.LabelOptions) (ingest.Counts, error) {
	ctx := context.Background()
	tx, err := s.BeginImport(ctx, store.ImportOptions{})
	if err != nil {
		return ingest.Counts{}, err
	}
	defer tx.Rollback()
	c, err := ingest.ImportFrom(ctx, tx, name, src, lo)
	if err != nil {
		return c, err
	}
	return c, tx.Commit()
}
