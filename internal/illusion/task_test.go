package illusion

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// taskGolden is testdata/task_golden.json, written by gen_task_golden.py from the lab's
// lmms-eval task source run under CPython.
type taskGolden struct {
	Docs []struct {
		ImageName string  `json:"image_name"`
		Kept      bool    `json:"kept"`
		ShapeGT   *string `json:"shape_gt"`
		SceneGT   *string `json:"scene_gt"`
	} `json:"docs"`
	Matches []struct {
		Pred, GT string
		Hit      int
	} `json:"matches"`
	Fields []struct {
		Pred, Shape, Scene string
	} `json:"fields"`
}

func loadTaskGolden(t *testing.T) taskGolden {
	t.Helper()
	b, err := os.ReadFile("testdata/task_golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var g taskGolden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	return g
}

func TestTaskFunctionsMatchTheTask(t *testing.T) {
	g := loadTaskGolden(t)
	for _, d := range g.Docs {
		tt, err := ParseTaskImageName(d.ImageName)
		if (err == nil) != d.Kept {
			t.Errorf("%q: kept %v, the task %v (%v)", d.ImageName, err == nil, d.Kept, err)
			continue
		}
		if d.Kept && (tt.Shape != *d.ShapeGT || tt.Scene != *d.SceneGT) {
			t.Errorf("%q: (%q, %q), the task (%q, %q)", d.ImageName, tt.Shape, tt.Scene, *d.ShapeGT, *d.SceneGT)
		}
	}
	for _, m := range g.Matches {
		if got := TaskRecallMatch(m.Pred, m.GT); got != (m.Hit == 1) {
			t.Errorf("_recall_match(%q, %q) = %v, the task %v", m.Pred, m.GT, got, m.Hit)
		}
	}
	for _, f := range g.Fields {
		if s, c := TaskField(f.Pred, KindShape), TaskField(f.Pred, KindScene); s != f.Shape || c != f.Scene {
			t.Errorf("_extract_fields(%q) = (%q, %q), the task (%q, %q)", f.Pred, s, c, f.Shape, f.Scene)
		}
	}
}

// TestDocIDsCountWhatTheTaskKeeps: a name without an index or version is a document of the
// task, so the documents after it keep their doc_id.
func TestDocIDsCountWhatTheTaskKeeps(t *testing.T) {
	g := loadTaskGolden(t)
	dir := t.TempDir()
	var b strings.Builder
	var kept []string
	for _, d := range g.Docs {
		line, _ := json.Marshal(map[string]string{"image_name": d.ImageName})
		b.Write(append(line, '\n'))
		if d.Kept {
			kept = append(kept, d.ImageName)
		}
	}
	set, err := LoadTestSet(context.Background(), "Illusion_ICON", writeFile(t, dir, "icon.jsonl", b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(set.Names, "|") != strings.Join(kept, "|") || set.Dropped != len(g.Docs)-len(kept) {
		t.Fatalf("documents %q (dropped %d), the task keeps %q", set.Names, set.Dropped, kept)
	}
	// The doc after "animal-Ocean-Easy.png" (doc 5) is doc 6; a log that says so by its
	// image name joins, and one naming another image stops.
	ctx := context.Background()
	good := writeFile(t, dir, "20250101_samples_unig2u_illusionbench_arshia_icon_scene_test.jsonl",
		`{"doc_id": 5, "filtered_resps": "Ocean", "scene_recall": 1, "input_media": ["data:image/png;base64,AAAA", "animal-Ocean-Easy.png"]}`+"\n"+
			`{"doc_id": 6, "filtered_resps": "ocean", "scene_recall": 1, "doc": {"image_name": "animal-3-Ocean-Hard", "shape_gt": "animal", "scene_gt": "Ocean"}}`+"\n")
	res, err := ScoreLogs(ctx, []*TestSet{set}, []LogInput{{Path: good}}, ScoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Items) != 2 || !res.Items[0].Hit || res.Items[1].Name.Difficulty != Hard || res.Items[0].Split != "Illusion_ICON" {
		t.Fatalf("items %+v", res.Items)
	}
	for _, bad := range []struct{ line, want string }{
		{`{"doc_id": 6, "filtered_resps": "x", "input_media": ["/cache/cat-Forest-Medium-1.png"]}`, `:1: field input_media: "/cache/cat-Forest-Medium-1.png", but doc 6`},
		{`{"doc_id": 7, "filtered_resps": "x", "doc": {"shape_gt": "dog"}}`, `:1: field doc.shape_gt: "dog", but doc 7`},
		{`{"doc_id": 7, "filtered_resps": "x", "doc": {"scene_gt": "Ocean"}}`, `:1: field doc.scene_gt: "Ocean", but doc 7`},
	} {
		p := writeFile(t, dir, "samples_icon_scene.jsonl", bad.line+"\n")
		if _, err := ScoreLogs(ctx, []*TestSet{set}, []LogInput{{Path: p}}, ScoreOptions{}); err == nil || !strings.Contains(err.Error(), p+bad.want) {
			t.Errorf("error %v, want %q", err, bad.want)
		}
	}
}

func TestPooledRunsAreRefused(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	set, err := LoadTestSet(ctx, "Illusion_ICON", writeFile(t, dir, "icon.jsonl",
		`{"image_name": "animal-1-Ocean-Easy-1.png"}`+"\n"+`{"image_name": "vehicle-3-Ocean-Medium-1.png"}`+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"model_a", "model_b"} {
		if err := os.MkdirAll(dir+"/"+d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	const task = "_samples_illusionbench_arshia_icon_shape_test.jsonl"
	older := writeFile(t, dir+"/model_a", "20250101_120000"+task, `{"doc_id": 0, "filtered_resps": "cat"}`+"\n"+`{"doc_id": 1, "filtered_resps": "cat"}`+"\n")
	newer := writeFile(t, dir+"/model_a", "20250302_090000"+task, `{"doc_id": 0, "filtered_resps": "animal"}`+"\n"+`{"doc_id": 1, "filtered_resps": "vehicle"}`+"\n")
	other := writeFile(t, dir+"/model_b", "20250201_000000"+task, `{"doc_id": 0, "filtered_resps": "animal"}`+"\n")
	results := writeFile(t, dir+"/model_a", "20250302_090000_results.json", `{"results": {}}`)
	in := []LogInput{{Path: older}, {Path: results}, {Path: newer}, {Path: other}}

	_, err = ScoreLogs(ctx, []*TestSet{set}, in, ScoreOptions{})
	if err == nil {
		t.Fatal("pooled runs scored without --pool")
	}
	for _, want := range []string{"3 logs of task illusionbench_arshia_icon_shape_test, split Illusion_ICON", older + " (model model_a, 2 samples)", other + " (model model_b, 1 samples)", "--latest", "--pool"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	res, err := ScoreLogs(ctx, []*TestSet{set}, in, ScoreOptions{Latest: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Items) != 2 || !res.Items[0].Hit || !res.Items[1].Hit {
		t.Fatalf("--latest scored %+v", res.Items)
	}
	if len(res.Logs) != 4 || res.Logs[0].Skipped == "" || res.Logs[1].Skipped == "" || res.Logs[2].Skipped != "" || res.Logs[3].Skipped == "" || res.Logs[2].Model != "model_a" {
		t.Fatalf("logs %+v", res.Logs)
	}
	if len(res.Notes) != 1 || !strings.Contains(res.Notes[0], "skipped "+results) {
		t.Fatalf("notes %q", res.Notes)
	}
	res, err = ScoreLogs(ctx, []*TestSet{set}, in, ScoreOptions{Pool: true})
	if err != nil || len(res.Items) != 5 {
		t.Fatalf("--pool: %d items, %v", len(res.Items), err)
	}
}

func TestRuleAndDisagreementDirection(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	set, err := LoadTestSet(ctx, "Illusion_ICON", writeFile(t, dir, "icon.jsonl",
		`{"image_name": "Stationary-1-Sand_dune-Easy-1.png"}`+"\n"+`{"image_name": "animal-3-Sand_dune-Medium-1.png"}`+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	// "Stationery" is a miss for the task and a hit for m3eval: the log's metric is stricter.
	p := writeFile(t, dir, "samples_illusionbench_arshia_icon_shape_test.jsonl",
		`{"doc_id": 0, "filtered_resps": "Stationery", "shape_recall": 0}`+"\n"+`{"doc_id": 1, "filtered_resps": "animal", "shape_recall": 1}`+"\n")
	res, err := ScoreLogs(ctx, []*TestSet{set}, []LogInput{{Path: p}}, ScoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "on 1 of 2 samples; the log's metric is stricter") {
		t.Errorf("warnings %q", res.Warnings)
	}
	res, err = ScoreLogs(ctx, []*TestSet{set}, []LogInput{{Path: p}}, ScoreOptions{Rule: RuleLMMSEval})
	if err != nil || res.Items[0].Hit || !res.Items[1].Hit || len(res.Warnings) != 0 {
		t.Errorf("--rule lmms-eval: %+v %q %v", res.Items, res.Warnings, err)
	}
	// The other direction: the log counted "sand-dune" (a task variant that normalized
	// more) where the task's rule does not.
	p = writeFile(t, dir, "samples_illusionbench_arshia_icon_scene_test.jsonl",
		`{"doc_id": 0, "filtered_resps": "sand-dune", "scene_recall": 1}`+"\n")
	res, err = ScoreLogs(ctx, []*TestSet{set}, []LogInput{{Path: p}}, ScoreOptions{Rule: RuleLMMSEval})
	if err != nil || len(res.Warnings) != 2 || !strings.Contains(res.Warnings[1], "the lmms-eval rule is stricter") {
		t.Errorf("warnings %q, %v", res.Warnings, err)
	}
}

func TestReadLogArrayLayout(t *testing.T) {
	dir := t.TempDir()
	p := writeFile(t, dir, "samples_illusionbench_arshia_in_shape_test.jsonl", "[\n"+
		`  {"doc_id": 0, "doc": {"image_name": "cat-1-Ocean-Easy-1.png"}, "resps": [["cat"]], "filtered_resps": ["cat"]},`+"\n"+
		`  {"doc_id": 1, "resps": [["dog"]], "filtered_resps": ["dog"]}`+"\n]\n")
	lg, err := ReadLog(context.Background(), p)
	if err != nil || len(lg.Records) != 2 || lg.Records[1].Response != "dog" || lg.Records[1].Where != p+": [1]" {
		t.Fatalf("%+v %v", lg, err)
	}
	p = writeFile(t, dir, "bad.jsonl", "[\n{\"doc_id\": 0,\n")
	if _, err := ReadLog(context.Background(), p); err == nil || !strings.Contains(err.Error(), p+":") {
		t.Fatalf("error %v", err)
	}
}
