package workflow_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/m3bench/m3eval/internal/session"
	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/testkit"
	"github.com/m3bench/m3eval/internal/workflow"
)

// TestTeamTodayLeavesImportsOut (issue 40 item 9): the admin screen's "today" counts labels
// submitted in a session, not labels imported with today's time (bob imported 35, annotated
// none; alice submitted one).
func TestTeamTodayLeavesImportsOut(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := filepath.Join(dir, "team.db")
	importFiles(t, db, "")
	p := filepath.Join(dir, "bob.jsonl")
	testkit.WriteDemoLabels(t, p, func(int, map[string]any) (int, float64) { return 3, 30 })
	importFiles(t, db, "bob", p) // annotated_at 2026-03-01T10:mm

	s, r := openDBWith(t, db, store.Options{}, defaultRubric(t))
	defer s.Close()
	day := time.Date(2026, 3, 1, 23, 0, 0, 0, time.UTC)
	s.Now = func() time.Time { return day.Add(-time.Hour) }
	q, err := s.OpenQueue(ctx, "alice", nil)
	if err != nil {
		t.Fatal(err)
	}
	it, err := q.Load(ctx, mustFirst(t, q))
	if err != nil {
		t.Fatal(err)
	}
	e := session.Edit{TurnID: it.Ref.TurnID, RubricVersion: r.Version}
	for field, v := range r.Apply(map[string]string{"correctness": "3", "reasoning_completeness": "3", "overall_quality": "3"}, it.Turn.Item()) {
		v := v
		if _, err := q.SetValue(ctx, e, field, &v); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := q.Submit(ctx, e); err != nil {
		t.Fatal(err)
	}
	team, err := workflow.TeamStatus(ctx, s, r, day.In(time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if team.Today["bob"] != 0 || team.Today["alice"] != 1 {
		t.Fatalf("today: %v; want alice 1 (submitted), bob 0 (imported)", team.Today)
	}
}

// mustFirst is the first item of q.
func mustFirst(t *testing.T, q *store.Queue) session.Ref {
	t.Helper()
	ref, ok, err := q.First(context.Background(), false)
	if err != nil || !ok {
		t.Fatalf("first item: %v %v", ok, err)
	}
	return ref
}
