package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/m3bench/m3eval/internal/campaign"
	"github.com/m3bench/m3eval/internal/csvout"
	"github.com/m3bench/m3eval/internal/labeled"
	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/workflow"
)

func newExportCmd(g *globalOptions) *cobra.Command {
	var (
		o              store.ExportOptions
		format, output string
		final          bool
		camp           string
		d              = campaign.DefaultDisagreeOptions()
		co             csvout.Options
	)
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
			if !slices.Contains(labeled.Formats, format) {
				return usageErrorf("--format %q: use one of %s", format, strings.Join(labeled.Formats, ", "))
			}
			s, r, err := g.openDB(cmd.Context(), store.Options{ReadOnly: true}, false)
			if err != nil {
				return err
			}
			defer s.Close()
			lo := labeled.Options{Format: format, Rubric: r, CSV: co}
			if final || camp != "" {
				if !final {
					return usageErrorf("--campaign goes with --final")
				}
				if o.Annotator != "" || o.IncludeDrafts {
					return usageErrorf("--final takes every annotator's submitted labels: drop --annotator and --include-drafts")
				}
				var counts workflow.FinalCounts
				lo.Final = true
				err := writeOutput(cmd, output, func(w io.Writer, _ bool) error {
					lw, err := labeled.NewWriter(w, lo)
					if err != nil {
						return err
					}
					if counts, err = workflow.ExportFinal(cmd.Context(), s, camp, r, d, lw.Write); err != nil {
						return notFoundHint(err, "m3eval sample --list")
					}
					return lw.Close()
				})
				if err == nil {
					fmt.Fprintln(cmd.ErrOrStderr(), "final labels: "+counts.String())
				}
				return err
			}
			names, err := s.ExportAnnotators(cmd.Context(), o)
			if err != nil {
				return err
			}
			if o.Annotator != "" && len(names) == 0 {
				hint := " (drafts are left out without --include-drafts)"
				if o.IncludeDrafts {
					hint = ""
				}
				return fmt.Errorf("export: %s has no labels to export%s", o.Annotator, hint)
			}
			lo.Multi = len(names) > 1
			return writeOutput(cmd, output, func(w io.Writer, _ bool) error {
				lw, err := labeled.NewWriter(w, lo)
				if err != nil {
					return err
				}
				if err := s.Export(cmd.Context(), o, lw.Write); err != nil {
					return err
				}
				return lw.Close()
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Annotator, "annotator", "", "export only this annotator's labels")
	f.BoolVar(&o.IncludeDrafts, "include-drafts", false, "include incomplete labels, marked \"status\": \"draft\"")
	f.StringVar(&format, "format", "json", "json, jsonl or csv")
	f.StringVarP(&output, "output", "o", "", "write to FILE instead of standard output")
	f.BoolVar(&final, "final", false, "one final label per turn: adjudicated, else agreed")
	f.StringVar(&camp, "campaign", "", "with --final: only this campaign's turns")
	f.IntVar(&d.ScaleGap, "gap", d.ScaleGap, "with --final: 1-5 answers this far apart disagree")
	f.BoolVar(&d.CountNA, "count-na", false, "with --final: NA against an answer is a disagreement too")
	csvFlags(f, &co)
	return cmd
}
