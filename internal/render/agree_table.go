package render

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/m3bench/m3eval/internal/agree"
	"github.com/m3bench/m3eval/internal/textsafe"
)

// footnotes numbers the distinct reasons of undefined values across a whole report.
type footnotes struct {
	reasons []string
	index   map[string]int
}

func (f *footnotes) mark(reason string) string { return superscript(f.num(reason)) }

// num returns the footnote number of reason, adding it when new.
func (f *footnotes) num(reason string) int {
	if f.index == nil {
		f.index = map[string]int{}
	}
	i, ok := f.index[reason]
	if !ok {
		f.reasons = append(f.reasons, reason)
		i = len(f.reasons)
		f.index[reason] = i
	}
	return i
}

func superscript(n int) string {
	const digits = "⁰¹²³⁴⁵⁶⁷⁸⁹"
	var b strings.Builder
	for _, c := range strconv.Itoa(n) {
		b.WriteString(string([]rune(digits)[c-'0']))
	}
	return b.String()
}

func writeTable(w io.Writer, results []agree.FieldResult, o AgreementOptions) error {
	profile := termenv.Ascii
	if o.Color {
		profile = termenv.TrueColor
	}
	st := NewStyles(w, profile)
	title, dim, cell := st.Title, st.Dim, st.Cell
	styles := make([]lipgloss.Style, len(bands))
	for i, b := range bands {
		styles[i] = cell.Foreground(lipgloss.Color(b.color))
	}
	var notes footnotes
	var b strings.Builder
	for fi, r := range results {
		if fi > 0 {
			b.WriteString("\n")
		}
		b.WriteString(title.Render(textsafe.Line(header(r))) + "\n")
		rows := rowsOf(r)
		if r.NItems > 0 && r.NItemsPairable == 0 && len(r.Judges) > 0 {
			// No item rated by two annotators: say so once rather than a screen of "—"
			// (#39), and keep the comparisons with the judges.
			b.WriteString("no item is rated by two annotators: no agreement between annotators; human–judge statistics below\n")
			kept := rows[:0]
			for _, x := range rows {
				if x.group != "All raters" && x.group != "Pairs" {
					kept = append(kept, x)
				}
			}
			rows = kept
		}
		data := make([][]string, 0, len(rows))
		colors := make([]int, 0, len(rows))
		group := ""
		for _, x := range rows {
			name := x.name
			if x.group != group {
				group = x.group
				data = append(data, []string{textsafe.Line(group), "", "", ""})
				colors = append(colors, -2)
			}
			val := format(x.v, x.ci, 2)
			c := -1
			if x.v.OK() && x.ci != nil && !x.ci.Lo.OK() && x.ci.Lo.Reason() != "" {
				val += notes.mark(x.ci.Lo.Reason()) // why there is no interval
			}
			if !x.v.OK() {
				val += notes.mark(x.v.Reason())
			} else if f, _ := x.v.Float(); x.kappaFamily {
				c = bandOf(f)
			}
			data = append(data, []string{"  " + textsafe.Line(name), val, pText(x.test, o.Adjust), strconv.Itoa(x.n)})
			colors = append(colors, c)
		}
		t := st.Grid([]string{"statistic", "value", pHeader(o.Adjust), "n"}, func(col int) bool { return col >= 2 },
			func(row, col int, st lipgloss.Style) lipgloss.Style {
				if row >= 0 && row < len(colors) {
					switch {
					case colors[row] == -2:
						return st.Bold(true)
					case col == 1 && colors[row] >= 0:
						return styles[colors[row]]
					}
				}
				return st
			}).BorderColumn(false).Rows(data...)
		b.WriteString(t.Render() + "\n")
	}
	if o.Bootstrap > 0 {
		b.WriteString(dim.Render(ciNote(o)) + "\n")
	}
	b.WriteString(dim.Render("n: items the statistic rests on (co-rated, complete, pairable or scored items).") + "\n")
	b.WriteString(dim.Render("ICC: Shrout & Fleiss / McGraw & Wong names, complete items only.") + "\n")
	b.WriteString(dim.Render("τ-b ties: pairs tied in the human means / in the judge's scores.") + "\n")
	for _, line := range strings.Split(pNote(o), "\n") {
		b.WriteString(dim.Render(line) + "\n")
	}
	b.WriteString(kappaLegend(styles, o.Color) + "\n")
	for i, r := range notes.reasons {
		fmt.Fprintf(&b, "%s — undefined: %s\n", superscript(i+1), textsafe.Line(r))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// kappaLegend names the strength bands of κ and AC. In colour each band's name is a square
// of the colour its values are shown in; without colour the squares would all look alike,
// so the bands are named by their ranges alone, for the reader to place a value in.
func kappaLegend(styles []lipgloss.Style, color bool) string {
	if !color {
		names := make([]string, len(bands))
		for i, bd := range bands {
			names[i] = bd.name
		}
		return "Strength of κ and AC (Landis & Koch), by value: " + strings.Join(names, ", ")
	}
	legend := []string{"Strength of κ and AC (Landis & Koch):"}
	for i, bd := range bands {
		legend = append(legend, styles[i].UnsetPadding().Render("■ "+bd.name))
	}
	return strings.Join(legend, "  ")
}
