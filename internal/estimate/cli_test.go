package estimate_test

import (
	"encoding/json"
	"testing"

	"github.com/m3bench/m3eval/internal/estimate"
	"github.com/m3bench/m3eval/internal/testkit"
	"github.com/m3bench/m3eval/internal/workflow"
)

// These helpers import through the importer and run m3eval estimate (its Request's Run) and
// sample --active (workflow.SampleCommand's Run) (moved from cmd/m3eval/estimate_test.go).

// The shared helpers, written once in internal/testkit.
var (
	isUsage      = testkit.IsUsage
	importFiles  = testkit.ImportFiles
	importScores = testkit.ImportScores
)

// runEstimate is m3eval estimate with args on the database at db, through its Request's Run.
func runEstimate(t testing.TB, db string, args ...string) (string, error) {
	t.Helper()
	out, _, err := testkit.RunCommand(t, &estimate.Request{}, db, args...)
	return out, err
}

func mustEstimate(t testing.TB, db string, args ...string) string {
	t.Helper()
	out, err := runEstimate(t, db, args...)
	if err != nil {
		t.Fatalf("estimate %v: %v", args, err)
	}
	return out
}

// estimateJSON runs estimate with --format json and decodes it into v.
func estimateJSON(t testing.TB, db string, v any, args ...string) {
	t.Helper()
	if err := json.Unmarshal([]byte(mustEstimate(t, db, append(args, "--format", "json")...)), v); err != nil {
		t.Fatal(err)
	}
}

// runSample is m3eval sample with args on the database at db, through its Run: what it
// shows and, after it, the notes it prints on standard error.
func runSample(t testing.TB, db string, args ...string) (string, error) {
	t.Helper()
	out, errw, err := testkit.RunCommand(t, &workflow.SampleCommand{}, db, args...)
	return out + errw, err
}

func mustSample(t testing.TB, db string, args ...string) string {
	t.Helper()
	out, err := runSample(t, db, args...)
	if err != nil {
		t.Fatalf("sample %v: %v", args, err)
	}
	return out
}
