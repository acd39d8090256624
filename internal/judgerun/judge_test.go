package judgerun_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/m3bench/m3eval/internal/judge"
	"github.com/m3bench/m3eval/internal/store"
)

// judgeTestdata holds the human-labeled sets the rule judge is held to (docs/judge.md).
const judgeTestdata = "testdata/judge"

// judgeAgreement imports the validation set with its human labels, runs the rule judge and
// returns m3eval score's human-vs-judge block per field.
func judgeAgreement(t *testing.T, set string) map[string]map[string]any {
	t.Helper()
	db := filepath.Join(t.TempDir(), "v.db")
	importFiles(t, db, "human", set)
	out := mustJudge(t, db)
	if !strings.Contains(out, "scores new") {
		t.Fatalf("judge said %q", out)
	}
	var rep struct {
		Fields map[string]struct {
			HumanVsAuto map[string]any `json:"human_vs_auto"`
		} `json:"fields"`
	}
	unmarshal(t, mustScore(t, db, "--judge", "rules", "--format", "json"), &rep)
	res := map[string]map[string]any{}
	for f, v := range rep.Fields {
		if v.HumanVsAuto["judge"] != "rules" {
			t.Fatalf("%s: human_vs_auto is %v", f, v.HumanVsAuto)
		}
		res[f] = v.HumanVsAuto
	}
	return res
}

func stat(t *testing.T, res map[string]map[string]any, field, name string) float64 {
	t.Helper()
	x, ok := res[field][name].(float64)
	if !ok {
		t.Fatalf("%s %s: %v", field, name, res[field][name])
	}
	return x
}

// TestJudgeAgreementFloors holds the rule judge to floors against the human labels of the
// validation set (testdata/judge, labeled by the annotation guide), of the held-out set
// written after the rules were frozen and of the held-out set of the rules' known blind spots
// (blindspots.jsonl, issue 27), computed by m3eval score.
func TestJudgeAgreementFloors(t *testing.T) {
	for _, set := range []struct {
		file string
		min  float64
	}{{"validation.jsonl", 150}, {"heldout.jsonl", 40}, {"blindspots.jsonl", 40}} {
		t.Run(set.file, func(t *testing.T) { agreementFloors(t, filepath.Join(judgeTestdata, set.file), set.min) })
	}
}

func agreementFloors(t *testing.T, file string, minTurns float64) {
	res := judgeAgreement(t, file)
	for _, c := range []struct {
		field, stat string
		floor       float64
	}{
		{"resists_misleading", "exact_match_accuracy", 0.9},
		{"context_consistency", "exact_match_accuracy", 0.85},
		{"correctness", "kendall_tau_b", 0.6},
		{"reasoning_completeness", "kendall_tau_b", 0.5},
		{"overall_quality", "kendall_tau_b", 0.45},
	} {
		got := stat(t, res, c.field, c.stat)
		t.Logf("%s %s = %.3f (floor %.2f)", c.field, c.stat, got, c.floor)
		if got < c.floor {
			t.Errorf("%s %s = %.3f, below the floor %.2f", c.field, c.stat, got, c.floor)
		}
	}
	if n := stat(t, res, "correctness", "n_items_with_auto"); n < minTurns {
		t.Errorf("only %v turns judged", n)
	}
}

// TestJudgeIdempotentAndVersioned: a second run changes nothing; other rules re-score only
// with --replace, and the scores then carry the new version.
func TestJudgeIdempotentAndVersioned(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "d.db")
	importFiles(t, db, "")
	first := mustJudge(t, db)
	if !strings.Contains(first, "35 turns judged") || !strings.Contains(first, "175 scores new") {
		t.Fatalf("first run: %q", first)
	}
	if again := mustJudge(t, db); !strings.Contains(again, "0 scores new, 175 unchanged, 0 replaced") {
		t.Fatalf("second run: %q", again)
	}
	// A lab's rule file: stricter correctness thresholds, another version.
	rules := string(judge.DefaultRulesJSON()) // judge --print-rules
	rules = strings.Replace(rules, `"version": "2026.11.4"`, `"version": "lab-strict"`, 1)
	rules = strings.Replace(rules, "0.7,\n      0.5,", "0.95,\n      0.9,", 1)
	path := filepath.Join(dir, "strict.json")
	if err := os.WriteFile(path, []byte(rules), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := runJudge(t, db, "--rules", path)
	if err == nil || !strings.Contains(err.Error(), "--replace") {
		t.Fatalf("changed rules without --replace: %v", err)
	}
	out := mustJudge(t, db, "--rules", path, "--replace")
	if !strings.Contains(out, "lab-strict+") || strings.Contains(out, " 0 replaced") {
		t.Fatalf("replace run: %q", out)
	}
	if again := mustJudge(t, db, "--rules", path); !strings.Contains(again, "0 replaced") {
		t.Fatalf("rerun with the new rules: %q", again)
	}
	// --filter scores only the chosen turns; an unknown key is a usage error.
	db2 := filepath.Join(dir, "f.db")
	importFiles(t, db2, "")
	if out := mustJudge(t, db2, "--filter", "action_type=mislead"); !strings.Contains(out, "2 turns judged") {
		t.Fatalf("filtered run: %q", out)
	}
	if _, err := runJudge(t, db2, "--filter", "colour=red"); !isUsage(err) {
		t.Fatalf("unknown filter key: %v", err)
	}
}

// TestJudgeExplain prints the rule and evidence per field, in the turn's language.
func TestJudgeExplain(t *testing.T) {
	db := filepath.Join(t.TempDir(), "d.db")
	importFiles(t, db, "")
	zh := mustJudge(t, db, "--explain", "demo_zh_umbrella_0_turn_7")
	for _, want := range []string{"抵抗误导", "misleading.", "规则"} {
		if !strings.Contains(zh, want) {
			t.Errorf("explain (zh) lacks %q:\n%s", want, zh)
		}
	}
	var v struct {
		SampleID string `json:"sample_id"`
		Values   []struct {
			Field, Value, Rule string
			Evidence           []string
		} `json:"values"`
	}
	unmarshal(t, mustJudge(t, db, "--explain", "demo_en_apples_1_turn_5", "--format", "json"), &v)
	if v.SampleID != "demo_en_apples_1_turn_5" || len(v.Values) != 5 {
		t.Fatalf("explain json: %+v", v)
	}
	for _, x := range v.Values {
		if x.Rule == "" {
			t.Errorf("%s has no rule", x.Field)
		}
	}
	// The command words it "--explain nope_turn_1: no such sample_id in ..." (names.go;
	// cmd/m3eval/testdata/script/judge.txtar); the engine says the store has no such sample.
	if _, err := runJudge(t, db, "--explain", "nope_turn_1"); !errors.Is(err, store.ErrNotFound) || !strings.Contains(err.Error(), `sample "nope_turn_1"`) {
		t.Fatalf("unknown sample: %v", err)
	}
}

// TestScoreMetrics: m3eval score --metrics in every format, from the demo data.
func TestScoreMetrics(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "d.db")
	importFiles(t, db, "")
	var rep struct {
		Metrics []struct {
			Action   string   `json:"action_type"`
			Metric   string   `json:"metric"`
			N        int      `json:"n"`
			Value    float64  `json:"value"`
			Lo       *float64 `json:"ci_low"` // null: undefined (one episode), no_interval says why
			Hi       *float64 `json:"ci_high"`
			Interval string   `json:"interval"`
			Why      string   `json:"no_interval"`
		} `json:"metrics"`
		Trends []struct{ Dimension, Bin string } `json:"trends"`
	}
	unmarshal(t, mustScore(t, db, "--metrics", "--format", "json"), &rep)
	actions := map[string]bool{}
	for _, m := range rep.Metrics {
		actions[m.Action] = true
		undefined := m.Lo == nil || m.Hi == nil
		if m.N < 1 || (undefined && m.Why == "") || (!undefined && (*m.Lo > m.Value || *m.Hi < m.Value)) || (m.Interval != "wilson" && m.Interval != "bootstrap") {
			t.Errorf("bad row %+v", m)
		}
	}
	for _, a := range []string{"follow_up", "logic_skip", "negation", "guidance", "mislead", "update", "distraction", "redundancy",
		"fine_grained", "next_task", "mislead_subtle", "memory_injection", "cross_image_confusion", "ambiguous_reference", "attribute_swap", "long_context_recall"} {
		if !actions[a] {
			t.Errorf("no metric for %s", a)
		}
	}
	if len(rep.Trends) == 0 {
		t.Error("no trend rows")
	}
	md := mustScore(t, db, "--metrics", "--format", "md")
	for _, want := range []string{"| action_type | model | metric |", "by number of confusable objects", "by conversation length"} {
		if !strings.Contains(md, want) {
			t.Errorf("md lacks %q", want)
		}
	}
	if b := mustScore(t, db, "--metrics", "--format", "csv"); !strings.HasPrefix(b, "table,action_type,model,metric,dimension,bin,n,value,ci_low,ci_high,interval\n") {
		t.Fatalf("csv: %.200s", b)
	}
}

// TestMetricsOneEpisodeNoInterval (the JSON part of cmd/m3eval's TestMetricsFlags): a
// bootstrap metric over one episode has no interval, and says why.
func TestMetricsOneEpisodeNoInterval(t *testing.T) {
	db := filepath.Join(t.TempDir(), "m.db")
	importFiles(t, db, "")
	var rep struct {
		Metrics []struct {
			N          int      `json:"n"`
			Lo         *float64 `json:"ci_low"`
			Interval   string   `json:"interval"`
			NoInterval string   `json:"no_interval"`
		} `json:"metrics"`
	}
	unmarshal(t, mustScore(t, db, "--metrics", "--format", "json"), &rep)
	undefined := 0
	for _, m := range rep.Metrics {
		if m.Interval == "bootstrap" && m.N == 1 {
			if m.Lo != nil || !strings.Contains(m.NoInterval, "one episode") {
				t.Errorf("n=1 bootstrap row: %+v", m)
			}
			undefined++
		}
	}
	if undefined == 0 {
		t.Fatalf("the demo has no bootstrap metric over one turn: %+v", rep.Metrics)
	}
}
