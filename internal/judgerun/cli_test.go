package judgerun_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/m3bench/m3eval/annotations"
	"github.com/m3bench/m3eval/internal/judgerun"
	"github.com/m3bench/m3eval/internal/rubric"
	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/testkit"
)

// These helpers import data through the importer and run m3eval judge's and score's engines
// (their flags, judgerun.Request.Run, scoring.Score) the way the commands do, without the
// commands: the checks of the rule judge live here (moved from cmd/m3eval/judge_test.go).

// The shared helpers, written once in internal/testkit.
var (
	errFlag       = testkit.ErrFlag
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

// runJudge parses args as m3eval judge's flags and runs the rule judge, or with --endpoint
// the model judge (Request.PrepareModel and RunModel); --explain SAMPLE --name NAME of a
// model judge shows its stored note (WriteModelNote), as the command does. It returns the
// output and the error.
func runJudge(t testing.TB, db string, args ...string) (string, error) {
	t.Helper()
	q := &judgerun.Request{}
	fs := pflag.NewFlagSet("judge", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	q.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		return "", fmt.Errorf("%w: %v", errFlag, err)
	}
	filter, err := q.Check()
	if err != nil {
		return "", err
	}
	ctx := context.Background()
	rb := defaultRubric(t)
	var out bytes.Buffer
	if q.Model.Endpoint != "" {
		actions, err := rubric.ParseActions(annotations.Actions)
		if err != nil {
			t.Fatal(err)
		}
		pm, err := q.PrepareModel(rb, actions)
		if err != nil {
			return "", err
		}
		s, _ := openDB(t, db, false)
		defer s.Close()
		err = q.RunModel(ctx, s, pm, filter, nil, &out)
		return out.String(), err
	}
	j, err := judgerun.NewJudge(rb, q.Rules)
	if err != nil {
		return "", err
	}
	s, _ := openDB(t, db, q.Explain != "")
	defer s.Close()
	if q.Explain != "" && q.Name != "rules" {
		write, err := q.ExplainStored(ctx, s, rb, "m3eval.db", func(w io.Writer) error { return q.Run(ctx, s, rb, j, filter, w) })
		if err != nil {
			return "", err
		}
		err = write(&out)
		return out.String(), err
	}
	err = q.Run(ctx, s, rb, j, filter, &out)
	return out.String(), err
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
