package tui_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/muesli/termenv"

	"github.com/m3bench/m3eval/annotations"
	"github.com/m3bench/m3eval/internal/golden"
	"github.com/m3bench/m3eval/internal/rubric"
	"github.com/m3bench/m3eval/internal/session"
	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/store/storetest"
	"github.com/m3bench/m3eval/tui"
)

func TestMain(m *testing.M) {
	lipgloss.SetColorProfile(termenv.Ascii)
	os.Exit(m.Run())
}

// fixture is a database with the demo episodes imported, and what the annotator needs.
type fixture struct {
	s       *store.Store
	r       *rubric.Rubric
	actions rubric.Actions
	path    string
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	s := storetest.Demo(t, filepath.Join(t.TempDir(), "tui.db"))
	actions, err := rubric.ParseActions(annotations.Actions)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{s: s, r: storetest.Rubric(t), actions: actions, path: s.Path()}
}

func (fx *fixture) model(t testing.TB, annotator, start string, filter store.Filter) *tui.Model {
	t.Helper()
	q, err := fx.s.OpenQueue(context.Background(), annotator, filter)
	if err != nil {
		t.Fatal(err)
	}
	return fx.modelOn(q, start)
}

// modelOn is the annotate screen on q, which may wrap the store's queue.
func (fx *fixture) modelOn(q session.Queue, start string) *tui.Model {
	r := lipgloss.NewRenderer(os.Stdout)
	r.SetColorProfile(termenv.Ascii)
	return tui.New(tui.Options{Queue: q, Rubric: fx.r, Actions: fx.actions, Renderer: r, StartSample: start,
		Now: storetest.Clock(), OpenImages: func([]string) tea.Cmd { return nil }})
}

func waitFor(t *testing.T, tm *teatest.TestModel, text string) {
	t.Helper()
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte(text)) },
		teatest.WithDuration(60*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
}

// waitForAll waits until the output has shown every text (not necessarily in one frame).
func waitForAll(t *testing.T, tm *teatest.TestModel, texts ...string) {
	t.Helper()
	seen := make([]bool, len(texts))
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		all := true
		for i, s := range texts {
			seen[i] = seen[i] || bytes.Contains(b, []byte(s))
			all = all && seen[i]
		}
		return all
	}, teatest.WithDuration(60*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
}

// finalView quits with "q", which waits for every pending write, and returns the last screen.
func finalView(t *testing.T, tm *teatest.TestModel) string {
	t.Helper()
	tm.Type("q")
	return tm.FinalModel(t, teatest.WithFinalTimeout(60*time.Second)).(*tui.Model).Frame()
}

// TestGoldenScreens renders the annotate screen at the three sizes of the brief, on an English
// multi-image turn and a Chinese misleading turn, after a few answers.
func TestGoldenScreens(t *testing.T) {
	cases := []struct {
		name, sample string
		w, h         int
		keys         string
	}{
		{"en_80x24", "demo_en_street_2_turn_9", 80, 24, "21"},
		{"en_120x40", "demo_en_street_2_turn_9", 120, 40, "21n"},
		{"zh_80x24", "demo_zh_umbrella_0_turn_7", 80, 24, "5"},
		{"zh_120x40", "demo_zh_umbrella_0_turn_7", 120, 40, "54y"},
		{"en_100x30", "demo_en_street_2_turn_9", 100, 30, "21"},
		{"zh_100x30", "demo_zh_umbrella_0_turn_7", 100, 30, "5"},
		// Misled but Overall 5: the comment warning adds a line to the rubric pane.
		{"warning_80x24", "demo_en_park_3_turn_4", 80, 24, "11nn5"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fx := newFixture(t)
			tm := teatest.NewTestModel(t, fx.model(t, "alice", tc.sample, nil), teatest.WithInitialTermSize(tc.w, tc.h))
			// The image preview's caption ("640×480", wide layout; without colour the
			// stacked layout draws no preview) comes once the decode, off the UI
			// goroutine, is back.
			if tc.w >= 124 { // side by side from 124 columns with the default rubric
				waitForAll(t, tm, "of 35", "×")
			} else {
				waitFor(t, tm, "of 35")
			}
			for _, k := range tc.keys {
				tm.Type(string(k))
			}
			view := finalView(t, tm)
			for _, line := range strings.Split(view, "\n") {
				if w := lipgloss.Width(line); w > tc.w {
					t.Errorf("line wider than the terminal (%d > %d): %q", w, tc.w, line)
				}
			}
			if h := lipgloss.Height(view); h > tc.h {
				t.Errorf("view taller than the terminal: %d > %d", h, tc.h)
			}
			golden.Assert(t, golden.Path(t), []byte(view))
		})
	}
}

// TestRubricRowsFitFrom100Columns: from 100 columns on, whatever the layout, the rubric's
// rows are never cut: the values with their short meanings, the reason a field is fixed,
// the comment's hint and the weighted suggestion (issue 25 item 6: at 110–129 columns they
// were, "suggest…", "NA (not a mislea…", "(none) — c to wr…").
func TestRubricRowsFitFrom100Columns(t *testing.T) {
	fx := newFixture(t)
	for _, w := range []int{100, 105, 110, 115, 120, 123, 124, 129, 140, 200} {
		tm := teatest.NewTestModel(t, fx.model(t, fmt.Sprintf("w%d", w), "demo_zh_umbrella_0_turn_3", nil), teatest.WithInitialTermSize(w, 40))
		waitFor(t, tm, "of 35")
		tm.Type("54")
		view := finalView(t, tm)
		for _, want := range []string{"NA (not a misleading turn)", "(none) — c to write", "suggested 4.6 so far", "5 Fully right", "4 Mostly complete"} {
			if !strings.Contains(view, want) {
				t.Errorf("%d columns: %q is cut or missing:\n%s", w, want, view)
			}
		}
		for _, line := range strings.Split(view, "\n") {
			if strings.Contains(line, "Overall Quality") && strings.Contains(line, "…") {
				t.Errorf("%d columns: the suggestion row is cut: %q", w, line)
			}
		}
	}
}

// TestKeysWriteTheDatabase drives a whole item by keys and checks what SQLite holds.
func TestKeysWriteTheDatabase(t *testing.T) {
	fx := newFixture(t)
	ctx := context.Background()
	tm := teatest.NewTestModel(t, fx.model(t, "alice", "demo_en_park_3_turn_4", nil), teatest.WithInitialTermSize(120, 40))
	waitFor(t, tm, "of 35")
	// Correctness 2, Reasoning 3, Resists: y, Context: n, Overall 2, then a comment, submit.
	tm.Type("23yn2")
	tm.Type("c")
	tm.Type("misled q") // "q" inside the comment box must not quit
	tm.Send(tea.KeyMsg{Type: tea.KeyEsc})
	tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
	waitFor(t, tm, "demo_en_park_3 · turn 5")
	// Enter on the next, empty item names what is missing.
	tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
	waitFor(t, tm, "missing: Correctness, Reasoning Completeness")
	// Undo on a fresh item has nothing to undo; flag it with a reason; skip it.
	tm.Type("f")
	tm.Type("blurry")
	tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
	waitFor(t, tm, "flagged for review")
	tm.Type("s")
	waitFor(t, tm, "demo_en_park_3 · turn 6")
	finalView(t, tm)

	q, _ := fx.s.OpenQueue(ctx, "alice", nil)
	ref, _, _ := q.Find(ctx, "demo_en_park_3_turn_4")
	it, err := q.Load(ctx, ref)
	if err != nil || it.Annotation == nil {
		t.Fatalf("turn 4 not saved: %v", err)
	}
	want := rubric.Values{"correctness": "2", "reasoning_completeness": "3", "resists_misleading": "Yes",
		"context_consistency": "No", "overall_quality": "2", "comments": "misled q"}
	for k, v := range want {
		if it.Annotation.Values[k] != v {
			t.Errorf("%s = %q, want %q (all: %v)", k, it.Annotation.Values[k], v, it.Annotation.Values)
		}
	}
	if it.Annotation.Status != "done" || it.Annotation.Active <= 0 {
		t.Errorf("turn 4 status %s active %v", it.Annotation.Status, it.Annotation.Active)
	}
	ref5, _, _ := q.Find(ctx, "demo_en_park_3_turn_5")
	it5, _ := q.Load(ctx, ref5)
	if it5.Annotation == nil || !it5.Annotation.Flagged || it5.Annotation.FlagReason != "blurry" || it5.Ref.SkipSeq == 0 {
		t.Errorf("turn 5 should be flagged and skipped: %+v %+v", it5.Annotation, it5.Ref)
	}
}

// TestCommentRuleBlocksSubmit: Overall 5 while misled needs a comment before submit.
func TestCommentRuleBlocksSubmit(t *testing.T) {
	fx := newFixture(t)
	tm := teatest.NewTestModel(t, fx.model(t, "bob", "demo_en_park_3_turn_4", nil), teatest.WithInitialTermSize(120, 40))
	waitFor(t, tm, "of 35")
	tm.Type("11nn5")
	tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
	waitFor(t, tm, "press c")
	tm.Type("u") // undo Overall
	waitFor(t, tm, "undid Overall Quality")
	finalView(t, tm)
	ctx := context.Background()
	q, _ := fx.s.OpenQueue(ctx, "bob", nil)
	ref, _, _ := q.Find(ctx, "demo_en_park_3_turn_4")
	it, _ := q.Load(ctx, ref)
	if it.Annotation.Status != "draft" {
		t.Fatalf("an item needing a comment was submitted")
	}
	if _, ok := it.Annotation.Values["overall_quality"]; ok {
		t.Fatalf("undo left overall_quality = %s", it.Annotation.Values["overall_quality"])
	}
}

// TestResumeAtFirstUnfinished: a new session opens the first unfinished item with its draft.
func TestResumeAtFirstUnfinished(t *testing.T) {
	fx := newFixture(t)
	tm := teatest.NewTestModel(t, fx.model(t, "carol", "", store.Filter{"action_type": {"mislead"}}), teatest.WithInitialTermSize(120, 40))
	waitFor(t, tm, "item 1 of 2")
	tm.Type("4")
	finalView(t, tm)

	tm = teatest.NewTestModel(t, fx.model(t, "carol", "", store.Filter{"action_type": {"mislead"}}), teatest.WithInitialTermSize(120, 40))
	waitFor(t, tm, "item 1 of 2")
	view := finalView(t, tm)
	if !strings.Contains(view, "demo_zh_umbrella_0 · turn 7") || !strings.Contains(view, "Correctness            正确性        4") {
		t.Fatalf("did not resume on the draft:\n%s", view)
	}
}

// TestBurstIsSplitPasteIsNot: keys read together arrive as one KeyRunes message; each acts
// in order, and "c" in the middle sends the rest into the comment. A bracketed paste outside
// the comment box does nothing.
func TestBurstIsSplitPasteIsNot(t *testing.T) {
	fx := newFixture(t)
	tm := teatest.NewTestModel(t, fx.model(t, "burst", "demo_en_park_3_turn_4", nil), teatest.WithInitialTermSize(120, 40))
	waitFor(t, tm, "of 35")
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("45"), Paste: true})
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("23yc1 q")})
	tm.Send(tea.KeyMsg{Type: tea.KeyEsc})
	finalView(t, tm)
	ctx := context.Background()
	q, _ := fx.s.OpenQueue(ctx, "burst", nil)
	ref, _, _ := q.Find(ctx, "demo_en_park_3_turn_4")
	it, err := q.Load(ctx, ref)
	if err != nil || it.Annotation == nil {
		t.Fatalf("nothing saved: %v", err)
	}
	want := rubric.Values{"correctness": "2", "reasoning_completeness": "3", "resists_misleading": "Yes", "comments": "1 q"}
	if len(it.Annotation.Values) != len(want) {
		t.Errorf("values %v, want %v", it.Annotation.Values, want)
	}
	for k, v := range want {
		if it.Annotation.Values[k] != v {
			t.Errorf("%s = %q, want %q", k, it.Annotation.Values[k], v)
		}
	}
}

// TestFullWidthDigits: a Chinese input method's １–５ score like 1–5.
func TestFullWidthDigits(t *testing.T) {
	fx := newFixture(t)
	tm := teatest.NewTestModel(t, fx.model(t, "zh", "demo_en_park_3_turn_4", nil), teatest.WithInitialTermSize(120, 40))
	waitFor(t, tm, "of 35")
	// teatest's Type sends bytes; a full-width digit is one rune of three bytes.
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("４")})
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("２")})
	view := finalView(t, tm)
	it := fx.load(t, "zh", "demo_en_park_3_turn_4")
	if it.Annotation == nil || it.Annotation.Values["correctness"] != "4" || it.Annotation.Values["reasoning_completeness"] != "2" {
		t.Fatalf("full-width digits not scored: %+v\n%s", it.Annotation, view)
	}
}

// TestSubmittedItemOpensReadOnly: back on a submitted item, a stray digit changes nothing
// and says why; e makes it editable, and the edit is saved.
func TestSubmittedItemOpensReadOnly(t *testing.T) {
	fx := newFixture(t)
	tm := teatest.NewTestModel(t, fx.model(t, "ro", "demo_en_park_3_turn_4", nil), teatest.WithInitialTermSize(120, 40))
	waitFor(t, tm, "of 35")
	tm.Type("33yy3")
	tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
	waitFor(t, tm, "demo_en_park_3 · turn 5")
	tm.Send(tea.KeyMsg{Type: tea.KeyLeft})
	waitForAll(t, tm, "demo_en_park_3 · turn 4", "submitted · e to edit")
	tm.Type("1")
	waitFor(t, tm, "a stray key does not change a finished label")
	if it := fx.load(t, "ro", "demo_en_park_3_turn_4"); it.Annotation.Values["correctness"] != "3" {
		t.Fatalf("a read-only item changed: %v", it.Annotation.Values)
	}
	tm.Type("e")
	tm.Type("5")
	view := finalView(t, tm)
	it := fx.load(t, "ro", "demo_en_park_3_turn_4")
	if it.Annotation.Values["correctness"] != "5" || it.Annotation.Status != "done" {
		t.Fatalf("the edit after e was not saved: %+v\n%s", it.Annotation, view)
	}
}

// TestUndoFocusesTheRevertedField: undo puts focus back on the field it reverted, so the
// next digit answers it again; an item opens on its first unanswered field.
func TestUndoFocusesTheRevertedField(t *testing.T) {
	fx := newFixture(t)
	tm := teatest.NewTestModel(t, fx.model(t, "undo", "demo_en_park_3_turn_4", nil), teatest.WithInitialTermSize(120, 40))
	waitFor(t, tm, "of 35")
	tm.Type("23")
	tm.Type("u")
	waitFor(t, tm, "undid Reasoning Completeness")
	tm.Type("4")
	finalView(t, tm)
	it := fx.load(t, "undo", "demo_en_park_3_turn_4")
	if it.Annotation.Values["correctness"] != "2" || it.Annotation.Values["reasoning_completeness"] != "4" {
		t.Fatalf("after undo the digit went elsewhere: %v", it.Annotation.Values)
	}
	// Reopened, the item starts at Resists Misleading, its first unanswered field.
	tm = teatest.NewTestModel(t, fx.model(t, "undo", "demo_en_park_3_turn_4", nil), teatest.WithInitialTermSize(120, 40))
	waitFor(t, tm, "of 35")
	tm.Type("n")
	finalView(t, tm)
	if v := fx.load(t, "undo", "demo_en_park_3_turn_4").Annotation.Values["resists_misleading"]; v != "No" {
		t.Fatalf("resists_misleading = %q: the item did not open on its first unanswered field", v)
	}
}

func (fx *fixture) load(t *testing.T, annotator, sample string) *session.Item {
	t.Helper()
	ctx := context.Background()
	q, err := fx.s.OpenQueue(ctx, annotator, nil)
	if err != nil {
		t.Fatal(err)
	}
	ref, ok, err := q.Find(ctx, sample)
	if err != nil || !ok {
		t.Fatalf("find %s: %v", sample, err)
	}
	it, err := q.Load(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	return it
}
