package main

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/m3bench/m3eval/internal/judge"
	"github.com/m3bench/m3eval/internal/judgerun"
	"github.com/m3bench/m3eval/internal/store"
)

func newJudgeCmd(g *globalOptions) *cobra.Command {
	o := &judgerun.Request{}
	cmd := &cobra.Command{
		Use:   "judge [--name rules] [--filter KEY=VALUE]... [--replace] [--rules FILE] | --explain SAMPLE_ID",
		Short: "Score the imported turns with the rule-based judge and store the scores",
		Long: `judge scores every imported turn (or those --filter chooses) with m3eval's rule-based judge,
in English and Chinese, and stores the scores as judge --name, for m3eval score. Running it
again changes nothing; --replace re-scores scores of other rules. --explain SAMPLE_ID prints
the value, rule and evidence per field and stores nothing. See docs/judge.md.`,
		Example: `  m3eval judge
  m3eval judge --filter action_type=mislead --filter model=qwen2-vl-7b
  m3eval judge --rules my_rules.json --replace
  m3eval judge --explain demo_zh_umbrella_0_turn_7 --format json`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error { return runJudge(cmd, g, o) },
	}
	o.AddFlags(cmd.Flags())
	return cmd
}

func runJudge(cmd *cobra.Command, g *globalOptions, o *judgerun.Request) error {
	if o.PrintRules {
		_, err := cmd.OutOrStdout().Write(judge.DefaultRulesJSON())
		return err
	}
	filter, err := o.Check()
	if err != nil {
		return usageIf(err)
	}
	if err := g.mustExist(); err != nil {
		return err
	}
	rb, err := g.loadRubric()
	if err != nil {
		return err
	}
	j, err := judgerun.NewJudge(rb, o.Rules) // before the store opens: a bad rule file changes nothing
	if err != nil {
		return err
	}
	s, err := g.openStore(cmd.Context(), rb, store.Options{ReadOnly: o.Explain != ""})
	if err != nil {
		return err
	}
	defer s.Close()
	return writeOutput(cmd, "", func(w io.Writer, _ bool) error { return o.Run(cmd.Context(), s, rb, j, filter, w) })
}
