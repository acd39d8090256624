package workflow_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/m3bench/m3eval/internal/campaign"
	"github.com/m3bench/m3eval/internal/testkit"
	"github.com/m3bench/m3eval/internal/workflow"
)

// TestAdjudicateAndExportFinal (moved from cmd/m3eval/adjudicate_test.go): adjudicate --list,
// decisions by --take and --set, and export --final of what was decided.
func TestAdjudicateAndExportFinal(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "adj.db")
	importFiles(t, db, "")
	// ann and ben agree (within one point) on every turn but the first three: turn 0 two
	// apart, turn 1 three apart, turn 2 two apart.
	for _, who := range []string{"ann", "ben"} {
		p := filepath.Join(dir, who+".jsonl")
		testkit.WriteDemoLabels(t, p, func(i int, _ map[string]any) (int, float64) {
			q := 1 + (i*7)%5
			if who == "ben" {
				switch {
				case i < 3 && q <= 3:
					q += 2
				case i < 3:
					q -= 2
				case q < 5 && i%2 == 0:
					q++
				}
			}
			return q, 50
		})
		importFiles(t, db, who, p)
	}
	turns := testkit.DemoTurns(t)
	id := func(i int) string { return turns[i]["sample_id"].(string) }

	var cases []struct {
		SampleID string   `json:"sample_id"`
		Disputes []string `json:"disputes"`
		Decided  bool     `json:"decided"`
	}
	if err := json.Unmarshal([]byte(mustCommand(t, db, workflow.NewAdjudicateCommand(), "--list", "--format", "json")), &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) != 3 || cases[0].SampleID != id(0) || len(cases[0].Disputes) != 3 || cases[0].Decided {
		t.Fatalf("cases %+v", cases)
	}
	if !strings.Contains(cases[0].Disputes[0], "correctness: 1 (ann) vs 3 (ben)") {
		t.Errorf("dispute %q", cases[0].Disputes[0])
	}
	// A wider gap finds none.
	if out := mustCommand(t, db, workflow.NewAdjudicateCommand(), "--list", "--gap", "4"); !strings.Contains(out, "no disagreements") {
		t.Errorf("--gap 4:\n%s", out)
	}

	out := mustCommand(t, db, workflow.NewAdjudicateCommand(), "--adjudicator", "judy", "--turn", id(0), "--take", "ben")
	if !strings.Contains(out, "correctness = 3 (from ben)") {
		t.Errorf("take said %q", out)
	}
	mustCommand(t, db, workflow.NewAdjudicateCommand(), "--adjudicator", "judy", "--turn", id(1), "--take", "ann", "--field", "correctness",
		"--set", "reasoning_completeness=4", "--set", "overall_quality=4")
	for _, bad := range [][]string{
		{"--adjudicator", "judy", "--turn", id(2), "--set", "correctness=9"},
		{"--adjudicator", "judy", "--turn", id(2), "--set", "colour=red"},
		{"--adjudicator", "judy", "--turn", id(2), "--take", "zed"},
		{"--adjudicator", "judy", "--turn", "nope", "--take", "ann"},
		{"--turn", id(2), "--take", "ann"},
	} {
		if _, err := runCommand(t, db, workflow.NewAdjudicateCommand(), bad...); err == nil {
			t.Errorf("m3eval adjudicate %v passed", bad)
		}
	}
	// A bare "m3eval adjudicate" opens the screen, which needs a terminal: the command's
	// (cmd/m3eval/testdata/script/adjudicate.txtar).

	finalOptions := func() *workflow.ExportCommand {
		o := &workflow.ExportCommand{Final: true, Disagree: campaign.DefaultDisagreeOptions()}
		o.Format.Format = "json"
		return o
	}
	data, msg, err := export(t, db, finalOptions())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(msg, "2 adjudicated, 32 agreed, 0 single-annotator; 1 disputed turn left out") {
		t.Errorf("export said %q", msg)
	}
	var recs []struct {
		SampleID string         `json:"sample_id"`
		Label    map[string]any `json:"human_annotation"`
	}
	if err := json.Unmarshal([]byte(data), &recs); err != nil {
		t.Fatal(err)
	}
	if len(recs) != 34 {
		t.Fatalf("%d records", len(recs))
	}
	byID := map[string]map[string]any{}
	for _, r := range recs {
		byID[r.SampleID] = r.Label
	}
	if _, ok := byID[id(2)]; ok {
		t.Error("the unresolved turn was exported")
	}
	l0 := byID[id(0)]
	src0, _ := l0["field_sources"].(map[string]any)
	if l0["final_source"] != "adjudicated" || l0["adjudicator"] != "judy" || l0["correctness"] != float64(3) ||
		src0["correctness"] != "adjudicated:ben" || l0["annotator"] != "final" {
		t.Errorf("turn 0: %v", l0)
	}
	l1 := byID[id(1)]
	src1, _ := l1["field_sources"].(map[string]any)
	if l1["reasoning_completeness"] != float64(4) || src1["reasoning_completeness"] != "adjudicated" || src1["correctness"] != "adjudicated:ann" {
		t.Errorf("turn 1: %v", l1)
	}
	l3 := byID[id(3)]
	if l3["final_source"] != "agreed" || l3["adjudicator"] != nil {
		t.Errorf("turn 3: %v", l3)
	}
	withAnnotator := finalOptions()
	withAnnotator.Labels.Annotator = "ann"
	if _, _, err := export(t, db, withAnnotator); err == nil {
		t.Error("--final with --annotator passed")
	}
	csvOptions := finalOptions()
	csvOptions.Format.Format = "csv"
	csv, _, err := export(t, db, csvOptions)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.SplitN(csv, "\n", 2)[0], "final_source,adjudicator") || !strings.Contains(csv, ",adjudicated,judy") {
		t.Errorf("csv:\n%.600s", csv)
	}
	// The list now shows two decided, one open.
	if out := mustCommand(t, db, workflow.NewAdjudicateCommand(), "--list"); !strings.Contains(out, "3 turns disagree, 1 still open") {
		t.Errorf("list:\n%s", out)
	}
}

// TestExportFinalKeepsFlags (issue 40 item 1): a flagged label of a campaign goes to review:
// adjudicate --list lists it with the reason, export --final keeps "flagged" and the reason
// until --clear-flag, and the list then counts it decided.
func TestExportFinalKeepsFlags(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "flags.db")
	importFiles(t, db, "")
	mustCommand(t, db, &workflow.SampleCommand{}, "--name", "pilot", "--n", "6", "--by", "model", "--seed", "3")
	a := decodeAssign(t, mustCommand(t, db, &workflow.AssignCommand{}, "--sample", "pilot", "--annotators", "alice,bob", "--overlap", "1", "--format", "json"))
	var flagged string
	for _, an := range a.Annotators {
		if an.Name == "alice" {
			flagged = an.SampleIDs[0]
		}
	}
	p := filepath.Join(dir, "alice.jsonl")
	testkit.WriteDemoLabels(t, p, func(int, map[string]any) (int, float64) { return 3, 30 })
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if strings.Contains(l, `"sample_id":"`+flagged+`"`) {
			l = strings.Replace(l, `"human_annotation":{`, `"human_annotation":{"flagged":true,"flag_reason":"image missing; judged from expected answer only",`, 1)
		}
		lines = append(lines, l)
	}
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	importFiles(t, db, "alice", p)

	list := mustCommand(t, db, workflow.NewAdjudicateCommand(), "--list", "--campaign", "pilot")
	if !strings.Contains(list, flagged) || !strings.Contains(list, "flagged by alice: image missing; judged from expected answer only") ||
		!strings.Contains(list, "1 turns disagree or are flagged, 1 still open") {
		t.Fatalf("list:\n%s", list)
	}
	label := func() map[string]any {
		t.Helper()
		o := &workflow.ExportCommand{Final: true, Campaign: "pilot", Disagree: campaign.DefaultDisagreeOptions()}
		o.Format.Format = "json"
		data, _, err := export(t, db, o)
		if err != nil {
			t.Fatal(err)
		}
		var recs []struct {
			SampleID string         `json:"sample_id"`
			Label    map[string]any `json:"human_annotation"`
		}
		if err := json.Unmarshal([]byte(data), &recs); err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if r.SampleID == flagged {
				return r.Label
			}
		}
		t.Fatalf("export --final left %s out:\n%.800s", flagged, data)
		return nil
	}
	if l := label(); l["flagged"] != true || l["flag_reason"] != "alice: image missing; judged from expected answer only" || l["final_source"] != "single" {
		t.Fatalf("export --final of the flagged turn: %v", l)
	}
	if _, err := runCommand(t, db, workflow.NewAdjudicateCommand(), "--adjudicator", "judy", "--turn", a.Annotators[1].SampleIDs[0], "--clear-flag"); err == nil {
		t.Error("--clear-flag on a turn nobody flagged passed")
	}
	if out := mustCommand(t, db, workflow.NewAdjudicateCommand(), "--adjudicator", "judy", "--turn", flagged, "--clear-flag"); !strings.Contains(out, flagged+" flags cleared") {
		t.Errorf("--clear-flag said %q", out)
	}
	if l := label(); l["flagged"] != false || l["flag_reason"] != nil {
		t.Fatalf("export --final after --clear-flag: %v", l)
	}
	if list := mustCommand(t, db, workflow.NewAdjudicateCommand(), "--list", "--campaign", "pilot"); !strings.Contains(list, "0 still open") {
		t.Errorf("list after --clear-flag:\n%s", list)
	}
}
