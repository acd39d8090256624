package main

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/m3bench/m3eval/internal/csvout"
	"github.com/m3bench/m3eval/internal/judge"
	"github.com/m3bench/m3eval/internal/judgerun"
	"github.com/m3bench/m3eval/internal/rubric"
	"github.com/m3bench/m3eval/internal/store"
)

type judgeOptions struct {
	name    string
	filters []string
	replace bool
	rules   string
	explain string
	format  string

	printRules bool
}

func newJudgeCmd(g *globalOptions) *cobra.Command {
	o := &judgeOptions{}
	cmd := &cobra.Command{
		Use:   "judge [--name rules] [--filter KEY=VALUE]... [--replace] [--rules FILE] | --explain SAMPLE_ID",
		Short: "Score the imported turns with the rule-based judge and store the scores",
		Long: `judge scores every imported turn (or those --filter chooses) on the rubric with m3eval's
rule-based judge, in English and Chinese, and stores the values as the scores of the judge
--name (default rules), through the same checks as import-scores: m3eval score --judge rules
then sets it beside the annotators. Each turn is read against the earlier turns of its episode.

Running it again changes nothing. The rule set's version is stored with every score; scores
made with other rules are re-scored only with --replace. --rules FILE uses a rule file
instead of the built-in one (m3eval judge --print-rules writes the built-in one to start from).
--explain SAMPLE_ID prints, per field, the value, the rule and the evidence, in the turn's
language, and stores nothing. See docs/judge.md.`,
		Example: `  m3eval judge
  m3eval judge --filter action_type=mislead --filter model=qwen2-vl-7b
  m3eval judge --rules my_rules.json --replace
  m3eval judge --explain demo_zh_umbrella_0_turn_7 --format json`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error { return runJudge(cmd, g, o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.name, "name", "rules", "the judge's name in the database")
	f.StringArrayVar(&o.filters, "filter", nil, "judge only turns with KEY=VALUE (repeatable; keys: action_type, task_type, model, episode, sample_id)")
	f.BoolVar(&o.replace, "replace", false, "re-score scores made with other rules, or changed")
	f.StringVar(&o.rules, "rules", "", "rule file (JSON) to use instead of the built-in rules")
	f.StringVar(&o.explain, "explain", "", "print the verdict of one sample: value, rule and evidence per field")
	f.StringVar(&o.format, "format", "table", "--explain output: table or json")
	f.BoolVar(&o.printRules, "print-rules", false, "print the built-in rule file and exit")
	return cmd
}

// newJudge checks that the database exists and builds the judge from the rubric and the
// rule file (the built-in rules when path is "").
func newJudge(g *globalOptions, path string) (*rubric.Rubric, *judge.Judge, error) {
	if err := g.mustExist(); err != nil {
		return nil, nil, err
	}
	rb, err := g.loadRubric()
	if err != nil {
		return nil, nil, err
	}
	rules := judge.DefaultRules()
	if path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, nil, fmt.Errorf("read rules: %w", err)
		}
		if rules, err = judge.ParseRules(data); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	j, err := judge.New(rb, rules)
	return rb, j, err
}

func runJudge(cmd *cobra.Command, g *globalOptions, o *judgeOptions) error {
	if o.printRules {
		_, err := cmd.OutOrStdout().Write(judge.DefaultRulesJSON())
		return err
	}
	if o.format != "table" && o.format != "json" {
		return usageErrorf("--format %q: use table or json", o.format)
	}
	filter, err := judgerun.ParseFilter(o.filters)
	if err != nil {
		return usageErrorf("%v", err)
	}
	if o.explain != "" && (len(o.filters) > 0 || o.replace) {
		return usageErrorf("--explain shows one sample and stores nothing: drop --filter and --replace")
	}
	rb, j, err := newJudge(g, o.rules)
	if err != nil {
		return err
	}
	rules := j.Rules
	ctx := cmd.Context()
	if o.explain != "" {
		s, err := g.openStore(ctx, nil, store.Options{ReadOnly: true})
		if err != nil {
			return err
		}
		defer s.Close()
		v, err := judgerun.Explain(ctx, s, j, o.explain)
		if err != nil {
			return err
		}
		return writeOutput(cmd, "", func(w io.Writer, _ bool) error { return judgerun.WriteExplain(w, v, rb, rules, o.format) })
	}
	s, err := g.openStore(ctx, rb, store.Options{})
	if err != nil {
		return err
	}
	defer s.Close()
	defer debug.SetGCPercent(debug.SetGCPercent(judgerun.GCPercent))
	c, err := judgerun.Judge(ctx, s, rb, j, judgerun.Options{Name: o.name, Filter: filter, Replace: o.replace})
	if err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "judge %s: %s\n", o.name, c)
	return nil
}

// runMetrics is m3eval score --metrics: the action-space metrics from the rule judge's
// verdicts over every imported turn.
func runMetrics(cmd *cobra.Command, g *globalOptions, format, output string, bootstrap int, seed uint64, co csvout.Options) error {
	_, j, err := newJudge(g, "")
	if err != nil {
		return err
	}
	s, err := g.openStore(cmd.Context(), nil, store.Options{ReadOnly: true})
	if err != nil {
		return err
	}
	defer s.Close()
	rep, err := judgerun.Metrics(cmd.Context(), s, j, nil, bootstrap, seed)
	if err != nil {
		return err
	}
	return writeOutput(cmd, output, func(w io.Writer, _ bool) error { return judgerun.WriteMetrics(w, rep, format, co) })
}
