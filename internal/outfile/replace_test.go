package outfile_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/m3bench/m3eval/internal/outfile"
)

// TestReplaceNeverShowsAHalfFile: while Replace writes, a reader of the name finds nothing (a
// new file) or the old file whole; a second process reading in a loop while the file is
// replaced again and again only ever reads one complete version.
func TestReplaceNeverShowsAHalfFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "set.jsonl")
	err := outfile.Replace(p, 0o644, func(w io.Writer) error {
		if _, err := io.WriteString(w, "first half\n"); err != nil {
			return err
		}
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the file is there while it is written: %v", err)
		}
		_, err := io.WriteString(w, "second half\n")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "first half\nsecond half\n" {
		t.Fatalf("%q", b)
	}
	if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o644 {
		t.Fatalf("mode %v %v", fi.Mode(), err)
	}

	// Versions large enough that a write takes many system calls, each line naming its version.
	version := func(v int) []byte {
		return bytes.Repeat([]byte(fmt.Sprintf("version %04d of a line long enough to matter\n", v)), 20000)
	}
	if err := outfile.WriteFile(p, version(0), 0); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var reads int
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			b, err := os.ReadFile(p)
			if err != nil {
				t.Errorf("read: %v", err)
				return
			}
			reads++
			v := 0
			if _, err := fmt.Sscanf(string(b), "version %d", &v); err != nil || !bytes.Equal(b, version(v)) {
				t.Errorf("read %d bytes that are not one whole version (first line %q)", len(b), b[:min(len(b), 50)])
				return
			}
		}
	}()
	for v := 1; v <= 30; v++ {
		if err := outfile.WriteFile(p, version(v), 0); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	if reads == 0 {
		t.Fatal("the reader never read: the test proved nothing")
	}
	if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o644 {
		t.Fatalf("perm 0 changed the existing file's mode: %v %v", fi.Mode(), err)
	}
}

// TestReplaceFailureLeavesTheOldFile: a failing writer leaves the old file and no temporary
// file; IsTemp names the temporary files a killed process would leave.
func TestReplaceFailureLeavesTheOldFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "cache.json")
	if err := outfile.WriteFile(p, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	var tmpName string
	boom := errors.New("boom")
	err := outfile.Replace(p, 0, func(w io.Writer) error {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return err
		}
		for _, e := range entries {
			if outfile.IsTemp(e.Name()) {
				tmpName = e.Name()
			}
		}
		io.WriteString(w, "half")
		return boom
	})
	if err != boom {
		t.Fatalf("err %v, want the writer's", err)
	}
	if tmpName == "" {
		t.Fatal("no temporary file IsTemp recognizes while writing")
	}
	if b, _ := os.ReadFile(p); string(b) != "old" {
		t.Fatalf("the old file became %q", b)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("left behind: %v", entries)
	}
	if outfile.IsTemp("cache.json") || outfile.IsTemp("a.tmp-1") || !outfile.IsTemp(tmpName) {
		t.Error("IsTemp names the wrong files")
	}
	if err := outfile.WriteFile(filepath.Join(dir, "no", "such"), []byte("x"), 0); err == nil {
		t.Error("a write into a missing directory succeeded")
	}
}
