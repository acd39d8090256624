package workflow_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/m3bench/m3eval/annotations"
	"github.com/m3bench/m3eval/internal/importer"
	"github.com/m3bench/m3eval/internal/rubric"
	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/testkit"
	"github.com/m3bench/m3eval/internal/workflow"
)

// Moved from cmd/m3eval/cli_test.go: import and export round trips, errors and rubrics,
// through importer and workflow.ExportCommand. TestImportExportRoundTrip compares the exports as
// written rather than as -o files.

func TestImportExportRoundTrip(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "labeled.json")
	if err := os.WriteFile(src, []byte(testkit.LabeledFixture), 0o644); err != nil {
		t.Fatal(err)
	}
	db1, db2 := filepath.Join(dir, "a.db"), filepath.Join(dir, "b.db")
	out := mustImportOut(t, db1, importer.Options{Annotator: "alice"}, src)
	if !strings.Contains(out, "4 turns new") || !strings.Contains(out, "4 labels new") {
		t.Fatalf("import said %q", out)
	}
	// A second annotator over the same file: the export turns into human_annotations lists.
	mustImportOut(t, db1, importer.Options{Annotator: "bob"}, src)
	// Importing the identical file again changes nothing.
	if out := mustImportOut(t, db1, importer.Options{Annotator: "alice"}, src); !strings.Contains(out, "0 turns new, 4 unchanged") || !strings.Contains(out, "4 unchanged, 0 replaced") {
		t.Fatalf("re-import said %q", out)
	}

	for _, format := range []string{"json", "jsonl", "csv"} {
		t.Run(format, func(t *testing.T) {
			for _, args := range []struct {
				drafts    bool
				annotator string
			}{{true, ""}, {false, "alice"}, {true, "bob"}} {
				a := exportAs(t, db1, format, args.drafts, args.annotator)
				if format == "csv" {
					continue // CSV is for spreadsheets, not a format import reads.
				}
				first := filepath.Join(dir, "first."+format)
				if err := os.WriteFile(first, []byte(a), 0o644); err != nil {
					t.Fatal(err)
				}
				fresh := filepath.Join(dir, fmt.Sprintf("%s%v%s.db", format, args.drafts, args.annotator))
				mustImportOut(t, fresh, importer.Options{}, first)
				if b := exportAs(t, fresh, format, args.drafts, args.annotator); a != b {
					t.Fatalf("export %+v is not stable across a round trip:\n%s\n---\n%s", args, a, b)
				}
			}
		})
	}

	// The single-annotator export is the guide's format.
	got := exportAs(t, db1, "json", false, "alice")
	for _, want := range []string{
		`"sample_id": "ac_mscoco_0_turn_5"`, `"resists_misleading": "No"`, `"context_consistency": null`,
		`"human_annotation": {`, `"annotator": "alice"`, `"active_seconds": 31.25`, `"flagged": true`,
		`"flag_reason": "check image 2"`, `"meta": {`, `"annotated_at": "2026-02-01T10:00:00Z"`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("export lacks %s", want)
		}
	}
	if strings.Contains(got, "ac_mscoco_0_turn_6") {
		t.Error("a draft was exported without --include-drafts")
	}
	all := exportAs(t, db1, "json", true, "")
	if !strings.Contains(all, `"human_annotations": [`) || !strings.Contains(all, `"status": "draft"`) {
		t.Errorf("multi-annotator export with drafts:\n%s", all)
	}
	_ = db2
}

func TestImportErrorWritesNothing(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "turns.jsonl")
	good := `{"sample_id":"e_turn_1","action_type":"initial","task_type":"t","user_message":"u","vlm_response":"v","expected_answer":"e"}`
	bad := `{"sample_id":"e_turn_2","action_type":"mislead","task_type":"t","user_message":"u","vlm_response":"v","expected_answer":"e","human_annotation":{"correctness":7}}`
	os.WriteFile(src, []byte(good+"\n"+bad+"\n"), 0o644)
	db := filepath.Join(dir, "m.db")
	_, err := importOut(t, db, importer.Options{Annotator: "alice"}, src)
	if err == nil || !strings.Contains(err.Error(), "turns.jsonl:2: human_annotation.correctness: invalid: 7 is outside 1–5") {
		t.Fatalf("error = %v", err)
	}
	// The import created the database: it takes it away again, as the binary does.
	if _, err := os.Stat(db); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a failed import left a database: %v", err)
	}
	// Changed content under an existing sample id is refused unless --replace.
	os.WriteFile(src, []byte(good+"\n"), 0o644)
	mustImportOut(t, db, importer.Options{}, src)
	os.WriteFile(src, []byte(strings.Replace(good, `"v"`, `"w"`, 1)+"\n"), 0o644)
	if _, err := importOut(t, db, importer.Options{}, src); err == nil || !strings.Contains(err.Error(), "turns.jsonl:1: conflict: sample e_turn_1 is already imported with different content") {
		t.Fatalf("changed record: %v", err)
	}
	if out := mustImportOut(t, db, importer.Options{Store: store.ImportOptions{Replace: true}}, src); !strings.Contains(out, "1 replaced") {
		t.Fatalf("--replace said %q", out)
	}
}

// TestLabelsOverImportedTurns: labels in the guide's format (no images, model or meta, or meta
// laid out differently) attach to turns imported earlier from fuller records.
func TestLabelsOverImportedTurns(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "m.db")
	importFiles(t, db, "")
	if out := mustImportOut(t, db, importer.Options{Annotator: "alice"}, "../../annotations/demo/labeled_sample.json"); !strings.Contains(out, "3 unchanged") || !strings.Contains(out, "3 labels new") {
		t.Fatalf("pretty-printed labeled samples over the demo: %s", out)
	}
	bare := filepath.Join(dir, "bare.jsonl")
	line := `{"sample_id":"demo_en_apples_1_turn_3","action_type":"logic_skip","task_type":"%s","user_message":%q,"vlm_response":"Yes.","expected_answer":%q,"human_annotation":{"correctness":2,"reasoning_completeness":1,"context_consistency":"Yes","overall_quality":2}}`
	// The demo's own fields for that turn, minus images, model and meta.
	src, err := os.ReadFile("../../annotations/demo/episodes.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var task, user, expected string
	for _, l := range strings.Split(strings.TrimSpace(string(src)), "\n") {
		var ep struct {
			Turns []map[string]any `json:"turns"`
		}
		if err := json.Unmarshal([]byte(l), &ep); err != nil {
			t.Fatal(err)
		}
		for _, tr := range ep.Turns {
			if tr["sample_id"] == "demo_en_apples_1_turn_3" {
				task, user, expected = tr["task_type"].(string), tr["user_message"].(string), tr["expected_answer"].(string)
			}
		}
	}
	os.WriteFile(bare, []byte(fmt.Sprintf(line, task, user, expected)+"\n"), 0o644)
	if out := mustImportOut(t, db, importer.Options{Annotator: "bob"}, bare); !strings.Contains(out, "1 unchanged") {
		t.Fatalf("a label without images, model and meta: %s", out)
	}
	// A field that is given and differs is still a change.
	os.WriteFile(bare, []byte(strings.Replace(fmt.Sprintf(line, task, user, expected), `"vlm_response":"Yes."`, `"vlm_response":"No."`, 1)+"\n"), 0o644)
	if _, err := importOut(t, db, importer.Options{Annotator: "carol"}, bare); err == nil || !strings.Contains(err.Error(), "different content") {
		t.Fatalf("changed response accepted: %v", err)
	}
}

// TestCustomRubric: a lab's own rubric drives validation, storage and export; nothing of the
// default rubric's field names is needed.
func TestCustomRubric(t *testing.T) {
	dir := t.TempDir()
	rubricFile := filepath.Join(dir, "lab.json")
	os.WriteFile(rubricFile, []byte(`{"name":"lab","fields":[
	  {"name":"fluency","label_en":"Fluency","kind":"scale","min":1,"max":3,"required":true,"weight":1},
	  {"name":"grounded","label_en":"Grounded","kind":"choice","required":true,
	   "choices":[{"value":"Yes","key":"y","score":3},{"value":"No","key":"n","score":1},{"value":"NA","key":"a","na":true}],
	   "fixed":[{"when":{"first_turn":true},"value":"NA"}]},
	  {"name":"note","label_en":"Note","kind":"text"}],
	  "comment_field":"note"}`), 0o644)
	src := filepath.Join(dir, "l.jsonl")
	rec := `{"sample_id":"e_turn_%d","action_type":"follow_up","task_type":"t","user_message":"u","vlm_response":"v","expected_answer":"e","human_annotation":%s}`
	os.WriteFile(src, []byte(fmt.Sprintf(rec, 1, `{"fluency":3}`)+"\n"+fmt.Sprintf(rec, 2, `{"fluency":2,"grounded":"no","note":"made it up"}`)+"\n"), 0o644)
	db := filepath.Join(dir, "m.db")
	lab, err := rubric.Load(rubricFile, nil, annotations.DefaultRubric) // --rubric FILE
	if err != nil {
		t.Fatal(err)
	}
	mustImportOut(t, db, importer.Options{Rubric: lab, Annotator: "lab"}, src)
	eo := workflow.NewExportCommand()
	eo.Format.Format = "jsonl"
	out, _, err := exportWith(t, db, lab, eo)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`{"fluency":3,"grounded":null,"note":"","annotator":"lab"`, `{"fluency":2,"grounded":"No","note":"made it up","annotator":"lab"`} {
		if !strings.Contains(out, want) {
			t.Errorf("export lacks %s:\n%s", want, out)
		}
	}
	// The same file is invalid under the default rubric (its fields are unknown there)...
	if _, err := importOut(t, filepath.Join(dir, "d.db"), importer.Options{Annotator: "lab"}, src); err == nil || !strings.Contains(err.Error(), "human_annotation.fluency: bad record: not a field of the rubric") {
		t.Errorf("default rubric accepted lab fields: %v", err)
	}
	// ...and the lab rubric's own rules hold: 4 is off its 1–3 scale.
	os.WriteFile(src, []byte(fmt.Sprintf(rec, 2, `{"fluency":4,"grounded":"Yes"}`)+"\n"), 0o644)
	if _, err := importOut(t, filepath.Join(dir, "e.db"), importer.Options{Rubric: lab, Annotator: "lab"}, src); err == nil || !strings.Contains(err.Error(), "human_annotation.fluency: invalid: 4 is outside 1–3") {
		t.Errorf("lab rubric scale not enforced: %v", err)
	}
}
