package estimate_test

import (
	"bytes"
	"math"
	"strings"
	"testing"

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
		"4.20 [4.00, 4.40]", "1. good (93%)"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\x1b") {
		t.Errorf("an escape sequence reached the table:\n%s", out)
	}
}
