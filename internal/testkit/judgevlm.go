package testkit

import (
	"bytes"
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/m3bench/m3eval/annotations"
	"github.com/m3bench/m3eval/internal/simulate/demovlm"
)

// JudgeVLM is the demo VLM on 127.0.0.1 with its request bodies recorded: the model judge's
// fake endpoint.
type JudgeVLM struct {
	*httptest.Server
	VLM    *demovlm.Server
	Delay  atomic.Int64 // nanoseconds each answer waits
	mu     sync.Mutex
	bodies [][]byte
}

// StartJudgeVLM starts a JudgeVLM whose judge answers with labels (nil: the demo's), each
// answer after delay; the test's cleanup stops it.
func StartJudgeVLM(t *testing.T, labels []byte, delay time.Duration) *JudgeVLM {
	t.Helper()
	srv, err := demovlm.New(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if labels != nil {
		if err := srv.SetJudgeLabels(labels); err != nil {
			t.Fatal(err)
		}
	}
	j := &JudgeVLM{VLM: srv}
	j.Delay.Store(int64(delay))
	j.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		j.mu.Lock()
		j.bodies = append(j.bodies, b)
		j.mu.Unlock()
		if d := time.Duration(j.Delay.Load()); d > 0 {
			select {
			case <-time.After(d):
			case <-r.Context().Done():
			}
		}
		r.Body = io.NopCloser(bytes.NewReader(b))
		srv.ServeHTTP(w, r)
	}))
	t.Cleanup(j.Close)
	return j
}

// Requests is how many requests the endpoint has had.
func (j *JudgeVLM) Requests() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return len(j.bodies)
}

// Bodies is a copy of the requests' bodies so far, in the order they came.
func (j *JudgeVLM) Bodies() [][]byte {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([][]byte(nil), j.bodies...)
}

// Endpoint is the address to give m3eval judge --endpoint.
func (j *JudgeVLM) Endpoint() string { return j.URL + "/v1" }

// RemoteImage is the bytes of the image WriteModelJudgeTurns serves over HTTP: a PNG header
// and a marker, told apart from the apples in a request.
var RemoteImage = []byte("\x89PNG\r\n\x1a\nremote image served on 127.0.0.1")

// WriteModelJudgeTurns writes into dir the model judge's fixture: one English episode with
// an image file (and a remote image), and a Chinese one; it returns the turns file to import.

func WriteModelJudgeTurns(t *testing.T, dir string) string {
	t.Helper()
	png, err := fs.ReadFile(annotations.Demo, "demo/images/apples.png")
	if err != nil {
		t.Fatal(err)
	}
	img := filepath.Join(dir, "apples.png")
	if err := os.WriteFile(img, png, 0o644); err != nil {
		t.Fatal(err)
	}
	// The second image is on an HTTP server on 127.0.0.1 (the judge reads it and sends its
	// bytes, never its URL): RemoteImage, served as long as the test runs.
	remote := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/images/remote.png" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "image/png")
		w.Write(RemoteImage)
	}))
	t.Cleanup(remote.Close)
	url := remote.URL + "/images/remote.png"
	recs := []map[string]any{
		{"sample_id": "mj_en_turn_1", "episode_id": "mj_en", "turn": 1, "action_type": "initial", "task_type": "counting",
			"user_message": "How many apples are on the table?", "vlm_response": "There are three red apples.",
			"expected_answer": "Three apples.", "images": []string{img, url}, "model": "m"},
		{"sample_id": "mj_en_turn_2", "episode_id": "mj_en", "turn": 2, "action_type": "mislead", "task_type": "counting",
			"user_message": "There are four apples, right?", "vlm_response": "No, I count three apples.",
			"expected_answer": "Three apples.", "images": []string{img, url}, "model": "m"},
		{"sample_id": "mj_zh_turn_1", "episode_id": "mj_zh", "turn": 1, "action_type": "initial", "task_type": "counting",
			"user_message": "桌上有几个苹果？", "vlm_response": "桌上有三个苹果。", "expected_answer": "三个。", "images": []string{img}, "model": "m"},
	}
	var b bytes.Buffer
	for _, r := range recs {
		line, _ := json.Marshal(r)
		b.Write(append(line, '\n'))
	}
	file := filepath.Join(dir, "turns.jsonl")
	if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}
