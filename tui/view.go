package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/lipgloss/table"
	"github.com/charmbracelet/x/ansi"

	"github.com/m3bench/m3eval/internal/dataset"
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
	return m.width - m.stackedImageWidth()
}

// stackedImageWidth is the room the image preview takes beside the conversation in the
// stacked layout (a third of the width, with a column of air), 0 without images.
func (m *annotateModel) stackedImageWidth() int {
	if m.wide() || m.item == nil || len(m.item.Turn.Images) == 0 || m.width < 60 {
		return 0
	}
	h := m.height - 1 - lipgloss.Height(m.rubricPane())
	if w := m.image.PreferredWidth(h); w > 0 {
		return min(m.width/3, w+1)
	}
	return 0
}

// layout sizes the viewport and the image pane from what the rubric pane needs, and
// re-renders what the size or item change invalidated. It runs on resize and item change,
// never on plain key presses.
func (m *annotateModel) layout() {
	if m.width == 0 || m.item == nil {
		return
	}
	body := m.height - 1 // the message line
	ctxH := body - 1     // the context pane's title line
	if !m.wide() {
		ctxH -= lipgloss.Height(m.rubricPane())
	}
	m.turn.SetSize(m.contextWidth(), max(1, ctxH)+1)
	if m.wide() {
		m.image.SetSize(m.rubricWidth(), max(0, body-m.rubricHeight))
	} else if w := m.stackedImageWidth(); w > 0 {
		m.image.SetSize(w-1, max(0, ctxH+1))
	} else {
		m.image.SetSize(0, 0)
	}
}

// View implements tea.Model. It only joins cached pieces: the context pane is rendered again
// after a scroll, resize or item change, the rubric pane after an answer or focus change,
// the image once per item and size.
func (m *annotateModel) View() string {
	if m.width == 0 {
		return ""
	}
	var b strings.Builder
	if m.mode == modeRead {
		b.WriteString(m.reader.View())
		b.WriteByte('\n')
		b.WriteString(m.messageLine())
		return b.String()
	}
	if m.item != nil {
		ctx := m.turn.Lines()
		rub := m.rubricPane()
		if m.wide() {
			right := strings.Split(rub, "\n")
			if img := m.image.View(); img != "" {
				right = append(right, strings.Split(img, "\n")...)
			}
			sep := m.st.Dim.Render("│")
			for i, l := range ctx {
				b.WriteString(l)
				b.WriteString(sep)
				if i < len(right) {
					b.WriteString(right[i])
				}
				b.WriteByte('\n')
			}
		} else {
			var img []string
			if m.stackedImageWidth() > 0 {
				img = strings.Split(m.image.View(), "\n")
			}
			for i, l := range ctx {
				b.WriteString(l)
				if i < len(img) {
					b.WriteByte(' ')
					b.WriteString(img[i])
				}
				b.WriteByte('\n')
			}
			b.WriteString(rub)
			b.WriteByte('\n')
		}
	} else {
		b.WriteByte('\n')
	}
	b.WriteString(m.messageLine())
	return b.String()
}

// Header implements Screen: the annotator, the place in the queue, progress and pace; on
// the right whether everything on screen is saved.
func (m *annotateModel) Header(int) (left, right string) {
	left = textsafe.Line(m.q.Annotator())
	pos := "item ? of " + fmt.Sprint(m.total)
	if m.pos > 0 {
		pos = fmt.Sprintf("item %d of %d", m.pos, m.total)
	}
	pct := 0.0
	if m.total > 0 {
		pct = float64(m.done) / float64(m.total)
	}
	left += m.st.HeaderDim.Render(" · ") + fmt.Sprintf("%s %s %d done · %s", pos, m.bar.ViewAs(pct), m.done, m.eta())
	right = m.st.Saved.Render("✓ saved")
	switch {
	case m.failing:
		right = m.st.Error.Render("✗ NOT SAVED")
	case m.saving():
		right = m.st.Saving.Render("… saving")
	}
	return left, right
}

// openReader opens the reading view on the turn being labelled.
func (m *annotateModel) openReader() {
	t := m.item.Turn
	title := fmt.Sprintf("reading · %s · turn %d", textsafe.Line(t.EpisodeID), t.Turn)
	m.reader.Open(title, func(width int) string {
		return lipgloss.JoinVertical(lipgloss.Left,
			block("User", t.UserMessage, m.st.User, width), "",
			block("Model", t.VLMResponse, m.st.Model, width), "",
			block("Expect", t.ExpectedAnswer, m.st.Expected, width))
	})
	m.mode = modeRead
}

// CapturesKeys implements Screen: the comment box and the flag reason take every key.
func (m *annotateModel) CapturesKeys() bool { return m.mode == modeComment || m.mode == modeFlag }

// ShortHelp implements help.KeyMap; it follows the mode, so the footer shows what works now.
func (m *annotateModel) ShortHelp() []key.Binding {
	switch m.mode {
	case modeComment:
		return []key.Binding{m.keys.LeaveEditor, m.keys.ForceQuit}
	case modeFlag:
		return []key.Binding{m.keys.ConfirmFlag, m.keys.LeaveEditor}
	case modeRead:
		return m.reader.ShortHelp()
	}
	if m.readOnly {
		return []key.Binding{m.keys.Edit, m.keys.PrevItem, m.keys.NextItem, m.keys.Read, m.keys.Open}
	}
	return m.keys.ShortHelp()
}

// FullHelp implements help.KeyMap.
func (m *annotateModel) FullHelp() [][]key.Binding { return m.keys.FullHelp() }

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
			m.layout() // stacked: the conversation's height; wide: the image's
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
		case m.ann.Status == dataset.StatusDone && m.readOnly:
			title += " · ✓ submitted · e to edit"
		case m.ann.Status == dataset.StatusDone:
			title += " · ✓ submitted · editing"
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

	showZh := width >= 50 // the wide layout's rubric column (56+) keeps the Chinese labels
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

// Reference implements Screen: the guide's quick-reference table and the guide itself.
func (m *annotateModel) Reference(width int) string {
	ref := m.quickReference(width)
	if m.item != nil {
		t := m.item.Turn.ActionType
		text := m.actions.Describe(t)
		if at, ok := m.actions[t]; ok && at.IntentZh != "" {
			text += "\n" + at.CapabilityZh + "：" + at.IntentZh
		}
		ref = lipgloss.JoinVertical(lipgloss.Left, m.st.Label.Render("This turn's action · 本轮动作"),
			lipgloss.NewStyle().Width(width).Render(m.st.Action.Render(textsafe.String(text))), "", ref)
	}
	guide := lipgloss.NewStyle().Width(width).Render(m.st.Dim.Render(m.r.GuideEn + "\n" + m.r.GuideZh))
	return lipgloss.JoinVertical(lipgloss.Left, m.st.Label.Render("Quick reference · 评分速查表"), ref, "", guide)
}

// quickReference is the guide's score table, built from the rubric.
func (m *annotateModel) quickReference(width int) string {
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
	if lipgloss.Width(t.Render()) > width {
		t = t.Width(width) // lipgloss wraps the cells to fit
	}
	return t.Render()
}

func padRight(s string, w int) string {
	return s + strings.Repeat(" ", max(0, w-lipgloss.Width(s)))
}
