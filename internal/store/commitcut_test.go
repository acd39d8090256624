package store_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/m3bench/m3eval/internal/dataset"
	"github.com/m3bench/m3eval/internal/session"
	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/store/storetest"
	"github.com/m3bench/m3eval/internal/testkit"
)

// labelState is what the database holds of one annotator's label, and how many undo steps.
type labelState struct {
	values  map[string]string
	status  dataset.Status
	flagged bool
	skipped bool
	steps   int
}

func readLabel(t *testing.T, path string, annotator string, turnID int64) labelState {
	t.Helper()
	db := storetest.RawDB(t, path, false)
	st := labelState{values: map[string]string{}}
	var id int64
	var skip *int64
	if err := db.QueryRow(`SELECT a.id, a.status, a.flagged, a.skip_seq FROM annotations a JOIN annotators p ON p.id = a.annotator_id
		WHERE p.name = $1 AND a.turn_id = $2`, annotator, turnID).Scan(&id, &st.status, &st.flagged, &skip); err != nil {
		t.Fatal(err)
	}
	st.skipped = skip != nil
	rows, err := db.Query(`SELECT field, value FROM annotation_values WHERE annotation_id = $1`, id)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var f, v string
		if err := rows.Scan(&f, &v); err != nil {
			t.Fatal(err)
		}
		st.values[f] = v
	}
	if err := db.QueryRow(`SELECT count(DISTINCT batch) FROM changes WHERE annotation_id = $1 AND NOT undone`, id).Scan(&st.steps); err != nil {
		t.Fatal(err)
	}
	return st
}

// TestRetriedWritesAfterLostCommit (#38 item 2): for each kind of write the annotator's screen
// makes (value, comment, submit, flag, undo, skip), the proxy cuts the connection right after
// the server's COMMIT; the write is retried as the screen retries it (the same session.Edit,
// key included) until it returns, and the database then holds exactly what the screen says:
// one write applied once, one undo undoing one step.
func TestRetriedWritesAfterLostCommit(t *testing.T) {
	dsn := storetest.RequirePostgres(t)
	path := storetest.PostgresPath(t, dsn)
	storetest.Demo(t, path).Close()
	cut, proxied := testkit.NewCommitCutter(t, path)
	ctx := context.Background()
	s := storetest.Open(t, proxied, store.Options{Durable: true, LockWait: 10 * time.Second})
	q, err := s.OpenQueue(ctx, "alice", nil)
	if err != nil {
		t.Fatal(err)
	}
	ref, _, err := q.First(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	key := 0
	edit := func() session.Edit {
		key++
		return session.Edit{TurnID: ref.TurnID, RubricVersion: "v", Active: time.Second, Key: "test-" + strconv.Itoa(key)}
	}
	// retry runs w with the COMMIT's reply cut once, then again until it returns, as the
	// screen's retries do.
	retry := func(what string, w func() error) {
		t.Helper()
		cut.Armed.Store(true)
		before := cut.Cuts.Load()
		err := w()
		if cut.Cuts.Load() != before+1 || err == nil {
			t.Fatalf("%s: the proxy did not cut its COMMIT (cuts %d, err %v)", what, cut.Cuts.Load()-before, err)
		}
		for i := 0; ; i++ {
			if err = w(); err == nil {
				return
			}
			if i == 20 || errors.Is(err, session.ErrRefused) {
				t.Fatalf("%s: retry: %v", what, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	set := func(field, v string) {
		e := edit()
		retry("set "+field, func() error { _, err := q.SetValue(ctx, e, field, &v); return err })
	}
	undo := func() []session.Undone {
		e := edit()
		var what []session.Undone
		retry("undo", func() error {
			var ok bool
			var err error
			_, what, ok, err = q.Undo(ctx, e)
			if err == nil && !ok {
				t.Fatal("undo: nothing to undo")
			}
			return err
		})
		return what
	}
	want := labelState{values: map[string]string{}, status: dataset.StatusDraft}
	check := func(step string) {
		t.Helper()
		got := readLabel(t, path, "alice", ref.TurnID)
		if !equalLabels(got, want) {
			t.Fatalf("after %s: the database holds %+v, the screen says %+v", step, got, want)
		}
	}

	set("correctness", "3")
	want.values["correctness"], want.steps = "3", 1
	check("value")
	set("correctness", "4")
	want.values["correctness"], want.steps = "4", 2
	check("second value")
	if what := undo(); len(what) != 1 || what[0].Field != "correctness" {
		t.Fatalf("undo said it undid %+v", what)
	}
	want.values["correctness"], want.steps = "3", 1
	check("undo")
	set("comments", "the dog is on the grass")
	want.values["comments"], want.steps = "the dog is on the grass", 2
	check("comment")
	e := edit()
	retry("submit", func() error { _, err := q.Submit(ctx, e); return err })
	want.status, want.steps = dataset.StatusDone, 3
	check("submit")
	e = edit()
	retry("flag", func() error { _, err := q.SetFlag(ctx, e, true, "odd image"); return err })
	want.flagged, want.steps = true, 4
	check("flag")
	if what := undo(); len(what) != 1 || what[0].Kind != session.ChangeFlag {
		t.Fatalf("undo said it undid %+v", what)
	}
	want.flagged, want.steps = false, 3
	check("undo of the flag")
	e = edit()
	retry("skip", func() error { _, err := q.Skip(ctx, e); return err })
	want.skipped = true
	check("skip")
	if last, err := lastInQueue(ctx, q); err != nil || last != ref.TurnID {
		t.Fatalf("the skipped item is not last in the queue (%d, %v)", last, err)
	}
	// A value set to what it is changes nothing and logs no change: its retry is known by
	// the annotation's last_op_key, as the skip's is.
	set("comments", "the dog is on the grass")
	check("no-op value")
	e = edit()
	retry("active time", func() error { return q.AddActive(ctx, e) })
	var active int64
	if err := storetest.RawDB(t, path, false).QueryRow(`SELECT active_ms FROM annotations WHERE turn_id = $1`, ref.TurnID).Scan(&active); err != nil {
		t.Fatal(err)
	}
	// Every write adds its active time once, the skip's and the no-op's included.
	if active != 10000 {
		t.Errorf("active time %d ms for 10 writes of 1 s each, retried once each; want 10000", active)
	}
	t.Logf("%d COMMIT replies cut; active time %d ms for 10 writes of 1 s each", cut.Cuts.Load(), active)
}

// finalState is what the database holds of a turn's final label: its values, and how many
// adjudication changes are not undone.
func finalState(t *testing.T, path string, turnID int64) (map[string]string, int) {
	t.Helper()
	db := storetest.RawDB(t, path, false)
	rows, err := db.Query(`SELECT field, value FROM final_labels WHERE turn_id = $1`, turnID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	vals := map[string]string{}
	for rows.Next() {
		var f, v string
		if err := rows.Scan(&f, &v); err != nil {
			t.Fatal(err)
		}
		vals[f] = v
	}
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM final_changes WHERE turn_id = $1 AND NOT undone`, turnID).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return vals, n
}

// TestRetriedFinalWritesAfterLostCommit (#38 item 2, #40): the adjudication screen's writes
// (a final value, a flag clearing with a value in one write, an undo) retried after the
// proxy cut their COMMIT's reply land once: the database holds what the screen says.
func TestRetriedFinalWritesAfterLostCommit(t *testing.T) {
	dsn := storetest.RequirePostgres(t)
	path := storetest.PostgresPath(t, dsn)
	storetest.Demo(t, path).Close()
	cut, proxied := testkit.NewCommitCutter(t, path)
	ctx := context.Background()
	s := storetest.Open(t, proxied, store.Options{Durable: true, LockWait: 10 * time.Second})
	var turnID int64
	if err := storetest.RawDB(t, path, false).QueryRow(`SELECT min(id) FROM turns`).Scan(&turnID); err != nil {
		t.Fatal(err)
	}
	retry := func(what string, w func() error) {
		t.Helper()
		cut.Armed.Store(true)
		before := cut.Cuts.Load()
		err := w()
		if cut.Cuts.Load() != before+1 || err == nil {
			t.Fatalf("%s: the proxy did not cut its COMMIT (cuts %d, err %v)", what, cut.Cuts.Load()-before, err)
		}
		for i := 0; ; i++ {
			if err = w(); err == nil {
				return
			}
			if i == 20 {
				t.Fatalf("%s: retry: %v", what, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	final := func(key, field string, v *string) session.FinalEdit {
		return session.FinalEdit{TurnID: turnID, Field: field, Value: v, Source: "alice", Adjudicator: "judy", RubricVersion: "v", Key: key}
	}
	check := func(step string, want map[string]string, steps int) {
		t.Helper()
		got, n := finalState(t, path, turnID)
		if fmt.Sprint(got) != fmt.Sprint(want) || n != steps {
			t.Fatalf("after %s: the database holds %v with %d changes, the screen says %v with %d", step, got, n, want, steps)
		}
	}
	three, four, cleared := "3", "4", "cleared"
	retry("set", func() error { return s.SetFinal(ctx, final("k1", "overall_quality", &three)) })
	check("set", map[string]string{"overall_quality": "3"}, 1)
	retry("set two", func() error {
		return s.SetFinal(ctx, final("k2", "overall_quality", &four), final("k2", "#flag", &cleared))
	})
	check("set two", map[string]string{"overall_quality": "4", "#flag": "cleared"}, 3)
	var field string
	retry("undo", func() error {
		var ok bool
		var err error
		field, ok, err = s.UndoFinal(ctx, turnID, "judy", "v", "k3")
		if err == nil && !ok {
			t.Fatal("undo: nothing to undo")
		}
		return err
	})
	if field != "#flag" {
		t.Fatalf("undo said it undid %q, want the flag clearing", field)
	}
	check("undo", map[string]string{"overall_quality": "4"}, 2)
	retry("undo again", func() error { _, _, err := s.UndoFinal(ctx, turnID, "judy", "v", "k4"); return err })
	check("second undo", map[string]string{"overall_quality": "3"}, 1)
	t.Logf("%d COMMIT replies cut", cut.Cuts.Load())
}

func equalLabels(a, b labelState) bool {
	if a.status != b.status || a.flagged != b.flagged || a.skipped != b.skipped || a.steps != b.steps || len(a.values) != len(b.values) {
		return false
	}
	for k, v := range a.values {
		if b.values[k] != v {
			return false
		}
	}
	return true
}

// lastInQueue walks the queue to its end.
func lastInQueue(ctx context.Context, q *store.Queue) (int64, error) {
	ref, ok, err := q.First(ctx, false)
	for ok && err == nil {
		next, more, nerr := q.Next(ctx, ref, false)
		if nerr != nil {
			return 0, nerr
		}
		if !more {
			break
		}
		ref = next
	}
	return ref.TurnID, err
}

// TestImportCommitReplyLost (#38 item 3): an import whose final COMMIT's reply is lost asks
// the database on a new connection whether its batch completed, and says it landed (no
// error), rather than failing while its rows are visible.
func TestImportCommitReplyLost(t *testing.T) {
	dsn := storetest.RequirePostgres(t)
	path := storetest.PostgresPath(t, dsn)
	cut, proxied := testkit.NewCommitCutter(t, path)
	ctx := context.Background()
	s := storetest.Open(t, proxied, store.Options{})
	im, err := s.BeginImport(ctx, store.ImportOptions{Source: "cut.jsonl"})
	if err != nil {
		t.Fatal(err)
	}
	defer im.Rollback()
	var ts []dataset.Turn
	for i := 0; i < 200; i++ {
		ts = append(ts, turn(fmt.Sprintf("cut%03d", i/5), i%5+1, "initial"))
	}
	if _, _, err := im.PutTurns(ts); err != nil {
		t.Fatal(err)
	}
	cut.Armed.Store(true)
	if err := im.Commit(); err != nil {
		t.Fatalf("the import landed, and Commit says %v", err)
	}
	if cut.Cuts.Load() != 1 || !im.CommitReplyLost() {
		t.Fatalf("the proxy cut %d COMMIT replies; CommitReplyLost %v", cut.Cuts.Load(), im.CommitReplyLost())
	}
	if n := rawCount(t, path, "turns"); n != 200 {
		t.Errorf("%d turns visible, want 200", n)
	}
	if n := rawCount(t, path, "import_batches"); n != 0 {
		t.Errorf("%d import batches left", n)
	}
}
