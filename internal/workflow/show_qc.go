package workflow

import (
	"fmt"
	"io"
	"strconv"

	"github.com/m3bench/m3eval/internal/campaign"
	"github.com/m3bench/m3eval/internal/render"
	"github.com/m3bench/m3eval/internal/textsafe"
)

// WriteQC shows quality control: one line per annotator with the figures, then every flag
// with its reason. The JSON holds the leave-one-out alphas too.
func WriteQC(w io.Writer, title string, qs []campaign.AnnotatorQC, f render.Format) error {
	if f == render.JSON {
		out := struct {
			Campaign   string                 `json:"campaign"`
			Annotators []campaign.AnnotatorQC `json:"annotators"`
		}{title, qs}
		if out.Annotators == nil {
			out.Annotators = []campaign.AnnotatorQC{}
		}
		return render.WriteJSON(w, out)
	}
	headers := []string{"annotator", "items", "median s", "rushed", "gold", "repeat", "no comment", "flags"}
	var rows [][]string
	for _, q := range qs {
		rows = append(rows, []string{textsafe.Line(q.Annotator), strconv.Itoa(q.Items), fmt.Sprintf("%.1f", q.MedianSeconds),
			strconv.Itoa(q.Rushed), pct(q.GoldAccuracy), pct(q.IntraAgreement), strconv.Itoa(q.MissingComments), strconv.Itoa(len(q.Flags))})
	}
	var flags [][]string
	for _, q := range qs {
		for _, fl := range q.Flags {
			flags = append(flags, []string{textsafe.Line(q.Annotator), string(fl.Check), textsafe.Line(fl.Reason)})
		}
	}
	if f == render.Markdown {
		fmt.Fprintf(w, "## Quality control: %s\n\n", textsafe.Line(title))
		fmt.Fprintln(w, render.MarkdownRow(headers))
		fmt.Fprintln(w, "|---|--:|--:|--:|--:|--:|--:|--:|")
		for _, r := range rows {
			fmt.Fprintln(w, render.MarkdownRow(r))
		}
		fmt.Fprintln(w)
		if len(flags) == 0 {
			_, err := fmt.Fprintln(w, "No flags.")
			return err
		}
		fmt.Fprintln(w, render.MarkdownRow([]string{"annotator", "check", "reason"}))
		fmt.Fprintln(w, "|---|---|---|")
		for _, r := range flags {
			fmt.Fprintln(w, render.MarkdownRow(r))
		}
		return nil
	}
	fmt.Fprintf(w, "quality control: %s\n", textsafe.Line(title))
	if len(qs) == 0 {
		_, err := fmt.Fprintln(w, "no submitted labels yet")
		return err
	}
	if err := render.Grid(w, headers, rows, map[int]bool{1: true, 2: true, 3: true, 4: true, 5: true, 6: true, 7: true}); err != nil {
		return err
	}
	if len(flags) == 0 {
		_, err := fmt.Fprintln(w, "no flags")
		return err
	}
	for _, r := range flags {
		if _, err := fmt.Fprintf(w, "%s: %s: %s\n", r[0], r[1], r[2]); err != nil {
			return err
		}
	}
	return nil
}

// pct shows a rate of quality control; "–" when there is none (no gold or repeated turns).
func pct(p *float64) string {
	if p == nil {
		return "–"
	}
	return render.Pct(*p)
}
