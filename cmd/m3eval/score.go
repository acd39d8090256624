package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/m3bench/m3eval/internal/agree"
	"github.com/m3bench/m3eval/internal/csvout"
	"github.com/m3bench/m3eval/internal/report"
	"github.com/m3bench/m3eval/internal/rubric"
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
	naCategory    bool
	format        string
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
JSON) with the reason.`,
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
	f.BoolVar(&o.naCategory, "na-category", false, "treat the NA choice as a category of choice fields instead of missing")
	f.StringVar(&o.format, "format", "table", "output format: table, json, md or csv")
	f.StringVarP(&o.output, "output", "o", "", "write to FILE instead of standard output")
	csvFlags(f, &o.csv)
	f.BoolVar(&o.metrics, "metrics", false, "report the rule judge's action-space metrics instead (per action type and model, 95% intervals; reads --format, -o, --bootstrap, --seed; docs/judge.md)")
	return cmd
}

func runScore(cmd *cobra.Command, g *globalOptions, o *scoreOptions) error {
	switch report.Format(o.format) {
	case report.Table, report.JSONFmt, report.Markdown, report.CSV:
	default:
		return usageErrorf("--format %q: use table, json, md or csv", o.format)
	}
	if o.bootstrap < 0 {
		return usageErrorf("--bootstrap %d: the number of replicates cannot be negative", o.bootstrap)
	}
	if o.metrics {
		return runMetrics(cmd, g, o.format, o.output, o.bootstrap, o.seed, o.csv)
	}
	if o.by != "" && !slices.Contains(store.GroupKeys(), o.by) {
		return usageErrorf("--by %q: use one of %s", o.by, strings.Join(store.GroupKeys(), ", "))
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

	sc, err := newScorer(r, o.naCategory, o.by != "", judges)
	if err != nil {
		return err
	}
	filter := store.ScoreFilter{Fields: sc.names(), Annotators: o.annotators, Judges: judges, IncludeDrafts: o.includeDrafts, By: o.by}
	if err := s.StreamScoring(ctx, filter, sc.rating, sc.score); err != nil {
		return err
	}
	dbName := filepath.Base(g.dbPath)
	secs, err := sc.analyze(ctx, dbName, agree.Options{Bootstrap: o.bootstrap, Seed: o.seed})
	if err != nil {
		return err
	}

	in := report.ScoreInputs{Database: dbName, By: o.by, Annotators: annotators, Judges: judges,
		IncludeDrafts: o.includeDrafts, NACategory: o.naCategory, Bootstrap: o.bootstrap, Seed: o.seed}
	return writeOutput(cmd, o.output, func(w io.Writer, color bool) error {
		return report.WriteSections(w, secs, in, report.Options{Format: report.Format(o.format), Color: color, Bootstrap: o.bootstrap, CSV: o.csv})
	})
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

// scorer routes the streamed ratings and scores into one agree.Builder for all turns and one
// per group, and knows how the rubric's fields become agree's.
type scorer struct {
	fields     []agree.Field     // the scale and choice fields, in rubric order
	naValue    map[string]string // choice field → its NA choice, when it has one
	naCategory bool              // keep the NA choice as a category
	judges     []string          // every judge reported, in order
	overall    *agree.Builder    // all turns
	groups     map[string]*agree.Builder
	order      []string // the group values seen (sorted before the analysis)
}

// newScorer prepares the builders; grouped asks for one builder per group besides the
// overall one.
func newScorer(r *rubric.Rubric, naCategory, grouped bool, judges []string) (*scorer, error) {
	sc := &scorer{naValue: map[string]string{}, naCategory: naCategory, judges: judges}
	if grouped {
		sc.groups = map[string]*agree.Builder{}
	}
	for i := range r.Fields {
		f := &r.Fields[i]
		switch f.Kind {
		case rubric.KindScale:
			vals := make([]int64, 0, f.Max-f.Min+1)
			for v := f.Min; v <= f.Max; v++ {
				vals = append(vals, int64(v))
			}
			sc.fields = append(sc.fields, agree.NewOrdinal(f.Name, vals...))
		case rubric.KindChoice:
			var labels []string
			for _, c := range f.Choices {
				if c.NA {
					sc.naValue[f.Name] = c.Value
					if !naCategory {
						continue
					}
				}
				labels = append(labels, c.Value)
			}
			sc.fields = append(sc.fields, agree.NewNominal(f.Name, labels...))
		}
	}
	var err error
	sc.overall, err = sc.newBuilder()
	return sc, err
}

func (sc *scorer) newBuilder() (*agree.Builder, error) {
	b, err := agree.NewBuilder(sc.fields)
	if err != nil {
		return nil, fmt.Errorf("rubric: %w", err)
	}
	b.NACategory = sc.naCategory
	for _, j := range sc.judges {
		b.AddJudge(j)
	}
	return b, nil
}

// names lists the fields the report covers, in rubric order.
func (sc *scorer) names() []string {
	out := make([]string, len(sc.fields))
	for i, f := range sc.fields {
		out[i] = f.Name
	}
	return out
}

// value turns a stored value into what the builder reads: the NA choice becomes missing
// unless it is a category. A rater whose values are all missing is still listed, as
// m3eval agree lists them.
func (sc *scorer) value(field, v string, human bool) string {
	if na, ok := sc.naValue[field]; ok && v == na && (!sc.naCategory || !human) {
		// Automatic scores never have NA as a category: the oracle reads NA in its auto file
		// as missing even with --na-category.
		return ""
	}
	return v
}

// rating adds an annotator's value; the store passes only the fields of names().
func (sc *scorer) rating(row *store.ScoreRow) error {
	v := sc.value(row.Field, row.Value, true)
	if err := sc.overall.Add(row.Sample, row.Who, row.Field, v, agree.Location{}); err != nil {
		return fmt.Errorf("sample %s, annotator %s: %w", row.Sample, row.Who, err)
	}
	b, err := sc.group(row.Group, true)
	if b == nil || err != nil {
		return err
	}
	return b.Add(row.Sample, row.Who, row.Field, v, agree.Location{})
}

// score adds a judge's score; the store passes only the fields of names().
func (sc *scorer) score(row *store.ScoreRow) error {
	v := sc.value(row.Field, row.Value, false)
	if err := sc.overall.AddScore(row.Who, row.Sample, row.Field, v, agree.Location{}); err != nil {
		return fmt.Errorf("sample %s, judge %s: %w", row.Sample, row.Who, err)
	}
	b, err := sc.group(row.Group, false)
	if b == nil || err != nil {
		return err
	}
	return b.AddScore(row.Who, row.Sample, row.Field, v, agree.Location{})
}

// group returns the builder of a group, making it for a rating; nil without grouping, and for
// a score of a group without ratings, whose scores have nothing to be compared with.
func (sc *scorer) group(value string, create bool) (*agree.Builder, error) {
	if sc.groups == nil {
		return nil, nil // not grouped
	}
	b := sc.groups[value]
	if b == nil && create {
		var err error
		if b, err = sc.newBuilder(); err != nil {
			return nil, err
		}
		sc.groups[value] = b
		sc.order = append(sc.order, value)
	}
	return b, nil
}

// analyze builds and analyses the overall block, then every group's in the order of their
// values.
func (sc *scorer) analyze(ctx context.Context, dbName string, opt agree.Options) ([]report.Section, error) {
	run := func(b *agree.Builder) ([]agree.FieldResult, error) {
		data, err := b.Build(dbName)
		if err != nil {
			return nil, err
		}
		return agree.Analyze(ctx, sc.inRubricOrder(data), opt)
	}
	res, err := run(sc.overall)
	if err != nil {
		return nil, err
	}
	secs := []report.Section{{Overall: true, Results: res}}
	sort.Strings(sc.order)
	for _, v := range sc.order {
		res, err := run(sc.groups[v])
		if err != nil {
			return nil, fmt.Errorf("group %s: %w", v, err)
		}
		secs = append(secs, report.Section{Value: v, Results: res})
	}
	return secs, nil
}

// inRubricOrder puts the built fields in rubric order and adds the fields nobody rated, so
// that every report lists every scale and choice field, with its statistics undefined.
func (sc *scorer) inRubricOrder(data []agree.FieldData) []agree.FieldData {
	out := make([]agree.FieldData, 0, len(sc.fields))
	for _, f := range sc.fields {
		i := slices.IndexFunc(data, func(d agree.FieldData) bool { return d.Field.Name == f.Name })
		if i >= 0 {
			out = append(out, data[i])
			continue
		}
		d := agree.FieldData{Field: f, Items: []string{}, Raters: []string{}, Ratings: agree.NewMatrix(0, 0)}
		for _, j := range sc.judges {
			d.Judges = append(d.Judges, agree.NewJudge(j, 0))
		}
		out = append(out, d)
	}
	return out
}
