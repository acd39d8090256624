package workflow

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/m3bench/m3eval/internal/store"
)

// TestWriteTeam: the pace is today's labels per hour since the first of them (at least a
// minute), a dash without labels today; names are escaped; an empty database says so.
func TestWriteTeam(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	team := &Team{
		Status: &store.Status{Turns: 40, Episodes: 4, Annotators: []store.AnnotatorStatus{
			{Name: "alice", Done: 12, Draft: 1, MedianActive: 41600 * time.Millisecond, HasMedian: true},
			{Name: "bob\x1b[2J", Done: 3, Flagged: 2, Skipped: 1},
			{Name: "carol", Done: 1},
		}},
		Now:   now,
		Today: map[string]int{"alice": 6, "carol": 1},
		First: map[string]time.Time{"alice": now.Add(-2 * time.Hour), "carol": now.Add(-time.Second)},
	}
	var b bytes.Buffer
	if err := WriteTeam(&b, team); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	fields := func(prefix string) []string {
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), prefix) {
				return strings.Fields(l)
			}
		}
		t.Fatalf("no line for %s:\n%s", prefix, out)
		return nil
	}
	if !strings.HasPrefix(out, "40 items in 4 episodes\n\n") {
		t.Errorf("head:\n%s", out)
	}
	if got := strings.Join(fields("alice"), " "); got != "alice 12 1 0 0 6 3.0 42s" {
		t.Errorf("alice: %q", got)
	}
	if got := strings.Join(fields("bob"), " "); got != "bob␛[2J 3 0 2 1 0 — —" || strings.Contains(out, "\x1b") {
		t.Errorf("bob: %q", got)
	}
	if got := fields("carol")[6]; got != "60.0" { // one label one second ago counts as a minute
		t.Errorf("carol's pace %s", got)
	}
	b.Reset()
	if err := WriteTeam(&b, &Team{Status: &store.Status{}, Now: now}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "no annotations yet\n") {
		t.Errorf("empty:\n%s", b.String())
	}
}
