package scoring_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/m3bench/m3eval/internal/scoring"
	"github.com/m3bench/m3eval/internal/session"
	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/store/storetest"
)

// Moved from cmd/m3eval/intervalcache_test.go.

// cacheDB is the score fixture's database (three annotators, two judges, episodes) in a
// fresh directory, with an empty interval cache of the test's own.
func cacheDB(t *testing.T) (db, cache string) {
	t.Helper()
	dir := t.TempDir()
	cache = filepath.Join(dir, "cache")
	t.Setenv("M3EVAL_CACHE_DIR", cache)
	db = filepath.Join(dir, "c.db")
	importScoreFixture(t, db)
	return db, cache
}

// resampled runs the engine of m3eval score or report (args[2], after "--db DB") and returns
// its output (what the command wrote to -o FILE) and the bootstrap replicates it asked for.
func resampled(t *testing.T, args ...string) ([]byte, int64) {
	t.Helper()
	if len(args) < 3 || args[0] != "--db" {
		t.Fatalf("resampled %v", args)
	}
	db, command, rest := args[1], args[2], args[3:]
	before := scoring.Replicates.Load()
	var got string
	switch command {
	case "score":
		got = mustScore(t, db, rest...)
	case "report":
		got = reportOut(t, db, rest...)
	default:
		t.Fatalf("resampled %v", args)
	}
	return []byte(got), scoring.Replicates.Load() - before
}

// TestReportReusesIntervals: a second report on an unchanged database resamples nothing and
// writes the same bytes as the first and as a report computed without the cache; one edited
// label value (the counts unchanged) makes the next report resample, and the one after it
// reuse again.
func TestReportReusesIntervals(t *testing.T) {
	db, cache := cacheDB(t)
	report := func(name string, extra ...string) ([]byte, int64) {
		return resampled(t, append([]string{"--db", db, "report", "--bootstrap", "200", "--seed", "8", "--format", "json"}, extra...)...)
	}
	first, n1 := report("1.json")
	if n1 == 0 {
		t.Fatal("the first report drew no replicates")
	}
	if ents, _ := filepath.Glob(filepath.Join(cache, "*.json")); len(ents) != 1 {
		t.Fatalf("the cache holds %d entries after one report, want 1", len(ents))
	}
	second, n2 := report("2.json")
	if n2 != 0 {
		t.Errorf("the second report on an unchanged database drew %d replicates", n2)
	}
	if !bytes.Equal(first, second) {
		t.Error("the second report (intervals from the cache) differs from the first")
	}
	fresh, n3 := report("3.json", "--no-cache")
	if n3 != n1 {
		t.Errorf("--no-cache drew %d replicates, the first report %d", n3, n1)
	}
	if !bytes.Equal(first, fresh) {
		t.Error("the report with --no-cache differs from the one from the cache")
	}

	// alice changes one value of a label she had submitted: the same number of labels,
	// turns and scores, one value different.
	ctx := context.Background()
	s, err := store.Open(ctx, db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	q, err := s.OpenQueue(ctx, "alice", store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	ref, ok, err := q.First(ctx, false)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	v := "5" // the fixture's first turn has correctness 1 from alice
	if _, err := q.SetValue(ctx, session.Edit{TurnID: ref.TurnID, RubricVersion: storetest.Rubric(t).Version}, "correctness", &v); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	edited, n4 := report("4.json")
	if n4 != n1 {
		t.Errorf("after an edited label the report drew %d replicates, want %d", n4, n1)
	}
	if bytes.Equal(first, edited) {
		t.Error("the report after an edited label is the same as before it")
	}
	again, n5 := report("5.json")
	if n5 != 0 || !bytes.Equal(edited, again) {
		t.Errorf("the report after the edited one drew %d replicates (want 0); same output: %v", n5, bytes.Equal(edited, again))
	}
}

// TestScoreThenReportReuses: score with the report's settings (per action type, episodes,
// the same replicates and seed) stores the intervals the report then reads: the report
// resamples nothing and writes what it writes without the cache. score itself reuses its
// own intervals the second time, with the same output.
func TestScoreThenReportReuses(t *testing.T) {
	db, _ := cacheDB(t)
	score := []string{"--db", db, "score", "--by", "action_type", "--bootstrap", "150", "--seed", "9", "--format", "json"}
	s1, n1 := resampled(t, score...)
	if n1 == 0 {
		t.Fatal("score drew no replicates")
	}
	s2, n2 := resampled(t, score...)
	if n2 != 0 || !bytes.Equal(s1, s2) {
		t.Errorf("the second score drew %d replicates (want 0); same output: %v", n2, bytes.Equal(s1, s2))
	}
	report := []string{"--db", db, "report", "--bootstrap", "150", "--seed", "9", "--format", "json"}
	r1, n3 := resampled(t, report...)
	if n3 != 0 {
		t.Errorf("the report after score with matching flags drew %d replicates", n3)
	}
	r2, n4 := resampled(t, append(report, "--no-cache")...)
	if n4 == 0 || !bytes.Equal(r1, r2) {
		t.Errorf("--no-cache drew %d replicates; same output as from score's intervals: %v", n4, bytes.Equal(r1, r2))
	}
	// Another seed is another entry.
	if _, n := resampled(t, "--db", db, "report", "--bootstrap", "150", "--seed", "10", "--format", "json"); n == 0 {
		t.Error("a report with another seed took the intervals of seed 9")
	}
}

// TestCorruptIntervalCacheIgnored: an entry that is not what the cache wrote (garbage, an
// empty file, another key's entry) is recomputed, never an error, and rewritten.
func TestCorruptIntervalCacheIgnored(t *testing.T) {
	db, cache := cacheDB(t)
	args := []string{"--db", db, "report", "--bootstrap", "100", "--seed", "3", "--format", "json"}
	want, n := resampled(t, args...)
	ents, _ := filepath.Glob(filepath.Join(cache, "*.json"))
	if n == 0 || len(ents) != 1 {
		t.Fatalf("first report: %d replicates, %d cache entries", n, len(ents))
	}
	good, err := os.ReadFile(ents[0])
	if err != nil {
		t.Fatal(err)
	}
	for i, bad := range [][]byte{[]byte("not json {"), nil, bytes.Replace(good, []byte(`"key":"`), []byte(`"key":"0`), 1),
		bytes.Replace(good, []byte(`"intervals":[{`), []byte(`"intervals":[{"b":"x",`), 1), good[:len(good)/2]} {
		if err := os.WriteFile(ents[0], bad, 0o600); err != nil {
			t.Fatal(err)
		}
		got, n := resampled(t, args...)
		if n == 0 {
			t.Errorf("case %d: a corrupt entry was used", i)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("case %d: the report after a corrupt entry differs", i)
		}
		if _, n := resampled(t, args...); n != 0 {
			t.Errorf("case %d: the entry was not rewritten (%d replicates drawn)", i, n)
		}
	}
}
