package main

import (
	"bytes"
	"context"
	"errors"
	"github.com/m3bench/m3eval/internal/testkit"
	"path/filepath"
	"testing"
)

// Helpers the command's tests share (kept from the agree tests that moved to
// internal/scoring/longform).

// scoreFixture is the score engine's fixture (turns, three annotators' labels, two judges'
// scores), kept beside the engine's tests in internal/scoring.
const scoreFixture = "../../internal/scoring/testdata/score"

// scoreDB imports the fixture's turns, the labels of three annotators and two judges' scores
// into a fresh database, all through the command line.
func scoreDB(t *testing.T) string {
	t.Helper()
	db := filepath.Join(t.TempDir(), "m3eval.db")
	fx := func(name string) string { return filepath.Join(scoreFixture, name) }
	mustRun(t, "--db", db, "import", fx("turns.jsonl"))
	for _, a := range []string{"alice", "bob", "carol"} {
		mustRun(t, "--db", db, "import", "--annotator", a, fx("labels_"+a+".jsonl"))
	}
	mustRun(t, "--db", db, "import-scores", "--judge", "gpt", fx("judge_gpt.jsonl"))
	mustRun(t, "--db", db, "import-scores", "--judge", "rules", fx("judge_rules.csv"))
	return db
}

// scoreJSON runs m3eval score with args and returns its JSON report.
func scoreJSON(t *testing.T, db string, args ...string) map[string]any {
	t.Helper()
	out := filepath.Join(t.TempDir(), "score.json")
	mustRun(t, append([]string{"--db", db, "score", "--format", "json", "-o", out}, args...)...)
	var doc map[string]any
	testkit.ReadJSON(t, out, &doc)
	return doc
}

// runBoth executes m3eval in-process and returns standard output and standard error apart.
func runBoth(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	cmd := newRootCmd()
	var out, errb bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errb)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(context.Background())
	return out.String(), errb.String(), err
}

// exitCodeOf is the exit status main gives err: 2 for usage errors, 1 for others.
func exitCodeOf(err error) int {
	var ue *usageError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ue):
		return 2
	default:
		return 1
	}
}

// judgeSets holds the human-labeled sets the judges are held to, kept beside the rule
// judge's tests in internal/judgerun.
const judgeSets = "../../internal/judgerun/testdata/judge"
