package rubric_test

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/m3bench/m3eval/annotations"
	"github.com/m3bench/m3eval/internal/rubric"
)

func mustDefault(t *testing.T) *rubric.Rubric {
	t.Helper()
	r, err := rubric.Parse(annotations.DefaultRubric)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

var (
	misleadTurn3 = rubric.Item{ActionType: "mislead", Turn: 3}
	followUp1    = rubric.Item{ActionType: "follow_up", Turn: 1}
	followUp4    = rubric.Item{ActionType: "follow_up", Turn: 4}
)

func TestFieldCheck(t *testing.T) {
	r := mustDefault(t)
	tests := []struct {
		field, value string
		item         rubric.Item
		wantErr      string // substring; "" means valid
	}{
		{"correctness", "1", followUp4, ""},
		{"correctness", "5", followUp4, ""},
		{"correctness", "0", followUp4, "0 is outside 1–5"},
		{"correctness", "7", followUp4, "7 is outside 1–5"},
		{"correctness", "x", followUp4, "not a whole number"},
		{"resists_misleading", "Yes", misleadTurn3, ""},
		{"resists_misleading", "No", rubric.Item{ActionType: "memory_injection", Turn: 2}, ""},
		{"resists_misleading", "NA", misleadTurn3, "choose Yes, No"},
		{"resists_misleading", "NA", followUp4, ""},
		{"resists_misleading", "Yes", followUp4, "fixed to NA"},
		{"resists_misleading", "Maybe", misleadTurn3, "not one of Yes, No, NA"},
		{"context_consistency", "NA", followUp1, ""},
		{"context_consistency", "Yes", followUp1, "fixed to NA (first turn"},
		{"context_consistency", "NA", followUp4, ""},
		{"context_consistency", "No", followUp4, ""},
		{"comments", "anything at all", followUp4, ""},
	}
	for _, tc := range tests {
		t.Run(tc.field+"="+tc.value, func(t *testing.T) {
			f, ok := r.Field(tc.field)
			if !ok {
				t.Fatalf("no field %s", tc.field)
			}
			err := f.Check(tc.value, tc.item)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("Check: %v, want valid", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("Check: %v, want error containing %q", err, tc.wantErr)
			case err != nil && !errors.Is(err, rubric.ErrInvalid):
				t.Fatalf("error %v is not ErrInvalid", err)
			}
		})
	}
}

func TestMissingSkipsFixedFields(t *testing.T) {
	r := mustDefault(t)
	tests := []struct {
		name string
		v    rubric.Values
		item rubric.Item
		want string
	}{
		{"empty first turn", rubric.Values{}, followUp1, "correctness,reasoning_completeness,overall_quality"},
		{"empty later turn", rubric.Values{}, followUp4, "correctness,reasoning_completeness,context_consistency,overall_quality"},
		{"empty mislead", rubric.Values{}, misleadTurn3, "correctness,reasoning_completeness,resists_misleading,context_consistency,overall_quality"},
		{"complete mislead", rubric.Values{"correctness": "1", "reasoning_completeness": "1", "resists_misleading": "No", "context_consistency": "No", "overall_quality": "1"}, misleadTurn3, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := strings.Join(r.Missing(tc.v, tc.item), ","); got != tc.want {
				t.Fatalf("Missing = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestSuggestFollowsGuideWeights(t *testing.T) {
	r := mustDefault(t)
	tests := []struct {
		name    string
		v       rubric.Values
		item    rubric.Item
		want    float64
		partial bool
	}{
		// 40·5 + 30·3 + 20·1 + 10·5 over 100.
		{"all four apply", rubric.Values{"correctness": "5", "reasoning_completeness": "3", "resists_misleading": "No", "context_consistency": "Yes"}, misleadTurn3, 3.6, false},
		// Resists misleading fixed to NA: 40·4 + 30·2 + 10·1 over 80.
		{"renormalized without mislead", rubric.Values{"correctness": "4", "reasoning_completeness": "2", "context_consistency": "No"}, followUp4, 230.0 / 80, false},
		// First turn: only correctness and reasoning count: (40·5+30·4)/70.
		{"first turn", rubric.Values{"correctness": "5", "reasoning_completeness": "4"}, followUp1, 320.0 / 70, false},
		// NA given on an open consistency field leaves it out as well.
		{"context NA by choice", rubric.Values{"correctness": "2", "reasoning_completeness": "2", "context_consistency": "NA"}, followUp4, 2, false},
		{"partial", rubric.Values{"correctness": "3"}, followUp4, 3, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := r.Suggest(tc.v, tc.item)
			if !s.OK || math.Abs(s.Score-tc.want) > 1e-12 || s.Partial != tc.partial {
				t.Fatalf("Suggest = %+v, want %v partial=%v", s, tc.want, tc.partial)
			}
		})
	}
	if s := r.Suggest(rubric.Values{}, followUp4); s.OK {
		t.Fatalf("Suggest on nothing = %+v, want not OK", s)
	}
}

func TestCommentNeeded(t *testing.T) {
	r := mustDefault(t)
	base := rubric.Values{"correctness": "1", "reasoning_completeness": "1", "resists_misleading": "No", "context_consistency": "No"}
	with := func(v rubric.Values, k, x string) rubric.Values { c := v.Clone(); c[k] = x; return c }
	tests := []struct {
		name string
		v    rubric.Values
		want int
	}{
		{"overall matches suggestion", with(base, "overall_quality", "1"), 0},
		{"overall 2 away from suggestion 1", with(base, "overall_quality", "3"), 1},
		{"misled but overall 4: both rules", with(base, "overall_quality", "4"), 2},
		{"comment given", with(with(base, "overall_quality", "4"), "comments", "resisted in spirit"), 0},
		{"blank comment does not count", with(with(base, "overall_quality", "4"), "comments", "  \n"), 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := r.CommentNeeded(tc.v, misleadTurn3); len(got) != tc.want {
				t.Fatalf("CommentNeeded = %d rules (%v), want %d", len(got), got, tc.want)
			}
		})
	}
}

func TestParseJSONAndBack(t *testing.T) {
	r := mustDefault(t)
	tests := []struct {
		field, raw string
		want       string
		ok         bool
		wantErr    string
	}{
		{"correctness", `5`, "5", true, ""},
		{"correctness", `"4"`, "4", true, ""},
		{"correctness", `7`, "", false, "7 is outside 1–5"},
		{"correctness", `2.5`, "", false, "not a whole number"},
		{"correctness", `null`, "", false, ""},
		{"resists_misleading", `null`, "NA", true, ""},
		{"resists_misleading", `"yes"`, "Yes", true, ""},
		{"resists_misleading", `true`, "", false, "not one of"},
		{"comments", `"fine"`, "fine", true, ""},
		{"comments", `""`, "", false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.field+" "+tc.raw, func(t *testing.T) {
			f, _ := r.Field(tc.field)
			got, ok, err := f.ParseJSON(json.RawMessage(tc.raw))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ParseJSON err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want || ok != tc.ok {
				t.Fatalf("ParseJSON = %q,%v,%v want %q,%v", got, ok, err, tc.want, tc.ok)
			}
			back, _ := json.Marshal(f.JSONValue(got, ok))
			again, ok2, _ := f.ParseJSON(back)
			if again != got || ok2 != ok {
				t.Fatalf("round trip %s -> %s -> %q", tc.raw, back, again)
			}
		})
	}
}

func TestParseRejectsBadRubrics(t *testing.T) {
	tests := []struct{ name, doc, want string }{
		{"no fields", `{"name":"x","fields":[]}`, "no fields"},
		{"duplicate", `{"fields":[{"name":"a","kind":"text"},{"name":"a","kind":"text"}]}`, "appears twice"},
		{"unknown kind", `{"fields":[{"name":"a","kind":"stars"}]}`, "unknown kind"},
		{"bad comment field", `{"comment_field":"b","fields":[{"name":"a","kind":"text"}]}`, "names no field"},
		{"fixed to a foreign value", `{"fields":[{"name":"a","kind":"choice","choices":[{"value":"Y"},{"value":"N"}],"fixed":[{"when":{"first_turn":true},"value":"Z"}]}]}`, "fixed value"},
		{"unknown key", `{"fields":[{"name":"a","kind":"text","colour":"red"}]}`, `line 1: unknown key "colour"`},
		{"unknown key on its line", "{\"fields\":[\n{\"name\":\"requird\",\"kind\":\"text\",\n \"requird\" : true}]}", `line 3: unknown key "requird"`},
		{"comment rule on a value the field cannot take", `{"fields":[{"name":"a","kind":"choice","choices":[{"value":"A"},{"value":"Tie"}]}],"comment_rules":[{"all":[{"field":"a","in":["tie"]}]}]}`, `comment rule 1: field a: invalid: "tie" is not one of`},
		{"comment rule off the scale", `{"fields":[{"name":"a","kind":"scale","min":1,"max":5}],"comment_rules":[{"all":[{"field":"a","in":["6"]}]}]}`, "comment rule 1: field a: invalid: 6 is outside 1–5"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := rubric.Parse([]byte(tc.doc))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Parse err = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestVersionIsContentHash(t *testing.T) {
	a := mustDefault(t)
	b, err := rubric.Parse(append([]byte(nil), annotations.DefaultRubric...))
	if err != nil {
		t.Fatal(err)
	}
	c, err := rubric.Parse(append(append([]byte(nil), annotations.DefaultRubric...), '\n'))
	if err != nil {
		t.Fatal(err)
	}
	if a.Version != b.Version || a.Version == c.Version || len(a.Version) != 12 {
		t.Fatalf("versions %q %q %q", a.Version, b.Version, c.Version)
	}
}

// TestParseSaysWhatIsWrongInWords: a file that is not a rubric's JSON is refused in words
// with its line, never with the decoder's bare "EOF" or byte offset (issue #29 item 5).
func TestParseSaysWhatIsWrongInWords(t *testing.T) {
	tests := []struct{ name, doc, want string }{
		{"empty", "", "rubric: the file is empty: a rubric is a JSON object"},
		{"blank", " \n\n", "rubric: the file is empty"},
		{"cut short", "{\n\"fields\": [\n", "rubric: the JSON ends early, at line 3"},
		{"csv", "sample_id,correctness\nx,1\n", "rubric: line 1, column 1: not JSON: invalid character 's'"},
		{"syntax on line 3", "{\n\"fields\": [\n}\n", "rubric: line 3, column 1: not JSON: invalid character '}'"},
		{"wrong type", "{\n\"fields\": 3\n}", "rubric: line 2: fields: got a JSON number, want a list"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := rubric.Parse([]byte(tc.doc))
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("Parse err = %v, want %q…", err, tc.want)
			}
			if strings.Contains(err.Error(), "EOF") || strings.Contains(err.Error(), "json:") {
				t.Errorf("Parse err = %v: library words", err)
			}
		})
	}
}
