package simulate

import (
	"bytes"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const demoScenes = "../../annotations/demo/images/scenes.jsonl"

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

// writePNG writes a small valid PNG.
func writePNG(t *testing.T, path string) {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, 2, 2))); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestResolveImagesNamesTheMissingFile(t *testing.T) {
	dir := t.TempDir()
	writePNG(t, filepath.Join(dir, "a.png"))
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

// A scene's image paths stay inside the images directory and name images: anything else is
// refused when the scenes are read, before any request (a scene naming /etc/shadow had it
// posted to the endpoint as a data URL).
func TestResolveImagesRefusesWhatIsNotAnImageInside(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "scenes")
	os.Mkdir(dir, 0o755)
	writePNG(t, filepath.Join(dir, "a.png"))
	writePNG(t, filepath.Join(base, "outside.png"))
	os.WriteFile(filepath.Join(dir, "notes.png"), []byte("password=hunter2\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "secret.txt"), []byte("password=hunter2\n"), 0o644)
	os.Symlink(filepath.Join(base, "outside.png"), filepath.Join(dir, "link.png"))
	os.Symlink("/etc/passwd", filepath.Join(dir, "passwd.png"))
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	writePNG(t, filepath.Join(dir, "sub", "b.png"))
	cases := []struct{ path, want string }{
		{"/etc/passwd", "outside the images directory"},
		{"/etc/shadow", "/etc/shadow: "},
		{"../outside.png", "outside the images directory"},
		{"sub/../../outside.png", "outside the images directory"},
		{"link.png", "outside the images directory"},
		{"passwd.png", "outside the images directory"},
		{"notes.png", "not an image"},
		{"secret.txt", "not an image"},
		{"sub", "not a regular file"},
		{"data:text/plain;base64,aGk=", "not an image"},
	}
	for _, tc := range cases {
		line := strings.Replace(goodScene, `"a.png"`, strconv.Quote(tc.path), 1)
		scenes, err := ReadScenes("s.jsonl", strings.NewReader(line))
		if err != nil {
			t.Fatal(err)
		}
		err = ResolveImages(scenes, "s.jsonl", dir)
		if err == nil || !strings.Contains(err.Error(), "s.jsonl:1: images[0]:") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.path, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%s: the error shows the file's content: %v", tc.path, err)
		}
	}
	// Inside, by a relative path, a path through a subdirectory, or an absolute path.
	for _, ok := range []string{"a.png", "sub/b.png", "./sub/../a.png", filepath.Join(dir, "a.png")} {
		scenes, _ := ReadScenes("s.jsonl", strings.NewReader(strings.Replace(goodScene, `"a.png"`, strconv.Quote(ok), 1)))
		if err := ResolveImages(scenes, "s.jsonl", dir); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	// --images DIR: the same paths resolve there instead.
	scenes, _ := ReadScenes("s.jsonl", strings.NewReader(strings.Replace(goodScene, `"a.png"`, `"outside.png"`, 1)))
	if err := ResolveImages(scenes, "s.jsonl", base); err != nil || scenes[0].Images[0] != filepath.Join(base, "outside.png") {
		t.Errorf("--images %s: %v %v", base, err, scenes[0].Images)
	}
}
