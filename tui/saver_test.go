package tui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/m3bench/m3eval/internal/session"
)

// discard drops the saver's work without running it: benchmarks measure the keys, and the
// store's own tests measure the writes.
func (s *saver) discard() {
	s.queue, s.run, s.state, s.err, s.writes = nil, nil, saveIdle, nil, 0
	clear(s.fields)
}

// returned is msg as the result of a read the saver runs: benchmarks hand a loaded item
// to Update as if the store had returned it.
func (s *saver) returned(msg tea.Msg) jobDoneMsg {
	r := &jobRun{job: job{do: func(context.Context) tea.Msg { return msg }}}
	s.run, s.state = r, saveRunning
	return jobDoneMsg{run: r, msg: r.do(context.Background())}
}

// fakeWrite is a write's result for the saver's tests.
type fakeWrite struct{ err error }

func (f fakeWrite) writeErr() error { return f.err }

var (
	errDown    = errors.New("database is locked")
	errRevoked = fmt.Errorf("%w: permission denied for table annotations", session.ErrRefused)
)

// saverRig drives a saver as a screen does: it runs the command of the job in flight and
// hands its result back, and it fires the retry timer at once.
type saverRig struct {
	t    *testing.T
	s    *saver
	cmd  tea.Cmd // the command that runs the job in flight, nil when none
	runs map[string]int
	st   Styles
}

// write queues a write named name whose attempts fail with errs in turn, then land.
func (g *saverRig) write(name, field string, errs ...error) {
	j := job{write: true, do: func(context.Context) tea.Msg {
		n := g.runs[name]
		g.runs[name]++
		if n < len(errs) {
			return fakeWrite{errs[n]}
		}
		return fakeWrite{}
	}}
	if field != "" {
		j.field = fieldKey{1, field}
	}
	g.take(g.s.add(j))
}

func (g *saverRig) read(name string) {
	g.take(g.s.add(job{do: func(context.Context) tea.Msg {
		g.runs[name]++
		return nil
	}}))
}

func (g *saverRig) take(cmd tea.Cmd) {
	if cmd != nil {
		if g.cmd != nil {
			g.t.Fatal("two jobs in flight")
		}
		g.cmd = cmd
	}
}

// finish runs the job in flight and hands its result back, as Update does.
func (g *saverRig) finish() saveEvent {
	if g.cmd == nil {
		g.t.Fatal("no job in flight")
	}
	msg := g.cmd().(jobDoneMsg)
	g.cmd = nil
	ev, _ := g.s.done(msg)
	switch ev {
	case evDone, evRecovered, evGivenUp:
		g.take(g.s.next())
	}
	return ev
}

// tick fires the retry timer.
func (g *saverRig) tick() { g.take(g.s.retry(saveRetryMsg{g.s.seq})) }

func (g *saverRig) header() string { return g.s.header(g.st, false) }

func asciiStyles() Styles {
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.Ascii)
	return DefaultStyles(r)
}

// TestSaverStates: each row is what happens to a screen's work (keys that write, the
// database failing, refusing, coming back, the annotator quitting) and where the saver
// stands after it: its state, what the header says, the quit stage, the writes not landed.
func TestSaverStates(t *testing.T) {
	type step struct {
		do      func(g *saverRig) string // what happens; returns the event or answer it led to, if any
		event   string
		state   saveState
		header  string
		quit    quitStage
		pending int
	}
	write := func(errs ...error) func(*saverRig) string {
		return func(g *saverRig) string { g.write("w", "correctness", errs...); return "" }
	}
	writeB := func(g *saverRig) string { g.write("b", "overall"); return "" }
	read := func(g *saverRig) string { g.read("r"); return "" }
	finish := func(g *saverRig) string { return g.finish().String() }
	tick := func(g *saverRig) string { g.tick(); return "" }
	quit := func(g *saverRig) string { return g.s.requestQuit().String() }
	ready := func(g *saverRig) string { return fmt.Sprint(g.s.readyToQuit()) }
	cancel := func(g *saverRig) string { g.s.cancelQuit(); return "" }
	giveUp := func(g *saverRig) string { return fmt.Sprint(g.s.giveUp()) }

	cases := []struct {
		name  string
		steps []step
	}{
		{"nothing to do", []step{
			{do: func(*saverRig) string { return "" }, state: saveIdle, header: "✓ saved"},
			{do: quit, event: "now", state: saveIdle, header: "✓ saved", quit: quitStopped},
		}},
		{"a write is saving until it lands", []step{
			{do: write(), state: saveRunning, header: "… saving", pending: 1},
			{do: writeB, state: saveRunning, header: "… saving", pending: 2},
			{do: finish, event: "done", state: saveRunning, header: "… saving", pending: 1},
			{do: finish, event: "done", state: saveIdle, header: "✓ saved"},
		}},
		{"a read is not a change", []step{
			{do: read, state: saveRunning, header: "✓ saved"},
			{do: finish, event: "done", state: saveIdle, header: "✓ saved"},
		}},
		{"a failed write is retried first, said once", []step{
			{do: write(errDown, errDown), state: saveRunning, header: "… saving", pending: 1},
			{do: read, state: saveRunning, header: "… saving", pending: 1},
			{do: finish, event: "failed", state: saveRetrying, header: "✗ NOT SAVED", pending: 1},
			{do: tick, state: saveRetrying, header: "✗ NOT SAVED", pending: 1},
			{do: finish, event: "failed again", state: saveRetrying, header: "✗ NOT SAVED", pending: 1},
			{do: tick, state: saveRetrying, header: "✗ NOT SAVED", pending: 1},
			{do: finish, event: "recovered", state: saveRunning, header: "✓ saved"}, // the read behind it runs now
			{do: finish, event: "done", state: saveIdle, header: "✓ saved"},
		}},
		{"a refused write is kept and nothing behind it runs", []step{
			{do: write(errRevoked), state: saveRunning, header: "… saving", pending: 1},
			{do: writeB, state: saveRunning, header: "… saving", pending: 2},
			{do: finish, event: "refused", state: saveRefused, header: "✗ NOT SAVED", pending: 2},
			{do: tick, state: saveRefused, header: "✗ NOT SAVED", pending: 2}, // no retry
			{do: quit, event: "ask", state: saveRefused, header: "✗ NOT SAVED", quit: quitAsking, pending: 2},
			{do: giveUp, event: "2", state: saveRefused, header: "✗ NOT SAVED", quit: quitStopped, pending: 2},
		}},
		{"quit waits for the writes on their way", []step{
			{do: write(), state: saveRunning, header: "… saving", pending: 1},
			{do: quit, event: "later", state: saveRunning, header: "… saving", quit: quitWaiting, pending: 1},
			{do: ready, event: "false", state: saveRunning, header: "… saving", quit: quitWaiting, pending: 1},
			{do: finish, event: "done", state: saveIdle, header: "✓ saved", quit: quitWaiting},
			{do: ready, event: "true", state: saveIdle, header: "✓ saved", quit: quitStopped},
		}},
		{"quit while failing asks; another key takes it back", []step{
			{do: write(errDown), state: saveRunning, header: "… saving", pending: 1},
			{do: finish, event: "failed", state: saveRetrying, header: "✗ NOT SAVED", pending: 1},
			{do: quit, event: "ask", state: saveRetrying, header: "✗ NOT SAVED", quit: quitAsking, pending: 1},
			{do: cancel, state: saveRetrying, header: "✗ NOT SAVED", pending: 1},
			{do: tick, state: saveRetrying, header: "✗ NOT SAVED", pending: 1},
			{do: finish, event: "recovered", state: saveIdle, header: "✓ saved"},
			{do: ready, event: "false", state: saveIdle, header: "✓ saved"},
		}},
		{"a write failing while quit waits asks, and quits itself once it lands", []step{
			{do: write(errDown), state: saveRunning, header: "… saving", pending: 1},
			{do: quit, event: "later", state: saveRunning, header: "… saving", quit: quitWaiting, pending: 1},
			{do: finish, event: "failed", state: saveRetrying, header: "✗ NOT SAVED", quit: quitAsking, pending: 1},
			{do: tick, state: saveRetrying, header: "✗ NOT SAVED", quit: quitAsking, pending: 1},
			{do: finish, event: "recovered", state: saveIdle, header: "✓ saved", quit: quitAsking},
			{do: ready, event: "true", state: saveIdle, header: "✓ saved", quit: quitStopped},
		}},
		{"the second quit gives the failing writes up", []step{
			{do: write(errDown), state: saveRunning, header: "… saving", pending: 1},
			{do: writeB, state: saveRunning, header: "… saving", pending: 2},
			{do: finish, event: "failed", state: saveRetrying, header: "✗ NOT SAVED", pending: 2},
			{do: quit, event: "ask", state: saveRetrying, header: "✗ NOT SAVED", quit: quitAsking, pending: 2},
			{do: giveUp, event: "2", state: saveRetrying, header: "✗ NOT SAVED", quit: quitStopped, pending: 2},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := &saverRig{t: t, s: newSaver(context.Background()), runs: map[string]int{}, st: asciiStyles()}
			for i, st := range tc.steps {
				got := st.do(g)
				if got != st.event {
					t.Errorf("step %d: %q, want %q", i, got, st.event)
				}
				if g.s.state != st.state || g.header() != st.header || g.s.quit != st.quit || g.s.pending() != st.pending {
					t.Fatalf("step %d: state %v, header %q, quit %v, %d pending; want %v, %q, %v, %d",
						i, g.s.state, g.header(), g.s.quit, g.s.pending(), st.state, st.header, st.quit, st.pending)
				}
			}
		})
	}
}

// TestSaverRunsInKeyOrder: jobs run one at a time in the order they were queued, and a
// failed write runs again before anything queued behind it.
func TestSaverRunsInKeyOrder(t *testing.T) {
	s := newSaver(context.Background())
	var order []string
	var attempts int
	mk := func(name string, write bool) job {
		return job{write: write, do: func(context.Context) tea.Msg {
			order = append(order, name)
			if name == "b" {
				if attempts++; attempts < 3 {
					return fakeWrite{errDown}
				}
			}
			return fakeWrite{}
		}}
	}
	cmds := []tea.Cmd{s.add(mk("a", true)), s.add(mk("b", true)), s.add(mk("load", false)), s.add(mk("c", true))}
	if cmds[1] != nil || cmds[2] != nil || cmds[3] != nil {
		t.Fatal("a second job started while the first runs")
	}
	cmd := cmds[0]
	for cmd != nil {
		ev, _ := s.done(cmd().(jobDoneMsg))
		switch ev {
		case evFailed, evFailedAgain:
			cmd = s.retry(saveRetryMsg{s.seq})
		default:
			cmd = s.next()
		}
	}
	if got := fmt.Sprint(order); got != "[a b b b load c]" {
		t.Fatalf("ran %s, want [a b b b load c]", got)
	}
	if s.state != saveIdle || s.pending() != 0 {
		t.Fatalf("after the queue: %v with %d pending", s.state, s.pending())
	}
}

// TestSaverUnsavedFields: a field counts as unsaved (the rubric's "✗ unsaved") only while a
// write of it fails or waits behind one that fails, and until its own write lands.
func TestSaverUnsavedFields(t *testing.T) {
	g := &saverRig{t: t, s: newSaver(context.Background()), runs: map[string]int{}, st: asciiStyles()}
	corr, over := fieldKey{1, "correctness"}, fieldKey{1, "overall"}
	g.write("w", "correctness", errDown)
	g.write("b", "overall")
	if g.s.unsaved(corr) || g.s.unsaved(over) {
		t.Fatal("a write on its way is marked unsaved before anything failed")
	}
	g.finish()
	if !g.s.unsaved(corr) || !g.s.unsaved(over) {
		t.Fatal("after the failure both fields must be marked unsaved")
	}
	g.tick()
	g.finish() // the correctness write lands; overall's runs now
	if g.s.unsaved(corr) || g.s.unsaved(over) {
		t.Fatal("marks stay after the database came back")
	}
	g.finish()
	if len(g.s.fields) != 0 {
		t.Fatalf("fields left counted: %v", g.s.fields)
	}
}

// TestSaverStaleMessages: a result or a retry timer of a run the saver no longer waits
// for changes nothing.
func TestSaverStaleMessages(t *testing.T) {
	g := &saverRig{t: t, s: newSaver(context.Background()), runs: map[string]int{}, st: asciiStyles()}
	g.write("w", "", errDown)
	first := g.cmd().(jobDoneMsg)
	g.cmd = nil
	if ev, _ := g.s.done(first); ev != evFailed {
		t.Fatalf("first result: %v", ev)
	}
	old := g.s.seq
	g.tick()
	if ev, _ := g.s.done(first); ev != evStale {
		t.Fatalf("the failed run's result again: %v, want stale", ev)
	}
	if cmd := g.s.retry(saveRetryMsg{old - 1}); cmd != nil {
		t.Fatal("an old retry timer ran the write again")
	}
	if ev := g.finish(); ev != evRecovered {
		t.Fatalf("retry: %v", ev)
	}
}

// TestSaverGivesUpWhenStopping: once the program's context ends, a failed write is not
// retried: it is counted as given up, and the queue moves on.
func TestSaverGivesUpWhenStopping(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	g := &saverRig{t: t, s: newSaver(ctx), runs: map[string]int{}, st: asciiStyles()}
	g.write("w", "correctness", errDown)
	cancel()
	if ev := g.finish(); ev != evGivenUp {
		t.Fatalf("%v, want given up", ev)
	}
	if g.s.abandoned() != 1 || g.s.pending() != 0 || g.s.state != saveIdle {
		t.Fatalf("abandoned %d, pending %d, %v", g.s.abandoned(), g.s.pending(), g.s.state)
	}
}

// TestSaverFlush: after the program stopped without quitting, flush lands the failing write
// and those behind it in order, retrying, and counts a refused one as given up.
func TestSaverFlush(t *testing.T) {
	g := &saverRig{t: t, s: newSaver(context.Background()), runs: map[string]int{}, st: asciiStyles()}
	g.write("w", "correctness", errDown, errDown)
	g.write("x", "overall", errRevoked)
	g.write("b", "overall")
	g.finish() // w failed once; the retry timer never fires: the program stopped
	if n := g.s.flush(context.Background()); n != 1 {
		t.Fatalf("flush gave up %d, want 1 (the refused write)", n)
	}
	if g.runs["w"] != 3 || g.runs["x"] != 1 || g.runs["b"] != 1 {
		t.Fatalf("runs %v, want w 3, x 1, b 1", g.runs)
	}
	if g.s.pending() != 0 || g.s.state != saveIdle {
		t.Fatalf("after flush: %d pending, %v", g.s.pending(), g.s.state)
	}
}
