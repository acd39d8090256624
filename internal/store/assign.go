package store

import (
	"context"
	"fmt"
	"time"

	"github.com/m3bench/m3eval/internal/dataset"
	"github.com/m3bench/m3eval/internal/rubric"
)

// AssignKind says why a turn is in an annotator's queue. The annotator's screen never shows
// it: gold and repeated turns look like any other.
type AssignKind string

// The kinds of assignment.
const (
	AssignMain   AssignKind = "main"   // a sampled turn
	AssignGold   AssignKind = "gold"   // a turn with a known label
	AssignRepeat AssignKind = "repeat" // a turn shown to the same annotator again
)

// CampaignSettings are how a sample was assigned.
type CampaignSettings struct {
	Overlap    int
	GoldRate   float64
	RepeatRate float64
	Seed       int64
	AssignedAt time.Time
}

// Assigned is one turn in one annotator's queue, with the annotator's progress on it.
type Assigned struct {
	Annotator string
	TurnID    int64
	SampleID  string
	Kind      AssignKind
	// Status is the annotator's annotation status of the turn, "" before the first change.
	Status dataset.Status
}

// Campaign is a sample's assignment as stored.
type Campaign struct {
	Sample   *SampleInfo
	Settings *CampaignSettings // nil before the first assign
	Rows     []Assigned        // by annotator name, then queue order
}

// Campaign reads the assignment of the named sample.
func (s *Store) Campaign(ctx context.Context, name string) (*Campaign, error) {
	info, err := s.Sample(ctx, name)
	if err != nil {
		return nil, err
	}
	c := &Campaign{Sample: info}
	var set CampaignSettings
	var at string
	err = s.db.QueryRowContext(ctx, `SELECT c.overlap, c.gold_rate, c.repeat_rate, c.seed, c.assigned_at FROM campaigns c
		JOIN samples sa ON sa.id = c.sample_id WHERE sa.name = ?`, name).Scan(&set.Overlap, &set.GoldRate, &set.RepeatRate, &set.Seed, &at)
	switch err = domainError(err); {
	case err == ErrNotFound:
		return c, nil
	case err != nil:
		return nil, fmt.Errorf("campaign %q: %w", name, err)
	}
	set.AssignedAt = parseTime(at)
	c.Settings = &set
	rows, err := s.db.QueryContext(ctx, `SELECT an.name, t.id, t.sample_id, x.kind, COALESCE(a.status, '')
		FROM assignments x JOIN samples sa ON sa.id = x.sample_id
		JOIN annotators an ON an.id = x.annotator_id JOIN turns t ON t.id = x.turn_id
		LEFT JOIN visible_annotations a ON a.turn_id = x.turn_id AND a.annotator_id = CASE x.kind
			WHEN 'repeat' THEN (SELECT h.id FROM annotators h WHERE h.repeat_of = x.annotator_id) ELSE x.annotator_id END
		WHERE sa.name = ? ORDER BY an.name, t.episode_id, t.turn, x.kind`, name)
	if err != nil {
		return nil, fmt.Errorf("campaign %q: %w", name, err)
	}
	defer rows.Close()
	for rows.Next() {
		var r Assigned
		if err := rows.Scan(&r.Annotator, &r.TurnID, &r.SampleID, &r.Kind, &r.Status); err != nil {
			return nil, err
		}
		c.Rows = append(c.Rows, r)
	}
	return c, rows.Err()
}

// Started lists which annotators have an annotation of the given turns: work that must not
// move. An annotation of any status counts, also one an import under way is writing.
func (s *Store) Started(ctx context.Context, turnIDs []int64) (map[int64][]string, error) {
	out := map[int64][]string{}
	const chunk = 500
	for lo := 0; lo < len(turnIDs); lo += chunk {
		ids := turnIDs[lo:min(lo+chunk, len(turnIDs))]
		args := make([]any, len(ids))
		for i, id := range ids {
			args[i] = id
		}
		rows, err := s.db.QueryContext(ctx, `SELECT a.turn_id, an.name FROM annotations a JOIN annotators an ON an.id = a.annotator_id
			WHERE a.turn_id IN (`+placeholders(len(ids))+`) AND an.repeat_of IS NULL ORDER BY a.turn_id, an.name`, args...)
		if err != nil {
			return nil, fmt.Errorf("started work: %w", err)
		}
		for rows.Next() {
			var id int64
			var name string
			if err := rows.Scan(&id, &name); err != nil {
				rows.Close()
				return nil, err
			}
			out[id] = append(out[id], name)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// SaveAssignment replaces the named sample's assignment with rows, in one transaction. It
// refuses (ErrConflict) to drop an assignment whose annotator has started the turn, so that
// work already done never moves.
func (s *Store) SaveAssignment(ctx context.Context, name string, set CampaignSettings, rows []Assigned) error {
	tx, err := s.beginWrite(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	id, err := s.sampleID(ctx, tx, name)
	if err != nil {
		return err
	}
	keep := map[[2]string]bool{}
	for _, r := range rows {
		keep[[2]string{r.Annotator, fmt.Sprint(r.TurnID, r.Kind)}] = true
	}
	old, err := tx.QueryContext(ctx, `SELECT an.name, x.turn_id, x.kind, t.sample_id FROM assignments x
		JOIN annotators an ON an.id = x.annotator_id JOIN turns t ON t.id = x.turn_id
		WHERE x.sample_id = ? AND x.kind <> 'repeat' AND EXISTS (SELECT 1 FROM annotations a WHERE a.annotator_id = x.annotator_id AND a.turn_id = x.turn_id)`, id)
	if err != nil {
		return err
	}
	for old.Next() {
		var who, kind, sid string
		var turn int64
		if err := old.Scan(&who, &turn, &kind, &sid); err != nil {
			old.Close()
			return err
		}
		if !keep[[2]string{who, fmt.Sprint(turn, kind)}] {
			old.Close()
			return fmt.Errorf("assign %s: %w: %s has started %s, which the new assignment takes away", name, ErrConflict, who, sid)
		}
	}
	old.Close()
	if err := old.Err(); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM assignments WHERE sample_id = ?`, id); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO campaigns (sample_id, overlap, gold_rate, repeat_rate, seed, assigned_at) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (sample_id) DO UPDATE SET overlap = excluded.overlap, gold_rate = excluded.gold_rate,
		repeat_rate = excluded.repeat_rate, seed = excluded.seed, assigned_at = excluded.assigned_at`,
		id, set.Overlap, set.GoldRate, set.RepeatRate, set.Seed, formatTime(s.Now())); err != nil {
		return fmt.Errorf("assign %s: %w", name, err)
	}
	ids := map[string]int64{}
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO assignments (sample_id, annotator_id, turn_id, kind) VALUES (?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	defer stmt.Close()
	for _, r := range rows {
		aid, ok := ids[r.Annotator]
		if !ok {
			if aid, err = ensureAnnotator(ctx, tx, r.Annotator); err != nil {
				return err
			}
			ids[r.Annotator] = aid
		}
		if _, err := stmt.ExecContext(ctx, id, aid, r.TurnID, string(r.Kind)); err != nil {
			return fmt.Errorf("assign %s: %s: %w", name, r.Annotator, domainError(err))
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("assign %s: %w", name, err)
	}
	return nil
}

// GoldLabel is the known label of a turn, from a gold file.
type GoldLabel struct {
	SampleID string
	Values   rubric.Values
	// Where names the file and line, for errors.
	Where string
}

// PutGoldLabels stores known labels (replacing earlier ones of the same turns) in one
// transaction and returns the turns' ids in the order given. A sample_id that is not
// imported is ErrNotFound, named with its file and line.
func (s *Store) PutGoldLabels(ctx context.Context, source string, labels []GoldLabel) ([]int64, error) {
	tx, err := s.beginWrite(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	ids := make([]int64, len(labels))
	for i, l := range labels {
		if err := tx.QueryRowContext(ctx, `SELECT id FROM visible_turns WHERE sample_id = ?`, l.SampleID).Scan(&ids[i]); err != nil {
			return nil, fmt.Errorf("%s: sample_id %q: %w (import the gold turns first: m3eval import %s)", l.Where, l.SampleID, domainError(err), source)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM gold_labels WHERE turn_id = ?`, ids[i]); err != nil {
			return nil, err
		}
		for f, v := range l.Values {
			if _, err := tx.ExecContext(ctx, `INSERT INTO gold_labels (turn_id, field, value, source) VALUES (?, ?, ?, ?)`, ids[i], f, v, source); err != nil {
				return nil, fmt.Errorf("%s: %w", l.Where, err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("gold labels: %w", err)
	}
	return ids, nil
}

// GoldTurns lists the turns with a known label, in queue order.
func (s *Store) GoldTurns(ctx context.Context) ([]SampleTurn, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT t.id, t.sample_id, t.episode_id, t.turn FROM visible_turns t
		WHERE t.id IN (SELECT turn_id FROM gold_labels) ORDER BY t.episode_id, t.turn`)
	if err != nil {
		return nil, fmt.Errorf("gold turns: %w", err)
	}
	return scanSampleTurns(rows)
}
