package main

import (
	"github.com/m3bench/m3eval/internal/testkit"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDashIsStandardInput: "-" reads standard input for import, import-scores and agree, and
// errors name it "stdin" with the exact line.
func TestDashIsStandardInput(t *testing.T) {
	dir := t.TempDir()
	r := runBin(t, dir, []byte(testkit.LabeledFixture), "--db", "team.db", "import", "--annotator", "alice", "-")
	if r.code != 0 || !strings.Contains(r.stdout, "stdin: 4 turns new") {
		t.Fatalf("import -: %d %q %s", r.code, r.stdout, r.stderr)
	}
	bad := `{"sample_id":"e_turn_1","action_type":"initial","task_type":"t","user_message":"u","vlm_response":"v","expected_answer":"e"}` + "\n\n" + `{"sample_id":"e_turn_2","turn":"two"}` + "\n"
	if r := runBin(t, dir, []byte(bad), "--db", "team.db", "import", "-"); r.code != 1 || !strings.Contains(r.stderr, "stdin:3: turn: bad record") {
		t.Errorf("import - of a bad record: %d %s", r.code, r.stderr)
	}
	scores := "sample_id,correctness\nac_mscoco_0_turn_1,4\n"
	if r := runBin(t, dir, []byte(scores), "--db", "team.db", "import-scores", "--judge", "j", "-"); r.code != 0 || !strings.Contains(r.stdout, "stdin: judge j: 1 scores new") {
		t.Errorf("import-scores -: %d %q %s", r.code, r.stdout, r.stderr)
	}
	ratings, err := os.ReadFile(filepath.Join(scoreFixture, "ratings.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if r := runBin(t, dir, ratings, "agree", "-", "--format", "json"); r.code != 0 || !strings.Contains(r.stdout, `"fields"`) {
		t.Errorf("agree -: %d %.200s %s", r.code, r.stdout, r.stderr)
	}
	if r := runBin(t, dir, ratings, "agree", "-", "--auto", "-"); r.code != 2 || !strings.Contains(r.stderr, "one file only") {
		t.Errorf("agree - --auto -: %d %s", r.code, r.stderr)
	}
	// --rubric - reads the rubric from standard input.
	rub, err := os.ReadFile("../../annotations/rubric.json")
	if err != nil {
		t.Fatal(err)
	}
	if r := runBin(t, dir, rub, "--db", "team.db", "--rubric", "-", "export", "--format", "jsonl"); r.code != 0 || strings.Count(r.stdout, "\n") != 3 {
		t.Errorf("--rubric -: %d %q %s", r.code, r.stdout, r.stderr)
	}
	if r := runBin(t, dir, rub, "--db", "team.db", "--rubric", "-", "import", "-"); r.code != 2 {
		t.Errorf("--rubric - with import -: %d %s", r.code, r.stderr)
	}
}

// TestImportOfNothingSaysSo: an empty file, [] and blank lines import nothing, and say so.
func TestImportOfNothingSaysSo(t *testing.T) {
	dir := t.TempDir()
	for name, src := range map[string]string{"empty.json": "", "array.json": "[]", "blank.jsonl": "\n  \n\n", "bom.json": "\ufeff[ ]\n"} {
		os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644)
		out := mustRun(t, "--db", filepath.Join(dir, "m.db"), "import", filepath.Join(dir, name))
		if !strings.Contains(out, "no records in the file: imported nothing") {
			t.Errorf("%s: %q", name, out)
		}
	}
}
