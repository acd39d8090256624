package illusion

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestNormalize(t *testing.T) {
	tests := []struct{ in, want string }{
		{"  Sand_dune ", "sand dune"},
		{"Answer: Face-Emoji!", "answer face emoji"},
		{"McDonald's.", "mcdonalds"},
		{"Mercedes\tBenz\n\n", "mercedes benz"},
		{"a _ - b", "a b"},
		{"(Stationery)", "stationery"},
		{"ÉCOLE—Ünïcode…", "écoleünïcode"},
		{"", ""},
		{"!!!", ""},
	}
	for _, tt := range tests {
		if got := Normalize(tt.in); got != tt.want {
			t.Errorf("Normalize(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestMatch(t *testing.T) {
	tests := []struct {
		resp, truth string
		want        bool
	}{
		{"The answer is Animal.", "animal", true},
		{"animals", "animal", true}, // containment, as in the guide
		{"Sand dune", "Sand_dune", true},
		{"sand-dune", "Sand_dune", true},
		{"sanddune", "Sand_dune", false},
		{"Stationery", "Stationary", true},
		{"stationary", "Stationary", true},
		{"Stationery", "stationery", true},
		{"Station", "Stationary", false},
		{"Face emoji", "face_emoji", true},
		{"Vehicle", "animal", false},
		{"", "animal", false},
		{"anything", "", false},
	}
	for _, tt := range tests {
		if got := Match(tt.resp, tt.truth); got != tt.want {
			t.Errorf("Match(%q, %q) = %v, want %v", tt.resp, tt.truth, got, tt.want)
		}
	}
}

func TestField(t *testing.T) {
	resp := "Shape: Animal\nScene: Sand dune\n"
	if got := Field(resp, KindShape); got != "Animal" {
		t.Errorf("shape field %q", got)
	}
	if got := Field(resp, KindScene); got != "Sand dune" {
		t.Errorf("scene field %q", got)
	}
	if got := Field("just a cat", KindScene); got != "just a cat" {
		t.Errorf("fallback %q", got)
	}
}

func TestAnswerLabel(t *testing.T) {
	vocab := []string{"animal", "ocean", "sand", "sand dune", "stationary"}
	tests := []struct{ resp, want string }{
		{"i think it is an ocean or an animal", "ocean"},
		{"sand dune", "sand dune"},
		{"stationery", "stationary"},
		{"", "(empty)"},
		{"a very long answer that names no class of the vocabulary at all", "other: a very long answer that names no class o…"},
	}
	for _, tt := range tests {
		if got := answerLabel(Normalize(tt.resp), vocab); got != tt.want {
			t.Errorf("answerLabel(%q) = %q, want %q", tt.resp, got, tt.want)
		}
	}
}

func mustName(t *testing.T, s string) ImageName {
	t.Helper()
	n, err := ParseImageName(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestSummarizeAndConfusions(t *testing.T) {
	a := mustName(t, "animal-1-Ocean-Easy-1.png")
	v := mustName(t, "vehicle-2-Sand_dune-Hard-1.png")
	vocab := Vocabulary([]ImageName{a, v})
	items := []Item{
		Score("ICON", KindShape, 0, a, "Animal", vocab),
		Score("ICON", KindShape, 1, v, "ocean", vocab),
		Score("ICON", KindShape, 2, v, "Ocean!", vocab),
		Score("ICON", KindShape, 3, v, "vehicle", vocab),
	}
	rows := Summarize(items, "")
	want := []struct {
		group   string
		n, hits int
	}{{"all", 4, 2}, {"Easy", 1, 1}, {"Hard", 3, 1}}
	if len(rows) != len(want) {
		t.Fatalf("rows %+v", rows)
	}
	for i, w := range want {
		if rows[i].Group != w.group || rows[i].N != w.n || rows[i].Hits != w.hits {
			t.Errorf("row %d = %+v, want %+v", i, rows[i], w)
		}
	}
	byScene := Summarize(items, KindScene)
	if len(byScene) != 3 || byScene[1].Group != "ocean" || byScene[2].Group != "sand dune" || byScene[2].N != 3 {
		t.Errorf("by scene %+v", byScene)
	}
	conf := Confusions(items, 5)
	if len(conf) != 1 || conf[0].Truth != "vehicle" || conf[0].Answer != "ocean" || conf[0].Count != 2 {
		t.Errorf("confusions %+v", conf)
	}
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestReadLogLayouts(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	// Current lmms-eval: filtered_resps a list, per-metric key, no doc.
	p := writeFile(t, dir, "20250101_samples_illusionbench_arshia_icon_shape_test.jsonl",
		`{"doc_id": 0, "target": "", "filtered_resps": ["Animal"], "resps": [["Animal"]], "input": "q", "shape_recall": 1}`+"\n"+
			`{"doc_id": 1, "target": "", "filtered_resps": "Ocean", "shape_recall": 0}`+"\n")
	lg, err := ReadLog(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if lg.Task != "illusionbench_arshia_icon_shape_test" || len(lg.Records) != 2 || lg.Records[1].Response != "Ocean" ||
		lg.Records[0].Metrics["shape_recall"] != 1 {
		t.Fatalf("log %+v", lg)
	}
	if ks := lg.Kinds(); len(ks) != 1 || ks[0] != KindShape {
		t.Fatalf("kinds %v", ks)
	}
	if s := lg.SplitOf([]string{"Illusion_ICON", "Illusion_IN", "Illusion_LOGO"}); s != "Illusion_ICON" {
		t.Fatalf("split %q", s)
	}
	// Older: doc kept, only resps.
	p = writeFile(t, dir, "samples_x_scene.jsonl", `{"doc_id": 3, "doc": {"image_name": "a-1-b-Easy-1.png"}, "resps": [["b"]]}`+"\n")
	lg, err = ReadLog(ctx, p)
	if err != nil || lg.Records[0].ImageName != "a-1-b-Easy-1.png" || lg.Records[0].Response != "b" || lg.Kinds()[0] != KindScene {
		t.Fatalf("log %+v, %v", lg, err)
	}
	// Oldest: one JSON with a logs list, pretty-printed.
	p = writeFile(t, dir, "model_illusionbench_arshia_in_scene_test.json", `{
  "args": {"task": "x"},
  "logs": [
    {"doc_id": 0, "filtered_resps": ["Ocean"], "scene_recall": 1},
    {"doc_id": 1, "filtered_resps": [], "scene_recall": 0}
  ]
}`)
	lg, err = ReadLog(ctx, p)
	if err != nil || len(lg.Records) != 2 || lg.Records[1].Response != "" || lg.Records[0].Where != p+": logs[0]" {
		t.Fatalf("log %+v, %v", lg, err)
	}
	if s := lg.SplitOf([]string{"Illusion_ICON", "Illusion_IN"}); s != "Illusion_IN" {
		t.Fatalf("split %q", s)
	}
}

func TestReadLogErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct{ content, want string }{
		{`{"doc_id": 0, "filtered_resps": ["a"]}` + "\n" + `{"filtered_resps": ["a"]}`, ":2: field doc_id: missing"},
		{`{"doc_id": "x", "filtered_resps": ["a"]}`, ":1: field doc_id: not a number"},
		{`{"doc_id": 1.5, "filtered_resps": ["a"]}`, ":1: field doc_id: not a non-negative integer"},
		{"\n\n" + `{"doc_id": 1}`, ":3: field filtered_resps: missing"},
		{`{"doc_id": 1, "filtered_resps": [3]}`, ":1: field filtered_resps: no string"},
		{`{"doc_id": 1, "filtered_resps": "a", "doc": {"image_name": 5}}`, ":1: field doc.image_name: not a string"},
		{`{"doc_id": 1, "filtered_resps": "a"` + "\n", ":1: not a JSON object"},
		{`{"logs": [{"doc_id": 0, "filtered_resps": "a"}, {"doc_id": -1, "filtered_resps": "a"}]}`, ": logs[1]: field doc_id"},
		{"", ": no samples"},
	}
	for i, tt := range tests {
		p := writeFile(t, dir, "log.jsonl", tt.content)
		_, err := ReadLog(context.Background(), p)
		if err == nil || !strings.Contains(err.Error(), p+tt.want) {
			t.Errorf("case %d: error %v, want %q", i, err, p+tt.want)
		}
	}
}

func TestScoreLogs(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	ts := writeFile(t, dir, "icon.jsonl",
		`{"image_name": "animal-1-Ocean-Easy-1.png"}`+"\n"+
			`{"image_name": "broken"}`+"\n"+
			`{"image_name": "Stationary-2-Sand_dune-Hard-1.png"}`+"\n"+
			`{"image_name": "vehicle-3-Ocean-Medium-1.png"}`+"\n")
	set, err := LoadTestSet(ctx, "Illusion_ICON", ts)
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Docs) != 3 || set.Dropped != 1 {
		t.Fatalf("test set %+v", set)
	}
	shape := writeFile(t, dir, "samples_illusionbench_arshia_icon_shape_test.jsonl",
		`{"doc_id": 0, "filtered_resps": ["Animal"], "shape_recall": 1}`+"\n"+
			`{"doc_id": 1, "filtered_resps": ["Stationery"], "shape_recall": 0}`+"\n"+
			`{"doc_id": 2, "filtered_resps": ["Ocean"], "shape_recall": 0}`+"\n")
	res, err := ScoreLogs(ctx, []*TestSet{set}, []LogInput{{Path: shape}}, ScoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hits := []bool{true, true, false}
	for i, it := range res.Items {
		if it.Hit != hits[i] || it.Split != "Illusion_ICON" || it.Kind != KindShape {
			t.Errorf("item %d = %+v", i, it)
		}
	}
	// lmms-eval scored Stationery against Stationary as a miss; the warning says so.
	if len(res.Warnings) != 2 || !strings.Contains(res.Warnings[1], "on 1 of 3 samples") || !strings.Contains(res.Warnings[0], "1 rows") {
		t.Errorf("warnings %q", res.Warnings)
	}

	bad := []struct{ content, want string }{
		{`{"doc_id": 3, "filtered_resps": ["a"]}`, ":1: field doc_id: 3 is out of range"},
		{`{"doc_id": 0, "filtered_resps": ["a"]}` + "\n" + `{"doc_id": 0, "filtered_resps": ["a"]}`, ":2: field doc_id: 0 already at"},
		{`{"doc_id": 0, "filtered_resps": ["a"], "doc": {"image_name": "cat-1-Ocean-Easy-1.png"}}`, ":1: field doc.image_name: \"cat-1-Ocean-Easy-1.png\", but doc 0"},
	}
	for i, b := range bad {
		p := writeFile(t, dir, "samples_icon_shape.jsonl", b.content)
		if _, err := ScoreLogs(ctx, []*TestSet{set}, []LogInput{{Path: p}}, ScoreOptions{}); err == nil || !strings.Contains(err.Error(), p+b.want) {
			t.Errorf("case %d: error %v, want %q", i, err, b.want)
		}
	}
	// No shape/scene hint anywhere: ask for --kind; with it, fine.
	p := writeFile(t, dir, "samples_icon_task.jsonl", `{"doc_id": 0, "filtered_resps": ["a"]}`)
	if _, err := ScoreLogs(ctx, []*TestSet{set}, []LogInput{{Path: p}}, ScoreOptions{}); err == nil || !strings.Contains(err.Error(), "--kind") {
		t.Errorf("error %v", err)
	}
	if res, err := ScoreLogs(ctx, []*TestSet{set}, []LogInput{{Path: p}}, ScoreOptions{Kind: KindScene}); err != nil || res.Items[0].Truth != "ocean" {
		t.Errorf("with kind: %v", err)
	}
	// Without a test set, the doc's image_name is used; without either, an error.
	p = writeFile(t, dir, "samples_in_scene.jsonl", `{"doc_id": 0, "doc": {"image_name": "cat-1-Ocean-Easy-1.png"}, "filtered_resps": ["ocean"]}`)
	if res, err := ScoreLogs(ctx, nil, []LogInput{{Split: "Illusion_IN", Path: p}}, ScoreOptions{}); err != nil || !res.Items[0].Hit {
		t.Errorf("doc-only log: %+v %v", res, err)
	}
	p = writeFile(t, dir, "samples_in_scene_b.jsonl", `{"doc_id": 0, "filtered_resps": ["ocean"]}`)
	if _, err := ScoreLogs(ctx, nil, []LogInput{{Split: "Illusion_IN", Path: p}}, ScoreOptions{}); err == nil || !strings.Contains(err.Error(), "--testset Illusion_IN=FILE") {
		t.Errorf("error %v", err)
	}
	// Both kinds in one log (the combined task): each reads its own line of the answer.
	p = writeFile(t, dir, "samples_icon_both.jsonl", `{"doc_id": 0, "filtered_resps": ["Shape: animal\nScene: forest"], "shape_recall": 1, "scene_recall": 0}`)
	res, err = ScoreLogs(ctx, []*TestSet{set}, []LogInput{{Path: p}}, ScoreOptions{})
	if err != nil || len(res.Items) != 2 || !res.Items[0].Hit || res.Items[1].Hit || res.Items[1].Answer != "other: forest" {
		t.Errorf("combined: %+v %v", res, err)
	}
	res, err = ScoreLogs(ctx, []*TestSet{set}, []LogInput{{Path: p}}, ScoreOptions{Kind: KindScene})
	if err != nil || len(res.Items) != 1 || res.Items[0].Answer != "other: forest" {
		t.Errorf("combined with --kind scene: %+v %v", res, err)
	}
}
