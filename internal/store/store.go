// Package store keeps turns, annotators, annotations and their history in SQLite, or in
// PostgreSQL when --db is a postgres:// address (dialect.go, postgres.go). Every line of SQL in
// m3eval lives here; callers see domain types (dataset, rubric) and a few sentinel errors.
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
	"sync/atomic"
	"time"

	"github.com/mattn/go-sqlite3"

	"github.com/m3bench/m3eval/internal/session"
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
// another program's SQLite database): it is refused, and nothing is written to it.
var ErrNotDatabase = errors.New("not an m3eval database")

// ErrBusy is returned when another connection held the write lock for longer than LockWait.
var ErrBusy = errors.New("the database is locked by another program")

// Store is an open m3eval database.
type Store struct {
	db *sql.DB // reads; its transactions are deferred and never take the write lock
	// wdb is for writes: BEGIN IMMEDIATE, and no busy wait inside SQLite, whose back-off
	// sleeps up to 100 ms between tries and so misses the short gaps between an import's
	// chunks; beginWrite polls every millisecond instead.
	wdb      *sql.DB
	lockWait time.Duration
	// priorityMax is how long a bulk writer defers to waiting short writers per chunk
	// (importPriorityMax; longer in a test that must not depend on the machine's speed).
	priorityMax time.Duration
	// chunkTime is how long a bulk writer holds the lock at most (importChunkTime).
	chunkTime time.Duration
	path      string
	// d holds what differs between SQLite and PostgreSQL (dialect.go).
	d dialect
	// interactive stores (Options.Durable: annotate, adjudicate, serve) leave checkpoints to
	// bulk writers and to checkpointAside.
	interactive bool
	// createdSchema: this open created the campaign's tables in an empty PostgreSQL schema.
	createdSchema bool
	saves         atomic.Int64
	checkpointing atomic.Bool
	notifying     atomic.Bool // a change notification is on its way (notify.go)
	// Now is the clock, replaceable in tests.
	Now func() time.Time
}

// newPageSize is the page size of the databases m3eval creates: 16 KB, not SQLite's 4 KB. An
// import then writes a quarter as many pages (BenchmarkImport1M: about +17% records/s), while
// an annotator's save, which writes a few pages to the WAL whole, stays well under a
// millisecond (BenchmarkSave). Existing files keep theirs: WAL mode fixes it.
const newPageSize = 16384

// Open opens (and creates or migrates) the database at path.
//
// A path of the form postgres://… or postgresql://… opens a PostgreSQL database instead
// (postgres.go): the same store, with the same guarantees, on a server.
func Open(ctx context.Context, path string, opts Options) (*Store, error) {
	if isPostgres(path) {
		return openPostgres(ctx, pgDSN(path), opts)
	}
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
	s := &Store{db: db, wdb: wdb, path: path, lockWait: opts.LockWait, priorityMax: importPriorityMax, chunkTime: importChunkTime, interactive: opts.Durable && !opts.ReadOnly, Now: func() time.Time { return time.Now().UTC() }}
	if s.lockWait <= 0 {
		s.lockWait = DefaultLockWait
	}
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
		q.Set("_journal_mode", "WAL")
	}
	if opts.Durable {
		q.Set("_synchronous", "FULL")
	} else {
		q.Set("_synchronous", "NORMAL")
	}
	return fileURI(path, q)
}

// lockPoll is how often a waiting write tries the lock again: an import lets go of it for a
// moment between chunks (importYield), and a writer polling this often gets in then.
const lockPoll = time.Millisecond

// beginWrite starts a write transaction, waiting up to the store's LockWait for the lock.
func (s *Store) beginWrite(ctx context.Context) (*sql.Tx, error) {
	return s.beginShort(ctx, -1)
}

// beginSave starts the write transaction of an annotator's save. On SQLite it is beginWrite.
// On PostgreSQL saves of different annotators run side by side (their durable commits then
// share the disk's flushes), holding the campaign's lock shared, and the annotator's own lock
// alone; bulk writers and every other write still hold the campaign's lock alone. A save
// writes only its annotator's rows (annotations, their values and changes, the annotator's
// skip order), which no other save touches.
func (s *Store) beginSave(ctx context.Context, annotatorID int64) (*sql.Tx, error) {
	return s.beginShort(ctx, annotatorID)
}

// beginShort starts a short writer's transaction: a save of annotatorID, or (-1) any other.
func (s *Store) beginShort(ctx context.Context, annotatorID int64) (*sql.Tx, error) {
	var tx *sql.Tx
	start := time.Now()
	err := s.waitLock(ctx, shortWriter, func() (err error) {
		tx, err = s.wdb.BeginTx(ctx, nil)
		if err != nil || !s.d.pg {
			return err
		}
		// PostgreSQL waits in the server; what is left of LockWait, so that a try after a
		// lost race for the lock does not wait a whole LockWait again.
		wait := max(s.lockWait-time.Since(start), time.Millisecond).Milliseconds()
		if annotatorID >= 0 && !s.d.exclusiveSaves {
			err = s.d.lockSave(ctx, tx, wait, annotatorID)
		} else {
			err = s.d.lockWrite(ctx, tx, wait, shortWriter)
		}
		if err != nil {
			tx.Rollback()
			return err
		}
		// Screens on other hosts learn of the write soon after it commits (notify.go).
		s.notifyChange()
		return nil
	})
	if err != nil || !s.interactive {
		return tx, err
	}
	// An interactive save never checkpoints the WAL in its own commit. SQLite runs a checkpoint
	// in the commit that finds the WAL past 1,000 pages; beside bulk writers that is most
	// commits, and after a judge's long read ends it copies everything that read held back
	// (hundreds of megabytes) and syncs the database file (synchronous=FULL), while the
	// annotator waits for "saved". Bulk writers checkpoint in their commits (the default),
	// and checkpointAside keeps the WAL short when the annotators write alone.
	if _, err := tx.ExecContext(ctx, `PRAGMA wal_autocheckpoint = 0`); err != nil {
		tx.Rollback()
		return nil, err
	}
	s.checkpointAside()
	return tx, nil
}

// interactiveCheckpointEvery is how many saves of an interactive store go between its
// checkpoints: a save writes a few pages, so the WAL stays near SQLite's default of 1,000.
const interactiveCheckpointEvery = 200

// checkpointAside runs a PASSIVE checkpoint every interactiveCheckpointEvery saves, on a
// connection of the read pool and in a goroutine of its own, so that no save waits for it. A
// PASSIVE checkpoint takes no write lock, and gives up where another one runs.
func (s *Store) checkpointAside() {
	if s.saves.Add(1)%interactiveCheckpointEvery != 0 || !s.checkpointing.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer s.checkpointing.Store(false)
		_, _ = s.db.ExecContext(context.Background(), `PRAGMA wal_checkpoint(PASSIVE)`) // only a speed-up: an error changes nothing
	}()
}

// writerClass says whether a write goes before others while they wait for the lock.
type writerClass int

const (
	// shortWriter is a write of a few rows that someone waits for (an annotator's save, an
	// adjudication): while it waits it registers as waiting, and bulk writers let it in first.
	shortWriter writerClass = iota
	// bulkWriter is one chunk of a long write (import, judge, import-scores, a batch's
	// removal): it does not register, and it does not even try the lock while a short writer
	// waits (up to importPriorityMax per chunk).
	bulkWriter
)

// waitLock runs begin (a BEGIN IMMEDIATE) until it gets the lock, the context ends or
// LockWait passes.
func (s *Store) waitLock(ctx context.Context, class writerClass, begin func() error) error {
	deadline := time.Now().Add(s.lockWait)
	var release func()
	defer func() {
		if release != nil {
			release()
		}
	}()
	var waiters *waitersProbe
	if class == bulkWriter {
		// Checked before every try, not only once before the chunk: with several bulk writers,
		// the one that gets the lock next is usually one already polling here, and an
		// annotator that started waiting meanwhile must still go before it (the load test with
		// five judges beside an import: p99 key-to-saved 541 ms, and a save waiting past 1 s).
		waiters = s.probeWaiters()
		defer waiters.close()
	}
	for {
		if waiters.deferTo() {
			if err := sleepCtx(ctx, lockPoll); err != nil {
				return err
			}
			continue
		}
		err := begin()
		if err == nil || !isBusy(err) {
			return err
		}
		if class == shortWriter && release == nil {
			// Only short writers register: a bulk writer that registered would make every
			// other bulk writer wait for it, and the priority would mean nothing while several
			// run. Registering fails for a moment while a bulk writer probes; try again.
			release = s.waiting() // bulk writers let waiting writers go first (waiters.go)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w (it held the write lock for over %v)", ErrBusy, s.lockWait)
		}
		if err := sleepCtx(ctx, lockPoll); err != nil {
			return err
		}
	}
}

// sleepCtx sleeps for d unless the context ends first.
func sleepCtx(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// refused marks a save's error that retrying cannot clear as session.ErrRefused, so that the
// annotator's screen stops retrying and says the change is lost: a PostgreSQL role's missing
// privilege (42501), a SQLite file that is read-only (SQLITE_READONLY, which includes a file
// moved or deleted under the open store). Other errors (busy, a lost connection) pass as
// they are, and the screen retries them.
func refused(err error) error {
	if err == nil || errors.Is(err, session.ErrRefused) {
		return err
	}
	var se sqlite3.Error
	if IsPermanent(err) || errors.As(err, &se) && se.Code == sqlite3.ErrReadonly {
		return fmt.Errorf("%w: %w", session.ErrRefused, err)
	}
	return err
}

func isBusy(err error) bool {
	switch pgCode(err) {
	case pgLockNotAvailable, pgSerialization, pgDeadlock:
		return true
	}
	var se sqlite3.Error
	return errors.As(err, &se) && (se.Code == sqlite3.ErrBusy || se.Code == sqlite3.ErrLocked)
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
func (s *Store) Close() error { return errors.Join(s.wdb.Close(), s.db.Close()) }

// Path is the file the store was opened from.
func (s *Store) Path() string { return s.path }

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

// domainError turns driver errors into the store's sentinel errors.
func domainError(err error) error {
	if pgCode(err) == pgUniqueViolation {
		return fmt.Errorf("%w: %v", ErrConflict, err)
	}
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
	if c := pgCode(err); strings.HasPrefix(c, "23") {
		return true
	}
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
func ensureAnnotator(ctx context.Context, tx querier, name string) (int64, error) {
	var id int64
	err := tx.QueryRowContext(ctx, `INSERT INTO annotators (name) VALUES (?)
		ON CONFLICT (name) DO UPDATE SET name = excluded.name RETURNING id`, name).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("annotator %q: %w", name, err)
	}
	return id, nil
}

// RememberRubric records the rubric body under its version so annotations can name it.
// A rubric already recorded is only read, so commands that read start without the write lock.
func (s *Store) RememberRubric(ctx context.Context, version string, body []byte) error {
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM rubrics WHERE version = ?`, version).Scan(&n); err != nil {
		return fmt.Errorf("record rubric %s: %w", version, err)
	}
	if n > 0 {
		return nil
	}
	tx, err := s.beginWrite(ctx)
	if err != nil {
		return fmt.Errorf("record rubric %s: %w", version, err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `INSERT INTO rubrics (version, body) VALUES (?, ?) ON CONFLICT DO NOTHING`, version, body); err != nil {
		return fmt.Errorf("record rubric %s: %w", version, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("record rubric %s: %w", version, err)
	}
	return nil
}
