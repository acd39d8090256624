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

// statusModel is the admin's read-only status screen: a text report, read again every
// StatusRefresh, that the admin can only look at and leave.
type statusModel struct {
	ctx    context.Context
	report func(context.Context) (string, error)
	title  string
	text   string
	err    error
	at     time.Time
	w, h   int
	top    int
	keys   statusKeys
	st     statusStyles
}

type statusKeys struct{ Quit, Up, Down, Refresh key.Binding }

type statusStyles struct{ Header, Dim, Error lipgloss.Style }

// reportMsg is a freshly read report.
type reportMsg struct {
	text string
	err  error
	at   time.Time
}

type refreshMsg struct{}

// NewStatus builds the admin's status screen around report, which returns plain text (tables
// whose data is already sanitized); r renders for the admin's terminal.
func NewStatus(ctx context.Context, title string, r *lipgloss.Renderer, report func(context.Context) (string, error)) tea.Model {
	return &statusModel{ctx: ctx, report: report, title: title, w: 80, h: 24,
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
		return m, tea.Tick(StatusRefresh, func(time.Time) tea.Msg { return refreshMsg{} })
	case refreshMsg:
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
