// Package serve serves the annotator to a team over SSH (m3eval serve). The SSH key is the
// identity: a key listed in the annotators file opens that person's annotator, a key in the
// admin file opens a read-only status screen, any other key is turned away before a screen
// opens. Each session gets its own Bubble Tea program and lipgloss renderer (the client's
// size, colours and keys), on the one database the server holds.
//
// The package knows nothing of the store or the screens: the command hands it two
// functions (Options.Annotate, Options.Status) that build the model a session runs. The
// layout follows soft-serve's pkg/ssh: wish middlewares around charmbracelet/ssh, one
// program per session, a per-session renderer.
package serve

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/ssh"
	"github.com/charmbracelet/wish"
	"github.com/charmbracelet/wish/bubbletea"
	"github.com/muesli/termenv"
	"github.com/spf13/pflag"
	gossh "golang.org/x/crypto/ssh"

	"github.com/m3bench/m3eval/internal/textsafe"
	"github.com/m3bench/m3eval/internal/usage"
)

// Session is what the model of one SSH session is built from.
type Session struct {
	// Annotator is the name the key belongs to (empty for an admin).
	Annotator string
	// Renderer renders for the client's terminal (its colour profile and background).
	Renderer *lipgloss.Renderer
	// Width and Height are the client's terminal size when the session opened.
	Width, Height int
	// Context outlives the connection until the server has shut down, so a write the session
	// started finishes even when the client goes away.
	Context context.Context
}

// App is what an annotator's session runs.
type App struct {
	Model tea.Model
	// Done counts the annotator's finished items; the session's log line reports how many
	// more there are at its end than at its start. Nil: not reported.
	Done func(context.Context) (int, error)
}

// Options configure a server.
type Options struct {
	// Listen is the address to listen on ("0.0.0.0:2222"; port 0 picks a free one).
	Listen string
	// HostKey is the server's private key file, created (ed25519, mode 0600) if missing.
	HostKey string
	// Annotators is the annotators file (see ParseAnnotators); Admins, if set, the admin
	// key file (see ParseAdmins). Both are read again when they change and on SIGHUP.
	Annotators, Admins string
	// IdleTimeout closes a session that received no key for this long (0: never).
	IdleTimeout time.Duration
	// Grace is how long a shutdown waits for sessions to save and quit (0: 10 s).
	Grace time.Duration
	// Poll is how often the key files' modification times are checked (0: 1 s).
	Poll time.Duration
	// Annotate builds the annotator of a session; Status the admin's status screen.
	Annotate func(Session) (*App, error)
	Status   func(Session) (tea.Model, error)
	// Log receives one line per session start and end, per refused key, per reload.
	Log *log.Logger
	// Ready, if set, is called with the address the server listens on.
	Ready func(addr net.Addr)
}

// AddFlags defines the flags of m3eval serve on fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Listen, "listen", "0.0.0.0:2222", "address to listen on (port 0: any free port, logged)")
	fs.StringVar(&o.HostKey, "host-key", ".m3eval/host_ed25519", "the server's SSH host key; created (mode 0600) when missing")
	fs.StringVar(&o.Annotators, "annotators", "", "file of NAME ssh-ed25519 AAAA... lines: who may annotate (required)")
	fs.StringVar(&o.Admins, "admin", "", "authorized_keys file whose keys open the read-only status screen")
	fs.DurationVar(&o.IdleTimeout, "idle-timeout", 0, "close a session after this long without a key (e.g. 30m; 0: never)")
	fs.DurationVar(&o.Grace, "shutdown-grace", 10*time.Second, "on SIGTERM, how long sessions get to save before the server exits")
}

// Check finds the usage errors of the flags.
func (o *Options) Check() error {
	if o.Annotators == "" {
		return usage.Errorf("--annotators FILE is required (lines of NAME ssh-ed25519 AAAA...)")
	}
	if o.IdleTimeout < 0 {
		return usage.Errorf("--idle-timeout %s: want a duration ≥ 0", o.IdleTimeout)
	}
	return nil
}

// keySets are the keys in force; a reload swaps them whole.
type keySets struct {
	annotators, admins *Keys
}

// Server is an m3eval SSH server.
type Server struct {
	o    Options
	keys atomic.Pointer[keySets]

	mu       sync.Mutex
	sessions map[*sessionState]struct{}
	perConn  map[string]int // open sessions per SSH connection (its session id)
	draining bool
	active   sync.WaitGroup

	// work is the context of the sessions' database writes; it ends after the drain.
	work context.Context
}

// New checks the options and reads the key files.
func New(o Options) (*Server, error) {
	if o.Annotate == nil {
		return nil, errors.New("serve: no annotator")
	}
	if o.Grace == 0 {
		o.Grace = 10 * time.Second
	}
	if o.Poll == 0 {
		o.Poll = time.Second
	}
	if o.Log == nil {
		o.Log = log.New(os.Stderr, "", log.LstdFlags)
	}
	s := &Server{o: o, sessions: map[*sessionState]struct{}{}, perConn: map[string]int{}}
	ks, err := s.readKeys()
	if err != nil {
		return nil, err
	}
	s.keys.Store(ks)
	return s, nil
}

func (s *Server) readKeys() (*keySets, error) {
	a, err := ParseAnnotators(s.o.Annotators)
	if err != nil {
		return nil, fmt.Errorf("--annotators: %w", err)
	}
	ks := &keySets{annotators: a}
	if s.o.Admins != "" {
		if ks.admins, err = ParseAdmins(s.o.Admins); err != nil {
			return nil, fmt.Errorf("--admin: %w", err)
		}
	}
	return ks, nil
}

// Reload reads the key files again. A file that does not parse leaves the keys in force as
// they were (and says why in the log): a half-edited file never locks the team out.
func (s *Server) Reload() error {
	ks, err := s.readKeys()
	if err != nil {
		s.o.Log.Printf("keys not reloaded (the previous ones stay in force): %v", err)
		return err
	}
	s.keys.Store(ks)
	n := 0
	if ks.admins != nil {
		n = ks.admins.Len()
	}
	s.o.Log.Printf("keys reloaded: %d annotator(s) with %d key(s), %d admin key(s)", len(ks.annotators.Names()), ks.annotators.Len(), n)
	s.endRemovedKeys()
	return nil
}

// endRemovedKeys ends the sessions whose key no longer names the same person in the same
// role: they save what is typed, then close with a message (a key taken out of the file
// must not keep its open sessions).
func (s *Server) endRemovedKeys() {
	s.mu.Lock()
	var gone []*sessionState
	for st := range s.sessions {
		if name, r := s.identify(st.key); name != st.name || r != st.role {
			gone = append(gone, st)
		}
	}
	s.mu.Unlock()
	for _, st := range gone {
		s.o.Log.Printf("session %s key %s: the key was removed, ending the session", st.name, st.fingerprint)
		st.end(endKeyRemoved)
	}
}

// Run serves until ctx ends, then shuts down gracefully. No new connection is taken, every
// session is asked to save and quit, and the server waits up to Options.Grace for them.
func (s *Server) Run(ctx context.Context) error {
	if err := os.MkdirAll(filepath.Dir(s.o.HostKey), 0o700); err != nil {
		return fmt.Errorf("--host-key: %w", err)
	}
	work, stopWork := context.WithCancel(context.WithoutCancel(ctx))
	defer stopWork()
	s.work = work
	srv, err := s.sshServer()
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", s.o.Listen)
	if err != nil {
		return fmt.Errorf("--listen: %w", err)
	}
	s.o.Log.Printf("listening on %s", ln.Addr())
	if s.o.Ready != nil {
		s.o.Ready(ln.Addr())
	}
	go s.watch(ctx)

	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		if !errors.Is(err, ssh.ErrServerClosed) {
			return fmt.Errorf("serve: %w", err)
		}
		return nil
	case <-ctx.Done():
	}
	return s.shutdown(srv)
}

// sshServer builds the SSH server: the host key (created when missing), every key let
// through the protocol's check, and the middlewares of a session, outermost last.
func (s *Server) sshServer() (*ssh.Server, error) {
	if s.work == nil {
		s.work = context.Background()
	}
	srv, err := wish.NewServer(
		wish.WithHostKeyPath(s.o.HostKey),
		wish.WithPublicKeyAuth(func(ctx ssh.Context, key ssh.PublicKey) bool {
			// An unknown key is refused by the protocol itself: let through, it held a
			// connection open (ssh -N asks for no session, so no gate ever ran) unlogged.
			// Its client says "Permission denied (publickey)"; the log says whose key it was.
			if _, r := s.identify(key); r != roleNone {
				return true
			}
			s.o.Log.Printf("refused key %s from %s (user %q): not in the annotators or admin file",
				gossh.FingerprintSHA256(key), ctx.RemoteAddr(), textsafe.Line(ctx.User()))
			return false
		}),
		wish.WithMiddleware(
			bubbletea.MiddlewareWithProgramHandler(s.program, termenv.Ascii),
			s.gate,
		),
	)
	if err != nil {
		return nil, fmt.Errorf("--host-key %s: %w", s.o.HostKey, err)
	}
	if err := os.Chmod(s.o.HostKey, 0o600); err != nil {
		return nil, fmt.Errorf("--host-key: %w", err)
	}
	return srv, nil
}

// shutdown stops taking connections, asks every session to save and quit, waits for them,
// and then closes what is left.
func (s *Server) shutdown(srv *ssh.Server) error {
	s.mu.Lock()
	s.draining = true
	n := len(s.sessions)
	for st := range s.sessions {
		st.quit()
	}
	s.mu.Unlock()
	s.o.Log.Printf("shutting down: %d session(s) saving", n)
	ctx, cancel := context.WithTimeout(context.Background(), s.o.Grace)
	defer cancel()
	go srv.Shutdown(ctx) //nolint:errcheck // closes the listener at once; the wait is ours
	done := make(chan struct{})
	go func() { s.active.Wait(); close(done) }()
	select {
	case <-done:
		s.o.Log.Printf("shut down: every session saved and closed")
		return srv.Close()
	case <-ctx.Done():
		s.mu.Lock()
		left := len(s.sessions)
		s.mu.Unlock()
		s.o.Log.Printf("shut down after %s with %d session(s) still saving (their unsaved changes were never shown saved)", s.o.Grace, left)
		return srv.Close()
	}
}

// watch reloads the key files when their modification time changes or on SIGHUP.
func (s *Server) watch(ctx context.Context) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	stamp := func() string {
		out := ""
		for _, p := range []string{s.o.Annotators, s.o.Admins} {
			if p == "" {
				continue
			}
			if fi, err := os.Stat(p); err == nil {
				out += fmt.Sprintf("%d/%d;", fi.ModTime().UnixNano(), fi.Size())
			}
		}
		return out
	}
	last := stamp()
	t := time.NewTicker(s.o.Poll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
			last = stamp()
			_ = s.Reload()
		case <-t.C:
			if now := stamp(); now != last {
				last = now
				_ = s.Reload()
			}
		}
	}
}
