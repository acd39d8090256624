package tui

import "github.com/charmbracelet/lipgloss"

// palette: adaptive colors that read on light and dark terminals.
var (
	colorAccent  = lipgloss.AdaptiveColor{Light: "#5A4FCF", Dark: "#A49BFF"}
	colorMuted   = lipgloss.AdaptiveColor{Light: "#6B6B6B", Dark: "#8A8A8A"}
	colorGood    = lipgloss.AdaptiveColor{Light: "#1C7C3A", Dark: "#5FD68A"}
	colorWarn    = lipgloss.AdaptiveColor{Light: "#A35B00", Dark: "#FFB454"}
	colorBad     = lipgloss.AdaptiveColor{Light: "#B3261E", Dark: "#FF6B6B"}
	colorUser    = lipgloss.AdaptiveColor{Light: "#005F87", Dark: "#6CC4FF"}
	colorModel   = lipgloss.AdaptiveColor{Light: "#5F005F", Dark: "#E29CFF"}
	colorFocusBg = lipgloss.AdaptiveColor{Light: "#E8E6FF", Dark: "#2E2A52"}
)

// Styles are every style the annotator uses. They come from a renderer so that each SSH
// session can render for its own terminal.
type Styles struct {
	Header, HeaderDim, Saved, Saving          lipgloss.Style
	Pane, PaneTitle                           lipgloss.Style
	TurnRule, CurrentRule, Label, User, Model lipgloss.Style
	Expected, Action, Dim                     lipgloss.Style
	Field, FieldFocused, FieldFixed, Value    lipgloss.Style
	ValueUnset, Meaning, Suggestion           lipgloss.Style
	Message, Warning, Error                   lipgloss.Style
	Help                                      lipgloss.Style
}

// DefaultStyles builds the styles for the renderer r.
func DefaultStyles(r *lipgloss.Renderer) Styles {
	s := Styles{}
	s.Header = r.NewStyle().Bold(true).Foreground(colorAccent)
	s.HeaderDim = r.NewStyle().Foreground(colorMuted)
	s.Saved = r.NewStyle().Foreground(colorGood)
	s.Saving = r.NewStyle().Foreground(colorWarn)
	s.Pane = r.NewStyle().Border(lipgloss.RoundedBorder()).BorderForeground(colorMuted).Padding(0, 1)
	s.PaneTitle = r.NewStyle().Bold(true).Foreground(colorAccent)
	s.TurnRule = r.NewStyle().Foreground(colorMuted)
	s.CurrentRule = r.NewStyle().Bold(true).Foreground(colorAccent)
	s.Label = r.NewStyle().Bold(true)
	s.User = r.NewStyle().Bold(true).Foreground(colorUser)
	s.Model = r.NewStyle().Bold(true).Foreground(colorModel)
	s.Expected = r.NewStyle().Bold(true).Foreground(colorGood)
	s.Action = r.NewStyle().Foreground(colorWarn)
	s.Dim = r.NewStyle().Foreground(colorMuted)
	s.Field = r.NewStyle()
	s.FieldFocused = r.NewStyle().Bold(true).Background(colorFocusBg)
	s.FieldFixed = r.NewStyle().Foreground(colorMuted)
	s.Value = r.NewStyle().Bold(true).Foreground(colorGood)
	s.ValueUnset = r.NewStyle().Foreground(colorMuted)
	s.Meaning = r.NewStyle().Foreground(colorMuted)
	s.Suggestion = r.NewStyle().Foreground(colorAccent)
	s.Message = r.NewStyle().Foreground(colorGood)
	s.Warning = r.NewStyle().Foreground(colorWarn)
	s.Error = r.NewStyle().Bold(true).Foreground(colorBad)
	s.Help = r.NewStyle().Foreground(colorMuted)
	return s
}
