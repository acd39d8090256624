package tui

import (
	"bytes"
	"context"
	"errors"
	"os"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
)

// quitAtOnce is a model that quits on its first update.
type quitAtOnce struct{}

func (quitAtOnce) Init() tea.Cmd                       { return tea.Quit }
func (quitAtOnce) Update(tea.Msg) (tea.Model, tea.Cmd) { return quitAtOnce{}, tea.Quit }
func (quitAtOnce) View() string                        { return "" }

// TestRunNeedsATerminal: with a pipe for input Run refuses before writing a byte.
func TestRunNeedsATerminal(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	var out bytes.Buffer
	if err := Run(context.Background(), quitAtOnce{}, r, &out); !errors.Is(err, ErrNoTerminal) {
		t.Fatalf("Run with a pipe: %v, want ErrNoTerminal", err)
	}
	if out.Len() != 0 {
		t.Errorf("Run with a pipe wrote %q", out.String())
	}
}
