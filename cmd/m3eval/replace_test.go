package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReplacedTurnLabelsNeverSilentlyStay: a mislead turn rewritten as follow_up loses its
// "resists_misleading: No" (the field is fixed to NA now), its label becomes a draft marked
// stale and is listed; the export with drafts imports into a fresh database as it was; with
// --drop-labels the labels go.
func TestReplacedTurnLabelsNeverSilentlyStay(t *testing.T) {
	dir := t.TempDir()
	db := labeledDB(t, dir)
	mustRun(t, "--db", db, "import", "--annotator", "bob", filepath.Join(dir, "labeled.json"))
	changed := `{"sample_id":"ac_mscoco_0_turn_5","action_type":"follow_up","task_type":"spatial","user_message":"Which image has the person highest?","vlm_response":"Yes, Image 1 has the person at the highest position.","expected_answer":"Image 2 has the person topmost"}` + "\n"
	src := filepath.Join(dir, "changed.jsonl")
	os.WriteFile(src, []byte(changed), 0o644)
	out := mustRun(t, "--db", db, "import", "--replace", src)
	for _, want := range []string{"1 replaced", "2 labels were made on earlier content of replaced turns",
		"ac_mscoco_0_turn_5  alice: was done; kept as a draft to re-confirm (m3eval annotate); removed, not allowed for the new content: resists_misleading=No",
		"ac_mscoco_0_turn_5  bob: was done"} {
		if !strings.Contains(out, want) {
			t.Errorf("import --replace lacks %q:\n%s", want, out)
		}
	}
	if st := mustRun(t, "--db", db, "status"); !strings.Contains(st, "alice: 1 drafts were made on earlier content") {
		t.Errorf("status: %s", st)
	}
	done := mustRun(t, "--db", db, "export", "--format", "jsonl")
	if strings.Contains(done, "ac_mscoco_0_turn_5") {
		t.Errorf("a stale label was exported as done:\n%s", done)
	}
	all := mustRun(t, "--db", db, "export", "--include-drafts", "--annotator", "alice", "--format", "jsonl")
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
	mustRun(t, "--db", fresh, "import", exp)
	if again := mustRun(t, "--db", fresh, "export", "--include-drafts", "--format", "jsonl"); again != all {
		t.Errorf("stale labels do not round-trip:\n%s\n---\n%s", all, again)
	}
	if out := mustRun(t, "--db", db, "import", exp); !strings.Contains(out, "0 labels new, 4 unchanged") {
		t.Errorf("re-import of the export: %s", out)
	}

	// --drop-labels deletes them instead; it needs --replace.
	db2 := filepath.Join(dir, "two.db")
	mustRun(t, "--db", db2, "import", "--annotator", "alice", filepath.Join(dir, "labeled.json"))
	if out := mustRun(t, "--db", db2, "import", "--replace", "--drop-labels", src); !strings.Contains(out, "ac_mscoco_0_turn_5  alice: deleted (--drop-labels)") {
		t.Errorf("--drop-labels: %s", out)
	}
	if all := mustRun(t, "--db", db2, "export", "--include-drafts"); strings.Contains(all, "ac_mscoco_0_turn_5") {
		t.Error("--drop-labels kept the label")
	}
	if _, err := run(t, "--db", db2, "import", "--drop-labels", src); err == nil {
		t.Error("--drop-labels without --replace accepted")
	}
	// A file that replaces the turn and gives a new label with it: nothing is left stale.
	withLabel := strings.TrimSuffix(strings.TrimSpace(changed), "}") + `,"human_annotation":{"correctness":2,"reasoning_completeness":2,"context_consistency":"Yes","overall_quality":2}}` + "\n"
	relabel := filepath.Join(dir, "relabel.jsonl")
	os.WriteFile(relabel, []byte(strings.Replace(withLabel, "highest?", "highest now?", 1)), 0o644)
	out = mustRun(t, "--db", db, "import", "--annotator", "alice", "--replace", relabel)
	if !strings.Contains(out, "1 labels were made on earlier content") || !strings.Contains(out, "bob: kept as a draft") || strings.Contains(out, "alice:") {
		t.Errorf("a label given with the replaced turn is listed as stale:\n%s", out)
	}
	// Unchanged turns under --replace keep their labels as they are.
	if out := mustRun(t, "--db", db2, "import", "--annotator", "alice", "--replace", filepath.Join(dir, "labeled.json")); strings.Contains(out, "earlier content") || !strings.Contains(out, "3 unchanged, 1 replaced") {
		t.Errorf("identical records marked labels stale: %s", out)
	}
}
