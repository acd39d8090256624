package store_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/m3bench/m3eval/internal/sample"
	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/store/storetest"
)

// TestCompleter: prefixes select from the sorted names, the limit caps them, a missing file is
// not created.
func TestCompleter(t *testing.T) {
	ctx := context.Background()
	path := storetest.Path(t)
	s := storetest.Open(t, path, store.Options{})
	seed(t, s, []string{"initial", "mislead", "follow_up"}, []string{"initial"})
	for _, name := range []string{"alice", "alan", "bob"} {
		if _, err := s.OpenQueue(ctx, name, nil); err != nil {
			t.Fatal(err)
		}
	}
	// alice's repeat row ("alice (repeat N)") is hidden from her and from every list.
	ids := turnIDs(t, s, "epz_turn_1")
	strata := []sample.Stratum{{Key: []string{"x"}, Available: 1, Allocated: 1, Drawn: 1, Items: ids}}
	if err := s.SaveSample(ctx, store.SampleInfo{Name: "p", Size: 1}, strata); err != nil {
		t.Fatal(err)
	}
	rows := []store.Assigned{{Annotator: "alice", TurnID: ids[0], Kind: store.AssignMain}}
	if err := s.SaveAssignment(ctx, "p", store.CampaignSettings{Overlap: 1, RepeatRate: 1}, rows); err != nil {
		t.Fatal(err)
	}
	if _, err := s.OpenRepeatQueue(ctx, "alice", "p", nil); err != nil {
		t.Fatal(err)
	}
	for _, judge := range []string{"rules", "gpt-4o", "gpt-4o-mini"} {
		im, err := s.BeginScoreImport(ctx, judge, store.ImportOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := im.Commit(); err != nil {
			t.Fatal(err)
		}
	}

	c, err := store.OpenCompleter(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, tc := range []struct {
		what   store.Completion
		prefix string
		limit  int
		want   []string
	}{
		{store.CompleteAnnotators, "al", 10, []string{"alan", "alice"}},
		{store.CompleteAnnotators, "", 10, []string{"alan", "alice", "bob", "probe"}}, // probe: turnIDs's reader
		{store.CompleteAnnotators, "carol", 10, nil},
		{store.CompleteJudges, "gpt", 10, []string{"gpt-4o", "gpt-4o-mini"}},
		{store.CompleteJudges, "gpt", 1, []string{"gpt-4o"}},
		{store.CompleteSampleIDs, "epz_turn_", 10, []string{"epz_turn_1", "epz_turn_2", "epz_turn_3"}},
		{store.CompleteSampleIDs, "epy", 10, []string{"epy_turn_1"}},
		{store.CompleteSampleIDs, "", 2, []string{"epy_turn_1", "epz_turn_1"}},
		{store.CompleteSamples, "", 10, []string{"p"}},
		{store.CompleteSamples, "q", 10, nil},
	} {
		got, err := c.Complete(ctx, tc.what, tc.prefix, tc.limit)
		if err != nil {
			t.Fatalf("%s %q: %v", tc.what, tc.prefix, err)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s %q limit %d: %q, want %q", tc.what, tc.prefix, tc.limit, got, tc.want)
		}
	}
	if _, err := c.Complete(ctx, store.Completion("DROP TABLE turns"), "", 1); err == nil {
		t.Error("an unknown completion was answered")
	}
	missing := filepath.Join(t.TempDir(), "none.db")
	if _, err := store.OpenCompleter(ctx, missing); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("missing database: %v, want ErrNotFound", err)
	}
	if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("completion created %s: %v", missing, err)
	}
}
