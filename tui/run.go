package tui

import (
	"context"
	"errors"
	"io"
	"os"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/mattn/go-isatty"
)

// ErrNoTerminal is returned by Run when standard input is not a terminal: the screens read
// keys from a terminal, and Bubble Tea would fail half-way, with the alternate screen, mouse
// reporting and a hidden cursor left on.
var ErrNoTerminal = errors.New("needs a terminal: standard input is not one (run it in a terminal, or use m3eval serve to reach it over SSH)")

// Run shows m full screen on out, reading keys from in (standard input), until it quits or
// ctx ends; an error after ctx ended is ctx's.
func Run(ctx context.Context, m tea.Model, in *os.File, out io.Writer, opts ...tea.ProgramOption) error {
	if !isatty.IsTerminal(in.Fd()) && !isatty.IsCygwinTerminal(in.Fd()) {
		return ErrNoTerminal
	}
	opts = append([]tea.ProgramOption{tea.WithAltScreen(), tea.WithContext(ctx), tea.WithInput(in), tea.WithOutput(out)}, opts...)
	if _, err := tea.NewProgram(m, opts...).Run(); err != nil && ctx.Err() == nil {
		return err
	}
	return ctx.Err()
}
