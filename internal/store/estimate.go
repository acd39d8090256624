package store

import (
	"context"
	"fmt"
	"strings"
)

// This file is the read path of m3eval estimate: one judge's scores on every turn and the
// annotators' done values, with what each turn belongs to (model, group, episode).

// EstimateFilter chooses what StreamEstimate reads.
type EstimateFilter struct {
	Judge      string   // the judge whose scores are read
	Fields     []string // the fields to read
	Annotators []string // none: every annotator
	By         string   // "" or one of GroupKeys: fills EstimateRow.Group
}

// EstimateRow is one judge score (Who = "") or one annotator's done value of a turn.
type EstimateRow struct {
	Sample  string
	Episode string // the turn's episode key
	Model   string
	Group   string // the turn's value of EstimateFilter.By ("" without grouping)
	Field   string
	Value   string
	Who     string // the annotator ("" for the judge's score)
}

// StreamEstimate calls score for every stored score of the judge on the chosen fields, then
// label for every done, current value of those fields (not stale, not a repeat annotator's
// second label), both in queue order and in one read transaction. The row is reused.
func (s *Store) StreamEstimate(ctx context.Context, f EstimateFilter, score, label func(*EstimateRow) error) error {
	grp, ok := groupColumns[f.By]
	if !ok {
		return fmt.Errorf("group by %q: use one of %s", f.By, strings.Join(GroupKeys(), ", "))
	}
	if len(f.Fields) == 0 {
		return nil
	}
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("estimate: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, s.d.beginRead()); err != nil {
		return fmt.Errorf("estimate: %w", err)
	}
	defer conn.ExecContext(context.Background(), `ROLLBACK`)

	args := []any{f.Judge}
	for _, name := range f.Fields {
		args = append(args, name)
	}
	read := func(fn func(*EstimateRow) error, withWho bool, q string, args []any) error {
		rows, err := conn.QueryContext(ctx, q, args...)
		if err != nil {
			return fmt.Errorf("estimate: %w", err)
		}
		defer rows.Close()
		var r EstimateRow
		dst := []any{&r.Sample, &r.Episode, &r.Model, &r.Group, &r.Field, &r.Value}
		if withWho {
			dst = append(dst, &r.Who)
		}
		for rows.Next() {
			if err := rows.Scan(dst...); err != nil {
				return fmt.Errorf("estimate: %w", err)
			}
			if err := fn(&r); err != nil {
				return err
			}
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("estimate: %w", err)
		}
		return nil
	}
	err = read(score, false, `SELECT t.sample_id, e.episode_key, t.model, `+grp+`, s.field, s.value
		FROM judge_scores s
		JOIN judges j ON j.id = s.judge_id
		JOIN visible_turns t ON t.id = s.turn_id
		JOIN episodes e ON e.id = t.episode_id
		WHERE j.name = ? AND `+visibleScore+` AND s.field IN (`+placeholders(len(f.Fields))+`)
		ORDER BY t.episode_id, t.turn, s.field`, args)
	if err != nil {
		return err
	}
	where := `a.status = 'done' AND NOT a.stale AND an.repeat_of IS NULL AND v.field IN (` + placeholders(len(f.Fields)) + `)`
	args = args[1:]
	if len(f.Annotators) > 0 {
		where += ` AND an.name IN (` + placeholders(len(f.Annotators)) + `)`
		for _, n := range f.Annotators {
			args = append(args, n)
		}
	}
	return read(label, true, `SELECT t.sample_id, e.episode_key, t.model, `+grp+`, v.field, v.value, an.name
		FROM visible_turns t
		`+s.d.crossJoin()+` visible_annotations a ON a.turn_id = t.id
		JOIN annotation_values v ON v.annotation_id = a.id
		JOIN episodes e ON e.id = t.episode_id
		JOIN annotators an ON an.id = a.annotator_id
		WHERE `+where+` ORDER BY t.episode_id, t.turn, an.name`, args)
}

// TurnScore is one judge's score of one field of a turn.
type TurnScore struct {
	TurnID int64
	Judge  string
	Field  string
	Value  string
}

// StreamTurnScores calls fn for every stored score of the fields by any judge, turn by turn
// in queue order (m3eval sample --active reads the judges' disagreement from them).
func (s *Store) StreamTurnScores(ctx context.Context, fields []string, fn func(*TurnScore) error) error {
	if len(fields) == 0 {
		return nil
	}
	args := make([]any, len(fields))
	for i, f := range fields {
		args[i] = f
	}
	rows, err := s.db.QueryContext(ctx, `SELECT t.id, j.name, s.field, s.value
		FROM judge_scores s JOIN judges j ON j.id = s.judge_id JOIN visible_turns t ON t.id = s.turn_id
		WHERE `+visibleScore+` AND s.field IN (`+placeholders(len(fields))+`) ORDER BY t.episode_id, t.turn, j.name, s.field`, args...)
	if err != nil {
		return fmt.Errorf("read judge scores: %w", err)
	}
	defer rows.Close()
	var r TurnScore
	for rows.Next() {
		if err := rows.Scan(&r.TurnID, &r.Judge, &r.Field, &r.Value); err != nil {
			return fmt.Errorf("read judge scores: %w", err)
		}
		if err := fn(&r); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read judge scores: %w", err)
	}
	return nil
}

// SampleInclusion returns, by sample id, the inclusion probability of every turn of the
// stored active sample name. A sample drawn without --active is an error that says so.
func (s *Store) SampleInclusion(ctx context.Context, name string) (map[string]float64, error) {
	info, err := s.Sample(ctx, name)
	if err != nil {
		return nil, err
	}
	if info.Params.Active == nil {
		return nil, fmt.Errorf("sample %q was not drawn with --active: it records no inclusion probabilities (draw one with m3eval sample --active --judge NAME)", name)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT t.sample_id, st.inclusion_probability FROM sample_turns st
		JOIN samples sa ON sa.id = st.sample_id JOIN turns t ON t.id = st.turn_id
		WHERE sa.name = ? AND st.inclusion_probability IS NOT NULL`, name)
	if err != nil {
		return nil, fmt.Errorf("sample %q: %w", name, err)
	}
	defer rows.Close()
	out := map[string]float64{}
	for rows.Next() {
		var id string
		var p float64
		if err := rows.Scan(&id, &p); err != nil {
			return nil, fmt.Errorf("sample %q: %w", name, err)
		}
		out[id] = p
	}
	return out, rows.Err()
}

// JudgeIsRuleJudge tells whether the named judge's scores come from the rule judge (their
// version is a recorded rule set) rather than from import-scores or a model judge (whose
// versions are in the same column but name a model, not a rule set).
func (s *Store) JudgeIsRuleJudge(ctx context.Context, name string) (bool, error) {
	var ok bool
	err := s.db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM judge_scores s JOIN judges j ON j.id = s.judge_id
		WHERE j.name = ? AND s.rule_version IN (SELECT version FROM judge_rule_sets) AND `+visibleScore+`)`, name).Scan(&ok)
	if err != nil {
		return false, fmt.Errorf("judge %s: %w", name, err)
	}
	return ok, nil
}
