package main

import (
	"fmt"
	"io"
	"path/filepath"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/m3bench/m3eval/internal/agree"
	"github.com/m3bench/m3eval/internal/agree/longform"
	"github.com/m3bench/m3eval/internal/csvout"
	"github.com/m3bench/m3eval/internal/report"
)

type agreeOptions struct {
	csv                  csvout.Options // --raw, --excel
	auto, schema, levels string
	clusters, cluster    string
	bootstrap            int
	seed                 uint64
	ci, adjust, raters   string
	mean                 string
	missing              []string
	naCategory           bool
	format, matrix       string
	output               string
}

func newAgreeCmd() *cobra.Command {
	o := &agreeOptions{}
	cmd := &cobra.Command{
		Use:   "agree RATINGS.csv",
		Short: "Inter-rater agreement and human-vs-automatic correlation from long-form CSV files",
		Long: `agree reads ratings in long form (CSV header item,rater,field,value) and computes, for
every field: pairwise percent agreement and Cohen's kappas, Fleiss' kappa, Krippendorff's
alpha, Gwet's AC1/AC2, percent agreements and ICCs; with --auto (item,field,value, or
item,judge,field,value for several judges) the correlations of the item's mean human rating
with each judge's score and the judge's agreement with the majority label.

Empty values and NA are missing (--na-category keeps NA as a category of nominal fields;
in ordinal fields NA stays missing). Without --schema a field whose values are all integers is
ordinal 1..5 (min..max if outside), a field of more than 254 distinct numbers continuous,
any other field nominal; --missing CODE... declares further missing codes (NULL, -).
Undefined statistics are shown as — (null in JSON) with the reason, never as 0, 1 or NaN.

--levels ITEMS.csv (header item,system,segment; either grouping column may be left out) adds
system-level correlations (the mean per system of the item means and scores) and
segment-level ones (one coefficient per segment over its items, averaged over the segments
where it is defined), as in story- and summary-level meta-evaluations.

--bootstrap B gives a 95% interval for every statistic from one bootstrap per field that
resamples items, or clusters of items with --clusters ITEMS.csv (item,cluster) or
--cluster system|segment (a column of --levels); all judges are resampled together, so the
differences between judges are paired. --ci bca gives BCa intervals. p-values: t tests for
Pearson/Spearman, exact or normal Kendall (as SciPy), z for kappa, F for the ICC, Williams'
t or the paired bootstrap for judge differences; --adjust holm|bh adjusts them over the
whole report. docs/statistics.md defines every number.`,
		Example: `  m3eval agree ratings.csv --auto auto.csv --schema schema.json
  m3eval agree ratings.csv --bootstrap 1000 --seed 7 --format md -o agreement.md
  m3eval agree ratings.csv --auto auto.csv --levels levels.csv --cluster system --bootstrap 1000 --ci bca --adjust holm
  m3eval agree ratings.csv --auto auto.csv --levels levels.csv --matrix system_level.kendall_tau_b --format latex`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runAgree(cmd, args[0], o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.auto, "auto", "", "automatic scores: CSV item,field,value (optionally with a judge column)")
	f.StringVar(&o.schema, "schema", "", "field types and categories: JSON {\"fields\": {NAME: {\"type\": \"ordinal\"|\"nominal\"|\"continuous\", \"categories\": [...]}}}")
	f.StringVar(&o.levels, "levels", "", "item groups for system- and segment-level correlations: CSV item,system,segment")
	f.StringVar(&o.clusters, "clusters", "", "bootstrap clusters: CSV item,cluster (e.g. the episode of each turn)")
	f.StringVar(&o.cluster, "cluster", "", "bootstrap clusters from a column of --levels: system or segment")
	f.IntVar(&o.bootstrap, "bootstrap", 0, "bootstrap replicates for 95% intervals and standard errors (0: none)")
	f.Uint64Var(&o.seed, "seed", 12345, "bootstrap seed; the same seed gives the same intervals on any machine")
	f.StringVar(&o.ci, "ci", "percentile", "bootstrap interval: percentile or bca")
	f.StringVar(&o.adjust, "adjust", "none", "adjust p-values over the whole report: holm, bh or none")
	f.StringVar(&o.raters, "raters", "distinct", "distinct (each column is one person) or exchangeable (columns are slots: no pairwise or two-way ICC statistics)")
	f.StringVar(&o.mean, "mean", "exact", "system means: exact, or float (numpy's floating-point order, to reproduce such analyses)")
	f.StringSliceVar(&o.missing, "missing", nil, "further values meaning \"no rating\" in ratings and scores, e.g. --missing NULL,-")
	f.BoolVar(&o.naCategory, "na-category", false, "treat NA as a category of nominal fields instead of missing")
	f.StringVar(&o.format, "format", "table", "output format: table, json, md, csv or latex")
	f.StringVar(&o.matrix, "matrix", "", "print one statistic as a judge × field matrix, e.g. kendall_tau_b or system_level.kendall_tau_b")
	f.StringVarP(&o.output, "output", "o", "", "write to FILE instead of standard output")
	csvFlags(f, &o.csv)
	return cmd
}

func runAgree(cmd *cobra.Command, ratings string, o *agreeOptions) error {
	st, err := statOptions(o.format, o.bootstrap, o.ci, o.adjust, o.raters)
	if err != nil {
		return err
	}
	if err := oneStdin(ratings, o.auto, o.schema, o.levels, o.clusters); err != nil {
		return err
	}
	if o.levels != "" && o.auto == "" {
		return usageErrorf("--levels needs --auto: it groups the correlations with automatic scores")
	}
	if o.cluster != "" && o.cluster != "system" && o.cluster != "segment" {
		return usageErrorf("--cluster %q: use system or segment (columns of --levels), or --clusters FILE", o.cluster)
	}
	if o.cluster != "" && o.levels == "" {
		return usageErrorf("--cluster %s needs --levels, the file holding that column", o.cluster)
	}
	if o.cluster != "" && o.clusters != "" {
		return usageErrorf("--cluster and --clusters both name the clusters: use one")
	}
	if o.mean != "exact" && o.mean != "float" {
		return usageErrorf("--mean %q: use exact or float", o.mean)
	}
	// Reading millions of rows builds a large heap that lives until the end; collecting at 5×
	// the live heap instead of 2× (soft-capped below 1 GB) halves the time spent in the
	// collector on the 3,000,000-row benchmark.
	defer debug.SetGCPercent(debug.SetGCPercent(agree.GCPercent))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(agree.MemoryLimit))
	st.analysis.Seed = o.seed
	results, err := longform.Run(cmd.Context(), longform.RunOptions{
		Files: longform.Options{Ratings: ratings, Auto: o.auto, Schema: o.schema, NACategory: o.naCategory, Missing: o.missing,
			Warn: func(msg string) { fmt.Fprintln(cmd.ErrOrStderr(), "warning: "+msg) }},
		Levels: o.levels, Clusters: o.clusters, ClusterColumn: o.cluster, FloatMean: o.mean == "float",
		Analysis: st.analysis, Adjust: st.adjust,
	})
	if err != nil {
		return err
	}
	in := report.Inputs{Ratings: filepath.Base(ratings), Auto: base(o.auto), Schema: base(o.schema),
		NACategory: o.naCategory, Missing: o.missing, Bootstrap: o.bootstrap, Seed: o.seed,
		CI: o.ci, Adjust: o.adjust, Raters: o.raters}
	ropt := st.report
	ropt.Inputs = in
	ropt.Matrix = o.matrix
	ropt.CSV = o.csv
	if o.clusters != "" {
		ropt.Cluster = "cluster"
	} else {
		ropt.Cluster = o.cluster
	}
	ropt.Inputs.Cluster = ropt.Cluster
	return writeOutput(cmd, o.output, func(w io.Writer, color bool) error {
		ropt.Color = color
		return report.Write(w, results, ropt)
	})
}

// statFlags are the statistics flags agree and score share, checked and turned into options.
type statFlags struct {
	analysis agree.Options
	adjust   agree.Adjustment
	report   report.Options
}

func statOptions(format string, bootstrap int, ci, adjust, raters string) (statFlags, error) {
	var s statFlags
	switch report.Format(format) {
	case report.Table, report.JSONFmt, report.Markdown, report.CSV, report.LaTeX:
	default:
		return s, usageErrorf("--format %q: use table, json, md, csv or latex", format)
	}
	if bootstrap < 0 {
		return s, usageErrorf("--bootstrap %d: the number of replicates cannot be negative", bootstrap)
	}
	switch agree.CIMethod(ci) {
	case agree.CIPercentile, agree.CIBCa:
	default:
		return s, usageErrorf("--ci %q: use percentile or bca", ci)
	}
	switch agree.Adjustment(adjust) {
	case agree.AdjustNone, agree.AdjustHolm, agree.AdjustBH:
	default:
		return s, usageErrorf("--adjust %q: use holm, bh or none", adjust)
	}
	if raters != "distinct" && raters != "exchangeable" {
		return s, usageErrorf("--raters %q: use distinct or exchangeable", raters)
	}
	s.analysis = agree.Options{Bootstrap: bootstrap, CI: agree.CIMethod(ci), Exchangeable: raters == "exchangeable"}
	s.adjust = agree.Adjustment(adjust)
	s.report = report.Options{Format: report.Format(format), Bootstrap: bootstrap, CI: agree.CIMethod(ci), Adjust: s.adjust}
	return s, nil
}

func base(p string) string {
	if p == "" {
		return ""
	}
	return filepath.Base(p)
}
