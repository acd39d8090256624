package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/m3bench/m3eval/internal/campaign"
	"github.com/m3bench/m3eval/internal/csvout"
	"github.com/m3bench/m3eval/internal/dataset"
	"github.com/m3bench/m3eval/internal/labeled"
	"github.com/m3bench/m3eval/internal/rubric"
	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/workflow"
)

// finalOptions are export's --final flags.
type finalOptions struct {
	on       bool
	campaign string
	o        campaign.DisagreeOptions
}

// exportFinal writes the final labels and says on standard error what they are made of.
func exportFinal(cmd *cobra.Command, s *store.Store, r *rubric.Rubric, o store.ExportOptions, format, output string, f finalOptions, co csvout.Options) error {
	if !f.on {
		return usageErrorf("--campaign goes with --final")
	}
	if o.Annotator != "" || o.IncludeDrafts {
		return usageErrorf("--final takes every annotator's submitted labels: drop --annotator and --include-drafts")
	}
	var counts workflow.FinalCounts
	err := writeOutput(cmd, output, func(w io.Writer, _ bool) error {
		lw, err := labeled.NewWriter(w, labeled.Options{Format: format, Rubric: r, Final: true, CSV: co})
		if err != nil {
			return err
		}
		counts, err = workflow.ExportFinal(cmd.Context(), s, f.campaign, r, f.o, lw.Write)
		if err != nil {
			return notFoundHint(err, "m3eval sample --list")
		}
		return lw.Close()
	})
	if err != nil {
		return err
	}
	fmt.Fprintln(cmd.ErrOrStderr(), "final labels: "+counts.String())
	return nil
}

func newExportCmd(g *globalOptions) *cobra.Command {
	var (
		o      store.ExportOptions
		format string
		output string
		final  = finalOptions{o: campaign.DefaultDisagreeOptions()}
		co     csvout.Options
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
			if !contains(labeled.Formats, format) {
				return usageErrorf("--format %q: use one of %s", format, strings.Join(labeled.Formats, ", "))
			}
			if err := g.mustExist(); err != nil {
				return err
			}
			r, err := g.loadRubric()
			if err != nil {
				return err
			}
			s, err := g.openStore(cmd.Context(), nil, store.Options{ReadOnly: true})
			if err != nil {
				return err
			}
			defer s.Close()
			if final.on || final.campaign != "" {
				return exportFinal(cmd, s, r, o, format, output, final, co)
			}
			names, err := s.ExportAnnotators(cmd.Context(), o)
			if err != nil {
				return err
			}
			if o.Annotator != "" && len(names) == 0 {
				return fmt.Errorf("export: %s has no labels to export%s", o.Annotator, draftHint(o))
			}
			return writeOutput(cmd, output, func(w io.Writer, _ bool) error {
				lw, err := labeled.NewWriter(w, labeled.Options{Format: format, Rubric: r, Multi: len(names) > 1, CSV: co})
				if err != nil {
					return err
				}
				if err := s.Export(cmd.Context(), o, func(l *dataset.Labeled) error { return lw.Write(l) }); err != nil {
					return err
				}
				return lw.Close()
			})
		},
	}
	cmd.Flags().StringVar(&o.Annotator, "annotator", "", "export only this annotator's labels")
	cmd.Flags().BoolVar(&o.IncludeDrafts, "include-drafts", false, "include incomplete labels, marked \"status\": \"draft\"")
	cmd.Flags().StringVar(&format, "format", "json", "json, jsonl or csv")
	cmd.Flags().StringVarP(&output, "output", "o", "", "write to FILE instead of standard output")
	cmd.Flags().BoolVar(&final.on, "final", false, "one final label per turn: adjudicated, else agreed")
	cmd.Flags().StringVar(&final.campaign, "campaign", "", "with --final: only this campaign's turns")
	cmd.Flags().IntVar(&final.o.ScaleGap, "gap", final.o.ScaleGap, "with --final: 1-5 answers this far apart disagree")
	cmd.Flags().BoolVar(&final.o.CountNA, "count-na", false, "with --final: NA against an answer is a disagreement too")
	csvFlags(cmd.Flags(), &co)
	return cmd
}

func draftHint(o store.ExportOptions) string {
	if o.IncludeDrafts {
		return ""
	}
	return " (drafts are left out without --include-drafts)"
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
