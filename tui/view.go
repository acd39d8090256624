package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/lipgloss/table"
	"github.com/charmbracelet/x/ansi"

	"github.com/m3bench/m3eval/internal/rubric"
	"github.com/m3bench/m3eval/internal/textsafe"
)

// wideAt is the width from which context and rubric stand side by side.
const wideAt = 110

func (m *annotateModel) wide() bool { return m.width >= wideAt }

// compact is the layout for small terminals: score meanings on one line, not one per score.
func (m *annotateModel) compact() bool { return !m.wide() && m.height < 32 }

func (m *annotateModel) rubricWidth() int {
	if m.wide() {
		return max(56, m.width*9/20)
	}
	return m.width
}

func (m *annotateModel) contextWidth() int {
	if m.wide() {
		return m.width - m.rubricWidth() - 1
	}
	return m.width
}

// layout sizes the viewport from what the rubric pane needs, and re-renders what the size
// or item change invalidated. It runs on resize and item change, never on plain key presses.
func (m *annotateModel) layout() {
	if m.width == 0 || m.item == nil {
		return
	}
	body := m.height - 3 // header, message line, help line
	ctxH := body - 1     // the context pane's title line
	if !m.wide() {
		ctxH -= lipgloss.Height(m.rubricPane())
	}
	m.vp.Width, m.vp.Height = m.contextWidth(), max(1, ctxH)
	m.ctxView = nil
	key := fmt.Sprintf("%d/%d", m.item.Ref.TurnID, m.vp.Width)
	if key != m.contextFor {
		content, current := m.renderContext(m.vp.Width)
		m.vp.SetContent(content)
		m.vp.SetYOffset(current)
		m.contextFor = key
	}
}

// View implements tea.Model. It only joins cached pieces: the context pane is rendered again
// after a scroll, resize or item change, the rubric pane after an answer or focus change.
func (m *annotateModel) View() string {
	if m.width == 0 {
		return ""
	}
	if m.mode == modeHelp {
		return m.helpScreen()
	}
	var b strings.Builder
	b.WriteString(m.header())
	b.WriteByte('\n')
	if m.item != nil {
		ctx := m.contextLines()
		rub := m.rubricPane()
		if m.wide() {
			rubLines := strings.Split(rub, "\n")
			sep := m.st.Dim.Render("│")
			for i, l := range ctx {
				b.WriteString(l)
				b.WriteString(sep)
				if i < len(rubLines) {
					b.WriteString(rubLines[i])
				}
				b.WriteByte('\n')
			}
		} else {
			for _, l := range ctx {
				b.WriteString(l)
				b.WriteByte('\n')
			}
			b.WriteString(rub)
			b.WriteByte('\n')
		}
	} else {
		b.WriteByte('\n')
	}
	b.WriteString(m.messageLine())
	b.WriteByte('\n')
	b.WriteString(m.helpLine())
	return b.String()
}

// contextLines is the context pane (title and visible part of the conversation), each line
// padded to the pane's width, cached until the viewport moves or changes.
func (m *annotateModel) contextLines() []string {
	if m.ctxView != nil && m.ctxViewOffset == m.vp.YOffset {
		return m.ctxView
	}
	pane := m.contextTitle() + "\n" + m.vp.View()
	lines := strings.Split(pane, "\n")
	for i, l := range lines {
		lines[i] = padRight(l, m.vp.Width)
	}
	m.ctxView, m.ctxViewOffset = lines, m.vp.YOffset
	return lines
}

func (m *annotateModel) header() string {
	left := m.st.Header.Render("m3eval") + m.st.HeaderDim.Render(" · ") + textsafe.Line(m.q.Annotator())
	if c := m.q.Campaign(); c != "" {
		left += m.st.HeaderDim.Render(" · campaign ") + textsafe.Line(c)
	}
	pos := "item ? of " + fmt.Sprint(m.total)
	if m.pos > 0 {
		pos = fmt.Sprintf("item %d of %d", m.pos, m.total)
	}
	pct := 0.0
	if m.total > 0 {
		pct = float64(m.done) / float64(m.total)
	}
	mid := fmt.Sprintf("%s %s %d done · %s", pos, m.bar.ViewAs(pct), m.done, m.eta())
	state := m.st.Saved.Render("✓ saved")
	switch {
	case m.failing:
		state = m.st.Error.Render("✗ NOT SAVED")
	case m.saving():
		state = m.st.Saving.Render("… saving")
	}
	line := left + m.st.HeaderDim.Render(" · ") + mid
	gap := m.width - lipgloss.Width(line) - lipgloss.Width(state)
	if gap < 1 {
		return ansi.Truncate(line, m.width-lipgloss.Width(state)-1, "…") + " " + state
	}
	return line + strings.Repeat(" ", gap) + state
}

func (m *annotateModel) contextTitle() string {
	t := &m.item.Turn
	title := fmt.Sprintf("─ %s · turn %d", textsafe.Line(t.EpisodeID), t.Turn)
	if n := len(m.item.Earlier); n > 0 && m.vp.YOffset > 0 {
		title += fmt.Sprintf(" · %d earlier above (pgup)", n)
	}
	title += " "
	return m.st.PaneTitle.Render(ansi.Truncate(title, m.vp.Width, "…")) +
		m.st.Dim.Render(strings.Repeat("─", max(0, m.vp.Width-lipgloss.Width(title))))
}

// renderContext renders the episode's earlier turns and the current one, and returns the
// line where the current turn starts.
func (m *annotateModel) renderContext(width int) (string, int) {
	var parts []string
	lines := 0
	add := func(s string) {
		parts = append(parts, s)
		lines += lipgloss.Height(s)
	}
	for _, c := range m.item.Earlier {
		add(m.rule(fmt.Sprintf("turn %d · %s", c.Turn, c.ActionType), width, m.st.TurnRule))
		add(m.block("User", c.UserMessage, m.st.User, width))
		add(m.block("Model", c.VLMResponse, m.st.Model, width))
	}
	current := lines
	t := &m.item.Turn
	add(m.rule(fmt.Sprintf("turn %d · %s (to label)", t.Turn, t.ActionType), width, m.st.CurrentRule))
	add(m.block("Action", m.actions.Describe(t.ActionType), m.st.Action, width))
	if at, ok := m.actions[t.ActionType]; ok && at.IntentZh != "" {
		add(m.block("意图", at.CapabilityZh+"："+at.IntentZh, m.st.Action, width))
	}
	var info []string
	if t.TaskType != "" { // imported logs have none
		info = append(info, "task "+t.TaskType)
	}
	if t.Model != "" {
		info = append(info, "model "+t.Model)
	}
	add(m.block("", strings.Join(info, " · "), m.st.Dim, width))
	for i, img := range t.Images {
		add(m.block("Image", fmt.Sprintf("image %d of %d: %s", i+1, len(t.Images), img), m.st.Dim, width))
	}
	add(m.block("User", t.UserMessage, m.st.User, width))
	add(m.block("Model", t.VLMResponse, m.st.Model, width))
	// Logs imported from other tools often lack an expected answer: then the fields that
	// judge against it say, in its place, how to judge without one.
	var notes []string
	if t.ExpectedAnswer == "" {
		for _, f := range m.r.NoExpectedNotes() {
			notes = append(notes, f.LabelEn+": "+f.NoExpectedEn)
		}
	}
	if len(notes) > 0 {
		add(m.block("Expect", strings.Join(notes, "\n"), m.st.Warning, width))
	} else {
		add(m.block("Expect", t.ExpectedAnswer, m.st.Expected, width))
	}
	return strings.Join(parts, "\n"), current
}

// labelWidth is the width of the label column of the context pane.
const labelWidth = 8

// block renders "Label  text" with the text wrapped beside the label. lipgloss measures East
// Asian wide characters as two cells, so Chinese wraps at the pane's edge.
func (m *annotateModel) block(label, text string, ls lipgloss.Style, width int) string {
	if text == "" {
		text = "—"
	}
	text = textsafe.String(text)         // text from data: escape sequences shown, never obeyed
	textW := max(10, width-labelWidth-1) // one column of air before the pane's edge
	body := lipgloss.NewStyle().Width(textW).Render(strings.TrimRight(text, "\n"))
	return lipgloss.JoinHorizontal(lipgloss.Top, ls.Width(labelWidth).Render(label), body)
}

func (m *annotateModel) rule(title string, width int, s lipgloss.Style) string {
	title = "── " + textsafe.Line(title) + " "
	title = ansi.Truncate(title, width, "…")
	return s.Render(title + strings.Repeat("─", max(0, width-lipgloss.Width(title))))
}

// rubricPane returns the rubric pane, rendered again only after something in it changed. The
// comment editor is never cached: it is drawn from the textarea on every frame, so it shows
// the moment "c" is pressed, echoes every key and goes with esc.
func (m *annotateModel) rubricPane() string {
	if m.mode == modeComment {
		return m.cachedRubric() + "\n" + m.comment.View()
	}
	return m.cachedRubric()
}

func (m *annotateModel) cachedRubric() string {
	if m.rubricDirty {
		m.rubricView = m.renderRubric(m.rubricWidth())
		m.rubricDirty = false
		// Stacked panes share the height: when the rubric grows or shrinks (a warning, a
		// field with longer meanings), the conversation gives or takes the lines.
		if h := lipgloss.Height(m.rubricView); h != m.rubricHeight {
			m.rubricHeight = h
			if !m.wide() {
				m.layout()
			}
		}
	}
	return m.rubricView
}

func (m *annotateModel) renderRubric(width int) string {
	it := m.item.Turn.Item()
	var lines []string
	title := "─ Rubric"
	if m.ann != nil {
		switch {
		case m.ann.Status == "done":
			title += " · ✓ submitted"
		default:
			title += " · draft"
		}
		if m.ann.Flagged {
			title += " · ⚑ flagged"
			if m.ann.FlagReason != "" {
				title += ": " + textsafe.Line(m.ann.FlagReason)
			}
		}
	}
	title += " "
	lines = append(lines, m.st.PaneTitle.Render(ansi.Truncate(title, width, "…"))+
		m.st.Dim.Render(strings.Repeat("─", max(0, width-lipgloss.Width(title)))))

	showZh := width >= 70
	enW, zhW := 0, 0
	for _, f := range m.r.Fields {
		enW = max(enW, lipgloss.Width(f.LabelEn))
		zhW = max(zhW, lipgloss.Width(f.LabelZh))
	}
	for i := range m.r.Fields {
		f := &m.r.Fields[i]
		marker, style := "  ", m.st.Field
		if i == m.focus {
			marker, style = "▸ ", m.st.FieldFocused
		}
		label := padRight(f.LabelEn, enW)
		if showZh {
			label += " " + padRight(f.LabelZh, zhW)
		}
		row := marker + style.Render(label) + "  " + m.valueText(f, it)
		lines = append(lines, ansi.Truncate(row, width, "…"))
	}
	if need := m.r.CommentNeeded(m.values, it); len(need) > 0 {
		lines = append(lines, ansi.Truncate(m.st.Warning.Render("⚠ "+need[0].En+" (c)"), width, "…"))
	}
	if m.mode == modeComment {
		f, _ := m.r.Field(m.r.CommentField)
		lines = append(lines, m.st.Label.Render(f.LabelEn+" "+f.LabelZh)+m.st.Dim.Render(" — esc when done"))
		return strings.Join(lines, "\n") // rubricPane adds the live editor below
	}
	if m.focus >= 0 {
		lines = append(lines, m.meanings(&m.r.Fields[m.focus], width)...)
	}
	return strings.Join(lines, "\n")
}

// valueText shows a field's value with its meaning, and for the suggestion field the
// guide's weighted suggestion beside it.
func (m *annotateModel) valueText(f *rubric.Field, it rubric.Item) string {
	if f.Kind == rubric.KindText {
		v := strings.TrimSpace(m.values[f.Name])
		if v == "" {
			return m.st.ValueUnset.Render("(none) — c to write")
		}
		out := m.st.Value.Render(textsafe.Line(v))
		if m.failing && m.unsaved[fieldKey{m.item.Ref.TurnID, f.Name}] > 0 {
			out += " " + m.st.Error.Render("✗ unsaved")
		}
		return out
	}
	var out string
	if fixed, rule, ok := f.FixedValue(it); ok {
		out = m.st.FieldFixed.Render(fixed + " (" + rule.WhyEn + ")")
	} else if v, ok := m.values[f.Name]; ok {
		out = m.st.Value.Render(v)
		if m.failing && m.unsaved[fieldKey{m.item.Ref.TurnID, f.Name}] > 0 {
			out += " " + m.st.Error.Render("✗ unsaved")
		} else if o, ok := f.Option(v); ok && o.ShortEn != "" {
			out += " " + m.st.Meaning.Render(o.ShortEn)
		}
	} else {
		out = m.st.ValueUnset.Render("·")
	}
	if f.Name == m.r.SuggestField {
		if s := m.r.Suggest(m.values, it); s.OK {
			sug := fmt.Sprintf("   suggested %.1f", s.Score)
			if s.Partial {
				sug += " so far"
			}
			out += m.st.Suggestion.Render(sug)
		}
	}
	return out
}

// meanings lists what each score of the focused field means.
func (m *annotateModel) meanings(f *rubric.Field, width int) []string {
	opts := f.Levels
	if f.Kind == rubric.KindChoice {
		opts = f.Choices
	}
	head := m.st.Label.Render(f.LabelEn+" "+f.LabelZh) + m.st.Dim.Render(": "+f.HelpEn)
	lines := []string{ansi.Truncate(head, width, "…")}
	cur := m.values[f.Name]
	if m.compact() {
		var parts []string
		for _, o := range opts {
			k := o.Value
			if o.Key != "" {
				k = o.Key
			}
			parts = append(parts, k+" "+o.ShortEn+" "+o.ShortZh)
		}
		wrapped := lipgloss.NewStyle().Width(width).Render(m.st.Meaning.Render(strings.Join(parts, " · ")))
		return append(lines, wrapped)
	}
	for _, o := range opts {
		k := o.Value
		if o.Key != "" {
			k = o.Key + "=" + o.Value
		}
		mark := "  "
		if o.Value == cur {
			mark = "▸ "
		}
		line := mark + k + "  " + o.En
		if width >= 90 {
			line += " · " + o.Zh
		}
		lines = append(lines, m.st.Meaning.Render(ansi.Truncate(line, width, "…")))
	}
	return lines
}

func (m *annotateModel) messageLine() string {
	if m.mode == modeFlag {
		return m.flagReason.View()
	}
	return ansi.Truncate(m.messageStyle.Render(m.message), m.width, "…")
}

func (m *annotateModel) helpLine() string {
	var line string
	switch m.mode {
	case modeComment:
		line = m.help.ShortHelpView([]key.Binding{m.keys.LeaveEditor, m.keys.ForceQuit})
	case modeFlag:
		line = m.help.ShortHelpView([]key.Binding{m.keys.ConfirmFlag, m.keys.LeaveEditor})
	default:
		line = m.help.ShortHelpView(m.keys.ShortHelp())
	}
	// bubbles/help can let the last item run past its width; never wrap the terminal.
	return ansi.Truncate(line, m.width, "…")
}

// helpScreen is the full help with the guide's quick-reference table.
func (m *annotateModel) helpScreen() string {
	title := m.st.Header.Render("m3eval annotate — keys") + m.st.Dim.Render("  (? or esc to close)")
	keys := m.help.FullHelpView(m.keys.FullHelp())
	ref := m.quickReference()
	guide := lipgloss.NewStyle().Width(m.width).Render(m.st.Dim.Render(m.r.GuideEn + "\n" + m.r.GuideZh))
	out := lipgloss.JoinVertical(lipgloss.Left, title, "", keys, "", m.st.Label.Render("Quick reference · 评分速查表"), ref, "", guide)
	return lipgloss.NewStyle().MaxWidth(m.width).MaxHeight(m.height).Render(out)
}

// quickReference is the guide's score table, built from the rubric.
func (m *annotateModel) quickReference() string {
	maxCols := 0
	for _, f := range m.r.Fields {
		maxCols = max(maxCols, len(f.Levels), len(f.Choices))
	}
	header := []string{""}
	for i := 0; i < maxCols; i++ {
		header = append(header, "")
	}
	t := table.New().Border(lipgloss.NormalBorder()).BorderStyle(m.st.Dim)
	for _, f := range m.r.Fields {
		opts := f.Levels
		if f.Kind == rubric.KindChoice {
			opts = f.Choices
		}
		if len(opts) == 0 {
			continue
		}
		row := []string{f.LabelEn + "\n" + f.LabelZh}
		for _, o := range opts {
			row = append(row, o.Value+" "+o.ShortEn+"\n"+o.ShortZh)
		}
		for len(row) < maxCols+1 {
			row = append(row, "")
		}
		t.Row(row...)
	}
	if lipgloss.Width(t.Render()) > m.width {
		t = t.Width(m.width) // lipgloss wraps the cells to fit
	}
	return t.Render()
}

func padRight(s string, w int) string {
	return s + strings.Repeat(" ", max(0, w-lipgloss.Width(s)))
}
