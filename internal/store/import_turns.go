package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/m3bench/m3eval/internal/dataset"
)

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
func (im *Importer) PutTurns(ts []dataset.Turn) ([]int64, []dataset.Outcome, error) {
	if err := im.ensureTx(); err != nil {
		return nil, nil, err
	}
	ids, outcomes, err := im.putTurns(ts)
	if err != nil {
		return ids, outcomes, err
	}
	return ids, outcomes, im.maybeCommit()
}

func (im *Importer) putTurns(ts []dataset.Turn) ([]int64, []dataset.Outcome, error) {
	ids := make([]int64, 0, len(ts))
	outcomes := make([]dataset.Outcome, 0, len(ts))
	// On PostgreSQL the whole batch goes in with one COPY, which has no limit on parameters.
	rows, fast := batchRows, func(chunk []dataset.Turn) bool { return len(chunk) == batchRows }
	if im.s.d.pg {
		rows = max(len(ts), 1)
		// A chunk with a turn PostgreSQL cannot store goes turn by turn, where putTurn names it.
		fast = func(chunk []dataset.Turn) bool {
			return len(chunk) > 1 && !slices.ContainsFunc(chunk, func(t dataset.Turn) bool { return noNUL(&t) != nil })
		}
	}
	for start := 0; start < len(ts); start += rows {
		chunk := ts[start:min(start+rows, len(ts))]
		if fast(chunk) && !im.storedBefore {
			n := len(ids)
			var ok bool
			var err error
			ids, ok, err = im.insertChunk(chunk, ids)
			if err != nil {
				return ids[:n], outcomes, err
			}
			if ok {
				if err := im.lowerFence(claimTurn, slices.Min(ids[n:])); err != nil {
					return ids[:n], outcomes, err
				}
				for range chunk {
					outcomes = append(outcomes, dataset.Inserted)
				}
				continue
			}
		}
		stored, err := im.storedTurns(chunk)
		if err != nil {
			return ids, outcomes, err
		}
		// A file of turns stored already (labels for imported turns, a re-import) would
		// otherwise try, and fail, the multi-row INSERT for every chunk: a fifth of a label
		// import's CPU (#44). The next chunk tries it again once one has no stored turn.
		im.storedBefore = len(stored) > 0
		for i := range chunk {
			t := &chunk[i]
			if st, ok := stored[t.SampleID]; ok && st.same(t) {
				if err := im.rely(claimTurn, st.id, st.owner); err != nil {
					return ids, outcomes, err
				}
				ids = append(ids, st.id)
				outcomes = append(outcomes, dataset.Unchanged)
				continue
			}
			id, o, err := im.putTurn(t)
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
	id    int64
	hash  []byte
	owner sql.NullInt64 // the import batch that wrote it
	// The optional fields, for a record that leaves them out (labels in the guide's format).
	images, model string
	meta          sql.NullString
}

// same tells whether t, with the fields its record left out taken from st, is the stored
// turn. Labeled samples in the guide's format leave meta out: comparing them here, instead of
// turn by turn in putTurn, took a label import of 240,000 guide-format records from four
// statements per record to none (#44). A turn found different goes to putTurn, which says why.
func (st *storedTurn) same(t *dataset.Turn) bool {
	if t.Omitted == (dataset.Omitted{}) {
		return bytes.Equal(st.hash, t.ContentHash())
	}
	full, err := withStored(t, st.images, st.model, st.meta)
	return err == nil && bytes.Equal(st.hash, full.Hash())
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
	list, err := im.s.d.keysArg(keys)
	if err != nil {
		return nil, err
	}
	stored := make(map[string]storedTurn, len(ts))
	err = collectByKey(im.ctx, im.findTurns, list, stored, func(st *storedTurn) []any {
		return []any{&st.id, &st.hash, &st.owner, &st.images, &st.model, &st.meta}
	})
	if err != nil {
		return nil, fmt.Errorf("look up stored turns: %w", err)
	}
	return stored, nil
}

// collectByKey runs a statement given a list of keys (keysArg), whose rows are a key and then
// what dest points at, and puts each row's values under its key.
func collectByKey[V any](ctx context.Context, stmt *sql.Stmt, list any, into map[string]V, dest func(*V) []any) error {
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

// importTurnColumns are the columns of a turn's row an import writes, in turnRow's order; the
// import_batch column follows them in every statement that writes turns.
var importTurnColumns = []string{"sample_id", "episode_id", "turn", "action_type", "task_type", "user_message",
	"vlm_response", "expected_answer", "images", "model", "meta", "content_hash"}

// The places in turnRow of the values putTurn looks at again.
const (
	turnImages = 8
	turnHash   = 11
)

// turnRow appends the values of turn t's row, in importTurnColumns' order, for episode epID. It is
// the one place that says how a turn is stored: the single INSERT, the multi-row one, the
// staging of a replacement and PostgreSQL's COPY all write what it gives.
func turnRow(row []any, t *dataset.Turn, epID int64) ([]any, error) {
	images, err := jsonArray(t.Images)
	if err != nil {
		return row, err
	}
	var meta any
	if t.Meta != nil {
		meta = string(t.Meta)
	}
	return append(row, t.SampleID, epID, int64(t.Turn), t.ActionType, t.TaskType, t.UserMessage,
		t.VLMResponse, t.ExpectedAnswer, images, t.Model, meta, t.ContentHash()), nil
}

// batchRows is how many turns one multi-row INSERT carries (12 parameters each, well under
// SQLite's limit of 32766).
const batchRows = 128

// insertChunk tries to insert batchRows new turns with one statement and appends their ids
// to ids. ok is false when the statement broke a constraint (most often: a turn is already
// stored): the statement is then undone, and the caller goes turn by turn.
func (im *Importer) insertChunk(ts []dataset.Turn, ids []int64) (_ []int64, ok bool, err error) {
	if ok, err := im.storeEpisodes(ts); !ok || err != nil {
		return ids, false, err
	}
	if im.s.d.pg {
		return im.copyTurns(ts, ids)
	}
	args := im.batchArgs[:0]
	for i := range ts {
		var err error
		if args, err = turnRow(args, &ts[i], im.chunkEpisodes[ts[i].EpisodeID]); err != nil {
			return ids, false, err
		}
	}
	im.batchArgs = args
	res, err := im.batchTurns.ExecContext(im.ctx, args...)
	if err != nil {
		if isConstraint(err) {
			// A stored or clashing turn, or a bad value: SQLite undid the statement, and turn
			// by turn each one gets its outcome or its own error.
			return ids, false, nil
		}
		return ids, false, fmt.Errorf("store turns: %w", err)
	}
	last, err := res.LastInsertId()
	if err != nil {
		return ids, false, err
	}
	// One INSERT numbers its rows consecutively: nothing else writes in this transaction.
	for i := range ts {
		ids = append(ids, last-int64(len(ts)-1-i))
	}
	return ids, true, nil
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
	list, err := im.s.d.keysArg(keys)
	if err != nil {
		return false, err
	}
	if !im.s.d.pg { // on PostgreSQL findEpisodes inserts them too
		if _, err := im.insertEpisodes.ExecContext(im.ctx, list); err != nil {
			return false, fmt.Errorf("store episodes: %w", err)
		}
	}
	clear(im.chunkEpisodes)
	err = collectByKey(im.ctx, im.findEpisodes, list, im.chunkEpisodes, func(id *int64) []any { return []any{id} })
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
func (im *Importer) PutTurn(t *dataset.Turn) (int64, dataset.Outcome, error) {
	if err := im.ensureTx(); err != nil {
		return 0, 0, err
	}
	id, o, err := im.putTurn(t)
	if err != nil {
		return id, o, err
	}
	return id, o, im.maybeCommit()
}

func (im *Importer) putTurn(t *dataset.Turn) (int64, dataset.Outcome, error) {
	if im.s.d.pg {
		if err := noNUL(t); err != nil {
			return 0, 0, err
		}
	}
	epID, err := im.episodeID(t.EpisodeID)
	if err != nil {
		return 0, 0, err
	}
	row, err := turnRow(nil, t, epID)
	if err != nil {
		return 0, 0, err
	}
	var newID int64
	err = im.s.savepoint(im.ctx, im.conn, func() error {
		err := im.insertTurn.QueryRowContext(im.ctx, row...).Scan(&newID)
		if errors.Is(err, sql.ErrNoRows) {
			return nil // stored already: ON CONFLICT DO NOTHING returns no row
		}
		return err
	})
	if err != nil {
		return 0, 0, im.turnConflict(t, err)
	}
	if newID != 0 {
		return newID, dataset.Inserted, im.lowerFence(claimTurn, newID)
	}
	var (
		id           int64
		stored       []byte
		storedImages string
		storedModel  string
		storedMeta   sql.NullString
		owner        sql.NullInt64
	)
	if err := im.findTurn.QueryRowContext(im.ctx, t.SampleID).Scan(&id, &stored, &storedImages, &storedModel, &storedMeta, &owner); err != nil {
		return 0, 0, fmt.Errorf("sample %s: %w", t.SampleID, err)
	}
	if err := im.rely(claimTurn, id, owner); err != nil {
		return 0, 0, err
	}
	if o := t.Omitted; o.Images || o.Model || o.Meta {
		full, err := withStored(t, storedImages, storedModel, storedMeta)
		if err != nil {
			return 0, 0, err
		}
		// The row as it would be stored: the fields left out keep their stored values.
		if row, err = turnRow(row[:0], full, epID); err != nil {
			return 0, 0, err
		}
		if o.Images {
			row[turnImages] = storedImages
		}
		t = full
	}
	// A database written before meta's escapes were read as characters holds, for a meta
	// with escapes, its LegacyHash: the same file again is still unchanged.
	if bytes.Equal(stored, row[turnHash].([]byte)) || bytes.Equal(stored, t.LegacyHash()) {
		return id, dataset.Unchanged, nil
	}
	if !im.opts.Replace {
		return 0, 0, fmt.Errorf("%w: sample %s is already imported with different content (use --replace to overwrite it)", ErrConflict, t.SampleID)
	}
	// Staged: the stored turn changes only when the whole file is in (Commit). The staged
	// row is the turn's row without its sample id, and with the stored turn's id.
	if _, err := im.stageTurn.ExecContext(im.ctx, append(row[1:], id)...); err != nil {
		return 0, 0, im.turnConflict(t, err)
	}
	// Its labels were made on the old content: Commit marks them, with the turn's update.
	im.replacedTurns = append(im.replacedTurns, replacedTurn{id, t.SampleID, t.Item()})
	return id, dataset.Replaced, nil
}

// withStored is turn t with the optional fields its record left out taken from the stored
// turn: they keep their stored values.
func withStored(t *dataset.Turn, images, model string, meta sql.NullString) (*dataset.Turn, error) {
	full := *t
	full.Sum = nil
	if t.Omitted.Images {
		full.Images = nil
		if err := json.Unmarshal([]byte(images), &full.Images); err != nil {
			return nil, err
		}
	}
	if t.Omitted.Model {
		full.Model = model
	}
	if t.Omitted.Meta && meta.Valid {
		full.Meta = json.RawMessage(meta.String)
	}
	return &full, nil
}

// turnConflict explains a UNIQUE (episode, turn) clash in the user's words.
func (im *Importer) turnConflict(t *dataset.Turn, err error) error {
	err = domainError(err)
	if !isConflict(err) {
		return err
	}
	var other string
	_ = im.conn.QueryRowContext(im.ctx, `SELECT t.sample_id FROM turns t JOIN episodes e ON e.id = t.episode_id
		WHERE e.episode_key = ? AND t.turn = ?`, t.EpisodeID, t.Turn).Scan(&other)
	return fmt.Errorf("%w: turn %d of episode %s is already sample %s", ErrConflict, t.Turn, t.EpisodeID, other)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
