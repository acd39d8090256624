package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/m3bench/m3eval/internal/dataset"
	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/store/storetest"
)

// A model judge's turns are stored whole with their notes; a rerun of the same version gets
// them as done; another version conflicts unless it replaces, and then re-scores.
func TestModelJudgeStore(t *testing.T) {
	s := storetest.Open(t, "", store.Options{})
	seed(t, s, []string{"initial", "mislead"})
	ctx := context.Background()
	var ids []int64
	var images [][]string
	if err := s.StreamJudgeTurns(ctx, nil, func(turns []dataset.Turn, tids []int64, _ []bool) error {
		ids = append(ids, tids...)
		for _, tt := range turns {
			images = append(images, tt.Images)
		}
		return nil
	}); err != nil || len(ids) != 2 {
		t.Fatalf("%v %v", ids, err)
	}
	v1 := store.ModelJudgeVersion{Version: "m@1", Model: "m", PromptHash: "abc", Params: json.RawMessage(`{"rubric":"r"}`), Prompt: "p"}
	done, err := s.StartModelJudge(ctx, "vlm", v1, false)
	if err != nil || len(done) != 0 {
		t.Fatalf("%v %v", done, err)
	}
	turn := store.ModelJudgeTurn{TurnID: ids[1], Fields: []string{"correctness", "resists_misleading"}, Values: []string{"4", "Yes"},
		Rationale: "resisted", TokensIn: 900, TokensOut: 40, Requests: 2}
	if err := s.PutModelJudgeTurns(ctx, "vlm", "m@1", []store.ModelJudgeTurn{turn}); err != nil {
		t.Fatal(err)
	}
	if done, err = s.StartModelJudge(ctx, "vlm", v1, false); err != nil || !done[ids[1]] || done[ids[0]] {
		t.Fatalf("rerun: %v %v", done, err)
	}
	sample := ""
	s.StreamJudgeTurns(ctx, nil, func(turns []dataset.Turn, _ []int64, _ []bool) error { sample = turns[1].SampleID; return nil })
	n, err := s.ModelJudgeNote(ctx, "vlm", sample)
	if err != nil || n.Rationale != "resisted" || n.TokensIn != 900 || n.Requests != 2 || n.Version.Model != "m" || len(n.Values) != 2 {
		t.Fatalf("note %+v %v", n, err)
	}
	// Its scores carry a version in the rule-version column, yet it is no rule judge
	// (sample --active reads the rule judge's fallback rules only for the rule judge).
	if rules, err := s.JudgeIsRuleJudge(ctx, "vlm"); err != nil || rules {
		t.Errorf("JudgeIsRuleJudge(model judge) = %v, %v", rules, err)
	}
	v2 := v1
	v2.Version = "m@2"
	if _, err := s.StartModelJudge(ctx, "vlm", v2, false); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("another version without replace: %v", err)
	}
	if done, err = s.StartModelJudge(ctx, "vlm", v2, true); err != nil || len(done) != 0 {
		t.Fatalf("replace: %v %v", done, err)
	}
	turn.Values = []string{"2", "No"}
	if err := s.PutModelJudgeTurns(ctx, "vlm", "m@2", []store.ModelJudgeTurn{turn}); err != nil {
		t.Fatal(err)
	}
	if n, err = s.ModelJudgeNote(ctx, "vlm", sample); err != nil || n.Version.Version != "m@2" || n.Values[0] != "2" {
		t.Fatalf("after replace %+v %v", n, err)
	}
	if _, err := s.ModelJudgeNote(ctx, "vlm", "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown sample: %v", err)
	}
}
