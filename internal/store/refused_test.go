package store

import (
	"errors"
	"fmt"
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
