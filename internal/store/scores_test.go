package store_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/m3bench/m3eval/internal/dataset"
	"github.com/m3bench/m3eval/internal/rubric"
	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/store/storetest"
)

// putScores imports one "file" of a judge's scores (sample, field, value triples) and returns
// the outcomes, committing only when every score went in.
func putScores(t *testing.T, s *store.Store, judge string, replace bool, triples ...string) ([]store.Outcome, error) {
	t.Helper()
	ctx := context.Background()
	im, err := s.BeginScoreImport(ctx, judge, store.ImportOptions{Replace: replace})
	if err != nil {
		t.Fatal(err)
	}
	defer im.Rollback()
	var out []store.Outcome
	for i := 0; i+2 < len(triples); i += 3 {
		id, _, err := im.Turn(triples[i])
		if err != nil {
			return out, fmt.Errorf("%s: %w", triples[i], err)
		}
		o, err := im.PutScore(id, triples[i+1], triples[i+2])
		if err != nil {
			return out, err
		}
		out = append(out, o)
	}
	return out, im.Commit()
}

// collect streams the scoring rows as "group|sample|who|field=value" strings.
func collect(t *testing.T, s *store.Store, f store.ScoreFilter) (ratings, scores []string) {
	t.Helper()
	str := func(r *store.ScoreRow) string {
		return fmt.Sprintf("%s|%s|%s|%s=%s", r.Group, r.Sample, r.Who, r.Field, r.Value)
	}
	err := s.StreamScoring(context.Background(), f,
		func(r *store.ScoreRow) error { ratings = append(ratings, str(r)); return nil },
		func(r *store.ScoreRow) error { scores = append(scores, str(r)); return nil })
	if err != nil {
		t.Fatal(err)
	}
	return ratings, scores
}

func TestJudgeScoresImport(t *testing.T) {
	s := storetest.Open(t, "", store.Options{})
	seed(t, s, []string{"initial", "mislead"})
	const a1, a2 = "epz_turn_1", "epz_turn_2"

	got, err := putScores(t, s, "gpt", false, a1, "correctness", "4", a2, "correctness", "3.7", a2, "resists_misleading", "No", a1, "overall_quality", "")
	if err != nil || !reflect.DeepEqual(got, []store.Outcome{store.Inserted, store.Inserted, store.Inserted, store.Unchanged}) {
		t.Fatalf("first import: %v %v", got, err)
	}
	// The same scores again change nothing.
	got, err = putScores(t, s, "gpt", false, a1, "correctness", "4", a2, "correctness", "3.7")
	if err != nil || !reflect.DeepEqual(got, []store.Outcome{store.Unchanged, store.Unchanged}) {
		t.Fatalf("re-import: %v %v", got, err)
	}
	// A changed score is a conflict, and the file's earlier new score is rolled back with it.
	_, err = putScores(t, s, "gpt", false, a1, "reasoning_completeness", "2", a2, "correctness", "4")
	if !errors.Is(err, store.ErrConflict) || !strings.Contains(err.Error(), "stored score is 3.7, this file gives 4") {
		t.Fatalf("changed score: %v", err)
	}
	// An unknown sample is ErrNotFound, and nothing of that file lands either.
	_, err = putScores(t, s, "gpt", false, a1, "reasoning_completeness", "2", "nope_turn_1", "correctness", "4")
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown sample: %v", err)
	}
	_, scores := collect(t, s, store.ScoreFilter{})
	want := []string{"|epz_turn_1|gpt|correctness=4", "|epz_turn_2|gpt|correctness=3.7", "|epz_turn_2|gpt|resists_misleading=No"}
	if !reflect.DeepEqual(scores, want) {
		t.Fatalf("after failed imports:\n%q\nwant\n%q", scores, want)
	}
	// --replace overwrites, and "" (no score) removes.
	got, err = putScores(t, s, "gpt", true, a2, "correctness", "4", a2, "resists_misleading", "")
	if err != nil || !reflect.DeepEqual(got, []store.Outcome{store.Replaced, store.Replaced}) {
		t.Fatalf("replace: %v %v", got, err)
	}
	// Another judge's scores are its own.
	if _, err := putScores(t, s, "rules", false, a2, "correctness", "1"); err != nil {
		t.Fatal(err)
	}
	_, scores = collect(t, s, store.ScoreFilter{})
	want = []string{"|epz_turn_1|gpt|correctness=4", "|epz_turn_2|gpt|correctness=4", "|epz_turn_2|rules|correctness=1"}
	if !reflect.DeepEqual(scores, want) {
		t.Fatalf("after replace:\n%q\nwant\n%q", scores, want)
	}
	if j, err := s.Judges(context.Background()); err != nil || !reflect.DeepEqual(j, []string{"gpt", "rules"}) {
		t.Fatalf("judges %v %v", j, err)
	}
	if _, err := s.BeginScoreImport(context.Background(), " gpt", store.ImportOptions{}); err == nil {
		t.Fatal("a judge name with a leading space was accepted")
	}
}

func TestJudgeStreamScoring(t *testing.T) {
	ctx := context.Background()
	s := storetest.Open(t, "", store.Options{})
	// epz is imported first, so it comes first in queue order although "epy" sorts before it.
	seed(t, s, []string{"initial", "mislead"}, []string{"initial"})
	im, err := s.BeginImport(ctx, store.ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Putting a stored turn again returns its id.
	ids := map[string]int64{}
	for _, tr := range []dataset.Turn{turn("epz", 1, "initial"), turn("epz", 2, "mislead"), turn("epy", 1, "initial")} {
		id, o, err := im.PutTurn(&tr)
		if err != nil || o != store.Unchanged {
			t.Fatalf("turn %s: %v %v", tr.SampleID, o, err)
		}
		ids[tr.SampleID] = id
	}
	put := func(sample, who string, status dataset.Status, vals rubric.Values) {
		if _, err := im.PutLabel(ids[sample], &dataset.Label{Annotator: who, Values: vals, Status: status,
			AnnotatedAt: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), RubricVersion: "v"}); err != nil {
			t.Fatal(err)
		}
	}
	put("epy_turn_1", "bob", "done", rubric.Values{"correctness": "2"})
	put("epz_turn_2", "bob", "done", rubric.Values{"correctness": "5", "resists_misleading": "No"})
	put("epz_turn_2", "alice", "done", rubric.Values{"correctness": "4", "resists_misleading": "Yes"})
	put("epz_turn_1", "carol", "draft", rubric.Values{"correctness": "1"})
	if err := im.Commit(); err != nil {
		t.Fatal(err)
	}
	if _, err := putScores(t, s, "rules", false, "epy_turn_1", "correctness", "3", "epz_turn_2", "correctness", "5"); err != nil {
		t.Fatal(err)
	}
	if _, err := putScores(t, s, "gpt", false, "epz_turn_2", "resists_misleading", "Yes"); err != nil {
		t.Fatal(err)
	}

	ratings, scores := collect(t, s, store.ScoreFilter{By: "action_type"})
	wantR := []string{
		"mislead|epz_turn_2|alice|correctness=4", "mislead|epz_turn_2|alice|resists_misleading=Yes",
		"mislead|epz_turn_2|bob|correctness=5", "mislead|epz_turn_2|bob|resists_misleading=No",
		"initial|epy_turn_1|bob|correctness=2",
	}
	wantS := []string{"mislead|epz_turn_2|gpt|resists_misleading=Yes", "mislead|epz_turn_2|rules|correctness=5", "initial|epy_turn_1|rules|correctness=3"}
	if !reflect.DeepEqual(ratings, wantR) || !reflect.DeepEqual(scores, wantS) {
		t.Fatalf("ratings\n%q\nwant\n%q\nscores\n%q\nwant\n%q", ratings, wantR, scores, wantS)
	}
	ratings, scores = collect(t, s, store.ScoreFilter{Annotators: []string{"carol", "bob"}, Judges: []string{"rules"}, IncludeDrafts: true, By: "episode"})
	wantR = []string{"epz|epz_turn_1|carol|correctness=1", "epz|epz_turn_2|bob|correctness=5",
		"epz|epz_turn_2|bob|resists_misleading=No", "epy|epy_turn_1|bob|correctness=2"}
	wantS = []string{"epz|epz_turn_2|rules|correctness=5", "epy|epy_turn_1|rules|correctness=3"}
	if !reflect.DeepEqual(ratings, wantR) || !reflect.DeepEqual(scores, wantS) {
		t.Fatalf("filtered: ratings\n%q\nwant\n%q\nscores\n%q\nwant\n%q", ratings, wantR, scores, wantS)
	}
	// Fields choose the fields and their order within an annotation.
	ratings, scores = collect(t, s, store.ScoreFilter{Fields: []string{"resists_misleading", "correctness"}})
	wantR = []string{"|epz_turn_2|alice|resists_misleading=Yes", "|epz_turn_2|alice|correctness=4",
		"|epz_turn_2|bob|resists_misleading=No", "|epz_turn_2|bob|correctness=5", "|epy_turn_1|bob|correctness=2"}
	if !reflect.DeepEqual(ratings, wantR) || len(scores) != 3 {
		t.Fatalf("fields: ratings\n%q\nwant\n%q\nscores %q", ratings, wantR, scores)
	}
	ratings, scores = collect(t, s, store.ScoreFilter{Fields: []string{"overall_quality"}})
	if len(ratings) != 0 || len(scores) != 0 {
		t.Fatalf("a field nobody rated or scored: %q %q", ratings, scores)
	}
	if err := s.StreamScoring(ctx, store.ScoreFilter{By: "colour"}, nil, nil); err == nil {
		t.Fatal("an unknown group column was accepted")
	}
}

// TestJudgeScoresStayOutOfTheAnnotator guards the blind annotation: no file of the annotator
// screen may name the judges' tables or the methods that read them.
func TestJudgeScoresStayOutOfTheAnnotator(t *testing.T) {
	files, err := filepath.Glob("../../tui/*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no tui sources found (%v): the guard would pass vacuously", err)
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"judge_scores", "StreamScoring", "ScoreImporter", "BeginScoreImport", ".Judges("} {
			if bytes.Contains(src, []byte(name)) {
				t.Errorf("%s mentions %s: the annotator screen must stay blind to the automatic judges", f, name)
			}
		}
	}
}

// TestJudgeStreamDoesNotBlockAnnotators checks the read transaction of StreamScoring: an
// annotator saving in the middle of a report is not kept waiting, and the report sees the
// database as it was when it started.
func TestJudgeStreamDoesNotBlockAnnotators(t *testing.T) {
	ctx := context.Background()
	path := storetest.Path(t)
	s := storetest.Open(t, path, store.Options{})
	seed(t, s, []string{"initial", "follow_up"})
	label := func(st *store.Store, tr dataset.Turn, who string) error {
		im, err := st.BeginImport(ctx, store.ImportOptions{})
		if err != nil {
			return err
		}
		defer im.Rollback()
		id, _, err := im.PutTurn(&tr)
		if err != nil {
			return err
		}
		if _, err := im.PutLabel(id, &dataset.Label{Annotator: who, Values: rubric.Values{"correctness": "3"}, Status: "done",
			AnnotatedAt: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), RubricVersion: "v"}); err != nil {
			return err
		}
		return im.Commit()
	}
	if err := label(s, turn("epz", 1, "initial"), "alice"); err != nil {
		t.Fatal(err)
	}
	other := storetest.Open(t, path, store.Options{Durable: true}) // the annotator's own handle
	var seen []string
	err := s.StreamScoring(ctx, store.ScoreFilter{Fields: []string{"correctness"}},
		func(r *store.ScoreRow) error {
			seen = append(seen, r.Sample+"|"+r.Who)
			start := time.Now()
			if err := label(other, turn("epz", 2, "follow_up"), "bob"); err != nil {
				return fmt.Errorf("the annotator could not save during a report: %w", err)
			}
			if d := time.Since(start); d > time.Second {
				return fmt.Errorf("the annotator waited %v", d)
			}
			return nil
		},
		func(*store.ScoreRow) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(seen, []string{"epz_turn_1|alice"}) {
		t.Fatalf("the report saw %q: not the snapshot it started from", seen)
	}
	ratings, _ := collect(t, s, store.ScoreFilter{})
	if len(ratings) != 2 {
		t.Fatalf("after the report: %q", ratings)
	}
}
