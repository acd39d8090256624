package tui

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/m3bench/m3eval/internal/rubric"
	"github.com/m3bench/m3eval/internal/session"
)

// Database work runs in commands, one at a time and in the order the keys were pressed: a
// write and a later load of the same item can never overtake each other, and the screen
// says "saved" only once every write has returned from SQLite.

// op is one piece of database work; its result message is handled when it returns.
type op func(ctx context.Context) tea.Msg

// opDoneMsg carries an op's result back to Update, with the op, to run it again if it failed.
type opDoneMsg struct {
	msg tea.Msg
	op  op
}

// retryMsg runs a failed write again once its backoff has passed.
type retryMsg struct{ op op }

// Backoff of a failed write: the first retry after retryFirst, each next one twice as late,
// never later than retryMax, so a database that comes back is used within two seconds.
const (
	retryFirst = 100 * time.Millisecond
	retryMax   = 2 * time.Second
)

// writeErr is the error of a write result, nil for other results and successes.
func writeErr(msg tea.Msg) error {
	switch msg := msg.(type) {
	case savedMsg:
		return msg.err
	case undoneMsg:
		return msg.err
	}
	return nil
}

// failed handles a write that did not reach the database: it stays first in line, the
// screen says it is not saved, and it runs again after a backoff. Nothing behind it (later
// writes, the load of another item) may overtake it.
func (m *annotateModel) failed(o op, err error) tea.Cmd {
	if errors.Is(err, session.ErrRefused) {
		// Retrying cannot clear it (a revoked privilege, a read-only file): the write and
		// those behind it stay unsaved, and the screen must not say they will land.
		m.failing, m.failErr, m.refused = true, err, true
		m.rub.dirty = true
		if m.quit {
			m.askQuit()
		} else {
			m.say(m.st.Error, "NOT SAVED for good: database refuses writes; quitting loses them; ask admin (%s)",
				refusal(err))
		}
		return nil
	}
	if m.retryWait == 0 {
		m.retryWait = retryFirst
	} else {
		m.retryWait = min(2*m.retryWait, retryMax)
	}
	first := !m.failing
	m.failing, m.failErr = true, err
	m.rub.dirty = true
	switch {
	case m.quit:
		m.askQuit()
	case first:
		// Said once per failure, not at every retry: a retry must not replace what a later
		// key said ("not quitting", "this item stays open"); the header keeps "✗ NOT SAVED".
		m.say(m.st.Error, "NOT SAVED YET, retrying: your changes stay and land when this clears: %v", err)
	}
	wait := m.retryWait
	return tea.Tick(wait, func(time.Time) tea.Msg { return retryMsg{o} })
}

// refusal is what the database said when it refused a write, without session.ErrRefused's
// own words, which the message around it already says.
func refusal(err error) string {
	if err == nil {
		return ""
	}
	return strings.TrimPrefix(err.Error(), session.ErrRefused.Error()+": ")
}

// recovered clears the failure once a write got through.
func (m *annotateModel) recovered() {
	if m.failing {
		m.failing, m.failErr = false, nil
		m.rub.dirty = true
		m.say(m.st.Message, "saved: the database is back and every change landed")
	}
	m.retryWait = 0
}

// queueInfoMsg is the queue's size and the annotator's progress and pace.
type queueInfoMsg struct {
	total, done int
	median      time.Duration
	hasMedian   bool
	err         error
}

// itemMsg is a newly loaded item; nil with allDone when nothing is left unfinished.
type itemMsg struct {
	item    *session.Item
	allDone bool
	note    string
	err     error
}

// positionMsg is the item's place in the queue, counted off the key-press path.
type positionMsg struct {
	turnID int64
	pos    int
	err    error
}

// savedMsg reports a finished write; field is the rubric field it set, if any.
type savedMsg struct {
	turnID int64
	field  string
	ann    *session.Annotation
	note   string
	err    error
}

// undoneMsg reports a finished undo.
type undoneMsg struct {
	turnID int64
	ann    *session.Annotation
	what   []session.Undone
	ok     bool
	err    error
}

// enqueue adds work and starts it if nothing is running.
func (m *annotateModel) enqueue(o ...op) tea.Cmd {
	m.ops = append(m.ops, o...)
	return m.pump()
}

func (m *annotateModel) pump() tea.Cmd {
	if m.busy || len(m.ops) == 0 {
		return nil
	}
	next := m.ops[0]
	m.ops = m.ops[1:]
	m.busy = true
	return m.run(next)
}

func (m *annotateModel) run(o op) tea.Cmd {
	r := &opRun{o: o}
	m.inflight = r
	ctx := m.ctx
	return func() tea.Msg { return opDoneMsg{r.do(ctx), o} }
}

// opRun is one run of an op, done once: by its command, or by Flush when the program
// stopped before the command ran or before its result was handled.
type opRun struct {
	o    op
	once sync.Once
	msg  tea.Msg
}

func (r *opRun) do(ctx context.Context) tea.Msg {
	r.once.Do(func() { r.msg = r.o(ctx) })
	return r.msg
}

// flush finishes the database work of a program that stopped without quitting by itself
// (an SSH connection that dropped): the write under way, the writes queued behind it and
// the comment being typed land in key order, each retried until ctx ends. It returns how
// many were given up.
func (m *annotateModel) flush(ctx context.Context) int {
	if m.stopped {
		return 0 // it quit by itself: everything landed, or the annotator gave it up
	}
	if m.mode == modeComment {
		m.saveComment() // queued behind the rest; its command is never run, flush runs it
	}
	var given int
	runOp := func(first tea.Msg, o op) {
		msg := first
		for wait := retryFirst; writeErr(msg) != nil; wait = min(2*wait, retryMax) {
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
			msg = o(ctx)
		}
	}
	if r := m.inflight; r != nil {
		m.inflight = nil
		runOp(r.do(ctx), r.o)
	}
	for len(m.ops) > 0 {
		o := m.ops[0]
		m.ops = m.ops[1:]
		runOp(o(ctx), o)
	}
	m.busy, m.writes = false, 0
	return given
}

// pendingWrites counts queued and running work that changes the database.
func (m *annotateModel) saving() bool { return m.writes > 0 }

func (m *annotateModel) loadInfo() op {
	q := m.q
	return func(ctx context.Context) tea.Msg {
		var info queueInfoMsg
		if info.total, info.err = q.Len(ctx); info.err != nil {
			return info
		}
		if info.done, _, info.err = q.Progress(ctx); info.err != nil {
			return info
		}
		info.median, info.hasMedian, info.err = q.MedianActive(ctx)
		return info
	}
}

// loadFirst opens the start item, or the first unfinished one (the resume point).
func (m *annotateModel) loadFirst(startSample string) op {
	q := m.q
	return func(ctx context.Context) tea.Msg {
		if startSample != "" {
			ref, ok, err := q.Find(ctx, startSample)
			if err != nil {
				return itemMsg{err: err}
			}
			if !ok {
				return itemMsg{err: errNotInQueue(startSample)}
			}
			return load(ctx, q, ref, "")
		}
		ref, ok, err := q.First(ctx, true)
		if err != nil {
			return itemMsg{err: err}
		}
		if !ok {
			ref, ok, err = q.First(ctx, false)
			if err != nil || !ok {
				return itemMsg{err: err, allDone: true}
			}
			msg := load(ctx, q, ref, "every item is done: ←/→ to review, q to quit")
			msg.allDone = true
			return msg
		}
		return load(ctx, q, ref, "")
	}
}

func load(ctx context.Context, q session.Queue, ref session.Ref, note string) itemMsg {
	it, err := q.Load(ctx, ref)
	return itemMsg{item: it, err: err, note: note}
}

// loadNext opens the item after ref; with unfinished, the next one not yet submitted,
// wrapping around to the start of the queue.
func (m *annotateModel) loadNext(ref session.Ref, forward, unfinished bool) op {
	q := m.q
	return func(ctx context.Context) tea.Msg {
		var (
			next session.Ref
			ok   bool
			err  error
		)
		if forward {
			next, ok, err = q.Next(ctx, ref, unfinished)
			if err == nil && !ok && unfinished {
				next, ok, err = q.First(ctx, true)
			}
		} else {
			next, ok, err = q.Prev(ctx, ref)
		}
		switch {
		case err != nil:
			return itemMsg{err: err}
		case !ok && unfinished:
			return itemMsg{allDone: true, note: "every item is done: ←/→ to review, q to quit"}
		case !ok && forward:
			return itemMsg{note: "this is the last item"}
		case !ok:
			return itemMsg{note: "this is the first item"}
		}
		return load(ctx, q, next, "")
	}
}

func (m *annotateModel) loadPosition(ref session.Ref) op {
	q := m.q
	return func(ctx context.Context) tea.Msg {
		pos, err := q.Position(ctx, ref)
		return positionMsg{turnID: ref.TurnID, pos: pos, err: err}
	}
}

// edit describes a write on the current item, carrying the active time since the last one.
func (m *annotateModel) edit() session.Edit {
	r, item := m.r, m.item.Turn.Item()
	return session.Edit{
		TurnID:        m.item.Ref.TurnID,
		RubricVersion: r.Version,
		Active:        m.takeActive(),
		Acceptable:    func(v rubric.Values) bool { return r.Submittable(v, item) },
		Key:           newOpKey(),
	}
}

// opKeyPrefix and opKeySeq name each write this process makes (session.Edit.Key), so that
// a write retried after a lost COMMIT reply is not applied twice. The prefix is random, for
// the keys of other processes (serve hosts, an annotate run before this one).
var (
	opKeyPrefix = func() string {
		var b [8]byte
		rand.Read(b[:])
		return hex.EncodeToString(b[:])
	}()
	opKeySeq atomic.Int64
)

func newOpKey() string {
	return opKeyPrefix + "-" + strconv.FormatInt(opKeySeq.Add(1), 10)
}

func (m *annotateModel) write(note string, fn func(ctx context.Context, e session.Edit) (*session.Annotation, error)) tea.Cmd {
	return m.writeField("", note, fn)
}

// writeField queues a write; a field's value counts as unsaved until the write returns.
func (m *annotateModel) writeField(field, note string, fn func(ctx context.Context, e session.Edit) (*session.Annotation, error)) tea.Cmd {
	e := m.edit()
	m.writes++
	if field != "" {
		m.unsaved[fieldKey{e.TurnID, field}]++
	}
	return m.enqueue(func(ctx context.Context) tea.Msg {
		a, err := fn(ctx, e)
		return savedMsg{turnID: e.TurnID, field: field, ann: a, note: note, err: err}
	})
}

// fieldKey names one field of one item.
type fieldKey struct {
	turnID int64
	field  string
}

func (m *annotateModel) setValue(field string, value *string) tea.Cmd {
	q := m.q
	return m.writeField(field, "", func(ctx context.Context, e session.Edit) (*session.Annotation, error) {
		return q.SetValue(ctx, e, field, value)
	})
}

func (m *annotateModel) undo() tea.Cmd {
	q, e := m.q, m.edit()
	m.writes++
	return m.enqueue(func(ctx context.Context) tea.Msg {
		a, what, ok, err := q.Undo(ctx, e)
		return undoneMsg{turnID: e.TurnID, ann: a, what: what, ok: ok, err: err}
	})
}

// flushActive stores the active time of the item being left, if it has an annotation.
func (m *annotateModel) flushActive() tea.Cmd {
	if m.item == nil {
		return nil
	}
	e := session.Edit{TurnID: m.item.Ref.TurnID, Active: m.takeActive(), Key: newOpKey()}
	if e.Active <= 0 || m.ann == nil {
		return nil
	}
	q := m.q
	m.writes++
	return m.enqueue(func(ctx context.Context) tea.Msg {
		return savedMsg{turnID: e.TurnID, err: q.AddActive(ctx, e), ann: nil}
	})
}
