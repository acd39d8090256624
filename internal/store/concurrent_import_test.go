package store_test

import (
	"context"
	"database/sql"
	"fmt"
	"testing"

	"github.com/m3bench/m3eval/internal/dataset"
	"github.com/m3bench/m3eval/internal/rubric"
	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/store/storetest"
)

// overlapTurns are n turns of episodes "ov000".., five turns each.
func overlapTurns(n int) []dataset.Turn {
	ts := make([]dataset.Turn, n)
	for i := range ts {
		ts[i] = turn(fmt.Sprintf("ov%03d", i/5), i%5+1, "follow_up")
	}
	return ts
}

// putFlushed puts turns and commits the chunk, as an import does between chunks.
func putFlushed(t *testing.T, im *store.Importer, ts []dataset.Turn) ([]int64, []store.Outcome) {
	t.Helper()
	ids, outs, err := im.PutTurns(ts)
	if err != nil {
		t.Fatal(err)
	}
	if err := im.Flush(); err != nil {
		t.Fatal(err)
	}
	return ids, outs
}

func label(who string) *dataset.Label {
	return &dataset.Label{Annotator: who, Values: rubric.Values{"correctness": "4"}, Status: dataset.StatusDone, RubricVersion: "v1"}
}

// visibleLabels counts the done labels of an annotator that status shows.
func visibleLabels(t *testing.T, s *store.Store, who string) int {
	t.Helper()
	st, err := s.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range st.Annotators {
		if a.Name == who {
			return a.Done
		}
	}
	return 0
}

func integrityOK(t *testing.T, path string) {
	t.Helper()
	if storetest.Postgres() {
		return // PostgreSQL checks every foreign key as it writes, and has no integrity_check
	}
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro&_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var res string
	if err := db.QueryRow(`PRAGMA integrity_check`).Scan(&res); err != nil || res != "ok" {
		t.Fatalf("integrity_check: %q %v", res, err)
	}
	var fk int
	if err := db.QueryRow(`SELECT count(*) FROM pragma_foreign_key_check`).Scan(&fk); err != nil || fk != 0 {
		t.Fatalf("foreign_key_check: %d rows %v", fk, err)
	}
}

// TestImportKeepsLabelsOnTurnsOfAFailedImport is issue 24's first repro: import B writes new
// turns and has not completed; import A, the same turns with alice's labels, finds them
// stored and attaches its labels. B fails. Whichever of A's Commit and B's failure comes first,
// everything A reported stored is there.
func TestImportKeepsLabelsOnTurnsOfAFailedImport(t *testing.T) {
	for _, bFailsFirst := range []bool{false, true} {
		t.Run(fmt.Sprintf("B fails first %v", bFailsFirst), func(t *testing.T) {
			ctx := context.Background()
			path := storetest.Path(t)
			s := storetest.Open(t, path, store.Options{})
			ts := overlapTurns(300)
			b, err := s.BeginImport(ctx, store.ImportOptions{Source: "b.jsonl"})
			if err != nil {
				t.Fatal(err)
			}
			defer b.Rollback()
			putFlushed(t, b, ts)
			a, err := s.BeginImport(ctx, store.ImportOptions{Source: "a.jsonl"})
			if err != nil {
				t.Fatal(err)
			}
			defer a.Rollback()
			ids, _ := putFlushed(t, a, ts)
			stored := 0
			for _, id := range ids {
				if _, err := a.PutLabel(id, label("alice")); err != nil {
					t.Fatal(err)
				}
				stored++
			}
			if err := a.Flush(); err != nil {
				t.Fatal(err)
			}
			if bFailsFirst {
				b.Rollback()
			}
			if err := a.Commit(); err != nil {
				t.Fatal(err)
			}
			b.Rollback()
			if got := visibleLabels(t, s, "alice"); got != stored {
				t.Fatalf("alice has %d labels visible, A reported %d stored", got, stored)
			}
			if st, err := s.Status(ctx); err != nil || st.Turns != len(ts) {
				t.Fatalf("status: %+v %v, want %d turns", st, err, len(ts))
			}
			integrityOK(t, path)
		})
	}
}

// TestImportOfSameTurnsBothFail: when both imports of the same turns fail, none of them stays.
func TestImportOfSameTurnsBothFail(t *testing.T) {
	ctx := context.Background()
	path := storetest.Path(t)
	s := storetest.Open(t, path, store.Options{})
	seed(t, s, []string{"initial"})
	ts := overlapTurns(200)
	b, err := s.BeginImport(ctx, store.ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	putFlushed(t, b, ts)
	a, err := s.BeginImport(ctx, store.ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ids, _ := putFlushed(t, a, ts)
	if _, err := a.PutLabel(ids[0], label("alice")); err != nil {
		t.Fatal(err)
	}
	if err := a.Flush(); err != nil {
		t.Fatal(err)
	}
	b.Rollback()
	a.Rollback()
	for _, table := range []string{"turns", "annotations", "import_batches", "import_claims"} {
		want := map[string]int{"turns": 1}[table]
		if n := rawCount(t, path, table); n != want {
			t.Fatalf("%d rows left in %s, want %d", n, table, want)
		}
	}
	integrityOK(t, path)
}

// TestImportRowsUnderReusedIDsStayHidden is issue 24's second repro: a failed import's turns
// are deleted and their ids reused by an import that started later, below the id it started
// at. Its rows must stay hidden until it completes, and go when it fails.
func TestImportRowsUnderReusedIDsStayHidden(t *testing.T) {
	storetest.SQLiteOnly(t, "PostgreSQL's identities never reuse an id, so no row can hide under a fence that way")
	ctx := context.Background()
	path := storetest.Path(t)
	s := storetest.Open(t, path, store.Options{})
	seed(t, s, []string{"initial", "follow_up"})
	y, err := s.BeginImport(ctx, store.ImportOptions{Source: "y.jsonl"})
	if err != nil {
		t.Fatal(err)
	}
	putFlushed(t, y, overlapTurns(300))
	x, err := s.BeginImport(ctx, store.ImportOptions{Source: "x.jsonl"})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Rollback()
	y.Rollback()
	var ts []dataset.Turn
	for i := range 256 {
		ts = append(ts, turn(fmt.Sprintf("re%03d", i/4), i%4+1, "follow_up"))
	}
	ids, _ := putFlushed(t, x, ts)
	if ids[0] > 3 {
		t.Fatalf("the test needs reused ids: the first new turn got id %d", ids[0])
	}
	if _, err := x.PutLabel(ids[0], label("bob")); err != nil {
		t.Fatal(err)
	}
	if err := x.Flush(); err != nil {
		t.Fatal(err)
	}
	other := storetest.Open(t, path, store.Options{})
	if st, err := other.Status(ctx); err != nil || st.Turns != 2 || st.Episodes != 1 || len(st.Annotators) != 0 {
		t.Fatalf("status during the import: %+v %v, want the 2 turns of before", st, err)
	}
	x.Rollback()
	if st, err := other.Status(ctx); err != nil || st.Turns != 2 {
		t.Fatalf("status after the import failed: %+v %v", st, err)
	}
	if n := rawCount(t, path, "turns"); n != 2 {
		t.Fatalf("%d turns left in the file, want 2", n)
	}
	integrityOK(t, path)
}
