package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestReimportIsUnchangedWhenever: the guide's labeled_sample.json (no annotated_at) imported,
// and imported again seconds later, is "unchanged", not a conflict; so is an export of the
// same database imported back into it, drafts included.
func TestReimportIsUnchangedWhenever(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "m.db")
	sample := "../../annotations/demo/labeled_sample.json"
	mustRun(t, "--db", db, "import", "--annotator", "alice", sample)
	time.Sleep(1100 * time.Millisecond) // the import's clock has whole seconds
	out, err := run(t, "--db", db, "import", "--annotator", "alice", sample)
	if err != nil || !strings.Contains(out, "3 labels unchanged") && !strings.Contains(out, "0 labels new, 3 unchanged, 0 replaced") {
		t.Fatalf("re-import of labeled_sample.json: %v %q", err, out)
	}

	src := filepath.Join(dir, "labeled.json")
	os.WriteFile(src, []byte(labeledFixture), 0o644)
	mustRun(t, "--db", db, "import", "--annotator", "bob", src)
	for _, format := range []string{"json", "jsonl"} {
		exp := filepath.Join(dir, "export."+format)
		mustRun(t, "--db", db, "export", "--include-drafts", "--format", format, "-o", exp)
		out, err := run(t, "--db", db, "import", exp)
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
		_, err := run(t, "--db", filepath.Join(dir, fmt.Sprint(i, ".db")), "import", "--annotator", "a", src)
		if err == nil || !strings.Contains(err.Error(), "l.jsonl:2: human_annotation.active_seconds: bad record") {
			t.Errorf("active_seconds %s: %v", v, err)
		}
	}
	src := filepath.Join(dir, "ok.jsonl")
	os.WriteFile(src, []byte(strings.Replace(rec, "%s", "86400.5", 1)+"\n"), 0o644)
	mustRun(t, "--db", filepath.Join(dir, "m.db"), "import", "--annotator", "a", src)
	if out := mustRun(t, "--db", filepath.Join(dir, "m.db"), "export", "--include-drafts", "--format", "jsonl"); !strings.Contains(out, `"active_seconds":86400.5`) {
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
	mustRun(t, "--db", a, "import", "--annotator", "alice", src)
	exp := filepath.Join(dir, "x.jsonl")
	mustRun(t, "--db", a, "export", "--include-drafts", "--format", "jsonl", "-o", exp)
	mustRun(t, "--db", b, "import", exp)
	for _, db := range []string{a, b} {
		out := mustRun(t, "--db", db, "export", "--include-drafts", "--format", "jsonl")
		if !strings.Contains(out, `"resists_misleading":null,"context_consistency":"NA"`) {
			t.Errorf("%s: NA and unanswered mixed up: %s", filepath.Base(db), out)
		}
	}
	csv := mustRun(t, "--db", b, "export", "--include-drafts", "--format", "csv")
	if !strings.Contains(csv, ",draft,2,,,NA,,,") {
		t.Errorf("CSV writes NA and unanswered alike:\n%s", csv)
	}
}
