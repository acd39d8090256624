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
	var labels []ReviewLabel
	d, err := s.review(ctx, campaign, false, func(l *ReviewLabel) error {
		labels = append(labels, *l)
		return nil
	})
	if err != nil {
		return nil, err
	}
	d.Labels = labels
	return d, nil
}

// StreamReview is Review for a reader that keeps only what it needs of each label (m3eval
// qc and the report's quality control at a million labels): it hands each submitted label
// to fn instead of collecting them, and returns the gold labels and repeats with Labels nil.
// The labels share memory: equal annotator names and action types are one string, and labels
// with the same answers share one Values map, so fn and its callers must not change a
// label's Values.
func (s *Store) StreamReview(ctx context.Context, campaign string, fn func(*ReviewLabel) error) (*ReviewData, error) {
	return s.review(ctx, campaign, true, fn)
}

// review reads the submitted labels of Review into fn, then the gold labels and repeats.
// With share, equal strings and equal answers are stored once (StreamReview).
func (s *Store) review(ctx context.Context, campaign string, share bool, fn func(*ReviewLabel) error) (*ReviewData, error) {
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
	// With share: the few distinct names, action types and flag reasons, and the answers
	// by their JSON text (up to maxShared of them: past that the answers are mostly
	// distinct, free-text comments, and the map would only add to them).
	const maxShared = 1 << 16
	names := map[string]string{}
	answers := map[string]rubric.Values{}
	intern := func(x string) string {
		if y, ok := names[x]; ok {
			return y
		}
		if len(names) < maxShared {
			names[x] = x
		}
		return x
	}
	var prevSample string
	for rows.Next() {
		var l ReviewLabel
		var ms int64
		var at, values string
		if err := rows.Scan(&l.Annotator, &l.TurnID, &l.SampleID, &l.ActionType, &l.Turn, &ms, &at, &l.Flagged, &l.FlagReason, &l.Imported, &values); err != nil {
			return nil, fmt.Errorf("review: %w", err)
		}
		l.Active = time.Duration(ms) * time.Millisecond
		l.At = parseTime(at)
		if share {
			// Rows come by turn: a turn's labels are consecutive, so its sample_id is
			// shared by comparing with the row before.
			if l.SampleID == prevSample {
				l.SampleID = prevSample
			}
			prevSample = l.SampleID
			l.Annotator, l.ActionType, l.FlagReason = intern(l.Annotator), intern(l.ActionType), intern(l.FlagReason)
			l.Values = answers[values]
		}
		if l.Values == nil {
			if err := json.Unmarshal([]byte(values), &l.Values); err != nil {
				return nil, fmt.Errorf("review %s: %w", l.SampleID, err)
			}
			if l.Values == nil {
				l.Values = rubric.Values{}
			}
			if share && len(answers) < maxShared {
				answers[values] = l.Values
			}
		}
		if err := fn(&l); err != nil {
			return nil, err
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("review: %w", err)
	}
	d := &ReviewData{Gold: map[string]rubric.Values{}}
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
