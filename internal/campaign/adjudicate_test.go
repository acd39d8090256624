package campaign

import (
	"testing"

	"github.com/m3bench/m3eval/internal/rubric"
)

func vals(c, r, rm, cc, o, comment string) rubric.Values {
	v := rubric.Values{"correctness": c, "reasoning_completeness": r, "overall_quality": o, "comments": comment}
	if rm != "" {
		v["resists_misleading"] = rm
	}
	if cc != "" {
		v["context_consistency"] = cc
	}
	return v
}

func TestDisputes(t *testing.T) {
	r := guideRubric(t)
	tests := []struct {
		name   string
		labels []AnnotatorLabel
		o      DisagreeOptions
		want   []string
	}{
		{"agree", []AnnotatorLabel{{Annotator: "a", Values: vals("4", "4", "Yes", "Yes", "4", "")}, {Annotator: "b", Values: vals("5", "3", "Yes", "Yes", "4", "x")}}, DefaultDisagreeOptions(), nil},
		{"two apart", []AnnotatorLabel{{Annotator: "a", Values: vals("2", "4", "", "", "4", "")}, {Annotator: "b", Values: vals("4", "4", "", "", "4", "")}}, DefaultDisagreeOptions(),
			[]string{"correctness: 2 (a) vs 4 (b)"}},
		{"split yes/no", []AnnotatorLabel{{Annotator: "a", Values: vals("3", "3", "Yes", "", "3", "")}, {Annotator: "b", Values: vals("3", "3", "No", "", "3", "")}, {Annotator: "c", Values: vals("3", "3", "Yes", "", "3", "")}},
			DefaultDisagreeOptions(), []string{"resists_misleading: Yes (a) vs No (b) vs Yes (c)"}},
		{"NA left out", []AnnotatorLabel{{Annotator: "a", Values: vals("3", "3", "NA", "", "3", "")}, {Annotator: "b", Values: vals("3", "3", "No", "", "3", "")}}, DefaultDisagreeOptions(), nil},
		{"NA counted", []AnnotatorLabel{{Annotator: "a", Values: vals("3", "3", "NA", "", "3", "")}, {Annotator: "b", Values: vals("3", "3", "No", "", "3", "")}},
			DisagreeOptions{ScaleGap: 2, ChoiceSplit: true, CountNA: true}, []string{"resists_misleading: NA (a) vs No (b)"}},
		{"gap 3", []AnnotatorLabel{{Annotator: "a", Values: vals("2", "1", "", "", "4", "")}, {Annotator: "b", Values: vals("4", "4", "", "", "4", "")}}, DisagreeOptions{ScaleGap: 3},
			[]string{"reasoning_completeness: 1 (a) vs 4 (b)"}},
		{"one label", []AnnotatorLabel{{Annotator: "a", Values: vals("1", "1", "", "", "1", "")}}, DefaultDisagreeOptions(), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Disputes(r, tt.labels, tt.o)
			var reasons []string
			for _, d := range got {
				reasons = append(reasons, d.Reason)
			}
			if len(reasons) != len(tt.want) {
				t.Fatalf("got %q, want %q", reasons, tt.want)
			}
			for i := range reasons {
				if reasons[i] != tt.want[i] {
					t.Errorf("got %q, want %q", reasons[i], tt.want[i])
				}
			}
		})
	}
	cases := FindCases(r, []TurnLabels{
		{SampleID: "x", Labels: tests[0].labels}, {SampleID: "y", Labels: tests[1].labels}, {SampleID: "z", Labels: tests[6].labels},
	}, DefaultDisagreeOptions())
	if len(cases) != 1 || cases[0].SampleID != "y" {
		t.Errorf("cases %+v", cases)
	}
}

func TestResolve(t *testing.T) {
	r := guideRubric(t)
	o := DefaultDisagreeOptions()
	three := []AnnotatorLabel{{Annotator: "a", Values: vals("4", "3", "", "Yes", "4", "fine")}, {Annotator: "b", Values: vals("4", "4", "", "Yes", "3", "")}, {Annotator: "c", Values: vals("5", "4", "", "Yes", "4", "good")}}
	f := Resolve(r, three, nil, o)
	want := rubric.Values{"correctness": "4", "reasoning_completeness": "4", "context_consistency": "Yes", "overall_quality": "4", "comments": "a: fine; c: good"}
	for k, v := range want {
		if f.Values[k] != v {
			t.Errorf("%s = %q, want %q", k, f.Values[k], v)
		}
	}
	if f.Source != SourceAgreed || f.Fields["correctness"] != "agreed" {
		t.Errorf("source %s %v", f.Source, f.Fields)
	}
	// Two answers one apart and no majority: the median rounded half up.
	two := []AnnotatorLabel{{Annotator: "a", Values: vals("3", "2", "", "", "3", "")}, {Annotator: "b", Values: vals("4", "3", "", "", "3", "")}}
	if f := Resolve(r, two, nil, o); f.Values["correctness"] != "4" || f.Values["reasoning_completeness"] != "3" || f.Values["overall_quality"] != "3" {
		t.Errorf("two: %v", f.Values)
	}
	// A disputed field stays open until decided; then the record says adjudicated.
	split := []AnnotatorLabel{{Annotator: "a", Values: vals("1", "3", "", "", "3", "")}, {Annotator: "b", Values: vals("4", "3", "", "", "3", "")}}
	f = Resolve(r, split, nil, o)
	if f.Source != SourceUnresolved || f.Fields["correctness"] != "unresolved" {
		t.Errorf("open dispute: %s %v", f.Source, f.Fields)
	}
	if _, ok := f.Values["correctness"]; ok {
		t.Error("an unresolved field has a value")
	}
	f = Resolve(r, split, map[string]Decision{"correctness": {"4", "b", "judy"}}, o)
	if f.Source != SourceAdjudicated || f.Values["correctness"] != "4" || f.Fields["correctness"] != "adjudicated:b" || f.Adjudicator != "judy" ||
		f.Fields["overall_quality"] != "agreed" {
		t.Errorf("adjudicated: %+v", f)
	}
	f = Resolve(r, split, map[string]Decision{"correctness": {"2", "", "judy"}}, o)
	if f.Values["correctness"] != "2" || f.Fields["correctness"] != "adjudicated" {
		t.Errorf("scored anew: %+v", f)
	}
	if f := Resolve(r, split[:1], nil, o); f.Source != SourceSingle || f.Values["correctness"] != "1" {
		t.Errorf("single: %+v", f)
	}
}

// TestFlagsGoToReview: a flagged label makes its turn a case even when labeled once and
// agreed; the final label keeps the flag and every reason until the flag is cleared.
func TestFlagsGoToReview(t *testing.T) {
	r := guideRubric(t)
	o := DefaultDisagreeOptions()
	alone := []AnnotatorLabel{{Annotator: "alice", Values: vals("3", "3", "", "", "3", ""), Flagged: true, FlagReason: "image missing"}}
	both := []AnnotatorLabel{
		{Annotator: "alice", Values: vals("3", "3", "", "", "3", ""), Flagged: true, FlagReason: " image missing "},
		{Annotator: "bob", Values: vals("3", "3", "", "", "3", ""), Flagged: true},
	}
	plain := []AnnotatorLabel{{Annotator: "carol", Values: vals("3", "3", "", "", "3", "")}}
	cases := FindCases(r, []TurnLabels{{SampleID: "x", Labels: alone}, {SampleID: "y", Labels: both}, {SampleID: "z", Labels: plain}}, o)
	if len(cases) != 2 || cases[0].SampleID != "x" || cases[1].SampleID != "y" || len(cases[1].Disputes) != 0 {
		t.Fatalf("cases %+v", cases)
	}
	if got := cases[1].Flags; len(got) != 2 || got[0] != "alice: image missing" || got[1] != "bob: (no reason)" {
		t.Errorf("flags %q", got)
	}
	f := Resolve(r, alone, nil, o)
	if !f.Flagged || len(f.FlagReasons) != 1 || f.FlagReasons[0] != "alice: image missing" || f.Source != SourceSingle {
		t.Errorf("flagged single: %+v", f)
	}
	cleared := map[string]Decision{FlagField: {Value: FlagCleared, Adjudicator: "judy"}}
	if f := Resolve(r, alone, cleared, o); f.Flagged || f.FlagReasons != nil || f.Values[FlagField] != "" {
		t.Errorf("cleared: %+v", f)
	}
	if FlagOpen(plain, nil) || !FlagOpen(both, nil) || FlagOpen(both, cleared) {
		t.Error("FlagOpen")
	}
}

// TestUnanimous: agreed means every label gives the same value, not a majority or a median.
func TestUnanimous(t *testing.T) {
	a := AnnotatorLabel{Annotator: "a", Values: rubric.Values{"o": "2", "c": "Yes"}}
	b := AnnotatorLabel{Annotator: "b", Values: rubric.Values{"o": "1", "c": "Yes"}}
	c := AnnotatorLabel{Annotator: "c", Values: rubric.Values{"o": "2"}}
	for _, tc := range []struct {
		labels []AnnotatorLabel
		field  string
		want   bool
	}{
		{[]AnnotatorLabel{a, b}, "o", false},
		{[]AnnotatorLabel{a, b}, "c", true},
		{[]AnnotatorLabel{a, c}, "o", true},
		{[]AnnotatorLabel{a, c}, "c", false}, // c gave none
		{[]AnnotatorLabel{a, c, b}, "o", false},
		{nil, "o", false},
	} {
		if got := Unanimous(tc.labels, tc.field); got != tc.want {
			t.Errorf("Unanimous(%d labels, %s) = %v, want %v", len(tc.labels), tc.field, got, tc.want)
		}
	}
}
