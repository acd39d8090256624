package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestImportFromUsage(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "t.db")
	for _, args := range [][]string{
		{"--db", db, "import", "--from", "csv", "x.jsonl"},
		{"--db", db, "import", "--from", "openai", "--map", "user_message=q", "x.jsonl"},
		{"--db", db, "import", "--map", "user_message=q", "x.jsonl"},
		{"--db", db, "import", "--map", "colour=q", "--map", "vlm_response=r", "--map", "user_message=q", "x.jsonl"},
	} {
		_, _, err := illusionRun(t, args...)
		var ue *usageError
		if !errors.As(err, &ue) {
			t.Errorf("m3eval %s: %v is not a usage error", strings.Join(args, " "), err)
		}
	}
	// --map reads a lab's own layout; what it cannot find is an error with file and line.
	p := filepath.Join(dir, "lab.jsonl")
	os.WriteFile(p, []byte(`{"q": "Why?", "r": {"text": "Because."}}`+"\n"+`{"q": "And?", "r": {}}`+"\n"), 0o644)
	_, _, err := illusionRun(t, "--db", db, "import", "--map", "user_message=q", "--map", "vlm_response=r.text", p)
	if err == nil || !strings.Contains(err.Error(), p+":2: r.text: bad record: missing") {
		t.Fatalf("error %v", err)
	}
	os.WriteFile(p, []byte(`{"q": "Why?", "r": {"text": "Because."}}`+"\n"), 0o644)
	out, _, err := illusionRun(t, "--db", db, "import", "--map", "user_message=q", "--map", "vlm_response=r.text", p)
	if err != nil || !strings.Contains(out, "1 turns new") {
		t.Fatalf("%s %v", out, err)
	}
}
