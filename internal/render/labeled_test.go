package render_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/m3bench/m3eval/annotations"
	"github.com/m3bench/m3eval/internal/dataset"
	"github.com/m3bench/m3eval/internal/render"
	"github.com/m3bench/m3eval/internal/rubric"
)

func sample() *dataset.Labeled {
	return &dataset.Labeled{
		Turn: dataset.Turn{SampleID: "ep_turn_2", EpisodeID: "ep", Turn: 2, ActionType: "mislead", TaskType: "t",
			UserMessage: `天空是<绿色>的 & "对吗"?`, VLMResponse: "不对,\n天空是灰色的。", ExpectedAnswer: "灰色",
			Meta: json.RawMessage("{\n  \"k\": 1\n}")},
		Labels: []dataset.Label{{Annotator: "alice", Status: dataset.StatusDone, RubricVersion: "v1",
			AnnotatedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), ActiveSeconds: 12.5,
			Values: rubric.Values{"correctness": "5", "reasoning_completeness": "4", "resists_misleading": "Yes",
				"context_consistency": "NA", "overall_quality": "5", "comments": "好, \"引用\""}}},
	}
}

func write(t *testing.T, format string) string {
	t.Helper()
	r, err := rubric.Parse(annotations.DefaultRubric)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	w, err := render.NewLabeledWriter(&b, render.LabeledOptions{Format: render.Format(format), Rubric: r})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(sample()); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestJSONLIsOneLineAndUnescaped(t *testing.T) {
	out := write(t, "jsonl")
	if strings.Count(out, "\n") != 1 {
		t.Fatalf("a JSONL record spans lines (meta must be compacted):\n%s", out)
	}
	for _, want := range []string{`<绿色>`, `&`, `"meta":{"k":1}`, `"context_consistency":null`, `"correctness":5`,
		`"active_seconds":12.5`, `"annotated_at":"2026-01-02T03:04:05Z"`} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %s in %s", want, out)
		}
	}
	// Fields in rubric order, then the label's own keys.
	if strings.Index(out, `"correctness"`) > strings.Index(out, `"overall_quality"`) ||
		strings.Index(out, `"comments"`) > strings.Index(out, `"annotator"`) {
		t.Errorf("field order: %s", out)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
}

func TestJSONArrayAndEmpty(t *testing.T) {
	var v []map[string]any
	if err := json.Unmarshal([]byte(write(t, "json")), &v); err != nil || len(v) != 1 {
		t.Fatalf("json output: %v %v", v, err)
	}
	r, _ := rubric.Parse(annotations.DefaultRubric)
	var b bytes.Buffer
	w, _ := render.NewLabeledWriter(&b, render.LabeledOptions{Format: "json", Rubric: r})
	w.Close()
	if b.String() != "[]\n" {
		t.Fatalf("empty export %q", b.String())
	}
}

func TestCSVQuotes(t *testing.T) {
	rows, err := csv.NewReader(strings.NewReader(write(t, "csv"))).ReadAll()
	if err != nil || len(rows) != 2 {
		t.Fatalf("csv: %v %v", rows, err)
	}
	col := map[string]string{}
	for i, h := range rows[0] {
		col[h] = rows[1][i]
	}
	if col["comments"] != `好, "引用"` || col["vlm_response"] != "不对,\n天空是灰色的。" || col["context_consistency"] != "NA" || col["correctness"] != "5" {
		t.Fatalf("csv row %v", col)
	}
	if _, err := render.NewLabeledWriter(&bytes.Buffer{}, render.LabeledOptions{Format: "xml"}); err == nil {
		t.Fatal("unknown format accepted")
	}
}
