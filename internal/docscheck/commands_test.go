package docscheck

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestCommandsAsTheShellSeesThem: calls are found in ```sh blocks only, after && and ;, in
// pipes, in the background and inside $( ); quotes and continuations are the shell's; a word
// the shell computes is Unknown; lines are the Markdown file's; bad shell is an error.
func TestCommandsAsTheShellSeesThem(t *testing.T) {
	dir := t.TempDir()
	doc := filepath.Join(dir, "a.md")
	os.WriteFile(doc, []byte(strings.Join([]string{
		"# A", // 1
		"",
		"```sh", // 3
		"make build && m3eval import --demo   # a comment --nosuch",      // 4
		"m3eval score --by action_type \\",                               // 5
		"    --format md -o 'my file.md' &",                              // 6
		"cat x | m3eval agree \"$HOME/r.csv\"; m3eval --db sim.db judge", // 7
		"echo $(m3eval --version) logs/*.jsonl",                          // 8
		"```",
		"",
		"```", // 11: not sh
		"m3eval --nosuch",
		"```",
	}, "\n")), 0o644)
	got, err := Commands([]string{doc}, "m3eval")
	if err != nil {
		t.Fatal(err)
	}
	want := []Command{
		{doc, 4, []string{"import", "--demo"}, "m3eval import --demo"},
		{doc, 5, []string{"score", "--by", "action_type", "--format", "md", "-o", "my file.md"}, "m3eval score --by action_type \\\n    --format md -o 'my file.md'"},
		{doc, 7, []string{"agree", Unknown}, `m3eval agree "$HOME/r.csv"`},
		{doc, 7, []string{"--db", "sim.db", "judge"}, "m3eval --db sim.db judge"},
		{doc, 8, []string{"--version"}, "m3eval --version"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
	os.WriteFile(doc, []byte("# A\n\n```sh\nm3eval import 'unclosed\n```\n"), 0o644)
	if _, err := Commands([]string{doc}, "m3eval"); err == nil || !strings.Contains(err.Error(), "a.md:4: the ```sh block is not valid shell") {
		t.Errorf("bad shell: %v", err)
	}
}
