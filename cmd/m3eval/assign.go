package main

import (
	"github.com/spf13/cobra"

	"github.com/m3bench/m3eval/internal/workflow"
)

func newAssignCmd(g *globalOptions) *cobra.Command {
	o := &workflow.AssignCommand{}
	cmd := &cobra.Command{
		Use:   "assign --sample NAME --annotators A,B,C --overlap K",
		Short: "Give a sample's turns to annotators, each turn to exactly K of them",
		Long: `Assign gives every turn of the sample to exactly --overlap annotators, loads within one
turn of each other, every two annotators sharing turns. Re-running with more annotators or
a larger overlap extends the assignment; started turns stay with their annotator. --gold
FILE mixes labeled gold turns into every queue (--gold-rate of it); --repeat R shows R of
each annotator's turns to them again after their queue (intra-annotator agreement in qc).
--show prints the loads and the turns every pair shares. See docs/campaign.md.`,
		Example: `  m3eval assign --sample pilot --annotators alice,bob,carol,dave --overlap 2
  m3eval assign --sample pilot --annotators alice,bob,carol,dave,erin --overlap 2
  m3eval assign --sample pilot --annotators alice,bob,carol,dave --overlap 2 --gold gold.json --gold-rate 0.05
  m3eval assign --sample pilot --show --format json`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return notFoundHint(usageIf(o.Run(cmd.Context(), g.io(cmd))), "m3eval sample --list")
		},
	}
	o.AddFlags(cmd.Flags())
	names(cmd, map[string]name{"sample": sampleName})
	return cmd
}
