package main

import (
	"errors"
	"io"

	"github.com/m3bench/m3eval/annotations"
	"github.com/m3bench/m3eval/internal/modeljudge"
	"github.com/m3bench/m3eval/internal/progress"
	"github.com/m3bench/m3eval/internal/rubric"

	"github.com/spf13/cobra"

	"github.com/m3bench/m3eval/internal/judge"
	"github.com/m3bench/m3eval/internal/judgerun"
	"github.com/m3bench/m3eval/internal/store"
)

func newJudgeCmd(g *globalOptions) *cobra.Command {
	o := &judgerun.Request{}
	cmd := &cobra.Command{
		Use:   "judge [--name rules] [--filter KEY=VALUE]... [--replace] [--rules FILE | --endpoint URL --model MODEL] | --explain SAMPLE_ID",
		Short: "Score the imported turns with the rule-based judge or a model judge and store the scores",
		Long: `judge scores every imported turn (or those --filter chooses) with m3eval's rule-based judge,
in English and Chinese, and stores the scores as judge --name, for m3eval score. Running it
again changes nothing; --replace re-scores scores of other rules. --explain SAMPLE_ID prints
the value, rule and evidence per field and stores nothing.

With --endpoint and --model, a VLM served by an OpenAI-compatible endpoint judges instead
(a model judge): each turn is sent with its images, the earlier turns, the expected answer,
the action's test intent and the rubric, asking for the rubric's fields as JSON. Scores are
stored with the model, the prompt's hash and the parameters; a rerun scores only turns not
yet scored with them, a changed model or prompt re-scores only with --replace. A turn whose
answer is unusable after one re-ask is listed as failed and stores nothing (exit status 1).
--explain SAMPLE_ID --name NAME shows a model judge's values and rationale. The prompt names
a turn by its place in its conversation ("turn 3 of 5"), never by its sample id, episode,
model or image file name; --print-prompt with --endpoint prints each request exactly as sent.
See docs/judge.md.`,
		Example: `  m3eval judge
  m3eval judge --filter action_type=mislead --filter model=qwen2-vl-7b
  m3eval judge --rules my_rules.json --replace
  m3eval judge --explain demo_zh_umbrella_0_turn_7 --format json
  m3eval judge --name gpt4o --endpoint https://api.openai.com/v1 --model gpt-4o --concurrency 8
  m3eval judge --name gpt4o --endpoint https://api.openai.com/v1 --model gpt-4o --print-prompt --filter sample_id=demo_en_apples_1_turn_5
  m3eval judge --explain demo_en_apples_1_turn_5 --name gpt4o`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error { return runJudge(cmd, g, o) },
	}
	o.AddFlags(cmd.Flags())
	names(cmd, map[string]name{"name": judgeName.fresh(), "explain": sampleIDName})
	return cmd
}

func runJudge(cmd *cobra.Command, g *globalOptions, o *judgerun.Request) error {
	if o.PrintRules {
		_, err := cmd.OutOrStdout().Write(judge.DefaultRulesJSON())
		return err
	}
	if o.Model.PrintPrompt && o.Model.Endpoint == "" {
		_, err := cmd.OutOrStdout().Write(modeljudge.DefaultPrompt)
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
	if o.Model.Endpoint != "" {
		return runModelJudge(cmd, g, o, rb, filter)
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
	if o.Explain != "" && o.Name != "rules" {
		return explainJudge(cmd, g, s, o, func(w io.Writer) error { return o.Run(cmd.Context(), s, rb, j, filter, w) })
	}
	return writeOutput(cmd, "", func(w io.Writer, _ bool) error { return o.Run(cmd.Context(), s, rb, j, filter, w) })
}

// explainJudge is judge --explain SAMPLE_ID --name NAME for a name other than "rules"
// (judgerun.Request.ExplainStored); a name the database does not hold follows the
// unknown-name rule (names.go).
func explainJudge(cmd *cobra.Command, g *globalOptions, s *store.Store, o *judgerun.Request, rules func(io.Writer) error) error {
	ctx := cmd.Context()
	write, err := o.ExplainStored(ctx, s, g.rubric, store.DisplayName(g.dbPath), rules)
	if errors.Is(err, judgerun.ErrUnknownJudge) {
		c, err := store.OpenCompleter(ctx, g.dbPath)
		if err != nil {
			return err
		}
		defer c.Close()
		return unknownName(ctx, c, nameFlag{command: "judge", flag: "name", from: store.CompleteJudges, kind: "judge"}, o.Name, store.DisplayName(g.dbPath))
	}
	if err != nil {
		return err
	}
	return writeOutput(cmd, "", func(w io.Writer, _ bool) error { return write(w) })
}

// runModelJudge is m3eval judge --endpoint: the model judge, with a progress bar on a
// terminal and its summary on standard output.
func runModelJudge(cmd *cobra.Command, g *globalOptions, o *judgerun.Request, rb *rubric.Rubric, filter store.TurnFilter) error {
	actions, err := rubric.ParseActions(annotations.Actions)
	if err != nil {
		return err
	}
	o.Notices = cmd.ErrOrStderr()
	pm, err := o.PrepareModel(rb, actions) // before the store opens: a bad prompt changes nothing
	if err != nil {
		return usageIf(err)
	}
	s, err := g.openStore(cmd.Context(), rb, store.Options{ReadOnly: o.Model.PrintPrompt})
	if err != nil {
		return err
	}
	defer s.Close()
	if o.Model.PrintPrompt {
		// What would be sent, byte for byte, and nothing sent.
		return judgerun.PrintRequests(cmd.Context(), s, pm, filter, cmd.OutOrStdout())
	}
	return withBar(cmd, "judge "+o.Name, progress.Unit{Name: "turns"}, func(report progress.Func, out, _ io.Writer) error {
		return o.RunModel(cmd.Context(), s, pm, filter, report, out)
	})
}
