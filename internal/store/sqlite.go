package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// This file opens an SQLite database: the checks on the file before anything is written, the
// connection settings (pragmas) of the read and the write pool, and the schema's version.

//go:embed migrations/*.sql
var migrationFS embed.FS

// newPageSize is the page size of the databases m3eval creates: 16 KB, not SQLite's 4 KB. An
// import then writes a quarter as many pages (BenchmarkImport1M: about +17% records/s), while
// an annotator's save, which writes a few pages to the WAL whole, stays well under a
// millisecond (BenchmarkSave). Existing files keep theirs: WAL mode fixes it.
const newPageSize = 16384

// openSQLite opens the SQLite database at path, creating it or migrating its schema when
// needed.
func openSQLite(ctx context.Context, path string, opts Options) (*Store, error) {
	if err := CheckAddress(path); err != nil {
		return nil, err
	}
	if opts.ReadOnly {
		fi, err := os.Stat(path)
		if err != nil {
			return nil, fmt.Errorf("open %s: %w", path, err) // never created by a reader
		}
		if fi.Size() == 0 {
			// A reader never makes a database of a file: it is left as it is.
			return nil, fmt.Errorf("open %s: %w: the file is empty; nothing was changed (m3eval import FILE --db %s makes it one)", path, ErrNotDatabase, path)
		}
	} else if err := canWrite(path); err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	st, err := checkSchemaSQLite(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if opts.ReadOnly && st.pending {
		if err := upgrade(ctx, path, path); err != nil {
			return nil, err
		}
	}
	if !opts.ReadOnly {
		if err := create(ctx, path); err != nil {
			return nil, fmt.Errorf("open %s: %w", path, err)
		}
	}
	db, err := sql.Open("sqlite3", dsn(path, opts, false))
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	wdb, err := sql.Open("sqlite3", dsn(path, opts, true))
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if opts.Writers > 0 {
		wdb.SetMaxOpenConns(opts.Writers)
	}
	s := newStore(db, wdb, path, opts)
	s.interactive = opts.Durable && !opts.ReadOnly
	if err := db.PingContext(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	switch {
	case opts.ReadOnly:
		if err := readable(ctx, db); err != nil {
			s.Close()
			return nil, fmt.Errorf("open %s: %w", path, err)
		}
	case st.pending:
		// Only then is the write lock taken: an import running elsewhere cannot stop
		// annotate or score from opening a current database.
		if err := s.migrate(ctx); err != nil {
			s.Close()
			return nil, fmt.Errorf("open %s: %w", path, err)
		}
	}
	return s, nil
}

// readBusyTimeout is SQLite's busy wait for reads. In WAL mode a read waits only in rare
// moments (another process recovering the WAL after a crash), never for a writer.
const readBusyTimeout = "5000"

// dsn is the connection string of the read or the write pool.
func dsn(path string, opts Options, write bool) string {
	q := url.Values{}
	q.Set("_foreign_keys", "on")
	if write {
		q.Set("_busy_timeout", "0") // beginWrite waits, polling
		q.Set("_txlock", "immediate")
	} else {
		q.Set("_busy_timeout", readBusyTimeout)
		q.Set("_txlock", "deferred")
	}
	if opts.ReadOnly {
		// No journal mode to set: the file is only read.
		readOnlyParams(path, q)
	} else {
		// rw, not SQLite's default rwc: create made the file, and a connection the pool opens
		// later must not make an empty one where the file was moved or deleted from under a
		// running annotator (its saves would then fail as "no such table", retried forever).
		q.Set("mode", "rw")
		q.Set("_journal_mode", "WAL")
	}
	if opts.Durable {
		q.Set("_synchronous", "FULL")
	} else {
		q.Set("_synchronous", "NORMAL")
	}
	return fileURI(path, q)
}

// fileURI turns a file path into the SQLite URI that opens exactly that file. SQLite decodes
// %HH in a URI's path and ends the path at '?' or '#', so "study#1.db" pasted as is would open
// "study"; those three characters are escaped. A path that starts with "//" would name a host:
// it is made absolute first, like any path. (Written by hand: go-sqlite3 takes the DSN as
// SQLite does and offers no escaping function.)
func fileURI(path string, q url.Values) string {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	r := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23")
	uri := "file:" + r.Replace(path)
	if len(q) > 0 {
		uri += "?" + q.Encode()
	}
	return uri
}

// readOnlyParams are the URI parameters of a read-only open. In WAL mode even a reader needs
// the -shm file; where it cannot be created (a read-only directory or file system) and there
// is no -wal file that could hold newer pages, no writer can be at work, and the file is opened
// immutable: SQLite then reads it as a plain file.
func readOnlyParams(path string, q url.Values) {
	q.Set("mode", "ro")
	if canCreateIn(filepath.Dir(path)) {
		return
	}
	if fi, err := os.Stat(path + "-wal"); err == nil && fi.Size() > 0 {
		return
	}
	if _, err := os.Stat(path + "-shm"); err == nil {
		return // a reader can share the existing one
	}
	q.Set("immutable", "1")
}

// canWrite tells, before anything is opened for writing, why path cannot be written: a
// read-only file system or a missing permission. SQLite itself only says "unable to open
// database file: no such file or directory" then. A database in WAL mode needs its
// directory too, for the -wal and -shm files.
func canWrite(path string) error {
	const wOK = 2
	for _, p := range []string{path, filepath.Dir(path)} {
		switch err := syscall.Access(p, wOK); {
		case errors.Is(err, syscall.EROFS):
			return fmt.Errorf("%s is on a read-only file system: nothing can be written there (status, export and score only read)", p)
		case errors.Is(err, syscall.EACCES):
			return fmt.Errorf("no permission to write %s", p)
		}
	}
	return nil
}

// canCreateIn tells whether this process may create files in dir: access(2) asks the kernel,
// which knows about read-only mounts and, for non-root users, permissions.
func canCreateIn(dir string) bool {
	const wOK = 2
	return syscall.Access(dir, wOK) == nil
}

// create gives a database that does not exist yet its page size. It has to come before WAL
// mode, which writes the file's header, so it cannot be one of the connection's settings.
func create(ctx context.Context, path string) error {
	fi, err := os.Stat(path)
	switch {
	case err == nil && fi.Size() > 0:
		return nil // a database already
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return nil // the real open reports on it
	}
	db, err := sql.Open("sqlite3", fileURI(path, nil))
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = db.ExecContext(ctx, fmt.Sprintf(`PRAGMA page_size = %d; PRAGMA journal_mode = WAL`, newPageSize))
	return err
}

// checkSchemaSQLite reads the schema version of the file at path on a read-only connection
// of its own. It refuses a database from a newer m3eval (ErrNewerSchema), or another
// program's, before any write can touch it.
func checkSchemaSQLite(ctx context.Context, path string) (schemaState, error) {
	var st schemaState
	if fi, err := os.Stat(path); err != nil || fi.Size() == 0 {
		st.pending = true // created by the open
		return st, nil
	}
	q := url.Values{}
	readOnlyParams(path, q)
	db, err := sql.Open("sqlite3", fileURI(path, q))
	if err != nil {
		return st, err
	}
	defer db.Close()
	var n int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'`).Scan(&n); err != nil {
		return st, err
	}
	known, err := migrationNames(migrationFS, "migrations")
	if err != nil {
		return st, err
	}
	if n == 0 {
		// No m3eval schema. A database m3eval began to create has no tables yet; one with
		// tables belongs to another program, and m3eval writes none of its own into it.
		var tables int
		if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master`).Scan(&tables); err != nil {
			return st, err
		}
		if tables > 0 {
			return st, fmt.Errorf("%w: an SQLite database of another program (it has no m3eval tables); nothing was changed", ErrNotDatabase)
		}
		st.pending = len(known) > 0
		return st, nil
	}
	applied, err := appliedVersions(ctx, db)
	if err != nil {
		return st, err
	}
	return schemaOf(applied, known)
}

// readable reads the schema, which is where a read-only open that cannot work (no -shm to be
// had) fails: the open itself is lazy.
func readable(ctx context.Context, db *sql.DB) error {
	var n int
	return db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master`).Scan(&n)
}
