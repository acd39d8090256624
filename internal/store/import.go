package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/m3bench/m3eval/internal/dataset"
	"github.com/m3bench/m3eval/internal/rubric"
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
	// Source names the file in the import's batch record, for whoever finds it abandoned.
	Source string
}

// Importer writes one file's records: either all of them become visible or none. It writes
// in short transactions (importChunkTime each) on a connection of its own, so annotators'
// saves and other imports get the write lock between chunks; the rows belong to an import
// batch that readers do not see until Commit deletes the batch row. Replacements of stored
// turns and labels are staged on the side and applied by Commit, in its one transaction.
type Importer struct {
	s    *Store
	ctx  context.Context
	conn *sql.Conn
	opts ImportOptions

	batch                      int64
	firstTurn, firstAnnotation int64
	inTx                       bool
	txStart                    time.Time
	// waiters tells whether a short writer waits, so that the chunk ends early for it;
	// lastProbe is when it last looked (every importProbeEvery).
	waiters        *waitersProbe
	lastProbe      time.Time
	finished       bool
	replacedLabels []stagedLabel
	labels         labelStmts // PutLabels' (labelbatch.go)
	// storedBefore says the last chunk of turns had turns stored already: the next one is
	// looked up before any INSERT is tried (putTurns).
	storedBefore bool
	// commitSent: finish sent the final COMMIT; replyLost: its reply was lost and the
	// import landed all the same (batchLanded).
	commitSent, replyLost bool

	insertTurn, findTurn, stageTurn, upsertEpisode *sql.Stmt
	batchTurns, insertEpisodes, findEpisodes       *sql.Stmt
	findTurns                                      *sql.Stmt
	batchArgs                                      []any
	chunkEpisodes                                  map[string]int64 // episode ids of the chunk being inserted
	// turnIDs are turn ids taken from the sequence ahead of use (PostgreSQL's COPY, pgimport.go).
	turnIDs  []int64
	turnSeq  string
	copyRows [][]any

	// The last episode seen; records come grouped by episode, so this cache hits nearly always
	// and keeps memory flat however large the file.
	lastEpisodeKey string
	lastEpisodeID  int64
	annotatorIDs   map[string]int64

	replacedTurns []replacedTurn // turns whose content Commit replaces
	stale         []StaleLabel   // labels of turns this import replaced

	// batchStates caches, for the open chunk's transaction only, what became of the other
	// import batches whose rows this import met (claims.go).
	batchStates map[int64]batchState
	// finishHooks run in Commit's transaction, before the batch row goes (a score import's
	// changes to stored scores).
	finishHooks []func() error
}

// importChunkTime is how long an import holds the write lock at a time. Annotators wait at
// most about this long for a save (p99 key-to-saved in docs/annotating.md), and committing
// more often than this costs the import throughput (BenchmarkImport1M).
const importChunkTime = 50 * time.Millisecond

// A chunk ends before importChunkTime when a short writer waits: on a loaded machine the
// import's process gets a fraction of a core, and 50 ms of its work took several hundred
// milliseconds of wall time while it held the lock (the load test with five judges: saves
// waited 150-860 ms for the lock, their commit took 1-18 ms). It looks every
// importProbeEvery, and not before importChunkMin, so that a bulk writer's own probe, which
// looks like a waiter for an instant, cannot make chunks tiny.
const (
	importChunkMin   = 5 * time.Millisecond
	importProbeEvery = 2 * time.Millisecond
)

// shortWriterWaits reports, at most every importProbeEvery, whether a short writer waits.
func (im *Importer) shortWriterWaits() bool {
	if time.Since(im.lastProbe) < importProbeEvery {
		return false
	}
	im.lastProbe = time.Now()
	if im.s.d.pg {
		return im.s.d.shortWriterWaiting(im.ctx, im.conn)
	}
	return im.waiters.waiting()
}

// importYield is the pause after each chunk: writers waiting for the lock poll every lockPoll
// and get in during it. While others write during the pauses, the import pauses again (up to
// importYieldMax in all), so that several waiting annotators all get in before the next chunk.
// Writers that registered as waiting go first anyway (waitLock); the pause is for
// those that cannot register (waiters.go).
// The load test (docs/annotating.md) measured p99 key-to-saved under 250 ms with these values.
const (
	importYield    = time.Millisecond
	importYieldMax = 30 * time.Millisecond
)

// BeginImport starts an import: an import batch of its own, not visible until Commit.
func (s *Store) BeginImport(ctx context.Context, opts ImportOptions) (*Importer, error) {
	if err := s.dropAbandonedBatches(ctx); err != nil {
		return nil, fmt.Errorf("begin import: %w", err)
	}
	conn, err := s.wdb.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("begin import: %w", err)
	}
	im := &Importer{s: s, ctx: ctx, conn: conn, opts: opts, waiters: s.probeWaiters(), annotatorIDs: map[string]int64{},
		chunkEpisodes: map[string]int64{}, batchStates: map[int64]batchState{}}
	if err := im.start(); err != nil {
		im.Rollback()
		return nil, fmt.Errorf("begin import: %w", err)
	}
	return im, nil
}

func (im *Importer) start() error {
	ctx, conn, d := im.ctx, im.conn, im.s.d
	if !d.pg {
		// A large import touches every index; with SQLite's 2 MB default cache the pages spill to
		// the WAL again and again. 256 MB keeps a million-turn import's hot pages in memory.
		if _, err := conn.ExecContext(ctx, `PRAGMA cache_size = -262144`); err != nil {
			return err
		}
	}
	// Replaced turns wait here, in this connection's temporary database (no lock on the main
	// one), until Commit applies them all at once.
	if _, err := conn.ExecContext(ctx, `DROP TABLE IF EXISTS `+d.tempTable("import_replaced_turns")); err != nil {
		return err
	}
	create := `CREATE TEMP TABLE import_replaced_turns (id INTEGER PRIMARY KEY, episode_id, turn, action_type,
		task_type, user_message, vlm_response, expected_answer, images, model, meta, content_hash)`
	if d.pg {
		// Typed, unlike SQLite's: PostgreSQL wants a type for every column.
		create = `CREATE TEMP TABLE import_replaced_turns (id BIGINT PRIMARY KEY, episode_id BIGINT, turn BIGINT,
			action_type TEXT, task_type TEXT, user_message TEXT, vlm_response TEXT, expected_answer TEXT,
			images TEXT, model TEXT, meta TEXT, content_hash BYTEA)`
	}
	if _, err := conn.ExecContext(ctx, create); err != nil {
		return err
	}
	if err := im.begin(); err != nil {
		return err
	}
	host, _ := os.Hostname()
	now := formatTime(im.s.Now())
	err := conn.QueryRowContext(ctx, `INSERT INTO import_batches (source, host, pid, started_at, heartbeat, first_turn, first_annotation)
		VALUES (?, ?, ?, ?, ?, (SELECT coalesce(max(id), 0) + 1 FROM turns), (SELECT coalesce(max(id), 0) + 1 FROM annotations))
		RETURNING id, first_turn, first_annotation`, im.opts.Source, host, os.Getpid(), now, now).Scan(&im.batch, &im.firstTurn, &im.firstAnnotation)
	if err != nil {
		return err
	}
	if err := im.commitChunk(); err != nil {
		return err
	}
	var err2 error
	prep := func(dst **sql.Stmt, q string) {
		if err2 != nil {
			return
		}
		*dst, err2 = conn.PrepareContext(ctx, q)
	}
	b := strconv.FormatInt(im.batch, 10)
	prep(&im.insertTurn, `INSERT INTO turns (sample_id, episode_id, turn, action_type, task_type,
		user_message, vlm_response, expected_answer, images, model, meta, content_hash, import_batch)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, `+b+`) ON CONFLICT (sample_id) DO NOTHING RETURNING id`)
	prep(&im.findTurn, `SELECT id, content_hash, images, model, meta, import_batch FROM turns WHERE sample_id = ?`)
	prep(&im.stageTurn, `INSERT INTO `+d.tempTable("import_replaced_turns")+` (episode_id, turn, action_type, task_type,
		user_message, vlm_response, expected_answer, images, model, meta, content_hash, id)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET episode_id = excluded.episode_id,
		turn = excluded.turn, action_type = excluded.action_type, task_type = excluded.task_type,
		user_message = excluded.user_message, vlm_response = excluded.vlm_response,
		expected_answer = excluded.expected_answer, images = excluded.images, model = excluded.model,
		meta = excluded.meta, content_hash = excluded.content_hash`)
	prep(&im.upsertEpisode, `INSERT INTO episodes (episode_key, import_batch) VALUES (?, `+b+`)
		ON CONFLICT (episode_key) DO UPDATE SET episode_key = excluded.episode_key RETURNING id`)
	if !d.pg {
		// The episodes of a chunk of turns, given as one JSON array of keys: two statements per
		// chunk, to create the new ones and to read all their ids, instead of one per episode.
		prep(&im.insertEpisodes, `INSERT INTO episodes (episode_key, import_batch) SELECT value, `+b+` FROM json_each(?) WHERE true
			ON CONFLICT (episode_key) DO NOTHING`)
		prep(&im.findEpisodes, `SELECT episode_key, id FROM episodes
			WHERE `+d.inKeys("episode_key"))
		// A batch of turns goes in with one multi-row INSERT: the per-statement cost of
		// database/sql and cgo is paid once per batchRows turns instead of once per turn.
		// (PostgreSQL uses COPY instead: pgimport.go.)
		prep(&im.batchTurns, `INSERT INTO turns (sample_id, episode_id, turn, action_type, task_type,
			user_message, vlm_response, expected_answer, images, model, meta, content_hash, import_batch) VALUES `+
			strings.TrimSuffix(strings.Repeat("(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "+b+"), ", batchRows), ", "))
	} else {
		// One round trip for both: the new episodes come from the INSERT's RETURNING, the
		// others from the statement's snapshot, which does not see the new ones.
		prep(&im.findEpisodes, `WITH ins AS (INSERT INTO episodes (episode_key, import_batch)
				SELECT k, `+b+` FROM unnest(?1::text[]) WITH ORDINALITY AS u (k, ord) ORDER BY ord
				ON CONFLICT (episode_key) DO NOTHING RETURNING episode_key, id)
			SELECT episode_key, id FROM ins UNION ALL SELECT episode_key, id FROM episodes WHERE episode_key = ANY (?1::text[])`)
	}
	// The stored turns among a chunk's sample ids, given as one list (keysArg): re-importing
	// a file then costs one query per chunk instead of two statements per turn.
	prep(&im.findTurns, `SELECT sample_id, id, content_hash, import_batch, images, model, meta FROM turns
		WHERE `+d.inKeys("sample_id"))
	return err2
}

// begin opens the next chunk's transaction, after any writer that waits for the lock.
func (im *Importer) begin() error {
	err := im.s.waitLock(im.ctx, bulkWriter, func() error {
		return im.s.beginConn(im.ctx, im.conn)
	})
	if err != nil {
		return err
	}
	im.inTx, im.txStart = true, time.Now()
	// What another import did between two chunks is known only inside a transaction: its
	// batch may have completed or failed, and an episode read before may be gone with it.
	clear(im.batchStates)
	im.lastEpisodeKey, im.lastEpisodeID = "", 0
	if im.batch == 0 {
		return nil // start: the batch is being created
	}
	// Rows written under a batch that is gone would be visible at once: a batch removed as
	// abandoned (its import stalled for abandonedAfter) ends the import.
	var failed bool
	switch err := im.conn.QueryRowContext(im.ctx, `SELECT failed FROM import_batches WHERE id = ?`, im.batch).Scan(&failed); {
	case errors.Is(err, sql.ErrNoRows) || (err == nil && failed):
		return errBatchGone(im.batch)
	case err != nil:
		return err
	}
	return nil
}

func errBatchGone(batch int64) error {
	return fmt.Errorf("import batch %d was removed while it ran (taken for abandoned)", batch)
}

// Flush commits the open chunk, if any: the reader calls it before it waits for input, so
// that a slow source (a pipe, a network disk) never keeps the write lock held while idle.
func (im *Importer) Flush() error {
	if !im.inTx {
		return nil
	}
	if err := im.commitChunk(); err != nil {
		return fmt.Errorf("commit import chunk: %w", err)
	}
	return nil
}

// ensureTx opens a chunk's transaction unless one is open.
func (im *Importer) ensureTx() error {
	if im.inTx {
		return nil
	}
	return im.begin()
}

// commitChunk commits the open chunk, with the batch's heartbeat: a batch whose row is gone
// was taken for abandoned and removed, and this import must not go on.
func (im *Importer) commitChunk() error {
	if im.batch != 0 {
		res, err := im.conn.ExecContext(im.ctx, `UPDATE import_batches SET heartbeat = ? WHERE id = ? AND NOT failed`, formatTime(im.s.Now()), im.batch)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return errBatchGone(im.batch)
		}
	}
	if _, err := im.conn.ExecContext(im.ctx, `COMMIT`); err != nil {
		return err
	}
	im.inTx = false
	return nil
}

// maybeCommit ends the chunk once it has held the lock for importChunkTime, and lets
// waiting writers in.
func (im *Importer) maybeCommit() error {
	if !im.inTx {
		return nil
	}
	if age := time.Since(im.txStart); age < im.s.chunkTime && (age < importChunkMin || !im.shortWriterWaits()) {
		return nil
	}
	if err := im.commitChunk(); err != nil {
		return fmt.Errorf("commit import chunk: %w", err)
	}
	if im.s.d.pg {
		// No pause needed: PostgreSQL queues the writers waiting for the advisory lock, and
		// this import's next chunk goes behind them.
		return nil
	}
	im.syncWAL()
	return im.yield()
}

// syncWAL writes the chunk's WAL pages to disk, outside the lock. The import commits with
// synchronous=NORMAL (no fsync); an annotator's save commits with FULL, and its fsync of the
// same WAL file would otherwise have to write out the import's tens of megabytes, inside the
// write lock, while other annotators wait (the load test measured saves holding the lock for
// up to a second that way, and p99 key-to-saved of 560 ms). Syncing here, before the next
// chunk, also leaves waiting writers a longer gap; running it in a goroutine beside the import
// measured worse (p99 305 ms against 209 ms) at no clear gain in records/s. The -wal file
// carries no POSIX lock of SQLite's, so opening and closing it here does not disturb SQLite's
// locking. A failure only loses this speed-up.
func (im *Importer) syncWAL() { im.s.syncWAL() }

// syncWAL writes the WAL to disk (Importer.syncWAL says why).
func (s *Store) syncWAL() {
	f, err := os.Open(s.path + "-wal")
	if err != nil {
		return
	}
	f.Sync()
	f.Close()
}

// yield pauses for other writers, longer while they use the pauses. SQLite's data_version
// changes when another connection commits.
func (im *Importer) yield() error { return yieldWriters(im.ctx, im.conn) }

// yieldWriters is the pause of a bulk writer on conn between two chunks (Importer.yield).
func yieldWriters(ctx context.Context, conn *sql.Conn) error {
	version := func() (v int64, err error) {
		err = conn.QueryRowContext(ctx, `PRAGMA data_version`).Scan(&v)
		return v, err
	}
	before, err := version()
	if err != nil {
		return err
	}
	for waited := time.Duration(0); waited < importYieldMax; waited += importYield {
		time.Sleep(importYield)
		after, err := version()
		if err != nil {
			return err
		}
		if after == before {
			return nil // nobody wrote: nobody is waiting
		}
		before = after
	}
	return nil
}

// Commit makes the import's records visible: it applies the staged replacements and removes
// the batch row, in one transaction.
func (im *Importer) Commit() error {
	if err := im.finish(); err != nil {
		if !im.commitSent {
			return fmt.Errorf("commit import: %w", err)
		}
		// The COMMIT went out and its reply did not come back (a connection cut, a server
		// gone): the import landed or not. Its batch row, which the commit deletes, tells.
		switch landed, lerr := im.s.batchLanded(im.batch); {
		case lerr != nil:
			return fmt.Errorf("commit import: the reply to COMMIT was lost (%v) and the database cannot be asked whether the import landed (%v): "+
				"the outcome is unknown; run the import again when the database answers: a rerun stores what is missing and changes nothing else", err, lerr)
		case landed:
			im.replyLost = true
			im.finished = true
			im.release()
			return nil
		default:
			return fmt.Errorf("commit import: the reply to COMMIT was lost (%v) and the import did not land: nothing of it is stored; running it again is safe", err)
		}
	}
	im.finished = true
	im.release()
	return nil
}

// CommitReplyLost tells whether Commit found out the import landed after the reply to its
// COMMIT was lost, for the command to say so.
func (im *Importer) CommitReplyLost() bool { return im.replyLost }

// batchLanded asks, on a connection of its own and for up to commitCheckTime, whether an
// import batch completed: its row is gone (Commit deletes it in the import's last
// transaction; a failed batch keeps its row until removed, marked failed).
func (s *Store) batchLanded(batch int64) (bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), commitCheckTime)
	defer cancel()
	for {
		var n int
		err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM import_batches WHERE id = ?`, batch).Scan(&n)
		if err == nil {
			return n == 0, nil
		}
		if sleepCtx(ctx, 200*time.Millisecond) != nil {
			return false, err
		}
	}
}

// commitCheckTime is how long Commit tries to learn the outcome of a COMMIT whose reply was
// lost.
const commitCheckTime = 10 * time.Second

// release closes the import's statements and hands its connection back. A statement left
// open keeps SQLite from closing the file cleanly when the store closes: the connection
// lingers, and the WAL is neither checkpointed nor removed.
func (im *Importer) release() {
	for _, st := range []*sql.Stmt{im.insertTurn, im.findTurn, im.stageTurn, im.upsertEpisode,
		im.batchTurns, im.insertEpisodes, im.findEpisodes, im.findTurns} {
		if st != nil {
			st.Close()
		}
	}
	im.closeLabels()
	im.waiters.close()
	im.conn.Close()
}

func (im *Importer) finish() error {
	if err := im.ensureTx(); err != nil {
		return err
	}
	ctx, conn := im.ctx, im.conn
	if _, err := conn.ExecContext(ctx, `UPDATE turns SET episode_id = r.episode_id, turn = r.turn,
		action_type = r.action_type, task_type = r.task_type, user_message = r.user_message,
		vlm_response = r.vlm_response, expected_answer = r.expected_answer, images = r.images,
		model = r.model, meta = r.meta, content_hash = r.content_hash
		FROM `+im.s.d.tempTable("import_replaced_turns")+` r WHERE turns.id = r.id`); err != nil {
		return fmt.Errorf("replace turns: %w", domainError(err))
	}
	for _, rt := range im.replacedTurns {
		if err := im.staleLabels(rt); err != nil {
			return fmt.Errorf("sample %s: %w", rt.sampleID, err)
		}
	}
	for i := range im.replacedLabels {
		sl := &im.replacedLabels[i]
		if err := im.insertLabel(sl); err != nil {
			return err
		}
		if !sl.l.Stale {
			im.relabeled(sl.turnID, sl.l.Annotator) // a new label, not one to re-confirm
		}
	}
	for _, hook := range im.finishHooks {
		if err := hook(); err != nil {
			return err
		}
	}
	if err := im.ownClaims(); err != nil {
		return err
	}
	res, err := conn.ExecContext(ctx, `DELETE FROM import_batches WHERE id = ?`, im.batch)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return errBatchGone(im.batch)
	}
	im.commitSent = true
	if _, err := conn.ExecContext(ctx, `COMMIT`); err != nil {
		return err
	}
	im.inTx = false
	return nil
}

// Rollback drops everything the import wrote. It is safe after Commit.
func (im *Importer) Rollback() {
	if im.finished {
		return
	}
	im.finished = true
	// On a context of its own: an interrupted import must still clean up, for at most
	// rollbackBudget; the next import removes the rest.
	ctx, cancel := context.WithTimeout(context.Background(), rollbackBudget)
	defer cancel()
	if im.inTx {
		im.conn.ExecContext(ctx, `ROLLBACK`)
		im.inTx = false
	}
	if im.batch != 0 {
		// What is left behind (the process dies meanwhile) stays invisible, and the next
		// import removes it (dropAbandonedBatches).
		_ = im.s.dropBatch(ctx, im.conn, im.batch)
	}
	if !im.s.d.pg {
		// The import's WAL can be most of a full disk, and SQLite keeps the file's size after
		// a checkpoint: annotate then cannot open. Copy what committed into the database and
		// cut the WAL to nothing (it fails harmlessly while a reader holds a snapshot).
		im.conn.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`)
	}
	im.release()
}

// A batch's removal deletes its rows in chunks, one transaction each, sized so that each
// holds the write lock for about dropChunkTarget of chunkTime: a chunk's time depends on the
// rows' cascades (judge scores, samples, assignments, labels of each turn) and on the machine,
// so the size adapts, starting small. An annotator's save waits at most about one chunk.
const (
	dropChunkStart = 100
	dropChunkMax   = 5000
)

// dropChunkTime is the lock time a removal's chunk aims at: half of chunkTime, so that a
// chunk that takes twice as long as the last one still ends within chunkTime.
func (s *Store) dropChunkTime() time.Duration { return s.chunkTime / 2 }

// rollbackBudget is how long a failed or interrupted import spends removing its own rows
// before it gives up and exits: Ctrl-C must end an import within 2 s (#38). What is left
// stays invisible under the batch, marked failed, and the next import removes it
// (dropAbandonedBatches).
const rollbackBudget = 1500 * time.Millisecond

// dropBatch removes a failed import batch in short transactions: it marks the batch failed
// (nobody claims its rows any more), hands the rows other open imports claimed to one of
// them, deletes the rest of its rows, then the batch itself. Until the last step its rows
// stay invisible. Each chunk holds the write lock for about dropChunkTime, and waiting
// writers go between chunks.
func (s *Store) dropBatch(ctx context.Context, conn *sql.Conn, batch int64) error {
	// inTx runs f in a transaction of its own and says how long it held the write lock.
	inTx := func(f func() error) (time.Duration, error) {
		err := s.waitLock(ctx, bulkWriter, func() error {
			return s.beginConn(ctx, conn)
		})
		if err != nil {
			return 0, err
		}
		locked := time.Now()
		if err := f(); err != nil {
			conn.ExecContext(context.Background(), `ROLLBACK`)
			return 0, err
		}
		if _, err := conn.ExecContext(ctx, `COMMIT`); err != nil {
			conn.ExecContext(context.Background(), `ROLLBACK`)
			return 0, err
		}
		return time.Since(locked), nil
	}
	var firstTurn, firstAnnotation int64
	gone := false
	_, err := inTx(func() error {
		err := conn.QueryRowContext(ctx, `UPDATE import_batches SET failed = true WHERE id = ? RETURNING first_turn, first_annotation`, batch).
			Scan(&firstTurn, &firstAnnotation)
		if errors.Is(err, sql.ErrNoRows) {
			gone = true
			return nil
		}
		return err
	})
	if err != nil || gone {
		return err
	}
	// A claimed row goes to the oldest open claimant; that claimant's fence is at or below the
	// row's id since it claimed it.
	reassign := func(table, kind string) string {
		claimants := `FROM import_claims c JOIN import_batches b ON b.id = c.batch AND NOT b.failed WHERE c.kind = '` + kind + `'`
		return `UPDATE ` + table + ` SET import_batch = (SELECT min(c.batch) ` + claimants + ` AND c.row_id = ` + table + `.id)
			WHERE import_batch = ? AND id IN (SELECT c.row_id ` + claimants + `)`
	}
	// Each step's query ends in LIMIT (its chunk's row count) where it deletes many rows.
	steps := []struct {
		query   string
		args    []any
		chunked bool
	}{
		{reassign("turns", claimTurn), []any{batch}, false},
		{reassign("annotations", claimAnnotation), []any{batch}, false},
		// annotation_values and changes go with their annotations (ON DELETE CASCADE). The id
		// bound only lets SQLite search the rowid: every row the batch owns is above its fence.
		{`DELETE FROM annotations WHERE id IN (SELECT id FROM annotations WHERE id >= ? AND import_batch = ? LIMIT `, []any{firstAnnotation, batch}, true},
		{`DELETE FROM judge_scores WHERE (judge_id, turn_id, field) IN (SELECT judge_id, turn_id, field FROM judge_scores
			WHERE import_batch = ? LIMIT `, []any{batch}, true},
		// A turn's cascades (judge scores and rationales, samples, assignments, labels) use the
		// turn_id indexes of migration 0011.
		{`DELETE FROM turns WHERE id IN (SELECT id FROM turns WHERE id >= ? AND import_batch = ? LIMIT `, []any{firstTurn, batch}, true},
		{`DELETE FROM episodes WHERE id IN (SELECT id FROM episodes WHERE import_batch = ?
			AND NOT EXISTS (SELECT 1 FROM turns t WHERE t.episode_id = episodes.id) LIMIT `, []any{batch}, true},
		{`DELETE FROM import_claims WHERE (kind, row_id, batch) IN (SELECT kind, row_id, batch FROM import_claims
			WHERE batch = ? LIMIT `, []any{batch}, true},
		{`DELETE FROM import_batches WHERE id = ?`, []any{batch}, false},
	}
	rows := dropChunkStart
	for _, st := range steps {
		for {
			q := st.query
			if st.chunked {
				q += strconv.Itoa(rows) + `)`
			}
			var n int64
			held, err := inTx(func() error {
				res, err := conn.ExecContext(ctx, q, st.args...)
				if err != nil {
					return err
				}
				n, _ = res.RowsAffected()
				return nil
			})
			if err != nil {
				return err
			}
			if !st.chunked || n < int64(rows) {
				break
			}
			rows = nextDropChunk(rows, held, s.dropChunkTime())
			if !s.d.pg {
				// As between an import's chunks (maybeCommit): the deletions' WAL pages go to
				// disk outside the lock, and writers waiting for the lock get in.
				s.syncWAL()
				if err := yieldWriters(ctx, conn); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// nextDropChunk sizes the next chunk of a removal from how long the last one (rows rows)
// held the lock: in proportion to the target, growing at most fourfold at a time.
func nextDropChunk(rows int, held, target time.Duration) int {
	next := rows * 4
	if held > 0 {
		next = min(next, int(float64(rows)*float64(target)/float64(held)))
	}
	return max(1, min(next, dropChunkMax))
}

// abandonedAfter: a batch on another machine whose import has not committed a chunk for this
// long is taken for abandoned (a batch of this machine is, as soon as its process is gone).
const abandonedAfter = time.Hour

// dropAbandonedBatches removes the batches of imports that died (kill -9, power cut) before
// they completed or cleaned up, and the rest of those whose cleanup ran out of time.
func (s *Store) dropAbandonedBatches(ctx context.Context) error {
	host, _ := os.Hostname()
	rows, err := s.db.QueryContext(ctx, `SELECT id, host, pid, heartbeat, failed FROM import_batches`)
	if err != nil {
		return err
	}
	type open struct {
		id, pid         int64
		host, heartbeat string
		failed          bool
	}
	var dead []open
	for rows.Next() {
		var b open
		if err := rows.Scan(&b.id, &b.host, &b.pid, &b.heartbeat, &b.failed); err != nil {
			rows.Close()
			return err
		}
		gone := s.Now().Sub(parseTime(b.heartbeat)) > abandonedAfter
		if b.host == host {
			gone = gone || !processAlive(int(b.pid))
		}
		// A failed batch is nobody's work any more: its import gave up removing it
		// (rollbackBudget) or died removing it.
		gone = gone || b.failed
		if gone {
			dead = append(dead, b)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	if len(dead) == 0 {
		return nil
	}
	conn, err := s.wdb.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	for _, b := range dead {
		if err := s.dropBatch(ctx, conn, b.id); err != nil {
			return fmt.Errorf("remove abandoned import %d: %w", b.id, err)
		}
	}
	return nil
}

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
		t := &ts[i]
		epID := im.chunkEpisodes[t.EpisodeID]
		images, err := json.Marshal(nonNil(t.Images))
		if err != nil {
			return ids, false, err
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
	images, err := json.Marshal(nonNil(t.Images))
	if err != nil {
		return 0, 0, err
	}
	var meta any
	if t.Meta != nil {
		meta = string(t.Meta)
	}
	hash := t.ContentHash()
	var newID int64
	err = im.s.savepoint(im.ctx, im.conn, func() error {
		err := im.insertTurn.QueryRowContext(im.ctx, t.SampleID, epID, t.Turn, t.ActionType, t.TaskType,
			t.UserMessage, t.VLMResponse, t.ExpectedAnswer, string(images), t.Model, meta, hash).Scan(&newID)
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
		if o.Images {
			images = []byte(storedImages)
		}
		if o.Meta && storedMeta.Valid {
			meta = storedMeta.String
		}
		t, hash = full, full.Hash()
	}
	if bytes.Equal(stored, hash) {
		return id, dataset.Unchanged, nil
	}
	if !im.opts.Replace {
		return 0, 0, fmt.Errorf("%w: sample %s is already imported with different content (use --replace to overwrite it)", ErrConflict, t.SampleID)
	}
	// Staged: the stored turn changes only when the whole file is in (Commit).
	if _, err := im.stageTurn.ExecContext(im.ctx, epID, t.Turn, t.ActionType, t.TaskType, t.UserMessage,
		t.VLMResponse, t.ExpectedAnswer, string(images), t.Model, meta, hash, id); err != nil {
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

func (im *Importer) annotatorID(name string) (int64, error) {
	if id, ok := im.annotatorIDs[name]; ok {
		return id, nil
	}
	id, err := ensureAnnotator(im.ctx, im.conn, name)
	if err != nil {
		return 0, err
	}
	im.annotatorIDs[name] = id
	return id, nil
}

// PutLabel stores an annotator's label for a turn put earlier in this import. The label must
// already be valid for the rubric; an identical stored label is left alone, a different one is
// an ErrConflict unless the import replaces.
func (im *Importer) PutLabel(turnID int64, l *dataset.Label) (dataset.Outcome, error) {
	if err := im.ensureTx(); err != nil {
		return 0, err
	}
	o, err := im.putLabel(turnID, l)
	if err != nil {
		return o, err
	}
	return o, im.maybeCommit()
}

// stagedLabel is a label to insert: at once when it is new, by Commit when it replaces one.
type stagedLabel struct {
	replaces, turnID, annotatorID int64
	l                             *dataset.Label
}

func (im *Importer) putLabel(turnID int64, l *dataset.Label) (dataset.Outcome, error) {
	aid, err := im.annotatorID(l.Annotator)
	if err != nil {
		return 0, err
	}
	ctx, conn := im.ctx, im.conn
	var existing annotationRow
	var batch sql.NullInt64
	err = conn.QueryRowContext(ctx, `SELECT id, status, flagged, flag_reason, rubric_version, active_ms,
		COALESCE(annotated_at, updated_at), stale, import_batch FROM annotations WHERE annotator_id = ? AND turn_id = ?`, aid, turnID).
		Scan(&existing.id, &existing.status, &existing.flagged, &existing.flagReason, &existing.rubricVersion,
			&existing.activeMS, &existing.at, &existing.stale, &batch)
	switch {
	case err == sql.ErrNoRows:
	case err != nil:
		return 0, err
	default:
		vals, err := loadValues(ctx, conn, existing.id)
		if err != nil {
			return 0, err
		}
		if existing.sameAs(l, vals) {
			return dataset.Unchanged, im.rely(claimAnnotation, existing.id, batch)
		}
		if !im.opts.Replace {
			return 0, fmt.Errorf("%w: %s already has a different label for this sample (use --replace to overwrite it)", ErrConflict, l.Annotator)
		}
		if !batch.Valid || batch.Int64 != im.batch {
			// A visible label changes only when the whole file is in (Commit).
			im.replacedLabels = append(im.replacedLabels, stagedLabel{existing.id, turnID, aid, l})
			return dataset.Replaced, nil
		}
		if _, err := conn.ExecContext(ctx, `DELETE FROM annotations WHERE id = ?`, existing.id); err != nil {
			return 0, err
		}
	}
	if err := im.insertLabel(&stagedLabel{0, turnID, aid, l}); err != nil {
		return 0, err
	}
	if existing.id != 0 {
		return dataset.Replaced, nil
	}
	return dataset.Inserted, nil
}

// insertLabel writes a label, in this import's batch; a replacement first deletes the label
// it replaces.
func (im *Importer) insertLabel(sl *stagedLabel) error {
	ctx, conn, l := im.ctx, im.conn, sl.l
	if sl.replaces != 0 {
		if _, err := conn.ExecContext(ctx, `DELETE FROM annotations WHERE id = ?`, sl.replaces); err != nil {
			return fmt.Errorf("replace label: %w", err)
		}
	}
	at := formatTime(l.AnnotatedAt)
	var annotatedAt any
	if l.Status == dataset.StatusDone {
		annotatedAt = at
	}
	var id int64
	err := conn.QueryRowContext(ctx, `INSERT INTO annotations (turn_id, annotator_id, status, flagged, flag_reason,
		rubric_version, active_ms, created_at, updated_at, annotated_at, stale, import_batch) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		sl.turnID, sl.annotatorID, l.Status, l.Flagged, l.FlagReason, l.RubricVersion, secondsToMS(l.ActiveSeconds), at, at, annotatedAt, l.Stale, im.batch).Scan(&id)
	if err != nil {
		return fmt.Errorf("store label: %w", domainError(err))
	}
	if err := im.lowerFence(claimAnnotation, id); err != nil {
		return fmt.Errorf("store label: %w", err)
	}
	for _, f := range slices.Sorted(maps.Keys(l.Values)) {
		if _, err := conn.ExecContext(ctx, `INSERT INTO annotation_values (annotation_id, field, value) VALUES (?, ?, ?)`,
			id, f, l.Values[f]); err != nil {
			return fmt.Errorf("store label: %w", err)
		}
	}
	return nil
}

type annotationRow struct {
	id                            int64
	status                        dataset.Status
	flagReason, rubricVersion, at string
	flagged, stale                bool
	activeMS                      int64
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

func isConflict(err error) bool { return errors.Is(err, ErrConflict) }

// processAlive tells whether a process of this machine still runs.
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
