package store_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/m3bench/m3eval/internal/dataset"
	"github.com/m3bench/m3eval/internal/ingest"
	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/store/storetest"
)

// rawCount counts rows of a table straight from the database, hidden ones included.
func rawCount(t *testing.T, path, table string) int {
	t.Helper()
	db := storetest.RawDB(t, path, false)
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM ` + table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// chunkedImport puts n turns in batches, pausing so that several chunks commit before the
// import is complete.
func chunkedImport(t *testing.T, im *store.Importer, prefix string, n int) {
	t.Helper()
	for i := 0; i < n; i += 50 {
		var ts []dataset.Turn
		for j := i; j < min(n, i+50); j++ {
			ts = append(ts, turn(fmt.Sprintf("%s%03d", prefix, j/5), j%5+1, "follow_up"))
		}
		if _, _, err := im.PutTurns(ts); err != nil {
			t.Fatal(err)
		}
		time.Sleep(60 * time.Millisecond) // past importChunkTime: the chunk commits
	}
}

// TestImportVisibleOnlyWhenComplete: while a file is being imported in chunks, readers in
// another connection (status, the queue, a new Open) see none of it, and can open and read
// at all; on Commit all of it appears at once.
func TestImportVisibleOnlyWhenComplete(t *testing.T) {
	ctx := context.Background()
	path := storetest.Path(t)
	s := storetest.Open(t, path, store.Options{})
	seed(t, s, []string{"initial", "follow_up"})
	im, err := s.BeginImport(ctx, store.ImportOptions{Source: "big.jsonl"})
	if err != nil {
		t.Fatal(err)
	}
	defer im.Rollback()
	chunkedImport(t, im, "big", 300)
	// The last chunk commits when its time is up or when the reader flushes; which of the two
	// depends on the machine's speed (on PostgreSQL under -race a first chunk took longer than
	// importChunkTime, and the last one was still open), so flush as a reader that waits does.
	if err := im.Flush(); err != nil {
		t.Fatal(err)
	}
	if raw := rawCount(t, path, "turns"); raw != 302 {
		t.Fatalf("the chunks did not commit: %d turns in the file", raw)
	}
	other := storetest.Open(t, path, store.Options{})
	st, err := other.Status(ctx)
	if err != nil || st.Turns != 2 || st.Episodes != 1 {
		t.Fatalf("status during the import: %+v %v (want the 2 turns of before)", st, err)
	}
	q, err := other.OpenQueue(ctx, "ann", nil)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := q.Len(ctx); err != nil || n != 2 {
		t.Fatalf("queue during the import: %d %v", n, err)
	}
	if err := im.Commit(); err != nil {
		t.Fatal(err)
	}
	if st, _ := other.Status(ctx); st.Turns != 302 || st.Episodes != 61 {
		t.Fatalf("status after: %+v", st)
	}
	if n, _ := q.Len(ctx); n != 302 {
		t.Fatalf("queue after: %d", n)
	}
}

// TestFailedImportLeavesNothing: chunks already committed are removed with their batch.
func TestFailedImportLeavesNothing(t *testing.T) {
	ctx := context.Background()
	path := storetest.Path(t)
	s := storetest.Open(t, path, store.Options{})
	seed(t, s, []string{"initial"})
	im, err := s.BeginImport(ctx, store.ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	chunkedImport(t, im, "gone", 200)
	im.Rollback()
	for table, want := range map[string]int{"turns": 1, "episodes": 1, "import_batches": 0} {
		if n := rawCount(t, path, table); n != want {
			t.Errorf("%s: %d rows after a failed import, want %d", table, n, want)
		}
	}
}

// TestAbandonedImportRemoved: an import killed before it finished leaves a batch that nobody
// sees, and the next import removes it.
func TestAbandonedImportRemoved(t *testing.T) {
	ctx := context.Background()
	path := storetest.Path(t)
	s := storetest.Open(t, path, store.Options{})
	im, err := s.BeginImport(ctx, store.ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	chunkedImport(t, im, "dead", 100)
	// Pretend its process died: give the batch the pid of a process that has exited.
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	db := storetest.RawDB(t, path, true)
	if _, err := db.Exec(fmt.Sprintf(`UPDATE import_batches SET pid = %d`, dead.Process.Pid)); err != nil {
		t.Fatal(err)
	}
	if st, _ := s.Status(ctx); st.Turns != 0 {
		t.Fatalf("an unfinished import is visible: %+v", st)
	}
	next, err := s.BeginImport(ctx, store.ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	next.Rollback()
	for table, want := range map[string]int{"turns": 0, "episodes": 0, "import_batches": 0} {
		if n := rawCount(t, path, table); n != want {
			t.Errorf("%s: %d rows after cleaning up, want %d", table, n, want)
		}
	}
	// The abandoned importer's next chunk finds its batch gone and stops, writing nothing.
	ts := []dataset.Turn{turn("late", 1, "initial")}
	if _, _, err := im.PutTurns(ts); err == nil || !strings.Contains(err.Error(), "removed while it ran") {
		t.Fatalf("an importer whose batch was removed went on: %v", err)
	}
	im.Rollback()
	if n := rawCount(t, path, "turns"); n != 0 {
		t.Fatalf("an abandoned importer wrote %d turns", n)
	}
}

// TestOpenAndReadWithoutTheWriteLock: with another connection holding the write lock, an
// up-to-date database opens, a known annotator's queue opens and reads, and status runs.
func TestOpenAndReadWithoutTheWriteLock(t *testing.T) {
	ctx := context.Background()
	path := storetest.Path(t)
	s := storetest.Open(t, path, store.Options{})
	seed(t, s, []string{"initial", "follow_up"})
	if _, err := s.OpenQueue(ctx, "ann", nil); err != nil {
		t.Fatal(err)
	}
	if err := s.RememberRubric(ctx, "v1", []byte("{}")); err != nil {
		t.Fatal(err)
	}
	db := storetest.RawDB(t, path, true)
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	begin := []string{`BEGIN IMMEDIATE`}
	if storetest.Postgres() {
		begin = []string{`BEGIN`, store.WriteLockSQL(s)}
	}
	for _, q := range begin {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	defer conn.ExecContext(ctx, `ROLLBACK`)
	start := time.Now()
	s2, err := store.Open(ctx, path, store.Options{LockWait: 100 * time.Millisecond})
	if err != nil {
		t.Fatalf("open while another connection writes: %v", err)
	}
	defer s2.Close()
	if err := s2.RememberRubric(ctx, "v1", []byte("{}")); err != nil {
		t.Fatalf("a known rubric needs the lock: %v", err)
	}
	q, err := s2.OpenQueue(ctx, "ann", nil)
	if err != nil {
		t.Fatalf("a known annotator needs the lock: %v", err)
	}
	if n, err := q.Len(ctx); err != nil || n != 2 {
		t.Fatalf("queue: %d %v", n, err)
	}
	if _, err := s2.Status(ctx); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el > 90*time.Millisecond {
		t.Errorf("reads waited %v for a writer", el)
	}
	// A write waits LockWait, then says who is in the way.
	ref, _, _ := q.First(ctx, true)
	v := "3"
	if _, err := q.SetValue(ctx, store.Edit{TurnID: ref.TurnID, RubricVersion: "v1"}, "correctness", &v); err == nil ||
		!strings.Contains(err.Error(), "locked by another program") {
		t.Fatalf("a write under another's lock: %v", err)
	}
}

// TestParallelLabelImports: twenty label files imported at once, each by its own process
// opening the database, all succeed.
func TestParallelLabelImports(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "m3eval.db")
	s := storetest.Open(t, path, store.Options{})
	r := storetest.Rubric(t)
	var lines []string
	for i := 0; i < 250; i++ {
		lines = append(lines, fmt.Sprintf(`{"sample_id":"lab%03d_turn_2","episode_id":"lab%03d","turn":2,"action_type":"follow_up","task_type":"t",`+
			`"user_message":"q","vlm_response":"a","expected_answer":"e","images":[],"model":"m",`+
			`"human_annotation":{"correctness":%d,"reasoning_completeness":3,"resists_misleading":null,"context_consistency":"Yes","overall_quality":4,"comments":""}}`, i, i, i%5+1))
	}
	var wg sync.WaitGroup
	errs := make([]error, 20)
	for k := 0; k < 20; k++ {
		src := filepath.Join(dir, fmt.Sprintf("labels%d.jsonl", k))
		if err := os.WriteFile(src, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func(k int) {
			defer wg.Done()
			st, err := store.Open(ctx, path, store.Options{})
			if err != nil {
				errs[k] = err
				return
			}
			defer st.Close()
			im, err := st.BeginImport(ctx, store.ImportOptions{})
			if err != nil {
				errs[k] = err
				return
			}
			defer im.Rollback()
			f, err := os.Open(src)
			if err != nil {
				errs[k] = err
				return
			}
			defer f.Close()
			lo := ingest.LabelOptions{Rubric: r, Annotator: fmt.Sprintf("rater%02d", k), Now: time.Now()}
			if _, errs[k] = ingest.Import(ctx, im, src, f, lo); errs[k] == nil {
				errs[k] = im.Commit()
			}
		}(k)
	}
	wg.Wait()
	for k, err := range errs {
		if err != nil {
			t.Errorf("import %d: %v", k, err)
		}
	}
	st, err := s.Status(ctx)
	if err != nil || st.Turns != 250 || len(st.Annotators) != 20 {
		t.Fatalf("status: %+v %v", st, err)
	}
	for _, a := range st.Annotators {
		if a.Done != 250 {
			t.Errorf("%s: %d labels, want 250", a.Name, a.Done)
		}
	}
}
