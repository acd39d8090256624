package tui

import (
	"context"
	"io"
	"path/filepath"
	"strconv"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/m3bench/m3eval/annotations"
	"github.com/m3bench/m3eval/internal/rubric"
	"github.com/m3bench/m3eval/internal/store/storetest"
)

// TestWidthCacheLaysOutOncePerWidth: the help screen's reference is laid out again only when
// the width changes (it was wrapped on every call while ? was open).
func TestWidthCacheLaysOutOncePerWidth(t *testing.T) {
	var c widthCache
	calls := 0
	render := func(w int) string { calls++; return "text at " + strconv.Itoa(w) }
	for _, w := range []int{80, 80, 80, 120, 120, 80} {
		if got, want := c.get(w, render), "text at "+strconv.Itoa(w); got != want {
			t.Fatalf("get(%d) = %q, want %q", w, got, want)
		}
	}
	if calls != 3 {
		t.Fatalf("laid out %d times for widths 80, 80, 80, 120, 120, 80; want 3", calls)
	}
}

// TestFrameIsWholeAfterEachKey: the frame drawn after a key is the frame drawn again with
// nothing new. It was not: when an answer changed the rubric's height (the comment rule's
// warning), the conversation was drawn at its old height and the frame stayed wrong until
// the next message.
func TestFrameIsWholeAfterEachKey(t *testing.T) {
	ctx := context.Background()
	s := storetest.Demo(t, filepath.Join(t.TempDir(), "d.db"))
	r, err := rubric.Parse(annotations.DefaultRubric)
	if err != nil {
		t.Fatal(err)
	}
	actions, err := rubric.ParseActions(annotations.Actions)
	if err != nil {
		t.Fatal(err)
	}
	q, err := s.OpenQueue(ctx, "frames", nil)
	if err != nil {
		t.Fatal(err)
	}
	rend := lipgloss.NewRenderer(io.Discard)
	rend.SetColorProfile(termenv.Ascii)
	for _, size := range [][2]int{{80, 24}, {100, 30}, {120, 40}} {
		m := New(Options{Context: ctx, Queue: q, Rubric: r, Actions: actions, Renderer: rend, StartSample: "demo_en_park_3_turn_4"})
		m.Update(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
		run(m, m.Init())
		for _, k := range []string{"1", "1", "n", "n", "5", "3"} {
			_, cmd := m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)})
			run(m, cmd)
			if first, again := m.View(), m.View(); first != again {
				t.Fatalf("%dx%d after %q: the frame changed when drawn again:\n%s\n---\n%s", size[0], size[1], k, first, again)
			}
		}
	}
}
