package docscheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// root is the repository, seen from this package's directory.
const root = "../.."

// TestDocumentationLinks: every relative link of README.md and docs/*.md resolves.
func TestDocumentationLinks(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append([]string{filepath.Join(root, "README.md")}, files...)
	if len(files) < 10 {
		t.Fatalf("found only %d Markdown files: %v", len(files), files)
	}
	problems, err := Check(files)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
}

// TestCheckFindsBrokenLinks: the check reports a missing file, a missing anchor in the same
// file and in another, and accepts what exists.
func TestCheckFindsBrokenLinks(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("docs/other.md", "# Other\n\n## `m3eval annotate --annotator NAME`\n\n## \"✓ saved\" is always true\n\n## Speed\n\n## Speed\n")
	write("data/x.json", "{}")
	a := write("docs/a.md", strings.Join([]string{
		"# A page",
		"",
		"[ok](other.md) [ok](other.md#m3eval-annotate---annotator-name) [ok](other.md#-saved-is-always-true)",
		"[ok](other.md#speed-1) [ok](#a-page) [ok](../data/x.json) [ok](../data/) [web](https://example.com/x#y)",
		"",
		"[gone](missing.md)",
		"[no anchor](other.md#nothing)",
		"[no local anchor](#nowhere)",
		"![no image](img/none.png)",
		"[anchor in json](../data/x.json#k)",
		"",
		"```",
		"[in code](not-checked.md)",
		"```",
		"and `[in a code span](also-not-checked.md)`",
	}, "\n"))
	problems, err := Check([]string{a})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range problems {
		got = append(got, p.Target)
		if p.Line < 6 || p.Line > 10 {
			t.Errorf("%v: line %d, want 6-10", p, p.Line)
		}
	}
	want := []string{"missing.md", "other.md#nothing", "#nowhere", "img/none.png", "../data/x.json#k"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("problems %q, want %q", got, want)
	}
}

func TestSlug(t *testing.T) {
	for in, want := range map[string]string{
		"Speed and memory":                   "speed-and-memory",
		"`m3eval annotate --annotator NAME`": "m3eval-annotate---annotator-name",
		"\"✓ saved\" is always true":         "-saved-is-always-true",
		"HANNA: ICC and Krippendorff's α":    "hanna-icc-and-krippendorffs-α",
		"Scoring: `illusion score`":          "scoring-illusion-score",
		"1. Sample: `m3eval sample`":         "1-sample-m3eval-sample",
		"Human versus automatic judges":      "human-versus-automatic-judges",
		"检索 and snake_case":                  "检索-and-snake_case",
	} {
		if got := Slug(strings.ReplaceAll(in, "`", "")); got != want {
			t.Errorf("Slug(%q) = %q, want %q", in, got, want)
		}
	}
}
