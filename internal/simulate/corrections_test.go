package simulate_test

import (
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/m3bench/m3eval/internal/simulate"
)

// dogScenes writes a scene of three images, each with a dog of its own color and a car in
// two of them, with its own small PNG files (the demo VLM tells scenes apart by their
// images), and returns it read and resolved.
func dogScenes(t testing.TB) []simulate.Scene {
	t.Helper()
	dir := t.TempDir()
	for i, c := range []color.RGBA{{200, 0, 0, 255}, {0, 200, 0, 255}, {0, 0, 200, 255}} {
		img := image.NewRGBA(image.Rect(0, 0, 4, 4))
		img.Set(0, 0, c)
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("d%d.png", i+1)))
		if err != nil {
			t.Fatal(err)
		}
		png.Encode(f, img)
		f.Close()
	}
	line := `{"id":"dogs_en","language":"en","images":["d1.png","d2.png","d3.png"],` +
		`"objects_per_image":[[{"id":"dog_1","type":"animal","name":"dog","attributes":{"color":"brown","size":"small"}},{"id":"car_1","type":"vehicle","name":"car","attributes":{"color":"red"}}],` +
		`[{"id":"dog_2","type":"animal","name":"dog","attributes":{"color":"black","size":"big"}}],` +
		`[{"id":"dog_3","type":"animal","name":"dog","attributes":{"color":"white","size":"small"}},{"id":"car_2","type":"vehicle","name":"car","attributes":{"color":"green"}}]],` +
		`"task":{"question":"Which image has the biggest dog?","answer":"Image 2: the big black dog.","required_evidence":[` +
		`{"id":"big","entity":"dog_2","attribute":"size","text":"the dog in Image 2 is big"},{"id":"black","entity":"dog_2","attribute":"color","text":"the big dog is black","depends_on":["big"]}]},` +
		`"updates":[{"entity":"dog_3","attribute":"color","new_value":"grey"}]}` + "\n" +
		`{"id":"dogs_zh","language":"zh","images":["d1.png","d2.png","d3.png"],` +
		`"objects_per_image":[[{"id":"dog_1","type":"animal","name":"狗","attributes":{"color":"棕色"}},{"id":"car_1","type":"vehicle","name":"车","attributes":{"color":"红色"}}],` +
		`[{"id":"dog_2","type":"animal","name":"狗","attributes":{"color":"黑色"}}],` +
		`[{"id":"dog_3","type":"animal","name":"狗","attributes":{"color":"白色"}},{"id":"car_2","type":"vehicle","name":"车","attributes":{"color":"绿色"}}]],` +
		`"task":{"question":"哪张图片里的狗是黑色的？","answer":"图片2。","required_evidence":[{"id":"black","entity":"dog_2","attribute":"color","text":"图片2的狗是黑色的"}]},` +
		`"updates":[{"entity":"dog_1","attribute":"color","new_value":"灰色"}]}` + "\n"
	path := filepath.Join(dir, "dogs.jsonl")
	if err := os.WriteFile(path, []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	scenes, err := simulate.ReadScenesFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := simulate.ResolveImages(scenes, path, dir); err != nil {
		t.Fatal(err)
	}
	return scenes
}

// sceneObject finds the object a meta entity names: its display name, in meta.target_image
// when the scene has several images.
func sceneObject(sc *simulate.Scene, entity string, target int) (*simulate.Object, int) {
	name, img := simulate.SplitQualified(entity, sc.Language)
	if img == 0 {
		img = target
	}
	var found *simulate.Object
	at := 0
	for i := range sc.ObjectsPerImage {
		if img > 0 && i != img-1 {
			continue
		}
		for j := range sc.ObjectsPerImage[i] {
			o := &sc.ObjectsPerImage[i][j]
			if simulate.DisplayName(o, sc.Language) == name {
				if found != nil {
					return nil, 0 // ambiguous: the meta does not say which
				}
				found, at = o, i+1
			}
		}
	}
	return found, at
}

// section is the part of an answer about one image: from "Image N:" ("图片N：") to the next
// image's heading; the whole answer in a one-image scene or when it names no image.
func section(answer string, img int, lang simulate.Language) string {
	if img == 0 {
		return answer
	}
	head := func(n int) string {
		if lang == simulate.Chinese {
			return fmt.Sprintf("图片%d", n)
		}
		return fmt.Sprintf("Image %d", n)
	}
	i := strings.Index(answer, head(img))
	if i < 0 {
		return ""
	}
	rest := answer[i:]
	for n := 1; n < 10; n++ {
		if n == img {
			continue
		}
		if j := strings.Index(rest, head(n)); j > 0 {
			rest = rest[:j]
		}
	}
	return rest
}

// No false corrections: the faithful persona is never told it is wrong; the confused one is
// corrected only about what it said of the object named, with that object's value at the
// time as the truth.
func TestNegationOnlyForWhatTheModelGotWrong(t *testing.T) {
	scenes := append(loadDemo(t), dogScenes(t)...)
	byID := map[string]*simulate.Scene{}
	for i := range scenes {
		byID[scenes[i].ID] = &scenes[i]
	}
	srv, _ := demoServer(t, scenes)
	for _, persona := range []string{"faithful", "confused"} {
		negations := 0
		for _, turns := range []int{10, 20} {
			for _, seed := range []uint64{1, 42, 99} {
				out, sum, err := run(t, scenes, client(t, srv.URL, persona, nil), persona, func(o *simulate.Options) {
					o.Turns, o.Seed = turns, seed
				})
				if err != nil {
					t.Fatalf("%v: %+v", err, sum.Failed)
				}
				for id, ep := range byEpisode(readTurns(t, out)) {
					sc := byID[strings.SplitN(id, "_"+map[bool]string{true: "rules", false: "cross"}[strings.Contains(id, "_rules_")], 2)[0]]
					if sc == nil {
						t.Fatalf("episode %s: no scene", id)
					}
					// The scene's values as the updates so far left them.
					state := map[string]map[string]string{}
					for _, list := range sc.ObjectsPerImage {
						for _, o := range list {
							state[o.ID] = map[string]string{}
							for a, v := range o.Attributes {
								state[o.ID][a] = v
							}
						}
					}
					for i, r := range ep {
						m := r.Meta
						if len(sc.Images) > 1 && m.Entity != "" && r.ActionType != simulate.ActCrossImageConfusion {
							if o, _ := sceneObject(sc, m.Entity, m.TargetImage); o == nil {
								t.Errorf("%s: meta entity %q (image %d) does not name one object", r.SampleID, m.Entity, m.TargetImage)
							}
						}
						switch r.ActionType {
						case simulate.ActUpdate:
							o, _ := sceneObject(sc, m.Entity, m.TargetImage)
							if o != nil {
								state[o.ID][m.Attribute] = m.NewValue
							}
						case simulate.ActNegation:
							negations++
							if persona == "faithful" {
								t.Errorf("%s (seed %d): the faithful model was corrected: %q after %q", r.SampleID, seed, r.UserMessage, ep[i-1].VLMResponse)
								continue
							}
							o, img := sceneObject(sc, m.Entity, m.TargetImage)
							if o == nil {
								t.Errorf("%s: negation of %q names no single object", r.SampleID, m.Entity)
								continue
							}
							if len(sc.Images) < 2 {
								img = 0
							}
							sec := section(ep[i-1].VLMResponse, img, sc.Language)
							said := false
							for _, s := range strings.FieldsFunc(sec, func(r rune) bool { return r == '.' || r == '。' }) {
								if strings.Contains(s, simulate.DisplayName(o, sc.Language)) && strings.Contains(s, m.FalseValue) {
									said = true
								}
							}
							if !said {
								t.Errorf("%s: false_value %q: the previous answer %q did not say it of %s", r.SampleID, m.FalseValue, ep[i-1].VLMResponse, m.Entity)
							}
							if tv := state[o.ID][m.Attribute]; !simulate.SameValue(tv, m.TrueValue) {
								t.Errorf("%s: true_value %q, but %s's %s is %q at this turn", r.SampleID, m.TrueValue, o.ID, m.Attribute, tv)
							}
						}
					}
				}
			}
		}
		if persona == "confused" && negations == 0 {
			t.Errorf("the confused persona was never corrected")
		}
		t.Logf("%s: %d negation turns", persona, negations)
	}
}
