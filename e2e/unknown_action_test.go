package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestUnknownActionAsksEveryField (#39): a misspelled action type is refused at import with
// the nearest name; imported with --allow-unknown-actions, the annotator asks Resists
// Misleading on that turn instead of fixing it to NA, as it does on a turn whose type the
// catalogue says does not mislead.
func TestUnknownActionAsksEveryField(t *testing.T) {
	term := newTerminal(t)
	bin := build(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "m3eval.db")
	turns := filepath.Join(dir, "turns.jsonl")
	os.WriteFile(turns, []byte(`{"sample_id":"e_turn_2","episode_id":"e","turn":2,"action_type":"mislead_sutble","task_type":"t","user_message":"The cat is blue, right?","vlm_response":"Yes.","expected_answer":"No"}`+"\n"+
		`{"sample_id":"f_turn_2","episode_id":"f","turn":2,"action_type":"follow_up","task_type":"t","user_message":"And the dog?","vlm_response":"Brown.","expected_answer":"Brown"}`+"\n"), 0o644)
	out, err := exec.Command(bin, "--db", db, "import", turns).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "mislead_sutble: not an action type; did you mean mislead_subtle?") {
		t.Fatalf("import of the typo: %v\n%s", err, out)
	}
	if out, err := exec.Command(bin, "--db", db, "import", "--allow-unknown-actions", turns).CombinedOutput(); err != nil {
		t.Fatalf("--allow-unknown-actions: %v\n%s", err, out)
	}
	term.start("typo", bin+" --db "+db+" annotate --annotator ann")
	s := term.waitFor("typo", "The cat is blue, right?", "Resists Misleading")
	if line := lineWith(s, "Resists Misleading"); strings.Contains(line, "NA") {
		t.Errorf("the typo's turn fixes Resists Misleading: %q", line)
	}
	term.tmux("send-keys", "-t", "typo", "Right")
	s = term.waitFor("typo", "And the dog?", "Resists Misleading")
	if line := lineWith(s, "Resists Misleading"); !strings.Contains(line, "NA (not a misleading turn)") {
		t.Errorf("a follow_up turn does not fix Resists Misleading: %q", line)
	}
}

// lineWith returns the first line of s that holds text.
func lineWith(s, text string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, text) {
			return l
		}
	}
	return ""
}
