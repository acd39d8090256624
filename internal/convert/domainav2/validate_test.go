package domainav2_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/m3bench/m3eval/internal/convert/domainav2"
)

// The converter's golden output is the valid base every corruption starts from.
const goldenDir = "../vistrajqa/testdata/golden"

// dataset is a converted directory decoded into plain JSON values, to corrupt and write back.
type dataset struct {
	main     []any
	mem, qa  []map[string]any
	manifest map[string]any
}

func load(t *testing.T, mode string) *dataset {
	t.Helper()
	dir := filepath.Join(goldenDir, mode)
	d := &dataset{}
	readJSON(t, filepath.Join(dir, domainav2.MainFile), &d.main)
	readJSON(t, filepath.Join(dir, domainav2.ManifestFile), &d.manifest)
	d.mem = readLines(t, filepath.Join(dir, domainav2.MemoryFile))
	d.qa = readLines(t, filepath.Join(dir, domainav2.QAFile))
	return d
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}
}

func readLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

func (d *dataset) write(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	put := func(name string, b []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mainB, _ := json.Marshal(d.main)
	put(domainav2.MainFile, mainB)
	manB, _ := json.Marshal(d.manifest)
	put(domainav2.ManifestFile, manB)
	lines := func(ms []map[string]any) []byte {
		var b []byte
		for _, m := range ms {
			l, _ := json.Marshal(m)
			b = append(append(b, l...), '\n')
		}
		return b
	}
	put(domainav2.MemoryFile, lines(d.mem))
	put(domainav2.QAFile, lines(d.qa))
	return dir
}

func (d *dataset) sample(i int) map[string]any { return d.main[i].(map[string]any) }

func (d *dataset) session(i, j int) map[string]any {
	return d.sample(i)["sessions"].([]any)[j].(map[string]any)
}

func (d *dataset) checkpoint(i, j int) map[string]any {
	return d.qa[i]["checkpoints"].([]any)[j].(map[string]any)
}

func (d *dataset) question(i, j, k int) map[string]any {
	return d.checkpoint(i, j)["questions"].([]any)[k].(map[string]any)
}

func (d *dataset) memSession(i, j int) map[string]any {
	return d.mem[i]["memory_sessions"].([]any)[j].(map[string]any)
}

func TestValidateGolden(t *testing.T) {
	for _, mode := range []string{"text-only", "multimodal"} {
		rep, err := domainav2.Validate(load(t, mode).write(t))
		if err != nil {
			t.Fatal(err)
		}
		if !rep.OK() || rep.WarningCount != 0 {
			t.Fatalf("%s: %v; warnings %v", mode, rep.Problems, rep.Warnings)
		}
		if rep.Samples != 4 || len(rep.Sources) != 2 || rep.Total.MemoryPoints != 8 || rep.Total.Updates != 3 || rep.Total.Questions != 18 {
			t.Errorf("%s: statistics %+v", mode, rep.Total)
		}
		if rep.Total.QuestionsByType["VFR"] != 2 || rep.Total.MemoryByType["state_memory"] != 5 || rep.Sources[1].Source != "arena" || rep.Sources[1].Samples != 2 {
			t.Errorf("%s: per-type statistics %+v / %+v", mode, rep.Total, rep.Sources[1])
		}
	}
}

// TestValidateOutOfOrder: the loader matches lines by uuid, so lines in another order than
// the main file are fine (they are held until their sample comes).
func TestValidateOutOfOrder(t *testing.T) {
	d := load(t, "text-only")
	slices.Reverse(d.mem)
	slices.Reverse(d.qa)
	rep, err := domainav2.Validate(d.write(t))
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() {
		t.Fatal(rep.Problems)
	}
}

func TestValidateCatches(t *testing.T) {
	cases := []struct {
		name    string
		corrupt func(d *dataset)
		want    string // substring of one problem
	}{
		{"main file not a list", func(d *dataset) { d.main = nil }, "not a JSON array"},
		{"no uuid", func(d *dataset) { delete(d.sample(1), "uuid") }, "domain_a_v2.json[1] (sample vab-0002): uuid: missing"},
		{"bad uuid", func(d *dataset) { d.sample(1)["uuid"] = "x" }, `uuid: "x" is not a UUID`},
		{"no sample_id", func(d *dataset) { delete(d.sample(2), "sample_id") }, "domain_a_v2.json[2]: sample_id: missing"},
		{"no sessions", func(d *dataset) { delete(d.sample(0), "sessions") }, "sessions: missing"},
		{"session without id", func(d *dataset) { delete(d.session(0, 2), "_v2_session_id") }, "sessions[2]._v2_session_id: missing"},
		{"duplicate session id", func(d *dataset) { d.session(0, 2)["_v2_session_id"] = "S01" }, "duplicate session id S01"},
		{"bad role", func(d *dataset) {
			d.session(0, 0)["dialogue"].([]any)[1].(map[string]any)["role"] = "system"
		}, `dialogue[1].role: "system" is neither user nor assistant`},
		{"no stage4 line", func(d *dataset) { d.mem = d.mem[1:] }, "stage4_memory_points.jsonl (sample vab-0001): no line for this sample"},
		{"no QA line", func(d *dataset) { d.qa = d.qa[:3] }, "stage4b_qa_checkpoints.jsonl (sample arena-0002): no line for this sample"},
		{"stage4 line of no sample", func(d *dataset) {
			d.mem = append(d.mem, map[string]any{"uuid": "00000000-0000-5000-8000-000000000000", "sample_id": "x", "memory_sessions": []any{}})
		}, "stage4_memory_points.jsonl:5: uuid: uuid 00000000-0000-5000-8000-000000000000 is not a sample"},
		{"second QA line", func(d *dataset) { d.qa = append(d.qa, d.qa[1]) }, "stage4b_qa_checkpoints.jsonl:5: uuid: second line for the sample"},
		{"stage4 sample_id mismatch", func(d *dataset) { d.mem[1]["sample_id"] = "vab-9" }, `stage4_memory_points.jsonl:2 (sample vab-0002): sample_id: want "vab-0002"`},
		{"evidence memory id unknown", func(d *dataset) {
			d.question(0, 0, 0)["evidence"] = []any{map[string]any{"memory_id": "mp_S09_1"}}
		}, "checkpoints[0].questions[0].evidence[0].memory_id: mp_S09_1 is not a memory point"},
		{"evidence image id unknown", func(d *dataset) {
			d.question(0, 4, 5)["evidence"] = []any{map[string]any{"image_id": "S04_img_7"}}
		}, "evidence[0].image_id: S04_img_7 is not an image"},
		{"evidence with both ids", func(d *dataset) {
			d.question(0, 4, 5)["evidence"] = []any{map[string]any{"image_id": "S04_img_1", "memory_id": "mp_S04_1"}}
		}, "want exactly one of memory_id and image_id"},
		{"covered session missing", func(d *dataset) {
			d.checkpoint(0, 1)["covered_sessions"] = []any{"S00", "S07"}
		}, "checkpoints[1].covered_sessions[1]: S07 is not a session"},
		{"covered sessions not a prefix", func(d *dataset) {
			d.checkpoint(0, 1)["covered_sessions"] = []any{"S01"}
		}, "covered sessions must be the first ones"},
		{"unknown question type", func(d *dataset) { d.question(0, 4, 0)["question_type"] = "visual_recall" }, `question_type: not one of the nine known types, got "visual_recall"`},
		{"abbreviation mismatch", func(d *dataset) { d.question(0, 4, 0)["question_type_abbrev"] = "DU" }, "question_type_abbrev: want FR for factual_recall"},
		{"duplicate uuid", func(d *dataset) { d.sample(1)["uuid"] = d.sample(0)["uuid"] }, "is the uuid of an earlier sample"},
		{"duplicate sample_id", func(d *dataset) { d.sample(1)["sample_id"] = "vab-0001" }, "sample_id: duplicate"},
		{"duplicate memory id", func(d *dataset) {
			mp := d.memSession(0, 0)["memory_points"].([]any)[0].(map[string]any)
			mp["memory_id"] = "mp_S00_1"
		}, "duplicate memory id mp_S00_1"},
		{"duplicate checkpoint id", func(d *dataset) { d.checkpoint(0, 1)["checkpoint_id"] = "probe_1" }, "duplicate checkpoint id probe_1"},
		{"memory points outside the first session", func(d *dataset) { d.session(0, 1)["memory_points"] = []any{} }, "memory points outside the first session"},
		{"stage4 holds the first session", func(d *dataset) { d.memSession(0, 0)["session_id"] = "S00" }, "the first session's memory points belong in domain_a_v2.json"},
		{"update without originals", func(d *dataset) {
			mp := d.memSession(0, 1)["memory_points"].([]any)[0].(map[string]any)
			mp["original_memories"] = []any{}
		}, "original_memories: empty on an update"},
		{"unknown memory type", func(d *dataset) {
			d.session(0, 0)["memory_points"].([]any)[0].(map[string]any)["memory_type"] = "visual_memory"
		}, `memory_type: want one of event_memory, state_memory, spatial_memory, got "visual_memory"`},
		{"memory point without importance", func(d *dataset) {
			delete(d.session(0, 0)["memory_points"].([]any)[0].(map[string]any), "importance")
		}, "sessions[0].memory_points[0].importance: missing"},
		{"wrong JSON type", func(d *dataset) { d.sample(0)["sessions"] = "S00" }, "sessions: JSON string where an array expected"},
		{"wrong JSON type in a QA line", func(d *dataset) { d.question(1, 0, 1)["difficulty"] = 5 }, "stage4b_qa_checkpoints.jsonl:2: checkpoints[0].questions[1].difficulty: JSON number where a string expected"},
		{"content not a string", func(d *dataset) {
			d.session(2, 1)["dialogue"].([]any)[0].(map[string]any)["content"] = []any{"x"}
		}, "domain_a_v2.json[2] (sample arena-0001): sessions[1].dialogue[0].content: not a string"},
		{"manifest names a lost sample", func(d *dataset) {
			src := d.manifest["sources"].([]any)[0].(map[string]any)
			src["sample_ids"] = append(src["sample_ids"].([]any), "vab-0099")
		}, "m3eval-manifest.json (sample vab-0099): listed under source vab"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := load(t, "text-only")
			c.corrupt(d)
			rep, err := domainav2.Validate(d.write(t))
			if err != nil {
				t.Fatal(err)
			}
			if rep.OK() {
				t.Fatalf("not caught; want %q", c.want)
			}
			var all []string
			for _, p := range rep.Problems {
				all = append(all, p.String())
				if strings.Contains(p.String(), c.want) {
					return
				}
			}
			t.Errorf("want a problem containing %q, got:\n%s", c.want, strings.Join(all, "\n"))
		})
	}
}

func TestValidateMultimodalAttachments(t *testing.T) {
	d := load(t, "multimodal")
	turn := d.session(0, 0)["dialogue"].([]any)[0].(map[string]any)
	att := turn["attachments"].([]any)[0].(map[string]any)
	att["caption"] = ""
	rep, err := domainav2.Validate(d.write(t))
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK() || !strings.Contains(rep.Problems[0].String(), "attachments[0].caption: missing or empty") {
		t.Fatalf("empty caption attachment not caught: %v", rep.Problems)
	}
}

// TestValidateWarnsFutureEvidence: evidence in a session the checkpoint does not cover is
// legal for the loader but asks about the future; it is a warning.
func TestValidateWarnsFutureEvidence(t *testing.T) {
	d := load(t, "text-only")
	d.question(0, 0, 0)["evidence"] = []any{map[string]any{"memory_id": "mp_S04_1"}}
	rep, err := domainav2.Validate(d.write(t))
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() || rep.WarningCount != 1 || !strings.Contains(rep.Warnings[0].String(), "after the sessions this checkpoint covers") {
		t.Fatalf("problems %v, warnings %v", rep.Problems, rep.Warnings)
	}
}

func TestValidateMissingFile(t *testing.T) {
	dir := load(t, "text-only").write(t)
	os.Remove(filepath.Join(dir, domainav2.QAFile))
	if _, err := domainav2.Validate(dir); err == nil {
		t.Fatal("missing QA file: no error")
	}
}

// TestValidateWithoutManifest: a directory from another converter has no manifest; the
// statistics then have one column, "all".
func TestValidateWithoutManifest(t *testing.T) {
	dir := load(t, "multimodal").write(t)
	if err := os.Remove(filepath.Join(dir, domainav2.ManifestFile)); err != nil {
		t.Fatal(err)
	}
	rep, err := domainav2.Validate(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() || len(rep.Sources) != 1 || rep.Sources[0].Source != "all" || rep.Sources[0].Samples != 4 || rep.Total.ImageAttachments != 36 {
		t.Fatalf("problems %v, sources %+v", rep.Problems, rep.Sources)
	}
	var b strings.Builder
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "image attachments   36") {
		t.Errorf("report:\n%s", b.String())
	}
}

// TestValidateMainFileShape: the main file must be exactly one JSON array.
func TestValidateMainFileShape(t *testing.T) {
	cases := []struct {
		name string
		edit func([]byte) []byte
		want string
	}{
		{"truncated", func(b []byte) []byte { return b[:len(b)/2] }, "domain_a_v2.json[0]: invalid JSON"},
		{"data after the array", func(b []byte) []byte { return append(b, []byte("[]")...) }, "domain_a_v2.json: data after the array"},
		{"an object", func([]byte) []byte { return []byte(`{"samples": []}`) }, "domain_a_v2.json: not a JSON array"},
		{"empty array", func([]byte) []byte { return []byte(`[]`) }, "domain_a_v2.json: no samples"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := load(t, "text-only").write(t)
			path := filepath.Join(dir, domainav2.MainFile)
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, c.edit(b), 0o644); err != nil {
				t.Fatal(err)
			}
			rep, err := domainav2.Validate(dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range rep.Problems {
				if strings.HasPrefix(p.String(), c.want) {
					return
				}
			}
			t.Errorf("want %q among %v", c.want, rep.Problems)
		})
	}
}
