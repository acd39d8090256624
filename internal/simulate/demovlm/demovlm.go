// Package demovlm is a scripted OpenAI-compatible chat completions server for trying and
// testing the simulator offline. It knows the scenes' facts, recognises which scene a
// conversation is about by its images, reads each user turn back into the simulator
// template that wrote it, and answers as one of a few personas:
//
//	faithful   answers from the scene's facts and rejects false claims
//	gullible   like faithful, but accepts every false claim and never asks which image
//	confused   confuses images (and, in a one-image scene, the objects' colors)
//	flaky      faithful, but every third turn fails once with 503 or 429, and every fourth
//	           once with a 200 whose body is a proxy's HTML error page (a retry recovers)
//
// and, to test a bad endpoint: http500, malformed, empty (no choices) and hang (never
// answers), and the delivery personas of delivery.go (streamed, parts, error200, cut,
// retryafter, redirect), which answer faithfully in the ways real servers differ. The request's model field picks the persona; "persona@scene1,scene2" applies it
// to those scenes only and answers faithfully elsewhere.
package demovlm

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/m3bench/m3eval/internal/simulate"
	"github.com/m3bench/m3eval/internal/vlm"
)

// Persona is how the server answers.
type Persona string

// The personas and failure modes.
const (
	Faithful  Persona = "faithful"
	Gullible  Persona = "gullible"
	Confused  Persona = "confused"
	Flaky     Persona = "flaky"
	HTTP500   Persona = "http500"
	Malformed Persona = "malformed"
	Empty     Persona = "empty"
	Hang      Persona = "hang"
)

// Personas lists every persona, the delivery personas (delivery.go) last.
var Personas = append([]Persona{Faithful, Gullible, Confused, Flaky, HTTP500, Malformed, Empty, Hang}, Deliveries...)

// Server answers chat completion requests about the scenes.
type Server struct {
	scenes   map[string]*simulate.Scene // image key -> scene
	requests atomic.Int64
	failed   sync.Map // flaky: request bodies that failed once
	judge    judgeState
}

// New indexes the scenes by their images; read returns a local image's bytes.
func New(scenes []simulate.Scene, read func(string) ([]byte, error)) (*Server, error) {
	s := &Server{scenes: map[string]*simulate.Scene{}}
	s.judge.labels = demoLabels()
	for i := range scenes {
		sc := &scenes[i]
		var keys []string
		for _, im := range sc.Images {
			if strings.HasPrefix(im, "http://") || strings.HasPrefix(im, "https://") {
				keys = append(keys, im)
				continue
			}
			b, err := read(im)
			if err != nil {
				return nil, fmt.Errorf("scene %s: %w", sc.ID, err)
			}
			keys = append(keys, digest(b))
		}
		key := strings.Join(keys, "|")
		if _, dup := s.scenes[key]; dup {
			// Two scenes with the same images (one per language, say) are told apart by the
			// language of the first user turn.
			key += "|" + string(sc.Language)
		}
		s.scenes[key] = sc
	}
	return s, nil
}

func digest(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// Requests is how many requests the server has received.
func (s *Server) Requests() int64 { return s.requests.Load() }

// ServeHTTP implements http.Handler: POST .../chat/completions.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := s.requests.Add(1)
	if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/canned") { // the redirect persona's target
		serveCanned(w)
		return
	}
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		http.Error(w, `{"error":{"message":"POST /v1/chat/completions"}}`, http.StatusNotFound)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	model, msgs, err := vlm.DecodeRequest(body)
	if err != nil || len(msgs) == 0 {
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	if isJudgeModel(model) { // a model judge's request (judge.go)
		s.serveJudge(w, r, n, model, body)
		return
	}
	sc, err := s.scene(msgs)
	if err != nil {
		http.Error(w, fmt.Sprintf(`{"error":{"message":%q}}`, err.Error()), http.StatusBadRequest)
		return
	}
	p := personaFor(model, sc.ID)
	if d := deliveryOf(string(p)); d != "" {
		text := answer(sc, Faithful, msgs)
		resp := map[string]any{"id": fmt.Sprintf("demo-%d", n), "object": "chat.completion", "model": model,
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": text}}}}
		deliver(w, d, digest(body), &s.failed, resp, text)
		return
	}
	switch p {
	case HTTP500:
		http.Error(w, `{"error":{"message":"internal error (scripted)"}}`, http.StatusInternalServerError)
		return
	case Malformed:
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"choices": [{"message": {"content": "cut off`)
		return
	case Empty:
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"x","object":"chat.completion","choices":[]}`)
		return
	case Hang:
		<-r.Context().Done()
		return
	case Flaky:
		// Every third turn of a conversation fails once (503, or 429 on every sixth), and
		// its retry succeeds: intermittent, yet the same for each episode however many run.
		users := 0
		for _, m := range msgs {
			if m.Role == vlm.RoleUser {
				users++
			}
		}
		key := digest(body)
		_, retried := s.failed.LoadAndDelete(key)
		if !retried && users%4 == 0 && users%3 != 0 {
			// A gateway's error page with status 200, as some proxies send.
			s.failed.Store(key, true)
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, "<html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1></body></html>\n")
			return
		}
		if !retried && users%3 == 0 {
			s.failed.Store(key, true)
			w.Header().Set("Retry-After", "0")
			if users%6 == 0 {
				http.Error(w, `{"error":{"message":"rate limited (scripted)"}}`, http.StatusTooManyRequests)
			} else {
				http.Error(w, `{"error":{"message":"overloaded (scripted)"}}`, http.StatusServiceUnavailable)
			}
			return
		}
	}
	text := answer(sc, p, msgs)
	resp := map[string]any{
		"id": fmt.Sprintf("demo-%d", n), "object": "chat.completion", "model": model,
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": text}}},
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(resp)
}

// personaFor reads the model field: "persona" or "persona@scene1,scene2".
func personaFor(model, scene string) Persona {
	name, scenes, scoped := strings.Cut(model, "@")
	p := Persona(strings.TrimPrefix(name, "demo-"))
	if !slices.Contains(Personas, p) {
		return Faithful
	}
	if scoped && !slices.Contains(strings.Split(scenes, ","), scene) {
		return Faithful
	}
	return p
}

// scene finds the scene of a conversation by the images of its first user turn.
func (s *Server) scene(msgs []vlm.Message) (*simulate.Scene, error) {
	var first *vlm.Message
	for i := range msgs {
		if msgs[i].Role == vlm.RoleUser {
			first = &msgs[i]
			break
		}
	}
	if first == nil || len(first.Images) == 0 {
		return nil, fmt.Errorf("the first user message carries no images")
	}
	var keys []string
	for _, u := range first.Images {
		if strings.HasPrefix(u, "data:") {
			_, b64, ok := strings.Cut(u, ";base64,")
			b, err := base64.StdEncoding.DecodeString(b64)
			if !ok || err != nil {
				return nil, fmt.Errorf("an image data URL is not base64")
			}
			keys = append(keys, digest(b))
			continue
		}
		keys = append(keys, u)
	}
	key := strings.Join(keys, "|")
	sc, ok := s.scenes[key]
	if alt, dup := s.scenes[key+"|"+string(simulate.Chinese)]; dup && isChinese(first.Text) {
		sc, ok = alt, true
	} else if alt, dup := s.scenes[key+"|"+string(simulate.English)]; dup && !isChinese(first.Text) {
		sc, ok = alt, true
	}
	if !ok {
		return nil, fmt.Errorf("no scene has these images")
	}
	return sc, nil
}

func isChinese(s string) bool {
	for _, r := range s {
		if r >= 0x4e00 && r <= 0x9fff {
			return true
		}
	}
	return false
}

// Serve serves the demo VLM for the scenes on listen until ctx ends (m3eval simulate
// --demo-vlm), each answer delayed by latency; it says where on stdout.
func Serve(ctx context.Context, scenes []simulate.Scene, listen string, latency time.Duration, stdout io.Writer) error {
	srv, err := New(scenes, os.ReadFile)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return fmt.Errorf("demo VLM: %w", err)
	}
	var h http.Handler = srv
	if latency > 0 {
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-time.After(latency):
			case <-r.Context().Done():
			}
			srv.ServeHTTP(w, r)
		})
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(stdout, "demo VLM for %d scenes at http://%s/v1 (personas by --model: faithful, gullible, confused, flaky, http500, malformed, empty, hang, streamed, parts, error200, cut, retryafter, redirect; judges: judge-careful, judge-lenient, …)\n",
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
