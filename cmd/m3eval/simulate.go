package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"

	"github.com/m3bench/m3eval/internal/simulate"
	"github.com/m3bench/m3eval/internal/simulate/demovlm"
	"github.com/m3bench/m3eval/internal/textsafe"
	"github.com/m3bench/m3eval/internal/vlm"
)

// simulateOptions are the flags of m3eval simulate.
type simulateOptions struct {
	scenes      string
	endpoint    string
	model       string
	strategy    string
	turns       int
	difficulty  int
	seed        uint64
	concurrency int
	out         string
	resume      bool
	dryRun      bool
	timeout     time.Duration
	retries     int
	rate        float64
	apiKeyEnv   string
	logPath     string
	maxTokens   int
	demoVLM     bool
	listen      string
	latency     time.Duration
	replay      string
}

func newSimulateCmd() *cobra.Command {
	o := &simulateOptions{}
	cmd := &cobra.Command{
		Use:   "simulate --scenes FILE --endpoint URL --model NAME",
		Short: "Run M3Bench test episodes against a VLM (OpenAI-compatible API) and write turn records",
		Long: `Simulate plays the action-space document's multi-turn tests against a VLM served by an
OpenAI-compatible chat completions endpoint (vLLM, SGLang, Ollama, LM Studio, hosted APIs):
  rules        the adaptive rule strategy: memory build (guidance, follow-up, logic-skip,
               negation by evidence coverage), state evolution (update, mislead, redundancy,
               distraction), and the task's direct question;
  cross-image  the cross-image memory confusion test: grounding per image, filler turns
               (more at higher --difficulty), ambiguous reference, attribute swap, recall.
Each turn is written as a turn record for 'm3eval import', with the meta the judge uses.
Finished episodes are written whole and journaled (<out>.journal); after an interruption
--resume keeps them and reruns the others. Every request is logged to <out>.requests.jsonl.
The API key, if any, is read from the environment variable --api-key-env names.

--demo-vlm serves a scripted VLM on --listen that answers from the scenes' facts; its
--model picks a persona: faithful, gullible, confused, flaky (and http500, malformed,
empty, hang to see how failures are reported). See docs/simulate.md.`,
		Example: `  m3eval simulate --demo-vlm --scenes annotations/scenes/demo.jsonl &
  m3eval simulate --scenes annotations/scenes/demo.jsonl --endpoint http://127.0.0.1:8000/v1 \
      --model faithful --strategy both --out turns.jsonl
  m3eval simulate --scenes scenes.jsonl --dry-run
  m3eval simulate --scenes scenes.jsonl --model qwen2-vl-7b --replay turns.jsonl.requests.jsonl --out again.jsonl`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.run(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.scenes, "scenes", "", "scenes file (JSON Lines; see docs/simulate.md)")
	f.StringVar(&o.endpoint, "endpoint", "", "OpenAI-compatible API base, e.g. http://127.0.0.1:8000/v1")
	f.StringVar(&o.model, "model", "", "model name sent to the endpoint and written to each turn")
	f.StringVar(&o.strategy, "strategy", "rules", "rules, cross-image or both")
	f.IntVar(&o.turns, "turns", 10, "turns of a rule-strategy episode (3 or more)")
	f.IntVar(&o.difficulty, "difficulty", 2, "cross-image difficulty 1-4: filler turns (5, 8, 12, 15) and object types tested")
	f.Uint64Var(&o.seed, "seed", 42, "seed of the template and fact choices")
	f.IntVar(&o.concurrency, "concurrency", 4, "episodes run in parallel")
	f.StringVarP(&o.out, "out", "o", "turns.jsonl", "turns file (- for standard output, which cannot be resumed)")
	f.BoolVar(&o.resume, "resume", false, "continue the interrupted run in --out: keep finished episodes, rerun the others")
	f.BoolVar(&o.dryRun, "dry-run", false, "print the user turns each episode would start with; send nothing")
	f.DurationVar(&o.timeout, "timeout", 2*time.Minute, "longest wait for one response")
	f.IntVar(&o.retries, "retries", 4, "retries of a request after 429, 5xx, a timeout or a connection error")
	f.Float64Var(&o.rate, "rate", 0, "most requests per second across all episodes (0: no limit)")
	f.StringVar(&o.apiKeyEnv, "api-key-env", "OPENAI_API_KEY", "environment variable holding the API key")
	f.StringVar(&o.logPath, "log", "", "request log (JSON Lines; default <out>.requests.jsonl, none for -o -)")
	f.IntVar(&o.maxTokens, "max-tokens", 0, "max_tokens of each request (0: the server's default)")
	f.BoolVar(&o.demoVLM, "demo-vlm", false, "serve the scripted demo VLM for --scenes on --listen instead of simulating")
	f.StringVar(&o.listen, "listen", "127.0.0.1:8000", "address of --demo-vlm")
	f.StringVar(&o.replay, "replay", "", "answer from this request log instead of an endpoint (reproduces the logged run)")
	f.DurationVar(&o.latency, "demo-latency", 0, "delay each --demo-vlm answer (to watch the progress line)")
	return cmd
}

func (o *simulateOptions) run(ctx context.Context, stdout, stderr io.Writer) error {
	if o.scenes == "" {
		return usageErrorf("--scenes is required")
	}
	strategies, err := simulate.ParseStrategies(o.strategy)
	if err != nil {
		return &usageError{err}
	}
	switch {
	case o.turns < 3:
		return usageErrorf("--turns %d: an episode needs 3 turns or more", o.turns)
	case o.difficulty < 1 || o.difficulty > 4:
		return usageErrorf("--difficulty %d: want 1 to 4", o.difficulty)
	case o.concurrency < 1:
		return usageErrorf("--concurrency %d: want 1 or more", o.concurrency)
	case o.retries < 0:
		return usageErrorf("--retries %d: want 0 or more", o.retries)
	}
	data, err := os.ReadFile(o.scenes)
	if err != nil {
		return fmt.Errorf("scenes: %w", err)
	}
	scenes, err := simulate.ReadScenes(o.scenes, strings.NewReader(string(data)))
	if err != nil {
		return err
	}
	if err := simulate.ResolveImages(scenes, o.scenes, filepath.Dir(o.scenes)); err != nil {
		return err
	}
	if o.demoVLM {
		return o.serveDemo(ctx, scenes, stdout)
	}
	opts := simulate.Options{
		Scenes: scenes, Strategies: strategies, Turns: o.turns, Difficulty: o.difficulty, Seed: o.seed,
		Model: o.model, Concurrency: o.concurrency, Out: o.out, Stdout: stdout, Resume: o.resume,
		ScenesDigest: simulate.Digest(data),
	}
	if o.dryRun {
		return dryRun(opts, stdout, stderr)
	}
	if o.replay != "" {
		if o.model == "" {
			return usageErrorf("--replay needs the logged run's --model")
		}
		return o.runReplay(ctx, opts, stderr)
	}
	if o.endpoint == "" || o.model == "" {
		return usageErrorf("--endpoint and --model are required (or --dry-run, or --replay)")
	}
	logPath := o.logPath
	if logPath == "" && o.out != "-" && o.out != "" {
		logPath = o.out + ".requests.jsonl"
	}
	var logw io.Writer
	if logPath != "" {
		lf, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return fmt.Errorf("request log: %w", err)
		}
		defer lf.Close()
		logw = lf
	}
	client, err := vlm.New(vlm.Options{
		Endpoint: o.endpoint, Model: o.model, APIKey: os.Getenv(o.apiKeyEnv), Timeout: o.timeout,
		MaxRetries: o.retries, RatePerSecond: o.rate, MaxTokens: o.maxTokens, Log: logw,
	})
	if err != nil {
		return &usageError{err}
	}
	opts.Chat = client
	if f, ok := stderr.(*os.File); ok && isatty.IsTerminal(f.Fd()) {
		opts.Progress = stderr
	}
	sum, err := simulate.Run(ctx, opts)
	printSummary(stderr, sum, o.out)
	return err
}

// runReplay runs the simulation against the answers of a request log.
func (o *simulateOptions) runReplay(ctx context.Context, opts simulate.Options, stderr io.Writer) error {
	f, err := os.Open(o.replay)
	if err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	rp, err := vlm.NewReplay(o.replay, f)
	f.Close()
	if err != nil {
		return err
	}
	opts.Chat = rp
	sum, err := simulate.Run(ctx, opts)
	printSummary(stderr, sum, o.out)
	return err
}

func dryRun(opts simulate.Options, stdout, stderr io.Writer) error {
	turns, skipped, err := simulate.DryRun(opts)
	printUnplanned(stderr, skipped)
	if err != nil {
		return err
	}
	for _, t := range turns {
		fmt.Fprintf(stdout, "%s\t%d\t%s\t%s\t%s\n", clean(t.Episode), t.Turn, t.Action, t.Phase, clean(t.Text))
	}
	return nil
}

func printSummary(w io.Writer, s *simulate.Summary, out string) {
	if s == nil {
		return
	}
	printUnplanned(w, s.Skipped)
	dest := out
	if out == "" || out == "-" {
		dest = "standard output"
	}
	fmt.Fprintf(w, "simulate: %d of %d episodes written to %s (%d turns) in %s", s.Done, s.Episodes, clean(dest), s.Turns, s.Elapsed.Round(time.Millisecond))
	if s.Resumed > 0 {
		fmt.Fprintf(w, "; %d kept from the earlier run", s.Resumed)
	}
	fmt.Fprintln(w)
	if n := len(s.Failed); n > 0 {
		fmt.Fprintf(w, "simulate: %d episode(s) failed; nothing of them was written (--resume reruns them):\n", n)
		for _, e := range s.Failed {
			fmt.Fprintf(w, "  %s\n", clean(e.Error()))
		}
	}
	if left := s.Episodes - s.Resumed - s.Done - len(s.Failed); left > 0 {
		fmt.Fprintf(w, "simulate: %d episode(s) not finished (--resume runs them)\n", left)
	}
}

// printUnplanned says which scenes a strategy could not run on, one line per reason.
func printUnplanned(w io.Writer, skipped []simulate.Skipped) {
	var order []string
	scenes := map[string][]string{}
	for _, sk := range skipped {
		key := string(sk.Strategy) + ": " + sk.Reason
		if scenes[key] == nil {
			order = append(order, key)
		}
		scenes[key] = append(scenes[key], clean(sk.Scene))
	}
	for _, key := range order {
		strategy, reason, _ := strings.Cut(key, ": ")
		fmt.Fprintf(w, "simulate: no %s episode for %s: %s\n", strategy, strings.Join(scenes[key], ", "), reason)
	}
}

// clean makes text from data or from the endpoint safe for the terminal, on one line.
func clean(s string) string { return textsafe.Line(s) }

func (o *simulateOptions) serveDemo(ctx context.Context, scenes []simulate.Scene, stdout io.Writer) error {
	srv, err := demovlm.New(scenes, os.ReadFile)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return fmt.Errorf("demo VLM: %w", err)
	}
	var h http.Handler = srv
	if o.latency > 0 {
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-time.After(o.latency):
			case <-r.Context().Done():
			}
			srv.ServeHTTP(w, r)
		})
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(stdout, "demo VLM for %d scenes at http://%s/v1 (personas by --model: faithful, gullible, confused, flaky, http500, malformed, empty, hang)\n",
		len(scenes), ln.Addr())
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		hs.Shutdown(sctx)
	}()
	if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return ctx.Err()
}
