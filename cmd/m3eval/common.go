package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/m3bench/m3eval/annotations"
	"github.com/m3bench/m3eval/internal/rubric"
	"github.com/m3bench/m3eval/internal/store"
)

// loadRubric reads --rubric, or the built-in rubric of the annotation guide.
func (o *globalOptions) loadRubric() (*rubric.Rubric, error) {
	if o.rubricPath == "" {
		return rubric.Parse(annotations.DefaultRubric)
	}
	f, _, err := openInput(o.rubricPath, os.Stdin) // --rubric - reads standard input
	if err != nil {
		return nil, fmt.Errorf("read rubric: %w", err)
	}
	data, err := io.ReadAll(f)
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("read rubric: %w", err)
	}
	r, err := rubric.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", o.rubricPath, err)
	}
	return r, nil
}

// openStore opens --db and records the rubric in use.
func (o *globalOptions) openStore(ctx context.Context, r *rubric.Rubric, so store.Options) (*store.Store, error) {
	s, err := store.Open(ctx, o.dbPath, so)
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

// mustExist fails with a plain sentence when the database file is missing, instead of
// creating an empty one for commands that only read.
func (o *globalOptions) mustExist() error {
	if _, err := os.Stat(o.dbPath); err != nil {
		return fmt.Errorf("no database at %s: import turns first (m3eval import FILE), or pass --db", o.dbPath)
	}
	return nil
}
