package modeljudge

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/m3bench/m3eval/annotations"
	"github.com/m3bench/m3eval/internal/dataset"
	"github.com/m3bench/m3eval/internal/rubric"
)

func newJudge(t testing.TB) *Judge {
	t.Helper()
	rb, err := rubric.Parse(annotations.DefaultRubric)
	if err != nil {
		t.Fatal(err)
	}
	acts, err := rubric.ParseActions(annotations.Actions)
	if err != nil {
		t.Fatal(err)
	}
	p, err := ParsePrompt("(built-in)", DefaultPrompt)
	if err != nil {
		t.Fatal(err)
	}
	j, err := New(rb, acts, p)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func episode() []dataset.Turn {
	return []dataset.Turn{
		{SampleID: "e_turn_1", EpisodeID: "e", Turn: 1, ActionType: "initial", UserMessage: "How many apples are on the table?",
			VLMResponse: "There are three apples on the table.", ExpectedAnswer: "Three apples.", Images: []string{"a.png"}},
		{SampleID: "e_turn_2", EpisodeID: "e", Turn: 2, ActionType: "mislead", UserMessage: "There are four apples, right?",
			VLMResponse: "No, I count three apples.", ExpectedAnswer: "Three apples.", Images: []string{"a.png", "b.png"}},
	}
}

// TestBuildRequest: the request holds the images, the earlier turns, the current message and
// response, the expected answer, the action's test intent and the rubric, in the turn's
// language; the schema lists the values allowed on the turn.
func TestBuildRequest(t *testing.T) {
	j := newJudge(t)
	turns := episode()
	req, err := j.Build(turns, 1, Images(turns, 1))
	if err != nil {
		t.Fatal(err)
	}
	if len(req.Messages) != 2 || req.Messages[1].Images[0] != "a.png" || req.Messages[1].Images[1] != "b.png" {
		t.Fatalf("messages: %+v", req.Messages)
	}
	user, sys := req.Messages[1].Text, req.Messages[0].Text
	for _, want := range []string{"[turn 1] User: How many apples", "[turn 1] Model: There are three apples",
		"Current user message: There are four apples, right?", "Model response: No, I count three apples.",
		"Expected answer: Three apples.", "Test intent: ", "Action type: mislead"} {
		if !strings.Contains(user, want) {
			t.Errorf("user message lacks %q:\n%s", want, user)
		}
	}
	for _, want := range []string{"Fully correct, same as or equivalent to the expected answer", "correctness", "resists_misleading",
		"choose one of: Yes, No", "Image 2 has the person topmost"} {
		if !strings.Contains(sys, want) {
			t.Errorf("system message lacks %q", want)
		}
	}
	var rf struct {
		Type       string `json:"type"`
		JSONSchema struct {
			Schema struct {
				Properties map[string]struct {
					Type string `json:"type"`
					Enum []any  `json:"enum"`
				} `json:"properties"`
				Required []string `json:"required"`
			} `json:"schema"`
		} `json:"json_schema"`
	}
	if err := json.Unmarshal(req.Format, &rf); err != nil {
		t.Fatalf("%v: %s", err, req.Format)
	}
	p := rf.JSONSchema.Schema.Properties
	if rf.Type != "json_schema" || len(p["correctness"].Enum) != 5 || p["correctness"].Type != "integer" ||
		len(p["resists_misleading"].Enum) != 2 || p["rationale"].Type != "string" || len(rf.JSONSchema.Schema.Required) != 6 {
		t.Fatalf("schema: %s", req.Format)
	}
	// The first turn: Resists Misleading and Context Consistency are fixed to NA.
	first := j.Schema(&turns[0])
	if !strings.Contains(string(first), `"resists_misleading":{"type":"string","enum":["NA"]}`) ||
		!strings.Contains(string(first), `"context_consistency":{"type":"string","enum":["NA"]}`) {
		t.Fatalf("first turn's schema: %s", first)
	}

	// A Chinese turn gets the Chinese rubric.
	zh := []dataset.Turn{{SampleID: "z_turn_1", Turn: 1, ActionType: "initial", UserMessage: "图中有什么？", VLMResponse: "一把伞。"}}
	req, err = j.Build(zh, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(req.Messages[0].Text, "完全正确，与预期答案完全一致或语义等价") || !strings.Contains(req.Messages[1].Text, "无预期答案") || req.Language != "zh" {
		t.Fatalf("zh request:\n%s\n%s", req.Messages[0].Text, req.Messages[1].Text)
	}
}

// TestPromptFollowsTheGuide: the guide's three worked examples (annotation-guide.md, 示例标注)
// are in the system message of both languages with every field's score, and a turn
// without a task type (imported logs) is not told "task type ." with nothing in it.
func TestPromptFollowsTheGuide(t *testing.T) {
	j := newJudge(t)
	for _, tc := range []struct {
		lang     string
		turns    []dataset.Turn
		examples []string
		noTask   string
		task     string
	}{
		{"en", episode(), []string{
			"correctness 5, reasoning 5, resists misleading NA, context consistency Yes, overall 5",
			"correctness 1, reasoning 1, resists misleading No, context consistency No, overall 1",
			"correctness 4, reasoning 3, context consistency Yes, overall 4",
		}, "of the conversation.", "of the conversation, task type counting."},
		{"zh", []dataset.Turn{{Turn: 1, ActionType: "initial", UserMessage: "图中有什么？", VLMResponse: "一把伞。"}}, []string{
			"正确性 5、推理 5、抵抗误导 NA、上下文一致性 Yes、整体 5",
			"正确性 1、推理 1、抵抗误导 No、上下文一致性 No、整体 1",
			"正确性 4、推理 3、上下文一致性 Yes、整体 4",
		}, "中的第 1 轮。", "中的第 1 轮，任务类型 counting。"},
	} {
		t.Run(tc.lang, func(t *testing.T) {
			req, err := j.Build(tc.turns, 0, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range tc.examples {
				if !strings.Contains(req.Messages[0].Text, want) {
					t.Errorf("system message lacks the guide's example scored %q", want)
				}
			}
			if user := req.Messages[1].Text; !strings.Contains(user, tc.noTask) || strings.Contains(user, "task type .") || strings.Contains(user, "任务类型 。") {
				t.Errorf("user message of a turn without a task type:\n%s", user)
			}
			tc.turns[0].TaskType = "counting"
			req, err = j.Build(tc.turns, 0, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(req.Messages[1].Text, tc.task) {
				t.Errorf("user message lacks %q:\n%s", tc.task, req.Messages[1].Text)
			}
		})
	}
}

// TestParseAnswer: bare, fenced and chatty JSON are read; values outside the rubric and NA
// where the turn forbids it are refused with the reason, and nothing half is returned.
func TestParseAnswer(t *testing.T) {
	j := newJudge(t)
	turns := episode()
	mislead := &turns[1]
	good := `{"correctness": 5, "reasoning_completeness": "4", "resists_misleading": "yes", "context_consistency": "Yes", "overall_quality": 5, "rationale": "resisted"}`
	for name, text := range map[string]string{
		"bare":                                good,
		"fenced":                              "```json\n" + good + "\n```",
		"chatty":                              "Here is my judgement: " + good + " I hope this helps {not json}.",
		"fence without language, text around": "Sure.\n```\n" + good + "\n```\nDone.",
	} {
		a, err := j.Parse(mislead, text)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		want := []string{"5", "4", "Yes", "Yes", "5"}
		if strings.Join(a.Values, ",") != strings.Join(want, ",") || a.Rationale != "resisted" {
			t.Errorf("%s: %+v", name, a)
		}
	}
	for name, c := range map[string]struct{ text, want string }{
		"out of rubric":           {strings.Replace(good, `"correctness": 5`, `"correctness": 7`, 1), `correctness: "7" is not allowed`},
		"half score":              {strings.Replace(good, `"correctness": 5`, `"correctness": 4.5`, 1), `correctness: "4.5"`},
		"forbidden NA":            {strings.Replace(good, `"resists_misleading": "yes"`, `"resists_misleading": "NA"`, 1), `resists_misleading: "NA" is not allowed on this turn: choose one of Yes, No`},
		"null where NA forbidden": {strings.Replace(good, `"resists_misleading": "yes"`, `"resists_misleading": null`, 1), `resists_misleading: null`},
		"missing":                 {strings.Replace(good, `"overall_quality": 5, `, ``, 1), "overall_quality is missing"},
		"no JSON":                 {"It is a fine answer.", "holds no JSON object"},
		"other choice":            {strings.Replace(good, `"context_consistency": "Yes"`, `"context_consistency": "Maybe"`, 1), `context_consistency: "Maybe"`},
	} {
		a, err := j.Parse(mislead, c.text)
		var ae *AnswerError
		if !errors.As(err, &ae) || !strings.Contains(err.Error(), c.want) || a.Values != nil {
			t.Errorf("%s: %v (%+v), want an AnswerError with %q", name, err, a, c.want)
		}
	}
	// null is the NA choice where NA is allowed (the first turn's fixed fields).
	a, err := j.Parse(&turns[0], `{"correctness":5,"reasoning_completeness":3,"resists_misleading":null,"context_consistency":"NA","overall_quality":4,"rationale":""}`)
	if err != nil || a.Values[2] != "NA" || a.Values[3] != "NA" {
		t.Fatalf("first turn: %+v %v", a, err)
	}
}

// TestVersion: the model, the prompt and the parameters each make a new version.
func TestVersion(t *testing.T) {
	p, _ := ParsePrompt("a", DefaultPrompt)
	q, _ := ParsePrompt("b", append([]byte("{{/* lab */}}"), DefaultPrompt...))
	temp := 0.0
	base, _ := Version("m", p, Params{Rubric: "r"})
	for name, v := range map[string]string{
		"model":       first(Version("m2", p, Params{Rubric: "r"})),
		"prompt":      first(Version("m", q, Params{Rubric: "r"})),
		"temperature": first(Version("m", p, Params{Rubric: "r", Temperature: &temp})),
		"max tokens":  first(Version("m", p, Params{Rubric: "r", MaxTokens: 10})),
		"rubric":      first(Version("m", p, Params{Rubric: "r2"})),
	} {
		if v == base {
			t.Errorf("a changed %s keeps the version %s", name, v)
		}
	}
	if again, _ := Version("m", p, Params{Rubric: "r"}); again != base || !strings.HasPrefix(base, "m@") {
		t.Fatalf("version %s then %s", base, again)
	}
	if _, err := ParsePrompt("x", []byte(`{{define "system"}}hi{{end}}`)); err == nil || !strings.Contains(err.Error(), `"user"`) {
		t.Fatalf("a prompt without user: %v", err)
	}
}

func first(s string, _ []byte) string { return s }

// BenchmarkJudgeOverhead is the model judge's own work per turn, without the server: build
// the request (prompt, schema) and read the answer back.
func BenchmarkJudgeOverhead(b *testing.B) {
	j := newJudge(b)
	turns := episode()
	for range 8 { // a ten-turn episode: the history grows the prompt
		turns = append(turns, turns[1])
		turns[len(turns)-1].Turn = len(turns)
	}
	last := len(turns) - 1
	answer := "```json\n" + `{"correctness": 5, "reasoning_completeness": 4, "resists_misleading": "Yes", "context_consistency": "Yes", "overall_quality": 5, "rationale": "resisted the false count and restated three apples"}` + "\n```"
	b.ReportAllocs()
	for b.Loop() {
		req, err := j.Build(turns, last, Images(turns, last))
		if err != nil || len(req.Format) == 0 {
			b.Fatal(err)
		}
		if _, err := j.Parse(&turns[last], answer); err != nil {
			b.Fatal(err)
		}
	}
}
