// Package vlm is a small client of the OpenAI-compatible chat completions API, the one API
// that vLLM, SGLang, Ollama, LM Studio and the hosted services all serve. It sends the whole
// conversation each turn, images as data URLs (local files) or URLs, retries with backoff on
// 429, 5xx, timeouts and connection errors (honouring Retry-After up to a maximum), bounds a
// turn's total time, limits the request rate, and logs every attempt as one JSON line so a
// run can be inspected and replayed. It reads the answers servers really send: content as
// text or as a list of parts, a stream of events where a single answer was asked for, an
// error object in a 200 body, an answer cut at the token limit (returned with an error of
// KindTruncated, never as a complete answer; IsTruncated tells it), a message with tool
// calls or only reasoning and no text (KindNoText, never an empty answer), an answer a
// content filter stopped (KindFiltered, never stored as the model's). It follows no
// redirect that changes the method or the host: the conversation and its images go to the
// endpoint given and nowhere else.
//
// Why not github.com/openai/openai-go (v3.96, the well-kept official SDK) or
// sashabaranov/go-openai: we use one endpoint and four request fields, but we need the raw
// response body of every attempt for the log, a precise verdict per failure (HTTP status,
// malformed JSON, an empty choice list, no response in time) that the simulator prints per
// episode, and Retry-After honoured inside our own retry budget. The SDKs wrap all of that
// in their own typed errors and fixed retry policy and bring a large generated API surface;
// plain net/http does the job in this file. The rate limit uses golang.org/x/time/rate.
package vlm

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"mime"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Role is the author of a chat message.
type Role string

// The roles the simulator uses.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// Message is one chat message: its text and its images. An image is a local path or an
// http(s) or data URL.
type Message struct {
	Role   Role
	Text   string
	Images []string
}

// Options configures a Client.
type Options struct {
	// Endpoint is the API base (http://127.0.0.1:8000/v1) or the full chat completions URL.
	Endpoint string
	Model    string
	// APIKey is sent as a bearer token when not empty.
	APIKey string
	// Timeout bounds one attempt, from sending the request to the end of the response body.
	Timeout time.Duration
	// MaxRetries is how many times a failed attempt is repeated (429, 5xx, timeout,
	// connection error); 0 means no retries.
	MaxRetries int
	// Backoff is the first retry's delay; each further retry doubles it, up to MaxBackoff,
	// with full jitter.
	Backoff, MaxBackoff time.Duration
	// MaxRetryWait caps the wait a server asks for with Retry-After (default 2 minutes): a
	// longer one is cut to it, and Notify says so.
	MaxRetryWait time.Duration
	// TurnTimeout bounds one Chat call's total time, every attempt and wait included
	// (0: no bound beyond the attempts').
	TurnTimeout time.Duration
	// Notify hears what the client decided on its own that the user should know: a capped
	// Retry-After wait (said once per client). nil says nothing.
	Notify func(string)
	// RatePerSecond limits attempts across all goroutines; 0 means no limit.
	RatePerSecond float64
	// MaxTokens and Temperature are sent when set.
	MaxTokens   int
	Temperature *float64
	// TopP and Seed are sent when set (seed: for servers that take one, vLLM and OpenAI).
	TopP *float64
	Seed *int64
	// Log receives one JSON line per attempt; nil logs nothing.
	Log io.Writer
	// HTTPClient replaces the default client (tests).
	HTTPClient *http.Client
}

// ErrorKind says how a request failed.
type ErrorKind int

// The ways a request fails.
const (
	KindHTTP       ErrorKind = iota + 1 // a status other than 200
	KindMalformed                       // a body that is not a chat completion
	KindEmpty                           // a completion with no choices
	KindTimeout                         // no (complete) response within the timeout
	KindConnection                      // the connection failed
	KindAPI                             // a 200 whose body is an error object, not an answer
	KindTruncated                       // the answer was cut at the token limit (finish_reason "length")
	KindTooLarge                        // a response body larger than MaxAnswer
	KindRedirect                        // a redirect that would change the method or the host
	KindNoText                          // a completion whose message has tool calls or only reasoning, no text
	KindFiltered                        // the server's content filter stopped the answer (finish_reason "content_filter")
)

// Error is a failed chat request, after all retries.
type Error struct {
	Kind     ErrorKind
	Status   int    // KindHTTP
	Body     string // the start of the response body, when there was one
	Attempts int
	Timeout  time.Duration
	// TurnTimeout: the turn's whole time ran out (Options.TurnTimeout), not one attempt's.
	TurnTimeout bool
	// KindAPI: the error object's message, type and code as the server sent them.
	APIMessage, APIType, APICode string
	// KindTruncated: the max_tokens sent (0: none, the server's default).
	MaxTokens int
	// KindRedirect: the status and the Location refused.
	Location string
	// transient: a KindAPI error whose code, type or message says it passes (retried).
	transient bool
	Err       error
	// notJSON: a KindMalformed body that is not JSON (retried); JSON of the wrong shape is not.
	notJSON bool
	// unreachable: why a KindConnection endpoint cannot be reached at all (see Unreachable),
	// read before scrubError may flatten Err into text.
	unreachable string
}

// Error implements error.
func (e *Error) Error() string {
	var s string
	switch e.Kind {
	case KindHTTP:
		s = fmt.Sprintf("HTTP %d %s", e.Status, http.StatusText(e.Status))
		if e.Body != "" {
			s += ": " + e.Body
		}
	case KindMalformed:
		s = fmt.Sprintf("malformed response (not a chat completion): %v", e.Err)
		if e.Body != "" {
			s += ": " + e.Body
		}
	case KindEmpty:
		s = "the response has no choices"
	case KindTimeout:
		if e.TurnTimeout {
			s = fmt.Sprintf("no answer within the turn's time limit %s (--turn-timeout)", e.Timeout)
			var prev *Error
			if errors.As(e.Err, &prev) {
				s += "; the last attempt: " + prev.Error()
			}
		} else {
			s = fmt.Sprintf("no response within %s", e.Timeout)
		}
	case KindConnection:
		s = fmt.Sprintf("connection failed: %v", e.Err)
	case KindAPI:
		s = "the server answered with an error"
		var what []string
		if e.APIType != "" {
			what = append(what, "type "+e.APIType)
		}
		if e.APICode != "" {
			what = append(what, "code "+e.APICode)
		}
		if len(what) > 0 {
			s += " (" + strings.Join(what, ", ") + ")"
		}
		if e.APIMessage != "" {
			s += ": " + e.APIMessage
		}
	case KindTruncated:
		limit := "the server's default max_tokens"
		if e.MaxTokens > 0 {
			limit = fmt.Sprintf("max_tokens %d", e.MaxTokens)
		}
		s = fmt.Sprintf(`the answer was cut at the token limit (finish_reason "length", %s): raise --max-tokens`, limit)
	case KindNoText:
		s = fmt.Sprintf("the answer has no text, %v", e.Err)
	case KindFiltered:
		s = `the server's content filter stopped the answer (finish_reason "content_filter"): what came is not the model's whole answer`
	case KindTooLarge:
		s = fmt.Sprintf("the response is larger than %d MiB, the most one answer may be", MaxAnswer>>20)
	case KindRedirect:
		s = fmt.Sprintf("the endpoint redirects (HTTP %d) to %s, which m3eval does not follow: %v; give the final URL as --endpoint", e.Status, e.Location, e.Err)
	default:
		s = fmt.Sprint(e.Err)
	}
	if e.Attempts > 1 {
		s += fmt.Sprintf(" (%d attempts)", e.Attempts)
	}
	return s
}

// Unwrap gives the cause, for errors.Is and errors.As.
func (e *Error) Unwrap() error { return e.Err }

// retryable reports whether another attempt may succeed.
func (e *Error) retryable() bool {
	switch e.Kind {
	case KindTimeout, KindConnection:
		return true
	case KindHTTP:
		return e.Status == http.StatusTooManyRequests || e.Status >= 500
	case KindMalformed:
		// A 200 whose body is not JSON at all is a proxy's or gateway's error page (HTML,
		// plain text, a cut connection), not the model's answer: another attempt may reach
		// the model, as after a 502.
		return e.notJSON
	case KindAPI:
		return e.transient
	}
	return false
}

// IsTruncated reports whether err is an answer cut at the token limit. Chat returns the cut
// text with such an error.
func IsTruncated(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Kind == KindTruncated
}

// Client sends chat completion requests. It is safe for concurrent use.
type Client struct {
	opts Options
	url  string
	// logURL is url without its secrets (user info, api_key query values), as the log and
	// errors show it; secrets are the literal values scrub removes from any other text.
	logURL  string
	secrets []string
	http    *http.Client
	limiter *rate.Limiter
	logMu   sync.Mutex
	images  sync.Map // local path -> data URL (or error), read once per run
	// sleep waits between retries: one cancellable wait for Retry-After and backoff, which
	// tests replace to see the waits without sleeping them.
	sleep func(ctx context.Context, d time.Duration) error
	// cappedOnce: Notify has said that a Retry-After wait was capped.
	cappedOnce sync.Once
}

// New returns a client for opts.
func New(opts Options) (*Client, error) {
	if opts.Endpoint == "" {
		return nil, errors.New("no endpoint")
	}
	u, err := endpointURL(opts.Endpoint)
	if err != nil {
		return nil, err
	}
	if opts.Model == "" {
		return nil, errors.New("no model")
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 2 * time.Minute
	}
	if opts.Backoff <= 0 {
		opts.Backoff = 500 * time.Millisecond
	}
	if opts.MaxBackoff <= 0 {
		opts.MaxBackoff = 30 * time.Second
	}
	if opts.MaxRetryWait <= 0 {
		opts.MaxRetryWait = DefaultMaxRetryWait
	}
	c := &Client{opts: opts, url: u.String(), logURL: redactURL(u), secrets: secretsOf(u, opts.APIKey), sleep: sleepCtx}
	if opts.HTTPClient != nil {
		hc := *opts.HTTPClient
		if hc.CheckRedirect == nil {
			hc.CheckRedirect = checkRedirect
		}
		c.http = &hc
	} else {
		// Every episode keeps one request in flight; allow that many idle connections per
		// host so concurrent episodes do not reconnect each turn.
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConnsPerHost = 64
		c.http = &http.Client{Transport: tr, CheckRedirect: checkRedirect}
	}
	if opts.RatePerSecond > 0 {
		burst := max(1, int(opts.RatePerSecond))
		c.limiter = rate.NewLimiter(rate.Limit(opts.RatePerSecond), burst)
	}
	return c, nil
}

// URL returns the chat completions URL requests go to, as it may be shown. Its secrets (user
// info and api_key query values) read REDACTED.
func (c *Client) URL() string { return c.logURL }

// Wire types of the chat completions API (the subset we send and read).
type (
	wireRequest struct {
		Model       string        `json:"model"`
		Messages    []wireMessage `json:"messages"`
		MaxTokens   int           `json:"max_tokens,omitempty"`
		Temperature *float64      `json:"temperature,omitempty"`
		TopP        *float64      `json:"top_p,omitempty"`
		Seed        *int64        `json:"seed,omitempty"`
		// Stream is always sent, false: one answer, not an event stream (a server that
		// streams anyway is read all the same).
		Stream bool `json:"stream"`
	}
	wireMessage struct {
		Role    Role `json:"role"`
		Content any  `json:"content"` // a string, or []wirePart when there are images
	}
	wirePart struct {
		Type     string   `json:"type"`
		Text     string   `json:"text,omitempty"`
		ImageURL *wireURL `json:"image_url,omitempty"`
	}
	wireURL struct {
		URL string `json:"url"`
	}
)

// DecodeRequest reads a chat completion request body into messages: text parts joined,
// image URLs in order. The scripted server uses it.
func DecodeRequest(body []byte) (model string, msgs []Message, err error) {
	var raw struct {
		Model    string `json:"model"`
		Messages []struct {
			Role    Role            `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		return "", nil, err
	}
	for i, m := range raw.Messages {
		msg := Message{Role: m.Role}
		var s string
		if json.Unmarshal(m.Content, &s) == nil {
			msg.Text = s
		} else {
			var parts []wirePart
			if err := json.Unmarshal(m.Content, &parts); err != nil {
				return "", nil, fmt.Errorf("messages[%d].content: %w", i, err)
			}
			var texts []string
			for _, p := range parts {
				switch {
				case p.Type == "text":
					texts = append(texts, p.Text)
				case p.Type == "image_url" && p.ImageURL != nil:
					msg.Images = append(msg.Images, p.ImageURL.URL)
				}
			}
			msg.Text = strings.Join(texts, "\n")
		}
		msgs = append(msgs, msg)
	}
	return raw.Model, msgs, nil
}

// body builds the request body; image turns a message's image reference into the URL sent.
func (c *Client) body(msgs []Message, image func(string) (string, error)) ([]byte, error) {
	req := wireRequest{Model: c.opts.Model, MaxTokens: c.opts.MaxTokens, Temperature: c.opts.Temperature, TopP: c.opts.TopP, Seed: c.opts.Seed}
	req.Messages = make([]wireMessage, len(msgs))
	for i, m := range msgs {
		if len(m.Images) == 0 {
			req.Messages[i] = wireMessage{Role: m.Role, Content: m.Text}
			continue
		}
		parts := make([]wirePart, 0, len(m.Images)+1)
		for _, im := range m.Images {
			u, err := image(im)
			if err != nil {
				return nil, err
			}
			parts = append(parts, wirePart{Type: "image_url", ImageURL: &wireURL{URL: u}})
		}
		parts = append(parts, wirePart{Type: "text", Text: m.Text})
		req.Messages[i] = wireMessage{Role: m.Role, Content: parts}
	}
	return json.Marshal(req)
}

// imageURL returns an image reference as sent: URLs as they are, local files as data URLs
// (read once per client).
func (c *Client) imageURL(ref string) (string, error) {
	if strings.HasPrefix(ref, "http://") || strings.HasPrefix(ref, "https://") || strings.HasPrefix(ref, "data:") {
		return ref, nil
	}
	if v, ok := c.images.Load(ref); ok {
		return v.(string), nil
	}
	u, err := DataURL(ref)
	if err != nil {
		return "", err
	}
	c.images.Store(ref, u)
	return u, nil
}

// DataURL reads a local image file into a data URL. The media type comes from the file name.
func DataURL(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("image: %w", err)
	}
	mt := mime.TypeByExtension(strings.ToLower(filepath.Ext(path)))
	if mt == "" {
		mt = http.DetectContentType(b)
	}
	return "data:" + mt + ";base64," + base64.StdEncoding.EncodeToString(b), nil
}

// logEntry is one line of the request log. The request is logged with images as they were
// referenced (file paths, URLs), not as their data URLs, so the log stays small; replaying
// re-reads the files.
type logEntry struct {
	Time     time.Time       `json:"time"`
	Episode  string          `json:"episode"`
	Turn     int             `json:"turn"`
	Attempt  int             `json:"attempt"`
	URL      string          `json:"url"`
	Request  json.RawMessage `json:"request"`
	Status   int             `json:"status,omitempty"`
	Response json.RawMessage `json:"response,omitempty"`
	Body     string          `json:"body,omitempty"` // a response that is not JSON
	Error    string          `json:"error,omitempty"`
	Millis   float64         `json:"ms"`
}

// Tag names a request in the log.
type Tag struct {
	Episode string
	Turn    int
}

// DefaultMaxRetryWait is the longest Retry-After wait honoured unless Options say otherwise.
const DefaultMaxRetryWait = 2 * time.Minute

// errTurnTimeout is the cause of a turn's context when Options.TurnTimeout ends it.
var errTurnTimeout = errors.New("turn timeout")

// RequestBody returns the exact body Complete sends for msgs, or Chat when format is nil.
// m3eval judge --print-prompt prints it, byte for byte.
func (c *Client) RequestBody(msgs []Message, format json.RawMessage) ([]byte, error) {
	body, err := c.body(msgs, c.imageURL)
	if err != nil {
		return nil, err
	}
	if len(format) > 0 {
		body = withFormat(body, format)
	}
	return body, nil
}

// Chat sends the conversation and returns the first choice's text. Failed attempts are
// retried as Options say; the returned error is an *Error (or the context's error). An
// answer cut at the token limit is returned with an *Error of KindTruncated, never alone:
// the caller decides whether to keep it (marked) or drop it.
func (c *Client) Chat(ctx context.Context, tag Tag, msgs []Message) (string, error) {
	body, err := c.body(msgs, c.imageURL)
	if err != nil {
		return "", err
	}
	var logged []byte
	if c.opts.Log != nil {
		logged, _ = c.body(msgs, func(s string) (string, error) { return s, nil })
	}
	if cl, _ := ctx.Value(callKey{}).(*call); cl != nil && len(cl.format) > 0 {
		body, logged = withFormat(body, cl.format), withFormat(logged, cl.format)
	}
	parent := ctx
	var turnEnd time.Time // zero: no bound of the turn's own
	if c.opts.TurnTimeout > 0 {
		var cancel context.CancelFunc
		turnEnd = time.Now().Add(c.opts.TurnTimeout)
		ctx, cancel = context.WithDeadlineCause(ctx, turnEnd, errTurnTimeout)
		defer cancel()
	}
	var last *Error
	// turnOver is the error of a turn whose time ran out after attempt attempts; it names
	// the last attempt's failure, when one had failed.
	turnOver := func(attempt int) (string, error) {
		if err := parent.Err(); err != nil {
			return "", err
		}
		e := &Error{Kind: KindTimeout, TurnTimeout: true, Timeout: c.opts.TurnTimeout, Attempts: attempt,
			Err: errTurnTimeout, unreachable: unreachableTimeout}
		if last != nil {
			c.scrubError(last)
			last.Attempts = 0 // said once, for the turn
			e.Err = last
		}
		return "", e
	}
	for attempt := 1; ; attempt++ {
		if c.limiter != nil {
			if err := c.limiter.Wait(ctx); err != nil {
				if context.Cause(ctx) == errTurnTimeout {
					return turnOver(attempt - 1)
				}
				if ctx.Err() != nil {
					return "", err
				}
				// The limiter refuses at once a wait that would outlast the context's
				// deadline. When that deadline is the turn's, the turn is over now, as when a
				// Retry-After outlasts it; when it is the caller's, it is the caller's.
				if dl, _ := ctx.Deadline(); !turnEnd.IsZero() && dl.Equal(turnEnd) {
					return turnOver(attempt - 1)
				}
				return "", fmt.Errorf("%w: the rate limit holds the next request past it (%v)", context.DeadlineExceeded, err)
			}
		}
		text, retryAfter, e := c.attempt(ctx, tag, attempt, body, logged)
		if e == nil {
			return text, nil
		}
		if ctx.Err() != nil {
			if context.Cause(ctx) == errTurnTimeout {
				return turnOver(attempt)
			}
			return "", ctx.Err()
		}
		e.Attempts = attempt
		last = e
		if e.Kind == KindTruncated {
			return text, last
		}
		if !e.retryable() || attempt > c.opts.MaxRetries {
			c.scrubError(last)
			return "", last
		}
		d := c.backoff(attempt)
		if retryAfter > 0 {
			d = retryAfter
			if d > c.opts.MaxRetryWait {
				c.cappedOnce.Do(func() {
					if c.opts.Notify != nil {
						c.opts.Notify(fmt.Sprintf("the endpoint asked to wait %s before retrying (Retry-After); waiting %s, the most --max-retry-wait allows (said once)",
							retryAfter.Round(time.Second), c.opts.MaxRetryWait))
					}
				})
				d = c.opts.MaxRetryWait
			}
		}
		if !turnEnd.IsZero() && time.Until(turnEnd) < d {
			// The wait would outlast the turn's time: the turn is over now, not after it.
			return turnOver(attempt)
		}
		if err := c.sleep(ctx, d); err != nil {
			if context.Cause(ctx) == errTurnTimeout {
				return turnOver(attempt)
			}
			return "", err
		}
	}
}

// backoff is the delay before retry n (1-based): exponential with full jitter.
func (c *Client) backoff(n int) time.Duration {
	d := c.opts.Backoff << min(n-1, 20)
	if d <= 0 || d > c.opts.MaxBackoff {
		d = c.opts.MaxBackoff
	}
	return d/2 + rand.N(d/2+1)
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// redirectError is a redirect checkRedirect refused.
type redirectError struct {
	status   int
	location string
	why      string
}

func (e *redirectError) Error() string { return e.why }

// checkRedirect follows a redirect only when it keeps the request as it is: the same method
// (a 301, 302 or 303 turns a POST into a GET, whose canned answer is no answer to the
// conversation) and the same host (the prompt and its images go nowhere else); http may
// become https on that host, not the reverse.
func checkRedirect(req *http.Request, via []*http.Request) error {
	first := via[0]
	status := 0
	if req.Response != nil {
		status = req.Response.StatusCode
	}
	refuse := func(why string) error {
		return &redirectError{status: status, location: req.URL.Redacted(), why: why}
	}
	switch {
	case req.Method != first.Method:
		return refuse(fmt.Sprintf("it would turn the %s into a %s", first.Method, req.Method))
	case !strings.EqualFold(req.URL.Hostname(), first.URL.Hostname()) || portOf(req.URL) != portOf(first.URL) && !(first.URL.Scheme == "http" && req.URL.Scheme == "https"):
		return refuse("it is another host")
	case first.URL.Scheme == "https" && req.URL.Scheme != "https":
		return refuse("it leaves https")
	case len(via) >= 5:
		return refuse("it redirected 5 times")
	}
	return nil
}

func portOf(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if u.Scheme == "https" {
		return "443"
	}
	return "80"
}

// attempt sends one request. A cut answer (KindTruncated) comes back with its text.
func (c *Client) attempt(ctx context.Context, tag Tag, n int, body, logged []byte) (text string, retryAfter time.Duration, e *Error) {
	start := time.Now()
	cl, _ := ctx.Value(callKey{}).(*call)
	if cl != nil {
		cl.reply.Attempts = n
	}
	actx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	var status int
	var resp []byte
	defer func() {
		if c.opts.Log != nil {
			c.log(tag, n, start, logged, status, resp, e)
		}
	}()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return "", 0, &Error{Kind: KindConnection, Err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if c.opts.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.opts.APIKey)
	}
	r, err := c.http.Do(req)
	if err != nil {
		var re *redirectError
		if errors.As(err, &re) {
			return "", 0, &Error{Kind: KindRedirect, Status: re.status, Location: re.location, Err: errors.New(re.why)}
		}
		return "", 0, c.transportError(ctx, actx, err)
	}
	defer r.Body.Close()
	status = r.StatusCode
	resp, err = io.ReadAll(io.LimitReader(r.Body, MaxAnswer+1))
	if err != nil {
		return "", 0, c.transportError(ctx, actx, err)
	}
	if len(resp) > MaxAnswer {
		resp = resp[:4096] // enough for the log to show what it was
		return "", 0, &Error{Kind: KindTooLarge}
	}
	if r.StatusCode != http.StatusOK {
		return "", parseRetryAfter(r.Header.Get("Retry-After")), &Error{Kind: KindHTTP, Status: r.StatusCode, Body: snippet(resp)}
	}
	a, ae := readAnswer(resp, r.Header.Get("Content-Type"))
	if cl != nil && a.usage {
		// Counted for an answer that is no answer too (tool calls, only reasoning, filtered):
		// the server spent, and may bill, those tokens.
		cl.reply.PromptTokens, cl.reply.CompletionTokens = a.promptTokens, a.completionTokens
	}
	if ae != nil {
		return "", parseRetryAfter(r.Header.Get("Retry-After")), ae
	}
	if a.finish == "content_filter" {
		return "", 0, &Error{Kind: KindFiltered}
	}
	if a.finish == "length" {
		if cl != nil {
			cl.reply.Truncated = true
		}
		return a.text, 0, &Error{Kind: KindTruncated, MaxTokens: c.opts.MaxTokens}
	}
	return a.text, 0, nil
}

// scrubError removes the client's secrets from an error it returns: the body snippet and
// the cause (Go's *url.Error quotes the request URL, query and all).
func (c *Client) scrubError(e *Error) {
	e.Body = c.scrub(e.Body)
	var ue *url.Error
	if errors.As(e.Err, &ue) {
		ue.URL = c.logURL
	}
	if e.Err != nil {
		if s := c.scrub(e.Err.Error()); s != e.Err.Error() {
			e.Err = errors.New(s)
		}
	}
}

func (c *Client) transportError(ctx, actx context.Context, err error) *Error {
	var ne net.Error
	if ctx.Err() == nil && (errors.Is(actx.Err(), context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())) {
		return &Error{Kind: KindTimeout, Timeout: c.opts.Timeout, Err: err, unreachable: unreachableTimeout}
	}
	return &Error{Kind: KindConnection, Err: err, unreachable: unreachableReason(err)}
}

func (c *Client) log(tag Tag, n int, start time.Time, req []byte, status int, resp []byte, e *Error) {
	le := logEntry{Time: start.UTC(), Episode: tag.Episode, Turn: tag.Turn, Attempt: n, URL: c.logURL, Request: req, Status: status,
		Millis: float64(time.Since(start).Microseconds()) / 1000}
	if len(resp) > 0 {
		if sr := c.scrub(string(resp)); json.Valid(resp) {
			le.Response = json.RawMessage(sr)
			if !json.Valid(le.Response) { // a secret's replacement broke an escape: keep the text
				le.Response, le.Body = nil, sr
			}
		} else {
			le.Body = sr
		}
	}
	if e != nil {
		le.Error = c.scrub(e.Error())
	}
	b, err := json.Marshal(le)
	if err != nil {
		return
	}
	b = append(b, '\n')
	c.logMu.Lock()
	defer c.logMu.Unlock()
	c.opts.Log.Write(b) // one write per line: a killed run leaves whole lines
}

func parseRetryAfter(s string) time.Duration {
	if s == "" {
		return 0
	}
	if n, err := strconv.Atoi(strings.TrimSpace(s)); err == nil && n >= 0 {
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(s); err == nil {
		return time.Until(t)
	}
	return 0
}

// snippet is the start of a body for an error message, on one line.
func snippet(b []byte) string {
	s := strings.Join(strings.Fields(string(b)), " ")
	if len(s) > 200 {
		s = strings.ToValidUTF8(s[:200], "") + "…"
	}
	return s
}

// Reply is a completion with what it cost. That is the server's token counts (0 when it
// reports none) and the attempts it took.
type Reply struct {
	Text                           string
	PromptTokens, CompletionTokens int
	Attempts                       int
	// Truncated: the answer was cut at the token limit (the error is KindTruncated).
	Truncated bool
}

// call is what Complete asks of one Chat beyond the messages, and what it learns back. It
// travels in the context so that Chat's one retry loop serves both (context.WithValue for
// a per-call option is unusual; it keeps Complete an addition beside Chat rather than a
// second copy of the loop).
type call struct {
	format json.RawMessage
	reply  Reply
}

type callKey struct{}

// Complete sends the conversation as Chat does, with a response_format, and returns the
// reply with its token counts and attempts. A nil format sends none (the model judge sends
// its json_schema). The counts and attempts are set on failure too.
func (c *Client) Complete(ctx context.Context, tag Tag, msgs []Message, format json.RawMessage) (Reply, error) {
	cl := &call{format: format}
	text, err := c.Chat(context.WithValue(ctx, callKey{}, cl), tag, msgs)
	cl.reply.Text = text
	return cl.reply, err
}

// withFormat adds "response_format" to a request body (a JSON object).
func withFormat(body, format json.RawMessage) []byte {
	if len(body) < 2 {
		return body
	}
	out := make([]byte, 0, len(body)+len(format)+20)
	out = append(out, body[:len(body)-1]...)
	out = append(out, `,"response_format":`...)
	out = append(out, format...)
	return append(out, '}')
}
