package simulate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/pflag"

	"github.com/m3bench/m3eval/internal/cmdio"
	"github.com/m3bench/m3eval/internal/cmdutil"
	"github.com/m3bench/m3eval/internal/progress"
	"github.com/m3bench/m3eval/internal/textsafe"
	"github.com/m3bench/m3eval/internal/usage"
	"github.com/m3bench/m3eval/internal/vlm"
)

// DefaultTurnTimeout bounds a turn unless --turn-timeout says otherwise: the default
// attempts (5 × --timeout 2 min) could otherwise hold a turn for 10 minutes.
const DefaultTurnTimeout = 5 * time.Minute

// StrategyFlags are the values of m3eval simulate --strategy (declared with them).
var StrategyFlags = []string{"rules", "cross-image", "both"}

// Request is m3eval simulate's options: its flags as given, and the two things the command
// supplies (the progress callback and the demo VLM's server). The command parses its flags
// into a Request and calls Run; so do the tests (issue #42).
type Request struct {
	Scenes, Endpoint, Model, Strategy string
	// Images is the directory the scenes' image paths resolve in ("": the scenes file's).
	Images                         string
	Turns, Difficulty, Concurrency int
	Seed                           uint64
	Out                            string
	Resume, DryRun                 bool
	Timeout                        time.Duration
	Retries, MaxTokens             int
	// MaxRetryWait caps a Retry-After wait; TurnTimeout bounds a turn's every attempt and
	// wait together.
	MaxRetryWait, TurnTimeout time.Duration
	// System is --system: the system prompt, or @FILE to read it from a file.
	System string
	// Temperature and TopP are -1 when unset (the server's default); VLMSeed -1 sends none.
	Temperature, TopP          float64
	VLMSeed                    int64
	Rate                       float64
	APIKeyEnv, LogPath, Replay string
	// DemoVLM serves the scripted VLM on Listen (package demovlm) instead of simulating.
	DemoVLM bool
	Listen  string
	Latency time.Duration

	// Progress is told the turns answered of those planned (not a flag; nil: nothing).
	Progress progress.Func
	// ServeDemo serves the scripted VLM for --demo-vlm: demovlm.Serve, which the command
	// passes in because package demovlm imports this one (nil: --demo-vlm is refused).
	ServeDemo func(ctx context.Context, scenes []Scene, listen string, latency time.Duration, stdout io.Writer) error
}

// AddFlags defines the flags of m3eval simulate on fs.
func (o *Request) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Scenes, "scenes", "", "scenes file (JSON Lines; see docs/simulate.md)")
	fs.StringVar(&o.Images, "images", "", "directory the scenes' image paths resolve in; no image outside it is read (default: the scenes file's directory)")
	fs.StringVar(&o.Endpoint, "endpoint", "", "OpenAI-compatible API base, e.g. http://127.0.0.1:8000/v1")
	fs.StringVar(&o.Model, "model", "", "model name sent to the endpoint and written to each turn")
	cmdutil.EnumVar(fs, &o.Strategy, "strategy", "rules", StrategyFlags, "the episodes' strategy (both: the two)")
	fs.IntVar(&o.Turns, "turns", 10, "turns of a rule-strategy episode (3 or more)")
	fs.IntVar(&o.Difficulty, "difficulty", 2, "cross-image difficulty 1-4: filler turns (5, 8, 12, 15) and object types tested")
	fs.Uint64Var(&o.Seed, "seed", 42, "seed of the template and fact choices")
	fs.IntVar(&o.Concurrency, "concurrency", 4, "episodes run in parallel")
	fs.StringVarP(&o.Out, "out", "o", "turns.jsonl", "turns file (- for standard output, which cannot be resumed)")
	fs.BoolVar(&o.Resume, "resume", false, "continue the interrupted run in --out: keep finished episodes, rerun the others")
	fs.BoolVar(&o.DryRun, "dry-run", false, "print the user turns each episode would start with; send nothing")
	fs.DurationVar(&o.Timeout, "timeout", 2*time.Minute, "longest wait for one response")
	fs.IntVar(&o.Retries, "retries", 4, "retries of a request after 429, 5xx, a timeout or a connection error")
	fs.DurationVar(&o.MaxRetryWait, "max-retry-wait", vlm.DefaultMaxRetryWait, "longest wait honoured when the endpoint asks to retry later (Retry-After); a longer one is cut to it, and the run says so")
	fs.DurationVar(&o.TurnTimeout, "turn-timeout", DefaultTurnTimeout, "longest time one turn may take, every attempt and wait included")
	fs.Float64Var(&o.Rate, "rate", 0, "most requests per second across all episodes (0: no limit)")
	fs.StringVar(&o.APIKeyEnv, "api-key-env", "OPENAI_API_KEY", "environment variable holding the API key")
	fs.StringVar(&o.LogPath, "log", "", "request log (JSON Lines; default <out>.requests.jsonl, none for -o -)")
	fs.IntVar(&o.MaxTokens, "max-tokens", 0, "max_tokens of each request (0: the server's default)")
	fs.StringVar(&o.System, "system", "", "system prompt sent first in every conversation: TEXT, or @FILE to read it from a file")
	fs.Float64Var(&o.Temperature, "temperature", -1, "sampling temperature of each request, 0 to 2 (-1: the server's default)")
	fs.Float64Var(&o.TopP, "top-p", -1, "top_p of each request, above 0 and at most 1 (-1: the server's default)")
	fs.Int64Var(&o.VLMSeed, "vlm-seed", -1, "seed sent in each request, for servers that take one (vLLM, OpenAI; -1: none)")
	fs.BoolVar(&o.DemoVLM, "demo-vlm", false, "serve the scripted demo VLM for --scenes on --listen instead of simulating")
	fs.StringVar(&o.Listen, "listen", "127.0.0.1:8000", "address of --demo-vlm")
	fs.StringVar(&o.Replay, "replay", "", "answer from this request log instead of an endpoint (reproduces the logged run)")
	fs.DurationVar(&o.Latency, "demo-latency", 0, "delay each --demo-vlm answer (to watch the progress line)")
}

// Run is m3eval simulate once its flags are parsed: it checks them (usage errors), reads the
// scenes, and serves the demo VLM (--demo-vlm) or runs the simulation: a dry run, a replay
// of a request log, or a run against the endpoint. Turns go to --out (or e's standard
// output), the summary to e's standard error, under a progress bar of the turns answered;
// Progress, when set, is told too.
func (q *Request) Run(ctx context.Context, e *cmdio.IO) error {
	bar := e.NewBar("simulate", -1, progress.Unit{Name: "turns"})
	defer bar.Stop() // the run prints its own summary line: the bar leaves none
	r := *q
	r.Progress = progress.Tee(bar.Report, q.Progress)
	return r.run(ctx, bar.Above(e.Stdout()), bar.Above(e.Stderr()))
}

// run is Run on the given streams.
func (q *Request) run(ctx context.Context, stdout, stderr io.Writer) error {
	in, err := load(*q)
	if err != nil {
		return err
	}
	if q.DemoVLM {
		if q.ServeDemo == nil {
			return errors.New("--demo-vlm: no demo VLM server given to simulate.Request")
		}
		return q.ServeDemo(ctx, in.scenes, q.Listen, q.Latency, stdout)
	}
	return in.main(ctx, stdout, stderr)
}

// input is the checked request with the scenes it names.
type input struct {
	Request
	scenes     []Scene
	strategies []Strategy
	digest     string
	sampling   Sampling
}

// load checks the flags (usage errors) and reads the scenes, their images resolved.
func load(f Request) (*input, error) {
	if f.Scenes == "" {
		return nil, usage.Errorf("--scenes is required")
	}
	strategies, err := ParseStrategies(f.Strategy)
	if err != nil {
		return nil, usage.Wrap(err)
	}
	switch {
	case f.Turns < 3:
		return nil, usage.Errorf("--turns %d: an episode needs 3 turns or more", f.Turns)
	case f.Difficulty < 1 || f.Difficulty > 4:
		return nil, usage.Errorf("--difficulty %d: want 1 to 4", f.Difficulty)
	case f.Concurrency < 1:
		return nil, usage.Errorf("--concurrency %d: want 1 or more", f.Concurrency)
	case f.Retries < 0:
		return nil, usage.Errorf("--retries %d: want 0 or more", f.Retries)
	case f.MaxRetryWait <= 0:
		return nil, usage.Errorf("--max-retry-wait %s: want more than 0", f.MaxRetryWait)
	case f.TurnTimeout <= 0:
		return nil, usage.Errorf("--turn-timeout %s: want more than 0", f.TurnTimeout)
	case f.Temperature != -1 && (f.Temperature < 0 || f.Temperature > 2):
		return nil, usage.Errorf("--temperature %g: want 0 to 2 (or -1 for the server's default)", f.Temperature)
	case f.TopP != -1 && (f.TopP <= 0 || f.TopP > 1):
		return nil, usage.Errorf("--top-p %g: want above 0 and at most 1 (or -1 for the server's default)", f.TopP)
	case f.MaxTokens < 0:
		return nil, usage.Errorf("--max-tokens %d: want 0 (the server's default) or more", f.MaxTokens)
	case f.VLMSeed < -1:
		return nil, usage.Errorf("--vlm-seed %d: want 0 or more (or -1 for none)", f.VLMSeed)
	}
	sampling, err := f.sampling()
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(f.Scenes)
	if err != nil {
		return nil, fmt.Errorf("scenes: %w", err)
	}
	scenes, err := ReadScenes(f.Scenes, strings.NewReader(string(data)))
	if err != nil {
		return nil, err
	}
	root := f.Images
	if root == "" {
		root = filepath.Dir(f.Scenes)
	}
	if err := ResolveImages(scenes, f.Scenes, root); err != nil {
		return nil, err
	}
	return &input{Request: f, scenes: scenes, strategies: strategies, digest: Digest(data), sampling: sampling}, nil
}

// sampling reads --system (@FILE) and the sampling flags.
func (f *Request) sampling() (Sampling, error) {
	var s Sampling
	s.System = f.System
	if name, ok := strings.CutPrefix(f.System, "@"); ok {
		b, err := os.ReadFile(name)
		if err != nil {
			return s, fmt.Errorf("--system: %w", err)
		}
		if !utf8.Valid(b) {
			return s, fmt.Errorf("--system: %s is not UTF-8 text", name)
		}
		s.System = strings.TrimRight(string(b), "\n")
	}
	if f.Temperature != -1 {
		t := f.Temperature
		s.Temperature = &t
	}
	if f.TopP != -1 {
		p := f.TopP
		s.TopP = &p
	}
	if f.VLMSeed != -1 {
		v := f.VLMSeed
		s.Seed = &v
	}
	s.MaxTokens = f.MaxTokens
	return s, nil
}

// main is m3eval simulate but --demo-vlm: a dry run, a replay of a request log, or a run
// against the endpoint.
func (in *input) main(ctx context.Context, stdout, stderr io.Writer) error {
	opts := Options{
		Scenes: in.scenes, Progress: in.Progress, Strategies: in.strategies, Turns: in.Turns, Difficulty: in.Difficulty, Seed: in.Seed,
		Model: in.Model, Concurrency: in.Concurrency, Out: in.Out, Stdout: stdout, Resume: in.Resume,
		ScenesDigest: in.digest, Sampling: in.sampling,
	}
	if in.DryRun {
		return dryRun(opts, stdout, stderr)
	}
	// An existing --out is refused before anything is planned, logged or sent, so the
	// refusal is the only thing said.
	if _, err := outputExists(in.Out, in.Resume); err != nil {
		return err
	}
	if in.Replay != "" {
		if in.Model == "" {
			return usage.Errorf("--replay needs the logged run's --model")
		}
		f, err := os.Open(in.Replay)
		if err != nil {
			return fmt.Errorf("replay: %w", err)
		}
		rp, err := vlm.NewReplay(in.Replay, f)
		f.Close()
		if err != nil {
			return err
		}
		opts.Chat = rp
		return in.run(ctx, opts, stderr)
	}
	if in.Endpoint == "" || in.Model == "" {
		return usage.Errorf("--endpoint and --model are required (or --dry-run, or --replay)")
	}
	logPath := in.LogPath
	if logPath == "" && in.Out != "-" && in.Out != "" {
		logPath = in.Out + ".requests.jsonl"
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
		Endpoint: in.Endpoint, Model: in.Model, APIKey: os.Getenv(in.APIKeyEnv), Timeout: in.Timeout,
		MaxRetries: in.Retries, RatePerSecond: in.Rate, MaxTokens: in.MaxTokens, Log: logw,
		Temperature: in.sampling.Temperature, TopP: in.sampling.TopP, Seed: in.sampling.Seed,
		MaxRetryWait: in.MaxRetryWait, TurnTimeout: in.TurnTimeout,
		Notify: func(s string) { fmt.Fprintf(stderr, "simulate: %s\n", s) },
	})
	if err != nil {
		return usage.Wrap(err)
	}
	opts.Chat = client
	return in.run(ctx, opts, stderr)
}

// run runs the episodes and writes the summary, also when the run failed.
func (in *input) run(ctx context.Context, opts Options, stderr io.Writer) error {
	sum, err := Run(ctx, opts)
	WriteSummary(stderr, sum, in.Out)
	return err
}

func dryRun(opts Options, stdout, stderr io.Writer) error {
	turns, skipped, err := DryRun(opts)
	writeUnplanned(stderr, skipped)
	if err != nil {
		return err
	}
	for _, t := range turns {
		fmt.Fprintf(stdout, "%s\t%d\t%s\t%s\t%s\n", textsafe.Line(t.Episode), t.Turn, t.Action, t.Phase, textsafe.Line(t.Text))
	}
	return nil
}

// WriteSummary says what a run did: episodes written, kept, failed and left.
func WriteSummary(w io.Writer, s *Summary, out string) {
	if s == nil {
		return
	}
	writeUnplanned(w, s.Skipped)
	dest := out
	if out == "" || out == "-" {
		dest = "standard output"
	}
	// One write for the line: a writer above a progress bar clears the bar's line per write.
	line := fmt.Sprintf("simulate: %d of %d episodes written to %s (%d turns) in %s", s.Done, s.Episodes, textsafe.Line(dest), s.Turns, s.Elapsed.Round(time.Millisecond))
	if s.Resumed > 0 {
		line += fmt.Sprintf("; %d kept from the earlier run", s.Resumed)
	}
	fmt.Fprintln(w, line)
	if n := len(s.Failed); n > 0 {
		fmt.Fprintf(w, "simulate: %d episode(s) failed; nothing of them was written (--resume reruns them):\n", n)
		for _, e := range s.Failed {
			fmt.Fprintf(w, "  %s\n", textsafe.Line(e.Error()))
		}
	}
	if s.Truncated > 0 {
		fmt.Fprintf(w, "simulate: %d turn(s) written were cut at the token limit (finish_reason \"length\"); each is marked meta.truncated: true: raise --max-tokens\n", s.Truncated)
	}
	if left := s.Episodes - s.Resumed - s.Done - len(s.Failed); left > 0 {
		fmt.Fprintf(w, "simulate: %d episode(s) not finished (--resume runs them)\n", left)
	}
}

// writeUnplanned says which scenes a strategy could not run on, one line per reason.
func writeUnplanned(w io.Writer, skipped []Skipped) {
	var order []string
	scenes := map[string][]string{}
	for _, sk := range skipped {
		key := string(sk.Strategy) + ": " + sk.Reason
		if scenes[key] == nil {
			order = append(order, key)
		}
		scenes[key] = append(scenes[key], textsafe.Line(sk.Scene))
	}
	for _, key := range order {
		strategy, reason, _ := strings.Cut(key, ": ")
		fmt.Fprintf(w, "simulate: no %s episode for %s: %s\n", strategy, strings.Join(scenes[key], ", "), reason)
	}
}
