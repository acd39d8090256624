package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/m3bench/m3eval/internal/dataset"
	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/store/storetest"
)

// StreamEpisodes gives a filtered turn's whole episode (the judge reads earlier turns) and
// marks the turns the filter chose; other episodes are left out.
func TestStreamEpisodesFilter(t *testing.T) {
	s := storetest.Open(t, "", store.Options{})
	seed(t, s, []string{"initial", "mislead", "follow_up"}, []string{"initial", "follow_up"})
	ctx := context.Background()
	var got []string
	err := s.StreamEpisodes(ctx, store.TurnFilter{"action_type": {"mislead"}}, func(turns []dataset.Turn, ids []int64, chosen []bool) error {
		for i, tt := range turns {
			mark := ""
			if chosen[i] {
				mark = "*"
			}
			if ids[i] == 0 {
				t.Errorf("no id for %s", tt.SampleID)
			}
			got = append(got, tt.SampleID+mark)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := "epz_turn_1 epz_turn_2* epz_turn_3"; strings.Join(got, " ") != want {
		t.Errorf("streamed %v, want %s", got, want)
	}
	got = nil
	s.StreamEpisodes(ctx, nil, func(turns []dataset.Turn, _ []int64, chosen []bool) error {
		got = append(got, turns[0].EpisodeID)
		return nil
	})
	if strings.Join(got, " ") != "epz epy" {
		t.Errorf("episodes %v, want queue order", got)
	}
	if err := s.StreamEpisodes(ctx, store.TurnFilter{"colour": {"red"}}, nil); err == nil {
		t.Error("unknown filter key accepted")
	}
}

// A judge's scores carry the rule version; other rules need replace.
func TestJudgeRunRuleVersion(t *testing.T) {
	s := storetest.Open(t, "", store.Options{})
	seed(t, s, []string{"initial", "mislead"})
	ctx := context.Background()
	var ids []int64
	s.StreamEpisodes(ctx, nil, func(_ []dataset.Turn, i []int64, _ []bool) error { ids = append(ids, i...); return nil })
	run := func(version string, replace bool, value string) error {
		im, err := s.BeginJudgeRun(ctx, "rules", version, []byte(`{"version":"`+version+`"}`), replace)
		if err != nil {
			return err
		}
		defer im.Rollback()
		if _, err := im.PutScore(ids[0], "correctness", value); err != nil {
			return err
		}
		return im.Commit()
	}
	if err := run("v1", false, "4"); err != nil {
		t.Fatal(err)
	}
	if err := run("v1", false, "4"); err != nil {
		t.Fatalf("same rules again: %v", err)
	}
	err := run("v2", false, "4")
	if !errors.Is(err, store.ErrConflict) || !strings.Contains(err.Error(), "v1") {
		t.Fatalf("other rules without replace: %v", err)
	}
	if err := run("v2", true, "4"); err != nil {
		t.Fatal(err)
	}
	v, err := s.JudgeRuleVersions(ctx, "rules")
	if err != nil || len(v) != 1 || v["v2"] != 1 {
		t.Fatalf("versions %v %v: the unchanged score should now carry v2", v, err)
	}
}

// PutTurnScores: a first run inserts a turn's scores in one go; a later run compares each.
func TestPutTurnScores(t *testing.T) {
	s := storetest.Open(t, "", store.Options{})
	seed(t, s, []string{"initial"})
	ctx := context.Background()
	var ids []int64
	s.StreamEpisodes(ctx, nil, func(_ []dataset.Turn, i []int64, _ []bool) error { ids = append(ids, i...); return nil })
	fields := []string{"correctness", "reasoning_completeness", "overall_quality"}
	run := func(values ...string) []dataset.Outcome {
		t.Helper()
		im, err := s.BeginJudgeRun(ctx, "rules", "v1", []byte("{}"), false)
		if err != nil {
			t.Fatal(err)
		}
		defer im.Rollback()
		o, err := im.PutTurnScores(ids[0], fields, values)
		if err != nil {
			t.Fatal(err)
		}
		if err := im.Commit(); err != nil {
			t.Fatal(err)
		}
		return o
	}
	if o := run("4", "", "3"); o[0] != dataset.Inserted || o[1] != dataset.Unchanged || o[2] != dataset.Inserted {
		t.Errorf("first run: %v", o)
	}
	if o := run("4", "", "3"); o[0] != dataset.Unchanged || o[2] != dataset.Unchanged {
		t.Errorf("second run: %v", o)
	}
	if v, _ := s.JudgeRuleVersions(ctx, "rules"); v["v1"] != 2 {
		t.Errorf("stored %v, want 2 scores of v1", v)
	}
}

// PutTurnsScores: a first run inserts many turns' scores a statement at a time (more rows
// than one statement takes, so the batch is cut), with the outcome of every field; a later
// run compares each, and a changed value names its sample.
func TestPutTurnsScores(t *testing.T) {
	s := storetest.Open(t, "", store.Options{})
	eps := make([][]string, 12)
	for i := range eps {
		eps[i] = []string{"initial", "initial", "initial", "initial", "initial", "initial", "initial", "initial", "initial", "initial"}
	}
	seed(t, s, eps...)
	ctx := context.Background()
	var rows []store.TurnScores
	s.StreamEpisodes(ctx, nil, func(turns []dataset.Turn, ids []int64, _ []bool) error {
		for i, id := range ids {
			n := len(rows)
			// Every seventh turn gives no correctness: nothing is stored for it.
			c := []string{"1", "2", "3", "4", "5"}[n%5]
			if n%7 == 0 {
				c = ""
			}
			rows = append(rows, store.TurnScores{TurnID: id, Sample: turns[i].SampleID,
				Fields: []string{"correctness", "reasoning_completeness", "overall_quality"}, Values: []string{c, "3", "4"}})
		}
		return nil
	})
	if len(rows) != 120 {
		t.Fatalf("%d turns, want 120", len(rows))
	}
	run := func(rows []store.TurnScores) ([][]dataset.Outcome, error) {
		t.Helper()
		im, err := s.BeginJudgeRun(ctx, "rules", "v1", []byte("{}"), false)
		if err != nil {
			t.Fatal(err)
		}
		defer im.Rollback()
		o, err := im.PutTurnsScores(rows)
		if err != nil {
			return nil, err
		}
		return o, im.Commit()
	}
	count := func(o [][]dataset.Outcome) map[dataset.Outcome]int {
		n := map[dataset.Outcome]int{}
		for _, turn := range o {
			for _, x := range turn {
				n[x]++
			}
		}
		return n
	}
	o, err := run(rows)
	if err != nil {
		t.Fatal(err)
	}
	if n := count(o); n[dataset.Inserted] != 360-18 || n[dataset.Unchanged] != 18 || len(o[0]) != 3 || o[0][0] != dataset.Unchanged || o[1][0] != dataset.Inserted {
		t.Errorf("first run: %v, first turns %v %v", n, o[0], o[1])
	}
	if v, _ := s.JudgeRuleVersions(ctx, "rules"); v["v1"] != 360-18 {
		t.Errorf("stored %v, want %d scores of v1", v, 360-18)
	}
	o, err = run(rows)
	if n := count(o); err != nil || n[dataset.Unchanged] != 360 {
		t.Errorf("second run: %v %v", n, err)
	}
	rows[50].Values[1] = "5"
	if _, err := run(rows); !errors.Is(err, store.ErrConflict) || !strings.Contains(err.Error(), "sample "+rows[50].Sample+": reasoning_completeness") {
		t.Errorf("a changed score: %v, want a conflict naming sample %s", err, rows[50].Sample)
	}
}
