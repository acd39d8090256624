package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"
)

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

// processAlive tells whether a process of this machine still runs.
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
