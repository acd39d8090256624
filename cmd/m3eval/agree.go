package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/m3bench/m3eval/internal/scoring"
	"github.com/m3bench/m3eval/internal/scoring/longform"
)

type agreeOptions struct {
	stats scoring.StatFlags
	run   longform.RunOptions
}

func newAgreeCmd() *cobra.Command {
	o := &agreeOptions{}
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
		RunE: func(cmd *cobra.Command, args []string) error { return runAgree(cmd, args[0], o) },
	}
	f := cmd.Flags()
	o.run.AddFlags(f)
	o.stats.AddFlags(f)
	f.StringVarP(&o.stats.Output, "output", "o", "", "write to FILE instead of standard output")
	return cmd
}

func runAgree(cmd *cobra.Command, ratings string, o *agreeOptions) error {
	st, err := o.stats.Check()
	if err != nil {
		return usageIf(err)
	}
	o.run.Files.Ratings = ratings
	if err := oneStdin(ratings, o.run.Files.Auto, o.run.Files.Schema, o.run.Levels, o.run.Clusters); err != nil {
		return err
	}
	if err := o.run.Check(); err != nil {
		return usageIf(err)
	}
	o.run.Files.Warn = func(msg string) { fmt.Fprintln(cmd.ErrOrStderr(), "warning: "+msg) }
	o.run.Analysis, o.run.Adjust = st.Analysis, st.Adjust
	results, err := longform.Run(cmd.Context(), o.run)
	if err != nil {
		return err
	}
	return writeOutput(cmd, o.stats.Output, st.Writer(results, o.run.Inputs(), o.run.ClusterName()))
}
