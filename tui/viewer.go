package tui

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"
)

// maxOpenPerPress is how many images one press of o opens: a turn with twenty images must
// not bury the desktop in windows.
const maxOpenPerPress = 4

// viewerWait is how long o waits for the viewer launcher to say whether it worked.
const viewerWait = 5 * time.Second

// imagesOpenedMsg reports the outcome of opening images; note, when set, is what to say
// instead of "opened".
type imagesOpenedMsg struct {
	opened int
	err    error
	note   string
}

// listImagePaths says where the images are, for a session whose terminal is on another
// machine (no viewer there can be started from here).
func listImagePaths(paths []string) tea.Cmd {
	return func() tea.Msg {
		return imagesOpenedMsg{note: "images (on the server): " + strings.Join(paths, ", ")}
	}
}

// viewerEnv is what deciding whether a viewer can be opened looks at; a test sets it.
type viewerEnv struct {
	goos   string
	getenv func(string) string
}

// canOpenViewer says why no viewer can be opened here, or nil. Over SSH the viewer would
// open on the server's screen (or nowhere), so m3eval refuses rather than claim it opened.
func (e viewerEnv) canOpenViewer() error {
	if e.getenv("SSH_CONNECTION") != "" || e.getenv("SSH_TTY") != "" {
		return errors.New("cannot open a viewer in an SSH session: the image would open on the server; the preview is beside the turn")
	}
	if e.goos == "linux" && e.getenv("DISPLAY") == "" && e.getenv("WAYLAND_DISPLAY") == "" {
		return errors.New("cannot open a viewer: no display (DISPLAY and WAYLAND_DISPLAY are unset); the preview is beside the turn")
	}
	return nil
}

// viewerArgs checks the images a viewer may be given: files that exist (made absolute, so
// no name can pass for an option) and http(s) URLs; anything else (file:, javascript:, a
// missing file) is refused with its reason.
func viewerArgs(names []string, exists func(string) bool) (args []string, skipped []string) {
	for _, n := range names {
		switch {
		case strings.HasPrefix(n, "http://") || strings.HasPrefix(n, "https://"):
			args = append(args, n)
		case strings.Contains(n, "://") || strings.HasPrefix(n, "file:"):
			skipped = append(skipped, n+" (only files and http(s) URLs open)")
		default:
			abs, err := filepath.Abs(n)
			if err != nil || !exists(abs) {
				skipped = append(skipped, n+" (no such file)")
				continue
			}
			args = append(args, abs)
		}
	}
	return args, skipped
}

// openWithSystemViewer opens up to maxOpenPerPress images in the desktop's viewer and
// reports whether the launcher succeeded (its exit status), not merely that it started.
func openWithSystemViewer(names []string) tea.Cmd {
	env := viewerEnv{goos: runtime.GOOS, getenv: os.Getenv}
	return func() tea.Msg {
		if err := env.canOpenViewer(); err != nil {
			return imagesOpenedMsg{err: err}
		}
		if len(names) > maxOpenPerPress {
			names = names[:maxOpenPerPress]
		}
		args, skipped := viewerArgs(names, func(p string) bool {
			st, err := os.Stat(p)
			return err == nil && st.Mode().IsRegular()
		})
		if len(args) == 0 {
			return imagesOpenedMsg{err: fmt.Errorf("nothing to open: %s", strings.Join(skipped, "; "))}
		}
		viewer, sep := "xdg-open", false // xdg-open takes one argument and no "--"; paths are absolute
		if runtime.GOOS == "darwin" {
			viewer, sep = "open", true
		}
		bin, err := exec.LookPath(viewer)
		if err != nil {
			return imagesOpenedMsg{err: fmt.Errorf("no image viewer (%s) on this machine", viewer)}
		}
		opened := 0
		for _, a := range args {
			argv := []string{a}
			if sep {
				argv = []string{"--", a}
			}
			ctx, cancel := context.WithTimeout(context.Background(), viewerWait)
			cmd := exec.CommandContext(ctx, bin, argv...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			cancel()
			if err != nil {
				msg := strings.TrimSpace(stderr.String())
				if msg == "" {
					msg = err.Error()
				}
				return imagesOpenedMsg{opened: opened, err: fmt.Errorf("the viewer failed on %s: %s", filepath.Base(a), firstLine(msg))}
			}
			opened++
		}
		if len(skipped) > 0 {
			return imagesOpenedMsg{opened: opened, err: fmt.Errorf("opened %d; skipped %s", opened, strings.Join(skipped, "; "))}
		}
		return imagesOpenedMsg{opened: opened}
	}
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}
