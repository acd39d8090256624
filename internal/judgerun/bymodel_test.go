package judgerun_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/m3bench/m3eval/internal/testkit"
)

// TestModelJudgeAgreementByModel (issue #37): score --by model shows a model judge's agreement
// with the humans per answering model, one matrix row per model, so a judge that favours a
// model family is visible. The lenient judge gives correctness 5 to every turn, so its exact
// match per model is the share of that model's turns the human scored 5, counted here from
// the held-out file itself.
func TestModelJudgeAgreementByModel(t *testing.T) {
	set, err := filepath.Abs(filepath.Join(judgeTestdata, "heldout.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "d.db")
	importFiles(t, db, "human", set)
	vlm := testkit.StartJudgeVLM(t, nil, 0)
	out := mustJudge(t, db, "--name", "lenient", "--endpoint", vlm.Endpoint(), "--model", "judge-lenient")
	if !strings.Contains(out, "40 turns scored") {
		t.Fatalf("judge: %s", out)
	}

	// The reference: per model, turns the human scored correctness 5, of all its turns.
	f, err := os.Open(set)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fives, all := map[string]int{}, map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var ep struct {
			Turns []struct {
				Model string `json:"model"`
				HA    struct {
					Correctness int `json:"correctness"`
				} `json:"human_annotation"`
			} `json:"turns"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ep); err != nil {
			t.Fatal(err)
		}
		for _, tr := range ep.Turns {
			all[tr.Model]++
			if tr.HA.Correctness == 5 {
				fives[tr.Model]++
			}
		}
	}
	if len(all) != 4 {
		t.Fatalf("models in the held-out set: %v", all)
	}

	js := mustScore(t, db, "--judge", "lenient", "--by", "model", "--matrix", "exact_match_accuracy", "--format", "json")
	var m struct {
		Matrix map[string]map[string]struct {
			Value *float64 `json:"value"`
		} `json:"matrix"`
	}
	unmarshal(t, js, &m)
	for model, n := range all {
		row := fmt.Sprintf("lenient · model = %s", model)
		got := m.Matrix[row]["correctness"].Value
		want := float64(fives[model]) / float64(n)
		t.Logf("%s: %d/%d", row, fives[model], n)
		if got == nil || *got != want {
			t.Errorf("%s: correctness exact match %v, want %d/%d = %v", row, got, fives[model], n, want)
		}
	}
	if len(m.Matrix) != 5 { // the judge overall, and one row per model
		t.Errorf("matrix rows: %d\n%s", len(m.Matrix), js)
	}
}
