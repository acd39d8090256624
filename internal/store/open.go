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
	"sort"
	"strconv"
	"strings"
	"syscall"
)

// ErrNewerSchema marks a database written by a newer m3eval: this one does not know its
// schema, so it neither reads nor writes it.
var ErrNewerSchema = errors.New("written by a newer m3eval")

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

// latestVersion is the highest SQLite migration number this binary knows.
func latestVersion() (int, error) {
	names, err := migrationNames(migrationFS, "migrations")
	if err != nil || len(names) == 0 {
		return 0, err
	}
	return names[len(names)-1].version, nil
}

type migrationName struct {
	version int
	name    string // migrations/NNNN_what.sql
}

// migrationFS is the store's dialect's embedded migrations.
func (s *Store) migrationFS() embed.FS {
	if s.d.pg {
		return pgMigrationFS
	}
	return migrationFS
}

// migrationNames lists the store's dialect's embedded migrations in order.
func (s *Store) migrationNames() ([]migrationName, error) {
	if s.d.pg {
		return migrationNames(pgMigrationFS, "migrations/postgres")
	}
	return migrationNames(migrationFS, "migrations")
}

// migrationNames lists the migrations in dir of fsys in order.
func migrationNames(fsys fs.FS, dir string) ([]migrationName, error) {
	names, err := fs.Glob(fsys, dir+"/*.sql")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	out := make([]migrationName, 0, len(names))
	for _, name := range names {
		base := strings.TrimPrefix(name, dir+"/")
		version, err := strconv.Atoi(strings.SplitN(base, "_", 2)[0])
		if err != nil {
			return nil, fmt.Errorf("migrate: %s: the name must start with a number", base)
		}
		out = append(out, migrationName{version, name})
	}
	return out, nil
}

// schemaState is what a database's recorded migrations say.
type schemaState struct {
	version int  // the highest applied, 0 for none
	pending bool // this binary has migrations the database lacks
}

// checkSchema reads the database's schema version without writing anything, and refuses a
// database from a newer m3eval (ErrNewerSchema), before any write can touch it.
func checkSchema(ctx context.Context, path string) (schemaState, error) {
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
	applied := map[int]bool{}
	rows, err := db.QueryContext(ctx, `SELECT version FROM schema_migrations`)
	if err != nil {
		return st, err
	}
	defer rows.Close()
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			return st, err
		}
		applied[v] = true
		st.version = max(st.version, v)
	}
	if err := rows.Err(); err != nil {
		return st, err
	}
	latest, err := latestVersion()
	if err != nil {
		return st, err
	}
	if st.version > latest {
		return st, fmt.Errorf("%w (schema version %d; this m3eval knows up to %d): use that m3eval or a newer one; nothing was changed", ErrNewerSchema, st.version, latest)
	}
	for _, m := range known {
		if !applied[m.version] {
			st.pending = true
		}
	}
	return st, nil
}

// readable reads the schema, which is where a read-only open that cannot work (no -shm to be
// had) fails: the open itself is lazy.
func readable(ctx context.Context, db *sql.DB) error {
	var n int
	return db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master`).Scan(&n)
}
