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
	rows, err := s.db.QueryContext(ctx, `SELECT an.name, a.status = 'done', a.flagged <> 0,
		a.skip_seq IS NOT NULL, a.active_ms, a.annotated_at
		FROM annotations a JOIN annotators an ON an.id = a.annotator_id
		ORDER BY an.name, a.annotated_at`)
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
