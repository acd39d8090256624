package vlm

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// The answers servers really send, each from a real HTTP server on 127.0.0.1 (issue #37),
// and the redirects and slow endpoints of issue #38.

func hi() []Message { return []Message{{Role: RoleUser, Text: "hi"}} }

// recordSleeps replaces the client's wait between attempts with one that records the waits
// and returns at once, so a Retry-After of 45 s is seen, not slept.
func recordSleeps(c *Client) *[]time.Duration {
	var mu sync.Mutex
	var got []time.Duration
	c.sleep = func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		got = append(got, d)
		mu.Unlock()
		return ctx.Err()
	}
	return &got
}

func TestRetryAfterHonouredUpToTheMaximum(t *testing.T) {
	srv, n := script(t, func(n int64, w http.ResponseWriter, _ *http.Request) {
		switch n {
		case 1:
			w.Header().Set("Retry-After", "45")
			http.Error(w, "busy", http.StatusTooManyRequests)
		case 2, 3:
			w.Header().Set("Retry-After", "300")
			http.Error(w, "busy", http.StatusServiceUnavailable)
		default:
			ok(w, "fine")
		}
	})
	var notes []string
	c := newClient(t, srv.URL, func(o *Options) {
		o.MaxRetries = 4
		o.Notify = func(s string) { notes = append(notes, s) }
	})
	waits := recordSleeps(c)
	text, err := c.Chat(context.Background(), Tag{}, hi())
	if err != nil || text != "fine" || n.Load() != 4 {
		t.Fatalf("Chat = %q, %v after %d requests", text, err, n.Load())
	}
	want := []time.Duration{45 * time.Second, DefaultMaxRetryWait, DefaultMaxRetryWait}
	if fmt.Sprint(*waits) != fmt.Sprint(want) {
		t.Errorf("waits %v, want %v (45 s honoured, 300 s capped at the default 2 min)", *waits, want)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "asked to wait 5m0s") || !strings.Contains(notes[0], "waiting 2m0s") || !strings.Contains(notes[0], "--max-retry-wait") {
		t.Errorf("notes %q, want one saying the 5 min wait was cut to 2 min", notes)
	}

	// A smaller maximum applies as given.
	n.Store(0)
	c = newClient(t, srv.URL, func(o *Options) { o.MaxRetries = 4; o.MaxRetryWait = 10 * time.Second })
	waits = recordSleeps(c)
	if _, err := c.Chat(context.Background(), Tag{}, hi()); err != nil {
		t.Fatal(err)
	}
	if want := []time.Duration{10 * time.Second, 10 * time.Second, 10 * time.Second}; fmt.Sprint(*waits) != fmt.Sprint(want) {
		t.Errorf("waits %v, want %v", *waits, want)
	}
}

func TestStreamedAnswerIsReadWhole(t *testing.T) {
	var sent map[string]any
	srv, _ := script(t, func(_ int64, w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(b, &sent); err != nil {
			t.Errorf("request body %s: %v", b, err)
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, chunk := range []string{
			`{"choices":[{"delta":{"role":"assistant"}}]}`,
			`{"choices":[{"delta":{"content":"There is a "}}]}`,
			`{"choices":[{"delta":{"content":"white plate."},"finish_reason":null}]}`,
			`{"choices":[{"delta":{},"finish_reason":"stop"}]}`,
			`{"choices":[],"usage":{"prompt_tokens":11,"completion_tokens":5}}`,
		} {
			fmt.Fprintf(w, "data: %s\n\n", chunk)
			w.(http.Flusher).Flush()
		}
		io.WriteString(w, "data: [DONE]\n\n")
	})
	c := newClient(t, srv.URL, nil)
	r, err := c.Complete(context.Background(), Tag{}, hi(), nil)
	if err != nil || r.Text != "There is a white plate." || r.PromptTokens != 11 || r.CompletionTokens != 5 || r.Attempts != 1 {
		t.Fatalf("Complete = %+v, %v", r, err)
	}
	if v, ok := sent["stream"]; !ok || v != false {
		t.Errorf(`request "stream" = %v (present %v), want false`, v, ok)
	}
}

func TestStreamCutBeforeItsEndIsRetried(t *testing.T) {
	srv, n := script(t, func(n int64, w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, `data: {"choices":[{"delta":{"content":"There is a white pl"}}]}`+"\n\n")
		if n > 1 {
			io.WriteString(w, `data: {"choices":[{"delta":{"content":"ate."},"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")
		}
	})
	c := newClient(t, srv.URL, nil)
	text, err := c.Chat(context.Background(), Tag{}, hi())
	if err != nil || text != "There is a white plate." || n.Load() != 2 {
		t.Fatalf("Chat = %q, %v after %d requests", text, err, n.Load())
	}
}

func TestContentAsParts(t *testing.T) {
	srv, _ := script(t, func(_ int64, w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, `{"choices":[{"message":{"role":"assistant","content":[{"type":"text","text":"A red "},{"type":"text","text":"car."}]},"finish_reason":"stop"}]}`)
	})
	text, err := newClient(t, srv.URL, nil).Chat(context.Background(), Tag{}, hi())
	if err != nil || text != "A red car." {
		t.Fatalf("Chat = %q, %v", text, err)
	}
}

func TestErrorIn200(t *testing.T) {
	// Transient (its code or message says so): retried, and the retry's answer taken.
	srv, n := script(t, func(n int64, w http.ResponseWriter, _ *http.Request) {
		if n == 1 {
			io.WriteString(w, `{"error":{"message":"The server is overloaded, please try again","type":"server_error","code":503}}`)
			return
		}
		ok(w, "fine")
	})
	text, err := newClient(t, srv.URL, nil).Chat(context.Background(), Tag{}, hi())
	if err != nil || text != "fine" || n.Load() != 2 {
		t.Fatalf("Chat = %q, %v after %d requests", text, err, n.Load())
	}
	// Not transient: failed at once, with the server's message, never taken as an answer.
	srv, n = script(t, func(int64, http.ResponseWriter, *http.Request) {}) // replaced below
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		n.Add(1)
		io.WriteString(w, `{"object":"error","error":{"message":"This model's maximum context length is 4096 tokens","type":"invalid_request_error","code":"context_length_exceeded"}}`)
	})
	text, err = newClient(t, srv.URL, nil).Chat(context.Background(), Tag{}, hi())
	var e *Error
	if !errors.As(err, &e) || e.Kind != KindAPI || text != "" || n.Load() != 1 {
		t.Fatalf("Chat = %q, %v after %d requests; want a KindAPI error after 1", text, err, n.Load())
	}
	if !strings.Contains(err.Error(), "maximum context length is 4096 tokens") || !strings.Contains(err.Error(), "context_length_exceeded") {
		t.Errorf("error %q does not carry the server's message and code", err)
	}
}

func TestCutAnswerIsNeverComplete(t *testing.T) {
	for _, streamed := range []bool{false, true} {
		t.Run(fmt.Sprint("streamed=", streamed), func(t *testing.T) {
			srv, n := script(t, func(_ int64, w http.ResponseWriter, _ *http.Request) {
				if streamed {
					io.WriteString(w, "data: {\"choices\":[{\"delta\":{\"content\":\"There is a white pl\"},\"finish_reason\":\"length\"}]}\n\ndata: [DONE]\n\n")
					return
				}
				io.WriteString(w, `{"choices":[{"message":{"content":"There is a white pl"},"finish_reason":"length"}]}`)
			})
			c := newClient(t, srv.URL, func(o *Options) { o.MaxTokens = 5 })
			text, err := c.Chat(context.Background(), Tag{}, hi())
			if !IsTruncated(err) || text != "There is a white pl" || n.Load() != 1 {
				t.Fatalf("Chat = %q, %v after %d requests; want the cut text with a KindTruncated error, not retried", text, err, n.Load())
			}
			if !strings.Contains(err.Error(), "--max-tokens") || !strings.Contains(err.Error(), "max_tokens 5") {
				t.Errorf("error %q does not name --max-tokens and the limit sent", err)
			}
			r, err := c.Complete(context.Background(), Tag{}, hi(), nil)
			if !IsTruncated(err) || !r.Truncated {
				t.Errorf("Complete = %+v, %v; want Truncated", r, err)
			}
		})
	}
}

func TestAnswerLargerThanTheCapFails(t *testing.T) {
	srv, n := script(t, func(_ int64, w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, `{"choices":[{"message":{"content":"`)
		chunk := strings.Repeat("x", 1<<20)
		for range 17 {
			io.WriteString(w, chunk)
		}
		io.WriteString(w, `"},"finish_reason":"stop"}]}`)
	})
	// A minute per attempt: 17 MiB under the race detector on a loaded machine take seconds,
	// and an attempt that timed out would be retried.
	text, err := newClient(t, srv.URL, func(o *Options) { o.Timeout = time.Minute }).Chat(context.Background(), Tag{}, hi())
	var e *Error
	if !errors.As(err, &e) || e.Kind != KindTooLarge || text != "" || n.Load() != 1 {
		t.Fatalf("Chat = %d bytes, %v after %d requests; want KindTooLarge after 1", len(text), err, n.Load())
	}
	if !strings.Contains(err.Error(), "16 MiB") {
		t.Errorf("error %q does not name the cap", err)
	}
}

func TestRedirects(t *testing.T) {
	// other is another host (another port of 127.0.0.1 is another origin; the client compares
	// host and port) that would answer anything: nothing may reach it.
	var otherHits int
	var mu sync.Mutex
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		otherHits++
		mu.Unlock()
		ok(w, `{"correctness":5}`)
	}))
	t.Cleanup(other.Close)
	var methods []string
	srv, _ := script(t, func(_ int64, w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		methods = append(methods, r.Method+" "+r.URL.Path)
		mu.Unlock()
		switch {
		case strings.HasPrefix(r.URL.Path, "/away/"):
			http.Redirect(w, r, other.URL+"/v1/chat/completions", http.StatusTemporaryRedirect)
		case strings.HasPrefix(r.URL.Path, "/found/"):
			http.Redirect(w, r, "/canned", http.StatusFound)
		case strings.HasPrefix(r.URL.Path, "/moved/"):
			http.Redirect(w, r, "/v1/chat/completions", http.StatusPermanentRedirect)
		case r.URL.Path == "/canned":
			ok(w, "canned")
		default:
			b, _ := io.ReadAll(r.Body)
			if !strings.Contains(string(b), `"hi"`) {
				http.Error(w, "no body", 400)
				return
			}
			ok(w, "answer")
		}
	})
	for _, c := range []struct {
		path, says string
		status     int
	}{
		{"/away/v1", "another host", 307},
		{"/found/v1", "turn the POST into a GET", 302},
	} {
		_, err := newClient(t, srv.URL+c.path, nil).Chat(context.Background(), Tag{}, hi())
		var e *Error
		if !errors.As(err, &e) || e.Kind != KindRedirect || e.Status != c.status || e.Attempts != 1 || !strings.Contains(err.Error(), c.says) || !strings.Contains(err.Error(), "--endpoint") {
			t.Errorf("%s: err = %v; want a KindRedirect error of HTTP %d saying %q, not retried", c.path, err, c.status, c.says)
		}
	}
	// A 307/308 on the same host keeps the POST and its body: followed.
	text, err := newClient(t, srv.URL+"/moved/v1", nil).Chat(context.Background(), Tag{}, hi())
	if err != nil || text != "answer" {
		t.Errorf("same-host 308: %q, %v", text, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if otherHits != 0 {
		t.Errorf("the other host got %d requests, want 0", otherHits)
	}
	for _, m := range methods {
		if strings.HasPrefix(m, "GET") {
			t.Errorf("a GET was sent: %v", methods)
		}
	}
}

func TestTurnTimeoutBoundsEveryAttemptAndWait(t *testing.T) {
	// A slowloris: the headers at once, then a byte every 20 ms, never the end.
	srv, n := script(t, func(_ int64, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"choices":[{"message":{"content":"`)
		for {
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(20 * time.Millisecond):
				io.WriteString(w, "x")
			}
		}
	})
	c := newClient(t, srv.URL, func(o *Options) {
		o.Timeout = 100 * time.Millisecond
		o.MaxRetries = 100
		o.TurnTimeout = time.Second
	})
	start := time.Now()
	_, err := c.Chat(context.Background(), Tag{}, hi())
	took := time.Since(start)
	var e *Error
	if !errors.As(err, &e) || e.Kind != KindTimeout || !e.TurnTimeout {
		t.Fatalf("err = %v, want the turn's timeout", err)
	}
	if !strings.Contains(err.Error(), "--turn-timeout") || Unreachable(err) == "" {
		t.Errorf("error %q (unreachable %q): want it to name --turn-timeout and count as unreachable", err, Unreachable(err))
	}
	// Every attempt ended at its own timeout, and the turn at its own: far fewer than 101.
	if n.Load() < 2 || n.Load() > 20 || took > 5*time.Second {
		t.Errorf("%d attempts in %s", n.Load(), took)
	}
	// A wait the server asks for that outlasts the turn ends the turn now.
	srv2, n2 := script(t, func(_ int64, w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Retry-After", "60")
		http.Error(w, "busy", http.StatusTooManyRequests)
	})
	c = newClient(t, srv2.URL, func(o *Options) { o.TurnTimeout = time.Minute; o.MaxRetries = 3 })
	waits := recordSleeps(c)
	_, err = c.Chat(context.Background(), Tag{}, hi())
	if !errors.As(err, &e) || !e.TurnTimeout || n2.Load() != 1 || len(*waits) != 0 {
		t.Errorf("err = %v after %d requests and waits %v; want the turn over without waiting", err, n2.Load(), *waits)
	}
	if !strings.Contains(err.Error(), "; the last attempt: HTTP 429 Too Many Requests: busy") {
		t.Errorf("error %q does not say what the last attempt met", err)
	}
}

// TestMessageWithoutText: vLLM, SGLang and Ollama answer with content null (or "") beside
// tool_calls or reasoning_content. That is no answer: a clear error, not "malformed" and not
// an empty answer stored as the model's; a reasoning model cut while thinking is a cut
// answer (KindTruncated), streamed or not.
func TestMessageWithoutText(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		stream     bool
		kind       ErrorKind
		say        string
	}{
		{"tool calls", `{"object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"look","arguments":"{}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":9,"completion_tokens":4}}`,
			false, KindNoText, "only tool_calls"},
		{"tool calls, content empty", `{"choices":[{"message":{"role":"assistant","content":"","tool_calls":[{"id":"c1","type":"function","function":{"name":"look","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`,
			false, KindNoText, "only tool_calls"},
		{"reasoning only", `{"choices":[{"message":{"role":"assistant","content":null,"reasoning_content":"The image shows a red apple."},"finish_reason":"stop"}]}`,
			false, KindNoText, "only reasoning_content"},
		{"ollama reasoning only", `{"choices":[{"message":{"role":"assistant","content":"","reasoning":"Let me look."},"finish_reason":"stop"}]}`,
			false, KindNoText, "only reasoning_content"},
		{"cut while thinking", `{"choices":[{"message":{"role":"assistant","content":null,"reasoning_content":"Let me look at"},"finish_reason":"length"}]}`,
			false, KindTruncated, "--max-tokens"},
		{"streamed tool calls", "data: {\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":null}}]}\r\n\r\n" +
			"data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"look\",\"arguments\":\"{}\"}}]}}]}\r\n\r\n" +
			"data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\r\n\r\ndata: [DONE]\r\n\r\n",
			true, KindNoText, "only tool_calls"},
		{"streamed reasoning only", "data: {\"choices\":[{\"delta\":{\"reasoning_content\":\"Let me \"}}]}\n\n" +
			"data: {\"choices\":[{\"delta\":{\"reasoning_content\":\"look.\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n",
			true, KindNoText, "only reasoning_content"},
		{"streamed cut while thinking", "data: {\"choices\":[{\"delta\":{\"reasoning_content\":\"Let me \"},\"finish_reason\":\"length\"}]}\n\ndata: [DONE]\n\n",
			true, KindTruncated, "--max-tokens"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, n := script(t, func(_ int64, w http.ResponseWriter, _ *http.Request) {
				if tc.stream {
					w.Header().Set("Content-Type", "text/event-stream")
				} else {
					w.Header().Set("Content-Type", "application/json")
				}
				io.WriteString(w, tc.body)
			})
			text, err := newClient(t, srv.URL, nil).Chat(context.Background(), Tag{}, hi())
			var e *Error
			if !errors.As(err, &e) || e.Kind != tc.kind || text != "" || n.Load() != 1 {
				t.Fatalf("Chat = %q, %v (%#v) after %d requests; want kind %d after 1, no text", text, err, e, n.Load(), tc.kind)
			}
			if !strings.Contains(err.Error(), tc.say) || strings.Contains(err.Error(), "malformed") {
				t.Errorf("error %q does not say %q (or calls the answer malformed)", err, tc.say)
			}
		})
	}

	// The tokens of an answer without text are counted: the server spent them.
	srv, _ := script(t, func(_ int64, w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, `{"choices":[{"message":{"content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"look","arguments":"{}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":9,"completion_tokens":4}}`)
	})
	if r, err := newClient(t, srv.URL, nil).Complete(context.Background(), Tag{}, hi(), nil); err == nil || r.PromptTokens != 9 || r.CompletionTokens != 4 {
		t.Errorf("Complete = %+v, %v; want the error with 9 and 4 tokens", r, err)
	}

	// Beside content, reasoning and an empty tool list change nothing (vLLM sends both).
	srv, _ = script(t, func(_ int64, w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, `{"choices":[{"message":{"role":"assistant","content":"A red apple.","reasoning_content":"Let me look.","tool_calls":[]},"finish_reason":"stop","stop_reason":null}],"usage":{"prompt_tokens":9,"completion_tokens":4,"prompt_tokens_details":null}}`)
	})
	r, err := newClient(t, srv.URL, nil).Complete(context.Background(), Tag{}, hi(), nil)
	if err != nil || r.Text != "A red apple." || r.PromptTokens != 9 || r.CompletionTokens != 4 {
		t.Fatalf("Complete = %+v, %v", r, err)
	}
}

// TestTopLevelErrorObjectIn200: vLLM's and SGLang's error body ({"object":"error",
// "message":…, "code":404}) is an error wherever it comes, never "no choices".
func TestTopLevelErrorObjectIn200(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprint("streamed=", stream), func(t *testing.T) {
			const obj = `{"object":"error","message":"The model ` + "`foo`" + ` does not exist.","type":"NotFoundError","param":null,"code":404}`
			srv, n := script(t, func(_ int64, w http.ResponseWriter, _ *http.Request) {
				if stream {
					w.Header().Set("Content-Type", "text/event-stream")
					io.WriteString(w, "data: "+obj+"\n\ndata: [DONE]\n\n")
					return
				}
				io.WriteString(w, obj)
			})
			_, err := newClient(t, srv.URL, nil).Chat(context.Background(), Tag{}, hi())
			var e *Error
			if !errors.As(err, &e) || e.Kind != KindAPI || n.Load() != 1 {
				t.Fatalf("Chat: %v after %d requests; want a KindAPI error after 1 (code 404 is not transient)", err, n.Load())
			}
			if !strings.Contains(err.Error(), "does not exist") || !strings.Contains(err.Error(), "code 404") {
				t.Errorf("error %q does not carry the server's message and code", err)
			}
		})
	}
}

// TestFilteredAnswerIsNoAnswer: finish_reason "content_filter" (OpenAI, Azure, Gemini's
// OpenAI-compatible API) means the platform stopped the answer: whatever text came is not
// the model's answer, streamed or not, and asking again gets the same.
func TestFilteredAnswerIsNoAnswer(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprint("streamed=", stream), func(t *testing.T) {
			srv, n := script(t, func(_ int64, w http.ResponseWriter, _ *http.Request) {
				if stream {
					w.Header().Set("Content-Type", "text/event-stream")
					io.WriteString(w, "data: {\"choices\":[{\"delta\":{\"content\":\"The person in the\"}}]}\n\n"+
						"data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"content_filter\"}]}\n\ndata: [DONE]\n\n")
					return
				}
				io.WriteString(w, `{"choices":[{"message":{"role":"assistant","content":"The person in the"},"finish_reason":"content_filter"}]}`)
			})
			text, err := newClient(t, srv.URL, nil).Chat(context.Background(), Tag{}, hi())
			var e *Error
			if !errors.As(err, &e) || e.Kind != KindFiltered || text != "" || n.Load() != 1 {
				t.Fatalf("Chat = %q, %v after %d requests; want a KindFiltered error after 1, no text", text, err, n.Load())
			}
			if !strings.Contains(err.Error(), "content filter") {
				t.Errorf("error %q does not say the content filter stopped the answer", err)
			}
		})
	}
}

// TestRefusalIsTheAnswer: OpenAI's structured outputs send a refusal as content null and
// "refusal": the model's words, taken as its answer (streamed too); content null with
// nothing in its place is no answer, not an empty one.
func TestRefusalIsTheAnswer(t *testing.T) {
	for _, tc := range []struct{ name, ctype, body string }{
		{"plain", "application/json", `{"choices":[{"message":{"role":"assistant","content":null,"refusal":"I can't help with that."},"finish_reason":"stop"}]}`},
		{"streamed", "text/event-stream", "data: {\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":null,\"refusal\":\"\"}}]}\n\n" +
			"data: {\"choices\":[{\"delta\":{\"refusal\":\"I can't \"}}]}\n\ndata: {\"choices\":[{\"delta\":{\"refusal\":\"help with that.\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, _ := script(t, func(_ int64, w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", tc.ctype)
				io.WriteString(w, tc.body)
			})
			text, err := newClient(t, srv.URL, nil).Chat(context.Background(), Tag{}, hi())
			if err != nil || text != "I can't help with that." {
				t.Fatalf("Chat = %q, %v; want the refusal", text, err)
			}
		})
	}
	srv, n := script(t, func(_ int64, w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, `{"choices":[{"message":{"role":"assistant","content":null},"finish_reason":"stop"}]}`)
	})
	text, err := newClient(t, srv.URL, nil).Chat(context.Background(), Tag{}, hi())
	var e *Error
	if !errors.As(err, &e) || e.Kind != KindMalformed || text != "" || n.Load() != 1 {
		t.Fatalf("Chat = %q, %v after %d requests; want a KindMalformed error after 1", text, err, n.Load())
	}
}

// TestRetryAfterAsADate: Retry-After may be an HTTP date (proxies and some hosted APIs send
// one): the time until it is waited, capped like seconds; a date already past waits the
// backoff, not nothing and not forever.
func TestRetryAfterAsADate(t *testing.T) {
	srv, n := script(t, func(n int64, w http.ResponseWriter, _ *http.Request) {
		switch n {
		case 1:
			w.Header().Set("Retry-After", time.Now().Add(45*time.Second).UTC().Format(http.TimeFormat))
			http.Error(w, "busy", http.StatusTooManyRequests)
		case 2:
			w.Header().Set("Retry-After", time.Now().Add(time.Hour).UTC().Format(http.TimeFormat))
			http.Error(w, "busy", http.StatusServiceUnavailable)
		case 3:
			w.Header().Set("Retry-After", "Mon, 02 Jan 2006 15:04:05 GMT")
			http.Error(w, "busy", http.StatusServiceUnavailable)
		default:
			ok(w, "fine")
		}
	})
	c := newClient(t, srv.URL, func(o *Options) { o.MaxRetries = 4; o.Backoff, o.MaxBackoff = time.Second, time.Second })
	waits := recordSleeps(c)
	if text, err := c.Chat(context.Background(), Tag{}, hi()); err != nil || text != "fine" || n.Load() != 4 {
		t.Fatalf("Chat = %q, %v after %d requests", text, err, n.Load())
	}
	w := *waits
	// An HTTP date has whole seconds: 45 s from now is 44-45 s away when read.
	if len(w) != 3 || w[0] < 43*time.Second || w[0] > 45*time.Second || w[1] != DefaultMaxRetryWait || w[2] < 500*time.Millisecond || w[2] > time.Second {
		t.Errorf("waits %v, want about 45s, the 2 min cap, then the backoff (0.5-1 s)", w)
	}
}

// TestGzipBody: servers behind nginx or a hosted gateway gzip their answers when the client
// accepts it; Go's transport asks and unpacks only while no Accept-Encoding is set by hand,
// which this guards (a plain body and an event stream with a comment line and CRLF line
// ends, both gzipped).
func TestGzipBody(t *testing.T) {
	for _, tc := range []struct{ ctype, body string }{
		{"application/json", `{"choices":[{"message":{"content":"A red apple."},"finish_reason":"stop"}]}`},
		{"text/event-stream", ": OPENROUTER PROCESSING\r\n\r\ndata: {\"choices\":[{\"delta\":{\"content\":\"A red \"}}]}\r\n\r\ndata: {\"choices\":[{\"delta\":{\"content\":\"apple.\"},\"finish_reason\":\"stop\"}]}\r\n\r\ndata: [DONE]\r\n\r\n"},
	} {
		t.Run(tc.ctype, func(t *testing.T) {
			srv, _ := script(t, func(_ int64, w http.ResponseWriter, r *http.Request) {
				if !strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
					http.Error(w, "this test wants gzip accepted", http.StatusBadRequest)
					return
				}
				w.Header().Set("Content-Type", tc.ctype)
				w.Header().Set("Content-Encoding", "gzip")
				zw := gzip.NewWriter(w)
				io.WriteString(zw, tc.body)
				zw.Close()
			})
			text, err := newClient(t, srv.URL, nil).Chat(context.Background(), Tag{}, hi())
			if err != nil || text != "A red apple." {
				t.Fatalf("Chat = %q, %v", text, err)
			}
		})
	}
}
