package judgerun_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/m3bench/m3eval/internal/judgerun"
	"github.com/m3bench/m3eval/internal/rubric"
	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/testkit"
)

// These helpers import data through the importer and run m3eval judge and score through
// their options' Run: the checks of the rule judge live here (moved from
// cmd/m3eval/judge_test.go).

// The shared helpers, written once in internal/testkit.
var (
	isUsage       = testkit.IsUsage
	defaultRubric = testkit.DefaultRubric
	importFiles   = testkit.ImportFiles
)

// openDB opens (or creates) the database with the guide's rubric recorded unless readOnly,
// as the commands do.
func openDB(t testing.TB, path string, readOnly bool) (*store.Store, *rubric.Rubric) {
	t.Helper()
	return testkit.OpenDB(t, path, store.Options{ReadOnly: readOnly})
}

// runJudge is m3eval judge with args on the database at db (its Request's Run): the output
// and the error.
func runJudge(t testing.TB, db string, args ...string) (string, error) {
	t.Helper()
	out, _, err := testkit.RunCommand(t, &judgerun.Request{}, db, args...)
	return out, err
}

func mustJudge(t testing.TB, db string, args ...string) string {
	t.Helper()
	out, err := runJudge(t, db, args...)
	if err != nil {
		t.Fatalf("judge %v: %v", args, err)
	}
	return out
}

func mustScore(t testing.TB, db string, args ...string) string {
	t.Helper()
	return testkit.MustScore(t, db, testkit.ScoreOptions{NoCache: true}, args...)
}

func unmarshal(t testing.TB, s string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(s), v); err != nil {
		t.Fatal(err)
	}
}

// TestExplainStored calls judge --explain's reading of a stored judge with options: a name
// the database does not hold is ErrUnknownJudge, and a rule judge stored under another name
// explains the rules.
func TestExplainStored(t *testing.T) {
	db := filepath.Join(t.TempDir(), "m3eval.db")
	importFiles(t, db, "", filepath.Join("..", "..", "annotations", "demo", "episodes.jsonl"))
	mustJudge(t, db, "--name", "r2")
	s, rb := openDB(t, db, true)
	defer s.Close()
	ctx := context.Background()
	rules := func(w io.Writer) error { _, err := io.WriteString(w, "the rules\n"); return err }
	q := &judgerun.Request{Name: "nosuch", Explain: "demo_en_apples_1_turn_1"}
	if _, err := q.ExplainStored(ctx, s, rb, "team.db", rules); !errors.Is(err, judgerun.ErrUnknownJudge) {
		t.Errorf("unknown judge: %v, want ErrUnknownJudge", err)
	}
	// The command's Run says the same, for the command to list the judges it knows.
	if _, err := runJudge(t, db, "--explain", "demo_en_apples_1_turn_1", "--name", "nosuch"); !errors.Is(err, judgerun.ErrUnknownJudge) {
		t.Errorf("Run with an unknown judge: %v, want ErrUnknownJudge", err)
	}
	q.Name = "r2"
	write, err := q.ExplainStored(ctx, s, rb, "team.db", rules)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := write(&out); err != nil || out.String() != "the rules\n" {
		t.Errorf("rule judge r2: %q, %v; want the rules' explanation", out.String(), err)
	}
}
