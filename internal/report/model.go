package report

import (
	"encoding/json"
	"html/template"
	"math"
	"strconv"
)

// Report is the whole report as data: what the HTML shows and --format json writes.
type Report struct {
	Title string `json:"title"`
	// Inputs describe what was read, as label/value lines under the title.
	Inputs   []KV      `json:"inputs"`
	Sections []Section `json:"sections"`
	// Print opens every table (for --pdf, where no one can click).
	Print bool `json:"-"`
}

// KV is one labelled line of the report's header.
type KV struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// Section is one part of the report. A section without data keeps its title and says why
// in Omitted.
type Section struct {
	ID      string  `json:"id"`
	Title   string  `json:"title"`
	Intro   string  `json:"intro,omitempty"`
	Omitted string  `json:"omitted,omitempty"`
	Charts  []Chart `json:"charts,omitempty"`
}

// omitted returns a section left out for the given reason.
func omitted(id, title, why string) Section {
	return Section{ID: id, Title: title, Omitted: why}
}

// Chart is one figure with the table of its numbers. A chart without an SVG (no data to
// draw) shows its note instead.
type Chart struct {
	ID      string `json:"id"`
	Title   string `json:"title"`
	Caption string `json:"caption"` // what is shown, units, n
	Note    string `json:"note,omitempty"`
	// SVG is the drawing, produced by gonum/plot's SVG canvas, which escapes every text.
	SVG   template.HTML `json:"-"`
	Table Table         `json:"table"`
}

// Table holds the numbers behind a chart.
type Table struct {
	Columns []string `json:"columns"`
	Rows    [][]Cell `json:"rows"`
}

// add appends a row.
func (t *Table) add(cells ...Cell) { t.Rows = append(t.Rows, cells) }

// Cell is a table entry: a number (shown rounded, kept exact in JSON and in the HTML's
// data-v attribute), a text, or undefined with its reason.
type Cell struct {
	Text   string
	Num    float64
	IsNum  bool
	Digits int // decimals shown; -1: as an integer
}

// Num returns a cell holding x, shown with three decimals; NaN is undefined.
func Num(x float64) Cell {
	if math.IsNaN(x) {
		return Cell{Text: "—"}
	}
	return Cell{Num: x, IsNum: true, Digits: 3}
}

// Int returns a cell holding a count.
func Int(n int) Cell { return Cell{Num: float64(n), IsNum: true, Digits: -1} }

// Text returns a cell holding text.
func Text(s string) Cell { return Cell{Text: s} }

// Shown is the cell as the HTML table shows it.
func (c Cell) Shown() string {
	if !c.IsNum {
		return c.Text
	}
	if c.Digits < 0 {
		return strconv.FormatFloat(c.Num, 'f', 0, 64)
	}
	return strconv.FormatFloat(c.Num, 'f', c.Digits, 64)
}

// Exact is the cell's exact value for the data-v attribute: the shortest text that reads
// back to the same float64.
func (c Cell) Exact() string {
	if !c.IsNum {
		return ""
	}
	return strconv.FormatFloat(c.Num, 'g', -1, 64)
}

// MarshalJSON implements json.Marshaler: a number, a string, or null for undefined.
func (c Cell) MarshalJSON() ([]byte, error) {
	if c.IsNum {
		return []byte(strconv.FormatFloat(c.Num, 'g', -1, 64)), nil
	}
	if c.Text == "—" {
		return []byte("null"), nil
	}
	return json.Marshal(c.Text)
}
