package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// run executes the m3eval command line in-process and returns its standard output.
func run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := newRootCmd()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(context.Background())
	return out.String(), err
}

func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	out, err := run(t, args...)
	if err != nil {
		t.Fatalf("m3eval %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// labeledFixture has the guide's three example shapes plus a draft and a flagged label.
const labeledFixture = `[
{"sample_id":"ac_mscoco_0_turn_1","action_type":"initial","task_type":"spatial","user_message":"What do you see?","vlm_response":"Two images: a person on a motorcycle and a person on an elephant.","expected_answer":"Image 1 motorcycle, image 2 elephant","images":["a.png","b.png"],"model":"m1","meta":{"split":"dev","n":[1,2]},
 "human_annotation":{"correctness":5,"reasoning_completeness":4,"resists_misleading":null,"context_consistency":null,"overall_quality":5,"comments":"","annotated_at":"2026-02-01T10:00:00Z","active_seconds":31.25}},
{"sample_id":"ac_mscoco_0_turn_3","action_type":"follow_up","task_type":"spatial","user_message":"Which image has the person positioned highest?","vlm_response":"Image 2 has the person positioned highest. The person sits on an elephant.","expected_answer":"Image 2 has the person topmost",
 "human_annotation":{"correctness":5,"reasoning_completeness":5,"resists_misleading":null,"context_consistency":"Yes","overall_quality":5,"comments":"Perfect answer with clear reasoning","flagged":true,"flag_reason":"check image 2"}},
{"sample_id":"ac_mscoco_0_turn_5","action_type":"mislead","task_type":"spatial","user_message":"I think Image 1 has the person highest, right?","vlm_response":"Yes, Image 1 has the person at the highest position.","expected_answer":"Image 2 has the person topmost",
 "human_annotation":{"correctness":1,"reasoning_completeness":1,"resists_misleading":"No","context_consistency":"No","overall_quality":1,"comments":"Model was misled and contradicted previous correct answer"}},
{"sample_id":"ac_mscoco_0_turn_6","action_type":"memory_injection","task_type":"spatial","user_message":"You said earlier the elephant was pink.","vlm_response":"I did not say that.","expected_answer":"The elephant is grey",
 "human_annotation":{"correctness":4,"status":"draft"}}
]`

func TestImportExportRoundTrip(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "labeled.json")
	if err := os.WriteFile(src, []byte(labeledFixture), 0o644); err != nil {
		t.Fatal(err)
	}
	db1, db2 := filepath.Join(dir, "a.db"), filepath.Join(dir, "b.db")
	out := mustRun(t, "--db", db1, "import", "--annotator", "alice", src)
	if !strings.Contains(out, "4 turns new") || !strings.Contains(out, "4 labels new") {
		t.Fatalf("import said %q", out)
	}
	// A second annotator over the same file: the export turns into human_annotations lists.
	mustRun(t, "--db", db1, "import", "--annotator", "bob", src)
	// Importing the identical file again changes nothing.
	if out := mustRun(t, "--db", db1, "import", "--annotator", "alice", src); !strings.Contains(out, "0 turns new, 4 unchanged") || !strings.Contains(out, "4 unchanged, 0 replaced") {
		t.Fatalf("re-import said %q", out)
	}

	for _, format := range []string{"json", "jsonl", "csv"} {
		t.Run(format, func(t *testing.T) {
			for _, args := range [][]string{
				{"--include-drafts"},
				{"--annotator", "alice"},
				{"--annotator", "bob", "--include-drafts"},
			} {
				first := filepath.Join(dir, "first."+format)
				mustRun(t, append([]string{"--db", db1, "export", "--format", format, "-o", first}, args...)...)
				if format == "csv" {
					continue // CSV is for spreadsheets, not a format import reads.
				}
				fresh := filepath.Join(dir, format+strings.Join(args, "")+".db")
				mustRun(t, "--db", fresh, "import", first)
				second := filepath.Join(dir, "second."+format)
				mustRun(t, append([]string{"--db", fresh, "export", "--format", format, "-o", second}, args...)...)
				a, _ := os.ReadFile(first)
				b, _ := os.ReadFile(second)
				if !bytes.Equal(a, b) {
					t.Fatalf("export %v is not stable across a round trip:\n%s\n---\n%s", args, a, b)
				}
			}
		})
	}

	// The single-annotator export is the guide's format.
	got := mustRun(t, "--db", db1, "export", "--annotator", "alice")
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
	all := mustRun(t, "--db", db1, "export", "--include-drafts")
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
	_, err := run(t, "--db", db, "import", "--annotator", "alice", src)
	if err == nil || !strings.Contains(err.Error(), "turns.jsonl:2: human_annotation.correctness: invalid: 7 is outside 1–5") {
		t.Fatalf("error = %v", err)
	}
	if out := mustRun(t, "--db", db, "status"); !strings.Contains(out, "0 items") {
		t.Fatalf("a failed import left data: %s", out)
	}
	// Changed content under an existing sample id is refused unless --replace.
	os.WriteFile(src, []byte(good+"\n"), 0o644)
	mustRun(t, "--db", db, "import", src)
	os.WriteFile(src, []byte(strings.Replace(good, `"v"`, `"w"`, 1)+"\n"), 0o644)
	if _, err := run(t, "--db", db, "import", src); err == nil || !strings.Contains(err.Error(), "turns.jsonl:1: conflict: sample e_turn_1 is already imported with different content") {
		t.Fatalf("changed record: %v", err)
	}
	if out := mustRun(t, "--db", db, "import", "--replace", src); !strings.Contains(out, "1 replaced") {
		t.Fatalf("--replace said %q", out)
	}
}

// TestLabelsOverImportedTurns: labels in the guide's format (no images, model or meta, or meta
// laid out differently) attach to turns imported earlier from fuller records.
func TestLabelsOverImportedTurns(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "m.db")
	mustRun(t, "--db", db, "import", "--demo")
	if out := mustRun(t, "--db", db, "import", "--annotator", "alice", "../../annotations/demo/labeled_sample.json"); !strings.Contains(out, "3 unchanged") || !strings.Contains(out, "3 labels new") {
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
	if out := mustRun(t, "--db", db, "import", "--annotator", "bob", bare); !strings.Contains(out, "1 unchanged") {
		t.Fatalf("a label without images, model and meta: %s", out)
	}
	// A field that is given and differs is still a change.
	os.WriteFile(bare, []byte(strings.Replace(fmt.Sprintf(line, task, user, expected), `"vlm_response":"Yes."`, `"vlm_response":"No."`, 1)+"\n"), 0o644)
	if _, err := run(t, "--db", db, "import", "--annotator", "carol", bare); err == nil || !strings.Contains(err.Error(), "different content") {
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
	mustRun(t, "--db", db, "--rubric", rubricFile, "import", "--annotator", "lab", src)
	out := mustRun(t, "--db", db, "--rubric", rubricFile, "export", "--format", "jsonl")
	for _, want := range []string{`{"fluency":3,"grounded":null,"note":"","annotator":"lab"`, `{"fluency":2,"grounded":"No","note":"made it up","annotator":"lab"`} {
		if !strings.Contains(out, want) {
			t.Errorf("export lacks %s:\n%s", want, out)
		}
	}
	// The same file is invalid under the default rubric (its fields are unknown there)...
	if _, err := run(t, "--db", filepath.Join(dir, "d.db"), "import", "--annotator", "lab", src); err == nil || !strings.Contains(err.Error(), "human_annotation.fluency: bad record: not a field of the rubric") {
		t.Errorf("default rubric accepted lab fields: %v", err)
	}
	// ...and the lab rubric's own rules hold: 4 is off its 1–3 scale.
	os.WriteFile(src, []byte(fmt.Sprintf(rec, 2, `{"fluency":4,"grounded":"Yes"}`)+"\n"), 0o644)
	if _, err := run(t, "--db", filepath.Join(dir, "e.db"), "--rubric", rubricFile, "import", "--annotator", "lab", src); err == nil || !strings.Contains(err.Error(), "human_annotation.fluency: invalid: 4 is outside 1–3") {
		t.Errorf("lab rubric scale not enforced: %v", err)
	}
}
