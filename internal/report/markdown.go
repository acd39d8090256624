package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/m3bench/m3eval/internal/agree"
	"github.com/m3bench/m3eval/internal/csvout"
	"github.com/m3bench/m3eval/internal/textsafe"
)

// writeMarkdown writes one GitHub-flavoured table per field, three decimals, undefined
// values as "—" with numbered footnotes.
func writeMarkdown(w io.Writer, results []agree.FieldResult, o Options) error {
	var notes footnotes
	var b strings.Builder
	for _, r := range results {
		fmt.Fprintf(&b, "**%s**\n\n", escapeMD(header(r)))
		b.WriteString("| Statistic | Value | n |\n| --- | --- | ---: |\n")
		group := ""
		for _, x := range rowsOf(r) {
			if x.group != group {
				group = x.group
				fmt.Fprintf(&b, "| *%s* | | |\n", escapeMD(group))
			}
			val := format(x.v, x.ci, 3)
			if !x.v.OK() {
				val += fmt.Sprintf("<sup>%d</sup>", notes.num(x.v.Reason()))
			}
			fmt.Fprintf(&b, "| %s | %s | %d |\n", escapeMD(x.name), val, x.n)
		}
		b.WriteString("\n")
	}
	if o.Bootstrap > 0 {
		fmt.Fprintf(&b, "Brackets: 95%% percentile bootstrap interval (%d replicates over items). ", o.Bootstrap)
	}
	b.WriteString("n: items the statistic rests on.\n")
	for i, r := range notes.reasons {
		fmt.Fprintf(&b, "\n<sup>%d</sup> Undefined: %s.", i+1, escapeMD(r))
	}
	if len(notes.reasons) > 0 {
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// escapeMD also neutralizes control characters: names in the report come from data.
func escapeMD(s string) string {
	return strings.NewReplacer("|", `\|`, "*", `\*`, "_", `\_`).Replace(textsafe.Line(s))
}

// writeCSV writes one line per statistic, full precision, for spreadsheets and scripts.
func writeCSV(w io.Writer, results []agree.FieldResult, co csvout.Options) error {
	cw := csvout.NewWriter(w, co)
	cw.Write([]string{"field", "group", "statistic", "key", "value", "n", "ci95_lo", "ci95_hi", "se", "undefined_reason"})
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
			cw.Write(rec)
		}
	}
	cw.Flush()
	return cw.Error()
}
