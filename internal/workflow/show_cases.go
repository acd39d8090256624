package workflow

import (
	"fmt"
	"io"
	"strings"

	"github.com/m3bench/m3eval/internal/campaign"
	"github.com/m3bench/m3eval/internal/render"
	"github.com/m3bench/m3eval/internal/textsafe"
)

// WriteCases lists the turns to adjudicate: each with its disputed fields, its flags with
// their reasons, and whether every dispute has a final value and every flag is cleared.
func WriteCases(w io.Writer, cases []campaign.Case, decided []bool, f render.Format) error {
	if f == render.JSON {
		type caseJSON struct {
			SampleID   string   `json:"sample_id"`
			Annotators []string `json:"annotators"`
			Disputes   []string `json:"disputes"`
			Flags      []string `json:"flags"`
			Decided    bool     `json:"decided"`
		}
		out := []caseJSON{}
		for i, c := range cases {
			cj := caseJSON{SampleID: c.SampleID, Decided: decided[i], Disputes: []string{}, Flags: []string{}}
			for _, l := range c.Labels {
				cj.Annotators = append(cj.Annotators, l.Annotator)
			}
			for _, d := range c.Disputes {
				cj.Disputes = append(cj.Disputes, d.Reason)
			}
			cj.Flags = append(cj.Flags, c.Flags...)
			out = append(out, cj)
		}
		return render.WriteJSON(w, out)
	}
	if len(cases) == 0 {
		_, err := fmt.Fprintln(w, "no disagreements to adjudicate")
		return err
	}
	open := 0
	var rows [][]string
	for i, c := range cases {
		state := "open"
		if decided[i] {
			state = "decided"
		} else {
			open++
		}
		var ds []string
		for _, d := range c.Disputes {
			ds = append(ds, textsafe.Line(d.Reason))
		}
		for _, f := range c.Flags {
			ds = append(ds, "flagged by "+textsafe.Line(f))
		}
		rows = append(rows, []string{textsafe.Line(c.SampleID), state, strings.Join(ds, "\n")})
	}
	what := "disagree"
	for _, c := range cases {
		if len(c.Flags) > 0 {
			what = "disagree or are flagged"
		}
	}
	fmt.Fprintf(w, "%d turns %s, %d still open\n", len(cases), what, open)
	return render.Grid(w, []string{"sample_id", "state", "disputes"}, rows, nil)
}
