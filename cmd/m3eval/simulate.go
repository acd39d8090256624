package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/m3bench/m3eval/internal/simulate"
	"github.com/m3bench/m3eval/internal/simulate/demovlm"
)

func newSimulateCmd() *cobra.Command {
	var o simulate.Flags
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
		Example: `  m3eval simulate --demo-vlm --scenes annotations/scenes/demo.jsonl &
  m3eval simulate --scenes annotations/scenes/demo.jsonl --endpoint http://127.0.0.1:8000/v1 \
      --model faithful --strategy both --out turns.jsonl
  m3eval simulate --scenes scenes.jsonl --dry-run
  m3eval simulate --scenes scenes.jsonl --model qwen2-vl-7b --replay turns.jsonl.requests.jsonl --out again.jsonl`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			in, err := simulate.Load(o)
			if err == nil && o.DemoVLM {
				err = demovlm.Serve(cmd.Context(), in.Scenes, o.Listen, o.Latency, cmd.OutOrStdout())
			} else if err == nil {
				err = in.Main(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr())
			}
			return usageIf(err)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Scenes, "scenes", "", "scenes file (JSON Lines; see docs/simulate.md)")
	f.StringVar(&o.Endpoint, "endpoint", "", "OpenAI-compatible API base, e.g. http://127.0.0.1:8000/v1")
	f.StringVar(&o.Model, "model", "", "model name sent to the endpoint and written to each turn")
	f.StringVar(&o.Strategy, "strategy", "rules", "rules, cross-image or both")
	f.IntVar(&o.Turns, "turns", 10, "turns of a rule-strategy episode (3 or more)")
	f.IntVar(&o.Difficulty, "difficulty", 2, "cross-image difficulty 1-4: filler turns (5, 8, 12, 15) and object types tested")
	f.Uint64Var(&o.Seed, "seed", 42, "seed of the template and fact choices")
	f.IntVar(&o.Concurrency, "concurrency", 4, "episodes run in parallel")
	f.StringVarP(&o.Out, "out", "o", "turns.jsonl", "turns file (- for standard output, which cannot be resumed)")
	f.BoolVar(&o.Resume, "resume", false, "continue the interrupted run in --out: keep finished episodes, rerun the others")
	f.BoolVar(&o.DryRun, "dry-run", false, "print the user turns each episode would start with; send nothing")
	f.DurationVar(&o.Timeout, "timeout", 2*time.Minute, "longest wait for one response")
	f.IntVar(&o.Retries, "retries", 4, "retries of a request after 429, 5xx, a timeout or a connection error")
	f.Float64Var(&o.Rate, "rate", 0, "most requests per second across all episodes (0: no limit)")
	f.StringVar(&o.APIKeyEnv, "api-key-env", "OPENAI_API_KEY", "environment variable holding the API key")
	f.StringVar(&o.LogPath, "log", "", "request log (JSON Lines; default <out>.requests.jsonl, none for -o -)")
	f.IntVar(&o.MaxTokens, "max-tokens", 0, "max_tokens of each request (0: the server's default)")
	f.BoolVar(&o.DemoVLM, "demo-vlm", false, "serve the scripted demo VLM for --scenes on --listen instead of simulating")
	f.StringVar(&o.Listen, "listen", "127.0.0.1:8000", "address of --demo-vlm")
	f.StringVar(&o.Replay, "replay", "", "answer from this request log instead of an endpoint (reproduces the logged run)")
	f.DurationVar(&o.Latency, "demo-latency", 0, "delay each --demo-vlm answer (to watch the progress line)")
	return cmd
}
