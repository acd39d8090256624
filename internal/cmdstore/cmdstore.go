// Package cmdstore opens a command's database from its cmdio.IO: --db, with the rubric in use
// recorded. It is cmdio's half that needs the store, kept apart so that cmdio has no SQL and
// the domain layer's engines can take an IO (docs/architecture.md, "How a command is wired").
package cmdstore

import (
	"context"
	"fmt"
	"os"

	"github.com/m3bench/m3eval/internal/cmdio"
	"github.com/m3bench/m3eval/internal/rubric"
	"github.com/m3bench/m3eval/internal/store"
)

// MustExist fails with a plain sentence when the database file is missing, instead of
// creating an empty one for commands that only read.
func MustExist(e *cmdio.IO) error {
	if store.IsPostgres(e.DB) {
		return nil // a server: the store's open says when it holds no campaign
	}
	if _, err := os.Stat(e.DB); err != nil {
		return fmt.Errorf("no database at %s: import turns first (m3eval import FILE), or pass --db", e.DB)
	}
	return nil
}

// OpenStore opens --db and records the rubric r in use (none when r is nil or the store is
// read-only).
func OpenStore(ctx context.Context, e *cmdio.IO, r *rubric.Rubric, so store.Options) (*store.Store, error) {
	s, err := store.Open(ctx, e.DB, so)
	if err != nil {
		return nil, err
	}
	if r != nil && !so.ReadOnly {
		if err := s.RememberRubric(ctx, r.Version, r.Source); err != nil {
			s.Close()
			return nil, err
		}
	}
	return s, nil
}

// Open is the opening the commands that work on a database share: the database must exist
// (unless create: import makes one), the rubric is --rubric or the guide's, and the store is
// opened with the rubric recorded (unless read-only).
func Open(ctx context.Context, e *cmdio.IO, so store.Options, create bool) (*store.Store, *rubric.Rubric, error) {
	if !create {
		if err := MustExist(e); err != nil {
			return nil, nil, err
		}
	}
	r, err := e.LoadRubric()
	if err != nil {
		return nil, nil, err
	}
	s, err := OpenStore(ctx, e, r, so)
	return s, r, err
}
