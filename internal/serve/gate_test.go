package serve

import (
	"bytes"
	"errors"
	"fmt"
	"log"
	"path/filepath"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/keygen"
	"github.com/charmbracelet/wish/testsession"
	gossh "golang.org/x/crypto/ssh"
)

// clientConfig signs in with a fresh key; it returns the config and the key's line.
func clientConfig(t *testing.T) (*gossh.ClientConfig, string) {
	t.Helper()
	k, err := keygen.New("", keygen.WithKeyType(keygen.Ed25519))
	if err != nil {
		t.Fatal(err)
	}
	signer, err := gossh.NewSignerFromKey(k.CryptoPublicKey())
	if err != nil {
		signer, err = gossh.ParsePrivateKey(k.RawPrivateKey())
	}
	if err != nil {
		t.Fatal(err)
	}
	return &gossh.ClientConfig{User: "someone", Auth: []gossh.AuthMethod{gossh.PublicKeys(signer)},
		HostKeyCallback: gossh.InsecureIgnoreHostKey()}, strings.TrimSpace(string(k.AuthorizedKey()))
}

// TestGateTurnsAwayBeforeAnyScreen: an unknown key is refused at authentication, logged
// (issue 24 item 8: it passed the handshake, and ssh -N stayed connected, unlogged); a
// command and a session without a terminal each get one line and exit status 1; no model is
// ever built for any of them.
func TestGateTurnsAwayBeforeAnyScreen(t *testing.T) {
	known, line := clientConfig(t)
	stranger, _ := clientConfig(t)
	var logs bytes.Buffer
	s, err := New(Options{
		HostKey:    filepath.Join(t.TempDir(), "host_ed25519"),
		Annotators: writeFile(t, "alice "+line+"\n"),
		Annotate: func(Session) (*App, error) {
			t.Error("a model was built for a session the gate should have turned away")
			return nil, errors.New("not here")
		},
		Log: log.New(&logs, "", 0),
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		cfg  *gossh.ClientConfig
		run  func(*gossh.Session) error
		want string
	}{
		{"a command", known, func(ss *gossh.Session) error { return ss.Start("cat /etc/passwd") }, "runs no commands"},
		{"no terminal", known, func(ss *gossh.Session) error { return ss.Shell() }, "needs a terminal"},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv, err := s.sshServer() // a server per session: testsession closes it at the end
			if err != nil {
				t.Fatal(err)
			}
			ss := testsession.New(t, srv, c.cfg)
			var stderr, stdout bytes.Buffer
			ss.Stderr, ss.Stdout = &stderr, &stdout
			if err := c.run(ss); err != nil {
				t.Fatal(err)
			}
			err = ss.Wait()
			var ee *gossh.ExitError
			if !errors.As(err, &ee) || ee.ExitStatus() != 1 {
				t.Errorf("exit: %v, want status 1", err)
			}
			got := strings.TrimSpace(stderr.String())
			if !strings.Contains(got, c.want) || strings.Contains(got, "\n") {
				t.Errorf("stderr = %q, want one line with %q", got, c.want)
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout = %q, want nothing", stdout.String())
			}
		})
	}
	srv, err := s.sshServer()
	if err != nil {
		t.Fatal(err)
	}
	addr := testsession.Listen(t, srv)
	if c, err := gossh.Dial("tcp", addr, stranger); err == nil || !strings.Contains(err.Error(), "unable to authenticate") {
		if c != nil {
			c.Close()
		}
		t.Errorf("an unknown key: %v, want the handshake refused", err)
	}
	if !strings.Contains(logs.String(), "refused key SHA256:") {
		t.Errorf("no log line for the refused key:\n%s", logs.String())
	}
}

// sizeRecorder remembers the window sizes it is told.
type sizeRecorder struct{ got *[]tea.WindowSizeMsg }

func (r sizeRecorder) Init() tea.Cmd { return nil }
func (r sizeRecorder) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if ws, ok := msg.(tea.WindowSizeMsg); ok {
		*r.got = append(*r.got, ws)
	}
	return r, nil
}
func (r sizeRecorder) View() string { return "" }

// TestWindowSizeCapped: a client's window of 10000×10000 reaches the screen as 500×200 (a
// screen rendered at the client's size grew the server by 800 MB); real sizes pass as they are.
func TestWindowSizeCapped(t *testing.T) {
	var got []tea.WindowSizeMsg
	var m tea.Model = sizeCap{sizeRecorder{&got}}
	for _, ws := range []tea.WindowSizeMsg{{Width: 10000, Height: 10000}, {Width: 120, Height: 40}, {Width: 600, Height: 30}} {
		m, _ = m.Update(ws)
	}
	want := []tea.WindowSizeMsg{{Width: 500, Height: 200}, {Width: 120, Height: 40}, {Width: 500, Height: 30}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("the screen was told %v, want %v", got, want)
	}
}
