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

// TestUserPagesKeepMeasurementsInBenchmarks: the user pages say how to use the feature; their
// measurements (percentiles, load averages, memory) live in docs/benchmarks.md, which each
// links (issue #29 item 4).
func TestUserPagesKeepMeasurementsInBenchmarks(t *testing.T) {
	for _, page := range []string{"annotating.md", "serve.md", "importing.md"} {
		b, err := os.ReadFile(filepath.Join(root, "docs", page))
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		for _, m := range []string{"p99", "p50", "load average", "RSS", "## Measured"} {
			if strings.Contains(s, m) {
				t.Errorf("docs/%s holds a measurement (%q): it belongs in docs/benchmarks.md", page, m)
			}
		}
		if !strings.Contains(s, "(benchmarks.md#") {
			t.Errorf("docs/%s does not link its figures in benchmarks.md", page)
		}
	}
}

// TestReadmeSaysWhatTestShortCovers: the README's account of make test-short matches the
// Makefile's target (issue #29 item 10).
func TestReadmeSaysWhatTestShortCovers(t *testing.T) {
	mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(mk), "go test -short ./...") {
		t.Error("make test-short no longer runs every package with -short: update the README's account of it")
	}
	for _, want := range []string{"`make test` took", "`make test-short` is the quick loop: every package's\ntests with `-short`, without the race detector"} {
		if !strings.Contains(string(readme), want) {
			t.Errorf("README.md does not say %q", want)
		}
	}
}
