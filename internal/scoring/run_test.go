package scoring_test

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/m3bench/m3eval/internal/cmdio"
	"github.com/m3bench/m3eval/internal/scoring"
	"github.com/m3bench/m3eval/internal/usage"
)

// TestRunWithoutLabels calls score's Run with options, not flags, on a database of turns
// and judges' scores but no human labels: the table says there is nothing to score, two
// judges cannot be compared (an error naming the database), --metrics refuses a judge as a
// usage error, and JSON keeps its shape.
func TestRunWithoutLabels(t *testing.T) {
	db := filepath.Join(t.TempDir(), "team.db")
	importFiles(t, db, "", filepath.Join(scoreFixture, "turns.jsonl"))
	importScores(t, db, "gpt", filepath.Join(scoreFixture, "judge_gpt.jsonl"))
	importScores(t, db, "rules", filepath.Join(scoreFixture, "judge_rules.csv"))
	run := func(q *scoring.Request) (string, error) {
		t.Helper()
		q.NoCache = true
		var out bytes.Buffer
		err := q.Run(context.Background(), &cmdio.IO{DB: db, Out: &out})
		return out.String(), err
	}

	if out, err := run(&scoring.Request{}); err != nil || out != scoring.NoLabelsLine+"\n" {
		t.Errorf("table: %q, %v; want the no-labels line", out, err)
	}
	_, err := run(&scoring.Request{Judges: []string{"gpt", "rules"}})
	if err == nil || errors.Is(err, usage.Err) || !strings.Contains(err.Error(), "team.db has none") {
		t.Errorf("two judges without labels: %v (usage %v)", err, errors.Is(err, usage.Err))
	}
	_, err = run(&scoring.Request{Metrics: true, Judges: []string{"gpt"}})
	if !errors.Is(err, usage.Err) || !strings.Contains(err.Error(), "drop --judge") {
		t.Errorf("--metrics --judge: %v", err)
	}
	q := &scoring.Request{}
	q.Format = "json"
	out, err := run(q)
	if err != nil || !strings.HasPrefix(out, "{") {
		t.Errorf("json: %.80q, %v; want the report's JSON", out, err)
	}
}

// TestRunMetricsBootstrapDefault: --metrics without --bootstrap (BootstrapGiven false)
// resamples with the metrics' default; given, --bootstrap 0 means none.
func TestRunMetricsBootstrapDefault(t *testing.T) {
	db := filepath.Join(t.TempDir(), "m3eval.db")
	importFiles(t, db, "", filepath.Join(scoreFixture, "turns.jsonl"))
	e := &cmdio.IO{DB: db}
	q := &scoring.Request{Metrics: true}
	q.Format = "json"
	if err := q.Run(context.Background(), e); err != nil {
		t.Fatal(err)
	}
	if q.Bootstrap != -1 {
		t.Errorf("--metrics without --bootstrap: Bootstrap %d, want -1 (the metrics' default)", q.Bootstrap)
	}
	q = &scoring.Request{Metrics: true, BootstrapGiven: true}
	q.Format = "json"
	if err := q.Run(context.Background(), e); err != nil {
		t.Fatal(err)
	}
	if q.Bootstrap != 0 {
		t.Errorf("--metrics --bootstrap 0: Bootstrap %d, want 0", q.Bootstrap)
	}
}
