package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/m3bench/m3eval/internal/dataset"
)

// This file serves the rule-based judge (m3eval judge): the turns it reads, episode by
// episode, and the rule version stored with its scores. The scores themselves go through the
// ScoreImporter, as import-scores' do.

// turnColumns are the turn attributes m3eval judge and score --metrics filter on.
var turnColumns = map[string]string{
	"action_type": "t.action_type",
	"task_type":   "t.task_type",
	"model":       "t.model",
	"episode":     "e.episode_key",
	"sample_id":   "t.sample_id",
}

// TurnFilterKeys lists the keys a TurnFilter accepts.
func TurnFilterKeys() []string { return slices.Sorted(maps.Keys(turnColumns)) }

// TurnFilter chooses turns: for each key, the turn's value must be one of the values given.
type TurnFilter map[string][]string

// where returns the SQL condition of the filter; only turnColumns' text reaches the SQL.
func (f TurnFilter) where() (string, []any, error) {
	keys := slices.Sorted(maps.Keys(f))
	conds := []string{"true"}
	var args []any
	for _, k := range keys {
		col, ok := turnColumns[k]
		if !ok {
			return "", nil, fmt.Errorf("cannot filter on %q (use one of %s)", k, strings.Join(TurnFilterKeys(), ", "))
		}
		if len(f[k]) == 0 {
			continue
		}
		conds = append(conds, col+` IN (`+placeholders(len(f[k]))+`)`)
		for _, v := range f[k] {
			args = append(args, v)
		}
	}
	return strings.Join(conds, " AND "), args, nil
}

// StreamEpisodes calls fn once per episode that holds a turn the filter chooses (turns of an
// import still under way are not there yet, as for every reader), with all of
// the episode's turns in turn order (the judge reads a turn against the earlier ones) and,
// beside each, its id in the store (for ScoreImporter.PutScore) and whether the filter
// chose it. Episodes come in queue order. It reads in one
// read transaction of its own, so it may run while a ScoreImporter writes; the slices passed
// are reused between calls.
func (s *Store) StreamEpisodes(ctx context.Context, f TurnFilter, fn func(turns []dataset.Turn, ids []int64, chosen []bool) error) error {
	return s.streamEpisodes(ctx, f, false, fn)
}

// streamEpisodes is StreamEpisodes, with the turns' images when withImages (the model judge
// sends them; the rule judge does not read them, and decoding them would slow its
// million-turn runs for nothing).
func (s *Store) streamEpisodes(ctx context.Context, f TurnFilter, withImages bool, fn func(turns []dataset.Turn, ids []int64, chosen []bool) error) error {
	w, args, err := f.where()
	if err != nil {
		return err
	}
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("read turns: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, s.d.beginRead()); err != nil {
		return fmt.Errorf("read turns: %w", err)
	}
	defer conn.ExecContext(context.Background(), `ROLLBACK`)
	images := `''`
	if withImages {
		images = `t.images`
	}
	q := `SELECT t.sample_id, e.episode_key, t.turn, t.action_type, t.task_type, t.user_message,
		t.vlm_response, t.expected_answer, t.model, t.meta, ` + images + `, t.episode_id, t.id, (` + w + `)
		FROM visible_turns t JOIN episodes e ON e.id = t.episode_id`
	if len(f) > 0 {
		q += ` WHERE t.episode_id IN (SELECT t.episode_id FROM visible_turns t JOIN episodes e ON e.id = t.episode_id WHERE ` + w + `)`
		args = append(args, args...)
	}
	q += ` ORDER BY t.episode_id, t.turn`
	rows, err := conn.QueryContext(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("read turns: %w", err)
	}
	defer rows.Close()
	var (
		turns  []dataset.Turn
		ids    []int64
		chosen []bool
		cur    int64 = -1
		some   bool
	)
	flush := func() error {
		if len(turns) == 0 || !some {
			return nil
		}
		return fn(turns, ids, chosen)
	}
	for rows.Next() {
		var (
			t       dataset.Turn
			meta    sql.NullString
			imgJSON string
			ep, id  int64
			ok      bool
		)
		if err := rows.Scan(&t.SampleID, &t.EpisodeID, &t.Turn, &t.ActionType, &t.TaskType, &t.UserMessage,
			&t.VLMResponse, &t.ExpectedAnswer, &t.Model, &meta, &imgJSON, &ep, &id, &ok); err != nil {
			return fmt.Errorf("read turns: %w", err)
		}
		if meta.Valid {
			t.Meta = json.RawMessage(meta.String)
		}
		if imgJSON != "" {
			if err := json.Unmarshal([]byte(imgJSON), &t.Images); err != nil {
				return fmt.Errorf("read turns: sample %s: images: %w", t.SampleID, err)
			}
		}
		if ep != cur {
			if err := flush(); err != nil {
				return err
			}
			turns, ids, chosen, cur, some = turns[:0], ids[:0], chosen[:0], ep, false
		}
		turns = append(turns, t)
		ids = append(ids, id)
		chosen = append(chosen, ok)
		some = some || ok
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read turns: %w", err)
	}
	return flush()
}

// BeginJudgeRun starts storing the scores of a rule-based judge made with the rule set of
// the given version (body: the rule file). Scores the judge made with other rules (or
// imported without rules) are an ErrConflict unless replace: changed rules re-score only
// when asked to. The rule set's text is recorded once.
func (s *Store) BeginJudgeRun(ctx context.Context, judge, version string, body []byte, replace bool) (*ScoreImporter, error) {
	if version == "" {
		return nil, fmt.Errorf("judge %s: a rule version is required", judge)
	}
	im, err := s.BeginScoreImport(ctx, judge, ImportOptions{Replace: replace})
	if err != nil {
		return nil, err
	}
	im.ruleVersion = version
	var n int
	var other sql.NullString
	conn := im.im.conn
	err = im.im.ensureTx()
	if err == nil {
		err = conn.QueryRowContext(ctx, `SELECT COUNT(*), MIN(COALESCE(rule_version, 'none (imported)')) FROM judge_scores s
			WHERE judge_id = ? AND rule_version IS DISTINCT FROM ? AND `+visibleScore, im.judgeID, version).Scan(&n, &other)
	}
	if err == nil && n > 0 && !replace {
		err = fmt.Errorf("%w: judge %s has %d scores made with other rules (%s), these rules are %s; run with --replace to re-score", ErrConflict, judge, n, other.String, version)
	}
	if err == nil {
		_, err = conn.ExecContext(ctx, `INSERT INTO judge_rule_sets (version, body) VALUES (?, ?) ON CONFLICT DO NOTHING`, version, body)
	}
	if err == nil {
		var some bool
		err = conn.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM judge_scores WHERE judge_id = ?)`, im.judgeID).Scan(&some)
		im.fresh = !some
	}
	if err != nil {
		im.Rollback()
		return nil, err
	}
	return im, nil
}

// JudgeRuleVersions lists, for a judge, the rule versions of its scores and how many each
// (version "" for imported scores).
func (s *Store) JudgeRuleVersions(ctx context.Context, judge string) (map[string]int, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT COALESCE(s.rule_version, ''), COUNT(*) FROM judge_scores s
		JOIN judges j ON j.id = s.judge_id WHERE j.name = ? AND `+visibleScore+` GROUP BY 1`, judge)
	if err != nil {
		return nil, fmt.Errorf("judge rule versions: %w", err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var v string
		var n int
		if err := rows.Scan(&v, &n); err != nil {
			return nil, err
		}
		out[v] = n
	}
	return out, rows.Err()
}

// PutTurnScores stores a judge run's values for the fields of one turn (value "" is no
// score), with the outcome of each. On a judge's first run every score is new, and one
// statement inserts the turn's scores (a fifth of the statements, most of the writer's time
// in BenchmarkJudge1M); otherwise each field goes through PutScore.
func (im *ScoreImporter) PutTurnScores(turnID int64, fields, values []string) ([]dataset.Outcome, error) {
	if err := im.im.ensureTx(); err != nil {
		return nil, err
	}
	out, err := im.putTurnScores(turnID, fields, values)
	if err != nil {
		return nil, err
	}
	return out, im.im.maybeCommit()
}

func (im *ScoreImporter) putTurnScores(turnID int64, fields, values []string) ([]dataset.Outcome, error) {
	out := make([]dataset.Outcome, len(fields))
	if !im.fresh {
		for i := range fields {
			o, err := im.putScore(turnID, fields[i], values[i])
			if err != nil {
				return nil, fmt.Errorf("%s: %w", fields[i], err)
			}
			out[i] = o
		}
		return out, nil
	}
	args := make([]any, 0, freshArgs*len(fields))
	for i := range fields {
		args, out[i] = im.appendFresh(args, turnID, fields[i], values[i])
	}
	return out, im.insertFresh(args)
}

// TurnScores are a judge run's values for the fields of one turn (value "" is no score);
// Sample names the turn in errors.
type TurnScores struct {
	TurnID         int64
	Sample         string
	Fields, Values []string
}

// maxFreshRows is the most scores one statement of a first run inserts (an episode of 50
// turns of five scores; a longer one takes several statements), far below either backend's
// limit on parameters (32,766 in SQLite, 65,535 in PostgreSQL).
const maxFreshRows = 250

// PutTurnsScores is PutTurnScores for several turns (an episode's), with the outcomes of
// each turn's fields. On a judge's first run one statement inserts the scores of many turns:
// at a million turns, the statements and their calls into the database driver were most of
// the writer's time at a turn each (#43).
func (im *ScoreImporter) PutTurnsScores(ts []TurnScores) ([][]dataset.Outcome, error) {
	if err := im.im.ensureTx(); err != nil {
		return nil, err
	}
	out := make([][]dataset.Outcome, len(ts))
	if !im.fresh {
		for i, t := range ts {
			o, err := im.putTurnScores(t.TurnID, t.Fields, t.Values)
			if err != nil {
				return nil, fmt.Errorf("sample %s: %w", t.Sample, err)
			}
			out[i] = o
		}
		return out, im.im.maybeCommit()
	}
	n := 0
	for _, t := range ts {
		n += len(t.Fields)
	}
	flat := make([]dataset.Outcome, n)
	args := make([]any, 0, freshArgs*min(n, maxFreshRows))
	first := 0 // the first turn with a score in args
	flush := func(last int) error {
		if err := im.insertFresh(args); err != nil {
			return fmt.Errorf("samples %s to %s: %w", ts[first].Sample, ts[last].Sample, err)
		}
		args, first = args[:0], last
		return nil
	}
	for i, t := range ts {
		out[i], flat = flat[:len(t.Fields):len(t.Fields)], flat[len(t.Fields):]
		for k := range t.Fields {
			args, out[i][k] = im.appendFresh(args, t.TurnID, t.Fields[k], t.Values[k])
			if len(args) == freshArgs*maxFreshRows {
				if err := flush(i); err != nil {
					return nil, err
				}
			}
		}
	}
	if len(ts) > 0 {
		if err := flush(len(ts) - 1); err != nil {
			return nil, err
		}
	}
	return out, im.im.maybeCommit()
}

// appendFresh adds a first run's score to the arguments of insertFresh: Inserted, or
// Unchanged when the judge gave no score (none is stored).
func (im *ScoreImporter) appendFresh(args []any, turnID int64, field, value string) ([]any, dataset.Outcome) {
	if value == "" {
		return args, dataset.Unchanged
	}
	return append(args, turnID, field, value, im.ruleVersion), dataset.Inserted
}

// freshArgs are the arguments of a row of insertRows: the judge and the batch, the same in
// every row, are numbers written into the statement (a million-turn run binds 10,000,000
// arguments fewer).
const freshArgs = 4

// insertFresh inserts the rows appendFresh gathered, in one statement.
func (im *ScoreImporter) insertFresh(args []any) error {
	n := len(args) / freshArgs
	if n == 0 {
		return nil
	}
	stmt, err := im.insertRows(n)
	if err != nil {
		return err
	}
	res, err := stmt.ExecContext(im.ctx, args...)
	if err != nil {
		return fmt.Errorf("store scores: %w", domainError(err))
	}
	if k, _ := res.RowsAffected(); k != int64(n) {
		return fmt.Errorf("store scores: %w: %d of %d scores of a first run were already stored", ErrConflict, int64(n)-k, n)
	}
	return nil
}

// insertRows prepares (once per size) the insert of n scores.
func (im *ScoreImporter) insertRows(n int) (*sql.Stmt, error) {
	if im.multi == nil {
		im.multi = map[int]*sql.Stmt{}
	}
	if st := im.multi[n]; st != nil {
		return st, nil
	}
	row := "(" + strconv.FormatInt(im.judgeID, 10) + ", ?, ?, ?, ?, " + strconv.FormatInt(im.im.batch, 10) + "), "
	q := `INSERT INTO judge_scores (judge_id, turn_id, field, value, rule_version, import_batch) VALUES ` +
		strings.TrimSuffix(strings.Repeat(row, n), ", ") + ` ON CONFLICT DO NOTHING`
	st, err := im.im.conn.PrepareContext(im.ctx, q)
	if err != nil {
		return nil, fmt.Errorf("store scores: %w", err)
	}
	im.multi[n] = st
	return st, nil
}
