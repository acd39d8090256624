package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/m3bench/m3eval/internal/rubric"
	"github.com/m3bench/m3eval/internal/session"
)

// turnPane shows the conversation: the episode's earlier turns and the turn being labelled,
// in a viewport that opens at the current turn. It owns its caches: the rendered text (made
// again when the item or the width changes) and the visible lines (made again when the
// view scrolls).
type turnPane struct {
	st      Styles
	r       *rubric.Rubric
	actions rubric.Actions
	vp      viewport.Model
	item    *session.Item

	renderedFor string // the item and width the viewport content was rendered for
	fresh       bool   // a new item: open at its turn, not at the old place
	// current is the line where the turn being labelled starts; anchor is the offset the
	// pane last put itself at to show it (-1 once the annotator scrolled away): until they
	// scroll, every resize shows the turn being labelled again, wherever it now starts.
	current, anchor int
	// answer is the line where the model's answer of the turn being labelled starts: the
	// pane opens low enough to show its first lines, however long what comes before it.
	answer      int
	lines       []string
	linesOffset int
	// compact folds the turn's header (small terminals): action, task and images go on the
	// rule and one line, so the answer being scored is on screen at 80×24.
	compact bool
}

func newTurnPane(st Styles, actions rubric.Actions, r *rubric.Rubric) *turnPane {
	return &turnPane{st: st, actions: actions, r: r, vp: viewport.New(0, 0)}
}

// SetItem shows an item, scrolled to its turn (rendered at the next size or view).
func (p *turnPane) SetItem(it *session.Item) {
	p.item, p.renderedFor, p.fresh, p.lines = it, "", true, nil
}

// SetSize implements Component; h includes the title line. The same item at a new width
// keeps its place.
func (p *turnPane) SetSize(w, h int) {
	if w != p.vp.Width || max(1, h-1) != p.vp.Height {
		p.lines = nil
	}
	anchored := p.anchored()
	p.vp.Width, p.vp.Height = w, max(1, h-1)
	p.render()
	if anchored && p.renderedFor != "" {
		p.showCurrent() // a new height: the same turn, wherever the viewport may now start
	}
}

// anchored reports whether the view still stands where the pane put it for the turn being
// labelled (the annotator has not scrolled since).
func (p *turnPane) anchored() bool { return p.anchor >= 0 && p.vp.YOffset == p.anchor }

// SetCompact folds the turn's header (see compact); it renders again when that changes.
func (p *turnPane) SetCompact(c bool) {
	if c != p.compact {
		p.compact, p.renderedFor = c, ""
	}
}

// showCurrent scrolls to the turn being labelled: its start, or, when the answer would begin
// below the pane, low enough that the answer's first two lines show (the title says what is
// above), so a turn is never scored without its answer on screen.
func (p *turnPane) showCurrent() {
	off := p.current
	if need := p.answer - (p.vp.Height - 2); need > off {
		off = need
	}
	p.vp.SetYOffset(off)
	p.anchor = p.vp.YOffset
	p.lines = nil
}

func (p *turnPane) render() {
	if p.item == nil || p.vp.Width == 0 {
		return
	}
	key := fmt.Sprintf("%d/%d/%t", p.item.Ref.TurnID, p.vp.Width, p.compact)
	if key == p.renderedFor {
		return
	}
	p.lines = nil
	// The line at the top stays at the same fraction of the text (it rewraps, so line
	// numbers do not carry over).
	sameItem := !p.fresh
	anchored := p.fresh || p.anchored()
	p.fresh = false
	frac := 0.0
	if n := p.vp.TotalLineCount(); sameItem && n > 0 {
		frac = float64(p.vp.YOffset) / float64(n)
	}
	content, current, answer := p.renderContext(p.vp.Width)
	p.vp.SetContent(content)
	p.current, p.answer = current, answer
	if anchored {
		p.showCurrent()
	} else {
		p.vp.SetYOffset(int(frac*float64(p.vp.TotalLineCount()) + 0.5))
	}
	p.renderedFor = key
}

// Init implements tea.Model.
func (p *turnPane) Init() tea.Cmd { return nil }

// Update implements tea.Model: the mouse wheel scrolls.
func (p *turnPane) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	var cmd tea.Cmd
	p.vp, cmd = p.vp.Update(msg)
	return p, cmd
}

// ShortHelp implements help.KeyMap; the screen's key map has the scrolling keys.
func (p *turnPane) ShortHelp() []key.Binding { return nil }

// FullHelp implements help.KeyMap.
func (p *turnPane) FullHelp() [][]key.Binding { return nil }

// View implements tea.Model.
func (p *turnPane) View() string { return strings.Join(p.Lines(), "\n") }

// Lines is the pane (title and visible part of the conversation), each line padded to the
// pane's width, cached until the viewport moves or changes.
func (p *turnPane) Lines() []string {
	if p.item == nil {
		return nil
	}
	p.render()
	if p.lines != nil && p.linesOffset == p.vp.YOffset {
		return p.lines
	}
	lines := strings.Split(p.title()+"\n"+p.vp.View(), "\n")
	for i, l := range lines {
		lines[i] = padRight(l, p.vp.Width)
	}
	p.lines, p.linesOffset = lines, p.vp.YOffset
	return lines
}

// title names the episode and turn and says how much is above and below.
func (p *turnPane) title() string {
	t := &p.item.Turn
	title := fmt.Sprintf("─ %s · turn %d", shownLine(t.EpisodeID), t.Turn)
	if n := len(p.item.Earlier); n > 0 && p.vp.YOffset > 0 {
		title += fmt.Sprintf(" · %d earlier above (pgup)", n)
	}
	title += " "
	pos := ""
	if below := p.vp.TotalLineCount() - p.vp.YOffset - p.vp.Height; below > 0 {
		pos = " " + linesBelow(below, p.vp.ScrollPercent()) + " "
	}
	room := max(0, p.vp.Width-lipgloss.Width(pos))
	title = ansi.Truncate(title, room, "…")
	return p.st.PaneTitle.Render(title) +
		p.st.Dim.Render(strings.Repeat("─", max(0, room-lipgloss.Width(title)))) + p.st.Warning.Render(pos)
}

// renderContext renders the episode's earlier turns and the current one, and returns the
// line where the current turn starts and the line where its model answer starts.
func (p *turnPane) renderContext(width int) (string, int, int) {
	st := p.st
	var parts []string
	lines := 0
	add := func(s string) {
		parts = append(parts, s)
		lines += lipgloss.Height(s)
	}
	for _, c := range p.item.Earlier {
		add(rule(fmt.Sprintf("turn %d · %s", c.Turn, c.ActionType), width, st.TurnRule))
		add(block("User", c.UserMessage, st.User, width))
		add(block("Model", c.VLMResponse, st.Model, width))
	}
	current := lines
	t := &p.item.Turn
	var info []string
	if t.TaskType != "" { // imported logs have none
		info = append(info, "task "+t.TaskType)
	}
	if t.Model != "" {
		info = append(info, "model "+t.Model)
	}
	title := fmt.Sprintf("turn %d · %s (to label)", t.Turn, t.ActionType)
	if p.compact {
		// Small terminals: the task, the model and the image count ride on the rule, the
		// action and its intent share one line; the full texts are behind ? and i.
		for _, x := range info {
			title += " · " + strings.TrimPrefix(strings.TrimPrefix(x, "task "), "model ")
		}
		if n := len(t.Images); n > 0 {
			title += fmt.Sprintf(" · %d image%s", n, map[bool]string{true: "s"}[n > 1])
		}
	}
	add(rule(title, width, st.CurrentRule))
	if p.compact {
		action := p.actions.Describe(t.ActionType)
		if at, ok := p.actions[t.ActionType]; ok && at.IntentZh != "" {
			action += " · " + at.IntentZh
		}
		add(line("Action", action, st.Action, width))
	} else {
		// The action's intent is the same for every item of its type: one line each, so the
		// response being scored stays on screen; the full text is behind ?.
		add(line("Action", p.actions.Describe(t.ActionType), st.Action, width))
		if at, ok := p.actions[t.ActionType]; ok && at.IntentZh != "" {
			add(line("意图", at.CapabilityZh+"："+at.IntentZh, st.Action, width))
		}
		add(block("", strings.Join(info, " · "), st.Dim, width))
		for i, img := range t.Images {
			add(line("Image", fmt.Sprintf("image %d of %d: %s", i+1, len(t.Images), img), st.Dim, width))
		}
	}
	add(block("User", t.UserMessage, st.User, width))
	// The expected answer comes before the response, so that it is on screen when the turn
	// opens however long the response (80×24 included). Logs imported from other tools
	// often lack one: then the fields that judge against it say, in its place, how to judge
	// without one.
	var notes []string
	if t.ExpectedAnswer == "" {
		for _, f := range p.r.NoExpectedNotes() {
			notes = append(notes, f.LabelEn+": "+f.NoExpectedEn)
		}
	}
	if len(notes) > 0 {
		add(block("Expect", strings.Join(notes, "\n"), st.Warning, width))
	} else {
		add(block("Expect", t.ExpectedAnswer, st.Expected, width))
	}
	answer := lines
	add(block("Model", t.VLMResponse, st.Model, width))
	return strings.Join(parts, "\n"), current, answer
}

// labelWidth is the width of the label column of the turn pane.
const labelWidth = 8

// block renders "Label  text" with the text wrapped beside the label. lipgloss measures East
// Asian wide characters as two cells, so Chinese wraps at the pane's edge.
func block(label, text string, ls lipgloss.Style, width int) string {
	if text == "" {
		text = "—"
	}
	text = shownString(text)             // text from data: escape sequences shown, never obeyed
	textW := max(10, width-labelWidth-1) // one column of air before the pane's edge
	// wrapText keeps list and code indents and the line-start rules of Chinese text.
	lines := wrapText(strings.TrimRight(text, "\n"), textW)
	for i, l := range lines {
		lines[i] = padRight(l, textW)
	}
	body := strings.Join(lines, "\n")
	return lipgloss.JoinHorizontal(lipgloss.Top, ls.Width(labelWidth).Render(label), body)
}

// line renders "Label  text" cut to one line.
func line(label, text string, ls lipgloss.Style, width int) string {
	text = shownLine(strings.TrimSpace(text))
	return ls.Width(labelWidth).Render(label) + ansi.Truncate(text, max(1, width-labelWidth-1), "…")
}

func rule(title string, width int, s lipgloss.Style) string {
	title = "── " + shownLine(title) + " "
	title = ansi.Truncate(title, width, "…")
	return s.Render(title + strings.Repeat("─", max(0, width-lipgloss.Width(title))))
}
