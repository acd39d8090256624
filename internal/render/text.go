package render

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/lipgloss/table"
	"github.com/mattn/go-runewidth"
	"github.com/muesli/termenv"

	"github.com/m3bench/m3eval/internal/textsafe"
)

// markdownEscaper escapes what would end a table cell (|), start emphasis (* and _), a code
// span (`) or inline HTML (< and >), and the backslash itself, so that a name like "*gpt*",
// "x\|y" or "<b>" from data shows as written. A Replacer makes one pass, so the backslash
// that escapes a character is never escaped again (CommonMark: any ASCII punctuation may be
// backslash-escaped).
var markdownEscaper = strings.NewReplacer(`\`, `\\`, "|", `\|`, "*", `\*`, "_", `\_`, "`", "\\`",
	"<", `\<`, ">", `\>`)

// EscapeMarkdown makes text from data safe for a Markdown table cell or heading. Control and
// escape sequences are neutralized, the text is kept on one line, and the characters of
// Markdown's table and emphasis syntax are escaped.
func EscapeMarkdown(s string) string { return markdownEscaper.Replace(textsafe.Line(s)) }

// MarkdownRow is one row of a Markdown table, every cell escaped.
func MarkdownRow(cells []string) string {
	esc := make([]string, len(cells))
	for i, c := range cells {
		esc[i] = EscapeMarkdown(c)
	}
	return "| " + strings.Join(esc, " | ") + " |"
}

// MarkdownTable writes a Markdown table of rows under head, columns left-aligned. The cells
// (text from data) are escaped; head is the caller's own Markdown, written as it is.
func MarkdownTable(w io.Writer, head []string, rows [][]string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "| %s |\n|%s\n", strings.Join(head, " | "), strings.Repeat(" --- |", len(head)))
	for _, r := range rows {
		b.WriteString(MarkdownRow(r) + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Columns writes rows under head as plain columns two spaces apart. Each is padded to its
// widest cell by display width (go-runewidth: a Chinese character counts two), so CJK names
// align.
// Cells are neutralized for the terminal; the last column is not padded.
func Columns(w io.Writer, head []string, rows [][]string) error {
	return Aligned(w, "", append([][]string{head}, rows...), nil)
}

// Aligned writes rows as columns two spaces apart after indent, each padded by display width
// to its widest cell, like Columns. The columns for which right is true are aligned right
// (a nil right aligns none). A row may have fewer cells than others. Cells are neutralized for the terminal; no
// line ends in blanks. It replaces text/tabwriter, which counts runes, not display columns,
// and so shifts every row that holds a Chinese name.
func Aligned(w io.Writer, indent string, rows [][]string, right func(col int) bool) error {
	clean := make([][]string, 0, len(rows))
	var width []int
	for _, r := range rows {
		c := make([]string, len(r))
		for i := range r {
			c[i] = textsafe.Line(r[i])
			if i == len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], runewidth.StringWidth(c[i]))
		}
		clean = append(clean, c)
	}
	var b strings.Builder
	for _, cells := range clean {
		var line strings.Builder
		line.WriteString(indent)
		for i, c := range cells {
			if i > 0 {
				line.WriteString("  ")
			}
			pad := strings.Repeat(" ", width[i]-runewidth.StringWidth(c))
			if right != nil && right(i) {
				line.WriteString(pad + c)
			} else {
				line.WriteString(c + pad)
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Styles are the text styles of one output. With the Ascii profile (NO_COLOR, a pipe, a
// file) every style is plain text and only the borders show.
type Styles struct {
	Renderer *lipgloss.Renderer
	// Title is a heading above a table, Dim a note under it, Cell a padded cell, Head a
	// header cell.
	Title, Dim, Cell, Head lipgloss.Style
}

// NewStyles returns the styles of output to w in the colour profile p (termenv.Ascii for no
// colour).
func NewStyles(w io.Writer, p termenv.Profile) Styles {
	re := lipgloss.NewRenderer(w)
	re.SetColorProfile(p)
	cell := re.NewStyle().Padding(0, 1)
	return Styles{Renderer: re, Title: re.NewStyle().Bold(true), Dim: re.NewStyle().Faint(true), Cell: cell, Head: cell.Bold(true)}
}

// Grid returns a bordered table under headers whose columns fit their widest cell. lipgloss
// measures display width, so wide characters count two. Header cells are bold, borders
// faint, and the columns for which right is true are aligned right below the header. style, when not nil,
// restyles a body cell from the style it would have. Cells from data must be neutralized by
// the caller (textsafe.Line), as the table keeps them as they are.
func (s Styles) Grid(headers []string, right func(col int) bool, style func(row, col int, st lipgloss.Style) lipgloss.Style) *table.Table {
	return table.New().Border(lipgloss.NormalBorder()).BorderStyle(s.Dim).Headers(headers...).
		StyleFunc(func(row, col int) lipgloss.Style {
			if row == table.HeaderRow {
				return s.Head
			}
			st := s.Cell
			if right != nil && right(col) {
				st = st.Align(lipgloss.Right)
			}
			if style != nil {
				st = style(row, col, st)
			}
			return st
		})
}

// Grid writes rows under headers as a plain bordered table (no colour), the columns in right
// aligned right, followed by a newline.
func Grid(w io.Writer, headers []string, rows [][]string, right map[int]bool) error {
	t := NewStyles(w, termenv.Ascii).Grid(headers, func(col int) bool { return right[col] }, nil).Rows(rows...)
	_, err := fmt.Fprintln(w, t.Render())
	return err
}

// WriteJSON writes v as indented JSON (two spaces) followed by a newline. Text is written as
// it is: <, > and & are not turned into \u003c escapes, the output being a file or a
// terminal, never HTML.
func WriteJSON(w io.Writer, v any) error { return writeJSONIndent(w, v, "  ") }

func writeJSONIndent(w io.Writer, v any, indent string) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", indent)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// Pct shows a proportion as a whole percentage, "62%". An undefined one (NaN) shows as "—".
func Pct(v float64) string {
	if math.IsNaN(v) {
		return "—"
	}
	return fmt.Sprintf("%.0f%%", 100*v)
}
