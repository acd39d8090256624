package judgerun_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/m3bench/m3eval/annotations"
	"github.com/m3bench/m3eval/internal/dataset"
	"github.com/m3bench/m3eval/internal/testkit"
)

// TestModelJudgeIsBlind (issue #37): VLMEvalKit, lmms-eval and OpenAI-log records whose ids,
// folders and image paths hold the answering model's name are imported and judged over real
// HTTP; no request body holds a model name, sample id, episode id or image file name (or
// path, or URL) of the imported turns, though every request carries every image. The bodies
// --print-prompt prints are byte for byte the bodies the endpoint received.
func TestModelJudgeIsBlind(t *testing.T) {
	dir := t.TempDir()
	png, err := fs.ReadFile(annotations.Demo, "demo/images/apples.png")
	if err != nil {
		t.Fatal(err)
	}
	park, err := fs.ReadFile(annotations.Demo, "demo/images/park.png")
	if err != nil {
		t.Fatal(err)
	}
	write := func(rel string, b []byte) string {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// The OpenAI log's image is on an HTTP server, its URL naming the model.
	imgSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Write(park)
	}))
	t.Cleanup(imgSrv.Close)

	// VLMEvalKit: a multi-turn MMDU row of {work_dir}/{model}/{model}_{dataset}.json, its
	// image a file named after the model.
	vlmImg := write("outputs/Qwen2-VL-7B-Instruct/images/Qwen2-VL-7B-Instruct_apples_0.png", png)
	row := []map[string]any{{
		"index":      7,
		"question":   "['<ImageHere>How many apples are on the table?', 'And if one is eaten?']",
		"answer":     "['Three.', 'Two.']",
		"image_path": fmt.Sprintf("[%q]", vlmImg),
		"prediction": []string{"There are three apples.", "Two would be left."},
	}}
	vlmFile := write("outputs/Qwen2-VL-7B-Instruct/Qwen2-VL-7B-Instruct_MMDU.json", mustJSON(t, row))
	// lmms-eval: a --log_samples file under the model's folder, its image embedded with the
	// model's name beside it.
	lmms := map[string]any{"doc_id": 3, "target": "B", "filtered_resps": "B", "doc_hash": "h",
		"input":       "How many apples are on the table? A. 2 B. 3 C. 4",
		"input_media": []string{"llava-onevision-qwen2-7b-ov_apples.png", "data:image/png;base64," + base64.StdEncoding.EncodeToString(png)}}
	lmmsFile := write("logs/llava-onevision-qwen2-7b-ov/20250612_101500_samples_mmbench_en_dev.jsonl", append(mustJSON(t, lmms), '\n'))
	// An OpenAI chat log: the conversation id and the image URL name the model.
	oai := map[string]any{"id": "gpt-4o-mini-2024-07-18/run-7/conv-1", "model": "gpt-4o-mini-2024-07-18",
		"messages": []any{
			map[string]any{"role": "user", "content": []any{
				map[string]any{"type": "text", "text": "Is there a dog in the park?"},
				map[string]any{"type": "image_url", "image_url": map[string]any{"url": imgSrv.URL + "/gpt-4o-mini-2024-07-18/park_gpt-4o-mini.png"}}}},
			map[string]any{"role": "assistant", "content": "Yes, one dog on the grass."},
			map[string]any{"role": "user", "content": "It is sitting on the bench, isn't it?"},
			map[string]any{"role": "assistant", "content": "No, it lies on the grass under the tree."},
		}}
	oaiFile := write("oai/chat.jsonl", append(mustJSON(t, oai), '\n'))
	db := filepath.Join(dir, "blind.db")
	importFiles(t, db, "", vlmFile, lmmsFile, oaiFile)

	// What the imported records hold that names whose answer it is.
	var turns []dataset.Turn
	s, _ := openDB(t, db, true)
	err = s.StreamJudgeTurns(context.Background(), nil, func(ts []dataset.Turn, _ []int64, _ []bool) error {
		turns = append(turns, ts...)
		return nil
	})
	s.Close()
	if err != nil {
		t.Fatal(err)
	}
	var secret []string
	models := map[string]bool{}
	for _, tr := range turns {
		secret = append(secret, tr.SampleID, tr.EpisodeID, tr.Model)
		models[tr.Model] = true
		for _, im := range tr.Images {
			secret = append(secret, im, filepath.Base(im), strings.TrimSuffix(filepath.Base(im), filepath.Ext(im)))
		}
	}
	for _, m := range []string{"Qwen2-VL-7B-Instruct", "llava-onevision-qwen2-7b-ov", "gpt-4o-mini-2024-07-18"} {
		if !models[m] {
			t.Fatalf("the import did not record model %q (models %v): the test would prove nothing", m, models)
		}
	}
	secret = append(secret, "Qwen2-VL", "llava-onevision", "gpt-4o-mini", "llava-onevision-qwen2-7b-ov_apples.png")
	if len(turns) != 5 {
		t.Fatalf("%d turns imported, want 5 (2 VLMEvalKit, 1 lmms-eval, 2 OpenAI)", len(turns))
	}

	vlm := testkit.StartJudgeVLM(t, nil, 0)
	args := []string{"--name", "blind", "--endpoint", vlm.Endpoint(), "--model", "judge-careful", "--concurrency", "1"}
	out := mustJudge(t, db, args...)
	if !strings.Contains(out, "5 turns scored") {
		t.Fatalf("judge: %s", out)
	}
	sent := vlm.Bodies()
	if len(sent) != 5 {
		t.Fatalf("%d requests, want 5", len(sent))
	}
	images := 0
	for _, b := range sent {
		low := strings.ToLower(string(b))
		for _, s := range secret {
			if s != "" && strings.Contains(low, strings.ToLower(s)) {
				t.Errorf("a request body holds %q:\n%.600s", s, b)
			}
		}
		images += strings.Count(string(b), `"image_url":{"url":"data:image/png;base64,`)
	}
	// Every turn's images went, as their bytes: 1+1 (VLMEvalKit), 1 (lmms-eval), 1+1 (OpenAI).
	if images != 5 {
		t.Errorf("%d images sent, want 5", images)
	}

	// --print-prompt --endpoint: the same bodies, byte for byte, and nothing sent.
	printed := printRequests(t, db, args...)
	if len(vlm.Bodies()) != 5 {
		t.Errorf("--print-prompt sent %d requests", len(vlm.Bodies())-5)
	}
	lines := bytes.Split(bytes.TrimSuffix(printed, []byte("\n")), []byte("\n"))
	if len(lines) != len(sent) {
		t.Fatalf("--print-prompt printed %d bodies, the endpoint got %d", len(lines), len(sent))
	}
	for i := range lines {
		if !bytes.Equal(lines[i], sent[i]) {
			t.Errorf("body %d: printed and sent differ:\nprinted %.300s\nsent    %.300s", i, lines[i], sent[i])
		}
	}
}

// printRequests is m3eval judge --print-prompt with the model judge's flags.
func printRequests(t *testing.T, db string, args ...string) []byte {
	t.Helper()
	out, err := tryPrintRequests(t, db, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// tryPrintRequests is printRequests that returns the command's error.
func tryPrintRequests(t *testing.T, db string, args ...string) ([]byte, error) {
	t.Helper()
	out, err := runJudge(t, db, append(slices.Clone(args), "--print-prompt")...)
	return []byte(out), err
}

// TestPrintPromptNamesTheTurnItCannotBuild: an image that is not there stops --print-prompt
// with an error that names the turn (on this machine's terminal, never in a request), as the
// run's "failed SAMPLE_ID: …" line does; the bare "image apples.png: no such file" left the
// user to search every turn for it.
func TestPrintPromptNamesTheTurnItCannotBuild(t *testing.T) {
	dir, db := modelJudgeFixture(t)
	if err := os.Remove(filepath.Join(dir, "apples.png")); err != nil {
		t.Fatal(err)
	}
	_, err := tryPrintRequests(t, db, "--name", "p", "--endpoint", "http://127.0.0.1:9/v1", "--model", "m", "--filter", "sample_id=mj_zh_turn_1")
	if err == nil || !strings.Contains(err.Error(), "mj_zh_turn_1") || !strings.Contains(err.Error(), "apples.png") {
		t.Fatalf("err %v, want it to name the turn and the image", err)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
