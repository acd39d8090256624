package scoring_test

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/m3bench/m3eval/internal/intervalcache"
	"github.com/m3bench/m3eval/internal/scoring/longform"
	"github.com/m3bench/m3eval/internal/testkit"
)

// These helpers build the score fixture's database through the importer and run m3eval
// score through its Request's Run (testkit.RunScore): the checks of the scores live here,
// beside the code they check (moved from cmd/m3eval).

// scoreFixture is made by testdata/score/gen.py; its oracle_*.json files are the reference
// oracle's output on the same ratings in long form (testdata/score/oracle.sh), so the
// expected numbers come from outside m3eval.
const scoreFixture = "testdata/score"

// TestMain gives the tests an interval cache of their own, empty at the start, so that no run
// reads what an earlier run or the user's own commands stored.
func TestMain(m *testing.M) {
	cache, err := os.MkdirTemp("", "m3eval-cache-")
	if err == nil {
		os.Setenv(intervalcache.EnvDir, cache)
	}
	code := m.Run()
	if cache != "" {
		os.RemoveAll(cache)
	}
	os.Exit(code)
}

// The shared helpers, written once in internal/testkit.
var (
	isUsage      = testkit.IsUsage
	importFiles  = testkit.ImportFiles
	importScores = testkit.ImportScores
)

// importScoreFixture imports the fixture's turns, the labels of three annotators and two
// judges' scores into the database at db.
func importScoreFixture(t testing.TB, db string) {
	t.Helper()
	fx := func(name string) string { return filepath.Join(scoreFixture, name) }
	importFiles(t, db, "", fx("turns.jsonl"))
	for _, a := range []string{"alice", "bob", "carol"} {
		importFiles(t, db, a, fx("labels_"+a+".jsonl"))
	}
	importScores(t, db, "gpt", fx("judge_gpt.jsonl"))
	importScores(t, db, "rules", fx("judge_rules.csv"))
}

// scoreDB is a fresh database holding the score fixture.
func scoreDB(t testing.TB) string {
	t.Helper()
	db := filepath.Join(t.TempDir(), "m3eval.db")
	importScoreFixture(t, db)
	return db
}

// runScore is m3eval score (testkit.RunScore) with the interval cache TestMain gives the
// tests.
func runScore(t testing.TB, db string, args ...string) (string, error) {
	t.Helper()
	return testkit.RunScore(t, db, testkit.ScoreOptions{}, args...)
}

func mustScore(t testing.TB, db string, args ...string) string {
	t.Helper()
	return testkit.MustScore(t, db, testkit.ScoreOptions{}, args...)
}

// scoreJSON runs score with args and returns its JSON report.
func scoreJSON(t testing.TB, db string, args ...string) map[string]any {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal([]byte(mustScore(t, db, append([]string{"--format", "json"}, args...)...)), &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// agreeJSON runs m3eval agree (its Request's Run) with args, the ratings file first, and
// returns its JSON report.
func agreeJSON(t testing.TB, args ...string) map[string]any {
	t.Helper()
	q := &longform.Request{}
	q.Input.Files.Ratings = args[0]
	out, _, err := testkit.RunCommand(t, q, "", append(args[1:], "--format", "json")...)
	if err != nil {
		t.Fatalf("agree %v: %v", args, err)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

func readCSV(t testing.TB, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return rows
}
