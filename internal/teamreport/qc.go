package teamreport

import (
	"fmt"
	"io"
	"strconv"

	"github.com/m3bench/m3eval/internal/campaign"
)

// WriteQC shows quality control: one line per annotator with the figures, then every flag
// with its reason. The JSON holds the leave-one-out alphas too.
func WriteQC(w io.Writer, title string, qs []campaign.AnnotatorQC, f Format) error {
	if f == JSON {
		out := struct {
			Campaign   string                 `json:"campaign"`
			Annotators []campaign.AnnotatorQC `json:"annotators"`
		}{title, qs}
		if out.Annotators == nil {
			out.Annotators = []campaign.AnnotatorQC{}
		}
		return writeJSON(w, out)
	}
	headers := []string{"annotator", "items", "median s", "rushed", "gold", "repeat", "no comment", "flags"}
	var rows [][]string
	for _, q := range qs {
		rows = append(rows, []string{clean(q.Annotator), strconv.Itoa(q.Items), fmt.Sprintf("%.1f", q.MedianSeconds),
			strconv.Itoa(q.Rushed), pct(q.GoldAccuracy), pct(q.IntraAgreement), strconv.Itoa(q.MissingComments), strconv.Itoa(len(q.Flags))})
	}
	var flags [][]string
	for _, q := range qs {
		for _, fl := range q.Flags {
			flags = append(flags, []string{clean(q.Annotator), string(fl.Check), clean(fl.Reason)})
		}
	}
	if f == Markdown {
		fmt.Fprintf(w, "## Quality control: %s\n\n", clean(title))
		fmt.Fprintln(w, mdRow(headers))
		fmt.Fprintln(w, "|---|--:|--:|--:|--:|--:|--:|--:|")
		for _, r := range rows {
			fmt.Fprintln(w, mdRow(r))
		}
		fmt.Fprintln(w)
		if len(flags) == 0 {
			_, err := fmt.Fprintln(w, "No flags.")
			return err
		}
		fmt.Fprintln(w, mdRow([]string{"annotator", "check", "reason"}))
		fmt.Fprintln(w, "|---|---|---|")
		for _, r := range flags {
			fmt.Fprintln(w, mdRow(r))
		}
		return nil
	}
	fmt.Fprintf(w, "quality control: %s\n", clean(title))
	if len(qs) == 0 {
		_, err := fmt.Fprintln(w, "no submitted labels yet")
		return err
	}
	if err := grid(w, headers, rows, map[int]bool{1: true, 2: true, 3: true, 4: true, 5: true, 6: true, 7: true}); err != nil {
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

func pct(p *float64) string {
	if p == nil {
		return "–"
	}
	return fmt.Sprintf("%.0f%%", 100**p)
}
