// Package store keeps turns, annotators, annotations and their history in SQLite. Every line
// of SQL in m3eval lives here; callers see domain types (dataset, rubric) and a few sentinel
// errors.
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
	"strings"
	"time"

	"github.com/mattn/go-sqlite3"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// Sentinel errors the CLI and the TUI turn into sentences.
var (
	ErrNotFound = errors.New("not found")
	ErrConflict = errors.New("conflict")
)

// Options tune how a database is opened.
type Options struct {
	// Durable makes every commit wait for the disk (synchronous=FULL). The annotator uses it so
	// that a saved answer survives a power cut too; a process crash loses nothing either way.
	Durable bool
	// ReadOnly opens the file without the right to write, e.g. for export.
	ReadOnly bool
}

// Store is an open m3eval database.
type Store struct {
	db   *sql.DB
	path string
	// Now is the clock, replaceable in tests.
	Now func() time.Time
}

// newPageSize is the page size of the databases m3eval creates: 16 KB, not SQLite's 4 KB. An
// import then writes a quarter as many pages (BenchmarkImport1M: about +17% records/s), while
// an annotator's save, which writes a few pages to the WAL whole, stays well under a
// millisecond (BenchmarkSave). Existing files keep theirs: WAL mode fixes it.
const newPageSize = 16384

// Open opens (and creates or migrates) the database at path.
func Open(ctx context.Context, path string, opts Options) (*Store, error) {
	if opts.ReadOnly {
		if _, err := os.Stat(path); err != nil {
			return nil, fmt.Errorf("open %s: %w", path, err) // never created by a reader
		}
	}
	st, err := checkSchema(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if opts.ReadOnly && st.pending {
		if err := upgrade(ctx, path); err != nil {
			return nil, err
		}
	}
	if !opts.ReadOnly {
		if err := create(ctx, path); err != nil {
			return nil, fmt.Errorf("open %s: %w", path, err)
		}
	}
	q := url.Values{}
	q.Set("_foreign_keys", "on")
	q.Set("_busy_timeout", "5000")
	if opts.ReadOnly {
		// No journal mode to set and no write lock to take: the file is only read.
		readOnlyParams(path, q)
	} else {
		q.Set("_journal_mode", "WAL")
		q.Set("_txlock", "immediate")
	}
	if opts.Durable {
		q.Set("_synchronous", "FULL")
	} else {
		q.Set("_synchronous", "NORMAL")
	}
	db, err := sql.Open("sqlite3", fileURI(path, q))
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	s := &Store{db: db, path: path, Now: func() time.Time { return time.Now().UTC() }}
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if opts.ReadOnly {
		if err := readable(ctx, db); err != nil {
			db.Close()
			return nil, fmt.Errorf("open %s: %w", path, err)
		}
	} else {
		if err := s.migrate(ctx); err != nil {
			db.Close()
			return nil, fmt.Errorf("open %s: %w", path, err)
		}
	}
	return s, nil
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

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// Path is the file the store was opened from.
func (s *Store) Path() string { return s.path }

// migrate applies, in order and one transaction each, the embedded migrations not yet
// recorded in schema_migrations.
func (s *Store) migrate(ctx context.Context) error {
	if _, err := s.db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	names, err := migrationNames()
	if err != nil {
		return err
	}
	for _, m := range names {
		if err := s.applyMigration(ctx, m.version, m.name); err != nil {
			return fmt.Errorf("migrate %s: %w", strings.TrimPrefix(m.name, "migrations/"), err)
		}
	}
	return nil
}

// upgrade applies pending migrations before a read-only open: the reader's queries need
// today's schema. A database that cannot be written is left as it is, with a sentence.
func upgrade(ctx context.Context, path string) error {
	s, err := Open(ctx, path, Options{})
	if err != nil {
		return fmt.Errorf("open %s: the database needs an upgrade to this m3eval's schema, and it cannot be written here: %w", path, err)
	}
	return s.Close()
}

func (s *Store) applyMigration(ctx context.Context, version int, name string) error {
	tx, err := s.db.BeginTx(ctx, nil)
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
	body, err := migrationFS.ReadFile(name)
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

// domainError turns driver errors into the store's sentinel errors.
func domainError(err error) error {
	var se sqlite3.Error
	if errors.As(err, &se) && se.Code == sqlite3.ErrConstraint {
		switch se.ExtendedCode {
		case sqlite3.ErrConstraintUnique, sqlite3.ErrConstraintPrimaryKey:
			return fmt.Errorf("%w: %v", ErrConflict, err)
		}
	}
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	}
	return err
}

// isConstraint tells a broken constraint, which undoes its statement but leaves the
// transaction open, from errors after which SQLite may have rolled the transaction back.
func isConstraint(err error) bool {
	var se sqlite3.Error
	return errors.As(err, &se) && se.Code == sqlite3.ErrConstraint
}

const timeLayout = "2006-01-02T15:04:05Z"

func formatTime(t time.Time) string { return t.UTC().Format(timeLayout) }

func parseTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}
	}
	return t.UTC()
}

// ensureAnnotator returns the id of the annotator, creating it on first use.
func ensureAnnotator(ctx context.Context, tx *sql.Tx, name string) (int64, error) {
	var id int64
	err := tx.QueryRowContext(ctx, `INSERT INTO annotators (name) VALUES (?)
		ON CONFLICT (name) DO UPDATE SET name = excluded.name RETURNING id`, name).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("annotator %q: %w", name, err)
	}
	return id, nil
}

// RememberRubric records the rubric body under its version so annotations can name it.
func (s *Store) RememberRubric(ctx context.Context, version string, body []byte) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO rubrics (version, body) VALUES (?, ?) ON CONFLICT DO NOTHING`, version, body)
	if err != nil {
		return fmt.Errorf("record rubric %s: %w", version, err)
	}
	return nil
}
