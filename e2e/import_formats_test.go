package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestImportOtherFormatsAnnotateExport takes one log of each format m3eval imports from
// other tools through the whole path: import (format detected and printed), annotate the
// first turn in a real terminal, export, and checks the exported record.
func TestImportOtherFormatsAnnotateExport(t *testing.T) {
	term := newTerminal(t)
	bin := build(t)
	logs, err := filepath.Abs("../internal/ingest/testdata/logs")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		format, file string
		turns        int
		sample       string // the first item's sample id
		user, reply  string
		expected     string // "" when the log has none: the screen says how to judge
		image        string // an image the first turn shows ("media" for a written file)
	}{
		{"openai", "openai/chat_log.jsonl", 3, "chatcmpl-log-0001_turn_1", "What colour is the umbrella?", "The umbrella is yellow.", "", "media"},
		{"sharegpt", "sharegpt/llava_instruct.json", 3, "000000215677_turn_1", "What is the cat doing?", "The cat is sleeping on a laptop keyboard.", "", "coco/train2017/000000215677.jpg"},
		{"vlmevalkit", "vlmevalkit/Qwen2-VL-7B-Instruct/Qwen2-VL-7B-Instruct_MMDU.xlsx", 5, "Qwen2-VL-7B-Instruct/MMDU/0_turn_1", "What do the two pictures have in common?", "Both pictures show a bridge crossing a river.", "Both show the same stone bridge over a river.", "0_0.jpg"},
		{"lmms-eval", "lmms-eval/qwen2_vl_7b/20250612_101500_samples_unig2u_illusionbench_arshia_icon_shape_test.jsonl", 3, "qwen2_vl_7b/unig2u_illusionbench_arshia_icon_shape_test/0_turn_1", "This image contains a icon", "Animal", "", "media"},
	}
	for i, c := range cases {
		dir := t.TempDir()
		db := filepath.Join(dir, "e2e.db")
		out, err := exec.Command(bin, "--db", db, "import", filepath.Join(logs, c.file)).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: import: %v\n%s", c.format, err, out)
		}
		if !strings.Contains(string(out), "detected format "+c.format) || !strings.Contains(string(out), fmt.Sprintf("%d turns new", c.turns)) {
			t.Fatalf("%s: import said:\n%s", c.format, out)
		}
		session := fmt.Sprintf("f%d", i)
		term.start(session, fmt.Sprintf("%s --db %s annotate --annotator erin", bin, db))
		texts := []string{fmt.Sprintf("item 1 of %d", c.turns), "turn 1 · unknown (to label)", "Action  unknown — not recorded", c.reply}
		if c.expected == "" {
			texts = append(texts, "Correctness: no expected answer: judge correctness")
		}
		s := term.waitFor(session, texts...)
		if c.expected != "" && strings.Contains(s, "no expected answer") {
			t.Errorf("%s: the note shows although the turn has an expected answer:\n%s", c.format, s)
		}
		// First turn, not misleading: both Yes/No/NA fields are fixed to NA.
		term.keys(session, "4", "3", "4")
		term.waitFor(session, "Overall Quality        整体质量      4", "✓ saved")
		term.keys(session, "Enter")
		term.waitFor(session, "item 2 of", "1 done")
		term.keys(session, "q")

		exp, err := exec.Command(bin, "--db", db, "export").Output()
		if err != nil {
			t.Fatalf("%s: export: %v", c.format, err)
		}
		var recs []struct {
			SampleID       string                     `json:"sample_id"`
			ActionType     string                     `json:"action_type"`
			UserMessage    string                     `json:"user_message"`
			VLMResponse    string                     `json:"vlm_response"`
			ExpectedAnswer string                     `json:"expected_answer"`
			Images         []string                   `json:"images"`
			Meta           map[string]json.RawMessage `json:"meta"`
			Label          map[string]json.RawMessage `json:"human_annotation"`
		}
		if err := json.Unmarshal(exp, &recs); err != nil {
			t.Fatalf("%s: export is not JSON: %v\n%s", c.format, err, exp)
		}
		if len(recs) != 1 {
			t.Fatalf("%s: exported %d records, want the one annotated", c.format, len(recs))
		}
		r := recs[0]
		if r.SampleID != c.sample || r.ActionType != "unknown" || !strings.HasPrefix(r.UserMessage, c.user) || r.VLMResponse != c.reply || r.ExpectedAnswer != c.expected {
			t.Errorf("%s: exported %+v", c.format, r)
		}
		if string(r.Label["correctness"]) != "4" || string(r.Label["overall_quality"]) != "4" || string(r.Label["resists_misleading"]) != "null" {
			t.Errorf("%s: label %v", c.format, r.Label)
		}
		var src map[string]any
		if err := json.Unmarshal(r.Meta["source"], &src); err != nil || src["format"] != c.format {
			t.Errorf("%s: meta.source %s", c.format, r.Meta["source"])
		}
		if len(r.Images) == 0 {
			t.Fatalf("%s: no images exported", c.format)
		}
		if c.image == "media" {
			if filepath.Dir(r.Images[0]) != filepath.Join(dir, "e2e-media") {
				t.Errorf("%s: image %s is not in the media folder beside the database", c.format, r.Images[0])
			} else if _, err := os.Stat(r.Images[0]); err != nil {
				t.Errorf("%s: %v", c.format, err)
			}
		} else if r.Images[0] != c.image {
			t.Errorf("%s: images %v", c.format, r.Images)
		}
	}
}
