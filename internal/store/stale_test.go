package store_test

import (
	"context"
	"testing"

	"github.com/m3bench/m3eval/internal/dataset"
	"github.com/m3bench/m3eval/internal/rubric"
	"github.com/m3bench/m3eval/internal/session"
	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/store/storetest"
)

// TestStaleLabelsLeaveScoreUntilConfirmed: a label of a replaced turn is out of the scoring
// stream, drafts included, until the annotator submits it again.
func TestStaleLabelsLeaveScoreUntilConfirmed(t *testing.T) {
	ctx := context.Background()
	s := storetest.Open(t, "", store.Options{})
	r := storetest.Rubric(t)
	tr := turn("ep", 2, "mislead")
	im, err := s.BeginImport(ctx, store.ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	id, _, err := im.PutTurn(&tr)
	if err != nil {
		t.Fatal(err)
	}
	vals := rubric.Values{"correctness": "1", "reasoning_completeness": "1", "resists_misleading": "No",
		"context_consistency": "No", "overall_quality": "1", "comments": "misled"}
	if _, err := im.PutLabel(id, &dataset.Label{Annotator: "alice", Values: vals, Status: dataset.StatusDone, RubricVersion: r.Version}); err != nil {
		t.Fatal(err)
	}
	if err := im.Commit(); err != nil {
		t.Fatal(err)
	}
	count := func() int {
		n := 0
		err := s.StreamScoring(ctx, store.ScoreFilter{IncludeDrafts: true}, func(*store.ScoreRow) error { n++; return nil }, func(*store.ScoreRow) error { return nil })
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if count() == 0 {
		t.Fatal("the label is not scored at all")
	}
	tr.ActionType = "follow_up"
	im, _ = s.BeginImport(ctx, store.ImportOptions{Replace: true, Rubric: r})
	if _, o, err := im.PutTurn(&tr); err != nil || o != dataset.Replaced {
		t.Fatal(o, err)
	}
	if err := im.Commit(); err != nil { // the labels are marked with the turn's replacement
		t.Fatal(err)
	}
	if got := im.StaleLabels(); len(got) != 1 || !got[0].WasDone || len(got[0].Dropped) != 1 || got[0].Dropped[0] != "resists_misleading=No" {
		t.Fatalf("stale labels %+v", got)
	}
	if n := count(); n != 0 {
		t.Fatalf("%d values of a stale label are scored", n)
	}
	q, err := s.OpenQueue(ctx, "alice", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.Submit(ctx, session.Edit{TurnID: id, RubricVersion: r.Version}); err != nil {
		t.Fatal(err)
	}
	if n := count(); n == 0 {
		t.Fatal("a re-confirmed label is still left out")
	}
	st, _ := s.Status(ctx)
	if st.Annotators[0].Stale != 0 || st.Annotators[0].Done != 1 {
		t.Fatalf("after re-confirming: %+v", st.Annotators[0])
	}
}
