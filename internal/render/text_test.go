package render_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mattn/go-runewidth"

	"github.com/m3bench/m3eval/internal/render"
)

// TestEscapeMarkdown: the one Markdown escaper escapes what would end a cell or start
// emphasis, and neutralizes escape sequences from data.
func TestEscapeMarkdown(t *testing.T) {
	got := render.EscapeMarkdown("a|b *c* _d_\x1b[31m\nnext")
	want := `a\|b \*c\* \_d\_␛[31m ⏎ next` // the newline shows as ⏎ (textsafe.Line)
	if got != want {
		t.Errorf("EscapeMarkdown = %q, want %q", got, want)
	}
	if row := render.MarkdownRow([]string{"x|y", "gpt_4"}); row != `| x\|y | gpt\_4 |` {
		t.Errorf("MarkdownRow = %q", row)
	}
	var b bytes.Buffer
	if err := render.MarkdownTable(&b, []string{"action_type", "n"}, [][]string{{"follow_up", "2"}}); err != nil {
		t.Fatal(err)
	}
	if want := "| action_type | n |\n| --- | --- |\n| follow\\_up | 2 |\n"; b.String() != want {
		t.Errorf("MarkdownTable:\n%s\nwant\n%s", b.String(), want)
	}
}

// TestColumnsAlignCJK: a Chinese cell counts two columns per character, so the next column
// starts at the same display column on every line; escape sequences show as text.
func TestColumnsAlignCJK(t *testing.T) {
	var b bytes.Buffer
	err := render.Columns(&b, []string{"字段", "value", "rule"}, [][]string{{"正确性", "5", "r1"}, {"overall_quality", "—", "r2\x1b[2J"}})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 3 || strings.Contains(b.String(), "\x1b") {
		t.Fatalf("output:\n%s", b.String())
	}
	col := func(l, cell string) int { return runewidth.StringWidth(l[:strings.Index(l, cell)]) }
	if a, b2, c := col(lines[0], "value"), col(lines[1], "5"), col(lines[2], "—"); a != b2 || a != c {
		t.Errorf("second column starts at %d, %d, %d:\n%s", a, b2, c, b.String())
	}
}

// TestGridPlain: without colour the bordered table has no escape codes, its numeric columns
// align right, and a wide character keeps the borders in line.
func TestGridPlain(t *testing.T) {
	var b bytes.Buffer
	if err := render.Grid(&b, []string{"name", "n"}, [][]string{{"试点", "3"}, {"pilot", "12"}}, map[int]bool{1: true}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.Contains(out, "\x1b") || !strings.Contains(out, "│  3 │") {
		t.Fatalf("grid:\n%s", out)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	for _, l := range lines {
		if runewidth.StringWidth(l) != runewidth.StringWidth(lines[0]) {
			t.Errorf("line %q is %d wide, the first %d", l, runewidth.StringWidth(l), runewidth.StringWidth(lines[0]))
		}
	}
}

// markdownCells splits a Markdown table row the way GFM does: at every pipe not escaped by a
// backslash (a backslash escapes the character after it, a backslash included).
func markdownCells(row string) []string {
	row = strings.TrimSuffix(strings.TrimPrefix(row, "|"), "|")
	var cells []string
	var cur strings.Builder
	for i := 0; i < len(row); i++ {
		switch {
		case row[i] == '\\' && i+1 < len(row):
			cur.WriteByte(row[i])
			cur.WriteByte(row[i+1])
			i++
		case row[i] == '|':
			cells = append(cells, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(row[i])
		}
	}
	return append(cells, cur.String())
}

// TestEscapeMarkdownBackslashAndCode: a backslash from data is escaped before the pipe after
// it, so "x\|y" stays one cell; backtick and angle brackets cannot open a code span or HTML.
func TestEscapeMarkdownBackslashAndCode(t *testing.T) {
	name := "x\\|y`z<b>"
	if got, want := render.EscapeMarkdown(name), "x\\\\\\|y\\`z\\<b\\>"; got != want {
		t.Errorf("EscapeMarkdown(%q) = %q, want %q", name, got, want)
	}
	row := render.MarkdownRow([]string{name, "10", `a\`})
	if cells := markdownCells(row); len(cells) != 3 {
		t.Errorf("MarkdownRow(%q, 10, a\\) = %q: %d cells, want 3: %q", name, row, len(cells), cells)
	}
}

// TestEscapeLaTeXTextSymbols: |, < and > are text commands, not characters that OT1 prints
// as other glyphs.
func TestEscapeLaTeXTextSymbols(t *testing.T) {
	if got, want := render.EscapeLaTeX(`a|b<c>d\e`), `a\textbar{}b\textless{}c\textgreater{}d\textbackslash{}e`; got != want {
		t.Errorf("EscapeLaTeX = %q, want %q", got, want)
	}
}
