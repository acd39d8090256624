package render

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/m3bench/m3eval/internal/agree"
)

// writeMarkdown writes one GitHub-flavoured table per field, three decimals, undefined
// values as "—" with numbered footnotes.
func writeMarkdown(w io.Writer, results []agree.FieldResult, o AgreementOptions) error {
	var notes footnotes
	var b strings.Builder
	for _, r := range results {
		fmt.Fprintf(&b, "**%s**\n\n", EscapeMarkdown(header(r)))
		fmt.Fprintf(&b, "| Statistic | Value | %s | n |\n| --- | --- | ---: | ---: |\n", pHeader(o.Adjust))
		group := ""
		for _, x := range rowsOf(r) {
			if x.group != group {
				group = x.group
				fmt.Fprintf(&b, "| *%s* | | | |\n", EscapeMarkdown(group))
			}
			val := format(x.v, x.ci, 3)
			if !x.v.OK() {
				val += fmt.Sprintf("<sup>%d</sup>", notes.num(x.v.Reason()))
			} else if x.ci != nil && !x.ci.Lo.OK() && x.ci.Lo.Reason() != "" {
				val += fmt.Sprintf("<sup>%d</sup>", notes.num(x.ci.Lo.Reason())) // why no interval
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %d |\n", EscapeMarkdown(x.name), val, pText(x.test, o.Adjust), x.n)
		}
		b.WriteString("\n")
	}
	if o.Bootstrap > 0 {
		b.WriteString(ciNote(o) + " ")
	}
	b.WriteString("n: items the statistic rests on. " + pNote(o) + "\n")
	for i, r := range notes.reasons {
		fmt.Fprintf(&b, "\n<sup>%d</sup> Undefined: %s.", i+1, EscapeMarkdown(r))
	}
	if len(notes.reasons) > 0 {
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeCSV writes one line per statistic, full precision, for spreadsheets and scripts.
func writeCSV(w io.Writer, results []agree.FieldResult, co CSVOptions) error {
	cw := NewCSVWriter(w, co)
	cw.Write([]string{"field", "group", "statistic", "key", "value", "n", "ci95_lo", "ci95_hi", "se", "undefined_reason", "p", "p_adjusted", "test"})
	num := func(v agree.Value) string {
		if x, ok := v.Float(); ok {
			return strconv.FormatFloat(x, 'g', -1, 64)
		}
		return ""
	}
	for _, r := range results {
		for _, x := range rowsOf(r) {
			rec := []string{r.Field.Name, x.group, x.name, x.key, num(x.v), strconv.Itoa(x.n), "", "", "", x.v.Reason()}
			if x.ci != nil {
				rec[6], rec[7], rec[8] = num(x.ci.Lo), num(x.ci.Hi), num(x.ci.SE)
			}
			rec = append(rec, testCells(x.test, num)...)
			cw.Write(rec)
		}
	}
	cw.Flush()
	return cw.Error()
}

// testCells are the CSV cells of a test: p, adjusted p, method.
func testCells(t *agree.Test, num func(agree.Value) string) []string {
	if t == nil {
		return []string{"", "", ""}
	}
	return []string{num(t.P), num(t.PAdjusted), string(t.Method)}
}

// pHeader is the heading of the p-value column.
func pHeader(a agree.Adjustment) string {
	if a == "" || a == agree.AdjustNone {
		return "p"
	}
	return "p (" + string(a) + ")"
}

// pText shows a test's p-value (adjusted when an adjustment is in effect) with 3 digits,
// "<0.001" below that; "" without a test, "—" when undefined.
func pText(t *agree.Test, a agree.Adjustment) string {
	if t == nil {
		return ""
	}
	v := t.P
	if a != "" && a != agree.AdjustNone {
		v = t.PAdjusted
	}
	p, ok := v.Float()
	if !ok {
		return "—"
	}
	if p < 0.001 {
		return "<0.001"
	}
	return fmt.Sprintf("%.3f", p)
}

// ciNote explains the brackets.
func ciNote(o AgreementOptions) string {
	kind := "percentile"
	if o.CI == agree.CIBCa {
		kind = "BCa"
	}
	unit := "items"
	if o.Cluster != "" {
		unit = o.Cluster + " clusters (every statistic and judge from the same draws)"
	}
	return fmt.Sprintf("Brackets: 95%% %s bootstrap interval, %d replicates resampling %s.", kind, o.Bootstrap, unit)
}

// pNote says what the p column holds.
func pNote(o AgreementOptions) string {
	s := "p: two-sided test of 0 (r, ρ: t; τ-b: exact or normal; κ: z; ICC: F;\njudge differences: Williams' t or paired bootstrap)"
	switch o.Adjust {
	case agree.AdjustHolm:
		s += ",\nHolm-adjusted over every test of the report"
	case agree.AdjustBH:
		s += ",\nBenjamini–Hochberg-adjusted over every test of the report"
	}
	return s + "."
}
