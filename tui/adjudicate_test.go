package tui_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/muesli/termenv"

	"github.com/m3bench/m3eval/internal/campaign"
	"github.com/m3bench/m3eval/internal/session"
	"github.com/m3bench/m3eval/internal/workflow"
	"github.com/m3bench/m3eval/tui"
)

// disagreement labels turn 1 of demo_zh_umbrella_0 2 by ann and 5 by ben, and returns the
// adjudication screen's options for judy on that one case, on the fixture's store, without
// colours.
func (fx *fixture) disagreement(t *testing.T) tui.AdjudicateOptions {
	t.Helper()
	fx.label(t, "ann", "demo_zh_umbrella_0_turn_1", "2")
	fx.label(t, "ben", "demo_zh_umbrella_0_turn_1", "5")
	cases, _, err := workflow.Cases(context.Background(), fx.s, "", fx.r, campaign.DefaultDisagreeOptions())
	if err != nil || len(cases) != 1 {
		t.Fatalf("cases %v %v", cases, err)
	}
	r := lipgloss.NewRenderer(os.Stdout)
	r.SetColorProfile(termenv.Ascii)
	return tui.AdjudicateOptions{Context: context.Background(), Store: fx.s, Rubric: fx.r, Adjudicator: "judy",
		Cases: cases, Disagree: campaign.DefaultDisagreeOptions(), Renderer: r}
}

func (fx *fixture) label(t *testing.T, who, sample string, q string) {
	t.Helper()
	ctx := context.Background()
	qu, err := fx.s.OpenQueue(ctx, who, nil)
	if err != nil {
		t.Fatal(err)
	}
	ref, ok, err := qu.Find(ctx, sample)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	e := session.Edit{TurnID: ref.TurnID, RubricVersion: fx.r.Version}
	for _, f := range []string{"correctness", "reasoning_completeness", "overall_quality"} {
		if _, err := qu.SetValue(ctx, e, f, &q); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := qu.Submit(ctx, e); err != nil {
		t.Fatal(err)
	}
}

// TestAdjudicateBurstKeys: keys that arrive in one read ("B3", as a fast typist or SSH
// delivers them) and keys typed before the turn has loaded all apply, in order, and land
// in the database; the cursor starts on the first disputed field and moves on after each
// decision, past the fields that do not apply.
func TestAdjudicateBurstKeys(t *testing.T) {
	fx := newFixture(t)
	ctx := context.Background()
	o := fx.disagreement(t)
	m := tui.NewAdjudicate(o)
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(100, 30))
	// Typed at once, possibly before the turn is on screen: take ben's correctness, score
	// reasoning 3; then take ann's overall.
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("B3")})
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("A")})
	waitFor(t, tm, "Overall Quality = 2 saved")
	tm.Type("q")
	view := tm.FinalModel(t, teatest.WithFinalTimeout(60*time.Second)).(*tui.Model).Frame()
	finals, err := fx.s.Finals(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := finals["demo_zh_umbrella_0_turn_1"]
	if got["correctness"].Value != "5" || got["correctness"].Source != "ben" ||
		got["reasoning_completeness"].Value != "3" || got["reasoning_completeness"].Source != "" ||
		got["overall_quality"].Value != "2" || got["overall_quality"].Source != "ann" {
		t.Fatalf("finals %+v\n%s", got, view)
	}
	for _, want := range []string{"5 (B)", "3 (new)", "2 (A)", "0 open"} {
		if !strings.Contains(view, want) {
			t.Errorf("screen lacks %q:\n%s", want, view)
		}
	}
}

// TestAdjudicateBurstDecidesEachField: "AAA" in one read takes ann's answer for three
// fields, one each, not Overall three times (issue 25 item 12).
func TestAdjudicateBurstDecidesEachField(t *testing.T) {
	fx := newFixture(t)
	ctx := context.Background()
	o := fx.disagreement(t)
	m := tui.NewAdjudicate(o)
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(100, 30))
	waitFor(t, tm, "A ann")
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("AAA")})
	waitFor(t, tm, "0 open")
	tm.Type("q")
	view := tm.FinalModel(t, teatest.WithFinalTimeout(60*time.Second)).(*tui.Model).Frame()
	finals, err := fx.s.Finals(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := finals["demo_zh_umbrella_0_turn_1"]
	for _, f := range []string{"correctness", "reasoning_completeness", "overall_quality"} {
		if got[f].Value != "2" || got[f].Source != "ann" {
			t.Errorf("%s: %+v, want ann's 2\n%s", f, got[f], view)
		}
	}
	for _, line := range strings.Split(view, "\n") {
		if (strings.Contains(line, "Resists Misleading") || strings.Contains(line, "Context Consistency")) &&
			(strings.Contains(line, "?") || !strings.Contains(line, "NA n/a")) {
			t.Errorf("a field that does not apply is not shown NA, decided: %q\n%s", line, view)
		}
	}
}
