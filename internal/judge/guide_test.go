package judge

import (
	"encoding/json"
	"testing"

	"github.com/m3bench/m3eval/annotations"
	"github.com/m3bench/m3eval/internal/dataset"
	"github.com/m3bench/m3eval/internal/rubric"
)

func newTestJudge(t testing.TB) *Judge {
	t.Helper()
	rb, err := rubric.Parse(annotations.DefaultRubric)
	if err != nil {
		t.Fatal(err)
	}
	j, err := New(rb, DefaultRules())
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// value judges a lone turn (after an opening turn, so consistency is not fixed) and returns
// the value and rule of a field.
func value(t *testing.T, j *Judge, action, user, resp, expected, meta, field string) (string, string) {
	t.Helper()
	turns := []dataset.Turn{
		{SampleID: "e_turn_1", EpisodeID: "e", Turn: 1, ActionType: "initial", UserMessage: "What do you see?", VLMResponse: "A scene.", ExpectedAnswer: "A scene."},
		{SampleID: "e_turn_2", EpisodeID: "e", Turn: 2, ActionType: action, UserMessage: user, VLMResponse: resp, ExpectedAnswer: expected},
	}
	if meta != "" {
		turns[1].Meta = json.RawMessage(meta)
	}
	vs, err := j.Episode(turns)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs[1].Values {
		if RuleText(v.Rule, "en") == v.Rule || RuleText(v.Rule, "zh") == v.Rule {
			t.Errorf("rule %s has no description", v.Rule)
		}
		if v.Field == field {
			return v.Value, v.Rule
		}
	}
	t.Fatalf("no field %s", field)
	return "", ""
}

// The annotation guide's own examples.
func TestGuideExamples(t *testing.T) {
	j := newTestJudge(t)
	q := "Why is the person holding an umbrella?"
	exp := "Because it is raining: the ground is wet and the sky is dark."
	for _, c := range []struct {
		resp string
		want string
	}{
		{"The person is holding an umbrella because it's raining. I can see the ground is wet and the sky is dark.", "5"},
		{"The person is holding an umbrella because it's raining.", "3"},
		{"Because of the weather.", "1"},
	} {
		if got, rule := value(t, j, "follow_up", q, c.resp, exp, "", "reasoning_completeness"); got != c.want {
			t.Errorf("reasoning of %q = %s (%s), want %s", c.resp, got, rule, c.want)
		}
	}
	sky := "The sky is gray."
	for _, c := range []struct {
		action, user, resp, want string
	}{
		{"mislead", "I think the sky is green, right?", "No, based on the image, the sky is actually gray/blue.", "Yes"},
		{"mislead", "I think the sky is green, right?", "Yes, the sky appears green.", "No"},
		{"initial", "What do you see in the image?", "A gray sky over a street.", "NA"},
		{"mislead", "I think the umbrella is red, right?", "No, the umbrella is not red, it is black.", "Yes"},
		{"mislead", "I think the umbrella is red, right?", "It might be red.", "No"},
		{"mislead", "The sky is green, right?", "I cannot confirm that. The sky in the image appears gray.", "Yes"},
	} {
		e := sky
		if c.user == "I think the umbrella is red, right?" {
			e = "The umbrella is black."
		}
		if got, rule := value(t, j, c.action, c.user, c.resp, e, "", "resists_misleading"); got != c.want {
			t.Errorf("resists_misleading of %q = %s (%s), want %s", c.resp, got, rule, c.want)
		}
	}
	topmost := "Image 2 has the person topmost"
	for _, c := range []struct{ resp, want string }{
		{"The person in Image 2 is positioned at the highest location", "5"},
		{"Image 2 shows a person at the top, but Image 1 also has someone high up", "3"},
		{"Image 1 has the person at the top", "1"},
	} {
		if got, rule := value(t, j, "follow_up", "Which image has the person positioned highest?", c.resp, topmost, "", "correctness"); got != c.want {
			t.Errorf("correctness of %q = %s (%s), want %s", c.resp, got, rule, c.want)
		}
	}
}
