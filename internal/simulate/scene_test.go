package simulate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const demoScenes = "../../annotations/scenes/demo.jsonl"

func TestDemoScenesAreValid(t *testing.T) {
	scenes, err := ReadScenesFile(demoScenes)
	if err != nil {
		t.Fatal(err)
	}
	if len(scenes) < 4 {
		t.Fatalf("%d demo scenes", len(scenes))
	}
	langs := map[Language]bool{}
	for _, sc := range scenes {
		langs[sc.Language] = true
	}
	if !langs[English] || !langs[Chinese] {
		t.Errorf("the demo scenes should cover both languages: %v", langs)
	}
	if err := ResolveImages(scenes, demoScenes, filepath.Dir(demoScenes)); err != nil {
		t.Fatal(err)
	}
	for _, sc := range scenes {
		for _, im := range sc.Images {
			if !strings.Contains(filepath.ToSlash(im), "annotations/demo/images/") {
				t.Errorf("%s: image %s is not a demo image", sc.ID, im)
			}
		}
	}
}

const goodScene = `{"id":"s1","language":"en","images":["a.png"],"objects_per_image":[[{"id":"car_1","type":"vehicle","attributes":{"color":"red"}}]],"task":{"question":"q","answer":"a","required_evidence":[{"id":"e1","entity":"car_1","attribute":"color","text":"a red car"}]}}`

func TestSceneErrorsNameFileLineAndField(t *testing.T) {
	cases := []struct {
		name, line, want string
	}{
		{"not JSON", `{"id":`, "scenes.jsonl:2: invalid JSON"},
		{"missing id", strings.Replace(goodScene, `"id":"s1",`, "", 1), "scenes.jsonl:2: id: missing"},
		{"bad language", strings.Replace(goodScene, `"en"`, `"fr"`, 1), "scenes.jsonl:2: language: value must be one of"},
		{"attribute not text", strings.Replace(goodScene, `"color":"red"`, `"color":3`, 1), "scenes.jsonl:2: objects_per_image[0][0].attributes.color: got number, want string"},
		{"unknown field", strings.Replace(goodScene, `"language"`, `"colour":1,"language"`, 1), "scenes.jsonl:2: colour: unknown field"},
		{"object lists", strings.Replace(goodScene, `"images":["a.png"]`, `"images":["a.png","b.png"]`, 1), "scenes.jsonl:2: objects_per_image: 1 lists for 2 images"},
		{"evidence entity", strings.Replace(goodScene, `"entity":"car_1"`, `"entity":"bus"`, 1), `scenes.jsonl:2: task.required_evidence[0].entity: "bus" is not an object id`},
		{"dependency", strings.Replace(goodScene, `"text":"a red car"`, `"text":"a red car","depends_on":["e9"]`, 1), `scenes.jsonl:2: task.required_evidence[0].depends_on[0]: "e9" is not the id`},
		{"duplicate scene", goodScene, `scenes.jsonl:2: id: "s1" is also the id of line 1`},
		{"update attribute", strings.TrimSuffix(goodScene, "}") + `,"updates":[{"entity":"car_1","attribute":"size","new_value":"big"}]}`, `scenes.jsonl:2: updates[0].attribute: object "car_1" has no attribute "size"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			first := goodScene
			if tc.name != "duplicate scene" {
				first = strings.Replace(goodScene, `"s1"`, `"s0"`, 1)
			}
			_, err := ReadScenes("scenes.jsonl", strings.NewReader(first+"\n"+tc.line+"\n"))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}

func TestResolveImagesNamesTheMissingFile(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.png"), []byte("x"), 0o644)
	scenes, err := ReadScenes("s.jsonl", strings.NewReader(goodScene+"\n"+strings.Replace(strings.Replace(goodScene, `"s1"`, `"s2"`, 1), "a.png", "missing.png", 1)))
	if err != nil {
		t.Fatal(err)
	}
	err = ResolveImages(scenes, "s.jsonl", dir)
	if err == nil || !strings.Contains(err.Error(), "s.jsonl:2: images[0]:") || !strings.Contains(err.Error(), "missing.png: no such file") {
		t.Fatalf("error %v", err)
	}
	if scenes[0].Images[0] != filepath.Join(dir, "a.png") {
		t.Errorf("resolved %s", scenes[0].Images[0])
	}
}
