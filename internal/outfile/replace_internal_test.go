package outfile

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestReplaceSyncsFileThenRenamesThenSyncsDir: the file reaches the disk before the rename
// makes it visible, and the directory is synced after the rename, so neither a crash nor a
// power cut leaves a half file under the name or loses the rename. What a test cannot see is
// the fsync reaching the platters: this checks the order of the steps, each of which returned
// no error (strace would show the calls; it is not needed for the order).
func TestReplaceSyncsFileThenRenamesThenSyncsDir(t *testing.T) {
	var steps []string
	step = func(s string) { steps = append(steps, s) }
	t.Cleanup(func() { step = nil })
	p := filepath.Join(t.TempDir(), "f.json")
	for _, run := range []func() error{
		func() error { return WriteFile(p, []byte("new"), 0o644) },
		func() error { // -o FILE over an existing file takes the same road
			return Write(p, io.Discard, nil, func(w io.Writer) error { _, err := io.WriteString(w, "again"); return err })
		},
	} {
		steps = nil
		if err := run(); err != nil {
			t.Fatal(err)
		}
		if want := []string{"sync file", "rename", "sync dir"}; !slices.Equal(steps, want) {
			t.Fatalf("steps %v, want %v", steps, want)
		}
	}
	if b, err := os.ReadFile(p); err != nil || string(b) != "again" {
		t.Fatalf("%q %v", b, err)
	}
}
