package tui

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/m3bench/m3eval/internal/campaign"
	"github.com/m3bench/m3eval/internal/rubric"
	"github.com/m3bench/m3eval/internal/session"
	"github.com/m3bench/m3eval/internal/textsafe"
)

// AdjudicateOptions configure an adjudication session.
type AdjudicateOptions struct {
	Context     context.Context
	Store       session.AdjudicationStore
	Rubric      *rubric.Rubric
	Actions     rubric.Actions // what each action type tests, as the annotate screen shows it
	Adjudicator string
	Cases       []campaign.Case
	// Start is the case shown first (e.g. the first one still open).
	Start    int
	Disagree campaign.DisagreeOptions
	Renderer *lipgloss.Renderer // nil: the default renderer (stdout)
	// Images reads image files; nil means the file system, with the demo's embedded images
	// as a fallback. Graphics is the full-screen view's protocol ("" means none).
	Images   ImageSource
	Graphics string
	// Unsaved, if set, is told how many writes were given up when the adjudicator quit
	// while the database did not answer (q twice), so the command can say so and exit 1.
	Unsaved func(n int)
}

// adjKeys are the bindings of the adjudication screen. Capital letters take an annotator's
// answer (A for the first column), so they never clash with the rubric's choice keys.
type adjKeys struct {
	Take, TakeAll, Score, Choice key.Binding
	NextField, PrevField         key.Binding
	NextCase, PrevCase           key.Binding
	Comment, Undo, Quit          key.Binding
	Save, Cancel, Image          key.Binding
	ClearFlag, ForceQuit         key.Binding
	ScrollUp, ScrollDown         key.Binding
}

func defaultAdjKeys() adjKeys {
	return adjKeys{
		Take:      key.NewBinding(key.WithKeys(strings.Split("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "")...), key.WithHelp("A-Z", "take theirs")),
		TakeAll:   key.NewBinding(key.WithKeys("t"), key.WithHelp("t A-Z", "take a whole label")),
		Comment:   key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "your comment")),
		Image:     key.NewBinding(key.WithKeys("i"), key.WithHelp("i", "image full screen")),
		Save:      key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "save comment")),
		Cancel:    key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel")),
		Score:     key.NewBinding(key.WithKeys("1", "2", "3", "4", "5", "6", "7", "8", "9"), key.WithHelp("1-5", "score")),
		Choice:    key.NewBinding(key.WithKeys("y", "n", "a"), key.WithHelp("y/n/a", "yes/no/NA")),
		NextField: key.NewBinding(key.WithKeys("tab", "down", "j"), key.WithHelp("tab/↓", "field")),
		PrevField: key.NewBinding(key.WithKeys("shift+tab", "up", "k"), key.WithHelp("S-tab/↑", "field")),
		NextCase:  key.NewBinding(key.WithKeys("right"), key.WithHelp("→", "next turn")),
		PrevCase:  key.NewBinding(key.WithKeys("left"), key.WithHelp("←", "prev turn")),
		Undo:      key.NewBinding(key.WithKeys("u"), key.WithHelp("u", "undo")),
		ClearFlag: key.NewBinding(key.WithKeys("f"), key.WithHelp("f", "clear/restore flags")),
		// The episode's earlier turns scroll as on the annotate screen.
		ScrollUp:   key.NewBinding(key.WithKeys("pgup", "ctrl+u"), key.WithHelp("pgup", "earlier turns")),
		ScrollDown: key.NewBinding(key.WithKeys("pgdown", "ctrl+d"), key.WithHelp("pgdn", "scroll down")),
		Quit:       key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
		// In the comment box q is a letter; ctrl+c still quits.
		ForceQuit: key.NewBinding(key.WithKeys("ctrl+c"), key.WithHelp("ctrl+c", "quit")),
	}
}

// AdjudicateModel walks the turns annotators disagree on, shows each annotator's labels side
// by side with the turn, and records the final value of a field with one key. Writes run one
// at a time, in key order; quitting waits for them.
type AdjudicateModel struct {
	o      AdjudicateOptions
	st     Styles
	keys   adjKeys
	fields []rubric.Field // the rating fields, in rubric order

	idx, field int
	item       *session.Item
	turn       *turnPane // the episode's earlier turns and this one, scrollable
	// letters gives each annotator of the campaign's cases one column letter for the whole
	// session (by name), so "A" means the same person on every turn.
	letters map[string]int
	names   []string
	// chosen are the fields decided by keys on this turn whose writes may still be on
	// their way: the cursor moves past them at once.
	chosen map[string]bool
	// mode is where the keys go; tables are its key tables (adjudicate_keys.go), which
	// also draw the footer and the help screen.
	mode    adjMode
	tables  [adjViewing + 1]adjTable
	comment textinput.Model
	imgView *imageView
	preview *imagePane // the turn's first image beside the table
	finals  map[string]map[string]campaign.Decision
	early   []tea.KeyMsg // keys typed while a turn loads
	// save runs the loads and writes in key order and holds the save state: a write that
	// failed runs again (same key, so it cannot land twice) after a backoff, first in line,
	// until it lands; one the database refuses is kept; quitting waits for them and asks.
	save    *saver
	message string
	err     error
	width   int
	height  int
}

type adjLoadedMsg struct {
	idx    int
	item   *session.Item
	finals map[string]map[string]campaign.Decision
	err    error
}

type adjSavedMsg struct {
	what   string
	finals map[string]map[string]campaign.Decision
	err    error
}

func (m adjSavedMsg) writeErr() error { return m.err }

// NewAdjudicate returns the root model running the adjudication screen: the root owns the
// header, the footer, help and the size; the screen is this file.
func NewAdjudicate(o AdjudicateOptions) *Model {
	s := newAdjudicateScreen(o)
	return newRoot(s, s.st)
}

var _ Screen = (*AdjudicateModel)(nil)

func newAdjudicateScreen(o AdjudicateOptions) *AdjudicateModel {
	if o.Context == nil {
		o.Context = context.Background()
	}
	r := o.Renderer
	if r == nil {
		r = lipgloss.DefaultRenderer()
	}
	m := &AdjudicateModel{o: o, st: DefaultStyles(r), keys: defaultAdjKeys(), width: 80, height: 24, letters: map[string]int{},
		save: newSaver(o.Context)}
	for _, c := range o.Cases {
		for _, l := range c.Labels {
			if _, ok := m.letters[l.Annotator]; !ok {
				m.letters[l.Annotator] = 0
				m.names = append(m.names, l.Annotator)
			}
		}
	}
	sort.Strings(m.names)
	for i, n := range m.names {
		m.letters[n] = i
	}
	if o.Images == nil {
		o.Images = defaultImageSource{}
		m.o.Images = o.Images
	}
	if o.Graphics == "" {
		o.Graphics = GraphicsNone
	}
	m.imgView = newImageView(o.Images, m.st, r.ColorProfile(), o.Graphics)
	m.preview = newImagePane(o.Images, m.st, r.ColorProfile())
	m.turn = newTurnPane(m.st, o.Actions, o.Rubric)
	m.comment = textinput.New()
	m.comment.Prompt = "Your comment: "
	m.comment.Placeholder = "why this final label (enter saves, esc cancels)"
	m.comment.CharLimit = 0 // a comment is as long as it needs to be
	// The score and choice keys come from the rubric, as on the annotate screen.
	km := newKeyMap(o.Rubric)
	m.keys.Score = km.Score
	// Capital letters take an annotator's answer here: the choice keys keep their lower
	// case and full-width forms only.
	var choice []string
	for _, k := range km.Choice.Keys() {
		if k == strings.ToLower(k) {
			choice = append(choice, k)
		}
	}
	m.keys.Choice = key.NewBinding(key.WithKeys(choice...), key.WithHelp(km.Choice.Help().Key, km.Choice.Help().Desc))
	for _, f := range o.Rubric.Fields {
		if f.Kind != rubric.KindText {
			m.fields = append(m.fields, f)
		}
	}
	m.tables = newAdjTables(m)
	return m
}

// Init implements tea.Model.
func (m *AdjudicateModel) Init() tea.Cmd { return m.load(min(max(m.o.Start, 0), len(m.o.Cases)-1)) }

// load reads a turn and the decisions so far, behind the writes already queued: the
// decisions it reads include every one made before.
func (m *AdjudicateModel) load(idx int) tea.Cmd {
	c, st := m.o.Cases[idx], m.o.Store
	return m.save.add(job{do: func(ctx context.Context) tea.Msg {
		it, err := st.LoadTurn(ctx, c.TurnID)
		if err != nil {
			return adjLoadedMsg{err: err}
		}
		f, err := st.Finals(ctx)
		return adjLoadedMsg{idx: idx, item: it, finals: f, err: err}
	}})
}

// Update implements tea.Model.
func (m *AdjudicateModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case jobDoneMsg:
		ev, retry := m.save.done(msg)
		switch ev {
		case evStale:
			return m, nil
		case evFailed, evFailedAgain, evRefused:
			m.saveFailed()
			return m, retry // the write keeps its place in line
		}
		cmd := m.result(msg.msg)
		if m.save.readyToQuit() {
			return m, tea.Quit
		}
		return m, tea.Batch(cmd, m.save.next())
	case saveRetryMsg:
		return m, m.save.retry(msg)
	case fullImageMsg:
		m.imgView.Update(msg)
		return m, nil
	case imagesDecodedMsg:
		m.preview.Update(msg)
		return m, nil
	case tea.KeyMsg:
		// A terminal hands over several keys typed fast as one message: take them one by one,
		// in order, so that "Bj3" takes B's answer, moves down and scores 3.
		if msg.Type == tea.KeyRunes && len(msg.Runes) > 1 && !msg.Paste {
			var cmds []tea.Cmd
			for _, r := range msg.Runes {
				cmds = append(cmds, m.key(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}}))
			}
			return m, tea.Batch(cmds...)
		}
		return m, m.key(msg)
	}
	return m, nil
}

// result handles what a finished load or write returned.
func (m *AdjudicateModel) result(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case adjLoadedMsg:
		if msg.err != nil {
			m.err = msg.err
			return nil
		}
		m.idx, m.item, m.finals, m.err, m.message = msg.idx, msg.item, msg.finals, nil, ""
		m.turn.SetItem(msg.item)
		m.chosen = map[string]bool{}
		if m.mode == adjTaking {
			m.mode = adjDeciding
		}
		m.field = 0
		m.moveToOpen(0)
		show := m.preview.Show(m.o.Cases[msg.idx].TurnID, msg.item.Turn.Images)
		// Keys typed while the turn loaded apply to it now, in order.
		early := m.early
		m.early = nil
		cmds := []tea.Cmd{show}
		for _, k := range early {
			cmds = append(cmds, m.key(k))
		}
		return tea.Batch(cmds...)
	case adjSavedMsg:
		if msg.err != nil { // the program is stopping: the saver gave the write up
			m.err = fmt.Errorf("not saved: %w", msg.err)
			return nil
		}
		m.err, m.message = nil, msg.what
		if msg.finals != nil {
			m.finals = msg.finals
		}
	}
	return nil
}

// saveFailed says that a write did not reach the database: it runs again after a backoff
// (nothing behind it overtakes it), or, refused for good, waits until the adjudicator quits.
func (m *AdjudicateModel) saveFailed() {
	err := m.save.failure()
	switch {
	case m.save.refused() && m.save.asking():
		m.err = fmt.Errorf("NOT SAVED, refused by the database: q again quits and loses it (%s)", refusal(err))
	case m.save.refused():
		m.err = fmt.Errorf("NOT SAVED for good: the database refuses writes; quitting loses it; ask admin (%s)", refusal(err))
	case m.save.asking():
		m.err = fmt.Errorf("NOT SAVED: waiting for the database; q again quits and loses it: %w", err)
	default:
		m.err = fmt.Errorf("NOT SAVED YET, retrying: %w", err)
	}
}

// requestQuit quits once every write has landed; while one fails it asks first, and a
// second quit gives the writes up (the command then exits 1).
func (m *AdjudicateModel) requestQuit() tea.Cmd {
	if m.save.asking() {
		n := m.save.giveUp()
		if m.o.Unsaved != nil {
			m.o.Unsaved(n)
		}
		return tea.Quit
	}
	switch m.save.requestQuit() {
	case quitNow:
		return tea.Quit
	case quitAsk:
		m.saveFailed()
	default:
		m.message = "saving before quitting…" // as the annotate screen says: q did register
	}
	return nil
}

// stopping reports whether the screen asked the program to quit: its last frame is blank.
func (m *AdjudicateModel) stopping() bool { return m.save.stopped() }

// decide writes a field's final value and moves the cursor to the next open field.
func (m *AdjudicateModel) decide(field, value, source string) tea.Cmd {
	m.chosen[field] = true
	m.moveToOpen(m.field + 1)
	return m.write(m.setCmd(session.FinalEdit{Field: field, Value: &value, Source: source}))
}

// labelOf is the label of the annotator with column letter r on this turn.
func (m *AdjudicateModel) labelOf(r rune) (campaign.AnnotatorLabel, bool) {
	i := int(r - 'A')
	if i < 0 || i >= len(m.names) {
		m.message = fmt.Sprintf("no annotator %c in this campaign (%s)", r, m.lettersHere())
		return campaign.AnnotatorLabel{}, false
	}
	for _, l := range m.o.Cases[m.idx].Labels {
		if l.Annotator == m.names[i] {
			return l, true
		}
	}
	m.message = fmt.Sprintf("%c (%s) did not label this turn (%s)", r, clean(m.names[i]), m.lettersHere())
	return campaign.AnnotatorLabel{}, false
}

// lettersHere lists the letters of this turn's annotators: "A ann, C cy".
func (m *AdjudicateModel) lettersHere() string {
	var parts []string
	for _, l := range m.o.Cases[m.idx].Labels {
		parts = append(parts, fmt.Sprintf("%c %s", 'A'+m.letters[l.Annotator], clean(l.Annotator)))
	}
	return strings.Join(parts, ", ")
}

// takeWhole takes every rating field the annotator answered and their comment, in one write.
func (m *AdjudicateModel) takeWhole(r rune) tea.Cmd {
	l, ok := m.labelOf(r)
	if !ok {
		return nil
	}
	it := m.item.Turn.Item()
	var edits []session.FinalEdit
	for _, f := range m.o.Rubric.Fields {
		v, ok := l.Values[f.Name]
		if f.Name == m.o.Rubric.CommentField {
			// The whole label comes with its comment, or with none when they wrote none:
			// another annotator's comment would explain values it does not hold.
			v, ok = strings.TrimSpace(v), true
		}
		if _, _, fixed := f.FixedValue(it); fixed || !ok {
			continue
		}
		edits = append(edits, session.FinalEdit{Field: f.Name, Value: &v, Source: l.Annotator})
		m.chosen[f.Name] = true
	}
	if len(edits) <= 1 && m.o.Rubric.CommentField != "" || len(edits) == 0 {
		m.message = fmt.Sprintf("%s gave no answers on this turn", clean(l.Annotator))
		return nil
	}
	m.moveToOpen(m.field)
	return m.write(m.setCmd(edits...))
}

// ownComment is the comment this turn's adjudication wrote anew ("" when none, or when the
// final comment was taken from an annotator).
func (m *AdjudicateModel) ownComment() string {
	d, ok := m.finals[m.o.Cases[m.idx].SampleID][m.o.Rubric.CommentField]
	if !ok || d.Source != "" {
		return ""
	}
	return d.Value
}

// applies reports whether a field takes a decision on this turn (an NA rule may fix it).
func (m *AdjudicateModel) applies(i int) bool {
	_, _, fixed := m.fields[i].FixedValue(m.item.Turn.Item())
	return !fixed
}

// open reports whether field i still waits for a decision: disputed, not decided yet.
func (m *AdjudicateModel) open(i int) bool {
	c := m.o.Cases[m.idx]
	name := m.fields[i].Name
	if !m.applies(i) || m.chosen[name] {
		return false
	}
	if _, ok := m.finals[c.SampleID][name]; ok {
		return false
	}
	for _, d := range c.Disputes {
		if d.Field == name {
			return true
		}
	}
	return false
}

// moveToOpen puts the cursor on the first open field from index from on (wrapping); when
// none is open it stays, on a field that applies.
func (m *AdjudicateModel) moveToOpen(from int) {
	n := len(m.fields)
	for k := 0; k < n; k++ {
		if i := (from + k) % n; m.open(i) {
			m.field = i
			return
		}
	}
	if !m.applies(m.field) {
		m.step(1)
	}
}

// step moves the cursor to the next (or previous) field that applies to this turn.
func (m *AdjudicateModel) step(d int) {
	n := len(m.fields)
	for k, i := 0, m.field; k < n; k++ {
		i = (i + d + n) % n
		if m.applies(i) {
			m.field = i
			return
		}
	}
}

// valueOf turns a key into a value of the field for this turn, if the rubric allows it.
func (m *AdjudicateModel) valueOf(f *rubric.Field, k string) (string, bool) {
	v := k
	if f.Kind == rubric.KindChoice {
		v = ""
		for _, c := range f.Choices {
			if c.Key == k {
				v = c.Value
			}
		}
	}
	t := &m.item.Turn
	return v, v != "" && f.Check(v, t.Item()) == nil
}

// write queues a database write behind the work already waiting.
func (m *AdjudicateModel) write(do func(ctx context.Context) tea.Msg) tea.Cmd {
	return m.save.add(job{do: do, write: true})
}

// setCmd writes final values of this turn in one transaction.
func (m *AdjudicateModel) setCmd(edits ...session.FinalEdit) func(ctx context.Context) tea.Msg {
	c := m.o.Cases[m.idx]
	var what []string
	// One key for the whole write: its retry after a lost COMMIT reply is not applied twice.
	key := newOpKey()
	for i := range edits {
		edits[i].TurnID, edits[i].Adjudicator, edits[i].RubricVersion, edits[i].Key = c.TurnID, m.o.Adjudicator, m.o.Rubric.Version, key
		what = append(what, m.editText(edits[i]))
	}
	st := m.o.Store
	return func(ctx context.Context) tea.Msg {
		if err := st.SetFinal(ctx, edits...); err != nil {
			return adjSavedMsg{err: err}
		}
		f, err := st.Finals(ctx)
		return adjSavedMsg{what: strings.Join(what, ", ") + " saved", finals: f, err: err}
	}
}

// editText says what a write sets: "Overall Quality = 3", "flags cleared".
func (m *AdjudicateModel) editText(e session.FinalEdit) string {
	switch {
	case e.Field == campaign.FlagField && e.Value == nil:
		return "flags restored"
	case e.Field == campaign.FlagField:
		return "flags cleared"
	case e.Value == nil:
		return m.label(e.Field) + " cleared"
	}
	if *e.Value == "" {
		// An empty comment taken with a whole label read "Comments =  saved".
		return m.label(e.Field) + " = (none)"
	}
	return fmt.Sprintf("%s = %s", m.label(e.Field), textsafe.Line(*e.Value))
}

func (m *AdjudicateModel) undoCmd() func(ctx context.Context) tea.Msg {
	c, st, who, version := m.o.Cases[m.idx], m.o.Store, m.o.Adjudicator, m.o.Rubric.Version
	// The key names this undo: retried after a lost COMMIT reply, it undoes nothing more.
	key := newOpKey()
	return func(ctx context.Context) tea.Msg {
		field, ok, err := st.UndoFinal(ctx, c.TurnID, who, version, key)
		if err != nil {
			return adjSavedMsg{err: err}
		}
		if !ok {
			return adjSavedMsg{what: "nothing to undo"}
		}
		f, err := st.Finals(ctx)
		return adjSavedMsg{what: "undid " + m.label(field), finals: f, err: err}
	}
}

// View implements tea.Model: the turn, the table of answers and the message line; the root
// draws the header and the key hints.
func (m *AdjudicateModel) View() string {
	w := max(40, m.width)
	if m.item == nil {
		return m.st.Dim.Render("loading…")
	}
	if m.mode == adjViewing {
		return m.imgView.View()
	}
	grid, notes := m.table(w)
	table := m.withPreview(grid, w)
	if notes != "" {
		table += "\n" + notes
	}
	foot := m.messageLine(w)
	if m.mode == adjCommenting {
		foot = m.comment.View()
	}
	// The turn pane takes the room the table leaves: the episode's earlier turns scroll
	// in it (pgup), as on the annotate screen.
	room := m.height - lipgloss.Height(table) - 1
	if room < 2 {
		return table + "\n" + foot
	}
	m.turn.SetCompact(m.height < 32)
	m.turn.SetSize(w, room)
	if n := m.turn.vp.TotalLineCount() + 1; n < room {
		m.turn.SetSize(w, n) // a short turn: the table follows it, not a gap
	}
	return strings.Join(append(m.turn.Lines(), table, foot), "\n")
}

// withPreview puts the turn's image beside the table when there are 20 columns to spare.
func (m *AdjudicateModel) withPreview(table string, w int) string {
	lines := strings.Split(table, "\n")
	tw := lipgloss.Width(table)
	if w-tw-2 < 20 || len(m.item.Turn.Images) == 0 {
		return table
	}
	pw := m.preview.PreferredWidth(len(lines))
	if pw <= 0 {
		return table
	}
	m.preview.SetSize(min(w-tw-2, pw), len(lines))
	img := strings.Split(m.preview.View(), "\n")
	if len(img) == 0 || img[0] == "" {
		return table
	}
	for i := range lines {
		if i < len(img) {
			lines[i] = padRight(lines[i], tw) + "  " + img[i]
		}
	}
	return strings.Join(lines, "\n")
}

// SetSize implements Component.
func (m *AdjudicateModel) SetSize(w, h int) {
	m.width, m.height = w, h
	m.imgView.SetSize(w, h)
}

// Header implements Screen: who adjudicates, where, how many turns are open; saved or not.
func (m *AdjudicateModel) Header(int) (left, right string) {
	open := 0
	for _, c := range m.o.Cases {
		if !m.decided(c) {
			open++
		}
	}
	left = m.st.HeaderDim.Render("adjudicate · ") + clean(m.o.Adjudicator) +
		m.st.HeaderDim.Render(fmt.Sprintf(" · turn %d of %d · %d open", m.idx+1, len(m.o.Cases), open))
	// The comment box's text is not in the database until enter saves it.
	typing := m.mode == adjCommenting && strings.TrimSpace(m.comment.Value()) != strings.TrimSpace(m.ownComment())
	return left, m.save.header(m.st, typing)
}

// CapturesKeys implements Screen: the comment box takes every key while open.
func (m *AdjudicateModel) CapturesKeys() bool { return m.mode == adjCommenting }

// Reference implements Screen: what the table's tags mean.
func (m *AdjudicateModel) Reference(width int) string {
	return lipgloss.NewStyle().Width(width).Render(m.st.Dim.Render(
		"Each column is one annotator's answer; an annotator keeps their letter on every turn of the campaign. " +
			"The final column is the decision: \"(A)\" took A's answer, \"(new)\" is the adjudicator's own value, " +
			"NA a field that does not apply to the turn. \"agreed\" means every annotator gave that value; \"proposed\" is " +
			"computed from close answers that differ (a majority, or the median rounded up) until you decide it. " +
			"≠ marks the fields in dispute; the cursor starts on the first " +
			"one still open and moves on after each decision. A letter takes that annotator's answer for the field and " +
			"leaves the comment as it is; t and a letter take their whole label (every field and their comment, or none). " +
			"c writes your own comment (the box starts empty: the annotators' comments are shown above it). " +
			"⚑ lines are annotators' flags: a flagged turn stays open, and export --final keeps the flag and the reasons, " +
			"until f clears them (f again restores them). pgup/pgdn scroll the episode's earlier turns."))
}

func (m *AdjudicateModel) decided(c campaign.Case) bool {
	if campaign.FlagOpen(c.Labels, m.finals[c.SampleID]) {
		return false
	}
	for _, d := range c.Disputes {
		if _, ok := m.finals[c.SampleID][d.Field]; !ok {
			return false
		}
	}
	return true
}

// table renders one row per rating field: each annotator's answer, and the final value
// (decided, agreed, proposed, or ? while a dispute is open), with the focused field marked;
// then the notes below it (the weighted suggestion, what the focused field's values mean,
// flags, comments), which run the screen's full width and so are kept apart from the grid
// the image preview sits beside.
func (m *AdjudicateModel) table(w int) (grid, notes string) {
	c := m.o.Cases[m.idx]
	decided := m.finals[c.SampleID]
	fin := campaign.Resolve(m.o.Rubric, c.Labels, decided, m.o.Disagree)
	disputed := map[string]bool{}
	for _, d := range c.Disputes {
		disputed[d.Field] = true
	}
	colW := max(8, min(16, (w-30)/(len(c.Labels)+1)))
	cell := func(s string) string { return padRight(ansi.Truncate(s, colW-1, "…"), colW) }
	var b strings.Builder
	// The turn's sample_id heads the names column: the id the CLI (--turn) and the lists use.
	b.WriteString(m.st.Label.Render(padRight(ansi.Truncate(clean(c.SampleID), 27, "…"), 28)))
	for _, l := range c.Labels {
		b.WriteString(m.st.Label.Render(cell(fmt.Sprintf("%c %s", 'A'+m.letters[l.Annotator], clean(l.Annotator)))))
	}
	b.WriteString(m.st.Label.Render(cell("final")))
	for i, f := range m.fields {
		b.WriteString("\n")
		mark := "  "
		if disputed[f.Name] {
			mark = "≠ "
		}
		name := padRight(ansi.Truncate(mark+f.LabelEn, 26, "…"), 26)
		row := "  " + name
		style := m.st.Field
		if i == m.field {
			row, style = "> "+name, m.st.FieldFocused
		}
		b.WriteString(style.Render(row))
		fixed, _, isFixed := f.FixedValue(m.item.Turn.Item())
		for _, l := range c.Labels {
			v, ok := l.Values[f.Name]
			switch {
			case isFixed:
				b.WriteString(m.st.Dim.Render(cell(fixed))) // as the annotate screen fixed it
				continue
			case !ok:
				v = "–"
			}
			b.WriteString(m.st.Value.Render(cell(shownLine(v))))
		}
		v, ok := fin.Values[f.Name]
		switch src := fin.Fields[f.Name]; {
		case isFixed:
			b.WriteString(m.st.Dim.Render(cell(fixed + " n/a")))
		case !ok:
			b.WriteString(m.st.Warning.Render(cell("?")))
		case strings.HasPrefix(src, string(campaign.SourceAdjudicated)):
			b.WriteString(m.st.Suggestion.Render(cell(clean(v) + " " + m.sourceTag(src))))
		case campaign.Unanimous(c.Labels, f.Name):
			b.WriteString(m.st.Dim.Render(cell(clean(v) + " agreed")))
		default:
			// Close answers that differ: the value is computed (a majority, or a median
			// rounded up), a proposal nobody gave as such; a key decides it.
			b.WriteString(m.st.Warning.Render(cell(clean(v) + " proposed")))
		}
	}
	grid = b.String()
	b.Reset()
	// The guide's weighted suggestion for the final values as they stand, and for each
	// annotator's: Overall is judged against it.
	it := m.item.Turn.Item()
	if sf, ok := m.o.Rubric.Field(m.o.Rubric.SuggestField); ok {
		var parts []string
		if sg := m.o.Rubric.Suggest(fin.Values, it); sg.OK {
			// Undecided fields count for nothing: with only Context Consistency decided
			// the bare number read "final 5.0". Say so, as the annotate screen does.
			so := ""
			if sg.Partial {
				so = " so far"
			}
			parts = append(parts, fmt.Sprintf("final %.1f%s", sg.Score, so))
		}
		for _, l := range c.Labels {
			if sg := m.o.Rubric.Suggest(l.Values, it); sg.OK {
				parts = append(parts, fmt.Sprintf("%c %.1f", 'A'+m.letters[l.Annotator], sg.Score))
			}
		}
		if len(parts) > 0 {
			b.WriteString(m.st.Suggestion.Render(ansi.Truncate("  "+sf.LabelEn+" suggested by the guide's weights: "+strings.Join(parts, " · "), w, "…")))
		}
	}
	// What each value of the focused field means, on one line (two when it wraps).
	{
		f := m.fields[m.field]
		opts := f.Levels
		if f.Kind == rubric.KindChoice {
			opts = f.Choices
		}
		var parts []string
		for _, o := range opts {
			k := o.Value
			if o.Key != "" {
				k = o.Key + "=" + o.Value
			}
			parts = append(parts, k+" "+o.ShortEn)
		}
		if len(parts) > 0 {
			b.WriteString("\n" + m.st.Meaning.Render(ansi.Truncate("  "+f.LabelEn+": "+strings.Join(parts, " · "), w, "…")))
		}
	}
	for _, l := range c.Labels {
		if !l.Flagged {
			continue
		}
		why := strings.TrimSpace(l.FlagReason)
		if why == "" {
			why = "(no reason)"
		}
		state := "f clears"
		if !campaign.FlagOpen(c.Labels, decided) {
			state = "cleared"
		}
		b.WriteString("\n" + m.st.Warning.Render(ansi.Truncate(fmt.Sprintf("  ⚑ %c %s flagged (%s): %s", 'A'+m.letters[l.Annotator], clean(l.Annotator), state, shownLine(why)), w, "…")))
	}
	if m.o.Rubric.CommentField != "" {
		for _, l := range c.Labels {
			if x := strings.TrimSpace(l.Values[m.o.Rubric.CommentField]); x != "" {
				b.WriteString("\n" + m.st.Dim.Render(ansi.Truncate(fmt.Sprintf("  %c: %s", 'A'+m.letters[l.Annotator], shownLine(x)), w, "…")))
			}
		}
		if d, ok := decided[m.o.Rubric.CommentField]; ok {
			text := shownLine(d.Value)
			if text == "" {
				text = "(none)"
			}
			if d.Source != "" {
				text += " " + m.sourceTag(string(campaign.SourceAdjudicated)+":"+d.Source)
			}
			b.WriteString("\n" + m.st.Suggestion.Render(ansi.Truncate("  final comment: "+text, w, "…")))
		}
	}
	return grid, strings.TrimPrefix(b.String(), "\n")
}

// sourceTag says whose answer a decided value is: "(B)" for the annotator with letter B,
// "(new)" when scored anew.
func (m *AdjudicateModel) sourceTag(src string) string {
	who := strings.TrimPrefix(strings.TrimPrefix(src, string(campaign.SourceAdjudicated)), ":")
	if i, ok := m.letters[who]; ok && who != "" {
		return fmt.Sprintf("(%c)", 'A'+i)
	}
	return "(new)"
}

func (m *AdjudicateModel) messageLine(w int) string {
	if m.err != nil {
		return m.st.Error.Render(ansi.Truncate(m.err.Error(), w, "…"))
	}
	if m.message != "" {
		return m.st.Message.Render(ansi.Truncate(m.message, w, "…"))
	}
	c := m.o.Cases[m.idx]
	var ds []string
	for _, d := range c.Disputes {
		ds = append(ds, clean(strings.Replace(d.Reason, d.Field, m.label(d.Field), 1)))
	}
	if len(ds) == 0 && campaign.FlagOpen(c.Labels, m.finals[c.SampleID]) {
		ds = append(ds, "flagged for review: read the reasons (⚑), decide a field if it needs it, f clears the flags")
	}
	return m.st.Warning.Render(ansi.Truncate(strings.Join(ds, " · "), w, "…"))
}

// label is a field's name as the rubric labels it for people ("Overall Quality").
func (m *AdjudicateModel) label(field string) string {
	if field == campaign.FlagField {
		return "the flags"
	}
	if f, ok := m.o.Rubric.Field(field); ok && f.LabelEn != "" {
		return f.LabelEn
	}
	return field
}

// clean makes text from data safe to draw: escape sequences show as text, newlines stay.
func clean(s string) string { return shownString(s) }
