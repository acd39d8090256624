package store_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/m3bench/m3eval/internal/dataset"
	"github.com/m3bench/m3eval/internal/rubric"
	"github.com/m3bench/m3eval/internal/sample"
	"github.com/m3bench/m3eval/internal/session"
	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/store/storetest"
)

func turnIDs(t *testing.T, s *store.Store, sampleIDs ...string) []int64 {
	t.Helper()
	var out []int64
	q, err := s.OpenQueue(context.Background(), "probe", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, sid := range sampleIDs {
		r, ok, err := q.Find(context.Background(), sid)
		if err != nil || !ok {
			t.Fatalf("find %s: %v %v", sid, ok, err)
		}
		out = append(out, r.TurnID)
	}
	return out
}

func TestSampleStrataAndSavedSample(t *testing.T) {
	ctx := context.Background()
	s := storetest.Open(t, "", store.Options{})
	seed(t, s, []string{"initial", "mislead", "recall"}, []string{"initial", "mislead"}, []string{"initial"})
	counts, err := s.SampleStrata(ctx, store.SampleParams{By: []string{"action_type"}})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(counts) != "[{[initial] 3} {[mislead] 2} {[recall] 1}]" {
		t.Fatalf("strata %v", counts)
	}
	// Positions count in queue order: the first imported episode first.
	ids := turnIDs(t, s, "epz_turn_1", "epy_turn_1", "epx_turn_1")
	got, err := s.SampleTurnIDs(ctx, store.SampleParams{By: []string{"action_type"}}, []string{"initial"}, []int{0, 2})
	if err != nil || !slices.Equal(got, []int64{ids[0], ids[2]}) {
		t.Errorf("initial at 0 and 2: %v %v, want %v", got, err, []int64{ids[0], ids[2]})
	}
	if _, err := s.SampleTurnIDs(ctx, store.SampleParams{By: []string{"action_type"}}, []string{"initial"}, []int{3}); err == nil {
		t.Error("a position past the stratum passed")
	}
	p := store.SampleParams{By: []string{"action_type", "turn"}, Where: map[string][]string{"action_type": {"mislead", "recall"}}}
	counts, err = s.SampleStrata(ctx, p)
	if err != nil || fmt.Sprint(counts) != "[{[mislead 2] 2} {[recall 3] 1}]" {
		t.Fatalf("strata by two keys with where: %v %v", counts, err)
	}
	if got, err := s.SampleTurnIDs(ctx, p, []string{"mislead", "2"}, []int{1}); err != nil || len(got) != 1 || got[0] != turnIDs(t, s, "epy_turn_2")[0] {
		t.Errorf("mislead turn 2 at 1: %v %v", got, err)
	}
	for _, bad := range []store.SampleParams{{By: []string{"colour"}}, {By: []string{"meta.x'--"}}, {}, {By: []string{"model"}, Where: map[string][]string{"nope": {"x"}}}} {
		if _, err := s.SampleStrata(ctx, bad); err == nil {
			t.Errorf("%+v passed", bad)
		}
	}
	strata := []sample.Stratum{{Key: []string{"initial"}, Available: 3, Allocated: 1, Drawn: 1, Items: ids[:1]}}
	info := store.SampleInfo{Name: "pilot", Seed: 7, Size: 1, Params: store.SampleParams{By: []string{"action_type"}, MinPerStratum: 1}}
	if err := s.SaveSample(ctx, info, strata); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveSample(ctx, info, strata); !errors.Is(err, store.ErrConflict) {
		t.Errorf("second sample of the same name: %v", err)
	}
	info2, err := s.Sample(ctx, "pilot")
	if err != nil || info2.Seed != 7 || info2.Params.MinPerStratum != 1 || len(info2.Strata) != 1 || info2.Strata[0].Available != 3 || info2.Assigned {
		t.Fatalf("stored sample %+v %v", info2, err)
	}
	if _, err := s.Sample(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("missing sample: %v", err)
	}
}

// TestCampaignQueue: an assigned queue holds exactly the annotator's turns (sampled and
// gold), in queue order, and counts only them; an annotator without an assignment keeps
// the whole database.
func TestCampaignQueue(t *testing.T) {
	ctx := context.Background()
	s := storetest.Open(t, "", store.Options{})
	seed(t, s, []string{"initial", "mislead", "recall"}, []string{"initial", "mislead"}, []string{"initial"})
	ids := turnIDs(t, s, "epz_turn_1", "epz_turn_2", "epz_turn_3", "epy_turn_1", "epy_turn_2", "epx_turn_1")
	strata := []sample.Stratum{{Key: []string{"x"}, Available: 6, Allocated: 4, Drawn: 4, Items: []int64{ids[0], ids[2], ids[3], ids[5]}}}
	if err := s.SaveSample(ctx, store.SampleInfo{Name: "pilot", Size: 4}, strata); err != nil {
		t.Fatal(err)
	}
	if name, err := s.CampaignOf(ctx, "alice"); err != nil || name != "" {
		t.Fatalf("campaign before assign: %q %v", name, err)
	}
	if _, err := s.PutGoldLabels(ctx, "gold.json", []store.GoldLabel{{SampleID: "epy_turn_2", Values: rubric.Values{"overall": "4"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutGoldLabels(ctx, "gold.json", []store.GoldLabel{{SampleID: "nope", Where: "gold.json:3"}}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("gold label of a turn not imported: %v", err)
	}
	rows := []store.Assigned{
		{Annotator: "alice", TurnID: ids[5], Kind: store.AssignMain},
		{Annotator: "alice", TurnID: ids[0], Kind: store.AssignMain},
		{Annotator: "alice", TurnID: ids[4], Kind: store.AssignGold},
		{Annotator: "bob", TurnID: ids[2], Kind: store.AssignMain},
		{Annotator: "bob", TurnID: ids[3], Kind: store.AssignMain},
	}
	if err := s.SaveAssignment(ctx, "pilot", store.CampaignSettings{Overlap: 1}, rows); err != nil {
		t.Fatal(err)
	}
	if name, err := s.CampaignOf(ctx, "alice"); err != nil || name != "pilot" {
		t.Fatalf("campaign of alice: %q %v", name, err)
	}
	q, err := s.OpenCampaignQueue(ctx, "alice", "pilot", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := refs(t, q, false); !slices.Equal(got, []string{"epz_turn_1", "epy_turn_2", "epx_turn_1"}) {
		t.Errorf("alice's queue %v", got)
	}
	if n, err := q.Len(ctx); err != nil || n != 3 || q.Campaign() != "pilot" {
		t.Errorf("Len %d %v campaign %q", n, err, q.Campaign())
	}
	// A filter still applies inside the campaign.
	qf, err := s.OpenCampaignQueue(ctx, "alice", "pilot", store.Filter{"action_type": {"initial"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := refs(t, qf, false); !slices.Equal(got, []string{"epz_turn_1", "epx_turn_1"}) {
		t.Errorf("alice's filtered queue %v", got)
	}
	// Started work cannot be taken away.
	e := session.Edit{TurnID: ids[0], RubricVersion: "v"}
	v := "3"
	if _, err := q.SetValue(ctx, e, "overall", &v); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveAssignment(ctx, "pilot", store.CampaignSettings{Overlap: 1}, slices.Delete(slices.Clone(rows), 1, 2)); !errors.Is(err, store.ErrConflict) {
		t.Errorf("dropping alice's started turn: %v", err)
	}
	c, err := s.Campaign(ctx, "pilot")
	if err != nil || c.Settings == nil || len(c.Rows) != 5 || c.Rows[0].SampleID != "epz_turn_1" || c.Rows[0].Status != "draft" {
		t.Fatalf("campaign %+v %v", c, err)
	}
	// Without an assignment, the whole database as before.
	qc, err := s.OpenQueue(ctx, "carol", nil)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := qc.Len(ctx); n != 6 {
		t.Errorf("carol's queue has %d turns, want all 6", n)
	}
	if _, err := s.OpenCampaignQueue(ctx, "alice", "nope", nil); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown campaign: %v", err)
	}
}

// TestFinalLabelsUndoAcrossReopen: final values are saved at once, each change is kept, and
// undo walks them back after the database is closed and opened again.
func TestFinalLabelsUndoAcrossReopen(t *testing.T) {
	ctx := context.Background()
	path := storetest.Path(t)
	s := storetest.Open(t, path, store.Options{Durable: true})
	seed(t, s, []string{"initial", "mislead"})
	id := turnIDs(t, s, "epz_turn_2")[0]
	three, four := "3", "4"
	if err := s.SetFinal(ctx, session.FinalEdit{TurnID: id, Field: "correctness", Value: &three, Source: "bob", Adjudicator: "judy", RubricVersion: "v"}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetFinal(ctx,
		session.FinalEdit{TurnID: id, Field: "correctness", Value: &four, Adjudicator: "judy", RubricVersion: "v"},
		session.FinalEdit{TurnID: id, Field: "overall_quality", Value: &three, Source: "ann", Adjudicator: "judy", RubricVersion: "v"}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = storetest.Open(t, path, store.Options{Durable: true})
	f, err := s.Finals(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d := f["epz_turn_2"]["correctness"]; d.Value != "4" || d.Source != "" || d.Adjudicator != "judy" || f["epz_turn_2"]["overall_quality"].Source != "ann" {
		t.Fatalf("finals %+v", f)
	}
	for _, want := range []struct {
		field string
		value string // "" when the field has no final value after the undo
	}{{"overall_quality", ""}, {"correctness", "3"}, {"correctness", ""}} {
		field, ok, err := s.UndoFinal(ctx, id, "judy", "v", "")
		if err != nil || !ok || field != want.field {
			t.Fatalf("undo: %q %v %v, want %s", field, ok, err, want.field)
		}
		f, _ := s.Finals(ctx)
		if got := f["epz_turn_2"][want.field].Value; got != want.value {
			t.Errorf("after undoing %s: %q, want %q", want.field, got, want.value)
		}
	}
	if _, ok, err := s.UndoFinal(ctx, id, "judy", "v", ""); ok || err != nil {
		t.Errorf("undo with nothing left: %v %v", ok, err)
	}
	it, err := s.LoadTurn(ctx, id)
	if err != nil || it.Turn.SampleID != "epz_turn_2" || len(it.Earlier) != 1 || it.Annotation != nil {
		t.Errorf("LoadTurn: %+v %v", it, err)
	}
}

// TestRepeatQueue: a repeated turn comes back blank in its own queue under the annotator's
// name, its second label is kept apart (qc reads it; export, status and agreement do not).
func TestRepeatQueue(t *testing.T) {
	ctx := context.Background()
	s := storetest.Open(t, "", store.Options{})
	seed(t, s, []string{"initial", "follow_up"})
	ids := turnIDs(t, s, "epz_turn_1", "epz_turn_2")
	if err := s.SaveSample(ctx, store.SampleInfo{Name: "p", Size: 2}, []sample.Stratum{{Key: []string{"x"}, Available: 2, Allocated: 2, Drawn: 2, Items: ids}}); err != nil {
		t.Fatal(err)
	}
	rows := []store.Assigned{
		{Annotator: "alice", TurnID: ids[0], Kind: store.AssignMain}, {Annotator: "alice", TurnID: ids[1], Kind: store.AssignMain},
		{Annotator: "alice", TurnID: ids[1], Kind: store.AssignRepeat},
	}
	if err := s.SaveAssignment(ctx, "p", store.CampaignSettings{Overlap: 1, RepeatRate: 0.5}, rows); err != nil {
		t.Fatal(err)
	}
	label := func(q *store.Queue, id int64, v string) {
		t.Helper()
		e := session.Edit{TurnID: id, RubricVersion: "v"}
		if _, err := q.SetValue(ctx, e, "overall_quality", &v); err != nil {
			t.Fatal(err)
		}
		if _, err := q.Submit(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	q, err := s.OpenCampaignQueue(ctx, "alice", "p", nil)
	if err != nil {
		t.Fatal(err)
	}
	label(q, ids[0], "4")
	label(q, ids[1], "5")
	rq, err := s.OpenRepeatQueue(ctx, "alice", "p", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := refs(t, rq, true); !slices.Equal(got, []string{"epz_turn_2"}) || rq.Annotator() != "alice" || rq.Campaign() != "p" {
		t.Fatalf("repeat queue %v as %q in %q", got, rq.Annotator(), rq.Campaign())
	}
	it, err := rq.Load(ctx, session.Ref{TurnID: ids[1]})
	if err != nil || it.Annotation != nil {
		t.Fatalf("the repeated turn is not blank: %+v %v", it.Annotation, err)
	}
	label(rq, ids[1], "2")
	// The first label is untouched; the second is only in Review's repeats.
	d, err := s.Review(ctx, "p")
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Labels) != 2 || d.Labels[1].Values["overall_quality"] != "5" || len(d.Repeats) != 1 ||
		d.Repeats[0].Annotator != "alice" || d.Repeats[0].Values["overall_quality"] != "2" {
		t.Fatalf("review %+v", d)
	}
	names, err := s.ExportAnnotators(ctx, store.ExportOptions{IncludeDrafts: true})
	if err != nil || !slices.Equal(names, []string{"alice"}) {
		t.Errorf("export annotators %v %v", names, err)
	}
	n := 0
	if err := s.Export(ctx, store.ExportOptions{IncludeDrafts: true}, func(l *dataset.Labeled) error { n += len(l.Labels); return nil }); err != nil || n != 2 {
		t.Errorf("export has %d labels (%v), want alice's 2", n, err)
	}
	st, err := s.Status(ctx)
	if err != nil || len(st.Annotators) != 1 || st.Annotators[0].Done != 2 {
		t.Errorf("status %+v %v", st, err)
	}
	c, err := s.Campaign(ctx, "p")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range c.Rows {
		if r.Status != "done" {
			t.Errorf("%s %s: status %q", r.SampleID, r.Kind, r.Status)
		}
	}
	// Reopening finds the same hidden row.
	if _, err := s.OpenRepeatQueue(ctx, "alice", "p", nil); err != nil {
		t.Fatal(err)
	}
}
