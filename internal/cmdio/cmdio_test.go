package cmdio_test

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/m3bench/m3eval/internal/cmdio"
	"github.com/m3bench/m3eval/internal/progress"
)

// TestWrite: the output goes to Out or whole to the -o file; an -o in a directory that is
// not there, or over the database, is refused and writes nothing; JSON's raw controls are
// escaped.
func TestWrite(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "team.db")
	if err := os.WriteFile(db, []byte("SQLite format 3\x00 not really"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	e := &cmdio.IO{DB: db, Out: &out}
	hello := func(w io.Writer, color bool) error {
		if color {
			t.Error("color on a buffer")
		}
		_, err := io.WriteString(w, "hello \x7f\n")
		return err
	}
	if err := e.Write("", "table", hello); err != nil || out.String() != "hello \x7f\n" {
		t.Errorf("standard output: %q, %v", out.String(), err)
	}
	out.Reset()
	if err := e.Write("", "json", hello); err != nil || out.String() != `hello \u007f`+"\n" {
		t.Errorf("json: %q, %v; want DEL escaped", out.String(), err)
	}
	out.Reset()
	file := filepath.Join(dir, "out.txt")
	if err := e.Write(file, "table", hello); err != nil || out.Len() != 0 {
		t.Fatalf("-o: %v, stdout %q", err, out.String())
	}
	if b, err := os.ReadFile(file); err != nil || string(b) != "hello \x7f\n" {
		t.Errorf("-o file: %q, %v", b, err)
	}
	missing := filepath.Join(dir, "nodir", "out.txt")
	if err := e.Write(missing, "table", hello); err == nil || !strings.Contains(err.Error(), "the directory "+filepath.Dir(missing)+" does not exist") {
		t.Errorf("-o in a missing directory: %v", err)
	}
	if err := e.Write(db, "table", hello); err == nil {
		t.Error("-o over the database was not refused")
	}
	if b, _ := os.ReadFile(db); !strings.HasPrefix(string(b), "SQLite format 3") {
		t.Errorf("the database was written over: %q", b)
	}
}

// TestWithBar: off a terminal the bar draws nothing, the work's output reaches Out, and the
// work's error comes back.
func TestWithBar(t *testing.T) {
	var out, errw bytes.Buffer
	e := &cmdio.IO{Out: &out, Err: &errw}
	err := e.WithBar("score", progress.Unit{Name: "replicates"}, func(report progress.Func, o, _ io.Writer) error {
		report(5, 10)
		_, err := io.WriteString(o, "result\n")
		return err
	})
	if err != nil || out.String() != "result\n" || errw.Len() != 0 {
		t.Errorf("out %q, err %q, %v", out.String(), errw.String(), err)
	}
	want := io.ErrUnexpectedEOF
	if err := e.WithBar("score", progress.Unit{}, func(progress.Func, io.Writer, io.Writer) error { return want }); err != want {
		t.Errorf("the work's error: %v", err)
	}
}
