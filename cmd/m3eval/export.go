package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/m3bench/m3eval/internal/campaign"
	"github.com/m3bench/m3eval/internal/cmdutil"
	"github.com/m3bench/m3eval/internal/render"
	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/workflow"
)

func newExportCmd(g *globalOptions) *cobra.Command {
	var output string
	o := workflow.ExportOptions{Disagree: campaign.DefaultDisagreeOptions()}
	cmd := &cobra.Command{
		Use:   "export",
		Short: "Export labels in the annotation guide's JSON format (or JSONL, CSV)",
		Long: `Export writes each labeled turn with its human_annotation: the rubric's fields (NA as
null), annotator, annotated_at, active_seconds, rubric_version and flagged. With several
annotators and no --annotator, each turn carries human_annotations: [...]. Drafts are left
out unless --include-drafts, which marks them "status": "draft".
With --final, each turn carries one final label (annotator "final"): the adjudicated
value of a field where an adjudicator settled it, else the annotators' agreed value, and
"final_source" (adjudicated, agreed or single) with "field_sources" per field says which.
Turns whose disagreement (see m3eval adjudicate) is not settled yet are left out and
counted on standard error. --campaign limits --final to a campaign's turns. See
docs/campaign.md.`,
		Example: `  m3eval export -o labels.json
  m3eval export --annotator alice --format jsonl -o alice.jsonl
  m3eval export --format csv --include-drafts > all.csv
  m3eval export --final --campaign pilot -o final.json`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, r, err := g.openDB(cmd.Context(), store.Options{ReadOnly: true}, false)
			if err != nil {
				return err
			}
			defer s.Close()
			counts, err := workflow.Export(cmd.Context(), s, r, o, func(fn func(io.Writer) error) error {
				return writeOutput(cmd, output, func(w io.Writer, _ bool) error { return fn(w) })
			})
			if err != nil {
				return notFoundHint(usageIf(err), "m3eval sample --list")
			}
			if counts != nil {
				fmt.Fprintln(cmd.ErrOrStderr(), "final labels: "+counts.String())
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Labels.Annotator, "annotator", "", "export only this annotator's labels")
	f.BoolVar(&o.Labels.IncludeDrafts, "include-drafts", false, "include incomplete labels, marked \"status\": \"draft\"")
	cmdutil.EnumVar(f, &o.Format.Format, "format", render.JSON, render.LabeledFormats, "output format")
	f.StringVarP(&output, "output", "o", "", "write to FILE instead of standard output")
	f.BoolVar(&o.Final, "final", false, "one final label per turn: adjudicated, else agreed")
	f.StringVar(&o.Campaign, "campaign", "", "with --final: only this campaign's turns")
	f.IntVar(&o.Disagree.ScaleGap, "gap", o.Disagree.ScaleGap, "with --final: 1-5 answers this far apart disagree")
	f.BoolVar(&o.Disagree.CountNA, "count-na", false, "with --final: NA against an answer is a disagreement too")
	o.Format.CSV.AddFlags(f)
	names(cmd, map[string]name{"annotator": annotatorName, "campaign": campaignName})
	return cmd
}
