package tui

import (
	"testing"
	"time"
)

// TestIdleIsCapped: pauses up to a minute between key presses count as active time, longer
// ones count as a minute (reading a long response is work; a lunch break is not).
func TestIdleIsCapped(t *testing.T) {
	now := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
	m := &annotateModel{now: func() time.Time { return now }}
	m.lastInput = now
	for _, step := range []time.Duration{10 * time.Second, 50 * time.Second, 61 * time.Second, 5 * time.Minute, 2 * time.Second} {
		now = now.Add(step)
		m.countActive()
	}
	if got, want := m.takeActive(), (10+50+60+60+2)*time.Second; got != want {
		t.Fatalf("active %v, want %v", got, want)
	}
	if m.takeActive() != 0 {
		t.Fatal("takeActive does not reset")
	}
}
