package tui

import (
	"testing"
	"time"
)

// TestIdleIsNotCounted: pauses up to a minute between key presses count as active time,
// longer ones do not count at all.
func TestIdleIsNotCounted(t *testing.T) {
	now := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
	m := &annotateModel{now: func() time.Time { return now }}
	m.lastInput = now
	for _, step := range []time.Duration{10 * time.Second, 50 * time.Second, 61 * time.Second, 5 * time.Minute, 2 * time.Second} {
		now = now.Add(step)
		m.countActive()
	}
	if got, want := m.takeActive(), 62*time.Second; got != want {
		t.Fatalf("active %v, want %v", got, want)
	}
	if m.takeActive() != 0 {
		t.Fatal("takeActive does not reset")
	}
}
