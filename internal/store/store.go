// Package store keeps turns, annotators, annotations and their history in SQLite, or in
// PostgreSQL when --db is a postgres:// address. Every line of SQL in m3eval lives here;
// callers see domain types (dataset, rubric) and a few sentinel errors.
//
// open.go opens either backend and migrates it; sqlite.go and postgres.go hold what each
// backend does on its own, and dialect.go the few spellings of SQL that differ.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mattn/go-sqlite3"

	"github.com/m3bench/m3eval/internal/session"
)

// Sentinel errors the CLI and the TUI turn into sentences.
var (
	ErrNotFound = errors.New("not found")
	ErrConflict = errors.New("conflict")
)

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
// moved or deleted under an open connection) or that a new connection cannot open any more
// (SQLITE_CANTOPEN: moved or deleted before the pool opened it). Other errors (busy, a lost
// connection) pass as they are, and the screen retries them.
func refused(err error) error {
	if err == nil || errors.Is(err, session.ErrRefused) {
		return err
	}
	var se sqlite3.Error
	if IsPermanent(err) || errors.As(err, &se) && (se.Code == sqlite3.ErrReadonly || se.Code == sqlite3.ErrCantOpen) {
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

// Close closes the database.
func (s *Store) Close() error { return errors.Join(s.wdb.Close(), s.db.Close()) }

// Path is the file the store was opened from.
func (s *Store) Path() string { return s.path }

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
