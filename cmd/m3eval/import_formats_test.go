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
		{"--db", db, "import", "--from", "openai", "--map", "label.x=", "x.jsonl"},
		{"--db", db, "import", "--map", "user_message=q", "x.jsonl"},
		{"--db", db, "import", "--map", "colour=q", "--map", "vlm_response=r", "--map", "user_message=q", "x.jsonl"},
	} {
		_, _, err := runBoth(t, args...)
		var ue *usageError
		if !errors.As(err, &ue) {
			t.Errorf("m3eval %s: %v is not a usage error", strings.Join(args, " "), err)
		}
	}
	// --map reads a lab's own layout; what it cannot find is an error with file and line.
	p := filepath.Join(dir, "lab.jsonl")
	os.WriteFile(p, []byte(`{"q": "Why?", "r": {"text": "Because."}}`+"\n"+`{"q": "And?", "r": {}}`+"\n"), 0o644)
	_, _, err := runBoth(t, "--db", db, "import", "--map", "user_message=q", "--map", "vlm_response=r.text", p)
	if err == nil || !strings.Contains(err.Error(), p+":2: r.text (mapped to vlm_response): bad record: missing") {
		t.Fatalf("error %v", err)
	}
	os.WriteFile(p, []byte(`{"q": "Why?", "r": {"text": "Because."}}`+"\n"), 0o644)
	out, _, err := runBoth(t, "--db", db, "import", "--map", "user_message=q", "--map", "vlm_response=r.text", p)
	if err != nil || !strings.Contains(out, "1 turns new") {
		t.Fatalf("%s %v", out, err)
	}
}

// TestImportLogFromStdin: a chat log on standard input is detected from its first record,
// which is read once and replayed, and imported with its embedded image written out.
func TestImportLogFromStdin(t *testing.T) {
	dir := t.TempDir()
	log, err := os.ReadFile("../../internal/ingest/testdata/logs/openai/chat_log.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	r := runBin(t, dir, log, "--db", "chat.db", "import", "-")
	if r.code != 0 || !strings.Contains(r.stdout, "detected format openai") || !strings.Contains(r.stdout, "3 turns new") ||
		!strings.Contains(r.stdout, "1 embedded images written to chat-media") {
		t.Fatalf("import -: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "chat-media", "*.png")); len(m) != 1 {
		t.Errorf("media files %v", m)
	}
}
