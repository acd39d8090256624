package longform_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"github.com/m3bench/m3eval/internal/testkit"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The real-data tests convert the public HANNA and XSum files of testdata/realdata to the long
// form, run "m3eval agree" on them and compare with the oracle run on the same long-form
// files (internal/agree/testdata/realdata/*/oracle*.json) and, for the system- and
// story-level correlations the oracle does not compute, with scipy run on the original wide
// file (hanna_levels.py there). To regenerate the oracle outputs:
//
//	go test ./internal/scoring/longform -run RealData -realdata-write /tmp/rd
//	cd /tmp/rd/<dataset> && /usr/bin/python3 .../internal/agree/testdata/oracle/oracle.py ... (see cmd.txt)
var realdataWrite = flag.String("realdata-write", "", "write the long-form conversions of the real data sets to this folder")

var hannaCriteria = []struct{ name, code string }{
	{"Relevance", "RE"}, {"Coherence", "CH"}, {"Empathy", "EM"},
	{"Surprise", "SU"}, {"Engagement", "EG"}, {"Complexity", "CX"},
}

// hannaMetrics are the automatic metrics the tests and docs/reproducing-hanna.md use, with file-name slugs.
var hannaMetrics = []struct{ column, slug string }{
	{"BERTScore F1 Ξε", "bertscore_f1"},
	{"BARTScore-SH ΞΔ", "bartscore_sh"},
	{"BLEU Ξ§", "bleu"},
	{"chrF Ξ§", "chrf"},
	{"SUPERT-PS ¤ε", "supert_ps"},
}

// convertHANNA writes into dir: ratings.csv (story = 96·row + prompt, raters human1..3 = the
// rating slots, six criteria), schema.json (1..5), auto_<slug>.csv for each metric (one
// judge, stories of the 10 systems; the Human reference row has no metric score, as in the
// paper), auto_all.csv (judge column, every metric) and levels.csv (system, segment = prompt;
// every row, the Human reference row included).
func convertHANNA(t *testing.T, dir string) {
	t.Helper()
	rows := readCSV(t, filepath.Join(sharedData, "hanna", "hanna_metric_scores_llm.csv"))
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	list := func(row []string, name string) []float64 {
		i, ok := col[name]
		if !ok {
			t.Fatalf("HANNA: no column %q", name)
		}
		var v []float64
		if err := json.Unmarshal([]byte(row[i]), &v); err != nil || len(v) != 96 {
			t.Fatalf("HANNA %s: %v (%d values)", name, err, len(v))
		}
		return v
	}
	ratings := [][]string{{"item", "rater", "field", "value"}}
	all := [][]string{{"item", "judge", "field", "value"}}
	levels := [][]string{{"item", "system", "segment"}}
	per := map[string][][]string{}
	for ri, row := range rows[1:] {
		model := row[0]
		for k := 1; k <= 3; k++ {
			for _, c := range hannaCriteria {
				for p, v := range list(row, fmt.Sprintf("Human %d %s", k, c.code)) {
					ratings = append(ratings, []string{strconv.Itoa(96*ri + p), fmt.Sprintf("human%d", k), c.name, num(v)})
				}
			}
		}
		// The Human reference row is a system of its own: it has no metric scores, so it
		// enters no correlation, but --cluster system needs a cluster for every item.
		for p := 0; p < 96; p++ {
			levels = append(levels, []string{strconv.Itoa(96*ri + p), model, strconv.Itoa(p)})
		}
		if model == "Human" {
			continue
		}
		for _, m := range hannaMetrics {
			for p, v := range list(row, m.column) {
				for _, c := range hannaCriteria {
					item := strconv.Itoa(96*ri + p)
					all = append(all, []string{item, m.slug, c.name, num(v)})
					per[m.slug] = append(per[m.slug], []string{item, c.name, num(v)})
				}
			}
		}
	}
	writeRows(t, filepath.Join(dir, "ratings.csv"), ratings)
	writeRows(t, filepath.Join(dir, "auto_all.csv"), all)
	writeRows(t, filepath.Join(dir, "levels.csv"), levels)
	for slug, r := range per {
		writeRows(t, filepath.Join(dir, "auto_"+slug+".csv"), append([][]string{{"item", "field", "value"}}, r...))
	}
	var fields []string
	for _, c := range hannaCriteria {
		fields = append(fields, fmt.Sprintf("%q: {\"type\": \"ordinal\", \"categories\": [1, 2, 3, 4, 5]}", c.name))
	}
	writeFile(t, filepath.Join(dir, "schema.json"), "{\"fields\": {"+strings.Join(fields, ", ")+"}}\n")
}

// convertUserStudy writes the HANNA user study: explanation j = rows 3j..3j+2, raters
// slot1..3, one nominal 0/1 field per issue.
func convertUserStudy(t *testing.T, dir string) {
	t.Helper()
	rows := readCSV(t, filepath.Join(sharedData, "hanna", "user_study.csv"))
	out := [][]string{{"item", "rater", "field", "value"}}
	var fields []string
	for c, h := range rows[0] {
		if !strings.HasPrefix(h, "Answer.") {
			continue
		}
		name := strings.TrimSuffix(strings.TrimPrefix(h, "Answer."), ".1")
		fields = append(fields, fmt.Sprintf("%q: {\"type\": \"nominal\", \"categories\": [\"0\", \"1\"]}", name))
		for i, row := range rows[1:] {
			out = append(out, []string{fmt.Sprintf("e%03d", i/3), fmt.Sprintf("slot%d", i%3+1), name, row[c]})
		}
	}
	writeRows(t, filepath.Join(dir, "ratings.csv"), out)
	writeFile(t, filepath.Join(dir, "schema.json"), "{\"fields\": {"+strings.Join(fields, ", ")+"}}\n")
}

// convertXSum writes the XSum factuality labels: item = bbcid/system, rater = worker slot,
// field is_factual (no/yes). The 33 labels written "NULL" (the data README calls them
// empty) become empty values, i.e. missing.
func convertXSum(t *testing.T, dir string) {
	t.Helper()
	rows := readCSV(t, filepath.Join(sharedData, "xsum-hallucinations", "factuality_annotations_xsum_summaries.csv"))
	out := [][]string{{"item", "rater", "field", "value"}}
	for _, row := range rows[1:] {
		v := row[3]
		if v == "NULL" {
			v = ""
		}
		out = append(out, []string{row[0] + "/" + row[1], row[4], "is_factual", v})
	}
	writeRows(t, filepath.Join(dir, "ratings.csv"), out)
	writeFile(t, filepath.Join(dir, "schema.json"), `{"fields": {"is_factual": {"type": "nominal", "categories": ["no", "yes"]}}}`+"\n")
}

func convertDir(t *testing.T, name string, conv func(*testing.T, string)) string {
	t.Helper()
	dir := t.TempDir()
	if *realdataWrite != "" {
		dir = filepath.Join(*realdataWrite, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	conv(t, dir)
	return dir
}

// agreeJSON runs m3eval agree's engine in dir and returns its JSON output.
func agreeJSON(t *testing.T, dir string, args ...string) map[string]any {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out.json")
	abs := func(p string) string { return filepath.Join(dir, p) }
	var full []string
	for i, a := range args {
		if i == 0 || (i > 0 && (args[i-1] == "--auto" || args[i-1] == "--schema" || args[i-1] == "--levels")) {
			a = abs(a)
		}
		full = append(full, a)
	}
	if _, _, err := runAgree(t, append(full, "--format", "json", "-o", out)...); err != nil {
		t.Fatalf("m3eval agree %v: %v", args, err)
	}
	var res map[string]any
	testkit.ReadJSON(t, out, &res)
	return res
}

func compareWithOracle(t *testing.T, oraclePath string, ours map[string]any) {
	t.Helper()
	var oracle map[string]any
	testkit.ReadJSON(t, oraclePath, &oracle)
	n := 0
	for name, of := range oracle["fields"].(map[string]any) {
		gf, ok := ours["fields"].(map[string]any)[name].(map[string]any)
		if !ok {
			t.Errorf("field %s missing", name)
			continue
		}
		n += compareRefs(t, name, of.(map[string]any), gf)
	}
	if n == 0 {
		t.Fatalf("%s: nothing compared", oraclePath)
	}
}

func TestRealDataHANNA(t *testing.T) {
	dir := convertDir(t, "hanna", convertHANNA)
	for _, m := range hannaMetrics[:2] {
		t.Run(m.slug, func(t *testing.T) {
			ours := agreeJSON(t, dir, "ratings.csv", "--auto", "auto_"+m.slug+".csv", "--schema", "schema.json")
			compareWithOracle(t, filepath.Join(realdataRefs, "hanna", "oracle_"+m.slug+".json"), ours)
		})
	}
	// hanna_levels.json: scipy on the original wide file, for every metric × criterion:
	// coefficients at three levels, and SciPy's p-values at the system level (the ten
	// system means) and overall. --mean float reproduces the floating-point system means.
	var ref map[string]map[string]map[string]map[string]any
	testkit.ReadJSON(t, filepath.Join(realdataRefs, "hanna", "hanna_levels.json"), &ref)
	for _, mean := range []string{"exact", "float"} {
		t.Run("levels_"+mean, func(t *testing.T) {
			ours := agreeJSON(t, dir, "ratings.csv", "--auto", "auto_all.csv", "--schema", "schema.json", "--levels", "levels.csv", "--mean", mean)
			n, np := 0, 0
			for _, m := range hannaMetrics {
				for _, c := range hannaCriteria {
					j := ours["fields"].(map[string]any)[c.name].(map[string]any)["human_vs_auto_by_judge"].(map[string]any)[m.slug].(map[string]any)
					for _, level := range []string{"system_level", "segment_level", "overall"} {
						refLevel := level
						if level == "system_level" && mean == "float" {
							refLevel = "system_level_float_mean"
						}
						want := ref[m.slug][c.name][refLevel]
						got := j
						if level != "overall" {
							got = j[level].(map[string]any)
						}
						for _, stat := range []string{"pearson", "spearman", "kendall_tau_b"} {
							w, g := want[stat], got[stat]
							wf, _ := w.(float64)
							gf, ok := g.(float64)
							if w == nil || !ok || math.Abs(wf-gf) > 1e-9 {
								t.Errorf("%s %s %s %s: scipy %v, we %v", m.slug, c.name, level, stat, w, g)
							}
							n++
							wp, hasP := want["p"].(map[string]any)
							if !hasP {
								continue
							}
							gp, _ := got["tests"].(map[string]any)[stat].(map[string]any)["p"].(float64)
							if w := wp[stat].(float64); math.Abs(gp-w) > 1e-9*math.Max(w, 1e-300) {
								t.Errorf("%s %s %s %s p: scipy %v, we %v", m.slug, c.name, level, stat, w, gp)
							}
							np++
						}
					}
				}
			}
			if n != len(hannaMetrics)*len(hannaCriteria)*9 || np != len(hannaMetrics)*len(hannaCriteria)*6 {
				t.Fatalf("compared %d values and %d p-values", n, np)
			}
		})
	}
}

func TestRealDataUserStudy(t *testing.T) {
	dir := convertDir(t, "hanna_user_study", convertUserStudy)
	ours := agreeJSON(t, dir, "ratings.csv", "--schema", "schema.json")
	compareWithOracle(t, filepath.Join(realdataRefs, "hanna_user_study", "oracle.json"), ours)
}

func TestRealDataXSum(t *testing.T) {
	dir := convertDir(t, "xsum", convertXSum)
	ours := agreeJSON(t, dir, "ratings.csv", "--schema", "schema.json")
	compareWithOracle(t, filepath.Join(realdataRefs, "xsum", "oracle.json"), ours)
}
