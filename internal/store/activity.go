package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// Activity is one annotation's progress record, for the campaign part of m3eval report.
type Activity struct {
	Annotator string
	Done      bool
	Flagged   bool
	Skipped   bool
	Active    time.Duration // time the annotator spent on the item with the screen active
	// Submitted is when a done annotation was submitted; zero for drafts.
	Submitted time.Time
}

// StreamActivity calls fn for every annotation, by annotator name then submission time, in
// one read transaction. The record passed is reused between calls.
func (s *Store) StreamActivity(ctx context.Context, fn func(*Activity) error) error {
	rows, err := s.db.QueryContext(ctx, `SELECT an.name, a.status = 'done', a.flagged,
		a.skip_seq IS NOT NULL, a.active_ms, a.annotated_at
		FROM visible_annotations a JOIN annotators an ON an.id = a.annotator_id
		ORDER BY an.name, a.annotated_at IS NOT NULL, a.annotated_at, a.id`) // drafts (no time) first on both backends
	if err != nil {
		return fmt.Errorf("activity: %w", err)
	}
	defer rows.Close()
	var a Activity
	for rows.Next() {
		var ms int64
		var at sql.NullString
		if err := rows.Scan(&a.Annotator, &a.Done, &a.Flagged, &a.Skipped, &ms, &at); err != nil {
			return fmt.Errorf("activity: %w", err)
		}
		a.Active = time.Duration(ms) * time.Millisecond
		a.Submitted = time.Time{}
		if at.Valid && a.Done {
			a.Submitted = parseTime(at.String)
		}
		if err := fn(&a); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("activity: %w", err)
	}
	return nil
}

// LabelCount counts the done labels with one value of one field on turns at one position
// of their episode and with one number of confusable objects.
type LabelCount struct {
	Turn int // 1-based position in the episode
	// Confusable is the turn's meta.confusable_objects; -1 when the turn has none.
	Confusable int
	Field      string
	Value      string
	N          int
}

// LabelCounts counts the done labels of the given fields by turn position, the turn's
// meta.confusable_objects and value. The report's trend charts need these counts, and SQLite
// aggregates them instead of streaming the labels.
func (s *Store) LabelCounts(ctx context.Context, fields []string) ([]LabelCount, error) {
	if len(fields) == 0 {
		return nil, nil
	}
	args := make([]any, len(fields))
	for i, f := range fields {
		args[i] = f
	}
	rows, err := s.db.QueryContext(ctx, `SELECT t.turn,
		`+s.d.metaInt("t.meta", "confusable_objects")+`,
		v.field, v.value, count(*)
		FROM visible_annotations a JOIN visible_turns t ON t.id = a.turn_id JOIN annotation_values v ON v.annotation_id = a.id
		WHERE a.status = 'done' AND v.field IN (`+placeholders(len(fields))+`)
		GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4`, args...)
	if err != nil {
		return nil, fmt.Errorf("label counts: %w", err)
	}
	defer rows.Close()
	var out []LabelCount
	for rows.Next() {
		var c LabelCount
		if err := rows.Scan(&c.Turn, &c.Confusable, &c.Field, &c.Value, &c.N); err != nil {
			return nil, fmt.Errorf("label counts: %w", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("label counts: %w", err)
	}
	return out, nil
}
