package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/m3bench/m3eval/internal/dataset"
	"github.com/m3bench/m3eval/internal/rubric"
	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/store/storetest"
)

// activity reads what the report's campaign and trend charts read.
func activity(t *testing.T, s *store.Store) (done int, active time.Duration, counts []store.LabelCount) {
	t.Helper()
	ctx := context.Background()
	err := s.StreamActivity(ctx, func(a *store.Activity) error {
		if a.Done {
			done++
			active += a.Active
			if a.Submitted.IsZero() {
				t.Errorf("done annotation of %s without a submission time", a.Annotator)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	counts, err = s.LabelCounts(ctx, []string{"correctness"})
	if err != nil {
		t.Fatal(err)
	}
	return done, active, counts
}

// TestActivityAndLabelCounts: the report's campaign and trend queries count done labels by
// turn position and meta.confusable_objects, and see nothing of an import still running.
func TestActivityAndLabelCounts(t *testing.T) {
	ctx := context.Background()
	path := storetest.Path(t)
	s := storetest.Open(t, path, store.Options{})
	im, err := s.BeginImport(ctx, store.ImportOptions{Source: "labels.jsonl"})
	if err != nil {
		t.Fatal(err)
	}
	defer im.Rollback()
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	for i := 0; i < 120; i += 40 {
		var ts []dataset.Turn
		for j := i; j < i+40; j++ {
			tr := turn(fmt.Sprintf("ep%03d", j/4), j%4+1, "follow_up")
			if j%2 == 0 {
				tr.Meta = []byte(fmt.Sprintf(`{"confusable_objects": %d}`, j%3))
			} else {
				tr.Meta = []byte(`{"confusable_objects": "many"}`) // not an integer: no bin
			}
			ts = append(ts, tr)
		}
		ids, _, err := im.PutTurns(ts)
		if err != nil {
			t.Fatal(err)
		}
		for k, id := range ids {
			status := dataset.StatusDone
			if k == 0 {
				status = dataset.StatusDraft
			}
			if _, err := im.PutLabel(id, &dataset.Label{Annotator: "ann", Values: rubric.Values{"correctness": fmt.Sprint(1 + (i+k)%5)},
				Status: status, AnnotatedAt: at, ActiveSeconds: 2.5, RubricVersion: "v"}); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(60 * time.Millisecond) // past the import's chunk time: the chunk commits
	}
	other := storetest.Open(t, path, store.Options{})
	if done, _, counts := activity(t, other); done != 0 || len(counts) != 0 {
		t.Fatalf("an unfinished import is visible to the report: %d done, %d counts", done, len(counts))
	}
	if err := im.Commit(); err != nil {
		t.Fatal(err)
	}
	done, active, counts := activity(t, other)
	if done != 117 || active != 117*2500*time.Millisecond {
		t.Errorf("%d done, %v active; want 117 and %v", done, active, 117*2500*time.Millisecond)
	}
	// Expected counts, from the labels written above.
	type key struct {
		turn, conf int
		value      string
	}
	want := map[key]int{}
	for i := 0; i < 120; i++ {
		if i%40 == 0 {
			continue // the draft
		}
		conf := -1
		if i%2 == 0 {
			conf = i % 3
		}
		want[key{i%4 + 1, conf, fmt.Sprint(1 + i%5)}]++
	}
	got := map[key]int{}
	for _, c := range counts {
		if c.Field != "correctness" {
			t.Errorf("field %s", c.Field)
		}
		got[key{c.Turn, c.Confusable, c.Value}] += c.N
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("label counts\n got %v\nwant %v", got, want)
	}
}
