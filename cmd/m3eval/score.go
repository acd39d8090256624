package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/m3bench/m3eval/internal/agree"
	"github.com/m3bench/m3eval/internal/csvout"
	"github.com/m3bench/m3eval/internal/report"
	"github.com/m3bench/m3eval/internal/scoring"
	"github.com/m3bench/m3eval/internal/store"
)

type scoreOptions struct {
	csv           csvout.Options // --raw, --excel
	by            string
	judges        []string
	annotators    []string
	includeDrafts bool
	bootstrap     int
	seed          uint64
	cluster       string
	ci, adjust    string
	raters        string
	naCategory    bool
	format        string
	matrix        string
	output        string
	metrics       bool // the rule judge's action-space metrics instead (judge.go)
}

func newScoreCmd(g *globalOptions) *cobra.Command {
	o := &scoreOptions{}
	cmd := &cobra.Command{
		Use:   "score",
		Short: "Agreement of the annotators with each other and with the automatic judges, from the database",
		Long: `score computes the statistics of m3eval agree straight from the annotation database, for
every scale and choice field of the rubric: the annotators with each other (pairwise percent
agreement and Cohen's kappas, Fleiss' kappa, Krippendorff's alpha, Gwet's AC1/AC2, percent
agreements, ICCs) and the annotators against every automatic judge imported with
import-scores (correlations of the item's mean rating with the judge's score; exact match and
kappas against the majority label).

Scale fields are ordinal with the categories min..max of the rubric, choice fields nominal
with their choices. The rubric's NA choice is missing, or a category with --na-category.
Only done annotations count unless --include-drafts. With --by, one block per value of the
turn attribute follows the overall block. Undefined statistics are shown as — (null in
JSON) with the reason.

--bootstrap B gives a 95% interval for every statistic; it resamples whole episodes by
default (--cluster episode), since turns of one conversation are not independent
(--cluster turn resamples turns, --cluster model models). p-values and --adjust, --ci bca
and --raters exchangeable work as in m3eval agree; docs/statistics.md defines them.`,
		Example: `  m3eval score
  m3eval score --by action_type --judge gpt4o --format md -o agreement.md
  m3eval score --annotator alice --annotator bob --bootstrap 1000 --seed 7 --format json`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error { return runScore(cmd, g, o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.by, "by", "", "also report per group of turns: "+strings.Join(store.GroupKeys(), ", "))
	f.StringArrayVar(&o.judges, "judge", nil, "compare with this judge only (repeatable; default: every judge)")
	f.StringArrayVar(&o.annotators, "annotator", nil, "use this annotator's labels only (repeatable; default: everyone's)")
	f.BoolVar(&o.includeDrafts, "include-drafts", false, "count draft annotations too, not only done ones")
	f.IntVar(&o.bootstrap, "bootstrap", 0, "bootstrap replicates for 95% intervals and standard errors (0: none)")
	f.Uint64Var(&o.seed, "seed", 12345, "bootstrap seed; the same seed gives the same intervals on any machine")
	f.StringVar(&o.cluster, "cluster", "episode", "bootstrap unit: episode, turn or model")
	f.StringVar(&o.ci, "ci", "percentile", "bootstrap interval: percentile or bca")
	f.StringVar(&o.adjust, "adjust", "none", "adjust p-values over the whole report: holm, bh or none")
	f.StringVar(&o.raters, "raters", "distinct", "distinct or exchangeable (annotators are interchangeable slots: no pairwise or two-way ICC statistics)")
	f.BoolVar(&o.naCategory, "na-category", false, "treat the NA choice as a category of choice fields instead of missing")
	f.StringVar(&o.format, "format", "table", "output format: table, json, md, csv or latex")
	f.StringVar(&o.matrix, "matrix", "", "print one statistic as a judge × field matrix, e.g. kendall_tau_b")
	f.StringVarP(&o.output, "output", "o", "", "write to FILE instead of standard output")
	csvFlags(f, &o.csv)
	f.BoolVar(&o.metrics, "metrics", false, "report the rule judge's action-space metrics instead (per action type and model, 95% intervals; reads --format, -o, --bootstrap, --seed; docs/judge.md)")
	return cmd
}

func runScore(cmd *cobra.Command, g *globalOptions, o *scoreOptions) error {
	st, err := statOptions(o.format, o.bootstrap, o.ci, o.adjust, o.raters)
	if err != nil {
		return err
	}
	if err := checkBootstrapBy(o.bootstrap, o.by); err != nil {
		return err
	}
	clusterKey := map[string]string{"episode": "episode", "model": "model", "turn": ""}
	ck, ok := clusterKey[o.cluster]
	if !ok {
		return usageErrorf("--cluster %q: use episode, turn or model", o.cluster)
	}
	if o.metrics {
		return runMetrics(cmd, g, o.format, o.output, o.bootstrap, o.seed, o.csv)
	}
	if err := g.mustExist(); err != nil {
		return err
	}
	r, err := g.loadRubric()
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	// Score only reads: a read-only user in a read-only directory can score too.
	s, err := g.openStore(ctx, nil, store.Options{ReadOnly: true})
	if err != nil {
		return err
	}
	defer s.Close()
	judges, err := chooseJudges(ctx, s, o.judges)
	if err != nil {
		return err
	}
	annotators, err := chooseAnnotators(ctx, s, o)
	if err != nil {
		return err
	}
	defer debug.SetGCPercent(debug.SetGCPercent(agree.GCPercent))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(agree.MemoryLimit))

	dbName := filepath.Base(g.dbPath)
	opt := st.analysis
	opt.Seed = o.seed
	clusterName := ""
	if ck != "" {
		clusterName = o.cluster
	}
	res, err := scoring.Run(ctx, s, r, scoring.Options{
		Filter:     store.ScoreFilter{Annotators: o.annotators, Judges: judges, IncludeDrafts: o.includeDrafts, By: o.by, Cluster: ck},
		NACategory: o.naCategory, Database: dbName, Agree: opt, ClusterName: clusterName, Adjust: st.adjust})
	if err != nil {
		return err
	}
	secs := res.Sections

	in := report.ScoreInputs{Database: dbName, By: o.by, Annotators: annotators, Judges: judges,
		IncludeDrafts: o.includeDrafts, NACategory: o.naCategory, Bootstrap: o.bootstrap, Seed: o.seed,
		CI: o.ci, Cluster: clusterName, Adjust: o.adjust, Raters: o.raters}
	ropt := st.report
	ropt.Cluster, ropt.Matrix, ropt.CSV = clusterName, o.matrix, o.csv
	return writeOutput(cmd, o.output, func(w io.Writer, color bool) error {
		ropt.Color = color
		return report.WriteSections(w, secs, in, ropt)
	})
}

// checkBootstrapBy checks the --bootstrap and --by flags score and report share.
func checkBootstrapBy(bootstrap int, by string) error {
	if bootstrap < 0 {
		return usageErrorf("--bootstrap %d: the number of replicates cannot be negative", bootstrap)
	}
	if by != "" && !slices.Contains(store.GroupKeys(), by) {
		return usageErrorf("--by %q: use one of %s", by, strings.Join(store.GroupKeys(), ", "))
	}
	return nil
}

// chooseJudges returns the judges named by --judge, all of them present in the database, or
// every judge when none is named.
func chooseJudges(ctx context.Context, s *store.Store, named []string) ([]string, error) {
	all, err := s.Judges(ctx)
	if err != nil {
		return nil, err
	}
	if len(named) == 0 {
		return all, nil
	}
	var out []string
	for _, j := range named {
		if !slices.Contains(all, j) {
			known := "none yet: import them with m3eval import-scores --judge NAME FILE"
			if len(all) > 0 {
				known = strings.Join(all, ", ")
			}
			return nil, fmt.Errorf("--judge %s: no such judge in %s (judges: %s)", j, s.Path(), known)
		}
		if !slices.Contains(out, j) {
			out = append(out, j)
		}
	}
	return out, nil
}

// chooseAnnotators returns the annotators named by --annotator, or everyone with a label
// that counts. A named annotator without one is an error: nearly always a misspelt name.
func chooseAnnotators(ctx context.Context, s *store.Store, o *scoreOptions) ([]string, error) {
	have, err := s.ExportAnnotators(ctx, store.ExportOptions{IncludeDrafts: o.includeDrafts})
	if err != nil {
		return nil, err
	}
	if len(o.annotators) == 0 {
		return have, nil
	}
	for _, a := range o.annotators {
		if !slices.Contains(have, a) {
			what := "done labels"
			if o.includeDrafts {
				what = "labels"
			}
			return nil, fmt.Errorf("--annotator %s: no %s by %s in %s (annotators with %s: %s)", a, what, a, s.Path(), what, strings.Join(have, ", "))
		}
	}
	return o.annotators, nil
}
