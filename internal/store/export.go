package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/m3bench/m3eval/internal/dataset"
	"github.com/m3bench/m3eval/internal/rubric"
)

// ExportOptions choose the labels to export.
type ExportOptions struct {
	Annotator     string // "" for all annotators
	IncludeDrafts bool
}

func exportWhere(o ExportOptions) (string, []any) {
	// Second labels of repeated turns (annotators.repeat_of) are quality control, not labels.
	return `(? = '' OR an.name = ?) AND (? OR a.status = 'done') AND an.repeat_of IS NULL`, []any{o.Annotator, o.Annotator, o.IncludeDrafts}
}

// ExportAnnotators lists the annotators whose labels an export with these options contains.
func (s *Store) ExportAnnotators(ctx context.Context, o ExportOptions) ([]string, error) {
	w, args := exportWhere(o)
	rows, err := s.db.QueryContext(ctx, `SELECT an.name FROM annotators an WHERE EXISTS (
		SELECT 1 FROM visible_annotations a WHERE a.annotator_id = an.id AND `+w+`) ORDER BY an.name`, args...)
	if err != nil {
		return nil, fmt.Errorf("list annotators: %w", err)
	}
	return scanStrings(rows)
}

// scanStrings reads a one-column result of text and closes it.
func scanStrings(rows *sql.Rows) ([]string, error) {
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// Export streams the labeled turns in queue order. fn sees each turn once with all its labels.
func (s *Store) Export(ctx context.Context, o ExportOptions, fn func(*dataset.Labeled) error) error {
	w, args := exportWhere(o)
	rows, err := s.db.QueryContext(ctx, `SELECT t.id, t.sample_id, e.episode_key, t.turn, t.action_type, t.task_type,
		t.user_message, t.vlm_response, t.expected_answer, t.images, t.model, t.meta,
		an.name, a.status, a.flagged, a.flag_reason, a.rubric_version, a.active_ms,
		COALESCE(a.annotated_at, a.updated_at), a.stale,
		(SELECT `+s.d.jsonGroupObject("v.field", "v.value")+` FROM annotation_values v WHERE v.annotation_id = a.id)
		FROM visible_annotations a
		JOIN annotators an ON an.id = a.annotator_id
		JOIN visible_turns t ON t.id = a.turn_id
		JOIN episodes e ON e.id = t.episode_id
		WHERE `+w+` ORDER BY t.episode_id, t.turn, an.name`, args...)
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	defer rows.Close()
	var cur *dataset.Labeled
	var curID int64
	for rows.Next() {
		var (
			id                 int64
			t                  dataset.Turn
			images, at, values string
			meta               sql.NullString
			l                  dataset.Label
			ms                 int64
		)
		if err := rows.Scan(&id, &t.SampleID, &t.EpisodeID, &t.Turn, &t.ActionType, &t.TaskType, &t.UserMessage,
			&t.VLMResponse, &t.ExpectedAnswer, &images, &t.Model, &meta,
			&l.Annotator, &l.Status, &l.Flagged, &l.FlagReason, &l.RubricVersion, &ms, &at, &l.Stale, &values); err != nil {
			return fmt.Errorf("export: %w", err)
		}
		if cur == nil || id != curID {
			if cur != nil {
				if err := fn(cur); err != nil {
					return err
				}
			}
			if err := json.Unmarshal([]byte(images), &t.Images); err != nil {
				return fmt.Errorf("export %s: images: %w", t.SampleID, err)
			}
			if meta.Valid {
				t.Meta = json.RawMessage(meta.String)
			}
			cur, curID = &dataset.Labeled{Turn: t}, id
		}
		l.ActiveSeconds = float64(ms) / 1000
		l.AnnotatedAt = parseTime(at)
		if err := json.Unmarshal([]byte(values), &l.Values); err != nil {
			return fmt.Errorf("export %s: values: %w", t.SampleID, err)
		}
		if l.Values == nil {
			l.Values = rubric.Values{}
		}
		cur.Labels = append(cur.Labels, l)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	if cur != nil {
		return fn(cur)
	}
	return nil
}

// AnnotatorStatus is one annotator's line of `m3eval status`. Draft counts started labels
// not submitted: an item only skipped (moved to the end of the queue, nothing answered or
// flagged) is Skipped, not a draft, since nobody started it.
type AnnotatorStatus struct {
	Name                          string
	Done, Draft, Flagged, Skipped int
	Stale                         int // drafts made on earlier content of a replaced turn
	MedianActive                  time.Duration
	HasMedian                     bool
}

// Status summarizes the database: how many turns, and each annotator's progress.
type Status struct {
	Turns, Episodes int
	Annotators      []AnnotatorStatus
}

// Status reads the summary of `m3eval status`.
func (s *Store) Status(ctx context.Context) (*Status, error) {
	st := &Status{}
	if err := s.db.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM visible_turns),
		(SELECT count(*) FROM episodes WHERE import_batch IS NULL OR import_batch NOT IN (SELECT id FROM import_batches))`).
		Scan(&st.Turns, &st.Episodes); err != nil {
		return nil, fmt.Errorf("status: %w", err)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT an.id, an.name,
		count(*) FILTER (WHERE a.status = 'done'),
		count(*) FILTER (WHERE a.status = 'draft' AND (a.skip_seq IS NULL OR a.flagged
			OR EXISTS (SELECT 1 FROM annotation_values v WHERE v.annotation_id = a.id))),
		count(*) FILTER (WHERE a.flagged), count(*) FILTER (WHERE a.skip_seq IS NOT NULL),
		count(*) FILTER (WHERE a.stale)
		FROM annotators an JOIN visible_annotations a ON a.annotator_id = an.id WHERE an.repeat_of IS NULL GROUP BY an.id ORDER BY an.name`)
	if err != nil {
		return nil, fmt.Errorf("status: %w", err)
	}
	var ids []int64
	for rows.Next() {
		var id int64
		var a AnnotatorStatus
		if err := rows.Scan(&id, &a.Name, &a.Done, &a.Draft, &a.Flagged, &a.Skipped, &a.Stale); err != nil {
			rows.Close()
			return nil, err
		}
		ids = append(ids, id)
		st.Annotators = append(st.Annotators, a)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for i, id := range ids {
		q := &Queue{s: s, annotatorID: id, seeks: []condition{{"true", nil}}}
		d, ok, err := q.MedianActive(ctx)
		if err != nil {
			return nil, err
		}
		st.Annotators[i].MedianActive, st.Annotators[i].HasMedian = d, ok
	}
	return st, nil
}
