package main

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/m3bench/m3eval/internal/campaign"
	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/teamreport"
	"github.com/m3bench/m3eval/internal/workflow"
)

func newQCCmd(g *globalOptions) *cobra.Command {
	var (
		name   string
		format string
		output string
	)
	o := campaign.DefaultQCOptions()
	cmd := &cobra.Command{
		Use:   "qc [--campaign NAME]",
		Short: "Flag annotators whose work shows the failures the guide warns about",
		Long: `Qc checks every annotator's submitted labels (of a campaign, or of the whole database)
and flags, each with a one-line reason:
  straight_lining   the same answers on --straight-run items in a row
  low_variance      a 1-5 field with a standard deviation under --min-sd (over --min-items)
  rushing           more than --rush-share of the items under the time floor: under
                    --rush-fraction of the annotator's median active time and under --rush-seconds
  gold_accuracy     answers on gold turns (assign --gold) matching under --gold-min
  intra_agreement   answers on repeated turns matching under --intra-min
  missing_comments  more than --missing-comments items the guide asks a comment for, without one
  outlier           a field's Krippendorff alpha rising by --outlier-delta or more when the
                    annotator is left out`,
		Example: `  m3eval qc --campaign pilot
  m3eval qc --campaign pilot --rush-seconds 30 --format md -o qc.md`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			f, err := teamreport.ParseFormat(format, teamreport.Table, teamreport.JSON, teamreport.Markdown)
			if err != nil {
				return &usageError{err}
			}
			s, r, err := g.openExisting(cmd.Context(), store.Options{ReadOnly: true})
			if err != nil {
				return err
			}
			defer s.Close()
			qs, err := workflow.QC(cmd.Context(), s, name, r, o)
			if err != nil {
				return notFoundHint(err, "m3eval sample --list")
			}
			title := name
			if title == "" {
				title = "all labels"
			}
			return writeOutput(cmd, output, func(w io.Writer, _ bool) error { return teamreport.WriteQC(w, title, qs, f) })
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&name, "campaign", "", "check this campaign's annotators on its turns (default: every label)")
	fl.IntVar(&o.StraightRun, "straight-run", o.StraightRun, "straight-lining: this many identical answer sets in a row")
	fl.Float64Var(&o.MinSD, "min-sd", o.MinSD, "low variance: a 1-5 field's standard deviation under this")
	fl.IntVar(&o.MinItems, "min-items", o.MinItems, "low variance: only over at least this many items")
	fl.Float64Var(&o.RushFraction, "rush-fraction", o.RushFraction, "rushing: items under this share of the annotator's median active time")
	fl.Float64Var(&o.RushSeconds, "rush-seconds", o.RushSeconds, "rushing: ... and under this many seconds")
	fl.Float64Var(&o.RushShare, "rush-share", o.RushShare, "rushing: flag when more than this share of items is rushed")
	fl.Float64Var(&o.GoldMin, "gold-min", o.GoldMin, "gold accuracy: lowest acceptable share of matching answers")
	fl.IntVar(&o.GoldTolerance, "gold-tolerance", o.GoldTolerance, "gold accuracy: a 1-5 answer within this many points matches")
	fl.Float64Var(&o.IntraMin, "intra-min", o.IntraMin, "intra-annotator agreement: lowest acceptable share of repeated answers that match")
	fl.IntVar(&o.MissingComments, "missing-comments", o.MissingComments, "missing comments: how many are tolerated")
	fl.Float64Var(&o.OutlierDelta, "outlier-delta", o.OutlierDelta, "outlier: alpha gain when the annotator is left out")
	fl.StringVar(&format, "format", "table", "table, json or md")
	fl.StringVarP(&output, "output", "o", "", "write to FILE instead of standard output")
	return cmd
}
