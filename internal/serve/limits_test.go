package serve

import (
	"bytes"
	"errors"
	"log"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/wish/testsession"
	gossh "golang.org/x/crypto/ssh"

	"github.com/m3bench/m3eval/tui"
)

// savingModel stands for the annotator: it quits on tui.SaveAndQuitMsg, counting the saves.
type savingModel struct{ saved *atomic.Int64 }

func (m savingModel) Init() tea.Cmd { return nil }
func (m savingModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if _, ok := msg.(tui.SaveAndQuitMsg); ok {
		m.saved.Add(1)
		return m, tea.Quit
	}
	return m, nil
}
func (m savingModel) View() string { return "annotating" }

// syncBuffer is a bytes.Buffer safe to read while the session writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// TestSessionsPerConnectionAndRemovedKeys (#38 item 8): one SSH connection holds at most
// maxSessionsPerConn sessions (the next is refused in one line); a key removed from the
// annotators file ends its open sessions, each saving what is typed first and closing with
// a message, while another person's session goes on.
func TestSessionsPerConnectionAndRemovedKeys(t *testing.T) {
	alice, aliceLine := clientConfig(t)
	bob, bobLine := clientConfig(t)
	var logs syncBuffer
	var saved atomic.Int64
	annotators := filepath.Join(t.TempDir(), "annotators.txt")
	if err := os.WriteFile(annotators, []byte("alice "+aliceLine+"\nbob "+bobLine+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := New(Options{
		HostKey:    filepath.Join(t.TempDir(), "host_ed25519"),
		Annotators: annotators,
		Annotate:   func(Session) (*App, error) { return &App{Model: savingModel{&saved}}, nil },
		Log:        log.New(&logs, "", 0),
	})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := s.sshServer()
	if err != nil {
		t.Fatal(err)
	}
	addr := testsession.Listen(t, srv)
	open := func(c *gossh.Client) (*gossh.Session, *syncBuffer) {
		t.Helper()
		ss, err := c.NewSession()
		if err != nil {
			t.Fatal(err)
		}
		var stderr syncBuffer
		ss.Stderr, ss.Stdout = &stderr, &syncBuffer{}
		if err := ss.RequestPty("xterm", 40, 120, gossh.TerminalModes{}); err != nil {
			t.Fatal(err)
		}
		if err := ss.Shell(); err != nil {
			t.Fatal(err)
		}
		return ss, &stderr
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("waited 30 s for %s; log:\n%s", what, logs.String())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	count := func() int { s.mu.Lock(); defer s.mu.Unlock(); return len(s.sessions) }

	ca, err := gossh.Dial("tcp", addr, alice)
	if err != nil {
		t.Fatal(err)
	}
	defer ca.Close()
	var sessions []*gossh.Session
	var stderrs []*syncBuffer
	for i := 0; i < maxSessionsPerConn; i++ {
		ss, e := open(ca)
		sessions, stderrs = append(sessions, ss), append(stderrs, e)
	}
	waitFor("alice's sessions", func() bool { return count() == maxSessionsPerConn })
	extra, extraErr := open(ca)
	// The refused session ends at once; one the server let in would wait for keys for good,
	// so the wait has a deadline, as waitFor does.
	waited := make(chan error, 1)
	go func() { waited <- extra.Wait() }()
	select {
	case err = <-waited:
	case <-time.After(30 * time.Second):
		extra.Close()
		t.Fatalf("session %d on one connection was not refused within 30 s; log:\n%s", maxSessionsPerConn+1, logs.String())
	}
	var ee *gossh.ExitError
	if !errors.As(err, &ee) || ee.ExitStatus() != 1 || !strings.Contains(extraErr.String(), "at most 4 sessions per SSH connection") {
		t.Fatalf("session %d on one connection: %v, stderr %q", maxSessionsPerConn+1, err, extraErr.String())
	}

	cb, err := gossh.Dial("tcp", addr, bob)
	if err != nil {
		t.Fatal(err)
	}
	defer cb.Close()
	open(cb)
	waitFor("bob's session", func() bool { return count() == maxSessionsPerConn+1 })

	if err := os.WriteFile(annotators, []byte("bob "+bobLine+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.Reload(); err != nil {
		t.Fatal(err)
	}
	for i, ss := range sessions {
		waitFor("the removed key's message", func() bool { return strings.Contains(stderrs[i].String(), "your key was removed") })
		ss.Wait()
	}
	if n := saved.Load(); n != maxSessionsPerConn {
		t.Errorf("%d sessions saved before they closed, want %d", n, maxSessionsPerConn)
	}
	waitFor("alice's sessions to end", func() bool { return count() == 1 })
	if !strings.Contains(logs.String(), "key removed") {
		t.Errorf("the log does not say why the sessions ended:\n%s", logs.String())
	}
}
