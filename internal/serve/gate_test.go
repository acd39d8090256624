package serve

import (
	"bytes"
	"errors"
	"log"
	"path/filepath"
	"strings"
	"testing"

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

// TestGateTurnsAwayBeforeAnyScreen: an unknown key, a command, and a session without a
// terminal each get one line and exit status 1, and no model is ever built for them.
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
		{"unknown key", stranger, func(ss *gossh.Session) error {
			if err := ss.RequestPty("xterm", 24, 80, nil); err != nil {
				return err
			}
			return ss.Shell()
		}, "is not allowed on this server"},
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
	if !strings.Contains(logs.String(), "refused key SHA256:") {
		t.Errorf("no log line for the refused key:\n%s", logs.String())
	}
}
