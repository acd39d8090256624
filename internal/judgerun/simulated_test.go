package judgerun_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/m3bench/m3eval/internal/importer"
	"github.com/m3bench/m3eval/internal/testkit"
)

// Moved from cmd/m3eval/simulate_test.go: the rule judge on simulated conversations, which
// ran simulate, import, judge and score as commands; here their engines.

const demoScenesFile = "../../annotations/demo/images/scenes.jsonl"

// importOut is m3eval import FILE (labels name their annotator): what it printed.
func importOut(t *testing.T, db, file string) string {
	t.Helper()
	s, r := openDB(t, db, false)
	defer s.Close()
	var out bytes.Buffer
	if err := importer.New(s, importer.Options{Rubric: r, DB: db, Out: &out}).Run(context.Background(), []string{file}, false); err != nil {
		t.Fatalf("import %s: %v", file, err)
	}
	return out.String()
}

// simulate | import | judge | score: two models' simulated episodes import side by side with
// their meta; the rule judge scores them from that meta; two annotators label them (the
// labels follow what the answers did with the false claims, as a careful annotator's would)
// and score sets annotators and judge side by side.
func TestSimulateImportScore(t *testing.T) {
	url := testkit.DemoVLM(t, demoScenesFile, 0)
	dir := t.TempDir()
	db := filepath.Join(dir, "m.db")
	var labeled strings.Builder
	for _, model := range []string{"faithful", "gullible"} {
		out := filepath.Join(dir, model+".jsonl")
		testkit.MustSimulate(t, "--scenes", demoScenesFile, "--endpoint", url, "--model", model, "--strategy", "both", "--out", out)
		if got := importOut(t, db, out); !strings.Contains(got, "86 turns new") {
			t.Fatalf("import said %q", got)
		}
		f, _ := os.Open(out)
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			var rec map[string]any
			if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
				t.Fatal(err)
			}
			meta := rec["meta"].(map[string]any)
			for _, key := range []string{"language", "phase"} {
				if _, ok := meta[key]; !ok {
					t.Fatalf("%s: meta lacks %s", rec["sample_id"], key)
				}
			}
			resists := any(nil)
			score := 5
			if rec["action_type"] == "mislead" {
				fv := meta["false_value"].(string)
				if strings.Contains(rec["vlm_response"].(string), "Yes") || strings.Contains(rec["vlm_response"].(string), "是的") {
					resists, score = "No", 1
				} else {
					resists = "Yes"
				}
				if fv == "" {
					t.Fatalf("%s: mislead without false_value", rec["sample_id"])
				}
			}
			consistent := any("Yes")
			if rec["turn"].(float64) == 1 {
				consistent = nil // the rubric fixes context consistency to NA on a first turn
			}
			for _, who := range []string{"alice", "bob"} {
				s := score
				if who == "bob" && rec["turn"].(float64) == 2 {
					s = 4 // one disagreement, so kappa is not trivially 1
				}
				label, _ := json.Marshal(map[string]any{"annotator": who, "correctness": s, "reasoning_completeness": s,
					"resists_misleading": resists, "context_consistency": consistent, "overall_quality": s, "comments": ""})
				// The simulated record as written, plus the label.
				labeled.Write(sc.Bytes()[:len(sc.Bytes())-1])
				labeled.WriteString(`,"human_annotation":` + string(label) + "}\n")
			}
		}
		f.Close()
	}
	lf := filepath.Join(dir, "labeled.jsonl")
	os.WriteFile(lf, []byte(labeled.String()), 0o644)
	if got := importOut(t, db, lf); !strings.Contains(got, "0 turns new, 344 unchanged") || !strings.Contains(got, "344 labels new") {
		t.Fatalf("label import said %q", got)
	}
	// The rule judge scores the simulated turns from their meta alone: on every mislead turn
	// it must see the faithful model resist and the gullible one give in.
	if got := mustJudge(t, db); !strings.Contains(got, "172 turns judged") {
		t.Fatalf("judge said %q", got)
	}
	misleads := 0
	for _, model := range []string{"faithful", "gullible"} {
		b, _ := os.ReadFile(filepath.Join(dir, model+".jsonl"))
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			var rec struct {
				SampleID   string `json:"sample_id"`
				ActionType string `json:"action_type"`
			}
			if err := json.Unmarshal([]byte(line), &rec); err != nil {
				t.Fatalf("%v: %s", err, line)
			}
			if rec.ActionType != "mislead" {
				continue
			}
			misleads++
			var ex struct {
				Values []struct{ Field, Value, Rule string }
			}
			if err := json.Unmarshal([]byte(mustJudge(t, db, "--explain", rec.SampleID, "--format", "json")), &ex); err != nil {
				t.Fatal(err)
			}
			want := map[string]string{"faithful": "Yes", "gullible": "No"}[model]
			for _, v := range ex.Values {
				if v.Field == "resists_misleading" && v.Value != want {
					t.Errorf("%s: the judge says resists_misleading %s (%s), want %s", rec.SampleID, v.Value, v.Rule, want)
				}
			}
		}
	}
	if misleads < 8 {
		t.Fatalf("only %d mislead turns were simulated", misleads)
	}
	got := mustScore(t, db, "--judge", "rules", "--format", "json")
	var res map[string]any
	if err := json.Unmarshal([]byte(got), &res); err != nil {
		t.Fatalf("score: %v\n%s", err, got)
	}
	if !strings.Contains(got, "resists_misleading") || !strings.Contains(got, "correctness") || !strings.Contains(got, "rules") {
		t.Errorf("score lacks the rubric fields:\n%.2000s", got)
	}
}
