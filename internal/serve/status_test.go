package serve

import (
	"context"
	"io"
	"sync/atomic"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
)

// runStatus runs the status screen in a real Bubble Tea program (no terminal) with a report
// that counts its reads; the timer is an hour, so every read after the first comes from an
// announced change.
func runStatus(t *testing.T, changes chan struct{}) *atomic.Int32 {
	t.Helper()
	var reads atomic.Int32
	ctx, cancel := context.WithCancel(context.Background())
	m := NewStatus(ctx, "m3eval · test", lipgloss.NewRenderer(io.Discard), func(context.Context) (string, error) {
		reads.Add(1)
		return "team", nil
	}, changes).(*statusModel)
	m.refresh = time.Hour
	p := tea.NewProgram(m, tea.WithInput(nil), tea.WithOutput(io.Discard), tea.WithContext(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.Run()
	}()
	t.Cleanup(func() {
		cancel()
		close(changes)
		<-done
	})
	return &reads
}

// waitReads waits until the report has been read n times.
func waitReads(t *testing.T, reads *atomic.Int32, n int32) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for reads.Load() < n {
		if time.Now().After(deadline) {
			t.Fatalf("waited 30 s for read %d; %d so far", n, reads.Load())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestStatusReadsAgainOnChange: an announced change makes the status screen read the
// database again without waiting for its timer, and a burst of changes while one read is
// settling makes one read, not one per change.
func TestStatusReadsAgainOnChange(t *testing.T) {
	changes := make(chan struct{}, 1)
	reads := runStatus(t, changes)
	waitReads(t, reads, 1)
	changes <- struct{}{}
	waitReads(t, reads, 2)

	// A burst: the screen takes the first change, then waits statusSettle; the others merge
	// into the one the channel holds (as store.WatchChanges merges them).
	for i := 0; i < 50; i++ {
		select {
		case changes <- struct{}{}:
		default:
		}
	}
	waitReads(t, reads, 3)
	// Whatever the burst left pending gives at most one more read; then the screen is idle.
	// (A bound, not a sleep to pass: with a read per change it would reach 52.)
	time.Sleep(3 * statusSettle)
	if n := reads.Load(); n > 4 {
		t.Errorf("%d reads after a burst of 50 changes, want at most 4", n)
	}
}

// TestStatusWithoutChangesKeepsTimer: with no changes channel (SQLite) the screen reads
// once and then only on its timer.
func TestStatusWithoutChangesKeepsTimer(t *testing.T) {
	var reads atomic.Int32
	m := NewStatus(context.Background(), "t", lipgloss.NewRenderer(io.Discard), func(context.Context) (string, error) {
		reads.Add(1)
		return "", nil
	}, nil).(*statusModel)
	if cmd := m.watchCmd(); cmd != nil {
		t.Error("a screen without changes waits for them")
	}
	_, cmd := m.Update(reportMsg{text: "x", at: time.Now()})
	if cmd == nil {
		t.Fatal("no timer after a read")
	}
	// A stale timer (from before the latest read) reads nothing.
	if _, cmd := m.Update(refreshMsg{gen: m.gen - 1}); cmd != nil {
		t.Error("a stale timer started a read")
	}
	if _, cmd := m.Update(refreshMsg{gen: m.gen}); cmd == nil {
		t.Error("the current timer did not start a read")
	}
}
