package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/m3bench/m3eval/internal/session"
)

// Filter narrows a queue: for each column, the turn's value must be one of the values given.
type Filter map[string][]string

// filterColumns are the columns a queue may be filtered on; each has an index that starts
// with it and continues in queue order.
var filterColumns = map[string]string{
	"action_type": "t.action_type",
}

// FilterKeys lists the keys Filter accepts.
func FilterKeys() []string {
	return slices.Sorted(maps.Keys(filterColumns))
}

// Queue is one annotator's view of the turns to label.
type Queue struct {
	s           *Store
	annotator   string
	annotatorID int64
	// seek is, for each value of the first filter column, the SQL condition that lets the
	// index seek straight to it; rest is the condition on the other columns.
	seeks    []condition
	rest     condition
	filtered bool
	campaign string // the campaign whose assignment the queue shows (campaign_queue.go)
}

type condition struct {
	sql  string
	args []any
}

// OpenQueue returns the queue of the annotator, creating the annotator on first use.
func (s *Store) OpenQueue(ctx context.Context, annotator string, f Filter) (*Queue, error) {
	if strings.TrimSpace(annotator) == "" {
		return nil, fmt.Errorf("open queue: the annotator needs a name")
	}
	keys := make([]string, 0, len(f))
	for k := range f {
		if _, ok := filterColumns[k]; !ok {
			return nil, fmt.Errorf("open queue: cannot filter on %q (use one of %s)", k, strings.Join(FilterKeys(), ", "))
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	q := &Queue{s: s, annotator: annotator, filtered: len(keys) > 0}
	if len(keys) > 0 {
		first := filterColumns[keys[0]]
		for _, v := range f[keys[0]] {
			q.seeks = append(q.seeks, condition{first + " = ?", []any{v}})
		}
		var parts []string
		var args []any
		for _, k := range keys[1:] {
			vals := f[k]
			parts = append(parts, filterColumns[k]+" IN ("+placeholders(len(vals))+")")
			for _, v := range vals {
				args = append(args, v)
			}
		}
		q.rest = condition{strings.Join(parts, " AND "), args}
	}
	if len(q.seeks) == 0 {
		q.seeks = []condition{{"true", nil}}
	}
	// A known annotator is only read: annotate starts without waiting for the write lock.
	err := s.db.QueryRowContext(ctx, `SELECT id FROM annotators WHERE name = ?`, annotator).Scan(&q.annotatorID)
	if err == nil {
		return q, nil
	}
	if err != sql.ErrNoRows {
		return nil, fmt.Errorf("open queue: %w", err)
	}
	tx, err := s.beginWrite(ctx)
	if err != nil {
		return nil, fmt.Errorf("open queue: %w", err)
	}
	defer tx.Rollback()
	if q.annotatorID, err = ensureAnnotator(ctx, tx, annotator); err != nil {
		return nil, err
	}
	return q, tx.Commit()
}

// Annotator is the queue's owner.
func (q *Queue) Annotator() string { return q.annotator }

func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

// where joins the seek condition, the other filter columns and extra conditions.
func (q *Queue) where(seek condition, extra ...condition) (string, []any) {
	parts := []string{seek.sql}
	args := append([]any(nil), seek.args...)
	if q.rest.sql != "" {
		parts = append(parts, q.rest.sql)
		args = append(args, q.rest.args...)
	}
	for _, c := range extra {
		parts = append(parts, c.sql)
		args = append(args, c.args...)
	}
	return strings.Join(parts, " AND "), args
}

// Len counts the items in the queue. With no import under way every turn is visible, and the
// count reads the turns table itself: SQLite counts a whole table from its smallest index
// without looking at each row (a 1,000,000-turn queue: ~15 ms, against ~100 ms through
// visible_turns). Both reads share one snapshot, so an import that starts in between is not
// counted.
func (q *Queue) Len(ctx context.Context) (int, error) {
	conn, err := q.s.db.Conn(ctx)
	if err != nil {
		return 0, fmt.Errorf("count queue: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, q.s.d.beginRead()); err != nil {
		return 0, fmt.Errorf("count queue: %w", err)
	}
	defer conn.ExecContext(context.Background(), `ROLLBACK`) // a read: ending it is all
	var importing bool
	if err := conn.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM import_batches)`).Scan(&importing); err != nil {
		return 0, fmt.Errorf("count queue: %w", err)
	}
	table := "turns"
	if importing {
		table = "visible_turns"
	}
	total := 0
	for _, seek := range q.seeks {
		w, args := q.where(seek)
		var n int
		if err := conn.QueryRowContext(ctx, `SELECT count(*) FROM `+table+` t WHERE `+w, args...).Scan(&n); err != nil {
			return 0, fmt.Errorf("count queue: %w", err)
		}
		total += n
	}
	return total, nil
}

// Progress counts the queue's items this annotator has submitted, and those flagged.
func (q *Queue) Progress(ctx context.Context) (done, flagged int, err error) {
	w, args := q.where(condition{"true", nil})
	err = q.s.db.QueryRowContext(ctx, `SELECT count(*) FILTER (WHERE a.status = 'done'), count(*) FILTER (WHERE a.flagged)
		FROM annotations a JOIN visible_turns t ON t.id = a.turn_id
		WHERE a.annotator_id = ? AND `+w+filterSeekOr(q), append([]any{q.annotatorID}, append(args, seekArgs(q)...)...)...).Scan(&done, &flagged)
	if err != nil {
		return 0, 0, fmt.Errorf("progress: %w", err)
	}
	return done, flagged, nil
}

// filterSeekOr is the first filter column's condition as one OR, for queries that walk the
// annotator's own annotations rather than seek in turns.
func filterSeekOr(q *Queue) string {
	if !q.filtered {
		return ""
	}
	parts := make([]string, len(q.seeks))
	for i, s := range q.seeks {
		parts[i] = s.sql
	}
	return " AND (" + strings.Join(parts, " OR ") + ")"
}

func seekArgs(q *Queue) []any {
	if !q.filtered {
		return nil
	}
	var args []any
	for _, s := range q.seeks {
		args = append(args, s.args...)
	}
	return args
}

// MedianActive returns the median active time of the annotator's submitted items. It counts
// all of them, not only this queue's: it measures the annotator's pace.
func (q *Queue) MedianActive(ctx context.Context) (time.Duration, bool, error) {
	var n int
	if err := q.s.db.QueryRowContext(ctx, `SELECT count(*) FROM annotations WHERE annotator_id = ? AND status = 'done'`,
		q.annotatorID).Scan(&n); err != nil {
		return 0, false, err
	}
	if n == 0 {
		return 0, false, nil
	}
	rows, err := q.s.db.QueryContext(ctx, `SELECT active_ms FROM annotations WHERE annotator_id = ? AND status = 'done'
		ORDER BY active_ms LIMIT ? OFFSET ?`, q.annotatorID, 2-n%2, (n-1)/2)
	if err != nil {
		return 0, false, err
	}
	defer rows.Close()
	var sum, k int64
	for rows.Next() {
		var ms int64
		if err := rows.Scan(&ms); err != nil {
			return 0, false, err
		}
		sum += ms
		k++
	}
	if k == 0 {
		return 0, false, rows.Err()
	}
	return time.Duration(sum/k) * time.Millisecond, true, rows.Err()
}

// notSkipped keeps turns this annotator has not skipped (and, if unfinished, not submitted).
func (q *Queue) notSkipped(unfinished bool) condition {
	c := `NOT EXISTS (SELECT 1 FROM annotations a WHERE a.turn_id = t.id AND a.annotator_id = ? AND (a.skip_seq IS NOT NULL`
	if unfinished {
		c += ` OR a.status = 'done'`
	}
	return condition{c + `))`, []any{q.annotatorID}}
}

// seekMain finds the first (or last) non-skipped item strictly after (or before) the key, in
// queue order, by one index seek per value of the first filter column.
func (q *Queue) seekMain(ctx context.Context, ep int64, turn int, forward, unfinished bool) (session.Ref, bool, error) {
	cmp, order := ">", "ASC"
	if !forward {
		cmp, order = "<", "DESC"
	}
	var best session.Ref
	found := false
	for _, seek := range q.seeks {
		w, args := q.where(seek, condition{"(t.episode_id, t.turn) " + cmp + " (?, ?)", []any{ep, turn}}, q.notSkipped(unfinished))
		var r session.Ref
		err := q.s.db.QueryRowContext(ctx, `SELECT t.id, t.episode_id, t.turn FROM visible_turns t WHERE `+w+
			` ORDER BY t.episode_id `+order+`, t.turn `+order+` LIMIT 1`, args...).Scan(&r.TurnID, &r.Episode, &r.Turn)
		if err == sql.ErrNoRows {
			continue
		}
		if err != nil {
			return session.Ref{}, false, fmt.Errorf("seek: %w", err)
		}
		if !found || (forward && less(r, best)) || (!forward && less(best, r)) {
			best, found = r, true
		}
	}
	return best, found, nil
}

func less(a, b session.Ref) bool {
	if a.Episode != b.Episode {
		return a.Episode < b.Episode
	}
	return a.Turn < b.Turn
}

// seekSkipped finds the skipped item after (or before) skip sequence seq.
func (q *Queue) seekSkipped(ctx context.Context, seq int64, forward, unfinished bool) (session.Ref, bool, error) {
	cmp, order := ">", "ASC"
	if !forward {
		cmp, order = "<", "DESC"
	}
	extra := condition{"a.annotator_id = ? AND a.skip_seq " + cmp + " ?", []any{q.annotatorID, seq}}
	if unfinished {
		extra.sql += " AND a.status <> 'done'"
	}
	w, args := q.where(condition{"true", nil}, extra)
	w += filterSeekOr(q)
	args = append(args, seekArgs(q)...)
	var r session.Ref
	err := q.s.db.QueryRowContext(ctx, `SELECT t.id, t.episode_id, t.turn, a.skip_seq FROM annotations a
		JOIN visible_turns t ON t.id = a.turn_id WHERE `+w+` ORDER BY a.skip_seq `+order+` LIMIT 1`, args...).
		Scan(&r.TurnID, &r.Episode, &r.Turn, &r.SkipSeq)
	if err == sql.ErrNoRows {
		return session.Ref{}, false, nil
	}
	if err != nil {
		return session.Ref{}, false, fmt.Errorf("seek skipped: %w", err)
	}
	return r, true, nil
}

// First returns the first item of the queue. With unfinished, it is the first one not
// submitted.
func (q *Queue) First(ctx context.Context, unfinished bool) (session.Ref, bool, error) {
	r, ok, err := q.seekMain(ctx, 0, 0, true, unfinished)
	if err != nil || ok {
		return r, ok, err
	}
	return q.seekSkipped(ctx, 0, true, unfinished)
}

// Next returns the item after ref. With unfinished, it is the next one not submitted.
func (q *Queue) Next(ctx context.Context, ref session.Ref, unfinished bool) (session.Ref, bool, error) {
	if ref.SkipSeq == 0 {
		r, ok, err := q.seekMain(ctx, ref.Episode, ref.Turn, true, unfinished)
		if err != nil || ok {
			return r, ok, err
		}
	}
	return q.seekSkipped(ctx, ref.SkipSeq, true, unfinished)
}

// Prev returns the item before ref.
func (q *Queue) Prev(ctx context.Context, ref session.Ref) (session.Ref, bool, error) {
	if ref.SkipSeq != 0 {
		r, ok, err := q.seekSkipped(ctx, ref.SkipSeq, false, false)
		if err != nil || ok {
			return r, ok, err
		}
		const end = int64(1) << 62
		return q.seekMain(ctx, end, 0, false, false)
	}
	return q.seekMain(ctx, ref.Episode, ref.Turn, false, false)
}

// Position is the 1-based place of ref in the queue. It counts index entries up to ref, so
// callers run it off the key-press path.
func (q *Queue) Position(ctx context.Context, ref session.Ref) (int, error) {
	if ref.SkipSeq != 0 {
		total, err := q.Len(ctx)
		if err != nil {
			return 0, err
		}
		var after int
		w, args := q.where(condition{"true", nil}, condition{"a.annotator_id = ? AND a.skip_seq > ?", []any{q.annotatorID, ref.SkipSeq}})
		w += filterSeekOr(q)
		args = append(args, seekArgs(q)...)
		if err := q.s.db.QueryRowContext(ctx, `SELECT count(*) FROM annotations a JOIN visible_turns t ON t.id = a.turn_id WHERE `+w, args...).Scan(&after); err != nil {
			return 0, err
		}
		return total - after, nil
	}
	upTo := condition{"(t.episode_id, t.turn) <= (?, ?)", []any{ref.Episode, ref.Turn}}
	pos := 0
	for _, seek := range q.seeks {
		w, args := q.where(seek, upTo)
		var n int
		if err := q.s.db.QueryRowContext(ctx, `SELECT count(*) FROM visible_turns t WHERE `+w, args...).Scan(&n); err != nil {
			return 0, err
		}
		pos += n
	}
	w, args := q.where(condition{"true", nil}, upTo, condition{"a.annotator_id = ? AND a.skip_seq IS NOT NULL", []any{q.annotatorID}})
	w += filterSeekOr(q)
	args = append(args, seekArgs(q)...)
	var skipped int
	if err := q.s.db.QueryRowContext(ctx, `SELECT count(*) FROM annotations a JOIN visible_turns t ON t.id = a.turn_id WHERE `+w, args...).Scan(&skipped); err != nil {
		return 0, err
	}
	return pos - skipped, nil
}

// Load reads the item at ref with its episode's earlier turns.
func (q *Queue) Load(ctx context.Context, ref session.Ref) (*session.Item, error) {
	it := &session.Item{Ref: ref}
	t := &it.Turn
	var images string
	var meta sql.NullString
	err := q.s.db.QueryRowContext(ctx, `SELECT t.sample_id, e.episode_key, t.turn, t.action_type, t.task_type,
		t.user_message, t.vlm_response, t.expected_answer, t.images, t.model, t.meta, t.episode_id
		FROM visible_turns t JOIN episodes e ON e.id = t.episode_id WHERE t.id = ?`, ref.TurnID).
		Scan(&t.SampleID, &t.EpisodeID, &t.Turn, &t.ActionType, &t.TaskType, &t.UserMessage, &t.VLMResponse,
			&t.ExpectedAnswer, &images, &t.Model, &meta, &it.Ref.Episode)
	if err != nil {
		return nil, fmt.Errorf("load item %d: %w", ref.TurnID, domainError(err))
	}
	it.Ref.Turn = t.Turn
	if err := json.Unmarshal([]byte(images), &t.Images); err != nil {
		return nil, fmt.Errorf("load item %s: images: %w", t.SampleID, err)
	}
	if meta.Valid {
		t.Meta = json.RawMessage(meta.String)
	}
	rows, err := q.s.db.QueryContext(ctx, `SELECT turn, action_type, user_message, vlm_response, expected_answer
		FROM visible_turns WHERE episode_id = ? AND turn < ? ORDER BY turn`, it.Ref.Episode, t.Turn)
	if err != nil {
		return nil, fmt.Errorf("load context of %s: %w", t.SampleID, err)
	}
	defer rows.Close()
	for rows.Next() {
		var c session.ContextTurn
		if err := rows.Scan(&c.Turn, &c.ActionType, &c.UserMessage, &c.VLMResponse, &c.ExpectedAnswer); err != nil {
			return nil, err
		}
		it.Earlier = append(it.Earlier, c)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	it.Annotation, err = q.annotation(ctx, q.s.db, ref.TurnID)
	if err != nil {
		return nil, err
	}
	if it.Annotation != nil {
		it.Ref.SkipSeq = it.Annotation.SkipSeq
	}
	return it, nil
}

func (q *Queue) annotation(ctx context.Context, db querier, turnID int64) (*session.Annotation, error) {
	a := &session.Annotation{}
	var ms int64
	var seq sql.NullInt64
	err := db.QueryRowContext(ctx, `SELECT id, status, flagged, flag_reason, active_ms, skip_seq,
		EXISTS (SELECT 1 FROM changes c WHERE c.annotation_id = annotations.id AND NOT c.undone)
		FROM annotations WHERE annotator_id = ? AND turn_id = ?`, q.annotatorID, turnID).
		Scan(&a.ID, &a.Status, &a.Flagged, &a.FlagReason, &ms, &seq, &a.CanUndo)
	a.SkipSeq = seq.Int64
	if err == sql.ErrNoRows {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("load annotation: %w", err)
	}
	a.Active = time.Duration(ms) * time.Millisecond
	if a.Values, err = loadValues(ctx, db, a.ID); err != nil {
		return nil, err
	}
	return a, nil
}

// Find returns the queue item of the sample, if the queue holds it.
func (q *Queue) Find(ctx context.Context, sampleID string) (session.Ref, bool, error) {
	for _, seek := range q.seeks {
		w, args := q.where(seek, condition{"t.sample_id = ?", []any{sampleID}})
		var r session.Ref
		var seq sql.NullInt64
		err := q.s.db.QueryRowContext(ctx, `SELECT t.id, t.episode_id, t.turn,
			(SELECT a.skip_seq FROM annotations a WHERE a.turn_id = t.id AND a.annotator_id = ?)
			FROM visible_turns t WHERE `+w, append([]any{q.annotatorID}, args...)...).Scan(&r.TurnID, &r.Episode, &r.Turn, &seq)
		if err == sql.ErrNoRows {
			continue
		}
		if err != nil {
			return session.Ref{}, false, fmt.Errorf("find %s: %w", sampleID, err)
		}
		r.SkipSeq = seq.Int64
		return r, true, nil
	}
	return session.Ref{}, false, nil
}
