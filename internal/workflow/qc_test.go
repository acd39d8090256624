package workflow_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/m3bench/m3eval/internal/testkit"
	"github.com/m3bench/m3eval/internal/workflow"
)

// TestQC (moved from TestQCCLI in cmd/m3eval/qc_test.go) runs qc on the demo with three
// careful annotators and one who straight-lines and rushes.
func TestQC(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "qc.db")
	importFiles(t, db, "")
	for k, who := range []string{"ann", "ben", "cat"} {
		p := filepath.Join(dir, who+".jsonl")
		testkit.WriteDemoLabels(t, p, func(i int, _ map[string]any) (int, float64) {
			q := 1 + (i*7)%5
			if (i+k)%9 == 0 && q < 5 {
				q++
			}
			return q, 40 + float64((i*13+k*7)%40)
		})
		importFiles(t, db, who, p)
	}
	p := filepath.Join(dir, "flat.jsonl")
	testkit.WriteDemoLabels(t, p, func(i int, _ map[string]any) (int, float64) {
		if i%4 == 0 {
			return 4, 2 // rushed
		}
		return 4, 50
	})
	importFiles(t, db, "flat", p)

	var rep struct {
		Annotators []struct {
			Annotator string `json:"annotator"`
			Items     int    `json:"items"`
			Rushed    int    `json:"rushed"`
			Flags     []struct{ Check, Reason string }
		} `json:"annotators"`
	}
	out := mustCommand(t, db, workflow.NewQCCommand(), "--format", "json")
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	checks := map[string][]string{}
	for _, a := range rep.Annotators {
		if a.Items != 35 {
			t.Errorf("%s: %d items", a.Annotator, a.Items)
		}
		for _, f := range a.Flags {
			checks[a.Annotator] = append(checks[a.Annotator], f.Check)
		}
	}
	for _, who := range []string{"ann", "ben", "cat"} {
		if len(checks[who]) != 0 {
			t.Errorf("%s flagged: %v", who, checks[who])
		}
	}
	if got := strings.Join(checks["flat"], ","); !strings.Contains(got, "straight_lining") || !strings.Contains(got, "low_variance") ||
		!strings.Contains(got, "rushing") || !strings.Contains(got, "outlier") {
		t.Errorf("flat flagged for %s", got)
	}
	// Thresholds are flags: a longer run and a larger rushed share clear those two.
	out = mustCommand(t, db, workflow.NewQCCommand(), "--format", "json", "--straight-run", "36", "--rush-share", "0.5")
	if strings.Contains(out, "straight_lining") || strings.Contains(out, `"rushing"`) {
		t.Errorf("thresholds ignored:\n%s", out)
	}
	md := mustCommand(t, db, workflow.NewQCCommand(), "--format", "md")
	if !strings.Contains(md, `| flat | straight\_lining |`) {
		t.Errorf("markdown:\n%s", md)
	}
	table := mustCommand(t, db, workflow.NewQCCommand())
	if !strings.Contains(table, "flat: rushing: 9 of 35 timed items") {
		t.Errorf("table:\n%s", table)
	}
	if _, err := runCommand(t, db, workflow.NewQCCommand(), "--campaign", "nope"); err == nil {
		t.Error("unknown campaign passed")
	}
}
