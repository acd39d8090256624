package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
)

// readerKeyMap is the keys of the reading view.
type readerKeyMap struct {
	Down, Up, Page, PageUp, Top, Bottom, Close key.Binding
}

func newReaderKeyMap() readerKeyMap {
	return readerKeyMap{
		Down:   key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓", "line")),
		Up:     key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑", "line up")),
		Page:   key.NewBinding(key.WithKeys(" ", "pgdown", "ctrl+d"), key.WithHelp("space", "page")),
		PageUp: key.NewBinding(key.WithKeys("pgup", "ctrl+u", "b"), key.WithHelp("pgup", "page up")),
		Top:    key.NewBinding(key.WithKeys("home", "g"), key.WithHelp("home", "top")),
		Bottom: key.NewBinding(key.WithKeys("end", "G"), key.WithHelp("end", "bottom")),
		Close:  key.NewBinding(key.WithKeys("esc", "r"), key.WithHelp("esc", "back to the rubric")),
	}
}

// readerPane is the full-screen reading view of the turn being labelled: the user's
// message, the response and the expected answer at the whole terminal's width. It owns its
// rendering and keeps its place (as a fraction of the text) when the terminal is resized.
type readerPane struct {
	keys  readerKeyMap
	st    Styles
	vp    viewport.Model
	title string
	// render lays the text out for a width; it is kept so a resize can rewrap.
	render        func(width int) string
	width, height int
}

func newReaderPane(st Styles) *readerPane {
	return &readerPane{keys: newReaderKeyMap(), st: st, vp: viewport.New(0, 0)}
}

// Open shows a text from its top.
func (p *readerPane) Open(title string, render func(width int) string) {
	p.title, p.render = title, render
	p.vp.SetContent(render(p.vp.Width))
	p.vp.GotoTop()
}

// Init implements tea.Model.
func (p *readerPane) Init() tea.Cmd { return nil }

// Update implements tea.Model: scrolling keys and the mouse wheel.
func (p *readerPane) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.KeyMsg:
		switch {
		case key.Matches(msg, p.keys.Down):
			p.vp.ScrollDown(1)
		case key.Matches(msg, p.keys.Up):
			p.vp.ScrollUp(1)
		case key.Matches(msg, p.keys.Page):
			p.vp.PageDown()
		case key.Matches(msg, p.keys.PageUp):
			p.vp.PageUp()
		case key.Matches(msg, p.keys.Top):
			p.vp.GotoTop()
		case key.Matches(msg, p.keys.Bottom):
			p.vp.GotoBottom()
		}
	case tea.MouseMsg:
		var cmd tea.Cmd
		p.vp, cmd = p.vp.Update(msg)
		return p, cmd
	}
	return p, nil
}

// SetSize implements Component; the place in the text survives a change of width.
func (p *readerPane) SetSize(w, h int) {
	if w == p.width && h == p.height {
		return
	}
	frac := 0.0
	if n := p.vp.TotalLineCount(); n > 0 {
		frac = float64(p.vp.YOffset) / float64(n)
	}
	p.width, p.height = w, h
	p.vp.Width, p.vp.Height = w, max(1, h-1)
	if p.render != nil {
		p.vp.SetContent(p.render(w))
		p.vp.SetYOffset(int(frac*float64(p.vp.TotalLineCount()) + 0.5))
	}
}

// Position is where the view stands: "▼ 143 lines below · 12%", or "end".
func (p *readerPane) Position() string {
	below := p.vp.TotalLineCount() - p.vp.YOffset - p.vp.Height
	if below <= 0 {
		return "end"
	}
	return linesBelow(below, p.vp.ScrollPercent())
}

// linesBelow is the position indicator: "▼ 143 lines below · 12%".
func linesBelow(n int, frac float64) string {
	unit := "lines"
	if n == 1 {
		unit = "line"
	}
	return fmt.Sprintf("▼ %d %s below · %d%%", n, unit, int(frac*100+0.5))
}

// View implements tea.Model: a title line with the position, then the text.
func (p *readerPane) View() string {
	pos := " " + p.Position() + " "
	title := ansi.Truncate("─ "+p.title+" ", max(0, p.width-lipgloss.Width(pos)-2), "…")
	fill := strings.Repeat("─", max(0, p.width-lipgloss.Width(title)-lipgloss.Width(pos)))
	return p.st.PaneTitle.Render(title) + p.st.Dim.Render(fill) + p.st.Warning.Render(pos) + "\n" + p.vp.View()
}

// ShortHelp implements help.KeyMap.
func (p *readerPane) ShortHelp() []key.Binding {
	return []key.Binding{p.keys.Page, p.keys.PageUp, p.keys.Top, p.keys.Bottom, p.keys.Close}
}

// FullHelp implements help.KeyMap.
func (p *readerPane) FullHelp() [][]key.Binding {
	return [][]key.Binding{{p.keys.Down, p.keys.Up, p.keys.Page, p.keys.PageUp}, {p.keys.Top, p.keys.Bottom, p.keys.Close}}
}
