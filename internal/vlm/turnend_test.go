package vlm

import (
	"context"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"
)

// TestFilteredAnswerWithoutContent: Azure OpenAI stops a filtered answer with
// finish_reason "content_filter" and a message that has no content at all (or content
// null). That is the content filter, as the same answer streamed is, not a malformed
// response.
func TestFilteredAnswerWithoutContent(t *testing.T) {
	for _, body := range []string{
		`{"choices":[{"index":0,"message":{"role":"assistant"},"finish_reason":"content_filter"}]}`,
		`{"choices":[{"index":0,"message":{"role":"assistant","content":null},"finish_reason":"content_filter"}]}`,
		`{"choices":[{"index":0,"message":{"role":"assistant","content":null,"reasoning_content":"Let me look."},"finish_reason":"content_filter"}]}`,
	} {
		srv, n := script(t, func(_ int64, w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, body)
		})
		text, err := newClient(t, srv.URL, nil).Chat(context.Background(), Tag{}, hi())
		var e *Error
		if !errors.As(err, &e) || e.Kind != KindFiltered || text != "" || n.Load() != 1 {
			t.Errorf("body %s: Chat = %q, %v after %d requests; want a KindFiltered error after 1", body, text, err, n.Load())
		}
	}
}

// TestRateWaitLongerThanTheTurn: when the rate limit would hold an attempt past the turn's
// time limit, the turn is over at once, with the turn's own error (as a Retry-After that
// outlasts the turn ends it), not the rate limiter's message.
func TestRateWaitLongerThanTheTurn(t *testing.T) {
	srv, n := script(t, func(_ int64, w http.ResponseWriter, _ *http.Request) { ok(w, "x") })
	// One request per 100 s: the second waits far longer than its turn may last.
	c := newClient(t, srv.URL, func(o *Options) { o.RatePerSecond = 0.01; o.TurnTimeout = 10 * time.Second })
	if _, err := c.Chat(context.Background(), Tag{}, hi()); err != nil {
		t.Fatal(err)
	}
	text, err := c.Chat(context.Background(), Tag{}, hi())
	var e *Error
	if !errors.As(err, &e) || e.Kind != KindTimeout || !e.TurnTimeout || text != "" || n.Load() != 1 {
		t.Fatalf("Chat = %q, %v after %d requests; want the turn's timeout and no second request", text, err, n.Load())
	}
	// A caller's own deadline stays the caller's: the context's error, not the turn's.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := c.Chat(ctx, Tag{}, hi()); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("with the caller's deadline first: err = %v, want context.DeadlineExceeded", err)
	}
}
