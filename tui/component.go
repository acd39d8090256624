package tui

import (
	"github.com/charmbracelet/bubbles/help"
	tea "github.com/charmbracelet/bubbletea"
)

// Component is a screen or a pane: a model with its own keys and a size given by its parent
// after the parent took its own frame (soft-serve pkg/ui/common/component.go).
type Component interface {
	tea.Model
	help.KeyMap
	SetSize(width, height int)
}

// Screen is a component the root model routes to. A new screen (adjudication, a server's
// session picker) is one file implementing it.
type Screen interface {
	Component
	// Header is the screen's part of the header line: where the user is (left, after
	// "m3eval · ") and the state of their work (right edge).
	Header(width int) (left, right string)
	// CapturesKeys reports whether a text box has focus: then every key is the screen's,
	// and "?" or "q" are letters, not the root's keys.
	CapturesKeys() bool
	// Reference is what the help screen shows below the keys (a guide, a score table).
	Reference(width int) string
}
