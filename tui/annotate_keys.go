package tui

import (
	"context"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/m3bench/m3eval/internal/session"
	"github.com/m3bench/m3eval/internal/textsafe"
)

// annotateTable is the annotate screen's key table in one mode.
type annotateTable = bindings[*annotateModel]

// Conditions of the annotate screen's rows. A key needs an item on screen; the keys that
// change a label need one that is not submitted (read-only until e). The footer shows the
// keys of the label's state, whether an item is on screen yet or not, so it does not
// change height when the first item arrives.
func hasItem(m *annotateModel) bool   { return m.item != nil }
func editable(m *annotateModel) bool  { return m.item != nil && !m.readOnly }
func submitted(m *annotateModel) bool { return m.item != nil && m.readOnly }
func drafting(m *annotateModel) bool  { return !m.readOnly }
func reviewing(m *annotateModel) bool { return m.readOnly }

// newAnnotateTables builds the screen's key tables, one a mode, over its key maps. The
// rows' order is the footer's order; the normal mode's groups are the help screen's columns.
func newAnnotateTables(m *annotateModel) [modeImage + 1]annotateTable {
	k := &m.keys
	quit := func(m *annotateModel, _ tea.KeyMsg) tea.Cmd { return m.requestQuit() }
	stray := func(m *annotateModel, _ tea.KeyMsg) tea.Cmd {
		m.say(m.st.Warning, "submitted · e to edit (a stray key does not change a finished label)")
		return nil
	}
	back := func(m *annotateModel, _ tea.KeyMsg) tea.Cmd { m.mode = modeNormal; return nil }
	var t [modeImage + 1]annotateTable
	t[modeNormal] = annotateTable{
		// q and ? are the root's hints; ctrl+c quits in every mode.
		{key: &k.ForceQuit, do: quit},
		{key: &k.Quit, do: quit},
		{key: &k.Score, when: editable, do: (*annotateModel).scoreKey, footer: drafting, group: 1},
		{key: &k.Choice, when: editable, do: (*annotateModel).choiceKey, footer: drafting, group: 1},
		{key: &k.NextField, when: hasItem, do: func(m *annotateModel, _ tea.KeyMsg) tea.Cmd { m.moveFocus(1); return nil }, footer: drafting, group: 1},
		{key: &k.PrevField, when: hasItem, do: func(m *annotateModel, _ tea.KeyMsg) tea.Cmd { m.moveFocus(-1); return nil }, group: 1},
		{key: &k.Submit, when: hasItem, do: (*annotateModel).submitKey, footer: drafting, group: 2},
		{key: &k.Edit, when: hasItem, do: (*annotateModel).editKey, footer: reviewing, group: 3},
		{key: &k.PrevItem, when: hasItem, do: (*annotateModel).prevItemKey, footer: always[*annotateModel], group: 2},
		{key: &k.NextItem, when: hasItem, do: (*annotateModel).nextItemKey, footer: always[*annotateModel], group: 2},
		{key: &k.Skip, when: hasItem, do: (*annotateModel).skipKey, group: 2},
		{key: &k.Comment, when: editable, do: (*annotateModel).commentOpenKey, footer: drafting, group: 3},
		{key: &k.Undo, when: editable, do: func(m *annotateModel, _ tea.KeyMsg) tea.Cmd { return m.undo() }, footer: drafting, group: 3},
		{key: &k.Flag, when: editable, do: (*annotateModel).flagOpenKey, group: 3},
		{key: &k.ScrollUp, when: hasItem, do: func(m *annotateModel, _ tea.KeyMsg) tea.Cmd { m.turn.vp.HalfPageUp(); return nil }, group: 4},
		{key: &k.ScrollDown, when: hasItem, do: func(m *annotateModel, _ tea.KeyMsg) tea.Cmd { m.turn.vp.HalfPageDown(); return nil }, group: 4},
		{key: &k.Page, when: hasItem, do: func(m *annotateModel, _ tea.KeyMsg) tea.Cmd { m.turn.vp.PageDown(); return nil }, group: 4},
		{key: &k.Top, when: hasItem, do: func(m *annotateModel, _ tea.KeyMsg) tea.Cmd { m.turn.vp.GotoTop(); return nil }, group: 4},
		{key: &k.Bottom, when: hasItem, do: func(m *annotateModel, _ tea.KeyMsg) tea.Cmd { m.turn.vp.GotoBottom(); return nil }, group: 4},
		{key: &k.Read, when: hasItem, do: func(m *annotateModel, _ tea.KeyMsg) tea.Cmd { m.openReader(); return nil }, footer: always[*annotateModel], group: 4},
		{key: &k.Image, when: hasItem, do: (*annotateModel).imageKey, footer: reviewing, group: 3},
		{key: &k.Open, when: hasItem, do: (*annotateModel).openKey, footer: reviewing, group: 3},
		// A submitted label does not change by a stray key: these say how to edit it.
		{key: &k.Score, when: submitted, do: stray},
		{key: &k.Choice, when: submitted, do: stray},
		{key: &k.Comment, when: submitted, do: stray},
		{key: &k.Undo, when: submitted, do: stray},
		{key: &k.Flag, when: submitted, do: stray},
	}
	// The comment box takes every other key as text (typeComment).
	t[modeComment] = annotateTable{
		{key: &k.LeaveEditor, do: (*annotateModel).commentDoneKey, footer: always[*annotateModel]},
		{key: &k.SaveSubmit, do: (*annotateModel).commentDoneKey, footer: always[*annotateModel]},
		{key: &k.ForceQuit, do: quit, footer: always[*annotateModel]},
	}
	// The flag reason takes every other key as text.
	t[modeFlag] = annotateTable{
		{key: &k.ConfirmFlag, do: (*annotateModel).flagConfirmKey, footer: always[*annotateModel]},
		{key: &k.CancelFlag, do: (*annotateModel).flagCancelKey, footer: always[*annotateModel]},
		{key: &k.ForceQuit, do: quit},
	}
	// The full-screen views take every other key; their own key maps draw the footer.
	t[modeRead] = annotateTable{
		{key: &k.ForceQuit, do: quit},
		{key: &k.Quit, do: quit},
		{key: &m.reader.keys.Close, do: back},
	}
	t[modeImage] = annotateTable{
		{key: &k.ForceQuit, do: quit},
		{key: &k.Quit, do: quit},
		{key: &m.imgView.keys.Close, do: back},
	}
	return t
}

// handleKey runs the key's row of the mode's table; a key no row takes goes to what has
// focus (the comment box, the flag reason, a full-screen view).
func (m *annotateModel) handleKey(msg tea.KeyMsg) tea.Cmd {
	quits := key.Matches(msg, m.keys.ForceQuit) || m.mode == modeNormal && key.Matches(msg, m.keys.Quit)
	if m.save.asking() && !quits {
		m.save.cancelQuit()
		m.say(m.st.Warning, "not quitting: your changes keep retrying")
	}
	if cmd, ok := m.tables[m.mode].handle(m, msg); ok {
		return cmd
	}
	switch m.mode {
	case modeComment:
		return m.typeComment(msg)
	case modeFlag:
		var cmd tea.Cmd
		m.flagReason, cmd = m.flagReason.Update(msg)
		return cmd
	case modeImage:
		_, cmd := m.imgView.Update(msg)
		return cmd
	case modeRead:
		_, cmd := m.reader.Update(msg)
		return cmd
	}
	return nil
}

func (m *annotateModel) scoreKey(msg tea.KeyMsg) tea.Cmd {
	return m.score(halfWidthDigit(msg.String()))
}
func (m *annotateModel) choiceKey(msg tea.KeyMsg) tea.Cmd { return m.choose(plainKey(msg.String())) }

func (m *annotateModel) submitKey(tea.KeyMsg) tea.Cmd {
	if m.leaving() {
		return nil
	}
	return m.submit()
}

func (m *annotateModel) editKey(tea.KeyMsg) tea.Cmd {
	if m.readOnly {
		m.readOnly = false
		m.say(m.st.Message, "editing a submitted item: changes are saved and recorded; enter submits again")
	}
	return nil
}

func (m *annotateModel) prevItemKey(tea.KeyMsg) tea.Cmd {
	if m.leaving() {
		return nil
	}
	return tea.Batch(m.flushActive(), m.navigate(m.loadNext(m.item.Ref, false, false)))
}

func (m *annotateModel) nextItemKey(tea.KeyMsg) tea.Cmd {
	if m.leaving() {
		return nil
	}
	return tea.Batch(m.flushActive(), m.navigate(m.loadNext(m.item.Ref, true, false)))
}

func (m *annotateModel) skipKey(tea.KeyMsg) tea.Cmd {
	if m.leaving() {
		return nil
	}
	q, ref := m.q, m.item.Ref
	skip := m.write("skipped: moved to the end of the queue", func(ctx context.Context, e session.Edit) (*session.Annotation, error) {
		return q.Skip(ctx, e)
	})
	return tea.Batch(skip, m.navigate(m.loadNext(ref, true, true)))
}

func (m *annotateModel) commentOpenKey(tea.KeyMsg) tea.Cmd {
	if m.r.CommentField == "" {
		m.say(m.st.Warning, "this rubric has no comment field")
		return nil
	}
	m.mode = modeComment
	m.comment.SetValue(textsafe.String(m.values[m.r.CommentField]))
	m.layout()
	return m.comment.Focus()
}

func (m *annotateModel) flagOpenKey(tea.KeyMsg) tea.Cmd {
	if m.ann != nil && m.ann.Flagged {
		q := m.q
		return m.write("flag cleared", func(ctx context.Context, e session.Edit) (*session.Annotation, error) {
			return q.SetFlag(ctx, e, false, "")
		})
	}
	m.mode = modeFlag
	m.flagReason.SetValue("")
	if m.flagDraftItem == m.item.Ref.TurnID {
		m.flagReason.SetValue(m.flagDraft)
		m.flagReason.CursorEnd()
	}
	return m.flagReason.Focus()
}

func (m *annotateModel) imageKey(tea.KeyMsg) tea.Cmd {
	if len(m.item.Turn.Images) == 0 {
		m.say(m.st.Warning, "this turn has no images")
		return nil
	}
	m.mode = modeImage
	return m.imgView.Open(m.item.Turn.Images)
}

func (m *annotateModel) openKey(tea.KeyMsg) tea.Cmd {
	if len(m.item.Turn.Images) == 0 {
		m.say(m.st.Warning, "this turn has no images")
		return nil
	}
	return m.openImages(m.item.Turn.Images)
}

// ShortHelp implements help.KeyMap: the footer follows the mode and the label's state, so
// it shows what works now.
func (m *annotateModel) ShortHelp() []key.Binding {
	switch m.mode {
	case modeRead:
		return m.reader.ShortHelp()
	case modeImage:
		return m.imgView.ShortHelp()
	}
	return m.tables[m.mode].short(m)
}

// FullHelp implements help.KeyMap: the normal mode's keys, by group.
func (m *annotateModel) FullHelp() [][]key.Binding { return m.tables[modeNormal].full() }
