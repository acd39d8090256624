package illusion

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/lipgloss/table"
	"github.com/muesli/termenv"

	"github.com/m3bench/m3eval/internal/textsafe"
)

// Report is everything m3eval illusion score prints: recall per split and difficulty (or
// class, By), the most frequent wrong answers, the logs read, and what the user should know.
type Report struct {
	Rows       []Row
	Confusions []Confusion
	Warnings   []string
	Notes      []string
	Logs       []LogInfo
	Rule       Rule
	By         Kind
	Format     ReportFormat
}

// WriteNotes writes the notes and warnings, one line each, safe for a terminal.
func (r *Report) WriteNotes(w io.Writer) {
	for _, n := range r.Notes {
		fmt.Fprintln(w, "note: "+textsafe.Line(n))
	}
	for _, x := range r.Warnings {
		fmt.Fprintln(w, "warning: "+textsafe.Line(x))
	}
}

// logRows are the cells of the logs listing: which files went in, and of which model.
func (r *Report) logRows() [][]string {
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

var logHeaders = []string{"log", "model", "split", "samples", "status"}

// Write writes the report in its Format; color styles the table for a terminal.
func (r *Report) Write(w io.Writer, color bool) error {
	switch r.Format {
	case ReportJSON:
		return r.writeJSON(w)
	case ReportMarkdown:
		return r.writeMarkdown(w)
	}
	return r.writeTable(w, color)
}

// groupTitle names the second column: difficulty, or the class dimension of --by.
func (r *Report) groupTitle() string {
	if r.By != "" {
		return string(r.By) + " class"
	}
	return "difficulty"
}

// blocks splits the rows into one block per split and kind, in order.
func (r *Report) blocks() [][]Row {
	var out [][]Row
	for i, row := range r.Rows {
		if i == 0 || row.Split != r.Rows[i-1].Split || row.Kind != r.Rows[i-1].Kind {
			out = append(out, nil)
		}
		out[len(out)-1] = append(out[len(out)-1], row)
	}
	return out
}

func pct(v float64) string {
	if math.IsNaN(v) {
		return "—"
	}
	return strconv.FormatFloat(100*v, 'f', 1, 64)
}

func statCells(s Stat) []string {
	return []string{strconv.Itoa(s.N), strconv.Itoa(s.Hits), pct(s.Recall), "[" + pct(s.Lo) + ", " + pct(s.Hi) + "]"}
}

func blockTitle(b []Row) string {
	return fmt.Sprintf("%s — %s recall", b[0].Split, b[0].Kind)
}

func (r *Report) writeTable(w io.Writer, color bool) error {
	re := lipgloss.NewRenderer(w)
	if color {
		re.SetColorProfile(termenv.ANSI256)
	} else {
		// NO_COLOR, a pipe or a file: plain text, borders only.
		re.SetColorProfile(termenv.Ascii)
	}
	title := re.NewStyle().Bold(true)
	head := re.NewStyle().Bold(true).Padding(0, 1)
	cell := re.NewStyle().Padding(0, 1)
	num := cell.Align(lipgloss.Right)
	total := num.Bold(true)
	// grid is a bordered table whose numeric columns align right; with firstBold the first
	// row's numbers (the "all" row) are bold.
	grid := func(numeric func(col int) bool, firstBold bool, headers ...string) *table.Table {
		return table.New().Border(lipgloss.NormalBorder()).BorderStyle(re.NewStyle().Faint(true)).
			Headers(headers...).
			StyleFunc(func(row, col int) lipgloss.Style {
				switch {
				case row == table.HeaderRow:
					return head
				case !numeric(col):
					return cell
				case firstBold && row == 0:
					return total
				}
				return num
			})
	}
	var b strings.Builder
	for i, blk := range r.blocks() {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(title.Render(textsafe.Line(blockTitle(blk))) + "\n")
		t := grid(func(col int) bool { return col > 0 }, true, r.groupTitle(), "n", "hits", "recall %", "95% CI")
		for _, row := range blk {
			t.Row(append([]string{textsafe.Line(row.Group)}, statCells(row.Stat)...)...)
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
	if rows := r.logRows(); len(rows) > 0 {
		b.WriteString("\n" + title.Render("Logs (rule "+string(r.Rule)+")") + "\n")
		t := grid(func(col int) bool { return col == 3 }, false, logHeaders...)
		for _, row := range rows {
			t.Row(row...)
		}
		b.WriteString(t.Render() + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// mdEscape keeps a cell from breaking a Markdown table.
func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`).Replace(textsafe.Line(s))
}

func (r *Report) writeMarkdown(w io.Writer) error {
	var b strings.Builder
	for i, blk := range r.blocks() {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "### %s\n\n| %s | n | hits | recall %% | 95%% CI |\n|---|---:|---:|---:|---|\n", mdEscape(blockTitle(blk)), r.groupTitle())
		for _, row := range blk {
			cells := statCells(row.Stat)
			g := mdEscape(row.Group)
			if row.Group == "all" {
				g = "**all**"
			}
			fmt.Fprintf(&b, "| %s | %s |\n", g, strings.Join(cells, " | "))
		}
	}
	if len(r.Confusions) > 0 {
		b.WriteString("\n### Most frequent wrong answers\n\n| split | kind | truth | answer | count |\n|---|---|---|---|---:|\n")
		for _, c := range r.Confusions {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %d |\n", mdEscape(c.Split), c.Kind, mdEscape(c.Truth), mdEscape(c.Answer), c.Count)
		}
	}
	if rows := r.logRows(); len(rows) > 0 {
		fmt.Fprintf(&b, "\n### Logs (rule %s)\n\n| %s |\n|---|---|---|---:|---|\n", r.Rule, strings.Join(logHeaders, " | "))
		for _, row := range rows {
			for i := range row {
				row[i] = mdEscape(row[i])
			}
			fmt.Fprintf(&b, "| %s |\n", strings.Join(row, " | "))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// jsonStat is Stat with undefined values as null; JSON has no NaN.
type jsonStat struct {
	Split  string   `json:"split"`
	Kind   string   `json:"kind"`
	Group  string   `json:"group"`
	N      int      `json:"n"`
	Hits   int      `json:"hits"`
	Recall *float64 `json:"recall"`
	Lo     *float64 `json:"ci_low"`
	Hi     *float64 `json:"ci_high"`
}

func finite(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

func (r *Report) writeJSON(w io.Writer) error {
	rows := make([]jsonStat, 0, len(r.Rows))
	for _, x := range r.Rows {
		rows = append(rows, jsonStat{x.Split, string(x.Kind), x.Group, x.N, x.Hits, finite(x.Recall), finite(x.Lo), finite(x.Hi)})
	}
	by := "difficulty"
	if r.By != "" {
		by = string(r.By)
	}
	doc := struct {
		By         string      `json:"by"`
		Rows       []jsonStat  `json:"rows"`
		Confusions []Confusion `json:"confusions"`
		Warnings   []string    `json:"warnings"`
		Notes      []string    `json:"notes"`
		Rule       string      `json:"rule"`
		Logs       []LogInfo   `json:"logs"`
	}{by, rows, r.Confusions, r.Warnings, r.Notes, string(r.Rule), r.Logs}
	if doc.Notes == nil {
		doc.Notes = []string{}
	}
	if doc.Logs == nil {
		doc.Logs = []LogInfo{}
	}
	if doc.Confusions == nil {
		doc.Confusions = []Confusion{}
	}
	if doc.Warnings == nil {
		doc.Warnings = []string{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}
