package scoring

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/m3bench/m3eval/internal/agree"
	"github.com/m3bench/m3eval/internal/cmdutil"
	"github.com/m3bench/m3eval/internal/intervalcache"
	"github.com/m3bench/m3eval/internal/judgerun"
	"github.com/m3bench/m3eval/internal/render"
	"github.com/m3bench/m3eval/internal/rubric"
	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/usage"
)

// Request is what m3eval score is asked for: its flags.
type Request struct {
	StatFlags
	By            string   // turn attribute of the per-group blocks ("" for none)
	Judges        []string // judges to compare with (none: every judge)
	Annotators    []string // annotators whose labels count (none: everyone's)
	IncludeDrafts bool
	Cluster       string // bootstrap unit, one of Clusters
	NACategory    bool
	Metrics       bool // the rule judge's action-space metrics instead (judgerun.RubricMetrics)
	NoCache       bool // neither read nor write the interval cache (intervalcache)
	// Progress is told the bootstrap replicates done and their total (not a flag; nil: none).
	Progress func(done, total int64)
	// BootstrapGiven says whether --bootstrap was given (not a flag; Run reads it off the
	// flag set AddFlags defined): --metrics without it resamples 2000 times, the metrics'
	// default.
	BootstrapGiven bool

	flags *pflag.FlagSet // the flag set AddFlags defined the flags on (nil: none)
}

// AddFlags defines the flags of m3eval score on fs, and keeps fs to ask which were given.
func (q *Request) AddFlags(fs *pflag.FlagSet) {
	q.flags = fs
	cmdutil.EnumVar(fs, &q.By, "by", "", store.GroupKeys(), "also report per group of turns")
	fs.StringArrayVar(&q.Judges, "judge", nil, "compare with this judge only (repeatable; default: every judge)")
	fs.StringArrayVar(&q.Annotators, "annotator", nil, "use this annotator's labels only (repeatable; default: everyone's)")
	fs.BoolVar(&q.IncludeDrafts, "include-drafts", false, "count draft annotations too, not only done ones")
	q.StatFlags.AddFlags(fs)
	cmdutil.EnumVar(fs, &q.Cluster, "cluster", string(ClusterEpisode), cmdutil.Strings(Clusters...), "bootstrap unit")
	fs.BoolVar(&q.NACategory, "na-category", false, "treat the NA choice as a category of choice fields instead of missing")
	fs.BoolVar(&q.NoCache, "no-cache", false, "resample even when the interval cache holds these intervals, and store none (cache: $"+intervalcache.EnvDir+", default m3eval/intervals in the user's cache directory; docs/report.md)")
	fs.StringVarP(&q.Output, "output", "o", "", "write to FILE instead of standard output")
	fs.BoolVar(&q.Metrics, "metrics", false, "report the rule judge's action-space metrics instead (per action type and model, 95% intervals resampling episodes; reads --format, -o, --bootstrap (default 2000, 0: none), --seed; not --judge; docs/judge.md)")
}

// Check checks the flags' values and how they combine; its errors are marked usage.Err.
func (q *Request) Check() (Stats, error) {
	if q.Metrics && render.Format(q.Format) == render.LaTeX {
		// judgerun.WriteMetrics writes table, md, csv and json; LaTeX would silently be the table.
		return Stats{}, usage.Errorf("--metrics --format latex: the action-space metrics come as table, json, md or csv: pick one of those, or drop --metrics for the agreement report in LaTeX")
	}
	return q.StatFlags.Check()
}

// Score computes the report of m3eval score with the checked flags st and returns the
// function that writes it (color: the table format may use the Landis–Koch colors). It
// checks the named judges and annotators against the store and runs with the collector
// settings of agree.TuneGC; with Metrics, the report is the rule judge's action-space metrics.
func Score(ctx context.Context, s *store.Store, r *rubric.Rubric, q *Request, st Stats) (func(w io.Writer, color bool) error, error) {
	if q.Metrics {
		rep, err := judgerun.RubricMetrics(ctx, s, r, q.Bootstrap, q.Seed)
		if err != nil {
			return nil, err
		}
		return func(w io.Writer, _ bool) error { return judgerun.WriteMetrics(w, rep, render.Format(q.Format), q.CSV) }, nil
	}
	defer agree.TuneGC()()
	database := store.BaseName(s.Path()) // how the report names its input: a file's name, or a PostgreSQL database and schema
	judges, err := ChooseJudges(ctx, s, q.Judges)
	if err != nil {
		return nil, err
	}
	annotators, err := chooseAnnotators(ctx, s, q.Annotators, q.IncludeDrafts)
	if err != nil {
		return nil, err
	}
	clusterKey, clusterName := "", ""
	if Cluster(q.Cluster) != ClusterTurn {
		clusterKey, clusterName = q.Cluster, q.Cluster // store.ScoreFilter's Cluster: the turn column
	}
	res, err := Run(ctx, s, r, Options{
		Filter:     store.ScoreFilter{Annotators: q.Annotators, Judges: judges, IncludeDrafts: q.IncludeDrafts, By: q.By, Cluster: clusterKey},
		NACategory: q.NACategory, Database: database, Agree: st.Analysis, ClusterName: clusterName, Adjust: st.Adjust,
		Progress: q.Progress, Cache: OpenCache(q.NoCache)})
	if err != nil {
		return nil, err
	}
	in := render.ScoreInputs{Database: database, By: q.By, Annotators: annotators, Judges: judges,
		IncludeDrafts: q.IncludeDrafts, NACategory: q.NACategory, Bootstrap: q.Bootstrap, Seed: q.Seed,
		CI: q.CI, Cluster: clusterName, Adjust: q.Adjust, Raters: q.Raters}
	o := st.Report
	o.Cluster = clusterName
	return func(w io.Writer, color bool) error {
		o.Color = color
		return render.WriteSections(w, res.Sections, in, o)
	}, nil
}

// OpenCache returns the interval cache of m3eval score and report, or nil (none) when off
// (their --no-cache).
func OpenCache(off bool) *intervalcache.Cache {
	if off {
		return nil
	}
	return intervalcache.Open()
}

// ChooseJudges returns the judges named (by --judge), all of them present in the database,
// or every judge when none is named.
func ChooseJudges(ctx context.Context, s *store.Store, named []string) ([]string, error) {
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
			known := "none yet: m3eval judge makes the rule judge \"rules\"; m3eval import-scores --judge NAME FILE imports another"
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

// chooseAnnotators returns the annotators named (by --annotator), or everyone with a label
// that counts. A named annotator without one is an error: nearly always a misspelt name.
func chooseAnnotators(ctx context.Context, s *store.Store, named []string, drafts bool) ([]string, error) {
	have, err := s.ExportAnnotators(ctx, store.ExportOptions{IncludeDrafts: drafts})
	if err != nil {
		return nil, err
	}
	if len(named) == 0 {
		return have, nil
	}
	for _, a := range named {
		if !slices.Contains(have, a) {
			what := "done labels"
			if drafts {
				what = "labels"
			}
			return nil, fmt.Errorf("--annotator %s: no %s by %s in %s (annotators with %s: %s)", a, what, a, s.Path(), what, strings.Join(have, ", "))
		}
	}
	return named, nil
}
