package store

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/m3bench/m3eval/internal/campaign"
	"github.com/m3bench/m3eval/internal/session"
)

// SetFinal records an adjudicator's final values in one transaction, all or none. Each
// change goes to final_changes for the audit trail and undo: the same shape, and with
// Options.Durable the same durability, as an annotator's save.
func (s *Store) SetFinal(ctx context.Context, edits ...session.FinalEdit) error {
	tx, err := s.beginWrite(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	now := formatTime(s.Now())
	// A keyed write retried after a lost COMMIT reply finds its key in final_changes (every
	// edit of one write carries the same key): it landed, nothing to do again.
	for _, e := range edits {
		if e.Key == "" {
			continue
		}
		var landed bool
		if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM final_changes WHERE turn_id = ? AND op_key = ?)`,
			e.TurnID, e.Key).Scan(&landed); err != nil {
			return fmt.Errorf("save final: %w", err)
		}
		if landed {
			return nil
		}
	}
	for _, e := range edits {
		if err := setFinal(ctx, tx, e, now); err != nil {
			return fmt.Errorf("save final %s: %w", e.Field, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("save final: %w", err)
	}
	return nil
}

func setFinal(ctx context.Context, tx *sql.Tx, e session.FinalEdit, now string) error {
	var oldV, oldS sql.NullString
	err := tx.QueryRowContext(ctx, `SELECT value, source FROM final_labels WHERE turn_id = ? AND field = ?`, e.TurnID, e.Field).Scan(&oldV, &oldS)
	if err != nil && err != sql.ErrNoRows {
		return err
	}
	var newS any
	if e.Value == nil {
		_, err = tx.ExecContext(ctx, `DELETE FROM final_labels WHERE turn_id = ? AND field = ?`, e.TurnID, e.Field)
	} else {
		newS = e.Source
		_, err = tx.ExecContext(ctx, `INSERT INTO final_labels (turn_id, field, value, source, adjudicator, rubric_version, decided_at)
			VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (turn_id, field) DO UPDATE SET value = excluded.value, source = excluded.source,
			adjudicator = excluded.adjudicator, rubric_version = excluded.rubric_version, decided_at = excluded.decided_at`,
			e.TurnID, e.Field, *e.Value, e.Source, e.Adjudicator, e.RubricVersion, now)
	}
	if err != nil {
		return domainError(err)
	}
	var key any
	if e.Key != "" {
		key = e.Key
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO final_changes (turn_id, field, old_value, old_source, new_value, new_source, adjudicator, at, op_key)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, e.TurnID, e.Field, oldV, oldS, e.Value, newS, e.Adjudicator, now, key)
	return err
}

// UndoFinal reverts the latest adjudication change of the turn not yet undone. ok is false
// when there is none. It works across restarts: the changes are in the database. A keyed undo
// marks what it reverted (undone_by), so that its retry after a lost COMMIT reply names that
// change and undoes no other.
func (s *Store) UndoFinal(ctx context.Context, turnID int64, adjudicator, rubricVersion, key string) (field string, ok bool, err error) {
	tx, err := s.beginWrite(ctx)
	if err != nil {
		return "", false, err
	}
	defer tx.Rollback()
	var by any
	if key != "" {
		by = key
		err := tx.QueryRowContext(ctx, `SELECT field FROM final_changes WHERE turn_id = ? AND undone_by = ?`, turnID, key).Scan(&field)
		if err == nil {
			return field, true, nil
		}
		if err != sql.ErrNoRows {
			return "", false, fmt.Errorf("undo final: %w", err)
		}
	}
	var id int64
	var oldV, oldS sql.NullString
	err = tx.QueryRowContext(ctx, `SELECT id, field, old_value, old_source FROM final_changes WHERE turn_id = ? AND NOT undone
		ORDER BY id DESC LIMIT 1`, turnID).Scan(&id, &field, &oldV, &oldS)
	if err == sql.ErrNoRows {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("undo final: %w", err)
	}
	now := formatTime(s.Now())
	if oldV.Valid {
		_, err = tx.ExecContext(ctx, `INSERT INTO final_labels (turn_id, field, value, source, adjudicator, rubric_version, decided_at)
			VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (turn_id, field) DO UPDATE SET value = excluded.value, source = excluded.source,
			adjudicator = excluded.adjudicator, decided_at = excluded.decided_at`, turnID, field, oldV.String, oldS.String, adjudicator, rubricVersion, now)
	} else {
		_, err = tx.ExecContext(ctx, `DELETE FROM final_labels WHERE turn_id = ? AND field = ?`, turnID, field)
	}
	if err != nil {
		return "", false, fmt.Errorf("undo final: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE final_changes SET undone = true, undone_by = ? WHERE id = ?`, by, id); err != nil {
		return "", false, err
	}
	if err := tx.Commit(); err != nil {
		return "", false, fmt.Errorf("undo final: %w", err)
	}
	return field, true, nil
}

// Finals reads every adjudicated value, by sample_id and field.
func (s *Store) Finals(ctx context.Context) (map[string]map[string]campaign.Decision, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT t.sample_id, f.field, f.value, f.source, f.adjudicator
		FROM final_labels f JOIN turns t ON t.id = f.turn_id`)
	if err != nil {
		return nil, fmt.Errorf("final labels: %w", err)
	}
	defer rows.Close()
	out := map[string]map[string]campaign.Decision{}
	for rows.Next() {
		var id string
		var f string
		var d campaign.Decision
		if err := rows.Scan(&id, &f, &d.Value, &d.Source, &d.Adjudicator); err != nil {
			return nil, err
		}
		if out[id] == nil {
			out[id] = map[string]campaign.Decision{}
		}
		out[id][f] = d
	}
	return out, rows.Err()
}

// LoadTurn reads a turn with its episode's earlier turns, as the annotator shows it, for
// screens that are not an annotator's queue (adjudication). It loads no annotation.
func (s *Store) LoadTurn(ctx context.Context, turnID int64) (*session.Item, error) {
	q := &Queue{s: s, seeks: []condition{{"true", nil}}}
	return q.Load(ctx, session.Ref{TurnID: turnID})
}
