package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/m3bench/m3eval/internal/illusion"
	"github.com/m3bench/m3eval/internal/textsafe"
)

func newIllusionCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "illusion",
		Short: "Build IllusionBench test sets and score shape/scene recall",
		Long: `illusion builds the lab's IllusionBench test sets (difficulty-stratified samples of
arshiahemmat/IllusionBench, identical row for row to make_arshia_testset.py) and scores
lmms-eval sample logs on them by shape and scene recall.`,
	}
	cmd.AddCommand(newIllusionSampleCmd(), newIllusionScoreCmd())
	return cmd
}

type illusionSampleOptions struct {
	splits []string
	n      int
	seed   int64
	out    string
}

func newIllusionSampleCmd() *cobra.Command {
	o := &illusionSampleOptions{}
	cmd := &cobra.Command{
		Use:   "sample --split NAME=FILE [--split NAME=FILE ...] --out DIR",
		Short: "Draw the stratified test set of each split",
		Long: `sample draws --n rows from every split, stratified by difficulty, with Python's
random.Random(--seed) shared by the splits in the order given, exactly as the guide's
make_arshia_testset.py does. Each split is a Hugging Face Parquet file (image, image_name)
or JSON Lines with an image_name field, or the shards of one (FILE,FILE... or a quoted glob
such as 'data/Illusion_ICON-*.parquet', read in that order as datasets concatenates them);
the test set is written in the same format, the rows untouched, as
DIR/<split lowercased>_test<n>.<ext>, with DIR/summary.json.`,
		Example: `  m3eval illusion sample --out testset \
    --split Illusion_ICON=Illusion_ICON-00000-of-00001.parquet \
    --split Illusion_LOGO=Illusion_LOGO-00000-of-00001.parquet \
    --split Illusion_IN=Illusion_IN-00000-of-00001.parquet`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd) },
	}
	f := cmd.Flags()
	f.StringArrayVar(&o.splits, "split", nil, "NAME=FILE[,FILE...] of one split (shards in order; globs allowed); repeat in the order the splits are drawn")
	f.IntVar(&o.n, "n", 1000, "rows per split")
	f.Int64Var(&o.seed, "seed", 42, "seed of random.Random")
	f.StringVar(&o.out, "out", "", "output directory (created if missing)")
	return cmd
}

func (o *illusionSampleOptions) run(cmd *cobra.Command) error {
	if len(o.splits) == 0 {
		return usageErrorf("give at least one --split NAME=FILE")
	}
	if o.out == "" {
		return usageErrorf("--out DIR is required")
	}
	if o.n < 0 {
		return usageErrorf("--n %d: must be at least 0", o.n)
	}
	inputs, err := splitInputs(o.splits)
	if err != nil {
		return err
	}
	res, err := illusion.BuildTestSets(cmd.Context(), inputs, o.n, o.seed, o.out)
	if err != nil {
		return err
	}
	out, errw := cmd.OutOrStdout(), cmd.ErrOrStderr()
	for _, r := range res {
		total, orig := 0, 0
		var parts []string
		for _, g := range r.Selection.Groups {
			total += g.Sampled
			orig += g.Original
			parts = append(parts, fmt.Sprintf("%s %d/%d", g.Difficulty, g.Sampled, g.Original))
			if g.Difficulty == illusion.Unknown {
				fmt.Fprintf(errw, "warning: %s: %d rows have no -easy-, -medium- or -hard- in image_name; sampled as group Unknown, as the guide's script does\n", r.Split, g.Original)
			}
		}
		fmt.Fprintf(out, "%s: %d of %d rows -> %s (%s)\n", r.Split, total, orig, r.OutputFile, strings.Join(parts, ", "))
		for _, g := range r.Selection.Short() {
			fmt.Fprintf(errw, "warning: %s: group %s has %d rows but was allocated %d; summary.json reports sampled_counts %d and allocated_counts %d (the guide's script reports %d as sampled)\n",
				r.Split, g.Difficulty, g.Original, g.Allocated, g.Sampled, g.Allocated, g.Allocated)
		}
	}
	fmt.Fprintf(out, "summary: %s\n", filepath.Join(o.out, illusion.SummaryFile))
	return nil
}

type illusionScoreOptions struct {
	testsets []string
	kind     string
	by       string
	format   string
	top      int
	output   string
	pool     bool
	latest   bool
	rule     string
}

func newIllusionScoreCmd() *cobra.Command {
	o := &illusionScoreOptions{}
	cmd := &cobra.Command{
		Use:   "score [--testset NAME=FILE ...] LOG|NAME=LOG ...",
		Short: "Shape and scene recall of lmms-eval sample logs",
		Long: `score reads lmms-eval --log_samples files (JSON Lines, or the oldest one-JSON layout
with a "logs" list), joins each doc_id to its image_name through the test set, and reports
shape or scene recall per split and per difficulty with n and a 95% Wilson interval, then
the most frequent wrong answers. A response is right when it contains the ground-truth
class after both are lowercased, stripped of punctuation and whitespace-collapsed;
"Stationary" and "Stationery" are both accepted for that class.

--rule lmms-eval scores with the upstream task's own _recall_match instead (lowercased
substring, '_' or '-' as a space, nothing else normalized); where a log's own
shape_recall/scene_recall differs from the rule, a warning says which side is stricter.

A log's split is NAME when given as NAME=LOG, else the test set whose short name (ICON,
LOGO, IN) is a word of the task name in the file name, else the only test set. Whether it
scores shapes or scenes comes from its shape_recall/scene_recall keys or the task name,
unless --kind says. Documents are numbered as the task's process_docs numbers them, and
each joined sample is checked against the image name or ground truth the log carries.

lmms-eval writes a new {date}_samples_{task}.jsonl per run into a model's folder, so a
glob can catch reruns and other models: two logs of the same task and split are an error
unless --latest (keep the newest by the date in the file name) or --pool (score them
together). The report lists every log with its model (the folder name). Aggregated
*_results.json files are skipped with a note.`,
		Example: `  m3eval illusion score \
    --testset Illusion_ICON=testset/illusion_icon_test1000.parquet \
    --testset Illusion_IN=testset/illusion_in_test1000.parquet \
    --latest logs/*/*_samples_*illusionbench_arshia_*_test.jsonl
  m3eval illusion score --by scene --format md -o by_scene.md --testset Illusion_ICON=icon.parquet Illusion_ICON=shape.jsonl`,
		Args: minArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return o.run(cmd, args) },
	}
	f := cmd.Flags()
	f.StringArrayVar(&o.testsets, "testset", nil, "NAME=FILE of a test set built by 'illusion sample' (Parquet or JSONL); repeatable")
	f.StringVar(&o.kind, "kind", "", "score every log as shape or scene instead of inferring it")
	f.StringVar(&o.by, "by", "", "per-class rows by shape or scene instead of per difficulty")
	f.StringVar(&o.format, "format", "table", "output format: table, json or md")
	f.IntVar(&o.top, "top", 10, "wrong answers to list (0 for all)")
	f.StringVarP(&o.output, "output", "o", "", "write the report to FILE instead of standard output")
	f.BoolVar(&o.pool, "pool", false, "score several logs of the same task and split together")
	f.BoolVar(&o.latest, "latest", false, "of several logs of the same task and split, score only the newest (date in the file name)")
	f.StringVar(&o.rule, "rule", string(illusion.RuleM3eval), "matching rule: m3eval or lmms-eval (the task's own _recall_match)")
	return cmd
}

func (o *illusionScoreOptions) run(cmd *cobra.Command, args []string) error {
	kind, err := parseKind("--kind", o.kind)
	if err != nil {
		return err
	}
	by, err := parseKind("--by", o.by)
	if err != nil {
		return err
	}
	switch o.format {
	case "table", "json", "md":
	default:
		return usageErrorf("--format %q: use table, json or md", o.format)
	}
	if o.top < 0 {
		return usageErrorf("--top %d: must be at least 0", o.top)
	}
	rule := illusion.Rule(o.rule)
	if rule != illusion.RuleM3eval && rule != illusion.RuleLMMSEval {
		return usageErrorf("--rule %q: use m3eval or lmms-eval", o.rule)
	}
	if o.pool && o.latest {
		return usageErrorf("--pool and --latest exclude each other")
	}
	ctx := cmd.Context()
	var sets []*illusion.TestSet
	known := map[string]bool{}
	for _, s := range o.testsets {
		name, path, ok := strings.Cut(s, "=")
		if !ok || name == "" || path == "" {
			return usageErrorf("--testset %q: want NAME=FILE, e.g. Illusion_ICON=illusion_icon_test1000.parquet", s)
		}
		if known[name] {
			return usageErrorf("--testset %s given twice", name)
		}
		known[name] = true
		ts, err := illusion.LoadTestSet(ctx, name, path)
		if err != nil {
			return err
		}
		sets = append(sets, ts)
	}
	var logs []illusion.LogInput
	for _, a := range args {
		in := illusion.LogInput{Path: a}
		// NAME=LOG names the split, unless the whole argument is an existing file.
		if name, path, ok := strings.Cut(a, "="); ok {
			if _, err := os.Stat(a); err != nil {
				in = illusion.LogInput{Split: name, Path: path}
			}
		}
		logs = append(logs, in)
	}
	res, err := illusion.ScoreLogs(ctx, sets, logs, illusion.ScoreOptions{Kind: kind, Pool: o.pool, Latest: o.latest, Rule: rule})
	if err != nil {
		return err
	}
	for _, n := range res.Notes {
		fmt.Fprintln(cmd.ErrOrStderr(), "note: "+textsafe.Line(n))
	}
	for _, w := range res.Warnings {
		fmt.Fprintln(cmd.ErrOrStderr(), "warning: "+textsafe.Line(w))
	}
	rep := illusionReport{
		Rows:       illusion.Summarize(res.Items, by),
		Confusions: illusion.Confusions(res.Items, o.top),
		Warnings:   res.Warnings,
		Notes:      res.Notes,
		Logs:       res.Logs,
		Rule:       rule,
		By:         by,
	}
	return writeOutput(cmd, o.output, func(w io.Writer, color bool) error {
		return rep.write(w, o.format, color)
	})
}

// splitInputs turns --split NAME=FILE[,FILE...] flags into splits in order of first
// appearance. A FILE may be a glob pattern (matches in lexical order, which is the order of
// Hugging Face shard names); a NAME given again adds files to its split.
func splitInputs(flags []string) ([]illusion.SplitInput, error) {
	var inputs []illusion.SplitInput
	at := map[string]int{}
	for _, s := range flags {
		name, list, ok := strings.Cut(s, "=")
		if !ok || name == "" || list == "" {
			return nil, usageErrorf("--split %q: want NAME=FILE, e.g. Illusion_ICON=icon.parquet", s)
		}
		var paths []string
		for _, p := range strings.Split(list, ",") {
			if p == "" {
				return nil, usageErrorf("--split %q: empty file name", s)
			}
			if !strings.ContainsAny(p, "*?[") {
				paths = append(paths, p)
				continue
			}
			m, err := filepath.Glob(p)
			if err != nil {
				return nil, usageErrorf("--split %q: %v", s, err)
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
		inputs = append(inputs, illusion.SplitInput{Name: name, Paths: paths})
	}
	return inputs, nil
}

func parseKind(flag, s string) (illusion.Kind, error) {
	switch k := illusion.Kind(s); k {
	case "", illusion.KindShape, illusion.KindScene:
		return k, nil
	}
	return "", usageErrorf("%s %q: use shape or scene", flag, s)
}
