package main

import (
	"github.com/spf13/cobra"

	"github.com/m3bench/m3eval/internal/estimate"
)

func newEstimateCmd(g *globalOptions) *cobra.Command {
	o := &estimate.Request{}
	cmd := &cobra.Command{
		Use:   "estimate",
		Short: "Each model's mean human score per field, from the human labels and one judge's scores together",
		Long: `estimate reports, per model (and per --by group) and per scale or Yes/No field of the
rubric, the mean human score as prediction-powered inference (PPI++) estimates it: the judge's
score on every turn, corrected by the judge's error on the turns humans labeled, with a 95%
interval over episodes (a jackknife over episodes with a t quantile, valid with few episodes;
none from fewer than 5). Beside it: the human labels alone, the judge alone, and how many human
labels the judge was worth. Then the differences between models, with p adjusted over the
pairs of each field (--adjust) and simultaneous intervals, and their ranking with 95% rank
sets. docs/statistics.md defines every number.`,
		Example: `  m3eval estimate --judge rules
  m3eval estimate --judge rules --adjust bh
  m3eval estimate --judge gpt4o --by action_type --format json -o estimates.json`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error { return usageIf(o.Run(cmd.Context(), g.io(cmd))) },
	}
	o.AddFlags(cmd.Flags())
	names(cmd, map[string]name{"judge": judgeName, "annotator": annotatorName, "sample": sampleName})
	return cmd
}
