package demovlm

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
)

// The delivery personas answer as faithful (or, for a judge, as careful) does, but deliver
// the answer the way some real servers do, so the client's reading of each can be tried
// against a real server (issue #37):
//
//	streamed     a server-sent event stream of chunks, although "stream": false was asked
//	parts        message.content as an array of text parts
//	error200     the first try of each request: a 200 whose body is a transient error object
//	cut          every answer cut short with finish_reason "length"
//	retryafter   the first try of each request: 429 with Retry-After: 45
//	redirect     a 302 to a URL whose GET answers with a canned completion
//
// For the judge they are "judge-" and the name ("judge-streamed").
const (
	Streamed   Persona = "streamed"
	Parts      Persona = "parts"
	Error200   Persona = "error200"
	Cut        Persona = "cut"
	RetryAfter Persona = "retryafter"
	Redirect   Persona = "redirect"
)

// Deliveries lists the delivery personas.
var Deliveries = []Persona{Streamed, Parts, Error200, Cut, RetryAfter, Redirect}

// cutAt is how many bytes of an answer the cut persona keeps.
const cutAt = 19

// CannedAnswer is what the redirect persona's GET target answers: never an answer to the
// conversation, so a client that stores it has followed the redirect.
const CannedAnswer = "canned answer of a GET"

// deliver writes answer text for a request (its body's digest key) as the delivery persona
// d; tried remembers the requests that failed once. It reports whether d is a delivery
// persona (false: nothing written).
func deliver(w http.ResponseWriter, d Persona, key string, tried *sync.Map, resp map[string]any, text string) bool {
	if !slices.Contains(Deliveries, d) {
		return false
	}
	once := func() bool { // true on the first try of this request
		_, again := tried.LoadAndDelete(key)
		if !again {
			tried.Store(key, true)
		}
		return !again
	}
	choice := func(content any, finish string) []any {
		return []any{map[string]any{"index": 0, "finish_reason": finish, "message": map[string]any{"role": "assistant", "content": content}}}
	}
	w.Header().Set("Content-Type", "application/json")
	switch d {
	case Streamed:
		w.Header().Set("Content-Type", "text/event-stream")
		id := resp["id"]
		third := max(1, len(text)/3)
		var pieces []string
		for rest := text; rest != ""; {
			n := min(third, len(rest))
			for n < len(rest) && !utf8Start(rest[n]) {
				n++
			}
			pieces = append(pieces, rest[:n])
			rest = rest[n:]
		}
		chunks := []any{map[string]any{"id": id, "object": "chat.completion.chunk", "choices": []any{map[string]any{"index": 0, "delta": map[string]any{"role": "assistant"}}}}}
		for _, p := range pieces {
			chunks = append(chunks, map[string]any{"id": id, "object": "chat.completion.chunk", "choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": p}, "finish_reason": nil}}})
		}
		chunks = append(chunks, map[string]any{"id": id, "object": "chat.completion.chunk", "choices": []any{map[string]any{"index": 0, "delta": map[string]any{}, "finish_reason": "stop"}}})
		if u, ok := resp["usage"]; ok {
			chunks = append(chunks, map[string]any{"id": id, "object": "chat.completion.chunk", "choices": []any{}, "usage": u})
		}
		for _, c := range chunks {
			b, _ := json.Marshal(c)
			fmt.Fprintf(w, "data: %s\n\n", b)
			if f, ok := w.(http.Flusher); ok {
				f.Flush()
			}
		}
		io.WriteString(w, "data: [DONE]\n\n")
		return true
	case Parts:
		half := len(text) / 2
		for half < len(text) && !utf8Start(text[half]) {
			half++
		}
		resp["choices"] = choice([]any{map[string]any{"type": "text", "text": text[:half]}, map[string]any{"type": "text", "text": text[half:]}}, "stop")
	case Error200:
		if once() {
			io.WriteString(w, `{"object":"error","error":{"message":"The server is overloaded, please try again later (scripted)","type":"server_error","code":503}}`)
			return true
		}
	case Cut:
		n := min(cutAt, len(text))
		for n < len(text) && !utf8Start(text[n]) {
			n++
		}
		resp["choices"] = choice(text[:n], "length")
	case RetryAfter:
		if once() {
			w.Header().Set("Retry-After", "45")
			http.Error(w, `{"error":{"message":"rate limited (scripted): retry after 45 s"}}`, http.StatusTooManyRequests)
			return true
		}
	case Redirect:
		w.Header().Del("Content-Type")
		w.Header().Set("Location", "/v1/canned")
		w.WriteHeader(http.StatusFound)
		return true
	}
	json.NewEncoder(w).Encode(resp)
	return true
}

// serveCanned answers the redirect persona's target: any GET gets a canned completion.
func serveCanned(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, `{"id":"canned","object":"chat.completion","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"`+CannedAnswer+`"}}]}`)
}

// utf8Start reports whether b starts a UTF-8 sequence (a cut there keeps the text valid).
func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// deliveryOf reads a delivery persona from a model name ("" when it names none).
func deliveryOf(name string) Persona {
	p := Persona(strings.TrimPrefix(name, "demo-"))
	if slices.Contains(Deliveries, p) {
		return p
	}
	return ""
}
