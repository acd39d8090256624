package main

import (
	"github.com/spf13/cobra"

	"github.com/m3bench/m3eval/internal/workflow"
)

func newExportCmd(g *globalOptions) *cobra.Command {
	o := workflow.NewExportCommand()
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
			return notFoundHint(usageIf(o.Run(cmd.Context(), g.io(cmd))), "m3eval sample --list")
		},
	}
	o.AddFlags(cmd.Flags())
	names(cmd, map[string]name{"annotator": annotatorName, "campaign": campaignName})
	return cmd
}
