package store_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/m3bench/m3eval/internal/dataset"
	"github.com/m3bench/m3eval/internal/session"
	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/store/storetest"
)

// TestShortWritersWaitTheirTurn: adjudication saves (adjudicate --take) in another process's
// store while an import writes chunk after chunk: each waits for the lock and saves; none
// fails with "database is locked" (issue 24 item 4: 50 of 64 failed, their write ran in a
// deferred transaction on the read pool, which cannot wait once its snapshot is stale).
func TestShortWritersWaitTheirTurn(t *testing.T) {
	ctx := context.Background()
	path := storetest.Path(t)
	s := storetest.Open(t, path, store.Options{})
	seed(t, s, []string{"initial", "mislead"})
	id := turnIDs(t, s, "epz_turn_2")[0]
	im, err := s.BeginImport(ctx, store.ImportOptions{Source: "big.jsonl"})
	if err != nil {
		t.Fatal(err)
	}
	defer im.Rollback()
	adj := storetest.Open(t, path, store.Options{Durable: true})
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the import: chunks of new turns until the saves are done
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			default:
			}
			var ts []dataset.Turn
			for j := range 128 {
				ts = append(ts, turn(fmt.Sprintf("big%05d", i), j+1, "follow_up"))
			}
			if _, _, err := im.PutTurns(ts); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	failed := 0
	for k := 0; k < 64; k++ {
		v := fmt.Sprint(1 + k%5)
		if err := adj.SetFinal(ctx, session.FinalEdit{TurnID: id, Field: "correctness", Value: &v, Source: "bob", Adjudicator: "judy", RubricVersion: "v"}); err != nil {
			failed++
			t.Logf("save %d: %v", k, err)
		}
	}
	close(done)
	wg.Wait()
	if failed > 0 {
		t.Fatalf("%d of 64 adjudication saves failed during an import", failed)
	}
}

// TestJudgeRunWritesInChunks: a judge run that goes on and on (here: re-scoring with
// --replace) holds the write lock a chunk at a time, so a save with a short lock wait gets
// in; its changes stay hidden until it completes, and a failed run changes nothing.
func TestJudgeRunWritesInChunks(t *testing.T) {
	ctx := context.Background()
	path := storetest.Path(t)
	s := storetest.Open(t, path, store.Options{})
	seed(t, s, []string{"initial", "mislead", "follow_up"})
	ids := turnIDs(t, s, "epz_turn_1", "epz_turn_2", "epz_turn_3")
	first, err := s.BeginJudgeRun(ctx, "rules", "r1", []byte("rules 1"), false)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if _, err := first.PutTurnScores(id, []string{"correctness"}, []string{"1"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := first.Commit(); err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"r1": 3}
	for _, version := range []string{"r2", "r3"} {
		commit := version == "r2"
		run, err := s.BeginJudgeRun(ctx, "rules", version, []byte("rules "+version), true)
		if err != nil {
			t.Fatal(err)
		}
		saver := storetest.Open(t, path, store.Options{LockWait: 500 * time.Millisecond})
		done := make(chan struct{})
		// allWritten closes once the run has scored all three turns (or given up): on a busy
		// machine the saves below can all finish before the writer is first scheduled, and a
		// run stopped then would have scored fewer turns than the test expects.
		allWritten := make(chan struct{})
		var once sync.Once
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer once.Do(func() { close(allWritten) })
			for i := 0; ; i++ {
				select {
				case <-done:
					return
				default:
				}
				if _, err := run.PutTurnScores(ids[i%3], []string{"correctness"}, []string{fmt.Sprint(1 + i%5)}); err != nil {
					t.Error(err)
					run.Rollback()
					return
				}
				if i == len(ids)-1 {
					once.Do(func() { close(allWritten) })
				}
			}
		}()
		failed := 0
		for k := 0; k < 20; k++ {
			v := fmt.Sprint(1 + k%5)
			if err := saver.SetFinal(ctx, session.FinalEdit{TurnID: ids[0], Field: "correctness", Value: &v, Source: "bob", Adjudicator: "judy", RubricVersion: "v"}); err != nil {
				failed++
				t.Logf("save %d: %v", k, err)
			}
			if got, err := saver.JudgeRuleVersions(ctx, "rules"); err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("during run %s: %v %v, want %v (nothing of a run under way)", version, got, err, want)
			}
		}
		<-allWritten
		close(done)
		wg.Wait()
		if failed > 0 {
			t.Fatalf("%d of 20 saves failed while a judge ran", failed)
		}
		if commit {
			if err := run.Commit(); err != nil {
				t.Fatal(err)
			}
			want = map[string]int{"r2": 3}
		} else {
			run.Rollback()
		}
		if got, err := s.JudgeRuleVersions(ctx, "rules"); err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("after run %s: %v %v, want %v", version, got, err, want)
		}
	}
	if n := rawCount(t, path, "judge_scores"); n != 3 {
		t.Fatalf("%d scores in the file, want 3", n)
	}
}

// TestShortWriterGoesBeforeChunkedWriters: six bulk writers (imports, as judge and
// import-scores are) and one save all wait for a lock another connection holds. When it is
// let go, the save goes first, every time, however many bulk writers were already polling
// (issue 24 item 4: with five judges beside an import, a save lost the race to one chunk after
// another: p99 key-to-saved 541 ms, and a save past its 1 s wait). Only the order is checked,
// never a time: the bulk writers' deference is made long enough not to run out.
func TestShortWriterGoesBeforeChunkedWriters(t *testing.T) {
	storetest.SQLiteOnly(t, "the waiting writers' priority makes up for SQLite's lock, which has no queue; PostgreSQL queues the advisory lock's waiters in order")
	ctx := context.Background()
	for round := 0; round < 5; round++ {
		path := storetest.Path(t)
		s := storetest.Open(t, path, store.Options{})
		seed(t, s, []string{"initial", "mislead"})
		id := turnIDs(t, s, "epz_turn_2")[0]
		var ims []*store.Importer
		for b := 0; b < 6; b++ {
			bs := storetest.Open(t, path, store.Options{})
			store.SetPriorityMax(bs, time.Minute)
			im, err := bs.BeginImport(ctx, store.ImportOptions{Source: fmt.Sprintf("big%d.jsonl", b)})
			if err != nil {
				t.Fatal(err)
			}
			defer im.Rollback()
			ims = append(ims, im)
		}
		saver := storetest.Open(t, path, store.Options{Durable: true})

		// The holder takes the lock and, in the same transaction, sets triggers that log who
		// writes next.
		raw, err := sql.Open("sqlite3", path)
		if err != nil {
			t.Fatal(err)
		}
		defer raw.Close()
		hold, err := raw.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer hold.Close()
		if _, err := hold.ExecContext(ctx, `BEGIN IMMEDIATE;
			CREATE TABLE order_log (seq INTEGER PRIMARY KEY, what TEXT);
			CREATE TRIGGER log_bulk AFTER INSERT ON turns BEGIN INSERT INTO order_log (what) VALUES ('bulk'); END;
			CREATE TRIGGER log_short AFTER INSERT ON final_changes BEGIN INSERT INTO order_log (what) VALUES ('short'); END`); err != nil {
			t.Fatal(err)
		}

		done := make(chan struct{})
		var wg sync.WaitGroup
		for b, im := range ims {
			wg.Add(1)
			go func() { // chunks of new turns until the save is done
				defer wg.Done()
				for i := 0; ; i++ {
					select {
					case <-done:
						if err := im.Flush(); err != nil { // let go of the lock
							t.Error(err)
						}
						return
					default:
					}
					var ts []dataset.Turn
					for j := range 64 {
						ts = append(ts, turn(fmt.Sprintf("b%d_%05d", b, i), j+1, "follow_up"))
					}
					if _, _, err := im.PutTurns(ts); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
		saved := make(chan error, 1)
		go func() {
			v := "3"
			saved <- saver.SetFinal(ctx, session.FinalEdit{TurnID: id, Field: "correctness", Value: &v, Source: "bob", Adjudicator: "judy", RubricVersion: "v"})
		}()
		// Let go once the save waits (three looks in a row: a bulk writer's probe can look
		// like a waiter for an instant).
		deadline := time.Now().Add(60 * time.Second)
		for seen := 0; seen < 3; {
			if time.Now().After(deadline) {
				t.Fatal("the save never waited for the lock")
			}
			if store.WritersWaiting(s) {
				seen++
			} else {
				seen = 0
			}
			time.Sleep(2 * time.Millisecond)
		}
		if _, err := hold.ExecContext(ctx, `COMMIT`); err != nil {
			t.Fatal(err)
		}
		if err := <-saved; err != nil {
			t.Fatalf("round %d: save: %v", round, err)
		}
		close(done)
		wg.Wait()
		var first string
		if err := hold.QueryRowContext(ctx, `SELECT what FROM order_log ORDER BY seq LIMIT 1`).Scan(&first); err != nil {
			t.Fatal(err)
		}
		if first != "short" {
			var bulk int
			hold.QueryRowContext(ctx, `SELECT count(*) FROM order_log WHERE seq < (SELECT seq FROM order_log WHERE what = 'short')`).Scan(&bulk)
			t.Fatalf("round %d: %d turns of bulk writers' chunks were written before the waiting save", round, bulk)
		}
	}
}

// TestSaveDoesNotCheckpoint: an annotator's save does not copy the WAL into the database in
// its own commit. SQLite's default checkpoints in whichever commit finds the WAL past 1,000
// pages; beside judges and an import that was often a save, which then waited for hundreds
// of megabytes to be copied and synced (issue 24 item 4). The WAL here holds 2,000 pages
// another connection wrote without checkpointing; the database file must not grow by the save.
func TestSaveDoesNotCheckpoint(t *testing.T) {
	storetest.SQLiteOnly(t, "about SQLite's WAL checkpoints")
	ctx := context.Background()
	path := storetest.Path(t)
	s := storetest.Open(t, path, store.Options{})
	seed(t, s, []string{"initial", "mislead"})
	id := turnIDs(t, s, "epz_turn_2")[0]
	saver := storetest.Open(t, path, store.Options{Durable: true})
	raw, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	raw.SetMaxOpenConns(1)
	if _, err := raw.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE); PRAGMA wal_autocheckpoint = 0;
		CREATE TABLE bulk (b BLOB); INSERT INTO bulk SELECT randomblob(16000) FROM generate_series(1, 2000)`); err != nil {
		// generate_series is not built in everywhere: a recursive CTE does the same.
		if _, err := raw.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS bulk (b BLOB);
			WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000)
			INSERT INTO bulk SELECT randomblob(16000) FROM n`); err != nil {
			t.Fatal(err)
		}
	}
	size := func() int64 {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	before := size()
	v := "3"
	if err := saver.SetFinal(ctx, session.FinalEdit{TurnID: id, Field: "correctness", Value: &v, Source: "bob", Adjudicator: "judy", RubricVersion: "v"}); err != nil {
		t.Fatal(err)
	}
	if after := size(); after != before {
		t.Fatalf("the save checkpointed: the database file grew from %d to %d bytes", before, after)
	}
	// The pages are not lost for it: a checkpoint of a bulk writer (here: by hand) copies them.
	if _, err := raw.ExecContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`); err != nil {
		t.Fatal(err)
	}
	if after := size(); after <= before {
		t.Fatalf("a checkpoint copied nothing (%d bytes before, %d after)", before, after)
	}
}

// TestChunkEndsForAWaitingSave: a bulk writer ends its chunk at the next record once a save
// waits, not only after importChunkTime: on a loaded machine that much work took several
// hundred milliseconds of wall time while the lock was held (issue 24 item 4). Here a chunk
// would last a minute, longer than the save's lock wait; the save must get in.
func TestChunkEndsForAWaitingSave(t *testing.T) {
	ctx := context.Background()
	path := storetest.Path(t)
	s := storetest.Open(t, path, store.Options{})
	seed(t, s, []string{"initial", "mislead"})
	id := turnIDs(t, s, "epz_turn_2")[0]
	bs := storetest.Open(t, path, store.Options{})
	store.SetChunkTime(bs, time.Minute)
	im, err := bs.BeginImport(ctx, store.ImportOptions{Source: "big.jsonl"})
	if err != nil {
		t.Fatal(err)
	}
	defer im.Rollback()
	saver := storetest.Open(t, path, store.Options{Durable: true, LockWait: 20 * time.Second})
	saved := make(chan error, 1)
	started := false
	for i := 0; ; i++ {
		if _, _, err := im.PutTurns([]dataset.Turn{turn(fmt.Sprintf("big%05d", i), 1, "initial")}); err != nil {
			t.Fatal(err)
		}
		if !started { // the chunk is open: the save has to wait
			started = true
			go func() {
				v := "3"
				saved <- saver.SetFinal(ctx, session.FinalEdit{TurnID: id, Field: "correctness", Value: &v, Source: "bob", Adjudicator: "judy", RubricVersion: "v"})
			}()
		}
		select {
		case err := <-saved:
			if err != nil {
				t.Fatalf("the save waited for the whole chunk: %v", err)
			}
			return
		default:
		}
	}
}
