package serve

import (
	"context"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/ssh"
	"github.com/charmbracelet/wish"
	"github.com/charmbracelet/wish/bubbletea"
	gossh "golang.org/x/crypto/ssh"

	"github.com/m3bench/m3eval/internal/textsafe"
	"github.com/m3bench/m3eval/tui"
)

// role is what a key may do on this server.
type role int

const (
	roleNone role = iota
	roleAnnotator
	roleAdmin
)

// endReason says why a session ended, for its log line and the client's last message.
type endReason int

const (
	endClosed endReason = iota // the annotator quit, or the client went away
	endIdle
	endShutdown
	endKeyRemoved // the key was taken out of the files while the session ran
)

func (r endReason) String() string {
	switch r {
	case endIdle:
		return "idle"
	case endShutdown:
		return "shutdown"
	case endKeyRemoved:
		return "key removed"
	}
	return "closed"
}

// sessionState is one session's bookkeeping, shared by the gate and the program handler.
type sessionState struct {
	name        string
	role        role
	fingerprint string
	key         ssh.PublicKey
	app         *App
	doneAtStart int
	hasDone     bool

	mu      sync.Mutex
	program *tea.Program
	reason  endReason
	lastKey atomic.Int64 // unix nanoseconds of the last input
}

// quit asks the session's program to save what is typed and quit (a shutdown).
func (st *sessionState) quit() { st.end(endShutdown) }

// end asks the session's program to save what is typed and quit, for reason.
func (st *sessionState) end(reason endReason) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.reason = reason
	if st.program != nil {
		st.program.Send(tui.SaveAndQuitMsg{})
	}
}

// appModel is the annotator's model of the session, nil for other sessions.
func (st *sessionState) appModel() tea.Model {
	if st.app == nil {
		return nil
	}
	return st.app.Model
}

type stateKey struct{}

func stateOf(sess ssh.Session) *sessionState {
	st, _ := sess.Context().Value(stateKey{}).(*sessionState)
	return st
}

// identify says who a key is.
func (s *Server) identify(key ssh.PublicKey) (string, role) {
	ks := s.keys.Load()
	if key == nil {
		return "", roleNone
	}
	if n, ok := ks.annotators.Name(key); ok {
		return n, roleAnnotator
	}
	if _, ok := ks.admins.Name(key); ok {
		return "", roleAdmin
	}
	return "", roleNone
}

// gate is the outermost middleware: it turns away commands, sessions without a terminal and
// keys taken out of the files since they signed in (unknown keys never get this far: the
// authentication refuses them) in one line each, and logs each session's start and end.
func (s *Server) gate(next ssh.Handler) ssh.Handler {
	return func(sess ssh.Session) {
		addr := sess.RemoteAddr().String()
		key := sess.PublicKey()
		fp := "none"
		if key != nil {
			fp = gossh.FingerprintSHA256(key)
		}
		name, r := s.identify(key)
		if r == roleNone {
			s.o.Log.Printf("refused key %s from %s (user %q): not in the annotators or admin file", fp, addr, textsafe.Line(sess.User()))
			wish.Fatalln(sess, fmt.Sprintf("m3eval: key %s is not allowed on this server; ask the server's admin to add it to the annotators file.", fp))
			return
		}
		if len(sess.Command()) > 0 {
			wish.Fatalln(sess, "m3eval: this server runs no commands; connect with: ssh -t -p PORT HOST")
			return
		}
		if _, _, ok := sess.Pty(); !ok {
			wish.Fatalln(sess, "m3eval: the annotator needs a terminal; connect with: ssh -t -p PORT HOST")
			return
		}
		st := &sessionState{name: name, role: r, fingerprint: fp, key: key}
		st.lastKey.Store(time.Now().UnixNano())
		conn := sess.Context().SessionID() // one per SSH connection, shared by its channels
		s.mu.Lock()
		if s.draining {
			s.mu.Unlock()
			wish.Fatalln(sess, "m3eval: the server is shutting down; try again in a moment.")
			return
		}
		if s.perConn[conn] >= maxSessionsPerConn {
			s.mu.Unlock()
			s.o.Log.Printf("refused a session of key %s from %s: %d already open on that connection", fp, addr, maxSessionsPerConn)
			wish.Fatalln(sess, fmt.Sprintf("m3eval: at most %d sessions per SSH connection; close one, or connect again.", maxSessionsPerConn))
			return
		}
		s.perConn[conn]++
		s.sessions[st] = struct{}{}
		s.active.Add(1)
		s.mu.Unlock()
		defer func() {
			s.mu.Lock()
			delete(s.sessions, st)
			if s.perConn[conn]--; s.perConn[conn] <= 0 {
				delete(s.perConn, conn)
			}
			s.mu.Unlock()
			s.active.Done()
		}()

		who := name
		if r == roleAdmin {
			who = "(admin)"
		}
		start := time.Now()
		s.o.Log.Printf("session start %s key %s from %s", who, fp, addr)
		sess.Context().SetValue(stateKey{}, st)
		next(sess)

		// A dropped connection quits the program at once (wish sends it tea.Quit): the
		// model saves what was typed and still on its way, as a shutdown does.
		if f, ok := st.appModel().(interface{ Flush(context.Context) int }); ok {
			ctx, cancel := context.WithTimeout(s.work, 30*time.Second)
			if n := f.Flush(ctx); n > 0 {
				s.o.Log.Printf("session %s: %d change(s) could not be saved after the connection ended", who, n)
			}
			cancel()
		}

		items := "-"
		if st.app != nil && st.hasDone {
			ctx, cancel := context.WithTimeout(s.work, 5*time.Second)
			if n, err := st.app.Done(ctx); err == nil {
				items = fmt.Sprint(n - st.doneAtStart)
			}
			cancel()
		}
		st.mu.Lock()
		reason := st.reason
		st.mu.Unlock()
		s.o.Log.Printf("session end %s key %s from %s after %s, %s item(s) done, %s", who, fp, addr,
			time.Since(start).Round(time.Second), items, reason)
		switch reason {
		case endIdle:
			wish.Errorln(sess, fmt.Sprintf("m3eval: no key for %s: session closed. Everything shown saved is saved.", s.o.IdleTimeout))
		case endShutdown:
			wish.Errorln(sess, "m3eval: the server is shutting down. Everything shown saved is saved.")
		case endKeyRemoved:
			wish.Errorln(sess, "m3eval: your key was removed from this server's key files: session closed. Everything shown saved is saved.")
		}
		// The line m3eval annotate prints when its screen is gone: what this session did
		// and where the queue stands (lost with the connection when it dropped).
		if sm, ok := st.appModel().(interface{ Summary() string }); ok {
			if line := sm.Summary(); line != "" {
				wish.Errorln(sess, "m3eval: "+textsafe.Line(line))
			}
		}
	}
}

// maxSessionsPerConn is how many sessions (channels) one SSH connection may hold open at
// once: a person needs one or two, and 1,000 channels on one connection took the server from
// 49 to 661 MB.
const maxSessionsPerConn = 4

// program builds the session's Bubble Tea program: the model for the key's person, a
// renderer for the client's terminal, input watched for the idle timeout.
func (s *Server) program(sess ssh.Session) *tea.Program {
	st := stateOf(sess)
	if st == nil {
		return nil
	}
	pty, _, _ := sess.Pty()
	in := Session{Annotator: st.name, Renderer: bubbletea.MakeRenderer(sess),
		Width: min(pty.Window.Width, maxCols), Height: min(pty.Window.Height, maxRows), Context: s.work}
	var m tea.Model
	switch st.role {
	case roleAnnotator:
		app, err := s.o.Annotate(in)
		if err != nil {
			s.o.Log.Printf("session %s: %v", st.name, err)
			wish.Fatalln(sess, "m3eval: "+textsafe.Line(err.Error()))
			return nil
		}
		st.app, m = app, app.Model
		if app.Done != nil {
			ctx, cancel := context.WithTimeout(s.work, 5*time.Second)
			n, err := app.Done(ctx)
			cancel()
			st.doneAtStart, st.hasDone = n, err == nil
		}
	case roleAdmin:
		if s.o.Status == nil {
			wish.Fatalln(sess, "m3eval: this server has no status screen")
			return nil
		}
		var err error
		if m, err = s.o.Status(in); err != nil {
			wish.Fatalln(sess, "m3eval: "+textsafe.Line(err.Error()))
			return nil
		}
	}
	// The server's signals are the server's: a program of its own would take SIGTERM as a
	// quit and drop what the shutdown is waiting to save.
	opts := []tea.ProgramOption{tea.WithAltScreen(), tea.WithMouseCellMotion(), tea.WithoutSignalHandler()}
	if sess.EmulatedPty() {
		opts = append(opts, tea.WithInput(&keyClock{r: sess, st: st}), tea.WithOutput(sess))
	} else {
		opts = append(opts, bubbletea.MakeOptions(sess)...)
	}
	p := tea.NewProgram(sizeCap{m}, opts...)
	st.mu.Lock()
	st.program = p
	if st.reason == endShutdown || st.reason == endKeyRemoved {
		// The shutdown or the key's removal came while the model was being built. Send blocks
		// until the program runs, which is after this returns: a goroutine (it held one
		// session open for good when the key's removal came at this moment).
		go p.Send(tui.SaveAndQuitMsg{})
	}
	st.mu.Unlock()
	if s.o.IdleTimeout > 0 {
		go s.idle(sess.Context(), st)
	}
	return p
}

// idle asks the session to save and quit once no key came for Options.IdleTimeout.
func (s *Server) idle(ctx context.Context, st *sessionState) {
	tick := min(s.o.IdleTimeout/4, time.Second)
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if time.Since(time.Unix(0, st.lastKey.Load())) < s.o.IdleTimeout {
				continue
			}
			st.mu.Lock()
			if st.reason == endClosed {
				st.reason = endIdle
			}
			st.program.Send(tui.SaveAndQuitMsg{})
			st.mu.Unlock()
			return
		}
	}
}

// keyClock passes the client's input through and notes when it last came.
type keyClock struct {
	r  io.Reader
	st *sessionState
}

// Read implements io.Reader.
func (k *keyClock) Read(p []byte) (int, error) {
	n, err := k.r.Read(p)
	if n > 0 {
		k.st.lastKey.Store(time.Now().UnixNano())
	}
	return n, err
}

// The largest window a session's screen is drawn for. A client chooses its window size, and
// the screen is rendered at that size: one asking for 10000×10000 grew the server by 800 MB.
// No real terminal is larger than this; a larger one gets the screen at this size.
const (
	maxCols = 500
	maxRows = 200
)

// sizeCap passes every message to the model, window sizes capped at maxCols × maxRows.
type sizeCap struct{ tea.Model }

// Update implements tea.Model.
func (c sizeCap) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if ws, ok := msg.(tea.WindowSizeMsg); ok {
		msg = tea.WindowSizeMsg{Width: min(ws.Width, maxCols), Height: min(ws.Height, maxRows)}
	}
	m, cmd := c.Model.Update(msg)
	return sizeCap{m}, cmd
}
