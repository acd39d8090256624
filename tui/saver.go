package tui

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/m3bench/m3eval/internal/session"
)

// A saver runs one screen's database work: one job at a time, in the order the keys were
// pressed, so a write and a later load of the same item never overtake each other. It
// holds the save state in one place (saveState and quitStage), and says what the header
// shows, so both screens keep the same promises:
//
//   - a change is shown saved only once its write has returned from the database;
//   - a write that fails stays first in line and runs again after a backoff;
//   - a write the database refuses for good (session.ErrRefused) is kept and shown
//     refused, never retried, and nothing queued behind it runs;
//   - quitting waits for the writes on their way, and asks before giving them up.
//
// The saver decides nothing about what a screen says on its message line: it reports what
// happened (saveEvent) and the screen words it.

// saveState is where a screen's database work stands.
type saveState int

const (
	// saveIdle: no job runs; every write handed to the saver has returned.
	saveIdle saveState = iota
	// saveRunning: a job runs, and no write has failed.
	saveRunning
	// saveRetrying: a write failed; it waits for its backoff (or runs again), first in line.
	saveRetrying
	// saveRefused: the database refused a write for good; it and the jobs behind it wait
	// until the screen quits (and gives them up) or the program is flushed.
	saveRefused
)

// String names the state, for tests and logs.
func (s saveState) String() string {
	switch s {
	case saveIdle:
		return "idle"
	case saveRunning:
		return "running"
	case saveRetrying:
		return "retrying"
	case saveRefused:
		return "refused"
	}
	return "saveState(?)"
}

// quitStage is how far a request to quit has gone.
type quitStage int

const (
	// quitNone: nobody asked to quit.
	quitNone quitStage = iota
	// quitWaiting: asked; the screen quits once every write has landed.
	quitWaiting
	// quitAsking: asked while a write fails; the screen said so, and a second quit gives
	// the writes up.
	quitAsking
	// quitStopped: the screen returned tea.Quit.
	quitStopped
)

// String names the stage, for tests.
func (q quitStage) String() string {
	switch q {
	case quitNone:
		return "none"
	case quitWaiting:
		return "waiting"
	case quitAsking:
		return "asking"
	case quitStopped:
		return "stopped"
	}
	return "quitStage(?)"
}

// saveEvent is what a finished job means for the screen.
type saveEvent int

const (
	// evDone: the job finished (a write landed, a read returned); the screen handles its
	// result message.
	evDone saveEvent = iota
	// evRecovered: a write that had failed landed; the screen handles its result and may
	// say the database is back.
	evRecovered
	// evFailed: a write failed for the first time; it runs again after a backoff.
	evFailed
	// evFailedAgain: a retry failed too; said once already, so usually not said again.
	evFailedAgain
	// evRefused: the database refused the write for good.
	evRefused
	// evGivenUp: the write failed while the program stops (its context ended): it is
	// counted as given up and the screen handles its result.
	evGivenUp
	// evStale: the message belongs to no job of this saver (a run already replaced); ignore.
	evStale
)

// String names the event, for tests.
func (e saveEvent) String() string {
	switch e {
	case evDone:
		return "done"
	case evRecovered:
		return "recovered"
	case evFailed:
		return "failed"
	case evFailedAgain:
		return "failed again"
	case evRefused:
		return "refused"
	case evGivenUp:
		return "given up"
	case evStale:
		return "stale"
	}
	return "saveEvent(?)"
}

// quitAnswer is what a request to quit leads to.
type quitAnswer int

const (
	// quitNow: nothing is on its way; the screen returns tea.Quit.
	quitNow quitAnswer = iota
	// quitLater: writes are on their way; the screen quits when done reports drained.
	quitLater
	// quitAsk: a write fails; the screen says quitting again loses the changes.
	quitAsk
)

// String names the answer, for tests.
func (a quitAnswer) String() string {
	switch a {
	case quitNow:
		return "now"
	case quitLater:
		return "later"
	case quitAsk:
		return "ask"
	}
	return "quitAnswer(?)"
}

// Backoff of a failed write: the first retry after retryFirst, each next one twice as late,
// never later than retryMax, so a database that comes back is used within two seconds.
const (
	retryFirst = 100 * time.Millisecond
	retryMax   = 2 * time.Second
)

// job is one piece of database work; its result message is handled when it returns.
type job struct {
	do func(ctx context.Context) tea.Msg
	// write says the job changes the database: it counts as unsaved until it lands, and a
	// failure (its result's writeErr) is retried.
	write bool
	// field is the rubric field of an item the write sets, for the per-field "✗ unsaved"
	// mark; the zero value for writes that set none.
	field fieldKey
}

// fieldKey names one field of one item.
type fieldKey struct {
	turnID int64
	field  string
}

// writeResult is a write's result message; writeErr is nil when the write landed.
type writeResult interface{ writeErr() error }

// writeErr is the error of a write result, nil for other results and successes.
func writeErr(msg tea.Msg) error {
	if w, ok := msg.(writeResult); ok {
		return w.writeErr()
	}
	return nil
}

// jobDoneMsg carries a job's result back to the screen's Update.
type jobDoneMsg struct {
	run *jobRun
	msg tea.Msg
}

// saveRetryMsg runs the failed write again once its backoff has passed; seq tells an old
// timer from the current one.
type saveRetryMsg struct{ seq int }

// jobRun is one run of a job, done once: by its command, or by flush when the program
// stopped before the command ran or before its result was handled.
type jobRun struct {
	job  job
	once sync.Once
	msg  tea.Msg
}

func (r *jobRun) do(ctx context.Context) tea.Msg {
	r.once.Do(func() { r.msg = r.job.do(ctx) })
	return r.msg
}

// saver is the queue of a screen's database work and the state of its writes.
type saver struct {
	ctx   context.Context
	queue []job   // waiting, in key order
	run   *jobRun // the job running, or the failed write waiting to run again
	state saveState
	err   error         // the failure, while retrying or refused
	wait  time.Duration // the backoff before the next retry
	seq   int           // the current retry timer
	quit  quitStage

	writes int              // writes queued, running or failing
	fields map[fieldKey]int // of them, those setting a field, by field
	given  int              // writes given up: by a second quit, or as the program stopped
}

// newSaver returns an idle saver whose jobs run with ctx (the program's: it ends when the
// program stops, and a write failing then is given up rather than retried).
func newSaver(ctx context.Context) *saver {
	if ctx == nil {
		ctx = context.Background()
	}
	return &saver{ctx: ctx, fields: map[fieldKey]int{}}
}

// add queues jobs behind the waiting ones and starts the first if nothing runs.
func (s *saver) add(jobs ...job) tea.Cmd {
	for _, j := range jobs {
		if j.write {
			s.writes++
			if j.field.field != "" {
				s.fields[j.field]++
			}
		}
	}
	s.queue = append(s.queue, jobs...)
	return s.next()
}

// next starts the first waiting job if none runs (and none failed).
func (s *saver) next() tea.Cmd {
	if s.state != saveIdle || len(s.queue) == 0 {
		return nil
	}
	j := s.queue[0]
	s.queue = s.queue[1:]
	s.state = saveRunning
	return s.start(j)
}

func (s *saver) start(j job) tea.Cmd {
	r := &jobRun{job: j}
	s.run = r
	ctx := s.ctx
	return func() tea.Msg { return jobDoneMsg{r, r.do(ctx)} }
}

// done takes a finished job back. A failed write stays the running one and, unless it was
// refused, a retry is scheduled (the returned command); anything else ends the job, and
// the screen then handles d.msg and calls next.
func (s *saver) done(d jobDoneMsg) (saveEvent, tea.Cmd) {
	if d.run == nil || d.run != s.run {
		return evStale, nil
	}
	var err error
	if d.run.job.write {
		err = writeErr(d.msg)
	}
	if err != nil && s.ctx.Err() == nil {
		s.err = err
		if s.quit == quitWaiting {
			s.quit = quitAsking
		}
		if errors.Is(err, session.ErrRefused) {
			// Retrying cannot clear it (a revoked privilege, a read-only file): the write
			// and those behind it stay unsaved, and the screen must not say they will land.
			s.state = saveRefused
			return evRefused, nil
		}
		ev := evFailedAgain
		if s.state != saveRetrying {
			ev = evFailed
		}
		s.state = saveRetrying
		s.wait = min(max(2*s.wait, retryFirst), retryMax)
		s.seq++
		seq := s.seq
		return ev, tea.Tick(s.wait, func(time.Time) tea.Msg { return saveRetryMsg{seq} })
	}
	ev := evDone
	switch {
	case err != nil:
		ev = evGivenUp
		s.given++
	case d.run.job.write && s.state == saveRetrying:
		ev = evRecovered
	}
	if d.run.job.write {
		s.settle(d.run.job)
		if err == nil {
			s.wait = 0
		}
	}
	s.run, s.state, s.err = nil, saveIdle, nil
	return ev, nil
}

// settle counts a write as no longer on its way.
func (s *saver) settle(j job) {
	s.writes--
	if j.field.field == "" {
		return
	}
	if s.fields[j.field]--; s.fields[j.field] <= 0 {
		delete(s.fields, j.field)
	}
}

// retry runs the failed write again, once its backoff has passed.
func (s *saver) retry(m saveRetryMsg) tea.Cmd {
	if m.seq != s.seq || s.state != saveRetrying || s.run == nil {
		return nil
	}
	return s.start(s.run.job)
}

// failing reports whether a write failed and has not landed since (retrying or refused).
func (s *saver) failing() bool { return s.state == saveRetrying || s.state == saveRefused }

// refused reports whether the database refused a write for good.
func (s *saver) refused() bool { return s.state == saveRefused }

// failure is the error of the failing write; nil while none fails.
func (s *saver) failure() error { return s.err }

// saving reports whether writes are queued, running or failing.
func (s *saver) saving() bool { return s.writes > 0 }

// pending is how many writes have not landed.
func (s *saver) pending() int { return s.writes }

// unsaved reports whether a write of the field is failing or waiting behind one that
// fails: the rubric marks it "✗ unsaved".
func (s *saver) unsaved(k fieldKey) bool { return s.failing() && s.fields[k] > 0 }

// drained reports whether no job runs or waits.
func (s *saver) drained() bool { return s.state == saveIdle && len(s.queue) == 0 }

// header is what the right edge of the header says about the screen's work. typing says a
// text box holds text not yet handed to a write (the comment is written once typing
// pauses; until then it is not in the database).
func (s *saver) header(st Styles, typing bool) string {
	switch {
	case s.failing():
		return st.Error.Render("✗ NOT SAVED")
	case s.saving():
		return st.Saving.Render("… saving")
	case typing:
		return st.Saving.Render("… unsaved")
	}
	return st.Saved.Render("✓ saved")
}

// requestQuit records a request to quit. After quitAsk, a second request is for giveUp
// (asking reports it); the screen decides how to word each.
func (s *saver) requestQuit() quitAnswer {
	switch {
	case s.drained():
		s.quit = quitStopped
		return quitNow
	case s.failing():
		s.quit = quitAsking
		return quitAsk
	}
	s.quit = quitWaiting
	return quitLater
}

// asking reports whether the screen asked to confirm quitting while a write fails: the
// next quit gives the writes up.
func (s *saver) asking() bool { return s.quit == quitAsking }

// quitting reports whether a quit was asked for and the screen has not stopped yet.
func (s *saver) quitting() bool { return s.quit == quitWaiting || s.quit == quitAsking }

// readyToQuit reports whether a quit waited for the writes (asked to confirm or not) and
// they have all landed; it marks the screen stopped.
func (s *saver) readyToQuit() bool {
	if !s.quitting() || !s.drained() {
		return false
	}
	s.quit = quitStopped
	return true
}

// waitQuit quits once the writes land, without asking first (a server shutting down): a
// write that keeps failing still holds the quit back, and asks again if it fails anew.
func (s *saver) waitQuit() {
	if s.quit == quitAsking {
		s.quit = quitWaiting
	}
}

// cancelQuit takes a request to quit back (a key other than quit after the question).
func (s *saver) cancelQuit() { s.quit = quitNone }

// giveUp stops the screen with the writes not landed; it returns how many.
func (s *saver) giveUp() int {
	n := s.writes
	s.given += n
	s.quit = quitStopped
	return n
}

// stopped reports whether the screen returned tea.Quit.
func (s *saver) stopped() bool { return s.quit == quitStopped }

// abandoned is how many writes were given up.
func (s *saver) abandoned() int { return s.given }

// flush finishes the work of a program that stopped without quitting by itself (an SSH
// connection that dropped): the job under way and those queued behind it, in key order,
// each failed write retried until ctx ends. It returns how many writes were given up.
func (s *saver) flush(ctx context.Context) int {
	var given int
	finish := func(first tea.Msg, j job) {
		msg := first
		for wait := retryFirst; j.write && writeErr(msg) != nil; wait = min(2*wait, retryMax) {
			if errors.Is(writeErr(msg), session.ErrRefused) {
				given++ // refused for good: retrying until ctx ends would only delay the exit
				return
			}
			select {
			case <-ctx.Done():
				given++
				return
			case <-time.After(wait):
			}
			msg = j.do(ctx)
		}
	}
	if r := s.run; r != nil {
		s.run = nil
		finish(r.do(ctx), r.job)
	}
	for len(s.queue) > 0 {
		j := s.queue[0]
		s.queue = s.queue[1:]
		finish(j.do(ctx), j)
	}
	s.state, s.err, s.writes = saveIdle, nil, 0
	clear(s.fields)
	return given
}

// refusal is what the database said when it refused a write, without session.ErrRefused's
// own words, which the message around it already says.
func refusal(err error) string {
	if err == nil {
		return ""
	}
	return strings.TrimPrefix(err.Error(), session.ErrRefused.Error()+": ")
}
