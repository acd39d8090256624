package estimate_test

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/mattn/go-runewidth"

	"github.com/m3bench/m3eval/internal/estimate"
	"github.com/m3bench/m3eval/internal/ppi"
)

// TestTableNamesRowsLeftOut: a model without an interval is shown with its point
// estimate and the reason, named as not compared or ranked; the ranking shows the shares;
// a model name from data cannot drive the terminal.
func TestTableNamesRowsLeftOut(t *testing.T) {
	nan := estimate.Num(math.NaN())
	none := [2]estimate.Num{nan, nan}
	res := &estimate.Result{Judge: "j", Bootstrap: 200, Design: "uniform",
		Rows: []estimate.Row{
			{Field: "q", Model: "good", NLabeled: 30, NUnlabeled: 70, Estimate: 4.2, CI: [2]estimate.Num{4, 4.4}, Lambda: 0.5,
				HumanOnly: estimate.Simple{Estimate: 4.1, CI: [2]estimate.Num{3.8, 4.4}}, JudgeOnly: estimate.JudgeOnly{Estimate: 4.3, CI: none}, EffectiveN: 40},
			{Field: "q", Model: "few\x1b[2J", NLabeled: 3, NUnlabeled: 10, Estimate: 3.5, CI: none, Lambda: 0,
				HumanOnly: estimate.Simple{Estimate: 3.5, CI: none}, JudgeOnly: estimate.JudgeOnly{Estimate: 3.9, CI: none}, EffectiveN: nan,
				Undefined: ppi.ReasonFewEpisodes},
		},
		Ranking: []estimate.RankRow{{Field: "q", Model: "good", Rank: 1, Share: 0.93}},
	}
	var b bytes.Buffer
	if err := estimate.WriteTable(&b, res); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"not compared or ranked (no interval): few␛[2J", ppi.ReasonFewEpisodes,
		"4.20 [4.00, 4.40]", "1. good (93%; "} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\x1b") {
		t.Errorf("an escape sequence reached the table:\n%s", out)
	}
}

// TestTableAlignsChineseModels: the estimates table and the differences align by display
// width, so a Chinese model name (two columns a character) does not shift its row, and no
// line ends in blanks.
func TestTableAlignsChineseModels(t *testing.T) {
	nan := estimate.Num(math.NaN())
	none := [2]estimate.Num{nan, nan}
	row := func(model string, est estimate.Num) estimate.Row {
		return estimate.Row{Field: "q", Model: model, NLabeled: 30, NUnlabeled: 70, Estimate: est, CI: [2]estimate.Num{est - 0.2, est + 0.2}, Lambda: 0.5,
			HumanOnly: estimate.Simple{Estimate: est, CI: [2]estimate.Num{est - 0.3, est + 0.3}}, JudgeOnly: estimate.JudgeOnly{Estimate: est, CI: none}, EffectiveN: 40}
	}
	res := &estimate.Result{Judge: "rules", Design: "uniform",
		Rows: []estimate.Row{row("模型甲", 4.2), row("gpt", 3.1)},
		Differences: []estimate.DiffRow{
			{Field: "q", A: "模型甲", B: "gpt", Estimate: 1.1, CI: [2]estimate.Num{0.5, 1.7}, P: 0.0001},
			{Field: "q", A: "gpt", B: "claude", Estimate: -0.1, CI: [2]estimate.Num{-0.5, 0.3}, P: 0.5},
		},
	}
	var b bytes.Buffer
	if err := estimate.WriteTable(&b, res); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	// The display column where a cell starts is the same on every line of its table.
	col := func(line, cell string) int { return runewidth.StringWidth(line[:strings.Index(line, cell)]) }
	var head, a, g, d1, d2 string
	for _, l := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(l, "  model"):
			head = l
		case strings.HasPrefix(l, "  模型甲"):
			a = l
		case strings.HasPrefix(l, "  gpt"):
			g = l
		case strings.HasPrefix(l, "    模型甲"):
			d1 = l
		case strings.HasPrefix(l, "    gpt"):
			d2 = l
		}
		if strings.HasSuffix(l, " ") {
			t.Errorf("line ends in blanks: %q", l)
		}
	}
	if head == "" || a == "" || g == "" || d1 == "" || d2 == "" {
		t.Fatalf("missing lines:\n%s", out)
	}
	if h, x, y := col(head, "labeled"), col(a, "30"), col(g, "30"); h != x || x != y {
		t.Errorf("labeled starts at columns %d, %d, %d:\n%s", h, x, y, out)
	}
	if x, y := col(d1, "1.10"), col(d2, "-0.10"); x != y {
		t.Errorf("differences start at columns %d, %d:\n%s", x, y, out)
	}
}
