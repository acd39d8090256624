package tui

import (
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
)

// binding is one row of a screen's key table: the keys with their help text, when the row
// applies, what the key does, and where its hint is shown. A screen handles a key by
// running the first row of its table that applies and matches, and draws its footer and
// help screen from the same rows, so the help can never promise a key the screen does not
// handle, nor leave out one it does.
type binding[M any] struct {
	key *key.Binding
	// when says whether the row applies now; nil: always. A row that does not apply is
	// passed over, so a later row (or the table's fallback) may take the key.
	when func(M) bool
	do   func(M, tea.KeyMsg) tea.Cmd
	// footer says whether the footer shows the hint now; nil: never (the root's own keys,
	// rows that only explain why a key does nothing here).
	footer func(M) bool
	// group is the help screen's column, from 1, in the order of the table; 0: not listed.
	group int
}

// bindings is a screen's key table, in the order the keys are tried and their hints shown.
type bindings[M any] []binding[M]

// handle runs the first row that applies and matches k; ok is false when none does, and the
// screen then gives the key to what has focus (a text box, a full-screen view).
func (t bindings[M]) handle(m M, k tea.KeyMsg) (cmd tea.Cmd, ok bool) {
	for _, b := range t {
		if (b.when == nil || b.when(m)) && key.Matches(k, *b.key) {
			return b.do(m, k), true
		}
	}
	return nil, false
}

// short is the footer's hints now: the rows whose footer says so, in table order.
func (t bindings[M]) short(m M) []key.Binding {
	var out []key.Binding
	for _, b := range t {
		if b.footer != nil && b.footer(m) {
			out = append(out, *b.key)
		}
	}
	return out
}

// full is the help screen's columns: the rows of each group, in table order.
func (t bindings[M]) full() [][]key.Binding {
	var groups [][]key.Binding
	for _, b := range t {
		if b.group <= 0 {
			continue
		}
		for len(groups) < b.group {
			groups = append(groups, nil)
		}
		groups[b.group-1] = append(groups[b.group-1], *b.key)
	}
	return groups
}

// always is a footer or when that always holds.
func always[M any](M) bool { return true }
