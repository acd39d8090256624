package judgerun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/m3bench/m3eval/annotations"
	"github.com/m3bench/m3eval/internal/cmdio"
	"github.com/m3bench/m3eval/internal/cmdstore"
	"github.com/m3bench/m3eval/internal/cmdutil"
	"github.com/m3bench/m3eval/internal/judge"
	"github.com/m3bench/m3eval/internal/modeljudge"
	"github.com/m3bench/m3eval/internal/progress"
	"github.com/m3bench/m3eval/internal/render"
	"github.com/m3bench/m3eval/internal/rubric"
	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/usage"
	"github.com/m3bench/m3eval/internal/vlm"
)

// DefaultTurnTimeout bounds a model judge turn unless --turn-timeout says otherwise: the
// default attempts (5 × --timeout 2 min) could otherwise hold a turn for 10 minutes.
const DefaultTurnTimeout = 5 * time.Minute

// checkExplain refuses an --explain value that is a flag: "judge --explain --name vlm" took
// "--name" as the sample id and left "vlm" over. A sample id never starts with "-". It runs
// when the flag is parsed, before the argument count: the flag's value is what went wrong.
func (q *Request) checkExplain() error {
	if strings.HasPrefix(q.Explain, "-") {
		return usage.Errorf("--explain %s: want a sample id, not a flag (usage: m3eval judge --explain SAMPLE_ID [--name NAME] [--format table|json])", q.Explain)
	}
	return nil
}

// ExplainFormats are the values of m3eval judge's --format (declared with them).
var ExplainFormats = []render.Format{render.Table, render.JSON}

// Request is what m3eval judge is asked for: its flags.
type Request struct {
	Name    string   // the judge's name in the database
	Filters []string // KEY=VALUE filters of the turns
	Replace bool
	Rules   string        // rule file ("": the built-in rules)
	Explain string        // the sample to explain instead of judging
	Format  render.Format // --explain output, one of ExplainFormats
	// PrintRules asks for the built-in rule file instead (the caller prints it).
	PrintRules bool
	Model      ModelFlags // --endpoint: the model judge
	// Notices hears the client's notes (a capped Retry-After wait); nil: none. Not a flag.
	Notices io.Writer
}

// ModelFlags are the flags of the model judge (m3eval judge --endpoint).
type ModelFlags struct {
	Endpoint, Model, APIKeyEnv string
	Concurrency                int
	Rate                       float64
	Prompt                     string // template file ("": the built-in prompt)
	PrintPrompt                bool
	Temperature                optFloat
	MaxTokens, Retries         int
	Timeout                    time.Duration
	// MaxRetryWait caps a Retry-After wait; TurnTimeout bounds a turn's every attempt and
	// wait together.
	MaxRetryWait, TurnTimeout time.Duration
}

// optFloat is a float flag that may be left unset (then nothing is sent).
type optFloat struct{ v *float64 }

func (f *optFloat) String() string {
	if f.v == nil {
		return ""
	}
	return strconv.FormatFloat(*f.v, 'g', -1, 64)
}

func (f *optFloat) Set(s string) error {
	x, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return fmt.Errorf("%q is not a number", s)
	}
	f.v = &x
	return nil
}

func (f *optFloat) Type() string { return "float" }

// AddFlags defines the flags of m3eval judge on fs.
func (q *Request) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&q.Name, "name", "rules", "the judge's name in the database")
	fs.StringArrayVar(&q.Filters, "filter", nil, "judge only turns with KEY=VALUE (repeatable; keys: action_type, task_type, model, episode, sample_id)")
	cmdutil.Keys(fs, "filter", store.TurnFilterKeys()...)
	fs.BoolVar(&q.Replace, "replace", false, "re-score scores made with other rules, or changed")
	fs.StringVar(&q.Rules, "rules", "", "rule file (JSON) to use instead of the built-in rules (see --print-rules)")
	fs.StringVar(&q.Explain, "explain", "", "print the verdict of one sample: value, rule and evidence per field")
	cmdutil.Check(fs, "explain", q.checkExplain)
	cmdutil.EnumVar(fs, &q.Format, "format", render.Table, ExplainFormats, "--explain output")
	fs.BoolVar(&q.PrintRules, "print-rules", false, "print the built-in rule file and exit")
	m := &q.Model
	fs.StringVar(&m.Endpoint, "endpoint", "", "judge with a model: OpenAI-compatible API base, e.g. http://127.0.0.1:8000/v1 (see docs/judge.md)")
	fs.StringVar(&m.Model, "model", "", "the model judge's model name, sent to --endpoint")
	fs.StringVar(&m.APIKeyEnv, "api-key-env", "OPENAI_API_KEY", "environment variable holding the --endpoint's API key")
	fs.IntVar(&m.Concurrency, "concurrency", 4, "turns the model judge scores in parallel")
	fs.Float64Var(&m.Rate, "rate", 0, "most requests per second to --endpoint (0: no limit)")
	fs.StringVar(&m.Prompt, "prompt", "", "the model judge's prompt template instead of the built-in one (see --print-prompt)")
	fs.BoolVar(&m.PrintPrompt, "print-prompt", false, "print the model judge's built-in prompt template and exit; with --endpoint and --model, print the request body of each chosen turn exactly as it would be sent (JSON Lines) and send nothing")
	fs.Var(&m.Temperature, "temperature", "the model judge's sampling temperature (unset: the server's default)")
	fs.IntVar(&m.MaxTokens, "max-tokens", 0, "max_tokens of each model judge request (0: the server's default)")
	fs.IntVar(&m.Retries, "retries", 4, "retries of a model judge request after 429, 5xx, a timeout or a connection error")
	fs.DurationVar(&m.Timeout, "timeout", 2*time.Minute, "longest wait for one model judge response")
	fs.DurationVar(&m.MaxRetryWait, "max-retry-wait", vlm.DefaultMaxRetryWait, "longest wait honoured when the endpoint asks to retry later (Retry-After); a longer one is cut to it, and the run says so")
	fs.DurationVar(&m.TurnTimeout, "turn-timeout", DefaultTurnTimeout, "longest time one turn may take, every attempt and wait included")
}

// Check parses --filter and checks how the flags combine (--format and --explain were checked
// when parsed); its errors are marked usage.Err.
func (q *Request) Check() (store.TurnFilter, error) {
	filter, err := ParseFilter(q.Filters)
	if err != nil {
		return nil, usage.Wrap(err)
	}
	if q.Explain == "" && q.Format != render.Table {
		// Judging writes counts, not a verdict: the format would be ignored.
		return nil, usage.Errorf("--format %s is the output of --explain: give --explain SAMPLE_ID, or drop --format", q.Format)
	}
	if q.Explain != "" && (len(q.Filters) > 0 || q.Replace) {
		return nil, usage.Errorf("--explain shows one sample and stores nothing: drop --filter and --replace")
	}
	m := &q.Model
	switch {
	case m.Endpoint == "" && (m.Model != "" || m.Prompt != ""):
		return nil, usage.Errorf("--model and --prompt are the model judge's: give --endpoint too")
	case m.Endpoint != "" && q.Explain != "":
		return nil, usage.Errorf("--explain shows what is stored and sends nothing: drop --endpoint")
	case m.Endpoint != "" && m.Model == "":
		return nil, usage.Errorf("--endpoint needs --model (the model name the endpoint serves)")
	case m.Endpoint != "" && q.Name == "rules":
		return nil, usage.Errorf("give the model judge a --name of its own (\"rules\" is the rule judge's)")
	case m.Endpoint != "" && q.Rules != "":
		return nil, usage.Errorf("--rules is the rule judge's: drop it with --endpoint")
	case m.Endpoint != "" && m.Concurrency < 1:
		return nil, usage.Errorf("--concurrency %d: want 1 or more", m.Concurrency)
	case m.Endpoint != "" && m.Retries < 0:
		return nil, usage.Errorf("--retries %d: want 0 or more", m.Retries)
	case m.Endpoint != "" && m.Rate < 0:
		return nil, usage.Errorf("--rate %g: want 0 (no limit) or more", m.Rate)
	case m.Endpoint != "" && m.MaxTokens < 0:
		return nil, usage.Errorf("--max-tokens %d: want 0 (the server's default) or more", m.MaxTokens)
	case m.Endpoint != "" && m.MaxRetryWait <= 0:
		return nil, usage.Errorf("--max-retry-wait %s: want more than 0", m.MaxRetryWait)
	case m.Endpoint != "" && m.TurnTimeout <= 0:
		return nil, usage.Errorf("--turn-timeout %s: want more than 0", m.TurnTimeout)
	}
	return filter, nil
}

// NewJudge builds the judge of the rubric from the rule file at path, or from the built-in
// rules when path is "".
func NewJudge(rb *rubric.Rubric, path string) (*judge.Judge, error) {
	rules := judge.DefaultRules()
	if path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("read rules: %w", err)
		}
		if rules, err = judge.ParseRules(data); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	j, err := judge.New(rb, rules)
	if err != nil && path == "" && errors.Is(err, judge.ErrRules) {
		// A rubric of the lab's own: say what to do, not only what is missing (#39).
		return nil, fmt.Errorf("%w; the rule judge fills the M3Bench rubric's fields: with rubric %s, bring a judge's scores with m3eval import-scores (or give --rules naming its fields)", err, rb.Name)
	}
	return j, err
}

// Run is m3eval judge once its flags are parsed (docs/architecture.md, "How a command is
// wired"): the built-in rules or prompt printed, or the rule judge run over the chosen turns
// (the counts on e's output), or one sample's verdict (--explain: the rules', or a stored
// judge's with --name), or with --endpoint the model judge. A bad rule file or prompt is
// found before the store opens, so that it changes nothing. Errors of the command line are
// marked usage.Err; a --name the database does not hold with --explain is ErrUnknownJudge.
func (q *Request) Run(ctx context.Context, e *cmdio.IO) error {
	if q.PrintRules {
		_, err := e.Stdout().Write(judge.DefaultRulesJSON())
		return err
	}
	if q.Model.PrintPrompt && q.Model.Endpoint == "" {
		_, err := e.Stdout().Write(modeljudge.DefaultPrompt)
		return err
	}
	filter, err := q.Check()
	if err != nil {
		return err
	}
	if err := cmdstore.MustExist(e); err != nil {
		return err
	}
	rb, err := e.LoadRubric()
	if err != nil {
		return err
	}
	if q.Model.Endpoint != "" {
		return q.runModel(ctx, e, rb, filter)
	}
	j, err := NewJudge(rb, q.Rules)
	if err != nil {
		return err
	}
	s, err := cmdstore.OpenStore(ctx, e, rb, store.Options{ReadOnly: q.Explain != ""})
	if err != nil {
		return err
	}
	defer s.Close()
	rules := func(w io.Writer) error { return q.runRules(ctx, s, rb, j, filter, w) }
	if q.Explain != "" && q.Name != "rules" {
		if rules, err = q.ExplainStored(ctx, s, rb, store.DisplayName(e.DB), rules); err != nil {
			return err
		}
	}
	return e.Write("", string(q.Format), func(w io.Writer, _ bool) error { return rules(w) })
}

// runModel is m3eval judge --endpoint: the model judge, with a progress bar on a terminal
// and its summary on e's output; with --print-prompt, the requests it would send.
func (q *Request) runModel(ctx context.Context, e *cmdio.IO, rb *rubric.Rubric, filter store.TurnFilter) error {
	actions, err := rubric.ParseActions(annotations.Actions)
	if err != nil {
		return err
	}
	q.Notices = e.Stderr()
	pm, err := q.prepareModel(rb, actions) // before the store opens: a bad prompt changes nothing
	if err != nil {
		return err
	}
	s, err := cmdstore.OpenStore(ctx, e, rb, store.Options{ReadOnly: q.Model.PrintPrompt})
	if err != nil {
		return err
	}
	defer s.Close()
	if q.Model.PrintPrompt {
		// What would be sent, byte for byte, and nothing sent.
		return printRequests(ctx, s, pm, filter, e.Stdout())
	}
	return e.WithBar("judge "+q.Name, progress.Unit{Name: "turns"}, func(report progress.Func, out, _ io.Writer) error {
		sum, err := JudgeModel(ctx, s, ModelOptions{Name: q.Name, Judge: pm.Judge, Client: pm.Client, Version: pm.Version, Endpoint: pm.Client.URL(),
			Filter: filter, Replace: q.Replace, Concurrency: q.Model.Concurrency, Progress: report})
		if sum.Chosen > 0 { // the summary, failures first
			fmt.Fprintf(out, "judge %s: %s", q.Name, sum)
		}
		return err
	})
}

// runRules judges the chosen turns and writes the counts to w, or with Explain writes the
// verdict of that one sample (and stores nothing).
func (q *Request) runRules(ctx context.Context, s *store.Store, rb *rubric.Rubric, j *judge.Judge, filter store.TurnFilter, w io.Writer) error {
	if q.Explain != "" {
		v, err := Explain(ctx, s, j, q.Explain)
		if err != nil {
			return err
		}
		return WriteExplain(w, v, rb, j.Rules, q.Format)
	}
	defer TuneGC()()
	c, err := Judge(ctx, s, rb, j, Options{Name: q.Name, Filter: filter, Replace: q.Replace})
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "judge %s: %s\n", q.Name, c)
	return err
}

// RubricMetrics is m3eval score --metrics: the action-space metrics of the built-in rules'
// verdicts over every turn of the store.
func RubricMetrics(ctx context.Context, s *store.Store, rb *rubric.Rubric, bootstrap int, seed uint64) (judge.MetricsReport, error) {
	j, err := NewJudge(rb, "")
	if err != nil {
		return judge.MetricsReport{}, err
	}
	return Metrics(ctx, s, j, nil, bootstrap, seed)
}

// TuneGC applies GCPercent for a run and returns the function that restores the previous
// setting: defer judgerun.TuneGC()().
func TuneGC() (restore func()) {
	gc := debug.SetGCPercent(GCPercent)
	return func() { debug.SetGCPercent(gc) }
}
