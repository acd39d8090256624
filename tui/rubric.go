package tui

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/lipgloss/table"
	"github.com/charmbracelet/x/ansi"

	"github.com/m3bench/m3eval/internal/dataset"
	"github.com/m3bench/m3eval/internal/rubric"
	"github.com/m3bench/m3eval/internal/session"
)

// rubricState is what the rubric pane shows: a snapshot of the screen's item, taken each
// time the pane is drawn.
type rubricState struct {
	item       rubric.Item
	values     rubric.Values
	focus      int
	ann        *session.Annotation
	readOnly   bool
	commenting bool
	compact    bool
	unsaved    func(field string) bool // a write of the field failed and is being retried
}

// meaningsKey is what the focused field's meanings depend on.
type meaningsKey struct {
	field   int
	value   string
	width   int
	compact bool
}

// rubricPane shows the rubric's fields with their values, the focused field's meanings and
// the comment rule's warning. It owns its cache: the rendered pane, made again only when
// what it shows changed (key). The screen never has to say so, so no change it makes can
// be left off the screen.
type rubricPane struct {
	r       *rubric.Rubric
	st      Styles
	width   int
	compact bool
	view    string
	key     string // what view was rendered from: its width and rubricState.key

	meaningsCache map[meaningsKey][]string
}

func newRubricPane(r *rubric.Rubric, st Styles) *rubricPane {
	return &rubricPane{r: r, st: st}
}

// needWidth is the width the pane's rows need so that nothing in them is cut: the labels
// (English and Chinese), the longest value with its short meaning or the reason a field is
// fixed, and the weighted suggestion beside the suggestion field.
func (p *rubricPane) needWidth() int {
	enW, zhW := 0, 0
	for _, f := range p.r.Fields {
		enW = max(enW, lipgloss.Width(f.LabelEn))
		zhW = max(zhW, lipgloss.Width(f.LabelZh))
	}
	valW := lipgloss.Width("(none) — c to write")
	for i := range p.r.Fields {
		f := &p.r.Fields[i]
		for _, fr := range f.Fixed {
			valW = max(valW, lipgloss.Width(fr.Value+" ("+fr.WhyEn+")"))
		}
		opts := f.Levels
		if f.Kind == rubric.KindChoice {
			opts = f.Choices
		}
		w := 0
		for _, o := range opts {
			w = max(w, lipgloss.Width(o.Value+" "+o.ShortEn))
		}
		if f.Name == p.r.SuggestField {
			w = max(w, 1) + lipgloss.Width("   suggested 3.5 so far")
		}
		valW = max(valW, w)
	}
	return 2 + enW + 1 + zhW + 2 + valW
}

// Render renders the pane again if what it shows changed; changed says it did.
func (p *rubricPane) Render(s rubricState) (view string, changed bool) {
	if k := strconv.Itoa(p.width) + s.key(p.r); k != p.key {
		p.view, p.key, changed = p.render(s, p.width), k, true
	}
	return p.view, changed
}

// key is everything the pane's rendering reads from the state, in a string: the same key,
// the same pane. It is built on every frame, so it appends bytes rather than formatting;
// rendering the pane costs far more.
func (s rubricState) key(r *rubric.Rubric) string {
	b := make([]byte, 0, 256)
	flag := func(v bool) {
		if v {
			b = append(b, '1')
		} else {
			b = append(b, '0')
		}
	}
	text := func(v string) { // length-prefixed: no text can pass for another
		b = strconv.AppendInt(append(b, '|'), int64(len(v)), 10)
		b = append(append(b, ':'), v...)
	}
	text(s.item.ActionType)
	b = strconv.AppendInt(append(b, '|'), int64(s.item.Turn), 10)
	b = strconv.AppendInt(append(b, '|'), int64(s.focus), 10)
	flag(s.readOnly)
	flag(s.commenting)
	flag(s.compact)
	if s.ann != nil {
		text(string(s.ann.Status))
		flag(s.ann.Flagged)
		text(s.ann.FlagReason)
	}
	for _, f := range r.Fields {
		v, ok := s.values[f.Name]
		flag(ok)
		flag(s.unsaved != nil && s.unsaved(f.Name))
		text(v)
	}
	return string(b)
}

// Init implements tea.Model.
func (p *rubricPane) Init() tea.Cmd { return nil }

// Update implements tea.Model; the screen turns keys into answers, the pane only shows them.
func (p *rubricPane) Update(tea.Msg) (tea.Model, tea.Cmd) { return p, nil }

// View implements tea.Model: the last rendering.
func (p *rubricPane) View() string { return p.view }

// SetSize implements Component; the pane is as tall as its fields need.
func (p *rubricPane) SetSize(w, _ int) {
	p.width = w
}

// ShortHelp implements help.KeyMap; the screen's key map has the answer keys.
func (p *rubricPane) ShortHelp() []key.Binding { return nil }

// FullHelp implements help.KeyMap.
func (p *rubricPane) FullHelp() [][]key.Binding { return nil }

func (p *rubricPane) render(s rubricState, width int) string {
	it := s.item
	var lines []string
	title := "─ Rubric"
	if s.ann != nil {
		switch {
		case s.ann.Status == dataset.StatusDone && s.readOnly:
			title += " · ✓ submitted · e to edit"
		case s.ann.Status == dataset.StatusDone:
			title += " · ✓ submitted · editing"
		default:
			title += " · draft"
		}
		if s.ann.Flagged {
			title += " · ⚑ flagged"
			if s.ann.FlagReason != "" {
				title += ": " + shownLine(s.ann.FlagReason)
			}
		}
	}
	title += " "
	lines = append(lines, p.st.PaneTitle.Render(ansi.Truncate(title, width, "…"))+
		p.st.Dim.Render(strings.Repeat("─", max(0, width-lipgloss.Width(title)))))

	showZh := width >= 50 // the wide layout's rubric column (56+) keeps the Chinese labels
	enW, zhW := 0, 0
	for _, f := range p.r.Fields {
		enW = max(enW, lipgloss.Width(f.LabelEn))
		zhW = max(zhW, lipgloss.Width(f.LabelZh))
	}
	for i := range p.r.Fields {
		f := &p.r.Fields[i]
		marker, style := "  ", p.st.Field
		if i == s.focus {
			marker, style = "▸ ", p.st.FieldFocused
		}
		label := padRight(f.LabelEn, enW)
		if showZh {
			label += " " + padRight(f.LabelZh, zhW)
		}
		row := marker + style.Render(label) + "  " + p.valueText(s, f, it)
		lines = append(lines, ansi.Truncate(row, width, "…"))
	}
	if need := p.r.CommentNeeded(s.values, it); len(need) > 0 {
		// The warning keeps its action: the text is cut, never the "(c)".
		const action = " (c)"
		lines = append(lines, p.st.Warning.Render(ansi.Truncate("⚠ "+need[0].En, max(1, width-len(action)), "…")+action))
	}
	if s.commenting {
		f, _ := p.r.Field(p.r.CommentField)
		lines = append(lines, p.st.Label.Render(f.LabelEn+" "+f.LabelZh)+p.st.Dim.Render(" — esc when done · ctrl+s save & submit"))
		return strings.Join(lines, "\n") // rubricPane adds the live editor below
	}
	if s.focus >= 0 {
		f := &p.r.Fields[s.focus]
		// The meanings change only with the field, its value, the width and the density:
		// cached, a key press renders the rows, not the guide's text again.
		k := meaningsKey{s.focus, s.values[f.Name], width, s.compact}
		m, ok := p.meaningsCache[k]
		if !ok {
			if p.meaningsCache == nil || len(p.meaningsCache) > 256 {
				p.meaningsCache = map[meaningsKey][]string{}
			}
			m = p.meanings(s, f, width)
			p.meaningsCache[k] = m
		}
		lines = append(lines, m...)
	}
	return strings.Join(lines, "\n")
}

// valueText shows a field's value with its meaning, and for the suggestion field the
// guide's weighted suggestion beside it.
func (p *rubricPane) valueText(s rubricState, f *rubric.Field, it rubric.Item) string {
	if f.Kind == rubric.KindText {
		v := strings.TrimSpace(s.values[f.Name])
		if v == "" {
			if s.readOnly {
				return p.st.ValueUnset.Render("(none)") // c is refused until e
			}
			return p.st.ValueUnset.Render("(none) — c to write")
		}
		out := p.st.Value.Render(shownLine(v))
		if s.unsaved(f.Name) {
			out += " " + p.st.Error.Render("✗ unsaved")
		}
		return out
	}
	var out string
	if fixed, rule, ok := f.FixedValue(it); ok {
		out = p.st.FieldFixed.Render(fixed + " (" + rule.WhyEn + ")")
	} else if v, ok := s.values[f.Name]; ok {
		out = p.st.Value.Render(v)
		if s.unsaved(f.Name) {
			out += " " + p.st.Error.Render("✗ unsaved")
		} else if o, ok := f.Option(v); ok && o.ShortEn != "" {
			out += " " + p.st.Meaning.Render(o.ShortEn)
		}
	} else {
		out = p.st.ValueUnset.Render("·")
	}
	if f.Name == p.r.SuggestField {
		if s := p.r.Suggest(s.values, it); s.OK {
			sug := fmt.Sprintf("   suggested %.1f", s.Score)
			if s.Partial {
				sug += " so far"
			}
			out += p.st.Suggestion.Render(sug)
		}
	}
	return out
}

// meanings lists what each score of the focused field means.
func (p *rubricPane) meanings(s rubricState, f *rubric.Field, width int) []string {
	opts := f.Levels
	if f.Kind == rubric.KindChoice {
		opts = f.Choices
	}
	head := p.st.Label.Render(f.LabelEn+" "+f.LabelZh) + p.st.Dim.Render(": "+f.HelpEn)
	lines := []string{ansi.Truncate(head, width, "…")}
	cur := s.values[f.Name]
	if s.compact {
		var parts []string
		for _, o := range opts {
			k := o.Value
			if o.Key != "" {
				k = o.Key
			}
			parts = append(parts, k+" "+o.ShortEn+" "+o.ShortZh)
		}
		wrapped := lipgloss.NewStyle().Width(width).Render(p.st.Meaning.Render(strings.Join(parts, " · ")))
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
		lines = append(lines, p.st.Meaning.Render(ansi.Truncate(line, width, "…")))
	}
	return lines
}

// quickReference is the guide's score table, built from the rubric.
func (p *rubricPane) quickReference(width int) string {
	maxCols := 0
	for _, f := range p.r.Fields {
		maxCols = max(maxCols, len(f.Levels), len(f.Choices))
	}
	header := []string{""}
	for i := 0; i < maxCols; i++ {
		header = append(header, "")
	}
	t := table.New().Border(lipgloss.NormalBorder()).BorderStyle(p.st.Dim)
	for _, f := range p.r.Fields {
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
	if lipgloss.Width(t.Render()) <= width {
		return t.Render()
	}
	// Too narrow for the table: squeezed cells broke words, Chinese ones included (基本正
	// / 确). A list instead: each field, then its scores, a line broken only between them.
	var lines []string
	for _, f := range p.r.Fields {
		opts := f.Levels
		if f.Kind == rubric.KindChoice {
			opts = f.Choices
		}
		if len(opts) == 0 {
			continue
		}
		lines = append(lines, p.st.Label.Render(ansi.Truncate(f.LabelEn+" "+f.LabelZh, width, "…")))
		line := " "
		for _, o := range opts {
			item := " " + o.Value + " " + o.ShortEn + " " + o.ShortZh
			if lipgloss.Width(item) > width-1 {
				item = ansi.Truncate(item, width-1, "…")
			}
			if line != " " && lipgloss.Width(line)+lipgloss.Width(item)+2 > width {
				lines = append(lines, line)
				line = " "
			}
			if line != " " {
				line += " ·"
			}
			line += item
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}
