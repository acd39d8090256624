package golden

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recorder is a testing.TB that records failures instead of stopping the real test.
type recorder struct {
	testing.TB
	errors []string
	fatal  bool
}

func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
	r.fatal = true
}

func (r *recorder) Helper() {}

func TestAssert(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.golden")
	if err := os.WriteFile(path, []byte("a\nb\nc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := &recorder{TB: t}
	Assert(r, path, []byte("a\nb\nc\n"))
	if len(r.errors) != 0 {
		t.Fatalf("equal output failed: %v", r.errors)
	}
	AssertString(r, path, "a\nB\nc\n")
	if len(r.errors) != 1 || r.fatal || !strings.Contains(r.errors[0], "-b\n+B") || !strings.Contains(r.errors[0], path) {
		t.Fatalf("a changed line: %q", r.errors)
	}
	r = &recorder{TB: t}
	Assert(r, filepath.Join(dir, "missing.golden"), nil)
	if len(r.errors) != 1 || !r.fatal || !strings.Contains(r.errors[0], "-update") {
		t.Fatalf("a missing file: %q", r.errors)
	}
}

func TestUpdate(t *testing.T) {
	if Updating() {
		t.Skip("the tests run with -update")
	}
	path := filepath.Join(t.TempDir(), "sub", "new.golden")
	if err := setUpdate(t, "true"); err != nil {
		t.Fatal(err)
	}
	r := &recorder{TB: t}
	Assert(r, path, []byte("fresh\n"))
	if len(r.errors) != 0 {
		t.Fatalf("update: %v", r.errors)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "fresh\n" {
		t.Fatalf("file %q, %v", b, err)
	}
}

func TestPath(t *testing.T) {
	if got := Path(t); got != filepath.Join("testdata", "TestPath.golden") {
		t.Fatal(got)
	}
}

// setUpdate sets -update for the rest of the test.
func setUpdate(t *testing.T, v string) error {
	f := flag.Lookup("update")
	old := f.Value.String()
	t.Cleanup(func() { f.Value.Set(old) })
	return f.Value.Set(v)
}
