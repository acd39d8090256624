package store_test

import (
	"context"
	"testing"

	"github.com/m3bench/m3eval/internal/session"
	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/store/storetest"
)

// TestStatusSkippedIsNotDraft (issue 40 item 9): an item only skipped is counted skipped,
// not a draft; one skipped after an answer, or flagged, is both.
func TestStatusSkippedIsNotDraft(t *testing.T) {
	ctx := context.Background()
	s := storetest.Open(t, "", store.Options{})
	seed(t, s, []string{"initial", "mislead", "follow_up", "follow_up"})
	q, err := s.OpenQueue(ctx, "alice", nil)
	if err != nil {
		t.Fatal(err)
	}
	r := storetest.Rubric(t)
	edit := func(sample string) session.Edit {
		ref, ok, err := q.Find(ctx, sample)
		if !ok || err != nil {
			t.Fatalf("Find %s: %v %v", sample, ok, err)
		}
		return session.Edit{TurnID: ref.TurnID, RubricVersion: r.Version}
	}
	three := "3"
	if _, err := q.Skip(ctx, edit("epz_turn_1")); err != nil { // untouched, skipped
		t.Fatal(err)
	}
	if _, err := q.SetValue(ctx, edit("epz_turn_2"), "correctness", &three); err != nil { // answered, then skipped
		t.Fatal(err)
	}
	if _, err := q.Skip(ctx, edit("epz_turn_2")); err != nil {
		t.Fatal(err)
	}
	if _, err := q.SetFlag(ctx, edit("epz_turn_3"), true, "why"); err != nil { // flagged, then skipped
		t.Fatal(err)
	}
	if _, err := q.Skip(ctx, edit("epz_turn_3")); err != nil {
		t.Fatal(err)
	}
	st, err := s.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Annotators) != 1 {
		t.Fatalf("annotators %+v", st.Annotators)
	}
	if a := st.Annotators[0]; a.Draft != 2 || a.Skipped != 3 || a.Flagged != 1 || a.Done != 0 {
		t.Fatalf("status %+v: want 2 drafts (answered, flagged), 3 skipped, 1 flagged", a)
	}
}
