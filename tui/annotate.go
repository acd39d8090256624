package tui

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/progress"
	"github.com/charmbracelet/bubbles/textarea"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/m3bench/m3eval/internal/dataset"
	"github.com/m3bench/m3eval/internal/rubric"
	"github.com/m3bench/m3eval/internal/session"
	"github.com/m3bench/m3eval/internal/textsafe"
)

// idleLimit caps the active time one pause between key presses adds: the annotator may be
// reading the response or the image, or may have left; counting 0 undercounted reading.
const idleLimit = 60 * time.Second

// commentSaveDelay is how long typing must pause before the comment is saved.
const commentSaveDelay = 400 * time.Millisecond

type mode int

const (
	modeNormal mode = iota
	modeComment
	modeFlag
	modeRead  // the full-screen reading view
	modeImage // the full-screen image view
)

// annotateModel is the annotate screen: the context of the turn, the rubric, and the keys
// that fill it in.
type annotateModel struct {
	ctx     context.Context
	q       session.Queue
	r       *rubric.Rubric
	actions rubric.Actions
	guide   string // the guide's edge cases and comment advice, for ?
	st      Styles
	keys    keyMap
	// tables are the key tables, one a mode (annotate_keys.go): what each key does and the
	// footer and help drawn from them.
	tables     [modeImage + 1]annotateTable
	now        func() time.Time
	openImages func([]string) tea.Cmd
	start      string

	width, height int

	// the queue
	total, pos, done int
	median           time.Duration
	hasMedian        bool
	allDone          bool

	// the item on screen
	item   *session.Item
	ann    *session.Annotation // as last saved
	values rubric.Values       // as shown: saved values plus writes still on their way
	focus  int                 // index into r.Fields; -1 when nothing is focusable

	mode         mode
	readOnly     bool // a submitted item opens read-only until e
	comment      textarea.Model
	commentRev   int
	flagReason   textinput.Model
	turn         *turnPane
	image        *imagePane
	reader       *readerPane
	imgView      *imageView
	bar          progress.Model
	rub          *rubricPane
	rubricHeight int
	rubNeed      int // the rubric pane's width without a cut (rubricNeed)
	// quickRef and guideRef are the help screen's reference, laid out for the last width.
	quickRef, guideRef widthCache
	// notice is the message line and the item it is tied to.
	notice notice
	// flagDraft is the flag reason typed and cancelled with esc, for this item: f brings it
	// back.
	flagDraft     string
	flagDraftItem int64

	// save runs the database work in key order and holds the save state: what is on its
	// way, a write that fails and is retried, a refusal, and a quit waiting for them.
	save *saver

	// loading is set while the next item is on its way; keys pressed meanwhile wait in
	// deferred and replay on the new item, so fast typing never lands on the old one.
	loading     bool
	deferred    []tea.KeyMsg
	pendingCmds []tea.Cmd

	// the session, for the summary printed after quitting
	started   time.Time
	submitted map[int64]bool // items submitted in this session (and still submitted)

	// active time on the current item since the last write
	lastInput time.Time
	active    time.Duration
}

func newAnnotateModel(o Options, st Styles, r *lipgloss.Renderer) *annotateModel {
	ta := textarea.New()
	ta.Placeholder = "Why this score? (esc when done)"
	ta.ShowLineNumbers = false
	ta.Prompt = "┃ "
	ta.CharLimit = 0
	ti := textinput.New()
	ti.Placeholder = "reason (optional)"
	ti.Prompt = "Flag for review: "
	fill := colorAccent.Light
	if r.HasDarkBackground() {
		fill = colorAccent.Dark
	}
	// The bar renders with the session's profile, so NO_COLOR reaches it too.
	bar := progress.New(progress.WithSolidFill(fill), progress.WithoutPercentage(), progress.WithColorProfile(r.ColorProfile()))
	bar.Width = 16
	m := &annotateModel{
		ctx: o.Context, q: o.Queue, r: o.Rubric, actions: o.Actions, guide: o.Guide, st: st,
		keys: annotateKeys(o), now: o.Now, openImages: o.OpenImages, start: o.StartSample,
		comment: ta, flagReason: ti, turn: newTurnPane(st, o.Actions, o.Rubric), bar: bar, focus: -1, rub: newRubricPane(o.Rubric, st),
		save: newSaver(o.Context), image: newImagePane(o.Images, st, r.ColorProfile()),
		reader: newReaderPane(st), imgView: newImageView(o.Images, st, r.ColorProfile(), o.Graphics),
		started: o.Now(), submitted: map[int64]bool{},
	}
	m.tables = newAnnotateTables(m)
	return m
}

// Init implements tea.Model.
func (m *annotateModel) Init() tea.Cmd {
	m.loading = true
	return m.enqueue(m.loadInfo(), m.loadFirst(m.start))
}

// SetSize gives the screen its share of the terminal.
func (m *annotateModel) SetSize(w, h int) {
	m.width, m.height = w, h
	m.reader.SetSize(w, h-1)
	m.imgView.SetSize(w, h-1)
	m.comment.SetWidth(max(10, w-4))
	m.comment.SetHeight(5)
	if m.compact() {
		m.comment.SetHeight(3)
	}
	m.flagReason.Width = max(10, w-24)
	m.layout()
}

// Update implements tea.Model.
func (m *annotateModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case jobDoneMsg:
		ev, retry := m.save.done(msg)
		m.saveEvent(ev)
		switch ev {
		case evStale:
			return m, nil
		case evFailed, evFailedAgain, evRefused:
			return m, retry // the write keeps its place in line
		}
		cmd := tea.Batch(m.handleResult(msg.msg), m.takePending())
		if m.save.readyToQuit() {
			m.notice.clear()
			return m, tea.Quit
		}
		return m, tea.Batch(cmd, m.save.next())
	case saveRetryMsg:
		return m, m.save.retry(msg)
	case commentTickMsg:
		if msg.rev == m.commentRev && m.mode == modeComment {
			return m, m.saveComment()
		}
		return m, nil
	case tea.KeyMsg:
		if m.loading && !key.Matches(msg, m.keys.ForceQuit) {
			m.deferred = append(m.deferred, msg)
			return m, nil
		}
		m.countActive()
		return m, m.handleKey(msg)
	case imagesDecodedMsg:
		m.image.Update(msg)
		return m, nil
	case fullImageMsg:
		m.imgView.Update(msg)
		return m, nil
	case imagesOpenedMsg:
		if msg.err != nil {
			m.say(m.st.Warning, "%v", msg.err)
		} else if msg.note != "" {
			m.say(m.st.Message, "%s", msg.note)
		} else {
			m.say(m.st.Message, "opened %d image(s) in the system viewer", msg.opened)
		}
		return m, nil
	case tea.MouseMsg:
		if m.mode == modeRead {
			_, cmd := m.reader.Update(msg)
			return m, cmd
		}
		_, cmd := m.turn.Update(msg)
		return m, cmd
	}
	return m, nil
}

// navigate queues the load of another item and holds keys until it arrives.
func (m *annotateModel) navigate(o op) tea.Cmd {
	m.loading = true
	return m.enqueue(o)
}

// replayDeferred handles the keys that arrived while an item was loading.
func (m *annotateModel) replayDeferred() {
	keys := m.deferred
	m.deferred = nil
	for _, k := range keys {
		if m.loading {
			m.deferred = append(m.deferred, k)
			continue
		}
		m.countActive()
		m.pendingCmds = append(m.pendingCmds, m.handleKey(k))
	}
}

func (m *annotateModel) takePending() tea.Cmd {
	cmds := m.pendingCmds
	m.pendingCmds = nil
	return tea.Batch(cmds...)
}

// countActive adds the time since the previous key press, unless the annotator was idle.
func (m *annotateModel) countActive() {
	now := m.now()
	if d := now.Sub(m.lastInput); d > 0 {
		m.active += min(d, idleLimit)
	}
	m.lastInput = now
}

func (m *annotateModel) takeActive() time.Duration {
	d := m.active
	m.active = 0
	return d
}

func (m *annotateModel) say(style lipgloss.Style, format string, args ...any) {
	var item int64
	if m.item != nil {
		item = m.item.Ref.TurnID
	}
	// Messages quote data (sample ids, paths, errors naming values): one safe line.
	m.notice.say(style, textsafe.Line(fmt.Sprintf(format, args...)), item)
}

// note says what happened to item turnID (submitted, skipped, flagged): it stays when the
// next item opens, as its confirmation, and goes when that one is left, so it is never
// shown beside an item it is not about for longer than one step.
func (m *annotateModel) note(turnID int64, style lipgloss.Style, format string, args ...any) {
	m.say(style, format, args...)
	// About the item on screen, which stays (flagged); or the next item is on its way,
	// and the confirmation is bound to it.
	onScreen := m.item != nil && m.item.Ref.TurnID == turnID && !m.loading
	m.notice.confirm(onScreen, m.item == nil || m.item.Ref.TurnID == turnID, turnID)
}

func (m *annotateModel) handleResult(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case queueInfoMsg:
		if msg.err != nil {
			m.say(m.st.Error, "could not read the queue: %v", msg.err)
			return nil
		}
		m.total, m.done, m.median, m.hasMedian = msg.total, msg.done, msg.median, msg.hasMedian
	case itemMsg:
		m.loading = false
		defer m.replayDeferred()
		if msg.err != nil {
			m.say(m.st.Error, "%v", msg.err)
			return nil
		}
		m.allDone = msg.allDone
		if msg.note != "" {
			m.say(m.st.Warning, "%s", msg.note)
		}
		if msg.item == nil {
			return nil
		}
		// The message about the item just left ("submitted", "skipped", "flagged") stays
		// until the next one replaces it: it confirms what happened to that item.
		m.show(msg.item)
		m.pendingCmds = append(m.pendingCmds, m.enqueue(m.loadPosition(msg.item.Ref)))
		return nil
	case positionMsg:
		if msg.err == nil && m.item != nil && msg.turnID == m.item.Ref.TurnID {
			m.pos = msg.pos
		}
	case savedMsg:
		if msg.err != nil { // the program is stopping: the saver gave the write up
			return nil
		}
		if msg.note != "" {
			m.note(msg.turnID, m.st.Message, "%s", msg.note)
		}
		m.absorb(msg.turnID, msg.ann)
	case undoneMsg:
		switch {
		case msg.err != nil: // the program is stopping: the saver gave the undo up
		case !msg.ok:
			m.say(m.st.Warning, "nothing to undo on this item")
		default:
			m.say(m.st.Message, "undid %s", describeUndo(m.r, msg.what))
			m.absorb(msg.turnID, msg.ann)
			if m.item != nil && msg.turnID == m.item.Ref.TurnID && msg.ann != nil {
				m.values = m.r.Apply(msg.ann.Values, m.item.Turn.Item())
				// Focus goes where the change was undone, so the next key redoes it.
				for _, w := range msg.what {
					if w.Kind == session.ChangeValue {
						m.focusField(w.Field)
					}
				}
			}
		}
	}
	return nil
}

// absorb takes the saved state of an annotation. Shown values follow the database once no
// other write to the item is on its way, so a slow write never rolls back a newer key press.
func (m *annotateModel) absorb(turnID int64, a *session.Annotation) {
	if a == nil || m.item == nil || turnID != m.item.Ref.TurnID {
		return
	}
	wasDone := m.ann != nil && m.ann.Status == dataset.StatusDone
	m.ann = a
	if a.Status == dataset.StatusDone && !wasDone {
		// Just submitted: read-only until e on every path, also when it stays on screen
		// (the last item of the queue, where no next item replaces it).
		m.readOnly = true
		m.done++
		m.submitted[turnID] = true
		// The pace changed: read the median again, so the ETA follows from the first
		// submitted item on.
		m.pendingCmds = append(m.pendingCmds, m.enqueue(m.loadInfo()))
	} else if a.Status != dataset.StatusDone && wasDone {
		m.done--
		delete(m.submitted, turnID)
	}
	if !m.save.saving() {
		m.values = m.r.Apply(a.Values, m.item.Turn.Item())
	}
}

// annotateKeys are the annotate screen's keys for these options. Over SSH (Remote) no
// viewer can open on the annotator's machine: o lists the images' paths on the server, and
// its hint says so rather than promising to open them (i shows them in the terminal).
func annotateKeys(o Options) keyMap {
	k := newKeyMap(o.Rubric)
	if o.Remote {
		k.Open.SetHelp("o", "image paths")
	}
	return k
}

// show puts an item on screen.
func (m *annotateModel) show(it *session.Item) {
	m.notice.shown(it.Ref.TurnID)
	if m.flagDraftItem != it.Ref.TurnID {
		m.flagDraft, m.flagDraftItem = "", 0
	}
	m.item = it
	m.ann = it.Annotation
	vals := rubric.Values{}
	if it.Annotation != nil {
		vals = it.Annotation.Values
	}
	m.values = m.r.Apply(vals, it.Turn.Item())
	m.mode = modeNormal
	m.readOnly = it.Annotation != nil && it.Annotation.Status == dataset.StatusDone
	m.focus = m.firstOpenField()
	m.pos = 0
	m.turn.SetItem(it)
	m.lastInput = m.now()
	m.active = 0
	m.pendingCmds = append(m.pendingCmds, m.image.Show(it.Ref.TurnID, it.Turn.Images))
	m.layout()
}

// takesInput reports whether a field takes input on this turn (fixed and text fields do not).
func (m *annotateModel) takesInput(i int) bool {
	f := &m.r.Fields[i]
	if f.Kind == rubric.KindText {
		return false
	}
	_, _, fixed := f.FixedValue(m.item.Turn.Item())
	return !fixed
}

// firstOpenField is the first field that takes input and has no answer yet, else the first
// that takes input: an item opens where the work is.
func (m *annotateModel) firstOpenField() int {
	first := -1
	for i := range m.r.Fields {
		if !m.takesInput(i) {
			continue
		}
		if _, answered := m.values[m.r.Fields[i].Name]; !answered {
			return i
		}
		if first < 0 {
			first = i
		}
	}
	return first
}

// focusField moves focus to the named field.
func (m *annotateModel) focusField(name string) {
	for i := range m.r.Fields {
		if m.r.Fields[i].Name == name && m.takesInput(i) {
			m.focus = i
		}
	}
}

// moveFocus moves to the next (or previous) open field, wrapping around.
func (m *annotateModel) moveFocus(step int) {
	n := len(m.r.Fields)
	for k, i := 0, m.focus; k < n; k++ {
		i = (i + step + n) % n
		if m.takesInput(i) {
			m.focus = i
			return
		}
	}
}

// advance moves focus to the next open field after the current one; on the last it stays.
func (m *annotateModel) advance() {
	n := len(m.r.Fields)
	for i := m.focus + 1; i < n; i++ {
		if m.takesInput(i) {
			m.focus = i
			return
		}
	}
}

// score sets the focused 1–5 field.
func (m *annotateModel) score(k string) tea.Cmd {
	if m.focus < 0 {
		return nil
	}
	f := &m.r.Fields[m.focus]
	if f.Kind != rubric.KindScale {
		m.say(m.st.Warning, "%s takes %s", f.LabelEn, strings.Join(f.Allowed(m.item.Turn.Item()), "/"))
		return nil
	}
	if err := f.Check(k, m.item.Turn.Item()); err != nil {
		m.say(m.st.Warning, "%s: %d–%d only", f.LabelEn, f.Min, f.Max)
		return nil
	}
	return m.set(f, k)
}

// choose sets the focused Yes/No/NA field by the choice's key.
func (m *annotateModel) choose(k string) tea.Cmd {
	if m.focus < 0 {
		return nil
	}
	f := &m.r.Fields[m.focus]
	if f.Kind != rubric.KindChoice {
		m.say(m.st.Warning, "%s takes a score from %d to %d", f.LabelEn, f.Min, f.Max)
		return nil
	}
	for _, c := range f.Choices {
		if c.Key != k {
			continue
		}
		if err := f.Check(c.Value, m.item.Turn.Item()); err != nil {
			m.say(m.st.Warning, "%s: %s only on this turn", f.LabelEn, strings.Join(f.Allowed(m.item.Turn.Item()), " or "))
			return nil
		}
		return m.set(f, c.Value)
	}
	return nil
}

func (m *annotateModel) set(f *rubric.Field, v string) tea.Cmd {
	m.notice.clear()
	m.advance()
	if old, ok := m.values[f.Name]; ok && old == v {
		return nil
	}
	m.values[f.Name] = v
	val := v
	return m.setValue(f.Name, &val)
}

// submit accepts the item when complete and opens the next unfinished one.
func (m *annotateModel) submit() tea.Cmd {
	it := m.item.Turn.Item()
	if missing := m.r.Missing(m.values, it); len(missing) > 0 {
		labels := make([]string, len(missing))
		for i, name := range missing {
			f, _ := m.r.Field(name)
			labels[i] = f.LabelEn
		}
		m.say(m.st.Warning, "missing: %s", strings.Join(labels, ", "))
		for i := range m.r.Fields {
			if m.r.Fields[i].Name == missing[0] {
				m.focus = i
			}
		}
		return nil
	}
	if need := m.r.CommentNeeded(m.values, it); len(need) > 0 {
		m.say(m.st.Warning, "%s — press c", need[0].En)
		return nil
	}
	q, ref := m.q, m.item.Ref
	save := m.write("submitted", func(ctx context.Context, e session.Edit) (*session.Annotation, error) {
		return q.Submit(ctx, e)
	})
	return tea.Batch(save, m.navigate(m.loadNext(ref, true, true)))
}

func (m *annotateModel) requestQuit() tea.Cmd {
	if m.save.asking() {
		// Asked once already: quit and give up what is not saved (the command exits non-zero).
		m.save.giveUp()
		return tea.Quit
	}
	// A quit leaves the text box, as the adjudicate screen's does: the comment goes to its
	// write and the flag reason stays a draft (f brings it back), so that the question below
	// shows and "q again" is a key, not a letter typed into the box that takes the quit back.
	var cmds []tea.Cmd
	switch m.mode {
	case modeComment:
		cmds = append(cmds, m.saveComment())
		m.comment.Blur()
		m.mode = modeNormal
		m.layout()
	case modeFlag:
		m.flagReason.Blur()
		m.flagDraft, m.flagDraftItem = m.flagReason.Value(), m.item.Ref.TurnID
		m.mode = modeNormal
	}
	cmds = append(cmds, m.flushActive())
	switch m.save.requestQuit() {
	case quitNow:
		return tea.Quit
	case quitAsk:
		m.askQuit()
	default:
		m.say(m.st.Saving, "saving before quitting…")
	}
	return tea.Batch(cmds...)
}

// stopping reports whether the screen asked the program to quit: its last frame is blank.
func (m *annotateModel) stopping() bool { return m.save.stopped() }

// saveAndQuit quits once everything typed has landed, as requestQuit does, but never asks.
func (m *annotateModel) saveAndQuit() tea.Cmd {
	m.save.cancelQuit()
	cmd := m.requestQuit()
	m.save.waitQuit()
	return cmd
}

// askQuit warns that quitting now loses changes; m3eval still quits by itself once they land.
func (m *annotateModel) askQuit() {
	if m.save.refused() {
		m.say(m.st.Error, "%d change(s) NOT SAVED, refused by the database: q again quits and loses them (%s)",
			m.save.pending(), refusal(m.save.failure()))
		return
	}
	m.say(m.st.Error, "%d change(s) NOT SAVED: q again quits and loses them; wait and m3eval quits once they land (%v)",
		m.save.pending(), m.save.failure())
}

// leaving refuses to leave an item whose changes have not reached the database.
func (m *annotateModel) leaving() bool {
	if !m.save.failing() {
		return false
	}
	if m.save.refused() {
		m.say(m.st.Error, "NOT SAVED, the database refuses writes: this item stays open; q, q quits (%s)",
			refusal(m.save.failure()))
		return true
	}
	m.say(m.st.Error, "NOT SAVED YET (%v): this item stays open until its changes land", m.save.failure())
	return true
}

// commentTickMsg fires when typing in the comment box may have paused.
type commentTickMsg struct{ rev int }

// commentDoneKey closes the comment box (esc), saving the comment; ctrl+s also submits.
func (m *annotateModel) commentDoneKey(msg tea.KeyMsg) tea.Cmd {
	cmd := m.saveComment()
	m.comment.Blur()
	m.mode = modeNormal
	m.layout()
	if key.Matches(msg, m.keys.SaveSubmit) && !m.readOnly && !m.leaving() {
		return tea.Batch(cmd, m.submit())
	}
	return cmd
}

// typeComment gives a key to the comment box; the comment is saved once typing pauses.
func (m *annotateModel) typeComment(msg tea.KeyMsg) tea.Cmd {
	if msg.Paste {
		msg.Runes = []rune(textsafe.String(string(msg.Runes))) // a pasted escape stays text
	}
	var cmd tea.Cmd
	m.comment, cmd = m.comment.Update(msg)
	m.commentRev++
	rev := m.commentRev
	tick := tea.Tick(commentSaveDelay, func(time.Time) tea.Msg { return commentTickMsg{rev} })
	return tea.Batch(cmd, tick)
}

// saveComment stores the comment box's text if it changed.
func (m *annotateModel) saveComment() tea.Cmd {
	name := m.r.CommentField
	text := m.comment.Value()
	if m.item == nil || m.values[name] == text {
		return nil
	}
	if strings.TrimSpace(text) == "" {
		delete(m.values, name)
		return m.setValue(name, nil)
	}
	m.values[name] = text
	return m.setValue(name, &text)
}

// flagCancelKey cancels the flag (esc), as its hint says; what was typed is kept for f on
// this item.
func (m *annotateModel) flagCancelKey(tea.KeyMsg) tea.Cmd {
	m.mode = modeNormal
	m.flagReason.Blur()
	m.flagDraft, m.flagDraftItem = m.flagReason.Value(), m.item.Ref.TurnID
	if strings.TrimSpace(m.flagDraft) != "" {
		m.say(m.st.Warning, "not flagged: f brings the reason back, enter flags")
	} else {
		m.say(m.st.Message, "not flagged")
	}
	return nil
}

// flagConfirmKey flags the item for review with the reason typed.
func (m *annotateModel) flagConfirmKey(tea.KeyMsg) tea.Cmd {
	m.mode = modeNormal
	m.flagReason.Blur()
	m.flagDraft, m.flagDraftItem = "", 0
	reason, q := strings.TrimSpace(m.flagReason.Value()), m.q
	return m.write("flagged for review", func(ctx context.Context, e session.Edit) (*session.Annotation, error) {
		return q.SetFlag(ctx, e, true, reason)
	})
}

func describeUndo(r *rubric.Rubric, what []session.Undone) string {
	parts := make([]string, 0, len(what))
	for _, w := range what {
		switch w.Kind {
		case session.ChangeValue:
			if f, ok := r.Field(w.Field); ok {
				parts = append(parts, f.LabelEn)
			}
		case session.ChangeFlag:
			parts = append(parts, "flag")
		case session.ChangeStatus:
			parts = append(parts, "submission")
		}
	}
	return strings.Join(parts, ", ")
}

func errNotInQueue(sample string) error {
	return fmt.Errorf("sample %s is not in this queue (check the id and --filter)", sample)
}

// standing says where the queue stands: "5 of 35 done".
func (m *annotateModel) standing() string {
	if m.total == 0 {
		return "the queue is empty"
	}
	return fmt.Sprintf("%d of %d done", m.done, m.total)
}

// eta is the time left at the annotator's median pace.
func (m *annotateModel) eta() string {
	if !m.hasMedian || m.total == 0 {
		return "ETA —"
	}
	left := time.Duration(m.total-m.done) * m.median
	if left <= 0 {
		return "ETA 0m"
	}
	h, min := int(left.Hours()), int(left.Minutes())%60
	if h > 0 {
		return "ETA " + strconv.Itoa(h) + "h" + fmt.Sprintf("%02dm", min)
	}
	return "ETA " + strconv.Itoa(max(1, min)) + "m"
}

// halfWidthDigit maps a full-width digit (１–９ from a Chinese input method) to its ASCII
// digit; other keys stay as they are.
func halfWidthDigit(k string) string {
	if r := []rune(k); len(r) == 1 && r[0] >= '０' && r[0] <= '９' {
		return string(rune('0' + r[0] - '０'))
	}
	return k
}
