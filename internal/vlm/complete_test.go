package vlm

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// TestComplete: the response_format goes out with the request, the usage comes back, and
// the attempts count the retry after a 429.
func TestComplete(t *testing.T) {
	var n atomic.Int32
	var got map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if n.Add(1) == 1 {
			w.Header().Set("Retry-After", "0")
			http.Error(w, "slow down", http.StatusTooManyRequests)
			return
		}
		got = nil
		if err := json.Unmarshal(b, &got); err != nil {
			t.Errorf("request body %s: %v", b, err)
		}
		io.WriteString(w, `{"choices":[{"message":{"content":"{\"a\":1}"}}],"usage":{"prompt_tokens":120,"completion_tokens":7}}`)
	}))
	defer srv.Close()
	c, err := New(Options{Endpoint: srv.URL, Model: "m", MaxRetries: 2, Backoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	format := json.RawMessage(`{"type":"json_schema","json_schema":{"name":"x","schema":{"type":"object"}}}`)
	r, err := c.Complete(context.Background(), Tag{}, []Message{{Role: RoleUser, Text: "hi"}}, format)
	if err != nil {
		t.Fatal(err)
	}
	if r.Text != `{"a":1}` || r.PromptTokens != 120 || r.CompletionTokens != 7 || r.Attempts != 2 {
		t.Fatalf("reply %+v", r)
	}
	if rf, _ := got["response_format"].(map[string]any); rf["type"] != "json_schema" || got["model"] != "m" {
		t.Fatalf("request %v", got)
	}
	// Chat sends no response_format.
	if _, err := c.Chat(context.Background(), Tag{}, []Message{{Role: RoleUser, Text: "hi"}}); err != nil || got["response_format"] != nil {
		t.Fatalf("chat: %v %v", err, got["response_format"])
	}
}
