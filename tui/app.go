// Package tui is the terminal annotator: a root model that owns the terminal, the keys that
// work everywhere, the header and the footer, and routes everything else to the active
// screen (soft-serve pkg/ui/ui.go); screens are built of panes (Component). It reads and
// writes only through the session.Queue and session.AdjudicationStore interfaces (it does
// not import the store) and judges values only through internal/rubric, so the terminal,
// the CLI and SSH sessions share one behaviour.
package tui

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/m3bench/m3eval/internal/rubric"
	"github.com/m3bench/m3eval/internal/session"
)

// Options configure an annotate session.
type Options struct {
	Context  context.Context
	Queue    session.Queue
	Rubric   *rubric.Rubric
	Actions  rubric.Actions
	Renderer *lipgloss.Renderer // nil: the default renderer (stdout)
	// StartSample opens this sample first instead of the first unfinished item.
	StartSample string
	// Now is the clock for active time; nil means time.Now.
	Now func() time.Time
	// OpenImages shows images; nil means the system viewer (see viewer.go), or, Remote,
	// their paths.
	OpenImages func(paths []string) tea.Cmd
	// Remote marks a session served over SSH (m3eval serve): the annotator's machine is not
	// this one, so `o` lists the image paths on the message line instead of starting a
	// viewer here.
	Remote bool
	// Images reads image files for the preview; nil means the file system, with the demo's
	// embedded images as a fallback.
	Images ImageSource
	// Graphics is the protocol of the full-screen image view (GraphicsKitty, GraphicsITerm,
	// GraphicsNone); "" means none (half-blocks). See DetectGraphics.
	Graphics string
	// Guide is the annotation guide's longer text for the help screen (?): its edge cases and
	// its advice on comments (annotations.GuideCases for the M3Bench guide); "" shows none.
	Guide string
}

// Model is the root model: it owns the terminal size, the header and the footer and the keys
// that work everywhere (help, quit), and routes everything else to the active screen.
type Model struct {
	screen   Screen
	annotate *annotateModel
	keys     rootKeyMap
	help     help.Model
	st       Styles

	width, height int
	footerH       int
	showHelp      bool
	// The help screen scrolls: its lines, made when it opens or the size changes, and the
	// first one shown.
	helpLines  []string
	helpOffset int
}

// New builds the annotator's root model.
func New(o Options) *Model {
	if o.Context == nil {
		o.Context = context.Background()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.OpenImages == nil && o.Remote {
		o.OpenImages = listImagePaths
	}
	if o.OpenImages == nil {
		o.OpenImages = openWithSystemViewer
	}
	if o.Images == nil {
		o.Images = defaultImageSource{}
	}
	if o.Graphics == "" {
		o.Graphics = GraphicsNone
	}
	r := o.Renderer
	if r == nil {
		r = lipgloss.DefaultRenderer()
	}
	st := DefaultStyles(r)
	a := newAnnotateModel(o, st, r)
	m := newRoot(a, st)
	m.annotate = a
	return m
}

// newRoot is the root model around a screen.
func newRoot(s Screen, st Styles) *Model {
	m := &Model{screen: s, keys: defaultRootKeyMap(), help: help.New(), st: st, footerH: 1}
	m.help.Styles.ShortKey = st.Help.Bold(true)
	m.help.Styles.ShortDesc = st.Help
	m.help.Styles.FullKey = st.Help.Bold(true)
	m.help.Styles.FullDesc = st.Help
	m.help.Styles.ShortSeparator = st.Help
	return m
}

// Init implements tea.Model.
func (m *Model) Init() tea.Cmd { return m.screen.Init() }

// Update implements tea.Model.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.SetSize(msg.Width, msg.Height)
		return m, nil
	case SaveAndQuitMsg:
		if m.annotate != nil {
			return m, m.annotate.saveAndQuit()
		}
		return m, tea.Quit
	case tea.KeyMsg:
		if msg.Alt && !msg.Paste {
			return m, m.escBurst(msg)
		}
		if msg.Type == tea.KeyRunes && !msg.Paste && len(msg.Runes) > 1 {
			return m, m.burst(msg)
		}
		return m, m.key(msg)
	}
	_, cmd := m.screen.Update(msg)
	return m, cmd
}

// SetSize gives the screen what the header and footer leave.
func (m *Model) SetSize(w, h int) {
	m.width, m.height = w, h
	m.helpLines = nil // laid out again for the new width
	m.help.Width = w
	m.footerH = len(m.footerLines(m.screen.ShortHelp(), 2))
	m.screen.SetSize(w, max(1, h-1-m.footerH))
}

// key routes one key: focus first (a text box takes every key), then the global keys, then
// the active screen.
func (m *Model) key(k tea.KeyMsg) tea.Cmd {
	if m.showHelp {
		m.helpKey(k)
		return nil
	}
	if !m.screen.CapturesKeys() && key.Matches(k, m.keys.Help) {
		m.showHelp, m.helpLines, m.helpOffset = true, nil, 0
		return nil
	}
	// Quit stays with the screen: only it knows whether changes are still on their way
	// (the quit guard of docs/annotating.md), and it handles ctrl+c even in a text box.
	_, cmd := m.screen.Update(k)
	return cmd
}

// escBurst undoes Bubble Tea v1's reading of Esc and the key after it as one Alt key. The
// terminal sends Esc as the byte ESC and Alt+x as ESC x, so when Esc and the next key arrive
// in one read (tmux send-keys, fast typing, routinely over SSH) v1 hands over "alt+enter",
// "alt+u", "alt+5": the comment box then upper-cases a word (alt+u) or deletes one (alt+d)
// and Enter or the digit is lost. No binding of these screens uses Alt, so every Alt key is
// what the user typed, Esc and then the key: both act, in order. Bubble Tea v1 has no Esc
// timeout to set (v2's input reader does this itself), hence the split by hand. A
// terminal's Option-as-Meta word motions in the comment box are given up for it.
func (m *Model) escBurst(k tea.KeyMsg) tea.Cmd {
	esc := m.key(tea.KeyMsg{Type: tea.KeyEscape})
	k.Alt = false
	if k.Type == tea.KeyRunes && len(k.Runes) > 1 {
		return tea.Batch(esc, m.burst(k))
	}
	return tea.Batch(esc, m.key(k))
}

// burst hands the keys of one terminal read over one at a time, in order. Bubble Tea v1
// delivers printable keys read together (fast typing, a held key, an SSH link that stalled)
// as one KeyRunes message, which matches no binding: split, every key acts, and a key that
// changes the mode ("c") sends the rest of the burst where the new mode wants it. A
// bracketed paste is text and stays one message.
func (m *Model) burst(k tea.KeyMsg) tea.Cmd {
	cmds := make([]tea.Cmd, 0, len(k.Runes))
	for _, r := range k.Runes {
		cmds = append(cmds, m.key(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}, Alt: k.Alt}))
	}
	return tea.Batch(cmds...)
}

// Abandoned is how many changes a forced quit gave up before they reached the database; the
// annotate command exits non-zero when it is not 0.
func (m *Model) Abandoned() int {
	if m.annotate == nil {
		return 0
	}
	return m.annotate.save.abandoned()
}

// Summary is the one line the annotate command prints once the screen is gone: what this
// session did and how long it took, and where the queue stands.
func (m *Model) Summary() string {
	if m.annotate == nil {
		return ""
	}
	a := m.annotate
	took := a.now().Sub(a.started).Round(time.Second)
	return fmt.Sprintf("%d item(s) submitted this session in %s; %s", len(a.submitted), took, a.standing())
}

// Flush saves, after the program stopped without quitting by itself (the SSH connection of
// a session dropped, so Bubble Tea quit at once), what the annotator had typed: the writes
// on their way and the open comment, in key order, each retried until ctx ends. It returns
// how many changes were given up. Call it only once the program has returned.
func (m *Model) Flush(ctx context.Context) int {
	if m.annotate == nil {
		return 0
	}
	return m.annotate.flush(ctx)
}

// View implements tea.Model: the header, the screen, the footer; blank once the screen quit.
func (m *Model) View() string {
	if s, ok := m.screen.(interface{ stopping() bool }); ok && s.stopping() {
		// The last frame is blank: tmux keeps what the alternate screen showed when the
		// window grew, and puts it back above the shell's lines on exit (as image
		// fragments); a blank screen leaves nothing behind, as less does.
		return ""
	}
	return m.Frame()
}

// Frame is the screen as View draws it while the program runs; after the screen quit, View
// is blank and Frame still shows what was last on screen (what tests compare).
func (m *Model) Frame() string {
	if m.width == 0 {
		return ""
	}
	if m.showHelp {
		return m.helpScreen()
	}
	var b strings.Builder
	b.WriteString(m.header())
	b.WriteByte('\n')
	foot := m.footerLines(m.screen.ShortHelp(), m.footerH)
	b.WriteString(fitBody(m.screen.View(), m.width, m.height-1-len(foot)))
	b.WriteByte('\n')
	b.WriteString(strings.Join(foot, "\n"))
	return b.String()
}

// fitBody keeps a screen's body inside rows×width: a line wider than the terminal would wrap
// and a body taller than its room would scroll, either pushing the header, with its save
// state, off the top (#40: at 120×40 with Overall's choices and a comment warning shown).
// The screens size themselves to fit; this is the guarantee when one misjudges. What does
// not fit goes from the top of the body: the rubric, the comment box and the message line
// at its bottom stay.
func fitBody(body string, width, rows int) string {
	lines := strings.Split(body, "\n")
	if rows > 0 && len(lines) > rows {
		lines = lines[len(lines)-rows:]
	}
	cut := false
	for i, l := range lines {
		if ansi.StringWidth(l) > width {
			lines[i], cut = ansi.Truncate(l, width, "…"), true
		}
	}
	if len(lines) == strings.Count(body, "\n")+1 && !cut {
		return body
	}
	return strings.Join(lines, "\n")
}

func (m *Model) header() string {
	left, right := m.screen.Header(m.width)
	line := m.st.Header.Render("m3eval") + m.st.HeaderDim.Render(" · ") + left
	gap := m.width - lipgloss.Width(line) - lipgloss.Width(right)
	if gap < 1 {
		return ansi.Truncate(line, max(0, m.width-lipgloss.Width(right)-1), "…") + " " + right
	}
	return line + strings.Repeat(" ", gap) + right
}

// footerLines lays the key hints out in at most maxLines lines. "? help" and "q quit" are
// always shown (unless a text box has the keys, when they are letters); when the hints do
// not fit, the screen's last hints go, never the root's.
func (m *Model) footerLines(screenKeys []key.Binding, maxLines int) []string {
	var root []key.Binding
	if !m.screen.CapturesKeys() {
		root = []key.Binding{m.keys.Help, m.keys.Quit}
	}
	for n := len(screenKeys); n >= 0; n-- {
		lines := m.wrapHints(append(append([]key.Binding{}, screenKeys[:n]...), root...))
		if len(lines) <= maxLines {
			return lines
		}
	}
	return []string{ansi.Truncate(m.help.ShortHelpView(root), m.width, "…")}
}

// wrapHints renders bindings as "key desc" items separated by " • ", wrapped to the width.
func (m *Model) wrapHints(bs []key.Binding) []string {
	sep := m.help.Styles.ShortSeparator.Render(" • ")
	var lines []string
	line, lineW := "", 0
	for _, b := range bs {
		if !b.Enabled() {
			continue
		}
		h := b.Help()
		item := m.help.Styles.ShortKey.Render(h.Key) + " " + m.help.Styles.ShortDesc.Render(h.Desc)
		w := lipgloss.Width(item)
		switch {
		case line == "":
			line, lineW = item, w
		case lineW+3+w <= m.width:
			line += sep + item
			lineW += 3 + w
		default:
			lines = append(lines, line)
			line, lineW = item, w
		}
	}
	if line != "" {
		lines = append(lines, ansi.Truncate(line, m.width, "…"))
	}
	if len(lines) == 0 {
		lines = []string{""}
	}
	return lines
}

// helpKey scrolls the help screen or closes it.
func (m *Model) helpKey(k tea.KeyMsg) {
	page := max(1, m.height-2)
	switch k.String() {
	case "?", "q", "esc", "ctrl+c":
		m.showHelp = false
	case "down", "j":
		m.helpOffset++
	case "up", "k":
		m.helpOffset--
	case "pgdown", " ", "ctrl+d", "f":
		m.helpOffset += page
	case "pgup", "ctrl+u", "b":
		m.helpOffset -= page
	case "home", "g":
		m.helpOffset = 0
	case "end", "G":
		m.helpOffset = len(m.helpLines)
	}
}

// helpScreen is the full help: the screen's keys and the root's, then the screen's
// reference, scrolled with the keys of a pager; the title line says how much is below.
func (m *Model) helpScreen() string {
	if m.helpLines == nil {
		groups := append(m.screen.FullHelp(), []key.Binding{m.keys.Help, m.keys.Quit})
		out := lipgloss.JoinVertical(lipgloss.Left, m.helpKeyRows(groups), "", m.screen.Reference(m.width))
		m.helpLines = strings.Split(lipgloss.NewStyle().MaxWidth(m.width).Render(out), "\n")
	}
	room := max(1, m.height-2) // the title line and the blank line under it
	m.helpOffset = max(0, min(m.helpOffset, len(m.helpLines)-room))
	end := min(len(m.helpLines), m.helpOffset+room)
	title := m.st.Header.Render("m3eval — keys") + m.st.Dim.Render("  (? or esc to close)")
	if below := len(m.helpLines) - end; below > 0 {
		title += m.st.Warning.Render(fmt.Sprintf("  ▼ %d more lines (j/pgdn)", below))
	} else if m.helpOffset > 0 {
		title += m.st.Dim.Render("  end (k/pgup back)")
	}
	title = ansi.Truncate(title, m.width, "…")
	return title + "\n\n" + strings.Join(m.helpLines[m.helpOffset:end], "\n")
}

// helpKeyRows lays the key groups out in as many rows of columns as the width needs, so no
// group is cut off with "…".
func (m *Model) helpKeyRows(groups [][]key.Binding) string {
	h := m.help
	h.Width = 0 // measured here, not cut
	var rows []string
	for len(groups) > 0 {
		n := len(groups)
		for n > 1 && lipgloss.Width(h.FullHelpView(groups[:n])) > m.width {
			n--
		}
		rows = append(rows, h.FullHelpView(groups[:n]))
		groups = groups[n:]
	}
	return strings.Join(rows, "\n\n")
}

// SaveAndQuitMsg asks the annotator to save what is typed (an open comment, the active
// time) and quit once every change has landed, without asking: a server shutting down sends
// it to each session. A write that keeps failing still holds the quit back.
type SaveAndQuitMsg struct{}
