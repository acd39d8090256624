package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/m3bench/m3eval/internal/dataset"
)

// This file serves the model judge (m3eval judge --endpoint): its versions, the turns it
// reads with their images, and its scores, written a few turns at a time through the
// ScoreImporter (the judge-score path every judge uses) so that a run killed half-way keeps
// every turn it finished and a rerun skips them.

// ModelJudgeVersion is what makes a model judge's scores comparable: the model, the prompt
// and the parameters. Version names them (a hash of the rest).
type ModelJudgeVersion struct {
	Version    string
	Model      string
	PromptHash string
	Params     json.RawMessage // JSON: temperature, max_tokens, rubric version
	Prompt     string
}

// ModelJudgeTurn is one turn a model judge scored. It holds the values of its fields (all of
// them: a turn is stored whole or not at all), the judge's rationale and what the turn cost.
type ModelJudgeTurn struct {
	TurnID              int64
	Fields, Values      []string
	Rationale           string
	TokensIn, TokensOut int
	Requests            int
}

// StartModelJudge records the version of a model judge run and returns the turns the judge
// has already scored with it (a rerun skips them). Scores the judge made with another version
// (another model, prompt or parameters; or rules, or an import) are an ErrConflict unless
// replace: a changed judge re-scores only when asked to.
func (s *Store) StartModelJudge(ctx context.Context, judge string, v ModelJudgeVersion, replace bool) (map[int64]bool, error) {
	if v.Version == "" {
		return nil, fmt.Errorf("judge %s: a version is required", judge)
	}
	if strings.TrimSpace(judge) == "" || judge != strings.TrimSpace(judge) {
		return nil, fmt.Errorf("judge name %q: give a name without leading or trailing spaces", judge)
	}
	tx, err := s.beginWrite(ctx)
	if err != nil {
		return nil, fmt.Errorf("start model judge: %w", err)
	}
	defer tx.Rollback()
	var n int
	var other sql.NullString
	err = tx.QueryRowContext(ctx, `SELECT COUNT(*), MIN(COALESCE(s.rule_version, 'none (imported)')) FROM judge_scores s
		JOIN judges j ON j.id = s.judge_id WHERE j.name = ? AND s.rule_version IS DISTINCT FROM ? AND `+visibleScore, judge, v.Version).Scan(&n, &other)
	if err != nil {
		return nil, fmt.Errorf("start model judge: %w", err)
	}
	if n > 0 && !replace {
		return nil, fmt.Errorf("%w: judge %s has %d scores made with another model, prompt or parameters (%s), this run is %s; run with --replace to re-score",
			ErrConflict, judge, n, other.String, v.Version)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO judge_versions (version, model, prompt_hash, params, prompt) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT DO NOTHING`, v.Version, v.Model, v.PromptHash, string(v.Params), v.Prompt); err != nil {
		return nil, fmt.Errorf("start model judge: %w", err)
	}
	rows, err := tx.QueryContext(ctx, `SELECT t.turn_id FROM judge_turns t JOIN judges j ON j.id = t.judge_id
		WHERE j.name = ? AND t.version = ?`, judge, v.Version)
	if err != nil {
		return nil, fmt.Errorf("start model judge: %w", err)
	}
	defer rows.Close()
	done := map[int64]bool{}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("start model judge: %w", err)
		}
		done[id] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("start model judge: %w", err)
	}
	return done, tx.Commit()
}

// PutModelJudgeTurns stores turns a model judge scored. It stores their scores through a
// ScoreImporter (the path every judge's scores take; those of another version replaced),
// then, once those are committed, each turn's row in judge_turns, which marks it scored. A run killed between the
// two leaves scores without a row: the rerun asks for those turns again and replaces their
// scores, so no turn is ever stored half or counted twice.
func (s *Store) PutModelJudgeTurns(ctx context.Context, judge, version string, turns []ModelJudgeTurn) error {
	im, err := s.BeginScoreImport(ctx, judge, ImportOptions{Replace: true})
	if err != nil {
		return err
	}
	defer im.Rollback()
	im.ruleVersion = version
	for _, t := range turns {
		if _, err := im.PutTurnScores(t.TurnID, t.Fields, t.Values); err != nil {
			return fmt.Errorf("store model judge scores: %w", err)
		}
	}
	if err := im.Commit(); err != nil {
		return err
	}
	tx, err := s.beginWrite(ctx)
	if err != nil {
		return fmt.Errorf("store model judge notes: %w", err)
	}
	defer tx.Rollback()
	note, err := tx.PrepareContext(ctx, `INSERT INTO judge_turns (judge_id, turn_id, version, rationale, tokens_in, tokens_out, requests)
		VALUES ((SELECT id FROM judges WHERE name = ?), ?, ?, ?, ?, ?, ?) ON CONFLICT (judge_id, turn_id) DO UPDATE SET version = excluded.version,
		rationale = excluded.rationale, tokens_in = excluded.tokens_in, tokens_out = excluded.tokens_out, requests = excluded.requests`)
	if err != nil {
		return fmt.Errorf("store model judge notes: %w", err)
	}
	defer note.Close()
	for _, t := range turns {
		if _, err := note.ExecContext(ctx, judge, t.TurnID, version, t.Rationale, t.TokensIn, t.TokensOut, t.Requests); err != nil {
			return fmt.Errorf("store model judge notes: %w", domainError(err))
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store model judge notes: %w", err)
	}
	return nil
}

// ModelJudgeNote is what a model judge said about one turn: its values, rationale and cost,
// with the version that made them.
type ModelJudgeNote struct {
	SampleID            string
	Version             ModelJudgeVersion
	Fields, Values      []string
	Rationale           string
	TokensIn, TokensOut int
	Requests            int
}

// ModelJudgeNote returns the model judge's note on a sample. It returns ErrNotFound when the
// sample is not in the database or the judge has not scored it.
func (s *Store) ModelJudgeNote(ctx context.Context, judge, sampleID string) (*ModelJudgeNote, error) {
	n := &ModelJudgeNote{SampleID: sampleID}
	var turnID, judgeID int64
	var params string
	err := s.db.QueryRowContext(ctx, `SELECT t.id, j.id, n.rationale, n.tokens_in, n.tokens_out, n.requests,
		v.version, v.model, v.prompt_hash, v.params
		FROM visible_turns t JOIN judge_turns n ON n.turn_id = t.id JOIN judges j ON j.id = n.judge_id
		JOIN judge_versions v ON v.version = n.version
		WHERE t.sample_id = ? AND j.name = ?`, sampleID, judge).Scan(&turnID, &judgeID, &n.Rationale,
		&n.TokensIn, &n.TokensOut, &n.Requests, &n.Version.Version, &n.Version.Model, &n.Version.PromptHash, &params)
	if err == sql.ErrNoRows {
		return nil, fmt.Errorf("%w: judge %s has no rationale for sample %q (not in the database, not judged by a model judge of that name, or failed)", ErrNotFound, judge, sampleID)
	}
	if err != nil {
		return nil, fmt.Errorf("model judge note: %w", err)
	}
	n.Version.Params = json.RawMessage(params)
	rows, err := s.db.QueryContext(ctx, `SELECT field, value FROM judge_scores s WHERE judge_id = ? AND turn_id = ? AND `+visibleScore, judgeID, turnID)
	if err != nil {
		return nil, fmt.Errorf("model judge note: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var f, v string
		if err := rows.Scan(&f, &v); err != nil {
			return nil, fmt.Errorf("model judge note: %w", err)
		}
		n.Fields, n.Values = append(n.Fields, f), append(n.Values, v)
	}
	return n, rows.Err()
}

// StreamJudgeTurns is StreamEpisodes with the turns' images, which the model judge sends.
func (s *Store) StreamJudgeTurns(ctx context.Context, f TurnFilter, fn func(turns []dataset.Turn, ids []int64, chosen []bool) error) error {
	return s.streamEpisodes(ctx, f, true, fn)
}

// IsModelJudge tells whether the named judge has turns judged by a model (m3eval judge
// --endpoint) rather than by rules or an import.
func (s *Store) IsModelJudge(ctx context.Context, judge string) (bool, error) {
	var ok bool
	err := s.db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM judge_turns t JOIN judges j ON j.id = t.judge_id WHERE j.name = ?)`, judge).Scan(&ok)
	if err != nil {
		return false, fmt.Errorf("model judge: %w", err)
	}
	return ok, nil
}
