package outfile_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/m3bench/m3eval/internal/outfile"
)

func write(text string) func(io.Writer) error {
	return func(w io.Writer) error { _, err := io.WriteString(w, text); return err }
}

func TestWriteToStandardOutput(t *testing.T) {
	for _, path := range []string{"", "-"} {
		var out bytes.Buffer
		if err := outfile.Write(path, &out, nil, write("hello\n")); err != nil || out.String() != "hello\n" {
			t.Fatalf("%q: %q %v", path, out.String(), err)
		}
	}
}

func TestWriteReplacesWholeOrNotAtAll(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out.json")
	if err := os.WriteFile(p, []byte("old"), 0o640); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := outfile.Write(p, io.Discard, nil, func(w io.Writer) error {
		io.WriteString(w, "half")
		return boom
	})
	if err != boom {
		t.Fatalf("a failed write: %v", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "old" {
		t.Fatalf("a failed write left %q", b)
	}
	if err := outfile.Write(p, io.Discard, nil, write("new")); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(p)
	if b, _ := os.ReadFile(p); string(b) != "new" || err != nil || fi.Mode().Perm() != 0o640 {
		t.Fatalf("replaced file: %q, mode %v, %v", b, fi.Mode(), err)
	}
	// No temporary file is left behind, after success or failure.
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("directory holds %d files", len(ents))
	}
	if err := outfile.Write(dir, io.Discard, nil, write("x")); err == nil || err.Error() != "output "+dir+": is a directory" {
		t.Fatalf("a directory: %v", err)
	}
}

func TestWriteRefusesDatabases(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "m3eval.db")
	if err := os.WriteFile(db, []byte("SQLite format 3\x00 and pages"), 0o644); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other.sqlite")
	if err := os.WriteFile(other, []byte("SQLite format 3\x00"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, want string }{
		{db, "is the database --db " + db + ": refusing"},
		{filepath.Join(dir, ".", "m3eval.db"), "is the database --db " + db + ": refusing"},
		{db + "-wal", "is the database --db " + db + " (its wal file): refusing"}, // not there yet
		{other, "is an SQLite database: refusing to write over it"},
	} {
		err := outfile.Write(tc.path, io.Discard, []string{db}, write("x"))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want %q", tc.path, err, tc.want)
		}
	}
	if b, _ := os.ReadFile(db); !strings.HasPrefix(string(b), "SQLite format 3") {
		t.Fatal("the database was overwritten")
	}
	if _, err := os.Stat(db + "-wal"); err == nil {
		t.Fatal("a -wal file was created")
	}
}

func TestWriteStreamsIntoDevices(t *testing.T) {
	if err := outfile.Write(os.DevNull, io.Discard, nil, write("x")); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(os.DevNull); err != nil || fi.Mode().IsRegular() {
		t.Fatalf("%s became a regular file: %v", os.DevNull, err)
	}
}
