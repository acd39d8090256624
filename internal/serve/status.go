package serve

import (
	"context"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/m3bench/m3eval/tui"
)

// StatusRefresh is how often the admin's status screen reads the database again.
const StatusRefresh = 5 * time.Second

// statusSettle is how long the status screen waits after a change is announced before it
// reads: the saves of a busy campaign come many a second, and one read covers them all.
const statusSettle = 300 * time.Millisecond

// statusModel is the admin's read-only status screen: a text report, read again every
// StatusRefresh, and soon after each change another process announces (changes: on
// PostgreSQL, a save on any serve host), that the admin can only look at and leave.
type statusModel struct {
	ctx     context.Context
	report  func(context.Context) (string, error)
	changes <-chan struct{}
	refresh time.Duration // StatusRefresh; longer in tests of changes
	// watching is true while a command waits on changes (at most one at a time).
	watching bool
	// gen counts the reads; only the timer set after the latest one reads again (a timer
	// per read, never cancelled, would pile up with every r and every change).
	gen   int
	title string
	text  string
	err   error
	at    time.Time
	w, h  int
	top   int
	keys  statusKeys
	st    statusStyles
}

type statusKeys struct{ Quit, Up, Down, Refresh key.Binding }

type statusStyles struct{ Header, Dim, Error lipgloss.Style }

// reportMsg is a freshly read report.
type reportMsg struct {
	text string
	err  error
	at   time.Time
}

// refreshMsg is the timer's: read again, unless a read since it was set made it stale.
type refreshMsg struct{ gen int }

// settledMsg ends the wait after an announced change: read again.
type settledMsg struct{}

// changedMsg says another process changed the campaign.
type changedMsg struct{}

// NewStatus builds the admin's status screen around report. report returns plain text,
// tables whose data is already sanitized, and r renders for the admin's terminal. changes,
// when not nil, receives when the campaign changed (store.WatchChanges), and the screen then
// reads again without waiting for its timer.
func NewStatus(ctx context.Context, title string, r *lipgloss.Renderer, report func(context.Context) (string, error), changes <-chan struct{}) tea.Model {
	return &statusModel{ctx: ctx, report: report, changes: changes, refresh: StatusRefresh, title: title, w: 80, h: 24,
		keys: statusKeys{
			Quit:    key.NewBinding(key.WithKeys("q", "ctrl+c", "esc"), key.WithHelp("q", "quit")),
			Up:      key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
			Down:    key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
			Refresh: key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "refresh")),
		},
		st: statusStyles{
			Header: r.NewStyle().Bold(true).Foreground(lipgloss.AdaptiveColor{Light: "#5A4FCF", Dark: "#A49BFF"}),
			Dim:    r.NewStyle().Foreground(lipgloss.AdaptiveColor{Light: "#6B6B6B", Dark: "#8A8A8A"}),
			Error:  r.NewStyle().Bold(true).Foreground(lipgloss.AdaptiveColor{Light: "#B3261E", Dark: "#FF6B6B"}),
		}}
}

func (m *statusModel) readCmd() tea.Cmd {
	ctx, report := m.ctx, m.report
	return func() tea.Msg {
		text, err := report(ctx)
		return reportMsg{text: text, err: err, at: time.Now()}
	}
}

// watchCmd waits for the next announced change (nil without changes, or when one waits).
func (m *statusModel) watchCmd() tea.Cmd {
	if m.changes == nil || m.watching {
		return nil
	}
	m.watching = true
	ch := m.changes
	return func() tea.Msg {
		if _, ok := <-ch; !ok {
			return nil // the session ended
		}
		return changedMsg{}
	}
}

// Init implements tea.Model.
func (m *statusModel) Init() tea.Cmd { return m.readCmd() }

// Update implements tea.Model.
func (m *statusModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.w, m.h = msg.Width, msg.Height
	case tui.SaveAndQuitMsg:
		return m, tea.Quit
	case reportMsg:
		m.err, m.at = msg.err, msg.at
		if msg.err == nil {
			m.text = msg.text
		}
		// The next change is waited for only once this read is in: a stream of saves gives a
		// read every statusSettle plus the read's own time, not one per save.
		m.gen++
		gen := m.gen
		return m, tea.Batch(tea.Tick(m.refresh, func(time.Time) tea.Msg { return refreshMsg{gen} }), m.watchCmd())
	case refreshMsg:
		if msg.gen != m.gen {
			return m, nil
		}
		return m, m.readCmd()
	case changedMsg:
		m.watching = false
		return m, tea.Tick(statusSettle, func(time.Time) tea.Msg { return settledMsg{} })
	case settledMsg:
		return m, m.readCmd()
	case tea.KeyMsg:
		switch {
		case key.Matches(msg, m.keys.Quit):
			return m, tea.Quit
		case key.Matches(msg, m.keys.Up):
			m.top = max(0, m.top-1)
		case key.Matches(msg, m.keys.Down):
			m.top++
		case key.Matches(msg, m.keys.Refresh):
			return m, m.readCmd()
		}
	}
	return m, nil
}

// View implements tea.Model.
func (m *statusModel) View() string {
	var b strings.Builder
	b.WriteString(m.st.Header.Render(m.title) + m.st.Dim.Render("  read-only · q quit · r refresh · ↑↓ scroll"))
	b.WriteString("\n")
	switch {
	case m.err != nil:
		b.WriteString(m.st.Error.Render(ansi.Truncate("cannot read the database: "+m.err.Error(), m.w, "…")))
	case m.at.IsZero():
		b.WriteString(m.st.Dim.Render("reading…"))
	default:
		b.WriteString(m.st.Dim.Render("as of " + m.at.Format("15:04:05")))
	}
	b.WriteString("\n\n")
	lines := strings.Split(strings.TrimRight(m.text, "\n"), "\n")
	room := max(1, m.h-3)
	m.top = min(m.top, max(0, len(lines)-room))
	end := min(len(lines), m.top+room)
	for i := m.top; i < end; i++ {
		b.WriteString(ansi.Truncate(lines[i], m.w, "…"))
		if i < end-1 {
			b.WriteString("\n")
		}
	}
	return b.String()
}
