package workflow_test

// Moved from cmd/m3eval/reimport_test.go, replace_test.go and csv_test.go: import and
// export semantics, through importer and workflow.ExportCommand (importOut, exportAs).

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/m3bench/m3eval/internal/importer"
	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/testkit"
)

// TestReimportIsUnchangedWhenever: the guide's labeled_sample.json (no annotated_at) imported,
// and imported again seconds later, is "unchanged", not a conflict; so is an export of the
// same database imported back into it, drafts included.
func TestReimportIsUnchangedWhenever(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "m.db")
	sample := "../../annotations/demo/labeled_sample.json"
	mustImportOut(t, db, importer.Options{Annotator: "alice"}, sample)
	time.Sleep(1100 * time.Millisecond) // the import's clock has whole seconds
	out, err := importOut(t, db, importer.Options{Annotator: "alice"}, sample)
	if err != nil || !strings.Contains(out, "3 labels unchanged") && !strings.Contains(out, "0 labels new, 3 unchanged, 0 replaced") {
		t.Fatalf("re-import of labeled_sample.json: %v %q", err, out)
	}

	src := filepath.Join(dir, "labeled.json")
	os.WriteFile(src, []byte(testkit.LabeledFixture), 0o644)
	mustImportOut(t, db, importer.Options{Annotator: "bob"}, src)
	for _, format := range []string{"json", "jsonl"} {
		exp := filepath.Join(dir, "export."+format)
		if err := os.WriteFile(exp, []byte(exportAs(t, db, format, true, "")), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := importOut(t, db, importer.Options{}, exp)
		if err != nil || !strings.Contains(out, "0 turns new, 7 unchanged, 0 replaced; 0 labels new, 7 unchanged, 0 replaced") {
			t.Errorf("importing the %s export back: %v %q", format, err, out)
		}
	}
}

// TestActiveSecondsOutOfRange: a time that overflows (1e16 s as milliseconds) or is not a
// plausible time spent on one label is an error naming file, line and field.
func TestActiveSecondsOutOfRange(t *testing.T) {
	dir := t.TempDir()
	rec := `{"sample_id":"e_turn_1","action_type":"initial","task_type":"t","user_message":"u","vlm_response":"v","expected_answer":"e","human_annotation":{"correctness":3,"status":"draft","active_seconds":%s}}`
	for i, v := range []string{"1e16", "1e300", "-1", "40000000", `"12"`} {
		src := filepath.Join(dir, "l.jsonl")
		os.WriteFile(src, []byte("\n"+strings.Replace(rec, "%s", v, 1)+"\n"), 0o644)
		_, err := importOut(t, filepath.Join(dir, fmt.Sprint(i, ".db")), importer.Options{Annotator: "a"}, src)
		if err == nil || !strings.Contains(err.Error(), "l.jsonl:2: human_annotation.active_seconds: bad record") {
			t.Errorf("active_seconds %s: %v", v, err)
		}
	}
	src := filepath.Join(dir, "ok.jsonl")
	os.WriteFile(src, []byte(strings.Replace(rec, "%s", "86400.5", 1)+"\n"), 0o644)
	mustImportOut(t, filepath.Join(dir, "m.db"), importer.Options{Annotator: "a"}, src)
	if out := exportAs(t, filepath.Join(dir, "m.db"), "jsonl", true, ""); !strings.Contains(out, `"active_seconds":86400.5`) {
		t.Errorf("export: %s", out)
	}
}

// TestDraftNAIsNotUnanswered: a draft's explicit NA and a draft's unanswered field survive
// export → import as what they were.
func TestDraftNAIsNotUnanswered(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "d.jsonl")
	// A mislead turn after the first: context_consistency may be Yes, No or NA; the annotator
	// chose NA and left resists_misleading (Yes or No here) unanswered.
	os.WriteFile(src, []byte(`{"sample_id":"e_turn_2","action_type":"mislead","task_type":"t","user_message":"u","vlm_response":"v","expected_answer":"e","human_annotation":{"correctness":2,"context_consistency":"NA","status":"draft"}}`+"\n"), 0o644)
	a, b := filepath.Join(dir, "a.db"), filepath.Join(dir, "b.db")
	mustImportOut(t, a, importer.Options{Annotator: "alice"}, src)
	exp := filepath.Join(dir, "x.jsonl")
	if err := os.WriteFile(exp, []byte(exportAs(t, a, "jsonl", true, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	mustImportOut(t, b, importer.Options{}, exp)
	for _, db := range []string{a, b} {
		out := exportAs(t, db, "jsonl", true, "")
		if !strings.Contains(out, `"resists_misleading":null,"context_consistency":"NA"`) {
			t.Errorf("%s: NA and unanswered mixed up: %s", filepath.Base(db), out)
		}
	}
	csv := exportAs(t, b, "csv", true, "")
	if !strings.Contains(csv, ",draft,2,,,NA,,,") {
		t.Errorf("CSV writes NA and unanswered alike:\n%s", csv)
	}
}

// labeledDB imports testkit.LabeledFixture for alice into dir/team.db (and writes it as
// dir/labeled.json).
func labeledDB(t *testing.T, dir string) string {
	t.Helper()
	src := filepath.Join(dir, "labeled.json")
	if err := os.WriteFile(src, []byte(testkit.LabeledFixture), 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "team.db")
	mustImportOut(t, db, importer.Options{Annotator: "alice"}, src)
	return db
}

// TestReplacedTurnLabelsNeverSilentlyStay: a mislead turn rewritten as follow_up loses its
// "resists_misleading: No" (the field is fixed to NA now), its label becomes a draft marked
// stale and is listed; the export with drafts imports into a fresh database as it was; with
// --drop-labels the labels go.
func TestReplacedTurnLabelsNeverSilentlyStay(t *testing.T) {
	dir := t.TempDir()
	db := labeledDB(t, dir)
	mustImportOut(t, db, importer.Options{Annotator: "bob"}, filepath.Join(dir, "labeled.json"))
	changed := `{"sample_id":"ac_mscoco_0_turn_5","action_type":"follow_up","task_type":"spatial","user_message":"Which image has the person highest?","vlm_response":"Yes, Image 1 has the person at the highest position.","expected_answer":"Image 2 has the person topmost"}` + "\n"
	src := filepath.Join(dir, "changed.jsonl")
	os.WriteFile(src, []byte(changed), 0o644)
	out := mustImportOut(t, db, importer.Options{Store: store.ImportOptions{Replace: true}}, src)
	for _, want := range []string{"1 replaced", "2 labels were made on earlier content of replaced turns",
		"ac_mscoco_0_turn_5  alice: was done; kept as a draft to re-confirm (m3eval annotate); removed, not allowed for the new content: resists_misleading=No",
		"ac_mscoco_0_turn_5  bob: was done"} {
		if !strings.Contains(out, want) {
			t.Errorf("import --replace lacks %q:\n%s", want, out)
		}
	}
	if st := statusOut(t, db); !strings.Contains(st, "alice: 1 drafts were made on earlier content") {
		t.Errorf("status: %s", st)
	}
	done := exportAs(t, db, "jsonl", false, "")
	if strings.Contains(done, "ac_mscoco_0_turn_5") {
		t.Errorf("a stale label was exported as done:\n%s", done)
	}
	all := exportAs(t, db, "jsonl", true, "alice")
	var line string
	for _, l := range strings.Split(all, "\n") {
		if strings.Contains(l, "ac_mscoco_0_turn_5") {
			line = l
		}
	}
	if !strings.Contains(line, `"resists_misleading":"NA"`) || !strings.Contains(line, `"status":"draft","stale":true`) || !strings.Contains(line, `"correctness":1`) {
		t.Errorf("stale label exported as %s", line)
	}
	// The export imports anywhere, and comes back the same.
	exp := filepath.Join(dir, "alice.jsonl")
	os.WriteFile(exp, []byte(all), 0o644)
	fresh := filepath.Join(dir, "fresh.db")
	mustImportOut(t, fresh, importer.Options{}, exp)
	if again := exportAs(t, fresh, "jsonl", true, ""); again != all {
		t.Errorf("stale labels do not round-trip:\n%s\n---\n%s", all, again)
	}
	if out := mustImportOut(t, db, importer.Options{}, exp); !strings.Contains(out, "0 labels new, 4 unchanged") {
		t.Errorf("re-import of the export: %s", out)
	}

	// --drop-labels deletes them instead; it needs --replace.
	db2 := filepath.Join(dir, "two.db")
	mustImportOut(t, db2, importer.Options{Annotator: "alice"}, filepath.Join(dir, "labeled.json"))
	if out := mustImportOut(t, db2, importer.Options{Store: store.ImportOptions{Replace: true, DropLabels: true}}, src); !strings.Contains(out, "ac_mscoco_0_turn_5  alice: deleted (--drop-labels)") {
		t.Errorf("--drop-labels: %s", out)
	}
	if all := exportAs(t, db2, "json", true, ""); strings.Contains(all, "ac_mscoco_0_turn_5") {
		t.Error("--drop-labels kept the label")
	}
	// --drop-labels without --replace is refused by the command's argument check
	// (cmd/m3eval/testdata/script/import.txtar).
	// A file that replaces the turn and gives a new label with it: nothing is left stale.
	withLabel := strings.TrimSuffix(strings.TrimSpace(changed), "}") + `,"human_annotation":{"correctness":2,"reasoning_completeness":2,"context_consistency":"Yes","overall_quality":2}}` + "\n"
	relabel := filepath.Join(dir, "relabel.jsonl")
	os.WriteFile(relabel, []byte(strings.Replace(withLabel, "highest?", "highest now?", 1)), 0o644)
	out = mustImportOut(t, db, importer.Options{Annotator: "alice", Store: store.ImportOptions{Replace: true}}, relabel)
	if !strings.Contains(out, "1 labels were made on earlier content") || !strings.Contains(out, "bob: kept as a draft") || strings.Contains(out, "alice:") {
		t.Errorf("a label given with the replaced turn is listed as stale:\n%s", out)
	}
	// Unchanged turns under --replace keep their labels as they are.
	if out := mustImportOut(t, db2, importer.Options{Annotator: "alice", Store: store.ImportOptions{Replace: true}}, filepath.Join(dir, "labeled.json")); strings.Contains(out, "earlier content") || !strings.Contains(out, "3 unchanged, 1 replaced") {
		t.Errorf("identical records marked labels stale: %s", out)
	}
}
