package vlm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// script is a test server on 127.0.0.1 whose n-th request (1-based) gets reply(n).
func script(t *testing.T, reply func(n int64, w http.ResponseWriter, r *http.Request)) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reply(n.Add(1), w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func ok(w http.ResponseWriter, text string) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"message": map[string]any{"role": "assistant", "content": text}}}})
}

func newClient(t *testing.T, url string, mod func(*Options)) *Client {
	t.Helper()
	o := Options{Endpoint: url + "/v1", Model: "m", MaxRetries: 2, Backoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond, Timeout: 2 * time.Second}
	if mod != nil {
		mod(&o)
	}
	c, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestChatSendsTheConversationWithImagesAndKey(t *testing.T) {
	dir := t.TempDir()
	img := filepath.Join(dir, "a.png")
	png := []byte("\x89PNG\r\n\x1a\nfake")
	os.WriteFile(img, png, 0o644)
	var got []byte
	var auth, path string
	srv, _ := script(t, func(_ int64, w http.ResponseWriter, r *http.Request) {
		got, _ = io.ReadAll(r.Body)
		auth, path = r.Header.Get("Authorization"), r.URL.Path
		ok(w, "a red car")
	})
	var log bytes.Buffer
	c := newClient(t, srv.URL, func(o *Options) { o.APIKey = "sk-test"; o.Log = &log })
	msgs := []Message{
		{Role: RoleUser, Text: "What is in the image?", Images: []string{img, "https://example.com/b.jpg"}},
		{Role: RoleAssistant, Text: "A car."},
		{Role: RoleUser, Text: "What color?"},
	}
	text, err := c.Chat(context.Background(), Tag{"ep", 2}, msgs)
	if err != nil || text != "a red car" {
		t.Fatalf("Chat = %q, %v", text, err)
	}
	if auth != "Bearer sk-test" || path != "/v1/chat/completions" {
		t.Errorf("auth %q path %q", auth, path)
	}
	model, back, err := DecodeRequest(got)
	if err != nil || model != "m" || len(back) != 3 {
		t.Fatalf("request %s: %v", got, err)
	}
	want, _ := DataURL(img)
	if !strings.HasPrefix(want, "data:image/png;base64,") || back[0].Images[0] != want || back[0].Images[1] != "https://example.com/b.jpg" {
		t.Errorf("images sent: %v", back[0].Images)
	}
	if back[1].Role != RoleAssistant || back[1].Text != "A car." || back[2].Text != "What color?" {
		t.Errorf("conversation sent: %+v", back)
	}
	// The log holds the request with the image's path, not its bytes, and the response.
	var le map[string]any
	if err := json.Unmarshal(log.Bytes(), &le); err != nil {
		t.Fatalf("log %q: %v", log.String(), err)
	}
	if strings.Contains(log.String(), "base64") || !strings.Contains(log.String(), img) || le["episode"] != "ep" || le["turn"] != float64(2) || le["status"] != float64(200) {
		t.Errorf("log line: %s", log.String())
	}
}

func TestRetriesThenSucceeds(t *testing.T) {
	srv, n := script(t, func(n int64, w http.ResponseWriter, _ *http.Request) {
		switch n {
		case 1:
			w.Header().Set("Retry-After", "0")
			http.Error(w, "busy", http.StatusTooManyRequests)
		case 2:
			http.Error(w, "oops", http.StatusBadGateway)
		default:
			ok(w, "fine")
		}
	})
	var log bytes.Buffer
	c := newClient(t, srv.URL, func(o *Options) { o.Log = &log })
	text, err := c.Chat(context.Background(), Tag{"e", 1}, []Message{{Role: RoleUser, Text: "hi"}})
	if err != nil || text != "fine" || n.Load() != 3 {
		t.Fatalf("Chat = %q, %v after %d requests", text, err, n.Load())
	}
	if lines := strings.Count(log.String(), "\n"); lines != 3 {
		t.Errorf("log has %d lines, want one per attempt (3)", lines)
	}
}

func TestFailures(t *testing.T) {
	hang := make(chan struct{})
	t.Cleanup(func() { close(hang) })
	cases := []struct {
		name     string
		reply    func(w http.ResponseWriter, r *http.Request)
		kind     ErrorKind
		attempts int64
		says     string
	}{
		{"server error", func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "model crashed", 500) }, KindHTTP, 3, "HTTP 500 Internal Server Error: model crashed (3 attempts)"},
		{"bad request", func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "unknown model", 400) }, KindHTTP, 1, "HTTP 400 Bad Request: unknown model"},
		// A body that is not JSON (cut off, a proxy's page) is retried like a 5xx; JSON of
		// the wrong shape is the server's answer and is not.
		{"malformed", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, `{"choices": [`) }, KindMalformed, 3, "malformed response"},
		{"html page", func(w http.ResponseWriter, _ *http.Request) {
			io.WriteString(w, "<html><body>502 Bad Gateway</body></html>")
		}, KindMalformed, 3, "502 Bad Gateway</body></html> (3 attempts)"},
		{"no choices key", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, `{"id": "x"}`) }, KindMalformed, 1, `no "choices" list`},
		{"empty choices", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, `{"choices": []}`) }, KindEmpty, 1, "the response has no choices"},
		{"never answers", func(_ http.ResponseWriter, r *http.Request) {
			io.ReadAll(r.Body) // so the server notices the client hanging up
			select {
			case <-hang:
			case <-r.Context().Done():
			}
		}, KindTimeout, 3, "no response within 400ms (3 attempts)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv, n := script(t, func(_ int64, w http.ResponseWriter, r *http.Request) { tc.reply(w, r) })
			// 400 ms: long enough for a loaded machine to reach the handler on every attempt
			// (at 50 ms the third attempt could time out before the server counted it).
			c := newClient(t, srv.URL, func(o *Options) { o.Timeout = 400 * time.Millisecond })
			_, err := c.Chat(context.Background(), Tag{"e", 1}, []Message{{Role: RoleUser, Text: "hi"}})
			var e *Error
			if !errors.As(err, &e) || e.Kind != tc.kind {
				t.Fatalf("err = %v, want kind %d", err, tc.kind)
			}
			if n.Load() != tc.attempts || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("%d requests, error %q; want %d and %q", n.Load(), err, tc.attempts, tc.says)
			}
		})
	}
}

func TestConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	c := newClient(t, "http://"+addr, nil)
	_, err = c.Chat(context.Background(), Tag{"e", 1}, []Message{{Role: RoleUser, Text: "hi"}})
	var e *Error
	if !errors.As(err, &e) || e.Kind != KindConnection || e.Attempts != 3 {
		t.Fatalf("err = %v", err)
	}
}

func TestCancelStopsRetrying(t *testing.T) {
	srv, _ := script(t, func(_ int64, w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "x", http.StatusServiceUnavailable)
	})
	c := newClient(t, srv.URL, func(o *Options) { o.MaxRetries = 100; o.Backoff = time.Hour; o.MaxBackoff = time.Hour })
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := c.Chat(ctx, Tag{"e", 1}, []Message{{Role: RoleUser, Text: "hi"}})
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 5*time.Second {
		t.Fatalf("err = %v after %s", err, time.Since(start))
	}
}

func TestRateLimit(t *testing.T) {
	srv, _ := script(t, func(_ int64, w http.ResponseWriter, _ *http.Request) { ok(w, "x") })
	// 4 per second with a burst of 4: of 6 concurrent requests the last two wait 250 ms each.
	c := newClient(t, srv.URL, func(o *Options) { o.RatePerSecond = 4 })
	start := time.Now()
	var wg sync.WaitGroup
	for range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.Chat(context.Background(), Tag{"e", 1}, []Message{{Role: RoleUser, Text: "hi"}})
		}()
	}
	wg.Wait()
	if el := time.Since(start); el < 450*time.Millisecond {
		t.Errorf("6 requests at 4/s took %s, want at least 500ms", el)
	}
}

func TestNewRejectsBadOptions(t *testing.T) {
	for _, o := range []Options{{Model: "m"}, {Endpoint: "127.0.0.1:8000", Model: "m"}, {Endpoint: "http://x/v1"}} {
		if _, err := New(o); err == nil {
			t.Errorf("New(%+v) accepted", o)
		}
	}
	c, _ := New(Options{Endpoint: "http://x/v1/chat/completions/", Model: "m"})
	if c.URL() != "http://x/v1/chat/completions" {
		t.Errorf("URL %q", c.URL())
	}
}
