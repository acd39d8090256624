package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// This file holds what opening a database means on both backends: the options, Open, which
// picks the backend, and the migrations. sqlite.go and postgres.go each open their own.

// Options tune how a database is opened.
type Options struct {
	// Durable makes every commit wait for the disk (synchronous=FULL; on PostgreSQL
	// synchronous_commit=on). The annotator uses it so that a saved answer survives a power cut
	// too; a process crash loses nothing either way.
	Durable bool
	// ReadOnly opens the file without the right to write, e.g. for export (on PostgreSQL:
	// sessions with default_transaction_read_only=on, and no campaign is created).
	ReadOnly bool
	// LockWait is how long a write waits for another writer (an import chunk, another
	// annotator) to let go of the database before it fails with ErrBusy; 0 means
	// DefaultLockWait.
	LockWait time.Duration
	// Writers caps the write connections (0: no cap; SQLite only, see openPostgres). m3eval
	// serve, where many sessions of one process save at once, uses 1: saves then queue in the
	// pool in turn instead of all polling SQLite's lock every millisecond, which at 50
	// sessions starved some of them past LockWait (TestServeLoad).
	Writers int
	// Application is the connection's application_name on PostgreSQL ("" is "m3eval"):
	// OtherSessions counts the connections named "m3eval", so a command that must not count
	// its own (copy) names them otherwise.
	Application string
}

// DefaultLockWait is how long a batch write (an import's chunk, judge or import-scores) waits
// for the write lock. One import holds it for one chunk (importChunkTime) at a time, but with
// many writers at once a chunk queues behind all of theirs: 20 parallel label imports on a
// loaded 2-core machine (TestParallelLabelImports, load average 16) saw waits over 5 s. Nobody
// watches a batch write key by key, so it waits long enough for such a queue to drain; the
// annotator waits far less (annotateLockWait) and retries, showing NOT SAVED meanwhile.
const DefaultLockWait = 30 * time.Second

// ErrNotDatabase marks a file that is not an m3eval database (empty, another format, or
// another program's SQLite database). Such a file is refused, and nothing is written to it.
var ErrNotDatabase = errors.New("not an m3eval database")

// ErrNewerSchema marks a database written by a newer m3eval. This m3eval does not know its
// schema, so it neither reads nor writes it.
var ErrNewerSchema = errors.New("written by a newer m3eval")

// Open opens the database at path, creating it or migrating its schema when needed.
//
// A path of the form postgres://… or postgresql://… opens a PostgreSQL database instead
// (postgres.go): the same store, with the same guarantees, on a server.
func Open(ctx context.Context, path string, opts Options) (*Store, error) {
	if isPostgres(path) {
		return openPostgres(ctx, pgDSN(path), opts)
	}
	return openSQLite(ctx, path, opts)
}

// newStore is a store on the read pool db and the write pool wdb, named where in messages.
func newStore(db, wdb *sql.DB, where string, opts Options) *Store {
	s := &Store{db: db, wdb: wdb, path: where, lockWait: opts.LockWait, priorityMax: importPriorityMax, chunkTime: importChunkTime,
		Now: func() time.Time { return time.Now().UTC() }}
	if s.lockWait <= 0 {
		s.lockWait = DefaultLockWait
	}
	return s
}

// upgrade applies pending migrations before a read-only open: the reader's queries need
// today's schema. A database that cannot be written is left as it is, with a sentence.
// addr is the --db value and where its name in messages.
func upgrade(ctx context.Context, addr, where string) error {
	s, err := Open(ctx, addr, Options{})
	if err != nil {
		return fmt.Errorf("open %s: the database needs an upgrade to this m3eval's schema, and it cannot be written here: %w", where, err)
	}
	return s.Close()
}

// migrationName is one embedded migration: its number and its file.
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

// appliedVersions lists the migrations recorded in q's schema_migrations, in order.
func appliedVersions(ctx context.Context, q querier) ([]int, error) {
	rows, err := q.QueryContext(ctx, `SELECT version FROM schema_migrations ORDER BY version`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []int
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// schemaOf compares the migrations a database has applied with the ones this binary knows. A
// database with a migration newer than all of them is refused (ErrNewerSchema), before any
// write can touch it.
func schemaOf(applied []int, known []migrationName) (schemaState, error) {
	var st schemaState
	for _, v := range applied {
		st.version = max(st.version, v)
	}
	latest := 0
	if len(known) > 0 {
		latest = known[len(known)-1].version
	}
	if st.version > latest {
		return st, fmt.Errorf("%w (schema version %d; this m3eval knows up to %d): use that m3eval or a newer one; nothing was changed", ErrNewerSchema, st.version, latest)
	}
	for _, m := range known {
		if !slices.Contains(applied, m.version) {
			st.pending = true
		}
	}
	return st, nil
}

// migrate applies, in order and one transaction each, the embedded migrations not yet
// recorded in schema_migrations.
func (s *Store) migrate(ctx context.Context) error {
	names, err := s.migrationNames()
	if err != nil {
		return err
	}
	tx, err := s.beginWrite(ctx)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	for _, m := range names {
		if err := s.applyMigration(ctx, m.version, m.name); err != nil {
			return fmt.Errorf("migrate %s: %w", strings.TrimPrefix(m.name, "migrations/"), err)
		}
	}
	return nil
}

// applyMigration applies one migration and records it, in one write transaction. It checks
// the record inside that transaction, so that of two processes migrating at once the second
// skips what the first applied.
func (s *Store) applyMigration(ctx context.Context, version int, name string) error {
	tx, err := s.beginWrite(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations WHERE version = ?`, version).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return nil
	}
	body, err := s.migrationFS().ReadFile(name)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, string(body)); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
		version, name, formatTime(s.Now())); err != nil {
		return err
	}
	return tx.Commit()
}
