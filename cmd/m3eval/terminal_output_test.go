package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestOutputToATerminalIsNeutralized: text from data (a comment with an OSC title sequence,
// BEL, a C1 CSI and U+202E) reaches a file or a pipe as it is, JSON with the controls escaped
// as \u…, and a terminal neutralized, in every format (issue 24 item 7: export --format csv
// on a terminal changed the pane title and cleared the screen).
func TestOutputToATerminalIsNeutralized(t *testing.T) {
	dir := t.TempDir()
	hostile := "bad \x1b]0;pwned\x07 \u009b2J \u202egnp.exe end"
	label := `{"sample_id":"e1_turn_2","episode_id":"e1","turn":2,"action_type":"follow_up","task_type":"t","user_message":"u",` +
		`"vlm_response":"v","expected_answer":"e","human_annotation":{"annotator":"alice","status":"draft","correctness":3,"comments":` +
		strings.ReplaceAll(strings.ReplaceAll(strings.ReplaceAll(jsonQuote(hostile), "\x1b", `\u001b`), "\x07", `\u0007`), "\u009b", `\u009b`) + `}}`
	src := filepath.Join(dir, "labels.jsonl")
	if err := os.WriteFile(src, []byte(label+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "t.db")
	if out, err := exec.Command(testBinary(t), "--db", db, "import", src).CombinedOutput(); err != nil {
		t.Fatalf("import: %v\n%s", err, out)
	}
	// A pipe: CSV as it is.
	out, err := exec.Command(testBinary(t), "--db", db, "export", "--format", "csv", "--include-drafts").Output()
	if err != nil || !strings.Contains(string(out), hostile) {
		t.Fatalf("export csv to a pipe: %v\n%q", err, out)
	}
	// A file: JSON with the controls escaped, the same text when read back.
	jsonFile := filepath.Join(dir, "out.json")
	if out, err := exec.Command(testBinary(t), "--db", db, "export", "--include-drafts", "-o", jsonFile).CombinedOutput(); err != nil {
		t.Fatalf("export json: %v\n%s", err, out)
	}
	b, _ := os.ReadFile(jsonFile)
	for _, esc := range []string{`\u001b]0;pwned\u0007`, `\u009b2J`, `\u202egnp.exe`} {
		if !strings.Contains(string(b), esc) {
			t.Errorf("the JSON file lacks %s:\n%s", esc, b)
		}
	}
	if strings.ContainsAny(string(b), "\x1b\x07\u009b\u202e") {
		t.Errorf("the JSON file holds raw controls:\n%q", b)
	}
	// A terminal: nothing for it to act on, in CSV, JSON and the table.
	for _, args := range [][]string{
		{"export", "--format", "csv", "--include-drafts"},
		{"export", "--format", "jsonl", "--include-drafts"},
		{"export", "--include-drafts"},
	} {
		screen, code := runPty(t, dir, append([]string{"--db", db}, args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d\n%s", args, code, screen)
		}
		if strings.ContainsAny(screen, "\x07\u009b\u202e") || strings.Contains(screen, "\x1b]") {
			t.Errorf("%v on a terminal passed a control through:\n%q", args, screen)
		}
		if !strings.Contains(screen, "pwned") {
			t.Errorf("%v on a terminal lost the text:\n%q", args, screen)
		}
	}
}

func jsonQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
