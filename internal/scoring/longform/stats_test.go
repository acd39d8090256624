package longform_test

import (
	"fmt"
	"github.com/m3bench/m3eval/internal/testkit"
	"math"
	"path/filepath"
	"strings"
	"testing"
)

// TestAgreeMissingCodes: the XSum labels hold 33 "NULL"s. Without a schema and without
// --missing they become a category, and the warning names the field and the count; with
// --missing NULL they are missing and the warning is gone.
func TestAgreeMissingCodes(t *testing.T) {
	dir := t.TempDir()
	rows := readCSV(t, filepath.Join(sharedData, "xsum-hallucinations", "factuality_annotations_xsum_summaries.csv"))
	out := [][]string{{"item", "rater", "field", "value"}}
	for _, row := range rows[1:] {
		out = append(out, []string{row[0] + "/" + row[1], row[4], "is_factual", row[3]})
	}
	ratings := filepath.Join(dir, "ratings.csv")
	writeRows(t, ratings, out)
	_, stderr, err := runAgree(t, ratings, "--format", "json", "-o", filepath.Join(dir, "a.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr, `warning: ratings.csv: field is_factual: 33 values "NULL" look like a missing code`) {
		t.Errorf("no warning naming the field and count:\n%s", stderr)
	}
	_, stderr, err = runAgree(t, ratings, "--missing", "NULL", "--format", "json", "-o", filepath.Join(dir, "b.json"))
	if err != nil || stderr != "" {
		t.Fatalf("--missing NULL: %v, stderr %q", err, stderr)
	}
	var a, b map[string]any
	testkit.ReadJSON(t, filepath.Join(dir, "a.json"), &a)
	testkit.ReadJSON(t, filepath.Join(dir, "b.json"), &b)
	na := a["fields"].(map[string]any)["is_factual"].(map[string]any)["n_ratings"].(float64)
	nb := b["fields"].(map[string]any)["is_factual"].(map[string]any)["n_ratings"].(float64)
	if na-nb != 33 {
		t.Errorf("n_ratings %v without, %v with --missing NULL: want 33 fewer", na, nb)
	}
}

// TestAgreeStatisticsFlags runs the new flags end to end on HANNA: system clusters, BCa,
// Holm, exchangeable raters, a LaTeX table and a LaTeX matrix. The ten systems and the Human
// reference row are the 11 clusters.
func TestAgreeStatisticsFlags(t *testing.T) {
	dir := convertDir(t, "hanna", convertHANNA)
	in := func(p string) string { return filepath.Join(dir, p) }
	common := []string{in("ratings.csv"), "--auto", in("auto_all.csv"), "--schema", in("schema.json"), "--levels", in("levels.csv")}
	res := agreeJSON(t, dir, "ratings.csv", "--auto", "auto_all.csv", "--schema", "schema.json", "--levels", "levels.csv",
		"--cluster", "system", "--bootstrap", "100", "--ci", "bca", "--adjust", "holm", "--raters", "exchangeable")
	f := res["fields"].(map[string]any)["Coherence"].(map[string]any)
	if pw := f["pairwise"].([]any); len(pw) != 0 {
		t.Errorf("exchangeable raters: %d pairs reported", len(pw))
	}
	bs := f["bootstrap"].(map[string]any)["krippendorff_alpha_interval"].(map[string]any)
	if bs["unit"] != "system" || bs["n_units"] != 11.0 || bs["ci95_bca"] == nil {
		t.Errorf("bootstrap block: %v", bs)
	}
	tests := f["human_vs_auto_by_judge"].(map[string]any)["bleu"].(map[string]any)["system_level"].(map[string]any)["tests"].(map[string]any)
	k := tests["kendall_tau_b"].(map[string]any)
	if k["method"] != "exact" || k["p_adjusted"].(float64) < k["p"].(float64) {
		t.Errorf("system-level Kendall test: %v", k)
	}
	if cmp := f["judge_comparisons"].([]any); len(cmp) != len(hannaMetrics)*(len(hannaMetrics)-1)/2 {
		t.Errorf("%d judge comparisons", len(cmp))
	}
	if r := f["judge_ranking"].(map[string]any)["pearson"].([]any); len(r) != len(hannaMetrics) {
		t.Errorf("ranking %v", r)
	}

	out, _, err := runAgree(t, append(common, "--raters", "exchangeable")...)
	if err != nil || !strings.Contains(out, "ICC(1,1) / ICC(1)") || strings.Contains(out, "ICC(2,1)") || strings.Contains(out, "Cohen's κ\n") || strings.Contains(out, "human1 – human2") {
		t.Errorf("exchangeable raters: the table shows two-way ICCs or pairs (%v):\n%s", err, out)
	}
	out, _, err = runAgree(t, append(common, "--format", "latex")...)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`\toprule`, `\midrule`, `\bottomrule`, `Krippendorff's $\alpha$ (interval)`, `ICC(2,1) / ICC(A,1) agreement, 1`} {
		if !strings.Contains(out, want) {
			t.Errorf("latex lacks %q", want)
		}
	}
	out, _, err = runAgree(t, append(common, "--matrix", "system_level.kendall_tau_b", "--format", "latex")...)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, `Judge & Relevance & Coherence & Empathy & Surprise & Engagement & Complexity \\`) ||
		!strings.Contains(out, "bleu & ") || strings.Count(out, `\\`) != len(hannaMetrics)+1 {
		t.Errorf("matrix:\n%s", out)
	}
	out, _, err = runAgree(t, append(common, "--matrix", "system_level.kendall_tau_b", "--mean", "float")...)
	if err != nil {
		t.Fatal(err)
	}
	// The published HANNA Complexity column: BLEU 0.54 with floating-point means.
	if !strings.Contains(out, "0.54") {
		t.Errorf("matrix with --mean float:\n%s", out)
	}
	if _, _, err := runAgree(t, append(common, "--matrix", "no_such_stat")...); err == nil || !strings.Contains(err.Error(), "no such statistic") {
		t.Errorf("unknown matrix statistic: %v", err)
	}
	for _, bad := range [][]string{{"--ci", "normal"}, {"--adjust", "bonferroni"}, {"--raters", "slots"}, {"--cluster", "episode"}, {"--mean", "median"}} {
		if _, _, err := runAgree(t, append(common, bad...)...); err == nil || !isUsage(err) {
			t.Errorf("%v: %v (want a usage error)", bad, err)
		}
	}
}

// TestContinuousHumanScores: XSum's aggregated human scores, one number per summary, against
// five metrics. Faithful has 452 distinct values and is read as continuous without a schema;
// Factual (0, 1/3, 2/3, 1) is declared continuous. Coefficients and p-values must equal
// SciPy's on the original file (internal/agree/testdata/realdata/xsum_continuous.py).
func TestContinuousHumanScores(t *testing.T) {
	dir := t.TempDir()
	rows := readCSV(t, filepath.Join(sharedData, "xsum-hallucinations", "eval_scores_xsum_summaries.csv"))
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	metrics := []string{"R1", "R2", "RL", "BERTScore", "Entailment"}
	var ref map[string]any
	testkit.ReadJSON(t, filepath.Join(realdataRefs, "xsum", "continuous.json"), &ref)
	for _, human := range []string{"Faithful", "Factual"} {
		ratings := [][]string{{"item", "rater", "field", "value"}}
		auto := [][]string{{"item", "judge", "field", "value"}}
		for _, r := range rows[1:] {
			ratings = append(ratings, []string{r[0], "mean", human, r[col[human]]})
			for _, m := range metrics {
				auto = append(auto, []string{r[0], m, human, r[col[m]]})
			}
		}
		writeRows(t, filepath.Join(dir, "ratings.csv"), ratings)
		writeRows(t, filepath.Join(dir, "auto.csv"), auto)
		args := []string{"ratings.csv", "--auto", "auto.csv"}
		if human == "Factual" {
			writeFile(t, filepath.Join(dir, "schema.json"), `{"fields": {"Factual": {"type": "continuous"}}}`)
			args = append(args, "--schema", "schema.json")
		}
		out := agreeJSON(t, dir, append(args, "--bootstrap", "200")...)
		f := out["fields"].(map[string]any)[human].(map[string]any)
		if f["type"] != "continuous" || f["n_items"] != 1992.0 {
			t.Fatalf("%s: type %v, %v items", human, f["type"], f["n_items"])
		}
		for _, m := range metrics {
			j := f["human_vs_auto_by_judge"].(map[string]any)[m].(map[string]any)
			want := ref[human].(map[string]any)[m].(map[string]any)
			for _, stat := range []string{"pearson", "spearman", "kendall_tau_b"} {
				w := want[stat].([]any)
				g, _ := j[stat].(float64)
				if math.Abs(g-w[0].(float64)) > 1e-9 {
					t.Errorf("%s %s %s: SciPy %v, we %v", human, m, stat, w[0], j[stat])
				}
				gp, _ := j["tests"].(map[string]any)[stat].(map[string]any)["p"].(float64)
				if wp := w[1].(float64); math.Abs(gp-wp) > 1e-9*wp {
					t.Errorf("%s %s %s p: SciPy %v, we %v", human, m, stat, wp, gp)
				}
			}
		}
		if _, ok := f["bootstrap"].(map[string]any)["human_vs_auto_BERTScore_pearson"]; !ok {
			t.Errorf("%s: no bootstrap interval of the correlations", human)
		}
		if _, ok := f["krippendorff_alpha"]; ok {
			t.Errorf("%s: categorical statistics reported for a continuous field", human)
		}
	}
}

// TestSystemLevelBootstrap: the bootstrap over systems of HANNA's system-level correlations
// (--cluster system) against the same design written with numpy/scipy
// (internal/agree/testdata/realdata/hanna_system_boot.py, B = 4000): interval widths within 15%, the
// Monte-Carlo tolerance of a percentile interval of a statistic that takes few values.
func TestSystemLevelBootstrap(t *testing.T) {
	dir := convertDir(t, "hanna", convertHANNA)
	var ref map[string]any
	testkit.ReadJSON(t, filepath.Join(realdataRefs, "hanna", "system_boot.json"), &ref)
	keep := func(in, out string, col int, want ...string) {
		rows := readCSV(t, filepath.Join(dir, in))
		sub := [][]string{rows[0]}
		for _, r := range rows[1:] {
			for _, w := range want {
				if r[col] == w {
					sub = append(sub, r)
				}
			}
		}
		writeRows(t, filepath.Join(dir, out), sub)
	}
	keep("ratings.csv", "ratings2.csv", 2, "Complexity", "Coherence")
	keep("auto_all.csv", "auto2.csv", 1, "bleu", "bertscore_f1")
	res := agreeJSON(t, dir, "ratings2.csv", "--auto", "auto2.csv", "--schema", "schema.json", "--levels", "levels.csv",
		"--cluster", "system", "--bootstrap", "2000", "--seed", "5")
	for _, c := range []struct{ slug, field string }{{"bleu", "Complexity"}, {"bertscore_f1", "Coherence"}} {
		bs := res["fields"].(map[string]any)[c.field].(map[string]any)["bootstrap"].(map[string]any)
		for _, stat := range []string{"pearson", "kendall_tau_b"} {
			iv, ok := bs["human_vs_auto_"+c.slug+"_system_level_"+stat].(map[string]any)
			if !ok {
				t.Fatalf("%s %s: no system-level interval", c.slug, stat)
			}
			ci := iv["ci95_percentile"].([]any)
			w := ci[1].(float64) - ci[0].(float64)
			want := ref[c.slug].(map[string]any)[c.field].(map[string]any)[stat].(map[string]any)["width"].(float64)
			if math.Abs(w-want) > 0.15*want || iv["unit"] != "system" || iv["n_units"] != 11.0 {
				t.Errorf("%s %s %s: width %.3f (%v, %v units), Python %.3f", c.slug, c.field, stat, w, iv["unit"], iv["n_units"], want)
			}
		}
	}
}

// TestTooManyValuesNotNumbers: a field without schema entry with more than 254 distinct
// values is continuous only if they are all numbers; otherwise the error names the first
// value that is not one, with its line.
func TestTooManyValuesNotNumbers(t *testing.T) {
	dir := t.TempDir()
	rows := [][]string{{"item", "rater", "field", "value"}}
	for i := 0; i < 300; i++ {
		v := fmt.Sprintf("%d.5", i)
		if i == 7 {
			v = "n/a?"
		}
		rows = append(rows, []string{fmt.Sprintf("it%d", i), "a", "score", v})
	}
	writeRows(t, filepath.Join(dir, "ratings.csv"), rows)
	_, _, err := runAgree(t, filepath.Join(dir, "ratings.csv"))
	if err == nil || !strings.Contains(err.Error(), "ratings.csv:9: value: field score has more than 254 distinct values and this one is not a number") {
		t.Fatalf("got %v", err)
	}
}
