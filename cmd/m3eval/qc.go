package main

import (
	"github.com/spf13/cobra"

	"github.com/m3bench/m3eval/internal/workflow"
)

func newQCCmd(g *globalOptions) *cobra.Command {
	o := workflow.NewQCCommand()
	var output string
	cmd := &cobra.Command{
		Use:   "qc [--campaign NAME]",
		Short: "Flag annotators whose work shows the failures the guide warns about",
		Long: `Qc checks every annotator's submitted labels (of a campaign, or of the whole database)
and flags, each with a one-line reason: straight_lining, low_variance, rushing,
gold_accuracy, intra_agreement, missing_comments and outlier (alpha rising without the
annotator). The flags set the thresholds; docs/campaign.md defines each check.`,
		Example: `  m3eval qc --campaign pilot
  m3eval qc --campaign pilot --rush-seconds 30 --format md -o qc.md`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error { return g.runCampaign(cmd, o, output) },
	}
	f := cmd.Flags()
	f.StringVar(&o.Campaign, "campaign", "", "check this campaign's annotators on its turns (default: every label)")
	f.IntVar(&o.StraightRun, "straight-run", o.StraightRun, "straight-lining: this many identical answer sets in a row")
	f.Float64Var(&o.MinSD, "min-sd", o.MinSD, "low variance: a 1-5 field's standard deviation under this")
	f.IntVar(&o.MinItems, "min-items", o.MinItems, "low variance: only over at least this many items")
	f.Float64Var(&o.RushFraction, "rush-fraction", o.RushFraction, "rushing: items under this share of the annotator's median active time")
	f.Float64Var(&o.RushSeconds, "rush-seconds", o.RushSeconds, "rushing: ... and under this many seconds")
	f.Float64Var(&o.RushShare, "rush-share", o.RushShare, "rushing: flag when more than this share of items is rushed")
	f.Float64Var(&o.GoldMin, "gold-min", o.GoldMin, "gold accuracy: lowest acceptable share of matching answers")
	f.IntVar(&o.GoldTolerance, "gold-tolerance", o.GoldTolerance, "gold accuracy: a 1-5 answer within this many points matches")
	f.Float64Var(&o.IntraMin, "intra-min", o.IntraMin, "intra-annotator agreement: lowest acceptable share of repeated answers that match")
	f.IntVar(&o.MissingComments, "missing-comments", o.MissingComments, "missing comments: how many are tolerated")
	f.Float64Var(&o.OutlierDelta, "outlier-delta", o.OutlierDelta, "outlier: alpha gain when the annotator is left out")
	f.StringVar(&o.Format, "format", "table", "table, json or md")
	f.StringVarP(&output, "output", "o", "", "write to FILE instead of standard output")
	return cmd
}
