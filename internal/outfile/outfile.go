// Package outfile is m3eval's one writer of files that must appear whole or not at all. Write
// writes a command's output (-o FILE): standard output, a stream into a FIFO or device, or a
// regular file replaced atomically, refusing to write over an SQLite database. Replace and
// WriteFile replace any regular file the same way (temporary file beside it, fsync, rename,
// fsync of the directory): the test sets of illusion sample, the images import copies, the
// interval cache, simulate's journal. One writer, so that every such file gets the same
// care; the standard library has no atomic replace, and no small maintained module does
// the directory's fsync as well, so it is written here.
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

// Replace writes what fn produces to the regular file at path, whole or not at all: into a
// temporary file beside it, which is fsynced, closed and renamed over path; then the directory
// is fsynced, so the rename itself survives a power cut. A reader of path sees the old file or
// the new one complete, never a part of it; when fn or a step fails, path is left as it was and
// the temporary file is removed. perm is the file's mode; 0 keeps an existing file's mode and
// gives a new one 0666 less the umask, as a shell's redirection would. Symbolic links are
// not followed: path itself is replaced.
func Replace(path string, perm fs.FileMode, fn func(io.Writer) error) error {
	if perm == 0 {
		if fi, err := os.Lstat(path); err == nil && fi.Mode().IsRegular() {
			perm = fi.Mode().Perm()
		}
	}
	return replaceFile(path, path, perm, fn)
}

// WriteFile is Replace with the file's whole content: os.WriteFile, atomic and durable.
func WriteFile(path string, data []byte, perm fs.FileMode) error {
	return Replace(path, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// tempMark is in the name of every temporary file Replace makes: ".<name>.tmp-<random>".
const tempMark = ".tmp-"

// IsTemp tells whether name (a base name) is one of Replace's temporary files, which a killed
// process leaves behind; a directory of such files may remove the stale ones.
func IsTemp(name string) bool {
	return strings.HasPrefix(name, ".") && strings.Contains(name, tempMark)
}

// step, when set (by this package's tests), is told each durable step of replaceFile in order:
// "sync file", "rename", "sync dir". The order is the guarantee, and a test cannot otherwise
// see an fsync.
var step func(string)

func stepDone(s string) {
	if step != nil {
		step(s)
	}
}

// replaceFile writes a temporary file beside target and renames it into place. mode 0 leaves
// the mode to the umask (the file is created 0666 &^ umask, as a shell's redirection would).
func replaceFile(path, target string, mode fs.FileMode, fn func(io.Writer) error) (err error) {
	dir := filepath.Dir(target)
	tmp, err := createTemp(dir, "."+filepath.Base(target)+tempMark)
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
	stepDone("sync file")
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("output %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), target); err != nil {
		return fmt.Errorf("output %s: %w", path, err)
	}
	stepDone("rename")
	if err := SyncDir(dir); err != nil {
		return fmt.Errorf("output %s: %w", path, err)
	}
	stepDone("sync dir")
	return nil
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

// SyncDir makes what was created, renamed or removed in dir durable (a directory's entries
// reach the disk only when the directory itself is fsynced). A file system that cannot sync
// a directory is not an error.
func SyncDir(dir string) error {
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
