package main

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/m3bench/m3eval/internal/agree/longform"
	"github.com/m3bench/m3eval/internal/scoring"
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
	f.StringVar(&o.run.Files.Auto, "auto", "", "automatic scores: CSV item,field,value (optionally with a judge column)")
	f.StringVar(&o.run.Files.Schema, "schema", "", "field types and categories: JSON {\"fields\": {NAME: {\"type\": \"ordinal\"|\"nominal\"|\"continuous\", \"categories\": [...]}}}")
	f.StringVar(&o.run.Levels, "levels", "", "item groups for system- and segment-level correlations: CSV item,system,segment")
	f.StringVar(&o.run.Clusters, "clusters", "", "bootstrap clusters: CSV item,cluster (e.g. the episode of each turn)")
	f.StringVar(&o.run.ClusterColumn, "cluster", "", "bootstrap clusters from a column of --levels: system or segment")
	statFlags(f, &o.stats)
	f.StringVar((*string)(&o.run.Mean), "mean", "exact", "system means: exact, or float (numpy's floating-point order, to reproduce such analyses)")
	f.StringSliceVar(&o.run.Files.Missing, "missing", nil, "further values meaning \"no rating\" in ratings and scores, e.g. --missing NULL,-")
	f.BoolVar(&o.run.Files.NACategory, "na-category", false, "treat NA as a category of nominal fields instead of missing")
	return cmd
}

// statFlags registers the statistics and output flags agree and score share.
func statFlags(f *pflag.FlagSet, o *scoring.StatFlags) {
	f.IntVar(&o.Bootstrap, "bootstrap", 0, "bootstrap replicates for 95% intervals and standard errors (0: none)")
	f.Uint64Var(&o.Seed, "seed", 12345, "bootstrap seed; the same seed gives the same intervals on any machine")
	f.StringVar(&o.CI, "ci", "percentile", "bootstrap interval: percentile or bca")
	f.StringVar(&o.Adjust, "adjust", "none", "adjust p-values over the whole report: holm, bh or none")
	f.StringVar(&o.Raters, "raters", "distinct", "distinct (each rater is one person) or exchangeable (raters are interchangeable slots: no pairwise or two-way ICC statistics)")
	f.StringVar(&o.Format, "format", "table", "output format: table, json, md, csv or latex")
	f.StringVar(&o.Matrix, "matrix", "", "print one statistic as a judge × field matrix, e.g. kendall_tau_b (or, with agree --levels, system_level.kendall_tau_b)")
	f.StringVarP(&o.Output, "output", "o", "", "write to FILE instead of standard output")
	csvFlags(f, &o.CSV)
}

func runAgree(cmd *cobra.Command, ratings string, o *agreeOptions) error {
	st, err := o.stats.Check()
	if err != nil {
		return usageErrorf("%v", err)
	}
	o.run.Files.Ratings = ratings
	if err := oneStdin(ratings, o.run.Files.Auto, o.run.Files.Schema, o.run.Levels, o.run.Clusters); err != nil {
		return err
	}
	if err := o.run.Check(); err != nil {
		return usageErrorf("%v", err)
	}
	o.run.Files.Warn = func(msg string) { fmt.Fprintln(cmd.ErrOrStderr(), "warning: "+msg) }
	o.run.Analysis, o.run.Adjust = st.Analysis, st.Adjust
	results, err := longform.Run(cmd.Context(), o.run)
	if err != nil {
		return err
	}
	return writeOutput(cmd, o.stats.Output, st.Writer(results, o.run.Inputs(), o.run.ClusterName()))
}
