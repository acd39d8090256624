// Package golden compares test output with golden files, the one golden-file helper of the
// tree. Run a package's tests with -update to rewrite its golden files from the output, then
// review the diff before committing.
//
// The -update flag is the one teatest registers through charmbracelet/x/exp/golden: this
// package imports that package so the flag exists exactly once in every test binary, whether
// or not the binary also uses teatest.
package golden

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/aymanbagabas/go-udiff"
	_ "github.com/charmbracelet/x/exp/golden" // registers -update (see the package comment)
)

// Updating reports whether the tests run with -update.
func Updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// Path is testdata/<test name>.golden, the file of a test that has one golden output.
func Path(tb testing.TB) string {
	return filepath.Join("testdata", tb.Name()+".golden")
}

// Assert fails the test (and carries on) when got differs from the file at path, showing a
// unified diff; with -update it writes got to path first, creating its directory.
func Assert(tb testing.TB, path string, got []byte) {
	tb.Helper()
	if Updating() {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("%v (run go test -run '%s' -update to create it)", err, tb.Name())
	}
	if !bytes.Equal(got, want) {
		tb.Errorf("output differs from %s (run with -update and review the diff):\n%s", path,
			udiff.Unified(path, "got", string(want), string(got)))
	}
}

// AssertString is Assert for a string.
func AssertString(tb testing.TB, path, got string) {
	tb.Helper()
	Assert(tb, path, []byte(got))
}
