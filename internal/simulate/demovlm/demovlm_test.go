package demovlm

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/m3bench/m3eval/internal/simulate"
	"github.com/m3bench/m3eval/internal/vlm"
)

func TestPersonaFor(t *testing.T) {
	for _, c := range []struct{ model, scene, want string }{
		{"gullible", "a", "gullible"},
		{"demo-confused", "a", "confused"},
		{"qwen2-vl-7b", "a", "faithful"},
		{"http500@a,b", "b", "http500"},
		{"http500@a,b", "c", "faithful"},
	} {
		if got := personaFor(c.model, c.scene); string(got) != c.want {
			t.Errorf("personaFor(%q, %q) = %s, want %s", c.model, c.scene, got, c.want)
		}
	}
}

// post sends one user turn with the images and returns the status and the answer.
func post(t *testing.T, url string, images []string, text string) (int, string) {
	t.Helper()
	var parts []map[string]any
	for _, im := range images {
		u, err := vlm.DataURL(im)
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, map[string]any{"type": "image_url", "image_url": map[string]string{"url": u}})
	}
	parts = append(parts, map[string]any{"type": "text", "text": text})
	body, _ := json.Marshal(map[string]any{"model": "faithful", "messages": []any{map[string]any{"role": "user", "content": parts}}})
	resp, err := http.Post(url+"/v1/chat/completions", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Choices []struct{ Message struct{ Content string } }
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil && resp.StatusCode == http.StatusOK {
		t.Fatalf("a 200 answer that is not a chat completion: %v", err) // an error status may carry any body
	}
	if len(out.Choices) == 0 {
		return resp.StatusCode, ""
	}
	return resp.StatusCode, out.Choices[0].Message.Content
}

// The server tells scenes apart by their images, and two scenes over the same images by the
// language of the conversation.
func TestSceneByImagesAndLanguage(t *testing.T) {
	file := "../../../annotations/demo/images/scenes.jsonl"
	scenes, err := simulate.ReadScenesFile(file)
	if err != nil {
		t.Fatal(err)
	}
	simulate.ResolveImages(scenes, file, filepath.Dir(file))
	s, err := New(scenes, os.ReadFile)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	defer srv.Close()
	img := func(name string) string { return filepath.Join(filepath.Dir(file), name) }
	street := []string{img("street_1.png"), img("street_2.png")}
	if code, a := post(t, srv.URL, street, "Here are 2 images. Describe what you see in each image."); code != 200 || !strings.Contains(a, "Image 2: There is a person (color: red)") {
		t.Errorf("English street: %d %q", code, a)
	}
	if code, a := post(t, srv.URL, street, "这里有2张图片，请分别描述每张图片中的内容。"); code != 200 || !strings.Contains(a, "图片2：有人（颜色：红色）") {
		t.Errorf("Chinese street: %d %q", code, a)
	}
	if code, a := post(t, srv.URL, []string{img("apples.png")}, "What is in the image?"); code != 200 || !strings.Contains(a, "plate (color: white)") {
		t.Errorf("apples: %d %q", code, a)
	}
	if code, _ := post(t, srv.URL, []string{img("street_2.png")}, "What is in the image?"); code != http.StatusBadRequest {
		t.Errorf("images of no scene: status %d", code)
	}
}
