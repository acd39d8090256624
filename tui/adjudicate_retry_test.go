package tui_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/muesli/termenv"

	"github.com/m3bench/m3eval/internal/campaign"
	"github.com/m3bench/m3eval/internal/session"
	"github.com/m3bench/m3eval/internal/store/storetest"
	"github.com/m3bench/m3eval/internal/workflow"
	"github.com/m3bench/m3eval/tui"
)

// lostReply is the store with the reply of its next writes lost: each write lands, then
// fails as a connection cut after COMMIT fails (the PostgreSQL proxy test in
// internal/store cuts real COMMIT replies; this drives the screen's side of it).
type lostReply struct {
	session.AdjudicationStore
	sets, undos atomic.Int32 // how many more replies to lose
}

var errReplyLost = errors.New("unexpected EOF (the COMMIT's reply was lost)")

func (l *lostReply) SetFinal(ctx context.Context, edits ...session.FinalEdit) error {
	err := l.AdjudicationStore.SetFinal(ctx, edits...)
	if err == nil && l.sets.Add(-1) >= 0 {
		return errReplyLost
	}
	return err
}

func (l *lostReply) UndoFinal(ctx context.Context, turnID int64, adjudicator, rubricVersion, key string) (string, bool, error) {
	f, ok, err := l.AdjudicationStore.UndoFinal(ctx, turnID, adjudicator, rubricVersion, key)
	if err == nil && l.undos.Add(-1) >= 0 {
		return "", false, errReplyLost
	}
	return f, ok, err
}

// TestAdjudicateRetriesLostReplies (#38 item 2, #40): a decision and an undo whose replies
// are lost are retried by the screen (the header says NOT SAVED meanwhile) and land once:
// two decisions and one undo leave the first decision in place and two changes, one undone.
func TestAdjudicateRetriesLostReplies(t *testing.T) {
	fx := newFixture(t)
	ctx := context.Background()
	fx.label(t, "ann", "demo_zh_umbrella_0_turn_1", "2")
	fx.label(t, "ben", "demo_zh_umbrella_0_turn_1", "5")
	cases, _, err := workflow.Cases(ctx, fx.s, "", fx.r, campaign.DefaultDisagreeOptions())
	if err != nil || len(cases) != 1 {
		t.Fatalf("cases %v %v", cases, err)
	}
	st := &lostReply{AdjudicationStore: fx.s}
	r := lipgloss.NewRenderer(os.Stdout)
	r.SetColorProfile(termenv.Ascii)
	m := tui.NewAdjudicate(tui.AdjudicateOptions{Context: ctx, Store: st, Rubric: fx.r, Adjudicator: "judy",
		Cases: cases, Disagree: campaign.DefaultDisagreeOptions(), Renderer: r})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(100, 30))
	waitFor(t, tm, "A ann")
	st.sets.Store(2)
	tm.Type("A") // correctness from ann: its reply lost twice
	waitFor(t, tm, "Correctness = 2 saved")
	tm.Type("B") // reasoning from ben
	waitFor(t, tm, "Reasoning Completeness = 5 saved")
	st.undos.Store(1)
	tm.Type("u") // undoes ben's reasoning only, though retried
	waitFor(t, tm, "undid Reasoning Completeness")
	tm.Type("q")
	tm.FinalModel(t, teatest.WithFinalTimeout(60*time.Second))
	finals, err := fx.s.Finals(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := finals["demo_zh_umbrella_0_turn_1"]
	if got["correctness"].Value != "2" || got["correctness"].Source != "ann" {
		t.Errorf("correctness %+v, want ann's 2", got["correctness"])
	}
	if _, ok := got["reasoning_completeness"]; ok {
		t.Errorf("reasoning completeness %+v, want undone", got["reasoning_completeness"])
	}
	var n, undone int
	if err := storetest.RawDB(t, fx.path, false).QueryRow(`SELECT count(*), coalesce(sum(undone), 0) FROM final_changes`).Scan(&n, &undone); err != nil {
		t.Fatal(err)
	}
	if n != 2 || undone != 1 {
		t.Errorf("%d adjudication changes, %d undone; want 2 and 1 (each write once)", n, undone)
	}
}

// TestAdjudicateSuggestionSoFar (#40): while fields of the final label are undecided, the
// final's weighted suggestion says "so far" (it read "final 5.0" with one field decided).
func TestAdjudicateSuggestionSoFar(t *testing.T) {
	fx := newFixture(t)
	o := fx.disagreement(t)
	m := tui.NewAdjudicate(o)
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(120, 40))
	waitFor(t, tm, "A ann")
	tm.Type("B")
	waitFor(t, tm, "Correctness = 5 saved")
	tm.Type("q")
	view := tm.FinalModel(t, teatest.WithFinalTimeout(60*time.Second)).(*tui.Model).Frame()
	if !regexp.MustCompile(`final \d\.\d so far`).MatchString(view) {
		t.Fatalf("the final's suggestion does not say it is partial:\n%s", view)
	}
}

// downStore is a database that does not answer writes.
type downStore struct{ session.AdjudicationStore }

func (downStore) SetFinal(context.Context, ...session.FinalEdit) error {
	return errors.New("dial tcp 127.0.0.1:5432: connection refused")
}

// TestAdjudicateQuitWhileDown (#40): while a decision cannot be saved the header says
// "✗ NOT SAVED" and the screen keeps retrying; q waits for it and says so, q again quits
// and reports the decision given up (the command then exits 1).
func TestAdjudicateQuitWhileDown(t *testing.T) {
	fx := newFixture(t)
	ctx := context.Background()
	o := fx.disagreement(t)
	unsaved := -1
	o.Store = downStore{fx.s}
	o.Unsaved = func(n int) { unsaved = n }
	m := tui.NewAdjudicate(o)
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(120, 40))
	waitFor(t, tm, "A ann")
	tm.Type("A")
	waitFor(t, tm, "✗ NOT SAVED")
	tm.Type("q")
	waitFor(t, tm, "q again quits")
	tm.Type("q")
	tm.FinalModel(t, teatest.WithFinalTimeout(60*time.Second))
	if unsaved != 1 {
		t.Errorf("quit reported %d unsaved decisions, want 1", unsaved)
	}
	if finals, err := fx.s.Finals(ctx); err != nil || len(finals) != 0 {
		t.Errorf("finals %v (%v), want none", finals, err)
	}
}

// refusingStore is a database that refuses every decision for good (an admin revoked the
// adjudicator's privileges), counting the attempts.
type refusingStore struct {
	session.AdjudicationStore
	sets atomic.Int32
}

func (r *refusingStore) SetFinal(context.Context, ...session.FinalEdit) error {
	r.sets.Add(1)
	return fmt.Errorf("%w: permission denied for table final_labels (SQLSTATE 42501)", session.ErrRefused)
}

// TestAdjudicateRefusedIsKept (#42): a decision the database refuses for good is kept and
// said to be: it is not retried, the decision queued behind it does not run, → stays on the
// turn, q asks, and q again quits reporting both decisions given up. (The screen used to
// drop a refused decision, say "not saved" and carry on.)
func TestAdjudicateRefusedIsKept(t *testing.T) {
	fx := newFixture(t)
	ctx := context.Background()
	for _, s := range []string{"demo_zh_umbrella_0_turn_1", "demo_zh_umbrella_0_turn_2"} {
		fx.label(t, "ann", s, "2")
		fx.label(t, "ben", s, "5")
	}
	cases, _, err := workflow.Cases(ctx, fx.s, "", fx.r, campaign.DefaultDisagreeOptions())
	if err != nil || len(cases) != 2 {
		t.Fatalf("cases %v %v", cases, err)
	}
	r := lipgloss.NewRenderer(os.Stdout)
	r.SetColorProfile(termenv.Ascii)
	st := &refusingStore{AdjudicationStore: fx.s}
	unsaved := -1
	m := tui.NewAdjudicate(tui.AdjudicateOptions{Context: ctx, Store: st, Rubric: fx.r, Adjudicator: "judy",
		Cases: cases, Disagree: campaign.DefaultDisagreeOptions(), Renderer: r, Unsaved: func(n int) { unsaved = n }})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(120, 40))
	waitFor(t, tm, "turn 1 of 2")
	tm.Type("A")
	waitFor(t, tm, "NOT SAVED for good: the database refuses writes")
	tm.Type("B") // queued behind the refused decision: it must not run
	tm.Send(tea.KeyMsg{Type: tea.KeyRight})
	waitFor(t, tm, "this turn stays open")
	tm.Type("q")
	waitFor(t, tm, "refused by the database: q again quits and loses it")
	tm.Type("q")
	view := tm.FinalModel(t, teatest.WithFinalTimeout(60*time.Second)).(*tui.Model).Frame()
	if !strings.Contains(view, "turn 1 of 2") || !strings.Contains(view, "✗ NOT SAVED") {
		t.Errorf("the last frame left the turn or dropped the state:\n%s", view)
	}
	if n := st.sets.Load(); n != 1 {
		t.Errorf("the store was asked %d times, want once (no retry, nothing run behind it)", n)
	}
	if unsaved != 2 {
		t.Errorf("quit reported %d decisions given up, want 2", unsaved)
	}
	if finals, err := fx.s.Finals(ctx); err != nil || len(finals) != 0 {
		t.Errorf("finals %v (%v), want none", finals, err)
	}
}
