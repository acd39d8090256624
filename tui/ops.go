package tui

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"sync/atomic"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/m3bench/m3eval/internal/rubric"
	"github.com/m3bench/m3eval/internal/session"
)

// Database work runs through the screen's saver (saver.go): one job at a time and in the
// order the keys were pressed, so a write and a later load of the same item can never
// overtake each other, and the screen says "saved" only once every write has returned from
// the database. This file holds the annotate screen's jobs and what it says about them.

// op is one read of the annotate screen; its result message is handled when it returns.
type op func(ctx context.Context) tea.Msg

// saveEvent reacts to what the saver says about a finished job: a failure or a refusal is
// said on the message line (once per failure, not at every retry: a retry must not replace
// what a later key said, "not quitting" or "this item stays open"; the header keeps
// "✗ NOT SAVED"). The rubric's "✗ unsaved" marks follow from the saver by themselves.
func (m *annotateModel) saveEvent(ev saveEvent) {
	switch ev {
	case evRefused:
		if m.save.asking() {
			m.askQuit()
			return
		}
		m.say(m.st.Error, "NOT SAVED for good: database refuses writes; quitting loses them; ask admin (%s)",
			refusal(m.save.failure()))
	case evFailed, evFailedAgain:
		switch {
		case m.save.asking():
			m.askQuit()
		case ev == evFailed:
			m.say(m.st.Error, "NOT SAVED YET, retrying: your changes stay and land when this clears: %v", m.save.failure())
		}
	case evRecovered:
		m.say(m.st.Message, "saved: the database is back and every change landed")
	}
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

func (m savedMsg) writeErr() error { return m.err }

// undoneMsg reports a finished undo.
type undoneMsg struct {
	turnID int64
	ann    *session.Annotation
	what   []session.Undone
	ok     bool
	err    error
}

func (m undoneMsg) writeErr() error { return m.err }

// enqueue queues reads behind the work already waiting.
func (m *annotateModel) enqueue(o ...op) tea.Cmd {
	jobs := make([]job, len(o))
	for i := range o {
		jobs[i] = job{do: o[i]}
	}
	return m.save.add(jobs...)
}

// flush finishes the database work of a program that stopped without quitting by itself
// (an SSH connection that dropped): the write under way, the writes queued behind it and
// the comment being typed land in key order, each retried until ctx ends. It returns how
// many were given up.
func (m *annotateModel) flush(ctx context.Context) int {
	if m.save.stopped() {
		return 0 // it quit by itself: everything landed, or the annotator gave it up
	}
	if m.mode == modeComment {
		m.saveComment() // queued behind the rest; its command is never run, flush runs it
	}
	return m.save.flush(ctx)
}

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
	j := job{write: true, do: func(ctx context.Context) tea.Msg {
		a, err := fn(ctx, e)
		return savedMsg{turnID: e.TurnID, field: field, ann: a, note: note, err: err}
	}}
	if field != "" {
		j.field = fieldKey{e.TurnID, field}
	}
	return m.save.add(j)
}

func (m *annotateModel) setValue(field string, value *string) tea.Cmd {
	q := m.q
	return m.writeField(field, "", func(ctx context.Context, e session.Edit) (*session.Annotation, error) {
		return q.SetValue(ctx, e, field, value)
	})
}

func (m *annotateModel) undo() tea.Cmd {
	q, e := m.q, m.edit()
	return m.save.add(job{write: true, do: func(ctx context.Context) tea.Msg {
		a, what, ok, err := q.Undo(ctx, e)
		return undoneMsg{turnID: e.TurnID, ann: a, what: what, ok: ok, err: err}
	}})
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
	return m.save.add(job{write: true, do: func(ctx context.Context) tea.Msg {
		return savedMsg{turnID: e.TurnID, err: q.AddActive(ctx, e), ann: nil}
	}})
}
