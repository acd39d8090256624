package store_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/m3bench/m3eval/internal/dataset"
	"github.com/m3bench/m3eval/internal/rubric"
	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/store/storetest"
)

func turn(ep string, n int, action string) dataset.Turn {
	return dataset.Turn{SampleID: fmt.Sprintf("%s_turn_%d", ep, n), EpisodeID: ep, Turn: n, ActionType: action,
		TaskType: "causal_reasoning", UserMessage: "q", VLMResponse: "a", ExpectedAnswer: "e"}
}

// seed imports episodes in the order given, each with its turns' action types.
func seed(tb testing.TB, s *store.Store, eps ...[]string) {
	tb.Helper()
	im, err := s.BeginImport(context.Background(), store.ImportOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	defer im.Rollback()
	for i, actions := range eps {
		for j, a := range actions {
			t := turn(fmt.Sprintf("ep%c", 'z'-i), j+1, a) // names sort against import order
			if _, _, err := im.PutTurn(&t); err != nil {
				tb.Fatal(err)
			}
		}
	}
	if err := im.Commit(); err != nil {
		tb.Fatal(err)
	}
}

func TestImportOutcomes(t *testing.T) {
	ctx := context.Background()
	s := storetest.Open(t, "", store.Options{})
	put := func(opts store.ImportOptions, ts ...dataset.Turn) ([]store.Outcome, error) {
		im, err := s.BeginImport(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		defer im.Rollback()
		var out []store.Outcome
		for i := range ts {
			_, o, err := im.PutTurn(&ts[i])
			if err != nil {
				return nil, err
			}
			out = append(out, o)
		}
		return out, im.Commit()
	}
	a, b := turn("ep1", 1, "initial"), turn("ep1", 2, "mislead")
	if got, err := put(store.ImportOptions{}, a, b); err != nil || fmt.Sprint(got) != "[0 0]" {
		t.Fatalf("first import: %v %v", got, err)
	}
	if got, err := put(store.ImportOptions{}, a, b); err != nil || fmt.Sprint(got) != "[1 1]" {
		t.Fatalf("identical re-import: %v %v", got, err)
	}
	changed := b
	changed.VLMResponse = "another answer"
	if _, err := put(store.ImportOptions{}, changed); !errors.Is(err, store.ErrConflict) || !strings.Contains(err.Error(), "--replace") {
		t.Fatalf("changed record without --replace: %v", err)
	}
	if got, err := put(store.ImportOptions{Replace: true}, changed); err != nil || fmt.Sprint(got) != "[2]" {
		t.Fatalf("changed record with --replace: %v %v", got, err)
	}
	clash := turn("ep1", 2, "follow_up")
	clash.SampleID = "other"
	_, err := put(store.ImportOptions{}, clash)
	if !errors.Is(err, store.ErrConflict) || !strings.Contains(err.Error(), "turn 2 of episode ep1 is already sample ep1_turn_2") {
		t.Fatalf("same episode and turn under a new sample id: %v", err)
	}
	st, err := s.Status(ctx)
	if err != nil || st.Turns != 2 || st.Episodes != 1 {
		t.Fatalf("status %+v %v", st, err)
	}
}

func TestImportRollsBackWholeFile(t *testing.T) {
	ctx := context.Background()
	s := storetest.Open(t, "", store.Options{})
	im, err := s.BeginImport(ctx, store.ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a := turn("ep1", 1, "initial")
	if _, _, err := im.PutTurn(&a); err != nil {
		t.Fatal(err)
	}
	im.Rollback()
	st, _ := s.Status(ctx)
	if st.Turns != 0 {
		t.Fatalf("rolled-back import left %d turns", st.Turns)
	}
}

func refs(t *testing.T, q *store.Queue, unfinished bool) []string {
	t.Helper()
	ctx := context.Background()
	var out []string
	r, ok, err := q.First(ctx, unfinished)
	for ok && err == nil {
		it, lerr := q.Load(ctx, r)
		if lerr != nil {
			t.Fatal(lerr)
		}
		out = append(out, it.Turn.SampleID)
		r, ok, err = q.Next(ctx, r, unfinished)
	}
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestQueueOrderFilterSkipAndPosition(t *testing.T) {
	ctx := context.Background()
	s := storetest.Open(t, "", store.Options{})
	// epz is imported first, so it comes first although "epy" sorts before it.
	seed(t, s, []string{"initial", "mislead", "follow_up"}, []string{"initial", "mislead"})
	q, err := s.OpenQueue(ctx, "alice", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := "[epz_turn_1 epz_turn_2 epz_turn_3 epy_turn_1 epy_turn_2]"
	if got := fmt.Sprint(refs(t, q, false)); got != want {
		t.Fatalf("queue order %s, want %s", got, want)
	}
	if n, _ := q.Len(ctx); n != 5 {
		t.Fatalf("Len = %d", n)
	}

	r := storetest.Rubric(t)
	second, _, _ := q.Find(ctx, "epz_turn_2")
	if _, err := q.Skip(ctx, store.Edit{TurnID: second.TurnID, RubricVersion: r.Version}); err != nil {
		t.Fatal(err)
	}
	want = "[epz_turn_1 epz_turn_3 epy_turn_1 epy_turn_2 epz_turn_2]"
	if got := fmt.Sprint(refs(t, q, false)); got != want {
		t.Fatalf("after skip %s, want %s", got, want)
	}
	skipped, _, _ := q.Find(ctx, "epz_turn_2")
	for sample, wantPos := range map[string]int{"epz_turn_1": 1, "epz_turn_3": 2, "epy_turn_2": 4, "epz_turn_2": 5} {
		ref, ok, err := q.Find(ctx, sample)
		if !ok || err != nil {
			t.Fatalf("Find %s: %v %v", sample, ok, err)
		}
		if pos, err := q.Position(ctx, ref); err != nil || pos != wantPos {
			t.Fatalf("Position(%s) = %d %v, want %d", sample, pos, err, wantPos)
		}
	}
	prev, ok, err := q.Prev(ctx, skipped)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	if it, _ := q.Load(ctx, prev); it.Turn.SampleID != "epy_turn_2" {
		t.Fatalf("Prev of the skipped tail is %s", it.Turn.SampleID)
	}

	// Another annotator's queue is untouched by alice's skip: blind and independent.
	bob, _ := s.OpenQueue(ctx, "bob", nil)
	if got := fmt.Sprint(refs(t, bob, false)); got != "[epz_turn_1 epz_turn_2 epz_turn_3 epy_turn_1 epy_turn_2]" {
		t.Fatalf("bob's queue %s", got)
	}

	mis, err := s.OpenQueue(ctx, "carol", store.Filter{"action_type": {"mislead", "follow_up"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(refs(t, mis, false)); got != "[epz_turn_2 epz_turn_3 epy_turn_2]" {
		t.Fatalf("filtered queue %s", got)
	}
	if n, _ := mis.Len(ctx); n != 3 {
		t.Fatalf("filtered Len = %d", n)
	}
	if _, err := s.OpenQueue(ctx, "dave", store.Filter{"colour": {"red"}}); err == nil {
		t.Fatal("unknown filter key accepted")
	}
}

func TestEditsUndoAndResumeAcrossReopen(t *testing.T) {
	ctx := context.Background()
	path := storetest.Path(t)
	s := storetest.Open(t, path, store.Options{Durable: true})
	seed(t, s, []string{"initial", "mislead"})
	r := storetest.Rubric(t)
	q, _ := s.OpenQueue(ctx, "alice", nil)
	ref, _, _ := q.Find(ctx, "epz_turn_2")
	item := rubric.Item{ActionType: "mislead", Turn: 2}
	edit := store.Edit{TurnID: ref.TurnID, RubricVersion: r.Version, Active: 1500 * time.Millisecond,
		Acceptable: func(v rubric.Values) bool { return r.Complete(v, item) && len(r.CommentNeeded(v, item)) == 0 }}
	set := func(field, v string) *store.Annotation {
		t.Helper()
		a, err := q.SetValue(ctx, edit, field, &v)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	set("correctness", "2")
	set("correctness", "1")
	set("reasoning_completeness", "1")
	set("resists_misleading", "No")
	set("context_consistency", "No")
	a := set("overall_quality", "1")
	if a.Status != dataset.StatusDraft || !a.CanUndo {
		t.Fatalf("annotation %+v", a)
	}
	a, err := q.Submit(ctx, edit)
	if err != nil || a.Status != dataset.StatusDone {
		t.Fatalf("submit: %+v %v", a, err)
	}
	// Overall 4 while misled needs a comment, so the done item becomes a draft in the same step.
	a = set("overall_quality", "4")
	if a.Status != dataset.StatusDraft {
		t.Fatalf("unacceptable change kept status %s", a.Status)
	}
	s.Close()

	// Undo works after a restart: the history is in the file.
	s2 := storetest.Open(t, path, store.Options{})
	q2, _ := s2.OpenQueue(ctx, "alice", nil)
	a, what, ok, err := q2.Undo(ctx, edit)
	if err != nil || !ok || a.Status != dataset.StatusDone || a.Values["overall_quality"] != "1" || len(what) != 2 {
		t.Fatalf("undo of the demoting change: %+v %v %v %v", a, what, ok, err)
	}
	for _, want := range []string{"status", "value:overall_quality", "value:context_consistency"} {
		_, what, ok, err = q2.Undo(ctx, edit)
		if err != nil || !ok || len(what) != 1 {
			t.Fatalf("undo %s: %v %v %v", want, what, ok, err)
		}
		got := string(what[0].Kind)
		if what[0].Field != "" {
			got += ":" + what[0].Field
		}
		if got != want {
			t.Fatalf("undid %s, want %s", got, want)
		}
	}
	it, err := q2.Load(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := it.Annotation.Values["context_consistency"]; ok || it.Annotation.Values["correctness"] != "1" {
		t.Fatalf("values after undos: %v", it.Annotation.Values)
	}
	if it.Annotation.Active < 9*time.Second {
		t.Fatalf("active time %v, want the sum of every write's 1.5 s", it.Annotation.Active)
	}
	if len(it.Earlier) != 1 || it.Earlier[0].Turn != 1 {
		t.Fatalf("context %+v", it.Earlier)
	}
	// The first unfinished item is the resume point: turn 1 (untouched) comes first.
	first, _, _ := q2.First(ctx, true)
	if first.Turn != 1 {
		t.Fatalf("resume at turn %d", first.Turn)
	}
}

func TestFlagAndUndoFlag(t *testing.T) {
	ctx := context.Background()
	s := storetest.Open(t, "", store.Options{})
	seed(t, s, []string{"initial"})
	q, _ := s.OpenQueue(ctx, "alice", nil)
	ref, _, _ := q.First(ctx, false)
	e := store.Edit{TurnID: ref.TurnID, RubricVersion: "v1"}
	a, err := q.SetFlag(ctx, e, true, "image unreadable")
	if err != nil || !a.Flagged || a.FlagReason != "image unreadable" {
		t.Fatalf("flag: %+v %v", a, err)
	}
	a, _, _, err = q.Undo(ctx, e)
	if err != nil || a.Flagged || a.FlagReason != "" {
		t.Fatalf("undo flag: %+v %v", a, err)
	}
	if _, _, ok, _ := q.Undo(ctx, e); ok {
		t.Fatal("undo beyond the history succeeded")
	}
}

func TestExportAndStatus(t *testing.T) {
	ctx := context.Background()
	s := storetest.Open(t, "", store.Options{})
	seed(t, s, []string{"initial", "mislead"})
	for _, name := range []string{"bob", "alice"} {
		q, _ := s.OpenQueue(ctx, name, nil)
		ref, _, _ := q.First(ctx, false)
		v := "5"
		e := store.Edit{TurnID: ref.TurnID, RubricVersion: "v1", Active: 3 * time.Second}
		if _, err := q.SetValue(ctx, e, "correctness", &v); err != nil {
			t.Fatal(err)
		}
		if name == "alice" {
			if _, err := q.Submit(ctx, e); err != nil {
				t.Fatal(err)
			}
		}
	}
	var got []string
	err := s.Export(ctx, store.ExportOptions{}, func(l *dataset.Labeled) error {
		for _, lab := range l.Labels {
			got = append(got, l.Turn.SampleID+"/"+lab.Annotator+"/"+string(lab.Status))
		}
		return nil
	})
	if err != nil || fmt.Sprint(got) != "[epz_turn_1/alice/done]" {
		t.Fatalf("export done only: %v %v", got, err)
	}
	got = nil
	err = s.Export(ctx, store.ExportOptions{IncludeDrafts: true}, func(l *dataset.Labeled) error {
		for _, lab := range l.Labels {
			got = append(got, l.Turn.SampleID+"/"+lab.Annotator+"/"+string(lab.Status)+"/"+lab.Values["correctness"])
		}
		return nil
	})
	if err != nil || fmt.Sprint(got) != "[epz_turn_1/alice/done/5 epz_turn_1/bob/draft/5]" {
		t.Fatalf("export with drafts: %v %v", got, err)
	}
	st, err := s.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Annotators) != 2 || st.Annotators[0].Name != "alice" || st.Annotators[0].Done != 1 ||
		st.Annotators[1].Draft != 1 || !st.Annotators[0].HasMedian || st.Annotators[0].MedianActive != 6*time.Second {
		t.Fatalf("status %+v", st.Annotators)
	}
}

func TestMedianActive(t *testing.T) {
	ctx := context.Background()
	s := storetest.Open(t, "", store.Options{})
	seed(t, s, []string{"initial", "follow_up", "follow_up", "follow_up"})
	q, _ := s.OpenQueue(ctx, "alice", nil)
	ref, ok, _ := q.First(ctx, false)
	for i, secs := range []int{10, 40, 20, 30} {
		if !ok {
			t.Fatal("queue ended early")
		}
		e := store.Edit{TurnID: ref.TurnID, RubricVersion: "v1", Active: time.Duration(secs) * time.Second}
		if _, err := q.Submit(ctx, e); err != nil {
			t.Fatal(err)
		}
		if d, has, _ := q.MedianActive(ctx); !has || (i == 0 && d != 10*time.Second) {
			t.Fatalf("median after %d: %v %v", i+1, d, has)
		}
		ref, ok, _ = q.Next(ctx, ref, false)
	}
	if d, _, _ := q.MedianActive(ctx); d != 25*time.Second {
		t.Fatalf("median of 10,40,20,30 = %v, want 25s", d)
	}
}

// TestPutTurnsBatches covers the multi-row path: full batches, a short tail, ids in order,
// and a batch that meets stored turns and falls back to turn-by-turn outcomes.
func TestPutTurnsBatches(t *testing.T) {
	ctx := context.Background()
	s := storetest.Open(t, "", store.Options{})
	var ts []dataset.Turn
	for i := 0; i < 300; i++ {
		ts = append(ts, turn(fmt.Sprintf("ep%03d", i/7), i%7+1, "follow_up"))
	}
	put := func(batch []dataset.Turn) ([]int64, []store.Outcome) {
		im, err := s.BeginImport(ctx, store.ImportOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer im.Rollback()
		ids, outcomes, err := im.PutTurns(batch)
		if err != nil {
			t.Fatal(err)
		}
		if err := im.Commit(); err != nil {
			t.Fatal(err)
		}
		return ids, outcomes
	}
	ids, outcomes := put(ts[:256])
	ids2, _ := put(ts[256:])
	ids = append(ids, ids2...)
	q, _ := s.OpenQueue(ctx, "alice", nil)
	for i, id := range ids {
		it, err := q.Load(ctx, store.Ref{TurnID: id})
		if err != nil || it.Turn.SampleID != ts[i].SampleID {
			t.Fatalf("id %d of turn %d loads %v %v", id, i, it, err)
		}
	}
	for _, o := range outcomes {
		if o != store.Inserted {
			t.Fatalf("fresh batch outcome %v", o)
		}
	}
	if n, _ := q.Len(ctx); n != 300 {
		t.Fatalf("Len %d", n)
	}
	// Episodes are numbered in order of first appearance: queue order follows the input.
	var order []string
	r, ok, _ := q.First(ctx, false)
	for ok && len(order) < 3 {
		it, _ := q.Load(ctx, r)
		order = append(order, it.Turn.SampleID)
		r, ok, _ = q.Next(ctx, r, false)
	}
	if fmt.Sprint(order) != "[ep000_turn_1 ep000_turn_2 ep000_turn_3]" {
		t.Fatalf("order %v", order)
	}
	// Re-putting a batch with stored turns falls back and reports each one.
	again := append(append([]dataset.Turn(nil), ts[:128]...), ts[128:256]...)
	again[200] = turn("new", 1, "initial")
	_, outcomes = put(again)
	counts := map[store.Outcome]int{}
	for _, o := range outcomes {
		counts[o]++
	}
	if counts[store.Unchanged] != 255 || counts[store.Inserted] != 1 {
		t.Fatalf("outcomes of a mixed batch: %v", counts)
	}
	// A chunk that meets a stored turn on its last row leaves nothing of its failed statement
	// behind, and the chunk before it keeps its new turns: 255 new, 1 unchanged.
	var fresh []dataset.Turn
	for i := 0; i < 255; i++ {
		fresh = append(fresh, turn(fmt.Sprintf("late%03d", i/5), i%5+1, "mislead"))
	}
	fresh = append(fresh, ts[5])
	_, outcomes = put(fresh)
	counts = map[store.Outcome]int{}
	for _, o := range outcomes {
		counts[o]++
	}
	if counts[store.Inserted] != 255 || counts[store.Unchanged] != 1 {
		t.Fatalf("outcomes of a batch whose second chunk ends on a stored turn: %v", counts)
	}
	if n, _ := q.Len(ctx); n != 300+1+255 {
		t.Fatalf("Len %d after the mixed batches", n)
	}
}

// TestPutTurnsChunkErrors: a value the database rejects inside a full chunk is reported at its
// own index, and episode keys that do not survive a trip through JSON text still import.
func TestPutTurnsChunkErrors(t *testing.T) {
	ctx := context.Background()
	s := storetest.Open(t, "", store.Options{})
	var ts []dataset.Turn
	for i := 0; i < 128; i++ {
		ts = append(ts, turn(fmt.Sprintf("ep%03d", i/4), i%4+1, "follow_up"))
	}
	bad := append([]dataset.Turn(nil), ts...)
	bad[77].Turn = 0 // breaks CHECK (turn >= 1)
	im, err := s.BeginImport(ctx, store.ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ids, _, err := im.PutTurns(bad)
	im.Rollback()
	if err == nil || len(ids) != 77 {
		t.Fatalf("error %v after %d turns, want an error at turn 77", err, len(ids))
	}

	odd := append([]dataset.Turn(nil), ts...)
	for i := range odd[:8] {
		odd[i].EpisodeID = "nul\x00key"
		odd[i].SampleID = fmt.Sprintf("nul_%d", i)
		odd[i].Turn = i + 1
	}
	im, err = s.BeginImport(ctx, store.ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer im.Rollback()
	ids, outcomes, err := im.PutTurns(odd)
	if storetest.Postgres() {
		// PostgreSQL's text cannot hold NUL: the first such turn is refused, by name.
		if err == nil || len(ids) != 0 || !strings.Contains(err.Error(), "NUL") {
			t.Fatalf("NUL in an episode key on PostgreSQL: %v after %d turns, want an error naming NUL at turn 0", err, len(ids))
		}
		return
	}
	if err != nil || len(ids) != 128 {
		t.Fatalf("odd episode key: %v after %d turns", err, len(ids))
	}
	for i, o := range outcomes {
		if o != store.Inserted {
			t.Fatalf("turn %d: outcome %v", i, o)
		}
	}
	if err := im.Commit(); err != nil {
		t.Fatal(err)
	}
	q, _ := s.OpenQueue(ctx, "alice", nil)
	it, err := q.Load(ctx, store.Ref{TurnID: ids[3]})
	if err != nil || it.Turn.EpisodeID != "nul\x00key" || it.Turn.Turn != 4 {
		t.Fatalf("turn 3 loads %+v, %v", it, err)
	}
}

// TestPutTurnsReimport: re-putting stored chunks gives every turn its stored id and the right
// outcome, whether the chunk is all identical, leaves optional fields out, repeats a sample
// inside itself, or changes one turn (an error at that turn, or a replacement when allowed).
func TestPutTurnsReimport(t *testing.T) {
	ctx := context.Background()
	s := storetest.Open(t, "", store.Options{})
	var ts []dataset.Turn
	for i := 0; i < 256; i++ {
		tt := turn(fmt.Sprintf("ep%03d", i/8), i%8+1, "follow_up")
		tt.Images, tt.Model = []string{fmt.Sprintf("img/%d.png", i)}, "m"
		ts = append(ts, tt)
	}
	put := func(opts store.ImportOptions, batch []dataset.Turn) ([]int64, map[store.Outcome]int, error) {
		t.Helper()
		im, err := s.BeginImport(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		defer im.Rollback()
		ids, outcomes, err := im.PutTurns(batch)
		counts := map[store.Outcome]int{}
		for _, o := range outcomes {
			counts[o]++
		}
		if err == nil {
			err = im.Commit()
		}
		return ids, counts, err
	}
	want, _, err := put(store.ImportOptions{}, ts)
	if err != nil {
		t.Fatal(err)
	}
	sameIDs := func(what string, ids []int64) {
		t.Helper()
		if fmt.Sprint(ids) != fmt.Sprint(want[:len(ids)]) {
			t.Fatalf("%s: ids differ from the first import", what)
		}
	}

	ids, counts, err := put(store.ImportOptions{}, ts)
	if err != nil || counts[store.Unchanged] != 256 {
		t.Fatalf("identical re-put: %v %v", counts, err)
	}
	sameIDs("identical re-put", ids)

	// Left-out images and model keep the stored ones: still unchanged.
	omitting := append([]dataset.Turn(nil), ts...)
	for i := 10; i < 20; i++ {
		omitting[i].Images, omitting[i].Model = nil, ""
		omitting[i].Omitted = dataset.Omitted{Images: true, Model: true}
	}
	ids, counts, err = put(store.ImportOptions{}, omitting)
	if err != nil || counts[store.Unchanged] != 256 {
		t.Fatalf("re-put leaving fields out: %v %v", counts, err)
	}
	sameIDs("re-put leaving fields out", ids)

	// A sample twice in one chunk, first new then identical.
	twice := append([]dataset.Turn(nil), ts[:128]...)
	twice[40], twice[41] = turn("fresh", 1, "initial"), turn("fresh", 1, "initial")
	ids, counts, err = put(store.ImportOptions{}, twice)
	if err != nil || counts[store.Inserted] != 1 || counts[store.Unchanged] != 127 || ids[40] != ids[41] {
		t.Fatalf("a new sample twice in a chunk: %v %v, ids %d %d", counts, err, ids[40], ids[41])
	}

	changed := append([]dataset.Turn(nil), ts...)
	changed[150].VLMResponse = "a different answer"
	ids, _, err = put(store.ImportOptions{}, changed)
	if !errors.Is(err, store.ErrConflict) || len(ids) != 150 {
		t.Fatalf("a changed turn: %v after %d turns, want a conflict at turn 150", err, len(ids))
	}
	ids, counts, err = put(store.ImportOptions{Replace: true}, changed)
	if err != nil || counts[store.Replaced] != 1 || counts[store.Unchanged] != 255 {
		t.Fatalf("a changed turn, replacing: %v %v", counts, err)
	}
	sameIDs("replacing re-put", ids)
}

// TestNewDatabasePageSize: databases m3eval creates get 16 KB pages, in WAL mode; one that
// exists already keeps its page size and still opens and migrates.
func TestNewDatabasePageSize(t *testing.T) {
	storetest.SQLiteOnly(t, "about SQLite's page size")
	ctx := context.Background()
	check := func(path string, wantPage string) {
		t.Helper()
		s, err := store.Open(ctx, path, store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		seed(t, s, []string{"initial"})
		s.Close()
		page, mode := readPragma(t, path, "page_size"), readPragma(t, path, "journal_mode")
		if page != wantPage || mode != "wal" {
			t.Fatalf("%s: page size %s, journal %s; want %s, wal", filepath.Base(path), page, mode, wantPage)
		}
	}
	check(filepath.Join(t.TempDir(), "new.db"), "16384")

	old := filepath.Join(t.TempDir(), "old.db")
	db, err := sql.Open("sqlite3", "file:"+old)
	if err != nil {
		t.Fatal(err)
	}
	// A database with no tables (one with another program's tables is refused, see
	// TestOpenRefusesWhatIsNotADatabase), written with the old page size.
	if _, err := db.Exec(`PRAGMA page_size = 4096; CREATE TABLE unrelated (x); DROP TABLE unrelated`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	check(old, "4096")
}
