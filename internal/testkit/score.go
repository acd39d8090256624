package testkit

import (
	"encoding/json"
	"testing"

	"github.com/m3bench/m3eval/internal/scoring"
)

// ScoreOptions are where a test's run of m3eval score differs from the command's.
type ScoreOptions struct {
	// NoCache adds --no-cache: the run neither reads nor writes the interval cache (the
	// rule judge's tests); without it the run uses the cache the environment names (the
	// score tests give it one of their own in TestMain).
	NoCache bool
}

// RunScore is m3eval score with args on the database at db, through its Request's Run
// (RunCommand): the output and the error. A flag error comes back wrapped in ErrFlag.
func RunScore(t testing.TB, db string, o ScoreOptions, args ...string) (string, error) {
	t.Helper()
	if o.NoCache {
		args = append(args[:len(args):len(args)], "--no-cache")
	}
	out, _, err := RunCommand(t, &scoring.Request{}, db, args...)
	return out, err
}

// MustScore is RunScore that fails the test on an error.
func MustScore(t testing.TB, db string, o ScoreOptions, args ...string) string {
	t.Helper()
	out, err := RunScore(t, db, o, args...)
	if err != nil {
		t.Fatalf("score %v: %v", args, err)
	}
	return out
}

// ScoredTurns is the number of labeled turns judge has scores on (score's
// n_items_with_auto of the correctness field, without the interval cache); an error of
// score or of its JSON fails the test, so that a broken run never reads as zero turns.
func ScoredTurns(t testing.TB, db, judge string) float64 {
	t.Helper()
	out := MustScore(t, db, ScoreOptions{NoCache: true}, "--judge", judge, "--format", "json")
	var rep struct {
		Fields map[string]struct {
			HumanVsAuto map[string]any `json:"human_vs_auto"`
		} `json:"fields"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("score --judge %s --format json: %v", judge, err)
	}
	n, _ := rep.Fields["correctness"].HumanVsAuto["n_items_with_auto"].(float64)
	return n
}
