package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/m3bench/m3eval/internal/dataset"
	"github.com/m3bench/m3eval/internal/rubric"
)

// Outcome says what a put did.
type Outcome = int // an alias, so the Importer satisfies ingest.Sink

// The outcomes of putting a record.
const (
	Inserted  Outcome = iota // new
	Unchanged                // identical to what was stored
	Replaced                 // differed, and the import was told to replace
)

// ImportOptions control an import.
type ImportOptions struct {
	// Replace lets a changed record overwrite the stored one instead of failing.
	Replace bool
	// DropLabels deletes the labels of a turn whose content a replace changed, instead of
	// keeping them marked stale.
	DropLabels bool
	// Rubric checks the kept labels of a replaced turn against the turn's new content; nil
	// keeps their values as they are (still marked stale).
	Rubric *rubric.Rubric
}

// Importer writes one file's records in one transaction: either all of them land or none.
type Importer struct {
	s    *Store
	ctx  context.Context
	tx   *sql.Tx
	opts ImportOptions

	insertTurn, findTurn, updateTurn, upsertEpisode *sql.Stmt
	batchTurns, insertEpisodes, findEpisodes        *sql.Stmt
	findTurns                                       *sql.Stmt
	batchArgs                                       []any
	chunkEpisodes                                   map[string]int64 // episode ids of the chunk being inserted

	// The last episode seen; records come grouped by episode, so this cache hits nearly always
	// and keeps memory flat however large the file.
	lastEpisodeKey string
	lastEpisodeID  int64
	annotatorIDs   map[string]int64

	stale []StaleLabel // labels of turns this import replaced
}

// BeginImport starts an import transaction.
func (s *Store) BeginImport(ctx context.Context, opts ImportOptions) (*Importer, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("begin import: %w", err)
	}
	im := &Importer{s: s, ctx: ctx, tx: tx, opts: opts, annotatorIDs: map[string]int64{},
		chunkEpisodes: map[string]int64{}}
	// A large import touches every index; with SQLite's 2 MB default cache the pages spill to
	// the WAL again and again. 256 MB keeps a million-turn import in memory until commit.
	if _, err := tx.ExecContext(ctx, `PRAGMA cache_size = -262144`); err != nil {
		tx.Rollback()
		return nil, fmt.Errorf("begin import: %w", err)
	}
	prep := func(dst **sql.Stmt, q string) {
		if err != nil {
			return
		}
		*dst, err = tx.PrepareContext(ctx, q)
	}
	prep(&im.insertTurn, `INSERT INTO turns (sample_id, episode_id, turn, action_type, task_type,
		user_message, vlm_response, expected_answer, images, model, meta, content_hash)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (sample_id) DO NOTHING`)
	prep(&im.findTurn, `SELECT id, content_hash, images, model, meta FROM turns WHERE sample_id = ?`)
	prep(&im.updateTurn, `UPDATE turns SET episode_id = ?, turn = ?, action_type = ?, task_type = ?,
		user_message = ?, vlm_response = ?, expected_answer = ?, images = ?, model = ?, meta = ?,
		content_hash = ? WHERE id = ?`)
	prep(&im.upsertEpisode, `INSERT INTO episodes (episode_key) VALUES (?)
		ON CONFLICT (episode_key) DO UPDATE SET episode_key = excluded.episode_key RETURNING id`)
	// The episodes of a chunk of turns, given as one JSON array of keys: two statements per
	// chunk, to create the new ones and to read all their ids, instead of one per episode.
	prep(&im.insertEpisodes, `INSERT INTO episodes (episode_key) SELECT value FROM json_each(?) WHERE true
		ON CONFLICT (episode_key) DO NOTHING`)
	prep(&im.findEpisodes, `SELECT episode_key, id FROM episodes
		WHERE episode_key IN (SELECT value FROM json_each(?))`)
	// A batch of turns goes in with one multi-row INSERT: the per-statement cost of
	// database/sql and cgo is paid once per batchRows turns instead of once per turn.
	prep(&im.batchTurns, `INSERT INTO turns (sample_id, episode_id, turn, action_type, task_type,
		user_message, vlm_response, expected_answer, images, model, meta, content_hash) VALUES `+
		strings.TrimSuffix(strings.Repeat("(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?), ", batchRows), ", "))
	// The stored turns among a chunk's sample ids, again given as one JSON array: re-importing
	// a file then costs one query per chunk instead of two statements per turn.
	prep(&im.findTurns, `SELECT sample_id, id, content_hash FROM turns
		WHERE sample_id IN (SELECT value FROM json_each(?))`)
	if err != nil {
		tx.Rollback()
		return nil, fmt.Errorf("begin import: %w", err)
	}
	return im, nil
}

// Commit makes the import's records visible.
func (im *Importer) Commit() error {
	if err := im.tx.Commit(); err != nil {
		return fmt.Errorf("commit import: %w", err)
	}
	return nil
}

// Rollback drops everything the import wrote. It is safe after Commit.
func (im *Importer) Rollback() { im.tx.Rollback() }

func (im *Importer) episodeID(key string) (int64, error) {
	if key == im.lastEpisodeKey && im.lastEpisodeID != 0 {
		return im.lastEpisodeID, nil
	}
	var id int64
	if err := im.upsertEpisode.QueryRowContext(im.ctx, key).Scan(&id); err != nil {
		return 0, fmt.Errorf("episode %q: %w", key, err)
	}
	im.lastEpisodeKey, im.lastEpisodeID = key, id
	return id, nil
}

// PutTurns stores a batch of turns and returns their ids and outcomes. New turns go in
// batchRows at a time with one statement; when any turn of such a chunk is already stored (or
// clashes), the statement undoes itself and the chunk is stored turn by turn, which tells
// identical records from changed ones. On error, len(ids) is the index of the turn that failed.
func (im *Importer) PutTurns(ts []dataset.Turn) ([]int64, []Outcome, error) {
	ids := make([]int64, 0, len(ts))
	outcomes := make([]Outcome, 0, len(ts))
	for start := 0; start < len(ts); start += batchRows {
		chunk := ts[start:min(start+batchRows, len(ts))]
		if len(chunk) == batchRows {
			first, ok, err := im.insertChunk(chunk)
			if err != nil {
				return ids, outcomes, err
			}
			if ok {
				// One INSERT numbers its rows consecutively: nothing else writes in this transaction.
				for i := range chunk {
					ids = append(ids, first+int64(i))
					outcomes = append(outcomes, Inserted)
				}
				continue
			}
		}
		stored, err := im.storedTurns(chunk)
		if err != nil {
			return ids, outcomes, err
		}
		for i := range chunk {
			t := &chunk[i]
			if st, ok := stored[t.SampleID]; ok && t.Omitted == (dataset.Omitted{}) && bytes.Equal(st.hash, t.ContentHash()) {
				ids = append(ids, st.id)
				outcomes = append(outcomes, Unchanged)
				continue
			}
			id, o, err := im.PutTurn(t)
			if err != nil {
				return ids, outcomes, err
			}
			ids = append(ids, id)
			outcomes = append(outcomes, o)
		}
	}
	return ids, outcomes, nil
}

type storedTurn struct {
	id   int64
	hash []byte
}

// storedTurns looks up which turns of a chunk are stored already, with one query. It only
// speeds up the common case, an identical re-import: a turn it misses (a sample id that does
// not survive the trip through JSON text, say) still gets its outcome from PutTurn, which
// also handles records that leave optional fields out.
func (im *Importer) storedTurns(ts []dataset.Turn) (map[string]storedTurn, error) {
	if len(ts) < 2 {
		return nil, nil
	}
	keys := make([]string, len(ts))
	for i := range ts {
		keys[i] = ts[i].SampleID
	}
	list, err := json.Marshal(keys)
	if err != nil {
		return nil, err
	}
	stored := make(map[string]storedTurn, len(ts))
	err = collectByKey(im.ctx, im.findTurns, string(list), stored, func(st *storedTurn) []any { return []any{&st.id, &st.hash} })
	if err != nil {
		return nil, fmt.Errorf("look up stored turns: %w", err)
	}
	return stored, nil
}

// collectByKey runs a statement given a JSON array of keys, whose rows are a key and then
// what dest points at, and puts each row's values under its key.
func collectByKey[V any](ctx context.Context, stmt *sql.Stmt, list string, into map[string]V, dest func(*V) []any) error {
	rows, err := stmt.QueryContext(ctx, list)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var key string
		var v V
		if err := rows.Scan(append([]any{&key}, dest(&v)...)...); err != nil {
			return err
		}
		into[key] = v
	}
	return rows.Err()
}

// batchRows is how many turns one multi-row INSERT carries (12 parameters each, well under
// SQLite's limit of 32766).
const batchRows = 128

// insertChunk tries to insert batchRows new turns with one statement and returns the first
// one's id. ok is false when the statement broke a constraint (most often: a turn is already
// stored): SQLite has then undone it, and the caller goes turn by turn.
func (im *Importer) insertChunk(ts []dataset.Turn) (first int64, ok bool, err error) {
	if ok, err := im.storeEpisodes(ts); !ok || err != nil {
		return 0, false, err
	}
	args := im.batchArgs[:0]
	for i := range ts {
		t := &ts[i]
		epID := im.chunkEpisodes[t.EpisodeID]
		images, err := json.Marshal(nonNil(t.Images))
		if err != nil {
			return 0, false, err
		}
		var meta any
		if t.Meta != nil {
			meta = string(t.Meta)
		}
		args = append(args, t.SampleID, epID, t.Turn, t.ActionType, t.TaskType, t.UserMessage,
			t.VLMResponse, t.ExpectedAnswer, string(images), t.Model, meta, t.ContentHash())
	}
	im.batchArgs = args
	res, err := im.batchTurns.ExecContext(im.ctx, args...)
	if err != nil {
		if isConstraint(err) {
			// A stored or clashing turn, or a bad value: SQLite undid the statement, and turn
			// by turn each one gets its outcome or its own error.
			return 0, false, nil
		}
		return 0, false, fmt.Errorf("store turns: %w", err)
	}
	last, err := res.LastInsertId()
	if err != nil {
		return 0, false, err
	}
	return last - int64(len(ts)-1), true, nil
}

// storeEpisodes creates the episodes of a chunk of turns that are not stored yet, in the order
// the chunk first names them, and reads the ids of all of them into chunkEpisodes. ok is false
// when a key did not come back (one that does not survive the trip through JSON text): the
// caller then goes turn by turn.
func (im *Importer) storeEpisodes(ts []dataset.Turn) (ok bool, err error) {
	keys := make([]string, 0, 16)
	for i := range ts {
		if k := ts[i].EpisodeID; len(keys) == 0 || keys[len(keys)-1] != k {
			keys = append(keys, k)
		}
	}
	list, err := json.Marshal(keys)
	if err != nil {
		return false, err
	}
	if _, err := im.insertEpisodes.ExecContext(im.ctx, string(list)); err != nil {
		return false, fmt.Errorf("store episodes: %w", err)
	}
	clear(im.chunkEpisodes)
	err = collectByKey(im.ctx, im.findEpisodes, string(list), im.chunkEpisodes, func(id *int64) []any { return []any{id} })
	if err != nil {
		return false, fmt.Errorf("store episodes: %w", err)
	}
	for _, k := range keys {
		if _, found := im.chunkEpisodes[k]; !found {
			return false, nil
		}
	}
	return true, nil
}

// PutTurn stores a turn. An identical stored turn is left alone; a changed one is an
// ErrConflict unless the import replaces.
func (im *Importer) PutTurn(t *dataset.Turn) (int64, Outcome, error) {
	epID, err := im.episodeID(t.EpisodeID)
	if err != nil {
		return 0, 0, err
	}
	images, err := json.Marshal(nonNil(t.Images))
	if err != nil {
		return 0, 0, err
	}
	var meta any
	if t.Meta != nil {
		meta = string(t.Meta)
	}
	hash := t.ContentHash()
	res, err := im.insertTurn.ExecContext(im.ctx, t.SampleID, epID, t.Turn, t.ActionType, t.TaskType,
		t.UserMessage, t.VLMResponse, t.ExpectedAnswer, string(images), t.Model, meta, hash)
	if err != nil {
		return 0, 0, im.turnConflict(t, err)
	}
	if n, _ := res.RowsAffected(); n == 1 {
		id, err := res.LastInsertId()
		return id, Inserted, err
	}
	var (
		id           int64
		stored       []byte
		storedImages string
		storedModel  string
		storedMeta   sql.NullString
	)
	if err := im.findTurn.QueryRowContext(im.ctx, t.SampleID).Scan(&id, &stored, &storedImages, &storedModel, &storedMeta); err != nil {
		return 0, 0, fmt.Errorf("sample %s: %w", t.SampleID, err)
	}
	if o := t.Omitted; o.Images || o.Model || o.Meta {
		// Fields the record left out keep their stored values.
		full := *t
		if o.Images {
			if err := json.Unmarshal([]byte(storedImages), &full.Images); err != nil {
				return 0, 0, err
			}
			images = []byte(storedImages)
		}
		if o.Model {
			full.Model = storedModel
		}
		if o.Meta && storedMeta.Valid {
			full.Meta = json.RawMessage(storedMeta.String)
			meta = storedMeta.String
		}
		t, hash = &full, full.Hash()
	}
	if bytes.Equal(stored, hash) {
		return id, Unchanged, nil
	}
	if !im.opts.Replace {
		return 0, 0, fmt.Errorf("%w: sample %s is already imported with different content (use --replace to overwrite it)", ErrConflict, t.SampleID)
	}
	if _, err := im.updateTurn.ExecContext(im.ctx, epID, t.Turn, t.ActionType, t.TaskType, t.UserMessage,
		t.VLMResponse, t.ExpectedAnswer, string(images), t.Model, meta, hash, id); err != nil {
		return 0, 0, im.turnConflict(t, err)
	}
	if err := im.staleLabels(id, t); err != nil {
		return 0, 0, fmt.Errorf("sample %s: %w", t.SampleID, err)
	}
	return id, Replaced, nil
}

// turnConflict explains a UNIQUE (episode, turn) clash in the user's words.
func (im *Importer) turnConflict(t *dataset.Turn, err error) error {
	err = domainError(err)
	if !isConflict(err) {
		return err
	}
	var other string
	_ = im.tx.QueryRowContext(im.ctx, `SELECT t.sample_id FROM turns t JOIN episodes e ON e.id = t.episode_id
		WHERE e.episode_key = ? AND t.turn = ?`, t.EpisodeID, t.Turn).Scan(&other)
	return fmt.Errorf("%w: turn %d of episode %s is already sample %s", ErrConflict, t.Turn, t.EpisodeID, other)
}

func (im *Importer) annotatorID(name string) (int64, error) {
	if id, ok := im.annotatorIDs[name]; ok {
		return id, nil
	}
	id, err := ensureAnnotator(im.ctx, im.tx, name)
	if err != nil {
		return 0, err
	}
	im.annotatorIDs[name] = id
	return id, nil
}

// PutLabel stores an annotator's label for a turn put earlier in this import. The label must
// already be valid for the rubric; an identical stored label is left alone, a different one is
// an ErrConflict unless the import replaces.
func (im *Importer) PutLabel(turnID int64, l *dataset.Label) (Outcome, error) {
	aid, err := im.annotatorID(l.Annotator)
	if err != nil {
		return 0, err
	}
	ctx, tx := im.ctx, im.tx
	var existing annotationRow
	err = tx.QueryRowContext(ctx, `SELECT id, status, flagged, flag_reason, rubric_version, active_ms,
		COALESCE(annotated_at, updated_at), stale FROM annotations WHERE annotator_id = ? AND turn_id = ?`, aid, turnID).
		Scan(&existing.id, &existing.status, &existing.flagged, &existing.flagReason, &existing.rubricVersion,
			&existing.activeMS, &existing.at, &existing.stale)
	switch {
	case err == sql.ErrNoRows:
	case err != nil:
		return 0, err
	default:
		vals, err := loadValues(ctx, tx, existing.id)
		if err != nil {
			return 0, err
		}
		if existing.sameAs(l, vals) {
			return Unchanged, nil
		}
		if !im.opts.Replace {
			return 0, fmt.Errorf("%w: %s already has a different label for this sample (use --replace to overwrite it)", ErrConflict, l.Annotator)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM annotations WHERE id = ?`, existing.id); err != nil {
			return 0, err
		}
		if existing.stale && !l.Stale {
			im.relabeled(turnID, l.Annotator)
		}
	}
	at := formatTime(l.AnnotatedAt)
	var annotatedAt any
	if l.Status == dataset.StatusDone {
		annotatedAt = at
	}
	var id int64
	err = tx.QueryRowContext(ctx, `INSERT INTO annotations (turn_id, annotator_id, status, flagged, flag_reason,
		rubric_version, active_ms, created_at, updated_at, annotated_at, stale) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		turnID, aid, l.Status, l.Flagged, l.FlagReason, l.RubricVersion, secondsToMS(l.ActiveSeconds), at, at, annotatedAt, l.Stale).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("store label: %w", domainError(err))
	}
	for _, f := range sortedKeys(l.Values) {
		if _, err := tx.ExecContext(ctx, `INSERT INTO annotation_values (annotation_id, field, value) VALUES (?, ?, ?)`,
			id, f, l.Values[f]); err != nil {
			return 0, fmt.Errorf("store label: %w", err)
		}
	}
	if existing.id != 0 {
		return Replaced, nil
	}
	return Inserted, nil
}

type annotationRow struct {
	id                                    int64
	status, flagReason, rubricVersion, at string
	flagged, stale                        bool
	activeMS                              int64
}

func (a *annotationRow) sameAs(l *dataset.Label, vals rubric.Values) bool {
	if a.status != l.Status || a.flagged != l.Flagged || a.flagReason != l.FlagReason ||
		a.rubricVersion != l.RubricVersion || a.activeMS != secondsToMS(l.ActiveSeconds) ||
		(!l.StampedNow && a.at != formatTime(l.AnnotatedAt)) || len(vals) != len(l.Values) {
		return false
	}
	for k, v := range l.Values {
		if vals[k] != v {
			return false
		}
	}
	return true
}

func loadValues(ctx context.Context, q querier, annotationID int64) (rubric.Values, error) {
	rows, err := q.QueryContext(ctx, `SELECT field, value FROM annotation_values WHERE annotation_id = ?`, annotationID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	vals := rubric.Values{}
	for rows.Next() {
		var f, v string
		if err := rows.Scan(&f, &v); err != nil {
			return nil, err
		}
		vals[f] = v
	}
	return vals, rows.Err()
}

type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

func secondsToMS(s float64) int64 { return int64(s*1000 + 0.5) }

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func sortedKeys(v rubric.Values) []string {
	keys := make([]string, 0, len(v))
	for k := range v {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func isConflict(err error) bool { return errors.Is(err, ErrConflict) }
