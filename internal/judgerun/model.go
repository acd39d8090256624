package judgerun

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/m3bench/m3eval/internal/plural"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/m3bench/m3eval/annotations"
	"github.com/m3bench/m3eval/internal/dataset"
	"github.com/m3bench/m3eval/internal/judge"
	"github.com/m3bench/m3eval/internal/modeljudge"
	"github.com/m3bench/m3eval/internal/render"
	"github.com/m3bench/m3eval/internal/rubric"
	"github.com/m3bench/m3eval/internal/store"
	"github.com/m3bench/m3eval/internal/textsafe"
	"github.com/m3bench/m3eval/internal/usage"
	"github.com/m3bench/m3eval/internal/vlm"
)

// Completer sends one chat request; *vlm.Client is one.
type Completer interface {
	Complete(ctx context.Context, tag vlm.Tag, msgs []vlm.Message, format json.RawMessage) (vlm.Reply, error)
}

var _ Completer = (*vlm.Client)(nil)

// ModelOptions of a model judge run.
type ModelOptions struct {
	Name        string
	Judge       *modeljudge.Judge
	Client      Completer
	Version     store.ModelJudgeVersion
	Filter      store.TurnFilter
	Replace     bool
	Concurrency int
	// Progress hears turns done (scored or failed) of the total to send.
	Progress func(done, total int64)
	// Images reads a local image (nil: the file system, with the demo's embedded images).
	Images func(name string) ([]byte, error)
	// Endpoint names the endpoint in the error that stops a run it cannot reach; it must
	// carry no secret (vlm.Client.URL is redacted).
	Endpoint string
}

// unreachableStop is how many turns in a row may fail because the endpoint cannot be reached
// for the same reason (connection refused, host not found, TLS) before the run stops: such an
// endpoint is down or wrong, and every further turn would fail the same way after its retries.
const unreachableStop = 3

// ErrUnreachable stops a model judge run whose endpoint cannot be reached.
var ErrUnreachable = errors.New("endpoint unreachable")

// Failure is a turn the judge could not score, with why.
type Failure struct {
	SampleID string
	Reason   string
	// unreachable is vlm.Unreachable of the failure: why the endpoint could not be reached.
	unreachable string
}

// ModelSummary is what a model judge run did and cost.
type ModelSummary struct {
	Version             string
	Chosen              int // turns the filter chose
	Skipped             int // already scored with this version
	Scored              int
	Failures            []Failure
	TokensIn, TokensOut int
	Requests, Retries   int
	Reasked             int // turns asked a second time after an unusable answer
	// Truncated counts the turns whose answer was cut at the token limit: failed, never
	// stored (each listed with --max-tokens named).
	Truncated   int
	Wall        time.Duration
	Interrupted bool
	// Unreachable is why the run stopped early: the endpoint could not be reached.
	Unreachable string
}

// String is the summary m3eval judge prints after a model judge run.
func (s ModelSummary) String() string {
	var b strings.Builder
	for _, f := range s.Failures {
		if s.Unreachable != "" && f.unreachable == s.Unreachable {
			continue // the error that stopped the run says it once for all of them
		}
		fmt.Fprintf(&b, "failed %s: %s\n", textsafe.Line(f.SampleID), textsafe.Line(f.Reason))
	}
	cut := ""
	if s.Truncated > 0 {
		cut = fmt.Sprintf(" (%d of them cut at the token limit: raise --max-tokens)", s.Truncated)
	}
	fmt.Fprintf(&b, "%d turns scored with %s, %d failed%s, %d already scored; tokens in %d, out %d; %s, %d retries, %d re-asked; %s\n",
		s.Scored, s.Version, len(s.Failures), cut, s.Skipped, s.TokensIn, s.TokensOut, plural.N(s.Requests, "request"), s.Retries, s.Reasked, s.Wall.Round(time.Millisecond))
	return b.String()
}

// ErrTurnsFailed says some turns are not scored (listed in the summary); a rerun tries them
// again.
var ErrTurnsFailed = errors.New("turns failed")

// modelJob is one turn to judge, with its episode.
type modelJob struct {
	turns []dataset.Turn
	i     int
	id    int64
}

// modelResult is a judged turn or a failure.
type modelResult struct {
	job                 *modelJob
	answer              modeljudge.Answer
	err                 error
	tokensIn, tokensOut int
	requests, retries   int
	reasked             bool
}

// flushEvery bounds how many judged turns wait for one write transaction; a killed run loses
// at most the turns not yet written.
const flushEvery = 64

// JudgeModel scores the chosen turns not yet scored with this version through the model
// judge, Concurrency turns at a time, storing each few finished turns in a short transaction
// of their own. A turn whose answer stays unusable after one re-ask, or whose request fails
// after the client's retries, is listed in Failures and stores nothing.
func JudgeModel(ctx context.Context, s *store.Store, o ModelOptions) (ModelSummary, error) {
	start := time.Now()
	sum := ModelSummary{Version: o.Version.Version}
	done, err := s.StartModelJudge(ctx, o.Name, o.Version, o.Replace)
	if err != nil {
		return sum, err
	}
	var jobs []*modelJob
	err = s.StreamJudgeTurns(ctx, o.Filter, func(turns []dataset.Turn, ids []int64, chosen []bool) error {
		var ep []dataset.Turn
		for i := range turns {
			if !chosen[i] {
				continue
			}
			sum.Chosen++
			if done[ids[i]] {
				sum.Skipped++
				continue
			}
			if ep == nil {
				ep = slices.Clone(turns)
			}
			jobs = append(jobs, &modelJob{turns: ep, i: i, id: ids[i]})
		}
		return nil
	})
	if err != nil {
		return sum, err
	}
	if sum.Chosen == 0 {
		return sum, ErrNoTurns
	}
	total := int64(len(jobs))
	if o.Progress != nil {
		o.Progress(0, total)
	}
	images := newImageCache(o.Images)
	// stop ends the run early when the endpoint is unreachable; ctx stays the caller's, so
	// an interrupt is still told apart from the stop.
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	// downReason is why the last downRun turns in a row failed to reach the endpoint; down
	// is set to it when they are unreachableStop.
	var down, downReason string
	var downRun int
	work := make(chan *modelJob)
	// Unbuffered: a worker hands over a turn's result before it takes the next, so when the
	// endpoint is down the run stops at most one request per worker after the turn that
	// decides it, however far behind this loop runs on a busy machine.
	results := make(chan modelResult)
	var wg sync.WaitGroup
	for range max(1, o.Concurrency) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for job := range work {
				results <- judgeOne(runCtx, o, images, job)
			}
		}()
	}
	go func() {
		defer close(work)
		for _, job := range jobs {
			select {
			case work <- job:
			case <-runCtx.Done():
				return
			}
		}
	}()
	go func() { wg.Wait(); close(results) }()

	var batch []store.ModelJudgeTurn
	var werr error
	flush := func() {
		if len(batch) == 0 || werr != nil {
			return
		}
		// The batch is stored even when the run is being interrupted: those turns are judged
		// and paid for.
		if werr = s.PutModelJudgeTurns(context.WithoutCancel(ctx), o.Name, o.Version.Version, batch); werr == nil {
			sum.Scored += len(batch)
		}
		batch = batch[:0]
	}
	var n int64
	for {
		var r modelResult
		var ok bool
		select {
		case r, ok = <-results:
		default:
			// No result is ready: store what is judged while the workers wait on the endpoint.
			flush()
			r, ok = <-results
		}
		if !ok {
			break
		}
		n++
		sum.TokensIn += r.tokensIn
		sum.TokensOut += r.tokensOut
		sum.Requests += r.requests
		sum.Retries += r.retries
		if r.reasked {
			sum.Reasked++
		}
		switch {
		case r.err != nil && runCtx.Err() != nil:
			// interrupted or stopped: the turn is neither scored nor failed
		case r.err != nil:
			if vlm.IsTruncated(r.err) {
				sum.Truncated++
			}
			why := vlm.Unreachable(r.err)
			sum.Failures = append(sum.Failures, Failure{SampleID: r.job.turns[r.job.i].SampleID, Reason: r.err.Error(), unreachable: why})
			if why == "" || why != downReason {
				downReason, downRun = why, 1
			} else {
				downRun++
			}
			if downReason != "" && downRun >= unreachableStop && down == "" {
				down = downReason
				stop()
			}
		default:
			downReason, downRun = "", 0
			batch = append(batch, store.ModelJudgeTurn{TurnID: r.job.id, Fields: r.answer.Fields, Values: r.answer.Values,
				Rationale: r.answer.Rationale, TokensIn: r.tokensIn, TokensOut: r.tokensOut, Requests: r.requests})
		}
		if len(batch) >= flushEvery {
			flush()
		}
		if o.Progress != nil {
			o.Progress(n, total)
		}
	}
	flush()
	sum.Wall = time.Since(start)
	slices.SortFunc(sum.Failures, func(a, b Failure) int { return strings.Compare(a.SampleID, b.SampleID) })
	if werr != nil {
		return sum, werr
	}
	if err := ctx.Err(); err != nil {
		sum.Interrupted = true
		return sum, err
	}
	if down != "" {
		sum.Unreachable = down
		endpoint := o.Endpoint
		if endpoint == "" {
			endpoint = "the endpoint"
		}
		return sum, fmt.Errorf("%w: %s: %s, %d turns in a row; stopped, the turns judged are stored; check --endpoint and run again",
			ErrUnreachable, endpoint, down, unreachableStop)
	}
	if len(sum.Failures) > 0 {
		return sum, fmt.Errorf("%w: %d of %d turns are not scored (listed above); run again to retry them", ErrTurnsFailed, len(sum.Failures), len(jobs))
	}
	return sum, nil
}

// buildRequest is the request that judges turns[i]: its images read into data URLs (their
// file names are not sent) and the prompt rendered. judgeOne sends it; --print-prompt
// prints it.
func buildRequest(ctx context.Context, j *modeljudge.Judge, images *imageCache, turns []dataset.Turn, i int) (modeljudge.Request, error) {
	refs := modeljudge.Images(turns, i)
	urls := make([]string, len(refs))
	for k, ref := range refs {
		u, err := images.url(ctx, ref)
		if err != nil {
			return modeljudge.Request{}, err
		}
		urls[k] = u
	}
	return j.Build(turns, i, urls)
}

// judgeOne asks for one turn's scores, and once more with the problem when the answer is
// unusable.
func judgeOne(ctx context.Context, o ModelOptions, images *imageCache, job *modelJob) (r modelResult) {
	r.job = job
	t := &job.turns[job.i]
	req, err := buildRequest(ctx, o.Judge, images, job.turns, job.i)
	if err != nil {
		r.err = err
		return r
	}
	// The tag names the turn in the client's own log and errors only; it is never sent.
	tag := vlm.Tag{Episode: t.EpisodeID, Turn: t.Turn}
	msgs := req.Messages
	for ask := 1; ; ask++ {
		reply, err := o.Client.Complete(ctx, tag, msgs, req.Format)
		r.tokensIn += reply.PromptTokens
		r.tokensOut += reply.CompletionTokens
		r.requests += reply.Attempts
		r.retries += max(0, reply.Attempts-1)
		if err != nil {
			r.err = fmt.Errorf("request: %w", err)
			return r
		}
		a, err := o.Judge.Parse(t, reply.Text)
		if err == nil {
			r.answer, r.err = a, nil
			return r
		}
		if ask == 2 {
			r.err = fmt.Errorf("unusable answer, asked twice: %w", err)
			return r
		}
		r.reasked = true
		msgs = append(slices.Clone(msgs),
			vlm.Message{Role: vlm.RoleAssistant, Text: reply.Text},
			vlm.Message{Role: vlm.RoleUser, Text: modeljudge.Reask(req.Language, err)})
	}
}

// imageCache turns image references into what is sent: data URLs as they are, local files
// and http(s) URLs read into data URLs, once per run. Nothing of a reference is sent but
// the image: a path or URL often holds the answering model's name
// (outputs/Qwen2-VL-7B-Instruct/…), and the judge must not see it.
type imageCache struct {
	read func(string) ([]byte, error)
	mu   sync.Mutex
	urls map[string]string
}

func newImageCache(read func(string) ([]byte, error)) *imageCache {
	if read == nil {
		read = readImage
	}
	return &imageCache{read: read, urls: map[string]string{}}
}

// maxImage bounds an image fetched from a URL (the hosted APIs take up to 20 MB).
const maxImage = 20 << 20

// imageClient fetches http(s) images. A redirect of a GET for an image is followed as any
// browser would; it carries nothing of the prompt.
var imageClient = &http.Client{Timeout: time.Minute}

func (c *imageCache) url(ctx context.Context, ref string) (string, error) {
	if strings.HasPrefix(ref, "data:") {
		return ref, nil
	}
	c.mu.Lock()
	u, ok := c.urls[ref]
	c.mu.Unlock()
	if ok {
		return u, nil
	}
	var b []byte
	var mt string
	var err error
	if strings.HasPrefix(ref, "http://") || strings.HasPrefix(ref, "https://") {
		b, mt, err = fetchImage(ctx, ref)
	} else {
		b, err = c.read(ref)
		mt = mime.TypeByExtension(strings.ToLower(filepath.Ext(ref)))
	}
	if err != nil {
		return "", fmt.Errorf("image %s: %w", ref, err)
	}
	if mt == "" || !strings.HasPrefix(mt, "image/") {
		mt = http.DetectContentType(b)
	}
	u = "data:" + mt + ";base64," + base64.StdEncoding.EncodeToString(b)
	c.mu.Lock()
	c.urls[ref] = u
	c.mu.Unlock()
	return u, nil
}

// fetchImage reads an http(s) image, at most maxImage bytes, and its media type.
func fetchImage(ctx context.Context, ref string) ([]byte, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, ref, nil)
	if err != nil {
		return nil, "", err
	}
	r, err := imageClient.Do(req)
	if err != nil {
		return nil, "", err
	}
	defer r.Body.Close()
	if r.StatusCode != http.StatusOK {
		return nil, "", fmt.Errorf("HTTP %d %s", r.StatusCode, http.StatusText(r.StatusCode))
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, maxImage+1))
	if err != nil {
		return nil, "", err
	}
	if len(b) > maxImage {
		return nil, "", fmt.Errorf("larger than %d MiB", maxImage>>20)
	}
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return b, mt, nil
}

// readImage reads a local image; the demo's paths (annotations/demo/...), which exist only
// inside the repository, fall back to the images embedded in the binary, as the annotator's do.
func readImage(name string) ([]byte, error) {
	b, err := os.ReadFile(name)
	if err != nil && errors.Is(err, fs.ErrNotExist) {
		if rest, ok := strings.CutPrefix(path.Clean(filepath.ToSlash(name)), "annotations/"); ok && strings.HasPrefix(rest, "demo/") {
			if eb, eerr := fs.ReadFile(annotations.Demo, rest); eerr == nil {
				return eb, nil
			}
		}
	}
	return b, err
}

// WriteModelNote prints what a model judge said about a sample (judge --explain --name): the
// values under the rubric's labels in the rubric's order, as the rules' explanation shows
// them (in Chinese when the model's rationale is), then the rationale and the cost.
func WriteModelNote(w io.Writer, n *store.ModelJudgeNote, rb *rubric.Rubric, format render.Format) error {
	lang := judge.DetectLanguage(n.Rationale)
	type row struct{ field, label, value string }
	var rows []row
	stored := map[string]string{}
	for i, f := range n.Fields {
		stored[f] = n.Values[i]
	}
	for i := range rb.Fields {
		f := &rb.Fields[i]
		if v, ok := stored[f.Name]; ok {
			rows = append(rows, row{f.Name, label(f, lang), v})
			delete(stored, f.Name)
		}
	}
	for _, f := range n.Fields { // fields the rubric no longer has, in the stored order
		if v, ok := stored[f]; ok {
			rows = append(rows, row{f, f, v})
		}
	}
	if format == render.JSON {
		values := map[string]string{}
		type fieldJSON struct {
			Field string `json:"field"`
			Label string `json:"label"`
			Value string `json:"value"`
		}
		fields := []fieldJSON{}
		for _, r := range rows {
			values[r.field] = r.value
			fields = append(fields, fieldJSON{r.field, r.label, r.value})
		}
		return render.WriteJSON(w, map[string]any{"sample_id": n.SampleID, "version": n.Version.Version, "model": n.Version.Model,
			"prompt_sha256": n.Version.PromptHash, "params": n.Version.Params, "values": values, "fields": fields, "rationale": n.Rationale,
			"tokens_in": n.TokensIn, "tokens_out": n.TokensOut, "requests": n.Requests})
	}
	fmt.Fprintf(w, "%s  (model %s, version %s, prompt %s, %s)\n", textsafe.Line(n.SampleID), textsafe.Line(n.Version.Model),
		textsafe.Line(n.Version.Version), n.Version.PromptHash[:12], textsafe.Line(string(n.Version.Params)))
	head := []string{"field", "value"}
	if lang == "zh" {
		head = []string{"字段", "分值"}
	}
	cells := make([][]string, len(rows))
	for i, r := range rows {
		v := r.value
		if v == "" {
			v = "—"
		}
		cells[i] = []string{r.label, v}
	}
	render.Columns(w, head, cells)
	fmt.Fprintf(w, "rationale (the model's own words, one for all fields):\n  %s\n", textsafe.Line(n.Rationale))
	fmt.Fprintf(w, "cost: %d tokens in, %d out, %s\n", n.TokensIn, n.TokensOut, plural.N(n.Requests, "request"))
	return nil
}

// preparedModel is a model judge ready to run: the judge, its version and the client.
type preparedModel struct {
	Judge   *modeljudge.Judge
	Version store.ModelJudgeVersion
	Client  *vlm.Client
}

// prepareModel reads the prompt, builds the judge and the client of the --endpoint flags;
// nothing is sent yet. Bad flags are usage errors.
func (q *Request) prepareModel(rb *rubric.Rubric, actions rubric.Actions) (*preparedModel, error) {
	m := &q.Model
	text, name := modeljudge.DefaultPrompt, "(built-in)"
	if m.Prompt != "" {
		b, err := os.ReadFile(m.Prompt)
		if err != nil {
			return nil, fmt.Errorf("read prompt: %w", err)
		}
		text, name = b, m.Prompt
	}
	p, err := modeljudge.ParsePrompt(name, text)
	if err != nil {
		return nil, err
	}
	j, err := modeljudge.New(rb, actions, p)
	if err != nil {
		return nil, err
	}
	params := modeljudge.Params{Temperature: m.Temperature.v, MaxTokens: m.MaxTokens, Rubric: rb.Version}
	version, paramsJSON := modeljudge.Version(m.Model, p, params)
	var notify func(string)
	if w := q.Notices; w != nil {
		notify = func(s string) { fmt.Fprintf(w, "judge %s: %s\n", q.Name, s) }
	}
	c, err := vlm.New(vlm.Options{Endpoint: m.Endpoint, Model: m.Model, APIKey: os.Getenv(m.APIKeyEnv), Timeout: m.Timeout,
		MaxRetries: m.Retries, RatePerSecond: m.Rate, MaxTokens: m.MaxTokens, Temperature: m.Temperature.v,
		MaxRetryWait: m.MaxRetryWait, TurnTimeout: m.TurnTimeout, Notify: notify})
	if err != nil {
		return nil, usage.Wrap(fmt.Errorf("--endpoint: %w", err))
	}
	return &preparedModel{Judge: j, Client: c, Version: store.ModelJudgeVersion{Version: version, Model: m.Model,
		PromptHash: p.Hash, Params: paramsJSON, Prompt: p.Text}}, nil
}

// printRequests is judge --print-prompt --endpoint: the request body of every turn the
// filter chooses, one JSON a line, exactly as the client would send it (the same builder and
// the same encoder), images and all; nothing is sent and nothing stored.
func printRequests(ctx context.Context, s *store.Store, pm *preparedModel, filter store.TurnFilter, w io.Writer) error {
	images := newImageCache(nil)
	n := 0
	err := s.StreamJudgeTurns(ctx, filter, func(turns []dataset.Turn, _ []int64, chosen []bool) error {
		for i := range turns {
			if !chosen[i] {
				continue
			}
			req, err := buildRequest(ctx, pm.Judge, images, turns, i)
			if err != nil {
				return fmt.Errorf("%s: %w", turns[i].SampleID, err)
			}
			body, err := pm.Client.RequestBody(req.Messages, req.Format)
			if err != nil {
				return fmt.Errorf("%s: %w", turns[i].SampleID, err)
			}
			if _, err := w.Write(append(body, '\n')); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	if err == nil && n == 0 {
		return ErrNoTurns
	}
	return err
}
