package render

// The report of m3eval illusion score (illusion.Report): recall per split and difficulty or
// class, the most frequent wrong answers and the logs read, as a table, Markdown or JSON.

import (
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/lipgloss/table"
	"github.com/muesli/termenv"

	"github.com/m3bench/m3eval/internal/illusion"
	"github.com/m3bench/m3eval/internal/textsafe"
)

// logRows are the cells of the logs listing: which files went in, and of which model.
func illusionLogRows(r *illusion.Report) [][]string {
	var out [][]string
	for _, l := range r.Logs {
		status := "scored"
		if l.Skipped != "" {
			status = "skipped: " + l.Skipped
		}
		// The file name: the model column tells same-named runs of two models apart, and
		// the JSON report has the full path.
		out = append(out, []string{textsafe.Line(filepath.Base(l.Path)), textsafe.Line(l.Model), textsafe.Line(l.Split), strconv.Itoa(l.Samples), textsafe.Line(status)})
	}
	return out
}

var illusionLogHeaders = []string{"log", "model", "split", "samples", "status"}

// IllusionFormats are the formats of m3eval illusion score's report: --format.
var IllusionFormats = []Format{Table, JSON, Markdown}

// WriteIllusion writes the report of m3eval illusion score in format f (Table, JSON or
// Markdown); color styles the table for a terminal.
func WriteIllusion(w io.Writer, r *illusion.Report, f Format, color bool) error {
	switch f {
	case JSON:
		return illusionJSON(w, r)
	case Markdown:
		return illusionMarkdown(w, r)
	}
	return illusionTable(w, r, color)
}

// groupTitle names the second column: difficulty, or the class dimension of --by.
func illusionGroupTitle(r *illusion.Report) string {
	if r.By != "" {
		return string(r.By) + " class"
	}
	return "difficulty"
}

// blocks splits the rows into one block per split and kind, in order.
func illusionBlocks(r *illusion.Report) [][]illusion.Row {
	var out [][]illusion.Row
	for i, row := range r.Rows {
		if i == 0 || row.Split != r.Rows[i-1].Split || row.Kind != r.Rows[i-1].Kind {
			out = append(out, nil)
		}
		out[len(out)-1] = append(out[len(out)-1], row)
	}
	return out
}

// pct1 shows a recall as a percentage with one decimal and no sign, "62.5"; "—" when
// undefined.
func pct1(v float64) string {
	if math.IsNaN(v) {
		return "—"
	}
	return strconv.FormatFloat(100*v, 'f', 1, 64)
}

func illusionStatCells(s illusion.Stat) []string {
	return []string{strconv.Itoa(s.N), strconv.Itoa(s.Hits), pct1(s.Recall), "[" + pct1(s.Lo) + ", " + pct1(s.Hi) + "]"}
}

func illusionBlockTitle(b []illusion.Row) string {
	return fmt.Sprintf("%s — %s recall", b[0].Split, b[0].Kind)
}

func illusionTable(w io.Writer, r *illusion.Report, color bool) error {
	profile := termenv.Ascii // NO_COLOR, a pipe or a file: plain text, borders only
	if color {
		profile = termenv.ANSI256
	}
	st := NewStyles(w, profile)
	title := st.Title
	// grid is a bordered table whose numeric columns align right; with firstBold the first
	// row's numbers (the "all" row) are bold.
	grid := func(numeric func(col int) bool, firstBold bool, headers ...string) *table.Table {
		return st.Grid(headers, numeric, func(row, col int, c lipgloss.Style) lipgloss.Style {
			if firstBold && row == 0 && numeric(col) {
				return c.Bold(true)
			}
			return c
		})
	}
	var b strings.Builder
	for i, blk := range illusionBlocks(r) {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(title.Render(textsafe.Line(illusionBlockTitle(blk))) + "\n")
		t := grid(func(col int) bool { return col > 0 }, true, illusionGroupTitle(r), "n", "hits", "recall %", "95% CI")
		for _, row := range blk {
			t.Row(append([]string{textsafe.Line(row.Group)}, illusionStatCells(row.Stat)...)...)
		}
		b.WriteString(t.Render() + "\n")
	}
	if len(r.Confusions) > 0 {
		b.WriteString("\n" + title.Render("Most frequent wrong answers") + "\n")
		t := grid(func(col int) bool { return col == 4 }, false, "split", "kind", "truth", "answer", "count")
		for _, c := range r.Confusions {
			t.Row(textsafe.Line(c.Split), textsafe.Line(string(c.Kind)), textsafe.Line(c.Truth), textsafe.Line(c.Answer), strconv.Itoa(c.Count))
		}
		b.WriteString(t.Render() + "\n")
	}
	if rows := illusionLogRows(r); len(rows) > 0 {
		b.WriteString("\n" + title.Render("Logs (rule "+string(r.Rule)+")") + "\n")
		t := grid(func(col int) bool { return col == 3 }, false, illusionLogHeaders...)
		for _, row := range rows {
			t.Row(row...)
		}
		b.WriteString(t.Render() + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func illusionMarkdown(w io.Writer, r *illusion.Report) error {
	var b strings.Builder
	for i, blk := range illusionBlocks(r) {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "### %s\n\n| %s | n | hits | recall %% | 95%% CI |\n|---|---:|---:|---:|---|\n", EscapeMarkdown(illusionBlockTitle(blk)), illusionGroupTitle(r))
		for _, row := range blk {
			cells := illusionStatCells(row.Stat)
			g := EscapeMarkdown(row.Group)
			if row.Group == "all" {
				g = "**all**"
			}
			fmt.Fprintf(&b, "| %s | %s |\n", g, strings.Join(cells, " | "))
		}
	}
	if len(r.Confusions) > 0 {
		b.WriteString("\n### Most frequent wrong answers\n\n| split | kind | truth | answer | count |\n|---|---|---|---|---:|\n")
		for _, c := range r.Confusions {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %d |\n", EscapeMarkdown(c.Split), c.Kind, EscapeMarkdown(c.Truth), EscapeMarkdown(c.Answer), c.Count)
		}
	}
	if rows := illusionLogRows(r); len(rows) > 0 {
		fmt.Fprintf(&b, "\n### Logs (rule %s)\n\n| %s |\n|---|---|---|---:|---|\n", r.Rule, strings.Join(illusionLogHeaders, " | "))
		for _, row := range rows {
			for i := range row {
				row[i] = EscapeMarkdown(row[i])
			}
			fmt.Fprintf(&b, "| %s |\n", strings.Join(row, " | "))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// illusionJSONStat is Stat with undefined values as null; JSON has no NaN.
type illusionJSONStat struct {
	Split  string   `json:"split"`
	Kind   string   `json:"kind"`
	Group  string   `json:"group"`
	N      int      `json:"n"`
	Hits   int      `json:"hits"`
	Recall *float64 `json:"recall"`
	Lo     *float64 `json:"ci_low"`
	Hi     *float64 `json:"ci_high"`
}

func finiteOrNil(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

func illusionJSON(w io.Writer, r *illusion.Report) error {
	rows := make([]illusionJSONStat, 0, len(r.Rows))
	for _, x := range r.Rows {
		rows = append(rows, illusionJSONStat{x.Split, string(x.Kind), x.Group, x.N, x.Hits, finiteOrNil(x.Recall), finiteOrNil(x.Lo), finiteOrNil(x.Hi)})
	}
	by := "difficulty"
	if r.By != "" {
		by = string(r.By)
	}
	doc := struct {
		By         string               `json:"by"`
		Rows       []illusionJSONStat   `json:"rows"`
		Confusions []illusion.Confusion `json:"confusions"`
		Warnings   []string             `json:"warnings"`
		Notes      []string             `json:"notes"`
		Rule       string               `json:"rule"`
		Logs       []illusion.LogInfo   `json:"logs"`
	}{by, rows, r.Confusions, r.Warnings, r.Notes, string(r.Rule), r.Logs}
	if doc.Notes == nil {
		doc.Notes = []string{}
	}
	if doc.Logs == nil {
		doc.Logs = []illusion.LogInfo{}
	}
	if doc.Confusions == nil {
		doc.Confusions = []illusion.Confusion{}
	}
	if doc.Warnings == nil {
		doc.Warnings = []string{}
	}
	return WriteJSON(w, doc)
}
