package tui

import (
	"io"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/m3bench/m3eval/annotations"
	"github.com/m3bench/m3eval/internal/campaign"
	"github.com/m3bench/m3eval/internal/rubric"
	"github.com/m3bench/m3eval/internal/session"
)

// keyMsgOf is the key message a terminal delivers for a key name of bubbles/key ("tab",
// "ctrl+s", " ", "y"), found by Bubble Tea's own names for its key types.
func keyMsgOf(t *testing.T, name string) tea.KeyMsg {
	for kt := tea.KeyType(-200); kt < 200; kt++ {
		if kt == tea.KeyRunes {
			continue
		}
		if k := (tea.KeyMsg{Type: kt}); k.String() == name {
			return k
		}
	}
	if r := []rune(name); len(r) == 1 {
		return tea.KeyMsg{Type: tea.KeyRunes, Runes: r}
	}
	t.Fatalf("no key message for %q", name)
	return tea.KeyMsg{}
}

// checkTable: every hint a table shows (footer or help screen) is a row that applies, and
// each of its keys reaches that row: no earlier row takes it. Otherwise the help would
// promise a key that does something else.
func checkTable[M any](t *testing.T, name string, table bindings[M], m M) {
	t.Helper()
	for i, b := range table {
		shown := b.footer != nil && b.footer(m)
		if !shown && b.group == 0 {
			continue
		}
		if shown && b.when != nil && !b.when(m) {
			t.Errorf("%s: the footer shows %q, which does not apply now", name, b.key.Help().Key)
		}
		if b.when != nil && !b.when(m) {
			continue
		}
		for _, k := range b.key.Keys() {
			msg := keyMsgOf(t, k)
			for j, o := range table[:i] {
				if (o.when == nil || o.when(m)) && o.key.Enabled() && matches(msg, o.key.Keys()) {
					t.Errorf("%s: %q is shown as %q but row %d (%q) takes it first", name, k, b.key.Help().Desc, j, o.key.Help().Desc)
				}
			}
			if b.key.Enabled() && !matches(msg, b.key.Keys()) {
				t.Errorf("%s: the key message for %q does not match its own row", name, k)
			}
		}
	}
}

func matches(msg tea.KeyMsg, keys []string) bool {
	for _, k := range keys {
		if msg.String() == k {
			return true
		}
	}
	return false
}

func testRubric(t *testing.T) *rubric.Rubric {
	r, err := rubric.Parse(annotations.DefaultRubric)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestAnnotateKeyTables: in each mode, drafting and reviewing a submitted label, the
// annotate screen's hints are the keys it handles.
func TestAnnotateKeyTables(t *testing.T) {
	rend := lipgloss.NewRenderer(io.Discard)
	m := newAnnotateModel(Options{Rubric: testRubric(t), Now: time.Now, Images: defaultImageSource{}, Graphics: GraphicsNone}, DefaultStyles(rend), rend)
	m.item = &session.Item{}
	for _, ro := range []bool{false, true} {
		m.readOnly = ro
		for mode, table := range m.tables {
			checkTable(t, "annotate mode "+string(rune('0'+mode)), table, m)
		}
	}
	// The footer's hints, in the order they had before the table (the goldens pin the
	// drafting one; a submitted label's is shorter).
	for _, tc := range []struct {
		readOnly bool
		want     string
	}{
		{false, "score yes/no/na next field submit prev item next item comment undo read"},
		{true, "edit submitted prev item next item read image full screen open images"},
	} {
		m.readOnly = tc.readOnly
		var descs []string
		for _, b := range m.ShortHelp() {
			descs = append(descs, b.Help().Desc)
		}
		if got := strings.Join(descs, " "); got != tc.want {
			t.Errorf("read-only %v: footer %q, want %q", tc.readOnly, got, tc.want)
		}
	}
	m.readOnly = false
	full := m.FullHelp()
	seen := map[string]bool{}
	for _, g := range full {
		for _, b := range g {
			if seen[b.Help().Desc] {
				t.Errorf("the help screen lists %q twice", b.Help().Desc)
			}
			seen[b.Help().Desc] = true
		}
	}
	if len(full) != 4 {
		t.Errorf("%d help columns, want 4", len(full))
	}
}

// TestAdjudicateKeyTables: the adjudication screen's hints are the keys it handles, with
// and without flags on the turn.
func TestAdjudicateKeyTables(t *testing.T) {
	m := newAdjudicateScreen(AdjudicateOptions{Rubric: testRubric(t), Cases: []campaign.Case{{}}, Renderer: lipgloss.NewRenderer(io.Discard)})
	m.item = &session.Item{}
	for _, flags := range [][]string{nil, {"blurry"}} {
		m.o.Cases[0].Flags = flags
		for mode, table := range m.tables {
			checkTable(t, "adjudicate mode "+string(rune('0'+mode)), table, m)
		}
		if got, want := len(m.ShortHelp()), 10+len(flags); got != want {
			t.Errorf("footer with %d flags has %d hints, want %d", len(flags), got, want)
		}
	}
}
