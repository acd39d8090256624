package main

import (
	"github.com/spf13/cobra"

	"github.com/m3bench/m3eval/internal/workflow"
)

func newQCCmd(g *globalOptions) *cobra.Command {
	o := workflow.NewQCCommand()
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
		RunE: func(cmd *cobra.Command, _ []string) error {
			return notFoundHint(usageIf(o.Run(cmd.Context(), g.io(cmd))), "m3eval sample --list")
		},
	}
	o.AddFlags(cmd.Flags())
	names(cmd, map[string]name{"campaign": campaignName})
	return cmd
}
