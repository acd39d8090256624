package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/lipgloss"

	"github.com/m3bench/m3eval/internal/textsafe"
)

// wideAt is the narrowest width at which context and rubric may stand side by side;
// minContextWide is the least the conversation keeps beside the rubric. The rubric takes
// what its rows need (values, the suggestion, the short meanings uncut), so a terminal
// too narrow for both stacks them: at 100–12x columns the rubric gets the full width.
const (
	wideAt         = 110
	minContextWide = 48
)

func (m *annotateModel) wide() bool {
	return m.width >= wideAt && m.width-m.rubricNeed()-1 >= minContextWide
}

// rubricNeed is the rubric pane's width without a cut, measured once per rubric.
func (m *annotateModel) rubricNeed() int {
	if m.rubNeed == 0 {
		m.rubNeed = m.rub.needWidth()
	}
	return m.rubNeed
}

// compact is the layout for small terminals: score meanings on one line, not one per score.
func (m *annotateModel) compact() bool { return !m.wide() && m.height < 32 }

func (m *annotateModel) rubricWidth() int {
	if m.wide() {
		return max(56, m.rubricNeed(), m.width*9/20)
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
	m.turn.SetCompact(m.compact())
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
	if m.mode == modeRead || m.mode == modeImage {
		if m.mode == modeRead {
			b.WriteString(m.reader.View())
		} else {
			b.WriteString(m.imgView.View())
		}
		b.WriteByte('\n')
		b.WriteString(m.messageLine())
		return b.String()
	}
	if m.item != nil {
		// The rubric first: when its height changed (a warning line came or went), drawing
		// it lays the conversation out again, and the conversation's lines must follow,
		// or the frame shows the old ones until the next message.
		rub := m.rubricPane()
		ctx := m.turn.Lines()
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

// Header implements Screen: the annotator (and campaign), the place in the queue, progress
// and pace; on the right whether everything on screen is saved.
func (m *annotateModel) Header(int) (left, right string) {
	left = textsafe.Line(m.q.Annotator())
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
	left += m.st.HeaderDim.Render(" · ") + fmt.Sprintf("%s %s %d done · %s", pos, m.bar.ViewAs(pct), m.done, m.eta())
	return left, m.save.header(m.st, m.commentUnsaved())
}

// commentUnsaved reports whether the comment box holds text not yet handed to a write.
func (m *annotateModel) commentUnsaved() bool {
	if m.mode != modeComment || m.item == nil {
		return false
	}
	text, saved := m.comment.Value(), m.values[m.r.CommentField]
	if strings.TrimSpace(text) == "" {
		return strings.TrimSpace(saved) != ""
	}
	return text != saved
}

// openReader opens the reading view on the turn being labelled.
func (m *annotateModel) openReader() {
	m.notice.dropConfirmation() // the last item's confirmation is old news
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
	m.rub.SetSize(m.rubricWidth(), 0)
	m.rub.compact = m.compact()
	if v, changed := m.rub.Render(m.rubricState()); changed {
		// Stacked panes share the height: when the rubric grows or shrinks (a warning, a
		// field with longer meanings), the conversation gives or takes the lines.
		if h := lipgloss.Height(v); h != m.rubricHeight {
			m.rubricHeight = h
			m.layout() // stacked: the conversation's height; wide: the image's
		}
	}
	return m.rub.View()
}

// rubricState is what the rubric pane shows of the item on screen.
func (m *annotateModel) rubricState() rubricState {
	turnID := m.item.Ref.TurnID
	return rubricState{
		item: m.item.Turn.Item(), values: m.values, focus: m.focus, ann: m.ann, readOnly: m.readOnly,
		commenting: m.mode == modeComment, compact: m.compact(),
		unsaved: func(field string) bool { return m.save.unsaved(fieldKey{turnID, field}) },
	}
}

func (m *annotateModel) messageLine() string {
	if m.mode == modeFlag {
		return m.flagReason.View()
	}
	return m.notice.view(m.width)
}

// Reference implements Screen: this turn's action, the guide's quick-reference table and
// the guide itself. The parts that do not depend on the turn are laid out once per width.
func (m *annotateModel) Reference(width int) string {
	ref := m.quickRef.get(width, m.rub.quickReference)
	if m.item != nil {
		t := m.item.Turn.ActionType
		text := m.actions.Describe(t)
		if at, ok := m.actions[t]; ok && at.IntentZh != "" {
			text += "\n" + at.CapabilityZh + "：" + at.IntentZh
		}
		ref = lipgloss.JoinVertical(lipgloss.Left, m.st.Label.Render("This turn's action · 本轮动作"),
			lipgloss.NewStyle().Width(width).Render(m.st.Action.Render(textsafe.String(text))), "", ref)
	}
	return lipgloss.JoinVertical(lipgloss.Left, m.st.Label.Render("Quick reference · 评分速查表"), ref, "",
		m.guideRef.get(width, m.guideText))
}

// guideText is the rubric's guide, the guide's edge cases and when a comment is required,
// wrapped to width.
func (m *annotateModel) guideText(width int) string {
	parts := []string{lipgloss.NewStyle().Width(width).Render(m.st.Dim.Render(m.r.GuideEn + "\n" + m.r.GuideZh))}
	if m.guide != "" {
		parts = append(parts, "", strings.Join(wrapText(textsafe.String(strings.TrimSpace(m.guide)), width), "\n"))
	}
	// When a comment is required, from the rubric's rules (data, not code).
	if len(m.r.CommentRules) > 0 {
		var rules []string
		for _, cr := range m.r.CommentRules {
			rules = append(rules, "• "+cr.En+"\n  "+cr.Zh)
		}
		parts = append(parts, "", m.st.Label.Render("A comment is required when · 必须写评论的情况"),
			strings.Join(wrapText(strings.Join(rules, "\n"), width), "\n"))
	}
	return lipgloss.JoinVertical(lipgloss.Left, parts...)
}

// widthCache keeps a text laid out for one width: the help screen's reference is wrapped
// again only when the terminal's width changes, not each time it is drawn.
type widthCache struct {
	width int
	text  string
}

// get returns the text for width, laying it out with render if the width changed.
func (c *widthCache) get(width int, render func(width int) string) string {
	if c.width != width || c.text == "" {
		c.width, c.text = width, render(width)
	}
	return c.text
}

func padRight(s string, w int) string {
	return s + strings.Repeat(" ", max(0, w-lipgloss.Width(s)))
}
