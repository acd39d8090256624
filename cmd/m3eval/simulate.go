package main

import (
	"github.com/spf13/cobra"

	"github.com/m3bench/m3eval/internal/simulate"
	"github.com/m3bench/m3eval/internal/simulate/demovlm"
)

func newSimulateCmd() *cobra.Command {
	var o simulate.Request
	cmd := &cobra.Command{
		Use:   "simulate --scenes FILE --endpoint URL --model NAME",
		Short: "Run M3Bench test episodes against a VLM (OpenAI-compatible API) and write turn records",
		Long: `Simulate plays the action-space document's multi-turn tests against a VLM served by an
OpenAI-compatible chat completions endpoint (vLLM, SGLang, Ollama, hosted APIs): the
adaptive rule strategy (memory build, state evolution, the task's question) and the
cross-image memory confusion test. Each turn is written as a turn record for 'm3eval
import'. Finished episodes are journaled: --resume reruns only the others. Requests are
logged to <out>.requests.jsonl; --replay answers from such a log. The API key is read from
the variable --api-key-env names. --demo-vlm serves a scripted VLM whose --model picks a
persona (faithful, gullible, confused, flaky, ...). See docs/simulate.md.`,
		Example: `  m3eval simulate --demo-vlm --scenes annotations/demo/images/scenes.jsonl &
  m3eval simulate --scenes annotations/demo/images/scenes.jsonl --endpoint http://127.0.0.1:8000/v1 \
      --model faithful --strategy both --out turns.jsonl
  m3eval simulate --scenes scenes.jsonl --dry-run
  m3eval simulate --scenes scenes.jsonl --model qwen2-vl-7b --replay turns.jsonl.requests.jsonl --out again.jsonl`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.ServeDemo = demovlm.Serve // demovlm imports simulate: the command hands it over
			return usageIf(o.Run(cmd.Context(), cmdIO(cmd)))
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}
