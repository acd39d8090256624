package store

import (
	"database/sql"
	"errors"
	"fmt"
)

// Imports side by side (migration 0007). Every row an import writes belongs to its batch and
// stays hidden until the batch completes; a failed batch's rows are deleted. An import that
// meets a row another import wrote (the same turn in two files, or the same label) must not
// simply use it: should the other import fail, the row would go, and with a turn every label
// this import attached to it (ON DELETE CASCADE), although this import reported them stored.
// So it relies on such a row explicitly:
//
//   - a row of a completed batch (or of no batch) is visible and stays: nothing to do;
//   - a row of an open batch is claimed: when its owner fails, the row passes to the oldest
//     open claimant instead of being deleted, and the claimant's Commit makes it its own;
//   - a row of a failed batch, which is being removed, is taken over at once.
//
// Each of these happens in the transaction that looked the row up, so no removal step of the
// other batch comes in between. A batch's fence (first_turn, first_annotation) is lowered to
// the id of every row it comes to own: the visibility views read rows below the fence without
// looking at their batch.

// The kinds of rows an import can claim, as import_claims.kind spells them.
const (
	claimTurn       = "turn"
	claimAnnotation = "annotation"
)

// batchState is what became of another import's batch, as seen inside a transaction.
type batchState int

const (
	batchDone   batchState = iota // completed: its rows are visible
	batchOpen                     // still importing
	batchFailed                   // being removed
)

// rely makes sure that the row id of the kind's table, written by the batch owner, outlives
// this import's Commit whatever its owner does.
func (im *Importer) rely(kind string, id int64, owner sql.NullInt64) error {
	if !owner.Valid || owner.Int64 == im.batch {
		return nil
	}
	state, err := im.batchState(owner.Int64)
	if err != nil {
		return err
	}
	switch state {
	case batchDone:
		return nil
	case batchOpen:
		if _, err := im.conn.ExecContext(im.ctx, `INSERT INTO import_claims (batch, kind, row_id) VALUES (?, ?, ?)
			ON CONFLICT DO NOTHING`, im.batch, kind, id); err != nil {
			return fmt.Errorf("claim %s %d of import batch %d: %w", kind, id, owner.Int64, err)
		}
	case batchFailed:
		if _, err := im.conn.ExecContext(im.ctx, `UPDATE `+kindTable(kind)+` SET import_batch = ? WHERE id = ? AND import_batch = ?`,
			im.batch, id, owner.Int64); err != nil {
			return fmt.Errorf("take over %s %d of failed import batch %d: %w", kind, id, owner.Int64, err)
		}
	}
	return im.lowerFence(kind, id)
}

func kindTable(kind string) string {
	if kind == claimAnnotation {
		return "annotations"
	}
	return "turns"
}

// batchState reads the state of another import's batch, once per transaction.
func (im *Importer) batchState(batch int64) (batchState, error) {
	if st, ok := im.batchStates[batch]; ok {
		return st, nil
	}
	var failed bool
	st := batchOpen
	switch err := im.conn.QueryRowContext(im.ctx, `SELECT failed FROM import_batches WHERE id = ?`, batch).Scan(&failed); {
	case errors.Is(err, sql.ErrNoRows):
		st = batchDone
	case err != nil:
		return 0, fmt.Errorf("import batch %d: %w", batch, err)
	case failed:
		st = batchFailed
	}
	im.batchStates[batch] = st
	return st, nil
}

// lowerFence keeps the batch's fence at or below id, a row it now owns or claims. Row ids
// are reused after a failed import's rows are deleted, so a row inserted after another
// batch's removal can get an id below the fence this batch started with.
func (im *Importer) lowerFence(kind string, id int64) error {
	col, first := "first_turn", &im.firstTurn
	if kind == claimAnnotation {
		col, first = "first_annotation", &im.firstAnnotation
	}
	if id >= *first {
		return nil
	}
	if _, err := im.conn.ExecContext(im.ctx, `UPDATE import_batches SET `+col+` = `+im.s.d.least(col, "?")+` WHERE id = ?`, id, im.batch); err != nil {
		return fmt.Errorf("import batch %d: %w", im.batch, err)
	}
	*first = id
	return nil
}

// ownClaims, in Commit's transaction, makes the rows this import claimed its own: with its
// batch row deleted they are visible, and their first owner's failure no longer removes them.
func (im *Importer) ownClaims() error {
	for _, kind := range []string{claimTurn, claimAnnotation} {
		if _, err := im.conn.ExecContext(im.ctx, `UPDATE `+kindTable(kind)+` SET import_batch = ?
			WHERE id IN (SELECT row_id FROM import_claims WHERE batch = ? AND kind = ?)`, im.batch, im.batch, kind); err != nil {
			return fmt.Errorf("keep the %ss relied on: %w", kind, err)
		}
	}
	if _, err := im.conn.ExecContext(im.ctx, `DELETE FROM import_claims WHERE batch = ?`, im.batch); err != nil {
		return err
	}
	return nil
}
