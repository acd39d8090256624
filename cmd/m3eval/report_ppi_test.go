package main

import (
	"fmt"

	"github.com/m3bench/m3eval/internal/testkit"
	"path/filepath"
	"strings"
	"testing"
)

// TestReportModelScores renders the report of a database with three models, two annotators
// and one judge, opens it in headless Chromium, and checks the "Model scores" section: one
// drawn forest plot per scale and Yes/No field, whose table holds exactly the numbers of
// m3eval estimate --format json (PPI estimate and interval, human-only, judge-only,
// effective n, λ, labeled episodes) and its ranking's rank and 95% rank set for every model.
func TestReportModelScores(t *testing.T) {
	chromium := chromiumOrSkip(t)
	db := estimateFixture(t)
	file := filepath.Join(t.TempDir(), "report.html")
	mustRun(t, "--db", db, "report", "-o", file)
	pg := openReport(t, chromium, file, "model-scores")
	checkPage(t, pg, file)
	for _, s := range pg.DOM.Sections {
		if s.ID == "model-scores" && s.Omitted != "" {
			t.Fatalf("model scores left out: %s", s.Omitted)
		}
	}
	js := filepath.Join(t.TempDir(), "est.json")
	mustRun(t, "--db", db, "estimate", "--judge", "j", "--format", "json", "--bootstrap", "0", "-o", js)
	var doc struct {
		PPI     []map[string]any `json:"ppi"`
		Ranking []map[string]any `json:"ranking"`
	}
	testkit.ReadJSON(t, js, &doc)
	checked := 0
	for _, f := range []string{"correctness", "reasoning_completeness", "resists_misleading", "context_consistency", "overall_quality"} {
		id := "model-scores-" + strings.ReplaceAll(f, "_", "-")
		drawn := false
		for _, c := range pg.DOM.Charts {
			if c.ID == id && c.HasSVG && c.Marks >= 3 {
				drawn = true
			}
		}
		if !drawn {
			t.Errorf("%s: no forest plot with marks", id)
		}
		cols, rows := pg.chart(t, id)
		if len(rows) != 3 {
			t.Fatalf("%s: %d rows, want 3 models", id, len(rows))
		}
		for _, r := range rows {
			model := r[col(t, cols, "model")].Text
			var want map[string]any
			for _, w := range doc.PPI {
				if w["field"] == f && w["model"] == model {
					want = w
				}
			}
			if want == nil {
				t.Fatalf("%s: model %s not in m3eval estimate's output", f, model)
			}
			what := f + "/" + model
			ci := want["ci"].([]any)
			ho := want["human_only"].(map[string]any)
			hci := ho["ci"].([]any)
			for _, c := range []struct {
				col  string
				want any
			}{
				{"labeled", want["n_labeled"]}, {"unlabeled", want["n_unlabeled"]},
				{"PPI", want["estimate"]}, {"PPI ci95 low", ci[0]}, {"PPI ci95 high", ci[1]},
				{"human only", ho["estimate"]}, {"human ci95 low", hci[0]}, {"human ci95 high", hci[1]},
				{"judge only", want["judge_only"].(map[string]any)["estimate"]},
				{"effective n", want["effective_n"]}, {"lambda", want["lambda"]},
				{"labeled episodes", want["n_labeled_episodes"]},
			} {
				sameNumber(t, what+" "+c.col, r[col(t, cols, c.col)].num(t), c.want)
				checked++
			}
			for _, rk := range doc.Ranking {
				if rk["field"] != f || rk["model"] != model {
					continue
				}
				sameNumber(t, what+" rank", r[col(t, cols, "rank")].num(t), rk["rank"])
				rs := rk["rank_set"].([]any)
				set := fmt.Sprintf("%v–%v", rs[0], rs[1])
				if rs[0] == rs[1] {
					set = fmt.Sprint(rs[0])
				}
				if got := r[col(t, cols, "rank set (95%, simultaneous)")].Text; got != set {
					t.Errorf("%s: rank set %q, want %q", what, got, set)
				}
				checked++
			}
		}
	}
	if checked != 5*3*13 {
		t.Errorf("%d numbers checked", checked)
	}
}
