package render

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/m3bench/m3eval/internal/agree"
	"github.com/m3bench/m3eval/internal/textsafe"
)

// writeLatex writes one booktabs table per field: statistic, value, 95% interval, p, n.
// Undefined values are "---" with a footnote mark; the reasons follow as a list.
func writeLatex(w io.Writer, results []agree.FieldResult, o AgreementOptions) error {
	var notes footnotes
	var b strings.Builder
	b.WriteString("% m3eval agree: needs \\usepackage{booktabs}\n")
	for _, r := range results {
		fmt.Fprintf(&b, "\\begin{table}[ht]\n\\centering\n\\caption{%s}\n", EscapeLaTeX(header(r)))
		b.WriteString("\\begin{tabular}{lrcrr}\n\\toprule\nStatistic & Value & 95\\% CI & $p$ & $n$ \\\\\n\\midrule\n")
		group := ""
		for _, x := range rowsOf(r) {
			if x.group != group {
				if group != "" {
					b.WriteString("\\addlinespace\n")
				}
				group = x.group
				fmt.Fprintf(&b, "\\multicolumn{5}{l}{\\textit{%s}} \\\\\n", EscapeLaTeX(group))
			}
			val, ci := "---", ""
			if v, ok := x.v.Float(); ok {
				val = fmt.Sprintf("%.3f", v)
			} else {
				val += fmt.Sprintf("$^{%d}$", notes.num(x.v.Reason()))
			}
			if x.ci != nil {
				lo, ok1 := x.ci.Lo.Float()
				hi, ok2 := x.ci.Hi.Float()
				if ok1 && ok2 {
					ci = fmt.Sprintf("[%.3f, %.3f]", lo, hi)
				}
			}
			p := strings.ReplaceAll(pText(x.test, o.Adjust), "<", "$<$")
			p = strings.ReplaceAll(p, "—", "---")
			fmt.Fprintf(&b, "\\quad %s & %s & %s & %s & %d \\\\\n", EscapeLaTeX(x.name), val, ci, p, x.n)
		}
		b.WriteString("\\bottomrule\n\\end{tabular}\n\\end{table}\n\n")
	}
	if o.Bootstrap > 0 {
		b.WriteString("% " + ciNote(o) + "\n")
	}
	b.WriteString("% " + pNote(o) + "\n")
	for i, r := range notes.reasons {
		fmt.Fprintf(&b, "%% $^{%d}$ undefined: %s\n", i+1, r)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// matrixResampled says how many units the matrix's intervals rest on, as the table's field
// headings do (resampled): " Resampled: 28 episodes." when every field resampled as many,
// else per field. "" without a bootstrap interval.
func matrixResampled(results []agree.FieldResult) string {
	var parts []string
	same := true
	for _, r := range results {
		s := strings.TrimSuffix(strings.TrimPrefix(resampled(r), " · "), " resampled")
		if s == "" {
			continue
		}
		if len(parts) > 0 && !strings.HasSuffix(parts[0], ": "+s) {
			same = false
		}
		parts = append(parts, r.Field.Name+": "+s)
	}
	switch {
	case len(parts) == 0:
		return ""
	case same:
		return " Resampled: " + parts[0][strings.Index(parts[0], ": ")+2:] + "."
	}
	return " Resampled: " + strings.Join(parts, ", ") + "."
}

// matrixCell is one cell of the judge × field matrix.
type matrixCell struct {
	v    agree.Value
	test *agree.Test
	ci   *agree.Interval
}

// writeMatrix prints one statistic of every judge (rows) and field (columns), the compact
// table of metric–criterion correlations papers print. stat is the statistic's key below
// the judge ("kendall_tau_b", "system_level.kendall_tau_b", "cohen_kappa"). A value whose
// (adjusted) p is below 0.05 gets a star.
func writeMatrix(w io.Writer, results []agree.FieldResult, o AgreementOptions) error {
	var judges []string
	cells := map[string]map[string]matrixCell{}
	found := false
	for _, r := range results {
		for _, j := range r.Judges {
			if _, ok := cells[j.Judge]; !ok {
				judges = append(judges, j.Judge)
				cells[j.Judge] = map[string]matrixCell{}
			}
		}
		for _, x := range rowsOf(r) {
			for _, j := range r.Judges {
				if x.key == "human_vs_auto."+o.Matrix || x.key == "human_vs_auto_by_judge."+j.Judge+"."+o.Matrix {
					if len(r.Judges) == 1 || strings.HasPrefix(x.key, "human_vs_auto_by_judge."+j.Judge+".") {
						cells[j.Judge][r.Field.Name] = matrixCell{x.v, x.test, x.ci}
						found = true
					}
				}
			}
		}
	}
	if len(judges) == 0 {
		return fmt.Errorf("--matrix %s: no automatic judge in the input (give --auto)", o.Matrix)
	}
	if !found {
		return fmt.Errorf("--matrix %s: no such statistic of the judges (e.g. pearson, spearman, kendall_tau_b, system_level.kendall_tau_b, cohen_kappa)", o.Matrix)
	}
	var fields []string
	for _, r := range results {
		if !slices.Contains(fields, r.Field.Name) { // score --by: every group has the fields
			fields = append(fields, r.Field.Name)
		}
	}
	text := func(c matrixCell, ok bool, d int) string {
		if !ok {
			return ""
		}
		x, defined := c.v.Float()
		if !defined {
			return "—"
		}
		s := fmt.Sprintf("%.*f", d, x)
		if c.test != nil {
			p := c.test.P
			if o.Adjust != "" && o.Adjust != agree.AdjustNone {
				p = c.test.PAdjusted
			}
			if pv, ok := p.Float(); ok && pv < 0.05 {
				s += "*"
			}
		}
		if c.ci != nil { // with --bootstrap: the interval, or why there is none
			lo, ok1 := c.ci.Lo.Float()
			hi, ok2 := c.ci.Hi.Float()
			if ok1 && ok2 {
				s += fmt.Sprintf(" [%.*f, %.*f]", d, lo, d, hi)
			} else {
				s += " [no interval]"
			}
		}
		return s
	}
	note := fmt.Sprintf("%s of the mean human rating with each judge; * p < 0.05", o.Matrix)
	if o.Adjust != "" && o.Adjust != agree.AdjustNone {
		note += " (" + string(o.Adjust) + "-adjusted over the report)"
	}
	if o.Bootstrap > 0 {
		note += ". " + ciNote(o) + matrixResampled(results)
		if why := matrixNoInterval(cells); why != "" {
			note += " [no interval]: " + why
		}
	}
	switch o.Format {
	case JSON:
		m := obj{}
		for _, j := range judges {
			row := obj{}
			for _, f := range fields {
				c, ok := cells[j][f]
				if !ok {
					continue
				}
				s := statObj{}
				s.stat("value", c.v)
				if c.test != nil {
					s.stat("p", c.test.P)
					s.stat("p_adjusted", c.test.PAdjusted)
				}
				if c.ci != nil {
					lo, ok1 := c.ci.Lo.Float()
					hi, ok2 := c.ci.Hi.Float()
					if ok1 && ok2 {
						s.set("ci95", []float64{lo, hi})
					} else {
						s.set("ci95", nil)
						s.reasons.set("ci95", c.ci.Lo.Reason())
					}
					s.set("n_units", c.ci.Clusters)
				}
				row.set(f, s.done())
			}
			m.set(j, row)
		}
		return writeJSONIndent(w, obj{{"statistic", o.Matrix}, {"matrix", m}}, " ")
	case CSV:
		cw := NewCSVWriter(w, o.CSV)
		cw.Write(append([]string{"judge"}, fields...))
		for _, j := range judges {
			rec := []string{j}
			for _, f := range fields {
				c, ok := cells[j][f]
				x, defined := c.v.Float()
				if ok && defined {
					rec = append(rec, fmt.Sprint(x))
				} else {
					rec = append(rec, "")
				}
			}
			cw.Write(rec)
		}
		cw.Flush()
		return cw.Error()
	case LaTeX:
		var b strings.Builder
		fmt.Fprintf(&b, "%% m3eval: needs \\usepackage{booktabs}\n\\begin{tabular}{l%s}\n\\toprule\nJudge", strings.Repeat("r", len(fields)))
		for _, f := range fields {
			b.WriteString(" & " + EscapeLaTeX(f))
		}
		b.WriteString(" \\\\\n\\midrule\n")
		for _, j := range judges {
			b.WriteString(EscapeLaTeX(j))
			for _, f := range fields {
				c, ok := cells[j][f]
				b.WriteString(" & " + strings.ReplaceAll(strings.ReplaceAll(text(c, ok, 3), "*", "$^*$"), "—", "---"))
			}
			b.WriteString(" \\\\\n")
		}
		fmt.Fprintf(&b, "\\bottomrule\n\\end{tabular}\n%% %s\n", EscapeLaTeX(note))
		_, err := io.WriteString(w, b.String())
		return err
	case Markdown:
		var b strings.Builder
		b.WriteString("| Judge |")
		for _, f := range fields {
			b.WriteString(" " + EscapeMarkdown(f) + " |")
		}
		b.WriteString("\n| --- |" + strings.Repeat(" ---: |", len(fields)) + "\n")
		for _, j := range judges {
			b.WriteString("| " + EscapeMarkdown(j) + " |")
			for _, f := range fields {
				c, ok := cells[j][f]
				b.WriteString(" " + EscapeMarkdown(text(c, ok, 3)) + " |")
			}
			b.WriteString("\n")
		}
		b.WriteString("\n" + EscapeMarkdown(note) + "\n")
		_, err := io.WriteString(w, b.String())
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "judge\t")
	for _, f := range fields {
		fmt.Fprint(tw, textsafe.Line(f)+"\t")
	}
	fmt.Fprintln(tw)
	for _, j := range judges {
		fmt.Fprint(tw, textsafe.Line(j)+"\t")
		for _, f := range fields {
			c, ok := cells[j][f]
			fmt.Fprint(tw, text(c, ok, 2)+"\t")
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, note)
	return err
}

// matrixNoInterval says why a matrix cell has no interval: the reasons of its cells, each
// once (a matrix has no room for footnotes).
func matrixNoInterval(cells map[string]map[string]matrixCell) string {
	var why []string
	for _, row := range cells {
		for _, c := range row {
			if c.ci != nil && !c.ci.Lo.OK() && !slices.Contains(why, c.ci.Lo.Reason()) {
				why = append(why, c.ci.Lo.Reason())
			}
		}
	}
	slices.Sort(why)
	if len(why) == 0 {
		return ""
	}
	return strings.Join(why, "; ") + "."
}
