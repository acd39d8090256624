package main

import (
	"context"
	"errors"

	"github.com/spf13/cobra"

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
		RunE: func(cmd *cobra.Command, args []string) error {
			err := o.Run(cmd.Context(), g.io(cmd))
			if errors.Is(err, judgerun.ErrUnknownJudge) {
				return g.unknownJudge(cmd.Context(), o.Name)
			}
			return usageIf(err)
		},
	}
	o.AddFlags(cmd.Flags())
	names(cmd, map[string]name{"name": judgeName.fresh(), "explain": sampleIDName})
	return cmd
}

// unknownJudge is the unknown-name message (names.go) for judge --explain's --name when the
// database holds no such judge (judgerun.ErrUnknownJudge).
func (o *globalOptions) unknownJudge(ctx context.Context, name string) error {
	c, err := store.OpenCompleter(ctx, o.dbPath)
	if err != nil {
		return err
	}
	defer c.Close()
	return unknownName(ctx, c, nameFlag{command: "judge", flag: "name", from: store.CompleteJudges, kind: "judge"}, name, store.DisplayName(o.dbPath))
}
