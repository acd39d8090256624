package main

import (
	"github.com/spf13/cobra"

	"github.com/m3bench/m3eval/internal/scoring/longform"
)

func newAgreeCmd() *cobra.Command {
	q := &longform.Request{}
	cmd := &cobra.Command{
		Use:   "agree RATINGS.csv",
		Short: "Inter-rater agreement and human-vs-automatic correlation from long-form CSV files",
		Long: `agree reads ratings in long form (CSV item,rater,field,value) and computes every field's
inter-rater agreement; with --auto (item,[judge,]field,value) each judge's correlation with
the item's mean rating, and with --levels system- and segment-level ones. Undefined
statistics are shown as — with the reason. docs/statistics.md defines every number and flag.`,
		Example: `  m3eval agree ratings.csv --auto auto.csv --schema schema.json
  m3eval agree ratings.csv --bootstrap 1000 --seed 7 --format md -o agreement.md
  m3eval agree ratings.csv --auto auto.csv --levels levels.csv --cluster system --bootstrap 1000 --ci bca --adjust holm
  m3eval agree ratings.csv --auto auto.csv --levels levels.csv --matrix system_level.kendall_tau_b --format latex`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			q.Input.Files.Ratings = args[0]
			return usageIf(q.Run(cmd.Context(), cmdIO(cmd)))
		},
	}
	q.AddFlags(cmd.Flags())
	return cmd
}
