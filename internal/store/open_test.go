package store_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/store/storetest"
)

// TestOpenOpensExactlyThatFile: characters that mean something in an SQLite URI (# ends the
// path, ? starts the parameters, % escapes) are part of the file name.
func TestOpenOpensExactlyThatFile(t *testing.T) {
	dir := t.TempDir()
	names := []string{"study#1.db", "study#2.db", "what?.db", "100%.db", "50%25.db", "a&mode=ro.db", "sp ace.db"}
	for i, name := range names {
		s := storetest.Open(t, filepath.Join(dir, name), store.Options{})
		seed(t, s, strings.Split(strings.Repeat("initial,", i+1), ",")[:i+1])
		s.Close()
	}
	for i, name := range names {
		s := storetest.Open(t, filepath.Join(dir, name), store.Options{ReadOnly: true})
		st, err := s.Status(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if st.Turns != i+1 {
			t.Errorf("%s holds %d turns, want %d", name, st.Turns, i+1)
		}
	}
	entries, _ := os.ReadDir(dir)
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	for _, stray := range []string{"study", "what", "100", "50%.db", "a"} {
		if _, err := os.Stat(filepath.Join(dir, stray)); err == nil {
			t.Errorf("a file %q was created; the directory holds %v", stray, got)
		}
	}
}

// TestOpenRefusesNewerSchema: a database from a newer m3eval is refused with a sentence, and
// not one byte of it is written, by writers and readers alike.
func TestOpenRefusesNewerSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "future.db")
	storetest.Open(t, path, store.Options{}).Close()
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO schema_migrations (version, name, applied_at) VALUES (9999, 'migrations/9999_future.sql', '2030-01-01T00:00:00Z');
		CREATE TABLE future (x)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	before, _ := os.ReadFile(path)
	for _, opts := range []store.Options{{}, {Durable: true}, {ReadOnly: true}} {
		_, err := store.Open(context.Background(), path, opts)
		if !errors.Is(err, store.ErrNewerSchema) || !strings.Contains(err.Error(), "schema version 9999") {
			t.Errorf("open %+v: %v", opts, err)
		}
	}
	after, _ := os.ReadFile(path)
	if !bytes.Equal(before, after) {
		t.Error("the newer database was written to")
	}
	if fi, err := os.Stat(path + "-wal"); err == nil && fi.Size() > 0 {
		t.Errorf("a WAL of %d bytes was left", fi.Size())
	}
}

// TestReadOnlyOpenUpgradesAnOldDatabaseFirst: a reader of a database from an older m3eval
// (a migration missing) still gets today's schema, when the file can be written.
func TestReadOnlyOpenUpgradesAnOldDatabaseFirst(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	storetest.Open(t, path, store.Options{}).Close()
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`DELETE FROM schema_migrations WHERE version = 2; DROP TABLE judge_scores; DROP TABLE judges`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	s := storetest.Open(t, path, store.Options{ReadOnly: true})
	if _, err := s.Judges(context.Background()); err != nil {
		t.Fatalf("the read-only open did not upgrade: %v", err)
	}
	if _, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "missing.db"), store.Options{ReadOnly: true}); err == nil {
		t.Error("a read-only open of a missing file succeeded")
	}
}
