package main

import (
	"github.com/spf13/cobra"

	"github.com/m3bench/m3eval/internal/scoring"
)

func newScoreCmd(g *globalOptions) *cobra.Command {
	o := &scoring.Request{}
	cmd := &cobra.Command{
		Use:   "score",
		Short: "Agreement of the annotators with each other and with the automatic judges, from the database",
		Long: `score computes m3eval agree's statistics from the database for every scale and choice field
of the rubric: the annotators with each other and every judge against them (done labels
unless --include-drafts; --by adds a block per group of turns; --bootstrap B resamples
episodes for 95% intervals). docs/statistics.md defines every number and flag.`,
		Example: `  m3eval score
  m3eval score --by action_type --judge gpt4o --format md -o agreement.md
  m3eval score --annotator alice --annotator bob --bootstrap 1000 --seed 7 --format json`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error { return usageIf(o.Run(cmd.Context(), g.io(cmd))) },
	}
	o.AddFlags(cmd.Flags())
	names(cmd, map[string]name{"judge": judgeName, "annotator": annotatorName})
	return cmd
}
