package tui

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/charmbracelet/lipgloss"
)

// palette: adaptive colors that read on light and dark terminals.
var (
	colorAccent = lipgloss.AdaptiveColor{Light: "#5A4FCF", Dark: "#A49BFF"}
	colorMuted  = lipgloss.AdaptiveColor{Light: "#6B6B6B", Dark: "#8A8A8A"}
	colorGood   = lipgloss.AdaptiveColor{Light: "#1C7C3A", Dark: "#5FD68A"}
	colorWarn   = lipgloss.AdaptiveColor{Light: "#A35B00", Dark: "#FFB454"}
	colorBad    = lipgloss.AdaptiveColor{Light: "#B3261E", Dark: "#FF6B6B"}
	colorUser   = lipgloss.AdaptiveColor{Light: "#005F87", Dark: "#6CC4FF"}
	colorModel  = lipgloss.AdaptiveColor{Light: "#5F005F", Dark: "#E29CFF"}
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
	// Reverse video reads on any background, even when the theme guessed wrong.
	s.FieldFocused = r.NewStyle().Bold(true).Reverse(true)
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

// Themes --theme and M3EVAL_THEME accept.
const (
	ThemeAuto  = "auto"
	ThemeDark  = "dark"
	ThemeLight = "light"
)

// ApplyTheme tells the renderer whether the background is dark: "dark" and "light" say so;
// "auto" (or "") uses COLORFGBG when it is set, since inside tmux or screen the terminal
// cannot be asked, and otherwise leaves the question to the terminal.
func ApplyTheme(r *lipgloss.Renderer, theme string, getenv func(string) string) error {
	switch strings.ToLower(strings.TrimSpace(theme)) {
	case ThemeDark:
		r.SetHasDarkBackground(true)
	case ThemeLight:
		r.SetHasDarkBackground(false)
	case ThemeAuto, "":
		if dark, ok := darkFromCOLORFGBG(getenv("COLORFGBG")); ok {
			r.SetHasDarkBackground(dark)
		}
	default:
		return fmt.Errorf("theme %q: want dark, light or auto", theme)
	}
	return nil
}

// darkFromCOLORFGBG reads rxvt's "fg;bg" (or "fg;default;bg"): colours 0–6 and 8 are dark
// backgrounds, 7 and 9–15 light ones.
func darkFromCOLORFGBG(v string) (dark, ok bool) {
	parts := strings.Split(v, ";")
	if len(parts) < 2 {
		return false, false
	}
	bg, err := strconv.Atoi(parts[len(parts)-1])
	if err != nil || bg < 0 || bg > 15 {
		return false, false
	}
	return bg <= 6 || bg == 8, true
}
