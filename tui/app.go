// Package tui is the terminal annotator: Bubble Tea models for its screens, their keymaps and
// styles. It reads and writes only through internal/store and judges values only through
// internal/rubric, so the terminal, the CLI and (later) SSH sessions share one behaviour.
package tui

import (
	"context"
	"fmt"
	"os/exec"
	"runtime"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/m3bench/m3eval/internal/rubric"
	"github.com/m3bench/m3eval/internal/store"
)

// Options configure an annotate session.
type Options struct {
	Context  context.Context
	Queue    *store.Queue
	Rubric   *rubric.Rubric
	Actions  rubric.Actions
	Renderer *lipgloss.Renderer // nil: the default renderer (stdout)
	// StartSample opens this sample first instead of the first unfinished item.
	StartSample string
	// Now is the clock for active time; nil means time.Now.
	Now func() time.Time
	// OpenImages shows images; nil means the system viewer (or, Remote, their paths).
	OpenImages func(paths []string) tea.Cmd
	// Remote marks a session served over SSH: the annotator's machine is not this one, so
	// `o` lists the image paths on the message line instead of starting a viewer here.
	Remote bool
}

// Model is the root model: it owns the terminal size and the keys that work everywhere, and
// routes everything else to the annotate screen.
type Model struct {
	annotate *annotateModel
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
	r := o.Renderer
	if r == nil {
		r = lipgloss.DefaultRenderer()
	}
	return &Model{annotate: newAnnotateModel(o, DefaultStyles(r))}
}

// Init implements tea.Model.
func (m *Model) Init() tea.Cmd { return m.annotate.Init() }

// Update implements tea.Model.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if ws, ok := msg.(tea.WindowSizeMsg); ok {
		m.annotate.SetSize(ws.Width, ws.Height)
		return m, nil
	}
	if _, ok := msg.(SaveAndQuitMsg); ok {
		return m, m.annotate.saveAndQuit()
	}
	if k, ok := msg.(tea.KeyMsg); ok && k.Type == tea.KeyRunes && !k.Paste && len(k.Runes) > 1 {
		return m, m.burst(k)
	}
	_, cmd := m.annotate.Update(msg)
	return m, cmd
}

// burst hands the keys of one terminal read to the screen one at a time, in order. Bubble Tea
// v1 delivers printable keys read together (fast typing, a held key, an SSH link that
// stalled) as one KeyRunes message, which matches no binding: split, every key acts, and a
// key that changes the mode ("c") sends the rest of the burst where the new mode wants it. A
// bracketed paste is text and stays one message.
func (m *Model) burst(k tea.KeyMsg) tea.Cmd {
	cmds := make([]tea.Cmd, 0, len(k.Runes))
	for _, r := range k.Runes {
		_, cmd := m.annotate.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}, Alt: k.Alt})
		cmds = append(cmds, cmd)
	}
	return tea.Batch(cmds...)
}

// Abandoned is how many changes a forced quit gave up before they reached the database; the
// annotate command exits non-zero when it is not 0.
func (m *Model) Abandoned() int { return m.annotate.abandoned }

// View implements tea.Model.
func (m *Model) View() string { return m.annotate.View() }

// SaveAndQuitMsg asks the annotator to save what is typed (an open comment, the active
// time) and quit once every change has landed, without asking: a server shutting down sends
// it to each session. A write that keeps failing still holds the quit back.
type SaveAndQuitMsg struct{}

// imagesOpenedMsg reports the outcome of opening images; note, when set, is what to say
// instead of "opened".
type imagesOpenedMsg struct {
	err  error
	note string
}

// listImagePaths says where the images are, for a session whose terminal is on another
// machine (no viewer there can be started from here).
func listImagePaths(paths []string) tea.Cmd {
	return func() tea.Msg {
		return imagesOpenedMsg{note: "images (on the server): " + strings.Join(paths, ", ")}
	}
}

// openWithSystemViewer starts the desktop's viewer for each image and does not wait for it.
func openWithSystemViewer(paths []string) tea.Cmd {
	return func() tea.Msg {
		viewer := "xdg-open"
		if runtime.GOOS == "darwin" {
			viewer = "open"
		}
		bin, err := exec.LookPath(viewer)
		if err != nil {
			return imagesOpenedMsg{err: fmt.Errorf("no image viewer (%s) on this machine; the images are %s", viewer, strings.Join(paths, ", "))}
		}
		for _, p := range paths {
			cmd := exec.Command(bin, p)
			if err := cmd.Start(); err != nil {
				return imagesOpenedMsg{err: fmt.Errorf("open %s: %w", p, err)}
			}
			go cmd.Wait() // reap the viewer launcher
		}
		return imagesOpenedMsg{}
	}
}
