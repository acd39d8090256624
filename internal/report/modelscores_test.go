package report

import (
	"slices"
	"testing"

	"github.com/m3bench/m3eval/internal/estimate"
)

// TestModelScoresRankSets: the model-scores table shows each ranked model's rank, its 95%
// rank set ("1–2", or "3" when it is one rank) and share, and the episodes its interval rests
// on; a model without an interval is not ranked ("—").
func TestModelScoresRankSets(t *testing.T) {
	row := func(model string, eps int) estimate.Row {
		return estimate.Row{Field: "q", Model: model, NLabeled: 20, NUnlabeled: 80, NLabeledEpisodes: eps,
			Estimate: 3, CI: [2]estimate.Num{2.5, 3.5}, Lambda: 0.5, EffectiveN: 30,
			HumanOnly: estimate.Simple{Estimate: 3, CI: [2]estimate.Num{2.4, 3.6}}, JudgeOnly: estimate.JudgeOnly{Estimate: 3.4}}
	}
	res := &estimate.Result{Judge: "j", Rows: []estimate.Row{row("a", 7), row("b", 9), row("c", 3)},
		Ranking: []estimate.RankRow{
			{Field: "q", Model: "a", Rank: 2, Share: 0.6, RankSet: [2]int{1, 2}},
			{Field: "q", Model: "b", Rank: 1, Share: 0.7, RankSet: [2]int{1, 2}},
		}}
	res.Rows[2].Undefined = "labeled turns from fewer than 5 episodes"
	sec := modelScoresSection(res)
	if len(sec.Charts) != 1 {
		t.Fatalf("%d charts, want 1", len(sec.Charts))
	}
	tb := sec.Charts[0].Table
	at := func(name string) int {
		i := slices.Index(tb.Columns, name)
		if i < 0 {
			t.Fatalf("no column %q in %v", name, tb.Columns)
		}
		return i
	}
	want := map[string][3]string{"a": {"7", "2", "1–2"}, "b": {"9", "1", "1–2"}, "c": {"3", "—", "—"}}
	for _, r := range tb.Rows {
		w := want[r[at("model")].Text]
		got := [3]string{r[at("labeled episodes")].Shown(), r[at("rank")].Shown(), r[at("rank set (95%, simultaneous)")].Shown()}
		if got != w {
			t.Errorf("%s: episodes, rank, rank set %q, want %q", r[0].Text, got, w)
		}
	}
}
