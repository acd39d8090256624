// Package outfile writes a command's output (-o FILE) whole or not at all: standard output,
// a stream into a FIFO or device, or a regular file replaced atomically (temporary file,
// fsync, rename). It refuses to write over an SQLite database.
package outfile

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// sqliteSuffixes are the files SQLite keeps beside a database.
var sqliteSuffixes = []string{"", "-wal", "-shm", "-journal"}

// Write writes what fn produces to path:
//   - "" or "-": standard output;
//   - a FIFO, a terminal, /dev/null or another non-regular file: streamed into it, as a shell's
//     redirection would (replacing it would turn /dev/null into a regular file);
//   - a regular file (new or existing): written to a temporary file beside it, fsynced, renamed
//     over it and the directory fsynced, so readers see the whole old file or the whole new one,
//     even after a power cut. A new file gets the mode the umask gives; a replaced one keeps its
//     mode.
//
// It refuses to write over any of the databases in protect or the files SQLite keeps beside
// them (compared by file identity, so another spelling of the path is caught too), and over any
// other SQLite database.
func Write(path string, stdout io.Writer, protect []string, fn func(io.Writer) error) error {
	if path == "" || path == "-" {
		return streamTo(stdout, fn)
	}
	// Stat follows links the way open does, /proc/self/fd/1 (/dev/stdout) included.
	fi, err := os.Stat(path)
	switch {
	case err == nil && fi.IsDir():
		return fmt.Errorf("output %s: is a directory", path)
	case err == nil && !fi.Mode().IsRegular():
		return streamToFile(path, fn)
	case err == nil && sameAsStdout(fi):
		return streamTo(stdout, fn)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("output %s: %w", path, err)
	}
	var mode fs.FileMode // 0: a new file, the umask decides
	if err == nil {
		mode = fi.Mode().Perm()
	}
	target, err := resolveOutput(path)
	if err != nil {
		return err
	}
	if err := refuseDatabase(path, target, protect); err != nil {
		return err
	}
	return replaceFile(path, target, mode, fn)
}

// resolveOutput follows symbolic links, so a link's target is replaced, not the link.
func resolveOutput(path string) (string, error) {
	target, err := filepath.EvalSymlinks(path)
	switch {
	case err == nil:
		return target, nil
	case errors.Is(err, fs.ErrNotExist):
		// A new file (or a dangling link, which then gets replaced by the file).
		dir, err := filepath.EvalSymlinks(filepath.Dir(path))
		if err != nil {
			return "", fmt.Errorf("output %s: %w", path, err)
		}
		return filepath.Join(dir, filepath.Base(path)), nil
	default:
		return "", fmt.Errorf("output %s: %w", path, err)
	}
}

// refuseDatabase fails when target is one of the protected databases, a file SQLite keeps
// beside one, or any existing SQLite database.
func refuseDatabase(path, target string, protect []string) error {
	tfi, terr := os.Stat(target)
	dfi, derr := os.Stat(filepath.Dir(target))
	for _, db := range protect {
		for _, suffix := range sqliteSuffixes {
			p := db + suffix
			pfi, err := os.Stat(p)
			same := err == nil && terr == nil && os.SameFile(pfi, tfi)
			if !same && derr == nil && filepath.Base(p) == filepath.Base(target) {
				// Not there yet (a -wal between sessions): the same name in the same directory.
				if pdi, err := os.Stat(filepath.Dir(p)); err == nil && os.SameFile(pdi, dfi) {
					same = true
				}
			}
			if same {
				return fmt.Errorf("output %s is the database --db %s%s: refusing to write over it (a typo in -o?)", path, db, describeSuffix(suffix))
			}
		}
	}
	if terr == nil && tfi.Mode().IsRegular() && isSQLite(target) {
		return fmt.Errorf("output %s is an SQLite database: refusing to write over it (remove it first if you mean to)", path)
	}
	return nil
}

func describeSuffix(suffix string) string {
	if suffix == "" {
		return ""
	}
	return " (its " + strings.TrimPrefix(suffix, "-") + " file)"
}

// isSQLite tells whether a file starts with SQLite's header.
func isSQLite(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 16)
	n, _ := io.ReadFull(f, head)
	return bytes.Equal(head[:n], []byte("SQLite format 3\x00"))
}

// sameAsStdout tells whether fi is the file standard output already writes to (-o
// /dev/stdout when the shell redirected it to a file).
func sameAsStdout(fi fs.FileInfo) bool {
	sfi, err := os.Stdout.Stat()
	return err == nil && os.SameFile(fi, sfi)
}

func streamTo(w io.Writer, fn func(io.Writer) error) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	if err := fn(bw); err != nil {
		return err
	}
	return bw.Flush()
}

// streamToFile writes into an existing non-regular file: opened for writing, neither created
// nor truncated nor replaced.
func streamToFile(path string, fn func(io.Writer) error) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("output %s: %w", path, err)
	}
	if err := streamTo(f, fn); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("output %s: %w", path, err)
	}
	return nil
}

// replaceFile writes a temporary file beside target and renames it into place. mode 0 leaves
// the mode to the umask (the file is created 0666 &^ umask, as a shell's redirection would).
func replaceFile(path, target string, mode fs.FileMode, fn func(io.Writer) error) (err error) {
	dir := filepath.Dir(target)
	tmp, err := createTemp(dir, "."+filepath.Base(target)+".tmp-")
	if err != nil {
		return fmt.Errorf("output %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if mode != 0 {
		if err := tmp.Chmod(mode); err != nil {
			return fmt.Errorf("output %s: %w", path, err)
		}
	}
	if err := streamTo(tmp, fn); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("output %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("output %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), target); err != nil {
		return fmt.Errorf("output %s: %w", path, err)
	}
	return syncDir(dir)
}

// createTemp is os.CreateTemp with mode 0666 instead of 0600, so the umask decides who may
// read the output, as for any file a shell creates.
func createTemp(dir, prefix string) (*os.File, error) {
	for range 100 {
		var b [8]byte
		rand.Read(b[:])
		f, err := os.OpenFile(filepath.Join(dir, prefix+hex.EncodeToString(b[:])), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
	}
	return nil, fmt.Errorf("cannot create a temporary file in %s", dir)
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}
