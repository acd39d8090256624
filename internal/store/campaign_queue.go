package store

import (
	"context"
	"database/sql"
	"fmt"
)

// OpenCampaignQueue opens the annotator's queue of the turns the named campaign (a sample's
// assignment) gives them. Sampled and gold turns alike come in queue order, so an episode's
// turns stay together and in order. Nothing in the queue tells gold turns apart.
func (s *Store) OpenCampaignQueue(ctx context.Context, annotator, campaign string, f Filter) (*Queue, error) {
	id, err := s.sampleID(ctx, s.db, campaign)
	if err != nil {
		return nil, fmt.Errorf("open queue: %w", err)
	}
	q, err := s.OpenQueue(ctx, annotator, f)
	if err != nil {
		return nil, err
	}
	q.and(condition{`t.id IN (SELECT x.turn_id FROM assignments x WHERE x.annotator_id = ? AND x.sample_id = ? AND x.kind IN ('main', 'gold'))`,
		[]any{q.annotatorID, id}})
	q.campaign = campaign
	return q, nil
}

// OpenRepeatQueue opens the annotator's queue of repeated turns in the named campaign. These
// are the turns they see a second time, labeled afresh under their hidden repeat row
// (annotators.repeat_of), so the first label is neither shown nor changed. The queue carries the
// annotator's own name: nothing on the screen tells a repeated turn apart.
func (s *Store) OpenRepeatQueue(ctx context.Context, annotator, campaign string, f Filter) (*Queue, error) {
	id, err := s.sampleID(ctx, s.db, campaign)
	if err != nil {
		return nil, fmt.Errorf("open queue: %w", err)
	}
	tx, err := s.beginWrite(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	realID, err := ensureAnnotator(ctx, tx, annotator)
	if err != nil {
		return nil, err
	}
	var hidden string
	err = tx.QueryRowContext(ctx, `SELECT name FROM annotators WHERE repeat_of = ?`, realID).Scan(&hidden)
	if err == sql.ErrNoRows {
		hidden = fmt.Sprintf("%s (repeat %d)", annotator, realID)
		if _, err = tx.ExecContext(ctx, `INSERT INTO annotators (name, repeat_of) VALUES (?, ?)`, hidden, realID); err != nil {
			return nil, fmt.Errorf("open queue: the repeat row of %s: %w", annotator, domainError(err))
		}
	} else if err != nil {
		return nil, err
	}
	if err := tx.Commit(); err != nil {
		return nil, err
	}
	q, err := s.OpenQueue(ctx, hidden, f)
	if err != nil {
		return nil, err
	}
	q.and(condition{`t.id IN (SELECT x.turn_id FROM assignments x WHERE x.annotator_id = ? AND x.sample_id = ? AND x.kind = 'repeat')`,
		[]any{realID, id}})
	q.annotator, q.campaign = annotator, campaign
	return q, nil
}

// Campaign names the campaign the queue belongs to, "" for the whole database.
func (q *Queue) Campaign() string { return q.campaign }

// CampaignOf names the most recently assigned campaign that gives the annotator turns, ""
// when none does.
func (s *Store) CampaignOf(ctx context.Context, annotator string) (string, error) {
	var name string
	err := s.db.QueryRowContext(ctx, `SELECT sa.name FROM campaigns c JOIN samples sa ON sa.id = c.sample_id
		WHERE EXISTS (SELECT 1 FROM assignments x JOIN annotators an ON an.id = x.annotator_id
			WHERE x.sample_id = c.sample_id AND an.name = ? AND x.kind IN ('main', 'gold'))
		ORDER BY c.assigned_at DESC, c.sample_id DESC LIMIT 1`, annotator).Scan(&name)
	if err = domainError(err); err == ErrNotFound {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("campaign of %s: %w", annotator, err)
	}
	return name, nil
}

// and adds a condition every query of the queue applies (they all include q.rest).
func (q *Queue) and(c condition) {
	if q.rest.sql == "" {
		q.rest = c
		return
	}
	q.rest = condition{q.rest.sql + " AND " + c.sql, append(append([]any(nil), q.rest.args...), c.args...)}
}

// IsRepeatRow tells whether name is the hidden row that keeps someone's repeated labels, a
// name nobody may annotate under.
func (s *Store) IsRepeatRow(ctx context.Context, name string) (bool, error) {
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM annotators WHERE name = ? AND repeat_of IS NOT NULL`, name).Scan(&n); err != nil {
		return false, fmt.Errorf("annotator %s: %w", name, err)
	}
	return n > 0, nil
}
