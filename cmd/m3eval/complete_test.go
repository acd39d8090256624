package main

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/m3bench/m3eval/internal/store"
)

// TestCompleteFromDatabase: a flag declared with names() completes from the database --db
// names; a name with a control character is left out. (Moved from cmdutil, which imports
// no store now.)
func TestCompleteFromDatabase(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "c.db")
	s, err := store.Open(ctx, path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, judge := range []string{"gpt-4o", "gpt\x1b[2J", "gpt\nrm"} {
		im, err := s.BeginScoreImport(ctx, judge, store.ImportOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := im.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	for _, args := range [][]string{{"score", "--judge", "g"}, {"import-scores", "--judge", "g"}, {"estimate", "--judge", "g"}} {
		got, directive := completions(t, append([]string{"__complete", "--db", path}, args...)...)
		if !slices.Equal(got, []string{"gpt-4o"}) || directive != ":4" {
			t.Errorf("%q completes %q %s", args, got, directive)
		}
	}
}
