package illusion

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/pflag"

	"github.com/m3bench/m3eval/internal/cmdio"
	"github.com/m3bench/m3eval/internal/cmdutil"
	"github.com/m3bench/m3eval/internal/progress"
	"github.com/m3bench/m3eval/internal/usage"
)

func usagef(format string, args ...any) error { return usage.Errorf(format, args...) }

// The valid values of the enumerated flags of m3eval illusion score, in the order their
// error messages list them (their flags are declared with them).
var (
	// Kinds are the values of --kind and --by.
	Kinds = []Kind{KindShape, KindScene}
	// Rules are the values of --rule.
	Rules = []Rule{RuleM3eval, RuleLMMSEval}
	// Formats are the values of score's --format: the formats render.WriteIllusion writes
	// (render imports this package, so the names are kept here).
	Formats = []string{"table", "json", "md"}
)

// SampleRequest is m3eval illusion sample's options: its flags as given, and the progress
// callback. The command parses its flags into one and calls Run; so do the tests (#42).
type SampleRequest struct {
	Splits []string // NAME=FILE[,FILE...], globs allowed
	N      int
	Seed   int64
	Out    string
	// Progress is told the bytes of the split files done (not a flag; nil: nothing).
	Progress progress.Func
}

// AddFlags defines the flags of m3eval illusion sample on fs.
func (o *SampleRequest) AddFlags(fs *pflag.FlagSet) {
	fs.StringArrayVar(&o.Splits, "split", nil, "NAME=FILE[,FILE...] of one split (shards in order; globs allowed); repeat in the order the splits are drawn")
	fs.IntVar(&o.N, "n", 1000, "rows per split")
	fs.Int64Var(&o.Seed, "seed", 42, "seed of random.Random")
	fs.StringVar(&o.Out, "out", "", "output directory (created if missing)")
}

// Run is m3eval illusion sample once its flags are parsed: it checks them (usage errors),
// builds the test sets under a progress bar of the bytes read, and says what it did: one
// line per split on e's standard output, warnings on its standard error. Progress, when
// set, is told too.
func (q *SampleRequest) Run(ctx context.Context, e *cmdio.IO) error {
	return e.WithBar("illusion sample", progress.Bytes, func(report progress.Func, stdout, stderr io.Writer) error {
		r := *q
		r.Progress = progress.Tee(report, q.Progress)
		res, err := buildSample(ctx, r)
		if err != nil {
			return err
		}
		writeSampled(stdout, stderr, res, q.Out)
		return nil
	})
}

// buildSample checks the flags and builds the test sets.
func buildSample(ctx context.Context, f SampleRequest) ([]SplitResult, error) {
	if len(f.Splits) == 0 {
		return nil, usagef("give at least one --split NAME=FILE")
	}
	if f.Out == "" {
		return nil, usagef("--out DIR is required")
	}
	if f.N < 0 {
		return nil, usagef("--n %d: must be at least 0", f.N)
	}
	inputs, err := ParseSplits(f.Splits)
	if err != nil {
		return nil, err
	}
	return buildTestSets(ctx, inputs, f.N, f.Seed, f.Out, f.Progress)
}

// writeSampled says what buildSample did: one line per split to out, the groups sampled short
// or without a difficulty as warnings to errw, and where the summary is.
func writeSampled(out, errw io.Writer, res []SplitResult, dir string) {
	for _, r := range res {
		total, orig := 0, 0
		var parts []string
		for _, g := range r.Selection.Groups {
			total += g.Sampled
			orig += g.Original
			parts = append(parts, fmt.Sprintf("%s %d/%d", g.Difficulty, g.Sampled, g.Original))
			if g.Difficulty == Unknown {
				fmt.Fprintf(errw, "warning: %s: %d rows have no -easy-, -medium- or -hard- in image_name; sampled as group Unknown, as the guide's script does\n", r.Split, g.Original)
			}
		}
		fmt.Fprintf(out, "%s: %d of %d rows -> %s (%s)\n", r.Split, total, orig, r.OutputFile, strings.Join(parts, ", "))
		for _, g := range r.Selection.Short() {
			fmt.Fprintf(errw, "warning: %s: group %s has %d rows but was allocated %d; summary.json reports sampled_counts %d and allocated_counts %d (the guide's script reports %d as sampled)\n",
				r.Split, g.Difficulty, g.Original, g.Allocated, g.Sampled, g.Allocated, g.Allocated)
		}
	}
	fmt.Fprintf(out, "summary: %s\n", filepath.Join(dir, SummaryFile))
}

// ParseSplits turns --split NAME=FILE[,FILE...] flags into splits in order of first
// appearance. A FILE may be a glob pattern (matches in lexical order, which is the order of
// Hugging Face shard names); a NAME given again adds files to its split.
func ParseSplits(flags []string) ([]SplitInput, error) {
	var inputs []SplitInput
	at := map[string]int{}
	for _, s := range flags {
		name, list, ok := strings.Cut(s, "=")
		if !ok || name == "" || list == "" {
			return nil, usagef("--split %q: want NAME=FILE, e.g. Illusion_ICON=icon.parquet", s)
		}
		var paths []string
		for _, p := range strings.Split(list, ",") {
			if p == "" {
				return nil, usagef("--split %q: empty file name", s)
			}
			if !strings.ContainsAny(p, "*?[") {
				paths = append(paths, p)
				continue
			}
			m, err := filepath.Glob(p)
			if err != nil {
				return nil, usagef("--split %q: %v", s, err)
			}
			if len(m) == 0 {
				return nil, fmt.Errorf("--split %s: no file matches %s", name, p)
			}
			sort.Strings(m)
			paths = append(paths, m...)
		}
		if i, ok := at[name]; ok {
			inputs[i].Paths = append(inputs[i].Paths, paths...)
			continue
		}
		at[name] = len(inputs)
		inputs = append(inputs, SplitInput{Name: name, Paths: paths})
	}
	return inputs, nil
}

// ScoreRequest is m3eval illusion score's options: its flags as given and its arguments,
// the logs. The command parses its command line into one and calls Run; so do the tests.
type ScoreRequest struct {
	Testsets     []string // NAME=FILE
	Kind, By     string
	Format       string // the report's: one of Formats, written by render.WriteIllusion
	Top          int
	Pool, Latest bool
	Rule         string
	Output       string   // -o: the report's file ("" or "-": standard output)
	Logs         []string // the arguments: LOG or NAME=LOG
	// Render writes the report in a format (not a flag): render.WriteIllusion, which the
	// command hands over because render imports this package.
	Render func(w io.Writer, rep *Report, format string, color bool) error
}

// AddFlags defines the flags of m3eval illusion score on fs.
func (o *ScoreRequest) AddFlags(fs *pflag.FlagSet) {
	fs.StringArrayVar(&o.Testsets, "testset", nil, "NAME=FILE of a test set built by 'illusion sample' (Parquet or JSONL); repeatable")
	cmdutil.EnumVar(fs, &o.Kind, "kind", "", cmdutil.Strings(Kinds...), "score every log as shape or scene instead of inferring it")
	cmdutil.EnumVar(fs, &o.By, "by", "", cmdutil.Strings(Kinds...), "per-class rows by shape or scene instead of per difficulty")
	fs.IntVar(&o.Top, "top", 10, "wrong answers to list (0 for all)")
	fs.BoolVar(&o.Pool, "pool", false, "score several logs of the same task and split together")
	fs.BoolVar(&o.Latest, "latest", false, "of several logs of the same task and split, score only the newest (date in the file name)")
	cmdutil.EnumVar(fs, &o.Rule, "rule", string(RuleM3eval), cmdutil.Strings(Rules...), "matching rule: m3eval, or lmms-eval (the task's own _recall_match)")
	cmdutil.EnumVar(fs, &o.Format, "format", Formats[0], Formats, "output format")
	fs.StringVarP(&o.Output, "output", "o", "", "write the report to FILE instead of standard output")
}

// Run is m3eval illusion score once its command line is parsed: it checks the flags (usage
// errors), scores the logs on the test sets, writes the notes and warnings to e's standard
// error, and then the report in Format to Output (or standard output) through Render.
// Nothing is written before the scoring succeeded.
func (q *ScoreRequest) Run(ctx context.Context, e *cmdio.IO) error {
	rep, err := scoreReport(ctx, *q, q.Logs)
	if err != nil {
		return err
	}
	rep.WriteNotes(e.Stderr())
	if q.Render == nil {
		return errors.New("illusion score: no report writer given to illusion.ScoreRequest")
	}
	return e.Write(q.Output, q.Format, func(w io.Writer, color bool) error {
		return q.Render(w, rep, q.Format, color)
	})
}

// scoreReport checks the flags, scores the logs (LOG or NAME=LOG) on the test sets and builds
// the report.
func scoreReport(ctx context.Context, f ScoreRequest, logs []string) (*Report, error) {
	// --kind, --by, --format and --rule were checked when parsed (cmdutil.EnumVar).
	kind, by, rule := Kind(f.Kind), Kind(f.By), Rule(f.Rule)
	if f.Top < 0 {
		return nil, usagef("--top %d: must be at least 0", f.Top)
	}
	if f.Pool && f.Latest {
		return nil, usagef("--pool and --latest exclude each other")
	}
	res, err := ScoreFiles(ctx, f.Testsets, logs, ScoreOptions{Kind: kind, Pool: f.Pool, Latest: f.Latest, Rule: rule})
	if err != nil {
		return nil, err
	}
	return &Report{
		Rows:       Summarize(res.Items, by),
		Confusions: Confusions(res.Items, f.Top),
		Warnings:   res.Warnings,
		Notes:      res.Notes,
		Logs:       res.Logs,
		Rule:       rule,
		By:         by,
	}, nil
}

// ScoreFiles loads the --testset NAME=FILE test sets and scores the logs (LOG or NAME=LOG);
// m3eval illusion score and m3eval report share it.
func ScoreFiles(ctx context.Context, testsets, args []string, opts ScoreOptions) (*ScoreResult, error) {
	var sets []*TestSet
	known := map[string]bool{}
	for _, s := range testsets {
		name, path, ok := strings.Cut(s, "=")
		if !ok || name == "" || path == "" {
			return nil, usagef("--testset %q: want NAME=FILE, e.g. Illusion_ICON=illusion_icon_test1000.parquet", s)
		}
		if known[name] {
			return nil, usagef("--testset %s given twice", name)
		}
		known[name] = true
		ts, err := LoadTestSet(ctx, name, path)
		if err != nil {
			return nil, err
		}
		sets = append(sets, ts)
	}
	var logs []LogInput
	for _, a := range args {
		in := LogInput{Path: a}
		// NAME=LOG names the split, unless the whole argument is an existing file.
		if name, path, ok := strings.Cut(a, "="); ok {
			if _, err := os.Stat(a); err != nil {
				in = LogInput{Split: name, Path: path}
			}
		}
		logs = append(logs, in)
	}
	return ScoreLogs(ctx, sets, logs, opts)
}
