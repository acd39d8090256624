package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/mattn/go-sqlite3"

	"github.com/m3bench/m3eval/internal/session"
)

// TestRefusedMarksOnlyPermanentErrors: the errors a save cannot outwait (a missing
// privilege, a read-only SQLite file, moved or not) carry session.ErrRefused, keeping the
// driver's error; busy, locked and lost-connection errors do not, so the screen still
// retries them. (The drivers' error values are built here: a read-only file cannot be
// produced for a process running as root; TestRefusedWriteIsNotRetried in tui provokes the
// PostgreSQL one for real.)
func TestRefusedMarksOnlyPermanentErrors(t *testing.T) {
	permanent := []error{
		fmt.Errorf("set value: %w", &pgconn.PgError{Code: pgInsufficientPrivilege, Message: "permission denied for table annotations"}),
		fmt.Errorf("open: %w", ErrPermission),
		sqlite3.Error{Code: sqlite3.ErrReadonly},
		sqlite3.Error{Code: sqlite3.ErrReadonly, ExtendedCode: sqlite3.ErrReadonlyDbMoved},
		sqlite3.Error{Code: sqlite3.ErrCantOpen},
	}
	for _, err := range permanent {
		got := refused(err)
		if !errors.Is(got, session.ErrRefused) || !errors.Is(got, err) {
			t.Errorf("refused(%v) = %v: want session.ErrRefused and the cause", err, got)
		}
		if again := refused(got); again != got {
			t.Errorf("refused marked %v twice: %v", got, again)
		}
	}
	transient := []error{
		nil,
		fmt.Errorf("%w (it held the write lock for over 5s)", ErrBusy),
		sqlite3.Error{Code: sqlite3.ErrBusy},
		sqlite3.Error{Code: sqlite3.ErrLocked},
		&pgconn.PgError{Code: pgLockNotAvailable},
		&pgconn.PgError{Code: "08006"}, // connection_failure
		errors.New("unexpected EOF"),
	}
	for _, err := range transient {
		if got := refused(err); got != err {
			t.Errorf("refused(%v) = %v: a transient error must pass unchanged", err, got)
		}
	}
}

// TestMovedFileIsNotRecreated: when the database file is moved away under an open store, a
// connection the write pool opens afterwards fails, refused, instead of creating an empty
// database at the old path whose saves fail as "no such table" and are retried forever.
func TestMovedFileIsNotRecreated(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "a.db")
	s, err := Open(ctx, path, Options{Durable: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.RememberRubric(ctx, "v1", []byte("guide")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path, filepath.Join(dir, "moved.db")); err != nil {
		t.Fatal(err)
	}
	// Every later write gets a new connection, as a pool does after its idle ones close.
	s.wdb.SetMaxIdleConns(0)
	_, err = s.wdb.ExecContext(ctx, "CREATE TABLE probe (x)")
	if err == nil {
		t.Fatal("a write to a moved database succeeded")
	}
	if !errors.Is(refused(err), session.ErrRefused) {
		t.Errorf("the write's error %v is not refused: the screen would retry it forever", err)
	}
	if _, statErr := os.Stat(path); !os.IsNotExist(statErr) {
		t.Errorf("a file was made at the moved database's path (stat: %v)", statErr)
	}
}
