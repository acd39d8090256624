package main

import (
	"context"
	"fmt"
	"os"

	"github.com/m3bench/m3eval/annotations"
	"github.com/m3bench/m3eval/internal/rubric"
	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/usage"
)

// openDB is the wiring the commands that work on a database share: the database must exist
// (unless create: import makes one), the rubric is --rubric or the guide's, and the store is
// opened with the rubric recorded (unless read-only).
func (o *globalOptions) openDB(ctx context.Context, so store.Options, create bool) (*store.Store, *rubric.Rubric, error) {
	if !create {
		if err := o.mustExist(); err != nil {
			return nil, nil, err
		}
	}
	r, err := o.loadRubric()
	if err != nil {
		return nil, nil, err
	}
	s, err := o.openStore(ctx, r, so)
	return s, r, err
}

// openForAnnotating opens an existing database for saving labels, with the rubric and the
// action descriptions the annotator shows (m3eval annotate, m3eval serve).
func (o *globalOptions) openForAnnotating(ctx context.Context, so store.Options) (*store.Store, *rubric.Rubric, rubric.Actions, error) {
	actions, err := rubric.ParseActions(annotations.Actions)
	if err != nil {
		return nil, nil, nil, err
	}
	s, r, err := o.openDB(ctx, so, false)
	return s, r, actions, err
}

// guideCases is the M3Bench guide's edge cases for the annotator's help screen when r is
// that guide's rubric (another rubric has its own guide, which m3eval does not know).
func guideCases(r *rubric.Rubric) string {
	def, err := rubric.Parse(annotations.DefaultRubric)
	if err != nil || r.Name != def.Name {
		return ""
	}
	return annotations.GuideCases
}

// loadRubric reads --rubric, or the built-in rubric of the annotation guide.
func (o *globalOptions) loadRubric() (*rubric.Rubric, error) {
	if o.rubric != nil {
		return o.rubric, nil // read once: --rubric - reads standard input
	}
	r, err := rubric.Load(o.rubricPath, os.Stdin, annotations.DefaultRubric) // --rubric - reads stdin
	if err != nil {
		return nil, err
	}
	actions, err := rubric.ParseActions(annotations.Actions)
	if err != nil {
		return nil, err
	}
	// A turn whose action type the catalogue lacks (imported with --allow-unknown-actions)
	// gets every field asked, not one fixed to NA by a guess.
	r.SetActionTypes(actions.Names())
	o.rubric = r
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
	if store.IsPostgres(o.dbPath) {
		return nil // a server: the store's open says when it holds no campaign
	}
	if _, err := os.Stat(o.dbPath); err != nil {
		return fmt.Errorf("no database at %s: import turns first (m3eval import FILE), or pass --db", o.dbPath)
	}
	return nil
}

// oneStdin fails when standard input (-) is given for more than one file argument: it can be
// read only once.
func oneStdin(paths ...string) error { return usageIf(usage.OneStdin(paths...)) }
