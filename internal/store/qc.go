package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/m3bench/m3eval/internal/rubric"
)

// ReviewLabel is a submitted label as quality control and adjudication read it.
type ReviewLabel struct {
	Annotator  string
	TurnID     int64
	SampleID   string
	ActionType string
	Turn       int
	Values     rubric.Values
	Active     time.Duration
	At         time.Time
	// Flagged and FlagReason are the annotator's flag: adjudication reviews flagged labels.
	Flagged    bool
	FlagReason string
	// Imported says the label came from a file (m3eval import), not from a session of the
	// annotator's: a count of what was submitted today leaves it out.
	Imported bool
}

// ReviewData is the labels `m3eval qc` and adjudication read. They are the submitted labels,
// the gold labels and the second labels of repeated turns (Repeats, under the real
// annotator's name).
type ReviewData struct {
	Labels  []ReviewLabel
	Gold    map[string]rubric.Values // by sample_id
	Repeats []ReviewLabel
}

// Review reads the submitted, visible labels in queue order, with the gold labels and
// repeats. They are the labels of the named campaign's annotators on its turns (its sample
// and gold turns), or of everybody on every turn when campaign is "".
func (s *Store) Review(ctx context.Context, campaign string) (*ReviewData, error) {
	where, args := "true", []any{}
	if campaign != "" {
		id, err := s.sampleID(ctx, s.db, campaign)
		if err != nil {
			return nil, err
		}
		where = `EXISTS (SELECT 1 FROM assignments x WHERE x.sample_id = ? AND x.annotator_id = a.annotator_id AND x.turn_id = a.turn_id)`
		args = append(args, id)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT an.name, t.id, t.sample_id, t.action_type, t.turn, a.active_ms,
		COALESCE(a.annotated_at, a.updated_at), a.flagged, a.flag_reason, a.import_batch IS NOT NULL,
		(SELECT `+s.d.jsonGroupObject("v.field", "v.value")+` FROM annotation_values v WHERE v.annotation_id = a.id)
		FROM visible_annotations a JOIN annotators an ON an.id = a.annotator_id JOIN visible_turns t ON t.id = a.turn_id
		WHERE a.status = 'done' AND an.repeat_of IS NULL AND `+where+` ORDER BY t.episode_id, t.turn, an.name`, args...)
	if err != nil {
		return nil, fmt.Errorf("review: %w", err)
	}
	defer rows.Close()
	d := &ReviewData{Gold: map[string]rubric.Values{}}
	for rows.Next() {
		var l ReviewLabel
		var ms int64
		var at, values string
		if err := rows.Scan(&l.Annotator, &l.TurnID, &l.SampleID, &l.ActionType, &l.Turn, &ms, &at, &l.Flagged, &l.FlagReason, &l.Imported, &values); err != nil {
			return nil, fmt.Errorf("review: %w", err)
		}
		l.Active = time.Duration(ms) * time.Millisecond
		l.At = parseTime(at)
		if err := json.Unmarshal([]byte(values), &l.Values); err != nil {
			return nil, fmt.Errorf("review %s: %w", l.SampleID, err)
		}
		if l.Values == nil {
			l.Values = rubric.Values{}
		}
		d.Labels = append(d.Labels, l)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("review: %w", err)
	}
	g, err := s.db.QueryContext(ctx, `SELECT t.sample_id, g.field, g.value FROM gold_labels g JOIN turns t ON t.id = g.turn_id`)
	if err != nil {
		return nil, fmt.Errorf("review gold: %w", err)
	}
	defer g.Close()
	for g.Next() {
		var sid, f, v string
		if err := g.Scan(&sid, &f, &v); err != nil {
			return nil, err
		}
		if d.Gold[sid] == nil {
			d.Gold[sid] = rubric.Values{}
		}
		d.Gold[sid][f] = v
	}
	if err := g.Err(); err != nil {
		return nil, err
	}
	// Second labels of repeated turns: submitted annotations of the hidden repeat rows, under
	// the real annotator's name.
	r, err := s.db.QueryContext(ctx, `SELECT real.name, t.id, t.sample_id,
		(SELECT `+s.d.jsonGroupObject("v.field", "v.value")+` FROM annotation_values v WHERE v.annotation_id = a.id)
		FROM visible_annotations a JOIN annotators hid ON hid.id = a.annotator_id JOIN annotators real ON real.id = hid.repeat_of
		JOIN visible_turns t ON t.id = a.turn_id
		WHERE a.status = 'done' ORDER BY real.name, t.episode_id, t.turn`)
	if err != nil {
		return nil, fmt.Errorf("review repeats: %w", err)
	}
	defer r.Close()
	for r.Next() {
		var l ReviewLabel
		var values string
		if err := r.Scan(&l.Annotator, &l.TurnID, &l.SampleID, &values); err != nil {
			return nil, err
		}
		if err := json.Unmarshal([]byte(values), &l.Values); err != nil {
			return nil, err
		}
		d.Repeats = append(d.Repeats, l)
	}
	return d, r.Err()
}
