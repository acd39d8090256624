package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/m3bench/m3eval/internal/campaign"
	"github.com/m3bench/m3eval/internal/rubric"
	"github.com/m3bench/m3eval/internal/session"
	"github.com/m3bench/m3eval/internal/textsafe"
)

// adjMode is what the adjudication screen's keys go to.
type adjMode int

const (
	adjDeciding   adjMode = iota // the table of answers: letters, scores, moves
	adjTaking                    // t was pressed: the next letter takes that annotator's whole label
	adjCommenting                // the adjudicator's comment box has the keys
	adjViewing                   // the full-screen image view (i) has the keys
)

// adjTable is the adjudication screen's key table in one mode.
type adjTable = bindings[*AdjudicateModel]

func onTurn(m *AdjudicateModel) bool { return m.item != nil }

// flagged says the turn on screen has annotators' flags, which f clears.
func flagged(m *AdjudicateModel) bool { return m.item != nil && len(m.o.Cases[m.idx].Flags) > 0 }

// newAdjTables builds the screen's key tables, one a mode. The rows' order is the footer's
// order; the deciding mode's groups are the help screen's columns (the root adds "? help"
// and "q quit" once).
func newAdjTables(m *AdjudicateModel) [adjViewing + 1]adjTable {
	k := &m.keys
	all := always[*AdjudicateModel]
	var t [adjViewing + 1]adjTable
	t[adjDeciding] = adjTable{
		{key: &k.Quit, do: func(m *AdjudicateModel, _ tea.KeyMsg) tea.Cmd { return m.requestQuit() }},
		// Every other key needs the turn on screen; typed while it loads, it waits (early).
		{key: &k.Take, when: onTurn, do: (*AdjudicateModel).takeKey, footer: all, group: 1},
		{key: &k.TakeAll, when: onTurn, do: (*AdjudicateModel).takeAllKey, footer: all, group: 1},
		{key: &k.Score, when: onTurn, do: (*AdjudicateModel).valueKey, footer: all, group: 1},
		{key: &k.Choice, when: onTurn, do: (*AdjudicateModel).valueKey, footer: all, group: 1},
		{key: &k.NextField, when: onTurn, do: func(m *AdjudicateModel, _ tea.KeyMsg) tea.Cmd { m.step(1); return nil }, footer: all, group: 2},
		{key: &k.PrevField, when: onTurn, do: func(m *AdjudicateModel, _ tea.KeyMsg) tea.Cmd { m.step(-1); return nil }, group: 2},
		{key: &k.PrevCase, when: onTurn, do: func(m *AdjudicateModel, _ tea.KeyMsg) tea.Cmd { return m.goTo(m.idx - 1) }, footer: all, group: 3},
		{key: &k.NextCase, when: onTurn, do: func(m *AdjudicateModel, _ tea.KeyMsg) tea.Cmd { return m.goTo(m.idx + 1) }, footer: all, group: 3},
		{key: &k.Comment, when: onTurn, do: (*AdjudicateModel).commentOpenKey, footer: all, group: 2},
		{key: &k.Image, when: onTurn, do: (*AdjudicateModel).imageKey, footer: all, group: 2},
		{key: &k.Undo, when: onTurn, do: func(m *AdjudicateModel, _ tea.KeyMsg) tea.Cmd { return m.write(m.undoCmd()) }, footer: all, group: 3},
		{key: &k.ClearFlag, when: onTurn, do: (*AdjudicateModel).clearFlagKey, footer: flagged, group: 3},
		{key: &k.ScrollUp, when: onTurn, do: func(m *AdjudicateModel, _ tea.KeyMsg) tea.Cmd {
			m.turn.vp.HalfPageUp()
			m.turn.anchor = -1
			return nil
		}, group: 4},
		{key: &k.ScrollDown, when: onTurn, do: func(m *AdjudicateModel, _ tea.KeyMsg) tea.Cmd {
			m.turn.vp.HalfPageDown()
			m.turn.anchor = -1
			return nil
		}, group: 4},
	}
	// After t, a letter takes the whole label; any other key takes nothing (keyFallback).
	t[adjTaking] = adjTable{
		{key: &k.Take, do: func(m *AdjudicateModel, k tea.KeyMsg) tea.Cmd {
			m.mode = adjDeciding
			return m.takeWhole(k.Runes[0])
		}},
	}
	// The comment box takes every other key as text.
	t[adjCommenting] = adjTable{
		{key: &k.Save, do: (*AdjudicateModel).commentSaveKey, footer: all},
		{key: &k.Cancel, do: (*AdjudicateModel).commentCancelKey, footer: all},
		// Quitting writes what was typed, as the annotate screen does, rather than drop it
		// unsaid; an empty box writes nothing (it opens empty, so it would only erase).
		{key: &k.ForceQuit, do: func(m *AdjudicateModel, k tea.KeyMsg) tea.Cmd {
			var save tea.Cmd
			if strings.TrimSpace(m.comment.Value()) != "" {
				save = m.commentSaveKey(k)
			}
			m.mode = adjDeciding
			m.comment.Blur()
			return tea.Batch(save, m.requestQuit()) // the write is queued first: the quit waits for it
		}},
	}
	// The image view takes every other key; its own key map draws the footer.
	t[adjViewing] = adjTable{
		{key: &k.Quit, do: func(m *AdjudicateModel, _ tea.KeyMsg) tea.Cmd {
			m.mode = adjDeciding
			return m.requestQuit()
		}},
		{key: &m.imgView.keys.Close, do: func(m *AdjudicateModel, _ tea.KeyMsg) tea.Cmd { m.mode = adjDeciding; return nil }},
	}
	return t
}

// key runs the key's row of the mode's table; a key no row takes goes to what has focus.
func (m *AdjudicateModel) key(k tea.KeyMsg) tea.Cmd {
	if cmd, ok := m.tables[m.mode].handle(m, k); ok {
		return cmd
	}
	switch m.mode {
	case adjDeciding:
		if m.item == nil {
			m.early = append(m.early, k) // the turn is loading: the key applies to it
		}
	case adjTaking:
		m.mode = adjDeciding
		m.message = "not taken"
	case adjCommenting:
		if k.Paste {
			k.Runes = []rune(textsafe.String(string(k.Runes)))
		}
		var cmd tea.Cmd
		m.comment, cmd = m.comment.Update(k)
		return cmd
	case adjViewing:
		_, cmd := m.imgView.Update(k)
		return cmd
	}
	return nil
}

// goTo opens turn idx, if there is one. While a decision has not reached the database the
// turn stays, as on the annotate screen, rather than load a turn behind a write that may
// never land.
func (m *AdjudicateModel) goTo(idx int) tea.Cmd {
	if idx < 0 || idx >= len(m.o.Cases) {
		return nil
	}
	switch {
	case m.save.refused():
		m.err = fmt.Errorf("NOT SAVED, the database refuses writes: this turn stays open; q, q quits (%s)", refusal(m.save.failure()))
		return nil
	case m.save.failing():
		m.err = fmt.Errorf("NOT SAVED YET (%v): this turn stays open until its decisions land", m.save.failure())
		return nil
	}
	m.item = nil
	return m.load(idx)
}

func (m *AdjudicateModel) clearFlagKey(tea.KeyMsg) tea.Cmd {
	c := m.o.Cases[m.idx]
	if len(c.Flags) == 0 {
		m.message = "nobody flagged this turn"
		return nil
	}
	// f toggles: clearing says the flags were reviewed; f again puts them back.
	if campaign.FlagOpen(c.Labels, m.finals[c.SampleID]) {
		v := campaign.FlagCleared
		return m.write(m.setCmd(session.FinalEdit{Field: campaign.FlagField, Value: &v}))
	}
	return m.write(m.setCmd(session.FinalEdit{Field: campaign.FlagField}))
}

func (m *AdjudicateModel) takeAllKey(tea.KeyMsg) tea.Cmd {
	m.mode = adjTaking
	m.message = "take whose whole label (every field and the comment)? press their letter: " + m.lettersHere()
	return nil
}

func (m *AdjudicateModel) imageKey(tea.KeyMsg) tea.Cmd {
	if len(m.item.Turn.Images) == 0 {
		m.message = "this turn has no images"
		return nil
	}
	m.mode = adjViewing
	return m.imgView.Open(m.item.Turn.Images)
}

func (m *AdjudicateModel) commentOpenKey(tea.KeyMsg) tea.Cmd {
	if m.o.Rubric.CommentField == "" {
		m.message = "this rubric has no comment field"
		return nil
	}
	m.mode = adjCommenting
	// The box holds the adjudicator's own comment only: the annotators' comments are
	// shown above it, and taking one is t and their letter.
	m.comment.SetValue(m.ownComment())
	m.comment.CursorEnd()
	return m.comment.Focus()
}

// takeKey takes the focused field's value from the annotator with the letter typed.
func (m *AdjudicateModel) takeKey(k tea.KeyMsg) tea.Cmd {
	l, ok := m.labelOf(k.Runes[0])
	if !ok {
		return nil
	}
	f := m.fields[m.field]
	if fixed, _, isFixed := f.FixedValue(m.item.Turn.Item()); isFixed {
		m.message = fmt.Sprintf("%s does not apply to this turn: it is %s", f.LabelEn, fixed)
		return nil
	}
	v, ok := l.Values[f.Name]
	if !ok {
		m.message = fmt.Sprintf("%s gave no %s", clean(l.Annotator), f.LabelEn)
		return nil
	}
	return m.decide(f.Name, v, l.Annotator)
}

// valueKey decides the focused field with the adjudicator's own score or choice.
func (m *AdjudicateModel) valueKey(k tea.KeyMsg) tea.Cmd {
	f := m.fields[m.field]
	it := m.item.Turn.Item()
	if fixed, _, isFixed := f.FixedValue(it); isFixed {
		m.message = fmt.Sprintf("%s does not apply to this turn: it is %s", f.LabelEn, fixed)
		return nil
	}
	v, ok := m.valueOf(&f, plainKey(halfWidthDigit(k.String())))
	if !ok {
		allowed := fmt.Sprintf("%d–%d", f.Min, f.Max)
		if f.Kind == rubric.KindChoice {
			allowed = strings.Join(f.Allowed(it), ", ")
		}
		m.message = fmt.Sprintf("%q is not a value of %s: %s", k.String(), f.LabelEn, allowed)
		return nil
	}
	return m.decide(f.Name, v, "")
}

// commentCancelKey closes the comment box and leaves the final comment as it was.
func (m *AdjudicateModel) commentCancelKey(tea.KeyMsg) tea.Cmd {
	m.mode = adjDeciding
	m.comment.Blur()
	m.message = "comment not changed"
	return nil
}

// commentSaveKey saves the box's text as the final comment.
func (m *AdjudicateModel) commentSaveKey(tea.KeyMsg) tea.Cmd {
	m.mode = adjDeciding
	m.comment.Blur()
	text := textsafe.String(strings.TrimSpace(m.comment.Value()))
	return m.write(m.setCmd(session.FinalEdit{Field: m.o.Rubric.CommentField, Value: &text}))
}

// ShortHelp implements help.KeyMap: the footer is the mode's table (the image view's own
// keys while it is open); the root adds "? help" and "q quit".
func (m *AdjudicateModel) ShortHelp() []key.Binding {
	if m.mode == adjViewing {
		return m.imgView.ShortHelp()
	}
	if m.mode == adjTaking {
		return m.tables[adjDeciding].short(m)
	}
	return m.tables[m.mode].short(m)
}

// FullHelp implements help.KeyMap: the deciding mode's keys, by group.
func (m *AdjudicateModel) FullHelp() [][]key.Binding { return m.tables[adjDeciding].full() }
