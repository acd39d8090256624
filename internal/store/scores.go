package store

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"

	"github.com/m3bench/m3eval/internal/dataset"
	"github.com/m3bench/m3eval/internal/rubric"
)

// This file holds the automatic judges' scores (m3eval import-scores) and the read path of
// m3eval score. Nothing under tui/ calls it: the annotator screen stays blind to the judges.

// ScoreImporter writes one file of a judge's scores, or one judge run: either every score
// lands or none. Like an import of turns it writes in short chunk transactions (through an
// Importer's batch and connection), so that annotators, imports and other judges get the
// write lock between chunks; its new scores stay hidden until Commit, and changes to stored
// scores wait on the side for Commit's one transaction.
type ScoreImporter struct {
	ctx     context.Context
	im      *Importer
	replace bool
	judgeID int64
	// ruleVersion is the rule set the scores come from (m3eval judge); nil for import-scores.
	ruleVersion any
	// fresh: a judge run of a judge with no scores yet (PutTurnScores inserts in one go).
	fresh bool
	multi map[int]*sql.Stmt // insertRows' statements by size

	findTurn, findScore, insertScore, stageScore *sql.Stmt
}

// BeginScoreImport starts importing scores of the named judge, creating the judge on first
// use. With opts.Replace a changed score overwrites the stored one instead of failing.
func (s *Store) BeginScoreImport(ctx context.Context, judge string, opts ImportOptions) (*ScoreImporter, error) {
	if strings.TrimSpace(judge) == "" || judge != strings.TrimSpace(judge) {
		return nil, fmt.Errorf("judge name %q: give a name without leading or trailing spaces", judge)
	}
	if opts.Source == "" {
		opts.Source = "scores of " + judge
	}
	im, err := s.BeginImport(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("begin score import: %w", err)
	}
	si := &ScoreImporter{ctx: ctx, im: im, replace: opts.Replace}
	im.finishHooks = append(im.finishHooks, si.applyChanges)
	if err := si.start(judge); err != nil {
		si.Rollback()
		return nil, fmt.Errorf("begin score import: %w", err)
	}
	return si, nil
}

func (si *ScoreImporter) start(judge string) error {
	ctx, conn := si.ctx, si.im.conn
	// Changed and removed scores wait here (in the connection's temporary database, no lock on
	// the main one) for Commit; value NULL removes the score.
	if _, err := conn.ExecContext(ctx, `DROP TABLE IF EXISTS `+si.im.s.d.tempTable("score_changes")); err != nil {
		return err
	}
	if _, err := conn.ExecContext(ctx, `CREATE TEMP TABLE score_changes (turn_id INTEGER NOT NULL, field TEXT NOT NULL, value TEXT, rule_version TEXT,
		PRIMARY KEY (turn_id, field))`); err != nil {
		return err
	}
	if err := si.im.ensureTx(); err != nil {
		return err
	}
	err := conn.QueryRowContext(ctx, `INSERT INTO judges (name) VALUES (?)
		ON CONFLICT (name) DO UPDATE SET name = excluded.name RETURNING id`, judge).Scan(&si.judgeID)
	if err != nil {
		return err
	}
	prep := func(dst **sql.Stmt, q string) {
		if err != nil {
			return
		}
		*dst, err = conn.PrepareContext(ctx, q)
	}
	b := strconv.FormatInt(si.im.batch, 10)
	prep(&si.findTurn, `SELECT id, action_type, turn, import_batch FROM turns WHERE sample_id = ?`)
	prep(&si.findScore, `SELECT value FROM judge_scores WHERE judge_id = ? AND turn_id = ? AND field = ?`)
	prep(&si.insertScore, `INSERT INTO judge_scores (judge_id, turn_id, field, value, rule_version, import_batch) VALUES (?, ?, ?, ?, ?, `+b+`)
		ON CONFLICT DO NOTHING`)
	prep(&si.stageScore, `INSERT INTO `+si.im.s.d.tempTable("score_changes")+` (turn_id, field, value, rule_version) VALUES (?, ?, ?, ?)
		ON CONFLICT (turn_id, field) DO UPDATE SET value = excluded.value, rule_version = excluded.rule_version`)
	return err
}

// applyChanges, in Commit's transaction, applies the changed and removed scores.
func (si *ScoreImporter) applyChanges() error {
	ctx, conn := si.ctx, si.im.conn
	if _, err := conn.ExecContext(ctx, `UPDATE judge_scores SET value = c.value, rule_version = c.rule_version
		FROM `+si.im.s.d.tempTable("score_changes")+` c WHERE c.value IS NOT NULL AND judge_scores.judge_id = ?
		AND judge_scores.turn_id = c.turn_id AND judge_scores.field = c.field`, si.judgeID); err != nil {
		return fmt.Errorf("replace scores: %w", err)
	}
	if _, err := conn.ExecContext(ctx, `DELETE FROM judge_scores WHERE judge_id = ?
		AND (turn_id, field) IN (SELECT turn_id, field FROM `+si.im.s.d.tempTable("score_changes")+` WHERE value IS NULL)`, si.judgeID); err != nil {
		return fmt.Errorf("remove scores: %w", err)
	}
	return nil
}

// Flush commits the open chunk, if any: a caller about to wait (for a judge's verdicts, for
// input) calls it, so that no write lock is held while idle.
func (si *ScoreImporter) Flush() error { return si.im.Flush() }

// Commit makes the file's scores visible.
func (si *ScoreImporter) Commit() error {
	si.closeStmts()
	if err := si.im.Commit(); err != nil {
		return fmt.Errorf("commit score import: %w", err)
	}
	return nil
}

// Rollback drops everything the import wrote. It is safe after Commit.
func (si *ScoreImporter) Rollback() {
	if si.im.finished {
		return
	}
	si.closeStmts()
	si.im.Rollback()
	if si.judgeID != 0 {
		// A judge first named by this run goes with it.
		si.im.s.dropJudgeWithoutScores(si.judgeID)
	}
}

// dropJudgeWithoutScores removes a judge that has no score, on a context of its own (an
// interrupted run cleans up too); a failure leaves only a name without scores.
func (s *Store) dropJudgeWithoutScores(id int64) {
	ctx := context.Background()
	tx, err := s.beginWrite(ctx)
	if err != nil {
		return
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `DELETE FROM judges WHERE id = ? AND NOT EXISTS (SELECT 1 FROM judge_scores WHERE judge_id = ?)`, id, id); err == nil {
		tx.Commit()
	}
}

func (si *ScoreImporter) closeStmts() {
	for _, st := range []*sql.Stmt{si.findTurn, si.findScore, si.insertScore, si.stageScore} {
		if st != nil {
			st.Close()
		}
	}
	for _, st := range si.multi {
		st.Close()
	}
	si.findTurn, si.findScore, si.insertScore, si.stageScore, si.multi = nil, nil, nil, nil, nil
}

// Turn finds a stored turn by sample id and returns its id with what the rubric's rules need
// to validate a value for it. An unknown sample is ErrNotFound.
func (im *ScoreImporter) Turn(sampleID string) (int64, rubric.Item, error) {
	var id int64
	var it rubric.Item
	var owner sql.NullInt64
	if err := im.im.ensureTx(); err != nil {
		return 0, it, err
	}
	err := im.findTurn.QueryRowContext(im.ctx, sampleID).Scan(&id, &it.ActionType, &it.Turn, &owner)
	if err != nil {
		return 0, it, domainError(err)
	}
	if owner.Valid && owner.Int64 != im.im.batch {
		// A turn of an import still under way is not there yet: its failure would take the
		// scores with it.
		st, err := im.im.batchState(owner.Int64)
		if err != nil {
			return 0, it, err
		}
		if st != batchDone {
			return 0, it, ErrNotFound
		}
	}
	return id, it, nil
}

// PutScore stores the judge's value for a field of a turn; value "" says the judge gave no
// score, which removes a stored one. An identical stored score is left alone; a different one
// is an ErrConflict unless the import replaces.
func (im *ScoreImporter) PutScore(turnID int64, field, value string) (dataset.Outcome, error) {
	if err := im.im.ensureTx(); err != nil {
		return 0, err
	}
	o, err := im.putScore(turnID, field, value)
	if err != nil {
		return o, err
	}
	return o, im.im.maybeCommit()
}

func (im *ScoreImporter) putScore(turnID int64, field, value string) (dataset.Outcome, error) {
	if value != "" {
		// A first import only inserts: one statement per score, not a look-up and an insert.
		res, err := im.insertScore.ExecContext(im.ctx, im.judgeID, turnID, field, value, im.ruleVersion)
		if err != nil {
			return 0, fmt.Errorf("store score: %w", domainError(err))
		}
		if n, _ := res.RowsAffected(); n == 1 {
			return dataset.Inserted, nil
		}
	}
	var stored string
	err := im.findScore.QueryRowContext(im.ctx, im.judgeID, turnID, field).Scan(&stored)
	switch {
	case err == sql.ErrNoRows: // value is "": no score given, none stored
		return dataset.Unchanged, nil
	case err != nil:
		return 0, err
	case stored == value:
		if im.ruleVersion != nil && im.replace {
			// The same value under a new rule set: the score now comes from the new rules.
			_, err = im.stageScore.ExecContext(im.ctx, turnID, field, value, im.ruleVersion)
		}
		return dataset.Unchanged, err
	case !im.replace:
		now := value
		if now == "" {
			now = "no score"
		}
		return 0, fmt.Errorf("%w: the judge's stored score is %s, this file gives %s (use --replace to overwrite it)", ErrConflict, stored, now)
	case value == "":
		_, err = im.stageScore.ExecContext(im.ctx, turnID, field, nil, nil)
	default:
		_, err = im.stageScore.ExecContext(im.ctx, turnID, field, value, im.ruleVersion)
	}
	if err != nil {
		return 0, fmt.Errorf("store score: %w", err)
	}
	return dataset.Replaced, nil
}

// Judges lists the automatic judges in the database, by name.
func (s *Store) Judges(ctx context.Context) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT name FROM judges ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("list judges: %w", err)
	}
	return scanStrings(rows)
}

// groupColumns maps what `m3eval score --by` accepts to the column that holds it; only these
// strings ever reach the SQL text.
var groupColumns = map[string]string{
	"":            "''",
	"action_type": "t.action_type",
	"task_type":   "t.task_type",
	"model":       "t.model",
	"episode":     "e.episode_key",
}

// GroupKeys lists the turn attributes scoring can be grouped by.
func GroupKeys() []string { return []string{"action_type", "task_type", "model", "episode"} }

// ScoreFilter chooses the labels and automatic scores that m3eval score reads.
type ScoreFilter struct {
	// Fields are the fields to read, in the order their values are passed on; none: every
	// field that has a value or a score somewhere, by name.
	Fields        []string
	Annotators    []string // none: every annotator
	Judges        []string // none: every judge
	IncludeDrafts bool     // count draft annotations too, not only done ones
	By            string   // "" or one of GroupKeys: fills ScoreRow.Group
	Cluster       string   // "" or one of GroupKeys: fills ScoreRow.Cluster of the ratings
}

// ScoreRow is one value read for scoring: an annotator's rating or a judge's score.
type ScoreRow struct {
	Group string // the turn's value of ScoreFilter.By ("" without grouping)
	// Cluster is the turn's value of ScoreFilter.Cluster (ratings only; "" without); for
	// episodes, the episode's id, which names it one to one as its key does.
	Cluster string
	Sample  string // the turn's sample id
	Who     string // annotator or judge name
	Field   string
	Value   string
}

// StreamScoring calls rating for every value of the chosen fields in the chosen annotations,
// then score for every stored score of the chosen judges and fields. Ratings come in queue
// order (episode, turn), then annotator name, then in the order of Fields; scores by judge
// name, then in queue order, then by field name. Both are read in one read transaction, so a
// label saved meanwhile is in both or in neither, and nothing is held in memory here: the
// row passed is reused between calls.
func (s *Store) StreamScoring(ctx context.Context, f ScoreFilter, rating, score func(*ScoreRow) error) error {
	grp, ok := groupColumns[f.By]
	if !ok {
		return fmt.Errorf("group by %q: use one of %s", f.By, strings.Join(GroupKeys(), ", "))
	}
	clu, ok := groupColumns[f.Cluster]
	if !ok {
		return fmt.Errorf("cluster by %q: use one of %s", f.Cluster, strings.Join(GroupKeys(), ", "))
	}
	if f.Cluster == "episode" {
		// An episode's id names its cluster as well as its key does, without a string a row
		// (clusterColumn formats it once per turn) or a look-up of the episode (#43).
		clu = "t.episode_id"
	}
	episodes := ""
	if strings.HasPrefix(grp, "e.") {
		episodes = "JOIN episodes e ON e.id = t.episode_id"
	}
	// A deferred transaction on one connection: a consistent snapshot for both queries
	// without the write lock that BeginTx takes (the DSN asks for immediate transactions),
	// so annotators keep saving while a report runs.
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("score: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, s.d.beginRead()); err != nil {
		return fmt.Errorf("score: %w", err)
	}
	// Nothing is written: rolling back just ends the read transaction. A background context,
	// so that a cancelled run still leaves the connection clean for the pool.
	defer conn.ExecContext(context.Background(), `ROLLBACK`)

	fields := f.Fields
	if len(fields) == 0 {
		if fields, err = storedFields(ctx, conn); err != nil {
			return err
		}
		if len(fields) == 0 {
			return nil // no label and no score at all
		}
	}
	// One row per annotation with a column per field: a fifth of the rows of one per value,
	// and the per-row cost of database/sql and cgo is most of the reading time.
	cols := make([]string, len(fields))
	args := make([]any, 0, len(fields)+1+len(f.Annotators))
	for i, name := range fields {
		cols[i] = `(SELECT v.value FROM annotation_values v WHERE v.annotation_id = a.id AND v.field = ?)`
		args = append(args, name)
	}
	where := `(a.status = 'done' OR ?) AND NOT a.stale AND an.repeat_of IS NULL` // not stale labels, not second labels of repeated turns
	args = append(args, f.IncludeDrafts)
	if len(f.Annotators) > 0 {
		where += ` AND an.name IN (` + placeholders(len(f.Annotators)) + `)`
		for _, n := range f.Annotators {
			args = append(args, n)
		}
	}
	// CROSS JOIN keeps turns the outer loop, walked in queue order through their
	// (episode_id, turn) index: SQLite then sorts only the few rows of each turn instead of
	// the whole result.
	// Annotators and judges come as ids, named from one small query each: a name string per
	// row was millions of allocations at a million turns (#43).
	annotators, err := idNames(ctx, conn, `SELECT id, name FROM annotators`)
	if err != nil {
		return err
	}
	err = streamRatings(ctx, conn, fields, annotators, rating, `SELECT `+grp+`, `+clu+`, t.sample_id, an.id, `+strings.Join(cols, ", ")+`
		FROM visible_turns t
		`+s.d.crossJoin()+` visible_annotations a ON a.turn_id = t.id
		`+episodes+`
		JOIN annotators an ON an.id = a.annotator_id
		WHERE `+where+` ORDER BY t.episode_id, t.turn, an.name`, args)
	if err != nil {
		return err
	}
	where, args = `s.field IN (`+placeholders(len(fields))+`)`, nil
	for _, name := range fields {
		args = append(args, name)
	}
	if len(f.Judges) > 0 {
		where += ` AND j.name IN (` + placeholders(len(f.Judges)) + `)`
		for _, n := range f.Judges {
			args = append(args, n)
		}
	}
	// Judges by name, each walking the turns in queue order through their (episode_id, turn)
	// index and seeking its scores by primary key: the rows come out in the order asked, where
	// scanning judge_scores sorted all of them (a million-turn database's four million scores
	// in a temporary B-tree; at 100,000 turns the query took a third less CPU this way, #44).
	judges, err := idNames(ctx, conn, `SELECT id, name FROM judges`)
	if err != nil {
		return err
	}
	// The field comes as its index in fields, a number rather than a string a row.
	field, sel := `CASE s.field`, make([]any, 0, len(fields)+len(args))
	for i, name := range fields {
		field += ` WHEN ? THEN ` + strconv.Itoa(i)
		sel = append(sel, name)
	}
	field += ` END`
	args = append(sel, args...)
	return streamScores(ctx, conn, fields, judges, score, `SELECT `+grp+`, t.sample_id, j.id, `+field+`, s.value
		FROM judges j
		`+s.d.crossJoin()+` visible_turns t ON true
		`+s.d.crossJoin()+` judge_scores s ON s.judge_id = j.id AND s.turn_id = t.id
		`+episodes+`
		WHERE `+visibleScore+` AND `+where+` ORDER BY j.name, t.episode_id, t.turn, s.field`, args)
}

// visibleScore is the condition on judge_scores s of a score whose run or file completed.
const visibleScore = `(s.import_batch IS NULL OR s.import_batch NOT IN (SELECT id FROM import_batches))`

// storedFields lists, by name, the fields any annotation or judge has a value for.
func storedFields(ctx context.Context, conn *sql.Conn) ([]string, error) {
	rows, err := conn.QueryContext(ctx, `SELECT field FROM annotation_values UNION SELECT field FROM judge_scores s WHERE `+visibleScore+` ORDER BY field`)
	if err != nil {
		return nil, fmt.Errorf("score: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var f string
		if err := rows.Scan(&f); err != nil {
			return nil, fmt.Errorf("score: %w", err)
		}
		out = append(out, f)
	}
	return out, rows.Err()
}

// streamRatings reads rows of (group, cluster, sample, annotator, one value or NULL per field) and
// passes on each value.
func streamRatings(ctx context.Context, conn *sql.Conn, fields []string, names map[int64]string, fn func(*ScoreRow) error, q string, args []any) error {
	rows, err := conn.QueryContext(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("score: %w", err)
	}
	defer rows.Close()
	var r ScoreRow
	var who int64
	vals := make([]sql.NullString, len(fields))
	dst := make([]any, 4+len(fields))
	dst[0], dst[1], dst[2], dst[3] = &r.Group, &clusterColumn{s: &r.Cluster}, &r.Sample, &who
	for i := range vals {
		dst[4+i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(dst...); err != nil {
			return fmt.Errorf("score: %w", err)
		}
		r.Who = names[who]
		for i, v := range vals {
			if !v.Valid {
				continue // the annotation has no value for this field
			}
			r.Field, r.Value = fields[i], v.String
			if err := fn(&r); err != nil {
				return err
			}
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("score: %w", err)
	}
	return nil
}

// streamScores reads rows of (group, sample, judge id, index in fields, value).
func streamScores(ctx context.Context, conn *sql.Conn, fields []string, names map[int64]string, fn func(*ScoreRow) error, q string, args []any) error {
	rows, err := conn.QueryContext(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("score: %w", err)
	}
	defer rows.Close()
	var r ScoreRow
	var who, field int64
	for rows.Next() {
		if err := rows.Scan(&r.Group, &r.Sample, &who, &field, &r.Value); err != nil {
			return fmt.Errorf("score: %w", err)
		}
		if field < 0 || int(field) >= len(fields) {
			return fmt.Errorf("score: field number %d of %d", field, len(fields))
		}
		r.Who, r.Field = names[who], fields[field]
		if err := fn(&r); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("score: %w", err)
	}
	return nil
}

// idNames reads a query's (id, name) rows into a map, in the read transaction of conn.
func idNames(ctx context.Context, conn *sql.Conn, q string) (map[int64]string, error) {
	rows, err := conn.QueryContext(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("score: %w", err)
	}
	defer rows.Close()
	out := map[int64]string{}
	for rows.Next() {
		var id int64
		var name string
		if err := rows.Scan(&id, &name); err != nil {
			return nil, fmt.Errorf("score: %w", err)
		}
		out[id] = name
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("score: %w", err)
	}
	return out, nil
}

// clusterColumn scans the cluster column into a string: an integer (an episode's id) is
// formatted only when it differs from the last row's, so a turn's rows share one string.
type clusterColumn struct {
	s    *string
	id   int64
	isID bool
}

// Scan implements sql.Scanner.
func (c *clusterColumn) Scan(src any) error {
	switch v := src.(type) {
	case int64:
		if !c.isID || v != c.id {
			*c.s, c.id, c.isID = strconv.FormatInt(v, 10), v, true
		}
		return nil
	case string:
		*c.s, c.isID = v, false
	case []byte:
		*c.s, c.isID = string(v), false
	case nil:
		*c.s, c.isID = "", false
	default:
		return fmt.Errorf("cluster column: a %T", src)
	}
	return nil
}
