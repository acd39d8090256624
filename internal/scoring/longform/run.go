package longform

import (
	"bufio"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/m3bench/m3eval/internal/agree"
	"github.com/m3bench/m3eval/internal/cmdio"
	"github.com/m3bench/m3eval/internal/cmdutil"
	"github.com/m3bench/m3eval/internal/render"
	"github.com/m3bench/m3eval/internal/scoring"
	"github.com/m3bench/m3eval/internal/usage"
)

// RunOptions is everything m3eval agree reads and computes.
type RunOptions struct {
	Files Options
	// Levels is an optional CSV item,system,segment (either grouping column may be absent)
	// for system- and segment-level correlations.
	Levels string
	// Clusters is an optional CSV item,cluster naming each item's cluster for the bootstrap;
	// ClusterColumn ("system" or "segment") takes the clusters from the Levels file instead.
	Clusters, ClusterColumn string
	// Mean is how system means are computed ("": exact).
	Mean     Mean
	Analysis agree.Options
	Adjust   agree.Adjustment
}

// ClusterColumn is a column of the --levels file whose groups are the bootstrap's clusters:
// m3eval agree --cluster.
type ClusterColumn string

// Mean is how m3eval agree computes system means: --mean.
type Mean string

// The values of agree's --cluster and --mean.
const (
	ClusterSystem  ClusterColumn = "system"
	ClusterSegment ClusterColumn = "segment"
	// MeanExact sums exactly (the default).
	MeanExact Mean = "exact"
	// MeanFloat sums in floating point in numpy's order, to reproduce such analyses.
	MeanFloat Mean = "float"
)

// The valid values of agree's enumerated flags (their flags are declared with them).
var (
	// ClusterColumns are the values of agree's --cluster.
	ClusterColumns = []ClusterColumn{ClusterSystem, ClusterSegment}
	// Means are the values of agree's --mean.
	Means = []Mean{MeanExact, MeanFloat}
)

// AddFlags defines m3eval agree's input flags on fs (Files.Ratings is its argument).
func (o *RunOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Files.Auto, "auto", "", "automatic scores: CSV item,field,value (optionally with a judge column)")
	fs.StringVar(&o.Files.Schema, "schema", "", "field types and categories: JSON {\"fields\": {NAME: {\"type\": \"ordinal\"|\"nominal\"|\"continuous\", \"categories\": [...]}}}")
	fs.StringVar(&o.Levels, "levels", "", "item groups for system- and segment-level correlations: CSV item,system,segment")
	fs.StringVar(&o.Clusters, "clusters", "", "bootstrap clusters: CSV item,cluster (e.g. the episode of each turn)")
	cmdutil.EnumVar(fs, &o.ClusterColumn, "cluster", "", cmdutil.Strings(ClusterColumns...), "bootstrap clusters from a column of --levels")
	cmdutil.EnumVar(fs, &o.Mean, "mean", MeanExact, Means, "system means: exact, or float (numpy's floating-point order, to reproduce such analyses)")
	fs.StringSliceVar(&o.Files.Missing, "missing", nil, "further values meaning \"no rating\" in ratings and scores, e.g. --missing NULL,-")
	fs.BoolVar(&o.Files.NACategory, "na-category", false, "treat NA as a category of nominal fields instead of missing")
}

// Check checks how the flags combine; its errors are marked usage.Err.
func (o *RunOptions) Check() error {
	if o.Levels != "" && o.Files.Auto == "" {
		return usage.Errorf("--levels needs --auto: it groups the correlations with automatic scores")
	}
	if o.ClusterColumn != "" && o.Levels == "" {
		return usage.Errorf("--cluster %s needs --levels, the file holding that column", o.ClusterColumn)
	}
	if o.ClusterColumn != "" && o.Clusters != "" {
		return usage.Errorf("--cluster and --clusters both name the clusters: use one")
	}
	return nil
}

// ClusterName names the bootstrap's resampled unit in the report: "cluster" with a
// clusters file, the --levels column, or "" when items are resampled.
func (o *RunOptions) ClusterName() string {
	if o.Clusters != "" {
		return "cluster"
	}
	return o.ClusterColumn
}

// Inputs names the files of the run (base names) and the missing codes, for the report.
func (o *RunOptions) Inputs() render.AgreementInputs {
	base := func(p string) string {
		if p == "" {
			return ""
		}
		return filepath.Base(p)
	}
	return render.AgreementInputs{Ratings: base(o.Files.Ratings), Auto: base(o.Files.Auto), Schema: base(o.Files.Schema),
		NACategory: o.Files.NACategory, Missing: o.Files.Missing}
}

// Run loads the files, analyses every field, adds the level correlations and adjusts the
// p-values: the whole of m3eval agree but the output. Millions of rows make a large heap
// that lives to the end, so it runs with the collector settings of agree.TuneGC.
func Run(ctx context.Context, o RunOptions) ([]agree.FieldResult, error) {
	defer agree.TuneGC()()
	fields, err := Load(o.Files)
	if err != nil {
		return nil, err
	}
	var groups map[string]map[string]string
	if o.Levels != "" {
		if groups, err = ReadItemGroups(o.Levels, []string{"system", "segment"}); err != nil {
			return nil, err
		}
	}
	opt := o.Analysis
	switch {
	case o.Clusters != "":
		g, err := ReadItemGroups(o.Clusters, []string{"cluster"})
		if err != nil {
			return nil, err
		}
		if g["cluster"] == nil {
			return nil, fmt.Errorf("%s:1: header: no column \"cluster\"", filepath.Base(o.Clusters))
		}
		opt.Clusters, opt.ClusterName = g["cluster"], "cluster"
	case o.ClusterColumn != "":
		if groups[o.ClusterColumn] == nil {
			return nil, fmt.Errorf("%s:1: header: no column %q to cluster by", filepath.Base(o.Levels), o.ClusterColumn)
		}
		opt.Clusters, opt.ClusterName = groups[o.ClusterColumn], o.ClusterColumn
	}
	if opt.Clusters != nil {
		// Items the cluster file leaves out, or gives no cluster, are an error only when the
		// field has them; say which file to fix.
		for _, d := range fields {
			for _, it := range d.Items {
				if c, ok := opt.Clusters[it]; !ok || c == "" {
					src := o.Clusters
					if src == "" {
						src = o.Levels
					}
					return nil, fmt.Errorf("%w: %s: item %s (field %s) has no %s", agree.ErrInput, filepath.Base(src), it, d.Field.Name, opt.ClusterName)
				}
			}
		}
	}
	results, err := agree.Analyze(ctx, fields, opt)
	if err != nil {
		return nil, err
	}
	if groups != nil {
		if err := addLevels(ctx, groups, fields, results, o.Mean == MeanFloat, opt); err != nil {
			return nil, err
		}
	}
	agree.RefuseFewClusters(results) // the rule of score and estimate: no interval from fewer than 5 units
	agree.Adjust(o.Adjust, results)
	return results, nil
}

// ReadItemGroups reads a CSV ("-": standard input) with an item column and some of the columns in cols, and
// returns column → item → value for the columns present ("" values kept). At least one of
// cols must be present; an item listed twice is an error naming the line.
func ReadItemGroups(path string, cols []string) (map[string]map[string]string, error) {
	var in io.Reader = os.Stdin // "-": standard input, as for every file argument of m3eval
	name := "stdin"
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		in, name = f, filepath.Base(path)
	}
	r := csv.NewReader(bufio.NewReader(in))
	r.FieldsPerRecord = -1
	head, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	col := map[string]int{}
	for i, h := range head {
		col[strings.TrimPrefix(strings.TrimSpace(h), "\ufeff")] = i
	}
	itemCol, ok := col["item"]
	if !ok {
		return nil, fmt.Errorf("%s:1: header: no column \"item\" (the header must have item and %s)", name, strings.Join(cols, " and/or "))
	}
	out := map[string]map[string]string{}
	for _, c := range cols {
		if _, ok := col[c]; ok {
			out[c] = map[string]string{}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s:1: header: none of the columns %s", name, strings.Join(cols, ", "))
	}
	seen := map[string]bool{}
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		line, _ := r.FieldPos(0)
		get := func(c int) string {
			if c < len(rec) {
				return strings.TrimSpace(rec[c])
			}
			return ""
		}
		item := get(itemCol)
		if seen[item] {
			return nil, fmt.Errorf("%s:%d: item: %q is listed twice", name, line, item)
		}
		seen[item] = true
		for c, m := range out {
			m[item] = get(col[c])
		}
	}
	return out, nil
}

// addLevels adds system- and segment-level correlations to every judge of every ordinal or
// continuous field, with their bootstrap intervals when opt asks for them.
func addLevels(ctx context.Context, groups map[string]map[string]string, fields []agree.FieldData, results []agree.FieldResult, floatMean bool, opt agree.Options) error {
	ids := func(items []string, m map[string]string) []int {
		if m == nil {
			return nil
		}
		num := map[string]int{}
		out := make([]int, len(items))
		for i, it := range items {
			g := m[it]
			if g == "" {
				out[i] = -1
				continue
			}
			id, ok := num[g]
			if !ok {
				id = len(num)
				num[g] = id
			}
			out[i] = id
		}
		return out
	}
	for fi := range fields {
		d := &fields[fi]
		if d.Field.Type == agree.Nominal {
			continue
		}
		sys, seg := ids(d.Items, groups["system"]), ids(d.Items, groups["segment"])
		for ji, j := range d.Judges {
			results[fi].Judges[ji].SystemLevel, results[fi].Judges[ji].SegmentLevel = agree.Levels(d, j, sys, seg, floatMean)
			ivs, err := agree.LevelIntervals(ctx, d, j, sys, seg, floatMean, opt, fi, ji)
			if err != nil {
				return err
			}
			results[fi].Bootstrap = append(results[fi].Bootstrap, ivs...)
		}
	}
	return nil
}

// Request is m3eval agree's options: its argument (the ratings file, Input.Files.Ratings),
// its input flags and its statistics and output flags (-o is Stats.Output). The command
// parses its command line into one and calls Run; so do the tests (issue #42).
type Request struct {
	Input RunOptions
	Stats scoring.StatFlags
}

// AddFlags defines m3eval agree's flags on fs.
func (q *Request) AddFlags(fs *pflag.FlagSet) {
	q.Input.AddFlags(fs)
	q.Stats.AddFlags(fs)
	fs.StringVarP(&q.Stats.Output, "output", "o", "", "write to FILE instead of standard output")
}

// Run is m3eval agree once its command line is parsed: it checks the request (usage
// errors), reads the files and computes every statistic (warnings about the input go to e's
// standard error), then writes the report in Stats.Format to Stats.Output (or standard
// output) through e, so nothing is written before the statistics are computed.
func (q *Request) Run(ctx context.Context, e *cmdio.IO) error {
	write, err := q.compute(ctx, e.Stderr())
	if err != nil {
		return err
	}
	return e.Write(q.Stats.Output, string(q.Stats.Format), write)
}

// compute checks the request, computes the statistics and returns the function that writes
// the report (color: the table may use colors).
func (q *Request) compute(ctx context.Context, stderr io.Writer) (func(w io.Writer, color bool) error, error) {
	st, err := q.Stats.Check()
	if err != nil {
		return nil, err
	}
	in := q.Input
	if err := usage.OneStdin(in.Files.Ratings, in.Files.Auto, in.Files.Schema, in.Levels, in.Clusters); err != nil {
		return nil, err
	}
	if err := in.Check(); err != nil {
		return nil, err
	}
	in.Files.Warn = func(msg string) { fmt.Fprintln(stderr, "warning: "+msg) }
	in.Analysis, in.Adjust = st.Analysis, st.Adjust
	results, err := Run(ctx, in)
	if err != nil {
		return nil, err
	}
	return st.Writer(results, in.Inputs(), in.ClusterName()), nil
}
