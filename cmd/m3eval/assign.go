package main

import (
	"github.com/spf13/cobra"

	"github.com/m3bench/m3eval/internal/workflow"
)

func newAssignCmd(g *globalOptions) *cobra.Command {
	var o workflow.AssignCommand
	var output string
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
		PreRun: func(cmd *cobra.Command, _ []string) {
			o.RateDefaults(cmd.Flags().Changed("gold-rate"), cmd.Flags().Changed("repeat"))
		},
		RunE: func(cmd *cobra.Command, _ []string) error { return g.runCampaign(cmd, &o, output) },
	}
	f := cmd.Flags()
	f.StringVar(&o.Sample, "sample", "", "the sample to assign (m3eval sample --list)")
	f.StringVar(&o.Names, "annotators", "", "comma-separated annotator names; earlier ones first when extending")
	f.IntVar(&o.Overlap, "overlap", 0, "annotators per turn")
	f.Int64Var(&o.Seed, "seed", 42, "random seed for ties and gold turns")
	f.StringVar(&o.GoldFile, "gold", "", "labeled turns in the guide's format to use as gold")
	f.Float64Var(&o.GoldRate, "gold-rate", 0, "share of each queue that is gold, e.g. 0.05 (default: the earlier run's, or 0.05 with --gold)")
	f.Float64Var(&o.RepeatRate, "repeat", 0, "share of each annotator's turns shown to them again after their queue, e.g. 0.1 (default: the earlier run's)")
	f.BoolVar(&o.Show, "show", false, "show the assignment instead of changing it")
	f.StringVar(&o.Format, "format", "table", "table or json")
	f.StringVarP(&output, "output", "o", "", "write to FILE instead of standard output")
	return cmd
}
