package store

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/m3bench/m3eval/internal/dataset"
	"github.com/m3bench/m3eval/internal/rubric"
	"github.com/m3bench/m3eval/internal/session"
)

// editTx is one write: it creates the annotation on first use, groups its changes into one
// undo batch and keeps updated_at and active time current.
type editTx struct {
	ctx   context.Context
	tx    *sql.Tx
	q     *Queue
	id    int64
	batch int64
	now   string
	key   *string // session.Edit.Key, nil when empty
	// landed: fn found that this write had landed before (a retry): nothing more to add.
	landed bool
	// retried: the annotation's last write had this key: this is its retry, whatever fn
	// does is rolled back.
	retried bool
}

func (q *Queue) edit(ctx context.Context, e session.Edit, create bool, fn func(*editTx) error) (*session.Annotation, error) {
	a, err := q.editOnce(ctx, e, create, fn)
	return a, refused(err)
}

func (q *Queue) editOnce(ctx context.Context, e session.Edit, create bool, fn func(*editTx) error) (*session.Annotation, error) {
	tx, err := q.s.beginSave(ctx, q.annotatorID)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	et := &editTx{ctx: ctx, tx: tx, q: q, now: formatTime(q.s.Now())}
	err = tx.QueryRowContext(ctx, `SELECT id FROM annotations WHERE annotator_id = ? AND turn_id = ?`, q.annotatorID, e.TurnID).Scan(&et.id)
	switch {
	case err == sql.ErrNoRows && !create:
		return nil, nil
	case err == sql.ErrNoRows:
		if _, err := tx.ExecContext(ctx, `INSERT INTO rubrics (version, body) VALUES (?, '') ON CONFLICT DO NOTHING`, e.RubricVersion); err != nil {
			return nil, err
		}
		err = tx.QueryRowContext(ctx, `INSERT INTO annotations (turn_id, annotator_id, rubric_version, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?) RETURNING id`, e.TurnID, q.annotatorID, e.RubricVersion, et.now, et.now).Scan(&et.id)
		if err != nil {
			return nil, fmt.Errorf("start annotation: %w", domainError(err))
		}
	case err != nil:
		return nil, err
	}
	if e.Key != "" {
		et.key = &e.Key
		// A retry of a write that landed (its COMMIT's reply was lost): nothing to do again.
		var landed bool
		if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM changes WHERE annotation_id = ? AND op_key = ?)`,
			et.id, e.Key).Scan(&landed); err != nil {
			return nil, err
		}
		if landed {
			return q.annotation(ctx, tx, e.TurnID)
		}
		// A write that changed nothing logged no change to carry its key, and an undo marks
		// what it undid instead; the annotation's last_op_key holds the key of either, so a
		// retry adds its active time only once. fn still runs (an undo says what it undid),
		// and nothing it does is committed.
		if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM annotations WHERE id = ? AND last_op_key = ?)`,
			et.id, e.Key).Scan(&et.retried); err != nil {
			return nil, err
		}
	}
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(max(batch), 0) + 1 FROM changes WHERE annotation_id = ?`, et.id).Scan(&et.batch); err != nil {
		return nil, err
	}
	if err := fn(et); err != nil {
		return nil, err
	}
	if et.landed || et.retried {
		return q.annotation(ctx, tx, e.TurnID)
	}
	if e.Acceptable != nil {
		if err := et.demoteIfUnacceptable(e.Acceptable); err != nil {
			return nil, err
		}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE annotations SET updated_at = ?, rubric_version = ?, active_ms = active_ms + ?, last_op_key = ? WHERE id = ?`,
		et.now, e.RubricVersion, e.Active.Milliseconds(), et.key, et.id); err != nil {
		return nil, err
	}
	a, err := q.annotation(ctx, tx, e.TurnID)
	if err != nil {
		return nil, err
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("save: %w", err)
	}
	return a, nil
}

func (et *editTx) record(kind session.ChangeKind, field string, old, new *string) error {
	_, err := et.tx.ExecContext(et.ctx, `INSERT INTO changes (annotation_id, batch, kind, field, old_value, new_value, at, op_key)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, et.id, et.batch, kind, field, old, new, et.now, et.key)
	return err
}

func (et *editTx) setValue(field string, value *string) (old *string, err error) {
	var cur sql.NullString
	err = et.tx.QueryRowContext(et.ctx, `SELECT value FROM annotation_values WHERE annotation_id = ? AND field = ?`, et.id, field).Scan(&cur)
	if err != nil && err != sql.ErrNoRows {
		return nil, err
	}
	if cur.Valid {
		old = &cur.String
	}
	if value == nil {
		_, err = et.tx.ExecContext(et.ctx, `DELETE FROM annotation_values WHERE annotation_id = ? AND field = ?`, et.id, field)
	} else {
		_, err = et.tx.ExecContext(et.ctx, `INSERT INTO annotation_values (annotation_id, field, value) VALUES (?, ?, ?)
			ON CONFLICT (annotation_id, field) DO UPDATE SET value = excluded.value`, et.id, field, *value)
	}
	return old, err
}

func (et *editTx) setStatus(status dataset.Status) error {
	var cur dataset.Status
	if err := et.tx.QueryRowContext(et.ctx, `SELECT status FROM annotations WHERE id = ?`, et.id).Scan(&cur); err != nil {
		return err
	}
	if cur == status {
		return nil
	}
	var annotatedAt any
	if status == dataset.StatusDone {
		annotatedAt = et.now
	}
	// Submitting re-confirms a label made on earlier content of a replaced turn.
	if _, err := et.tx.ExecContext(et.ctx, `UPDATE annotations SET status = ?, annotated_at = ?,
		stale = stale AND ? <> 'done' WHERE id = ?`, status, annotatedAt, status, et.id); err != nil {
		return err
	}
	return et.record(session.ChangeStatus, "", (*string)(&cur), (*string)(&status))
}

func (et *editTx) demoteIfUnacceptable(acceptable func(rubric.Values) bool) error {
	var status dataset.Status
	if err := et.tx.QueryRowContext(et.ctx, `SELECT status FROM annotations WHERE id = ?`, et.id).Scan(&status); err != nil {
		return err
	}
	if status != dataset.StatusDone {
		return nil
	}
	vals, err := loadValues(et.ctx, et.tx, et.id)
	if err != nil {
		return err
	}
	if acceptable(vals) {
		return nil
	}
	return et.setStatus(dataset.StatusDraft)
}

// SetValue sets (or, with nil, clears) one field and records the change for undo.
func (q *Queue) SetValue(ctx context.Context, e session.Edit, field string, value *string) (*session.Annotation, error) {
	return q.edit(ctx, e, true, func(et *editTx) error {
		old, err := et.setValue(field, value)
		if err != nil {
			return fmt.Errorf("save %s: %w", field, err)
		}
		if eqPtr(old, value) {
			return nil
		}
		return et.record(session.ChangeValue, field, old, value)
	})
}

// Submit marks the annotation done. The caller has checked that it is complete.
func (q *Queue) Submit(ctx context.Context, e session.Edit) (*session.Annotation, error) {
	return q.edit(ctx, e, true, func(et *editTx) error { return et.setStatus(dataset.StatusDone) })
}

// SetFlag flags the item for review with a reason, or clears the flag.
func (q *Queue) SetFlag(ctx context.Context, e session.Edit, flagged bool, reason string) (*session.Annotation, error) {
	return q.edit(ctx, e, true, func(et *editTx) error {
		var wasFlagged bool
		var wasReason string
		if err := et.tx.QueryRowContext(ctx, `SELECT flagged, flag_reason FROM annotations WHERE id = ?`, et.id).Scan(&wasFlagged, &wasReason); err != nil {
			return err
		}
		if _, err := et.tx.ExecContext(ctx, `UPDATE annotations SET flagged = ?, flag_reason = ? WHERE id = ?`, flagged, reason, et.id); err != nil {
			return err
		}
		old, new := flagText(wasFlagged, wasReason), flagText(flagged, reason)
		if eqPtr(old, new) {
			return nil // nothing changed: no undo step that would undo nothing
		}
		return et.record(session.ChangeFlag, "", old, new)
	})
}

// flagText encodes a flag for the change log: nil when not flagged, else the reason.
func flagText(flagged bool, reason string) *string {
	if !flagged {
		return nil
	}
	return &reason
}

// Skip moves the item to the end of the annotator's queue.
func (q *Queue) Skip(ctx context.Context, e session.Edit) (*session.Annotation, error) {
	return q.edit(ctx, e, true, func(et *editTx) error {
		// An item already last among the skipped stays where it is: a skip retried after a
		// lost COMMIT reply changes nothing more.
		var seq, last sql.NullInt64
		if err := et.tx.QueryRowContext(ctx, `SELECT skip_seq, (SELECT max(skip_seq) FROM annotations WHERE annotator_id = ?)
			FROM annotations WHERE id = ?`, q.annotatorID, et.id).Scan(&seq, &last); err != nil {
			return err
		}
		if seq.Valid && seq == last {
			return nil
		}
		_, err := et.tx.ExecContext(ctx, `UPDATE annotations SET skip_seq = ? WHERE id = ?`, last.Int64+1, et.id)
		return err
	})
}

// AddActive adds active time to an annotation that exists. It creates none.
func (q *Queue) AddActive(ctx context.Context, e session.Edit) error {
	return refused(q.addActive(ctx, e))
}

func (q *Queue) addActive(ctx context.Context, e session.Edit) error {
	if e.Active <= 0 {
		return nil
	}
	tx, err := q.s.beginSave(ctx, q.annotatorID)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	// Keyed like every other write (last_op_key): a retry after a lost COMMIT reply whose
	// write landed adds nothing.
	query, args := `UPDATE annotations SET active_ms = active_ms + ? WHERE annotator_id = ? AND turn_id = ?`,
		[]any{e.Active.Milliseconds(), q.annotatorID, e.TurnID}
	if e.Key != "" {
		query = `UPDATE annotations SET active_ms = active_ms + ?, last_op_key = ?
			WHERE annotator_id = ? AND turn_id = ? AND (last_op_key IS NULL OR last_op_key <> ?)`
		args = []any{e.Active.Milliseconds(), e.Key, q.annotatorID, e.TurnID, e.Key}
	}
	if _, err := tx.ExecContext(ctx, query, args...); err != nil {
		return err
	}
	return tx.Commit()
}

// Undo reverts the latest batch of changes of the item that is not yet undone. It works
// across restarts because the change log is in the database. ok is false when there is
// nothing to undo.
func (q *Queue) Undo(ctx context.Context, e session.Edit) (a *session.Annotation, what []session.Undone, ok bool, err error) {
	// Batches undo last-in first-out, so the state an undo returns to was itself accepted:
	// it never needs demoting.
	e.Acceptable = nil
	a, err = q.edit(ctx, e, false, func(et *editTx) error {
		if et.key != nil {
			// The batch this undo names is the one it undid, if it landed before (a retry
			// after a lost COMMIT reply): say what it undid, and undo nothing more.
			rows, err := et.tx.QueryContext(ctx, `SELECT kind, field FROM changes WHERE annotation_id = ? AND undone_by = ?
				ORDER BY id DESC`, et.id, *et.key)
			if err != nil {
				return err
			}
			for rows.Next() {
				var u session.Undone
				if err := rows.Scan(&u.Kind, &u.Field); err != nil {
					rows.Close()
					return err
				}
				what = append(what, u)
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
			if len(what) > 0 || et.retried {
				// retried with nothing marked: the undo landed and found nothing to undo.
				et.landed = true
				return nil
			}
		}
		rows, err := et.tx.QueryContext(ctx, `SELECT id, kind, field, old_value FROM changes
			WHERE annotation_id = ? AND NOT undone AND batch = (SELECT max(batch) FROM changes WHERE annotation_id = ? AND NOT undone)
			ORDER BY id DESC`, et.id, et.id)
		if err != nil {
			return err
		}
		type change struct {
			id    int64
			kind  session.ChangeKind
			field string
			old   sql.NullString
		}
		var cs []change
		for rows.Next() {
			var c change
			if err := rows.Scan(&c.id, &c.kind, &c.field, &c.old); err != nil {
				rows.Close()
				return err
			}
			cs = append(cs, c)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, c := range cs {
			var err error
			switch c.kind {
			case session.ChangeValue:
				var v *string
				if c.old.Valid {
					v = &c.old.String
				}
				_, err = et.setValue(c.field, v)
			case session.ChangeFlag:
				_, err = et.tx.ExecContext(ctx, `UPDATE annotations SET flagged = ?, flag_reason = ? WHERE id = ?`, c.old.Valid, c.old.String, et.id)
			case session.ChangeStatus:
				var annotatedAt any
				if dataset.Status(c.old.String) == dataset.StatusDone {
					annotatedAt = et.now
				}
				_, err = et.tx.ExecContext(ctx, `UPDATE annotations SET status = ?, annotated_at = ? WHERE id = ?`, c.old.String, annotatedAt, et.id)
			}
			if err != nil {
				return fmt.Errorf("undo: %w", err)
			}
			if _, err := et.tx.ExecContext(ctx, `UPDATE changes SET undone = true, undone_by = ? WHERE id = ?`, et.key, c.id); err != nil {
				return err
			}
			what = append(what, session.Undone{Kind: c.kind, Field: c.field})
		}
		return nil
	})
	return a, what, len(what) > 0, err
}

func eqPtr(a, b *string) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}
