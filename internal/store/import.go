package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

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
	prep(&im.insertTurn, `INSERT INTO turns (`+strings.Join(importTurnColumns, ", ")+`, import_batch)
		VALUES (`+placeholders(len(importTurnColumns))+`, `+b+`) ON CONFLICT (sample_id) DO NOTHING RETURNING id`)
	prep(&im.findTurn, `SELECT id, content_hash, images, model, meta, import_batch FROM turns WHERE sample_id = ?`)
	// A staged turn keeps its id; its sample id does not change.
	prep(&im.stageTurn, `INSERT INTO `+d.tempTable("import_replaced_turns")+` (`+strings.Join(importTurnColumns[1:], ", ")+`, id)
		VALUES (`+placeholders(len(importTurnColumns))+`) ON CONFLICT (id) DO UPDATE SET episode_id = excluded.episode_id,
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
		prep(&im.batchTurns, multiRowInsert(`INSERT INTO turns (`+strings.Join(importTurnColumns, ", ")+`, import_batch) VALUES `,
			`(`+placeholders(len(importTurnColumns))+`, `+b+`)`, batchRows))
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

type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

func isConflict(err error) bool { return errors.Is(err, ErrConflict) }

// multiRowInsert is an INSERT of n rows, each of the form row, after head ("INSERT INTO t
// (a, b) VALUES "): the per-statement cost of database/sql and cgo is paid once for the n.
func multiRowInsert(head, row string, n int) string {
	return head + strings.TrimSuffix(strings.Repeat(row+", ", n), ", ")
}
