package tui_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/m3bench/m3eval/internal/session"
	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/tui"
)

// downQueue is the store's real queue with a database that does not answer its writes of a
// value (a lock held elsewhere, a server gone): every SetValue fails and is retried.
type downQueue struct{ session.Queue }

func (downQueue) SetValue(context.Context, session.Edit, string, *string) (*session.Annotation, error) {
	return nil, errors.New("database is locked")
}

// TestQuitFromATextBoxWhileDown (#42): ctrl+c in the comment box or the flag reason while a
// write fails asks before giving the changes up, and the key the question names quits. The
// screen used to stay in the text box and say "q again quits", but there q is text: it
// went into the box and took the quit back, so the question could not be answered as put.
func TestQuitFromATextBoxWhileDown(t *testing.T) {
	for _, open := range []string{"c", "f"} {
		t.Run(open, func(t *testing.T) {
			fx := newFixture(t)
			q, err := fx.s.OpenQueue(context.Background(), "alice", store.Filter{})
			if err != nil {
				t.Fatal(err)
			}
			tm := teatest.NewTestModel(t, fx.modelOn(downQueue{q}, ""), teatest.WithInitialTermSize(100, 30))
			waitFor(t, tm, "item 1 of")
			tm.Type("2")
			waitFor(t, tm, "✗ NOT SAVED")
			tm.Type(open)
			tm.Type("abc")
			tm.Send(tea.KeyMsg{Type: tea.KeyCtrlC})
			waitFor(t, tm, "again quits and loses them")
			tm.Type("q")
			view := tm.FinalModel(t, teatest.WithFinalTimeout(30*time.Second)).(*tui.Model).Frame()
			if strings.Contains(view, "abcq") {
				t.Errorf("q went into the text box:\n%s", view)
			}
		})
	}
}

// TestAdjudicateQuitKeepsTypedComment (#42): ctrl+c in the adjudicator's comment box writes
// the comment typed there before quitting, as the annotate screen's does, instead of
// dropping it without a word (the command used to exit 0 with the comment gone).
func TestAdjudicateQuitKeepsTypedComment(t *testing.T) {
	fx := newFixture(t)
	ctx := context.Background()
	o := fx.disagreement(t)
	m := tui.NewAdjudicate(o)
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(120, 40))
	waitFor(t, tm, "A ann")
	tm.Type("c")
	waitFor(t, tm, "Your comment")
	tm.Type("why not")
	waitFor(t, tm, "why not")
	tm.Send(tea.KeyMsg{Type: tea.KeyCtrlC})
	tm.FinalModel(t, teatest.WithFinalTimeout(30*time.Second))
	finals, err := fx.s.Finals(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := finals["demo_zh_umbrella_0_turn_1"][fx.r.CommentField].Value; got != "why not" {
		t.Errorf("final comment %q after ctrl+c, want the typed %q (finals %v)", got, "why not", finals)
	}
}

// slowStore is a database whose decisions land only once open is closed.
type slowStore struct {
	session.AdjudicationStore
	open chan struct{}
}

func (s slowStore) SetFinal(ctx context.Context, edits ...session.FinalEdit) error {
	<-s.open
	return s.AdjudicationStore.SetFinal(ctx, edits...)
}

// TestAdjudicateQuitSaysItWaits (#42): q while a decision is on its way says the screen
// saves before quitting, as the annotate screen does, and quits once it lands. The screen
// used to say nothing, so q looked ignored.
func TestAdjudicateQuitSaysItWaits(t *testing.T) {
	fx := newFixture(t)
	ctx := context.Background()
	o := fx.disagreement(t)
	st := slowStore{fx.s, make(chan struct{})}
	o.Store = st
	m := tui.NewAdjudicate(o)
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(120, 40))
	waitFor(t, tm, "A ann")
	tm.Type("A")
	waitFor(t, tm, "… saving")
	tm.Type("q")
	waitFor(t, tm, "saving before quitting")
	close(st.open)
	tm.FinalModel(t, teatest.WithFinalTimeout(30*time.Second))
	if finals, err := fx.s.Finals(ctx); err != nil || len(finals) != 1 {
		t.Errorf("finals %v (%v), want the one decision", finals, err)
	}
}
