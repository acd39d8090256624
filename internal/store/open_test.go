package store_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/store/storetest"
)

// TestOpenOpensExactlyThatFile: characters that mean something in an SQLite URI (# ends the
// path, ? starts the parameters, % escapes) are part of the file name.
func TestOpenOpensExactlyThatFile(t *testing.T) {
	storetest.SQLiteOnly(t, "about file names and SQLite URIs")
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
	path := storetest.Path(t)
	storetest.Open(t, path, store.Options{}).Close()
	db := storetest.RawDB(t, path, true)
	for _, q := range []string{`INSERT INTO schema_migrations (version, name, applied_at) VALUES (9999, 'migrations/9999_future.sql', '2030-01-01T00:00:00Z')`,
		`CREATE TABLE future (x INTEGER)`} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
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
	storetest.SQLiteOnly(t, "the PostgreSQL schema has one migration so far: there is no older one to upgrade")
	path := storetest.Path(t)
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

// TestOpenRefusesWhatIsNotADatabase: an empty file given to a reader, a JSONL file given as
// --db by mistake, and another program's SQLite database are refused, and not one byte of
// them changes, nor does a -wal or -shm file appear beside them (issue 24 item 5).
func TestOpenRefusesWhatIsNotADatabase(t *testing.T) {
	storetest.SQLiteOnly(t, "about files that are not SQLite databases")
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.db")
	jsonl := filepath.Join(dir, "turns.jsonl")
	other := filepath.Join(dir, "other.sqlite")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(jsonl, []byte(`{"sample_id":"a_turn_1","user_message":"hi"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite3", other)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('mine')`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	cases := []struct {
		path     string
		readOnly bool
	}{{empty, true}, {jsonl, true}, {jsonl, false}, {other, true}, {other, false}}
	for _, c := range cases {
		before, err := os.ReadFile(c.path)
		if err != nil {
			t.Fatal(err)
		}
		s, err := store.Open(context.Background(), c.path, store.Options{ReadOnly: c.readOnly})
		if err == nil {
			s.Close()
			t.Errorf("%s (read-only %v) was opened", filepath.Base(c.path), c.readOnly)
			continue
		}
		if c.path != jsonl && !errors.Is(err, store.ErrNotDatabase) {
			t.Errorf("%s (read-only %v): %v, want ErrNotDatabase", filepath.Base(c.path), c.readOnly, err)
		}
		after, _ := os.ReadFile(c.path)
		if !bytes.Equal(before, after) {
			t.Errorf("%s (read-only %v) was changed", filepath.Base(c.path), c.readOnly)
		}
		for _, side := range []string{"-wal", "-shm", "-journal"} {
			if _, err := os.Stat(c.path + side); err == nil {
				t.Errorf("%s (read-only %v): %s appeared beside it", filepath.Base(c.path), c.readOnly, side)
			}
		}
	}
}

// TestOpenOnReadOnlyMountSaysReadOnly: writing on a read-only file system fails with a
// sentence that says so, not "no such file or directory". Needs root to mount a tmpfs.
func TestOpenOnReadOnlyMountSaysReadOnly(t *testing.T) {
	storetest.SQLiteOnly(t, "about a read-only file system under an SQLite file")
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here (%v: %s)", err, out)
	}
	defer exec.Command("umount", dir).Run()
	path := filepath.Join(dir, "m3eval.db")
	s := storetest.Open(t, path, store.Options{})
	seed(t, s, []string{"initial"})
	s.Close()
	if out, err := exec.Command("mount", "-o", "remount,ro", dir).CombinedOutput(); err != nil {
		t.Fatalf("remount: %v: %s", err, out)
	}
	for _, p := range []string{path, filepath.Join(dir, "new.db")} {
		_, err := store.Open(context.Background(), p, store.Options{})
		if err == nil || !strings.Contains(err.Error(), "read-only") || strings.Contains(err.Error(), "no such file") {
			t.Errorf("open %s for writing on a read-only mount: %v", filepath.Base(p), err)
		}
	}
	r, err := store.Open(context.Background(), path, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("a reader on a read-only mount: %v", err)
	}
	if st, err := r.Status(context.Background()); err != nil || st.Turns != 1 {
		t.Errorf("status on a read-only mount: %+v %v", st, err)
	}
	r.Close()
}
