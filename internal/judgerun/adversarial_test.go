package judgerun_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/m3bench/m3eval/annotations"
	"github.com/m3bench/m3eval/internal/dataset"
	"github.com/m3bench/m3eval/internal/judge"
	"github.com/m3bench/m3eval/internal/rubric"
)

// TestJudgeFigures logs the rule judge's agreement with the human labels on every labeled set
// of testdata/judge, per field, as m3eval score computes it (Kendall's τ-b and exact match):
// the figures issue 36's closing note compares before and after a change of the rules. It
// holds nothing to a floor (TestJudgeAgreementFloors does); run it with -v to read them.
func TestJudgeFigures(t *testing.T) {
	for _, set := range []string{"validation.jsonl", "heldout.jsonl", "blindspots.jsonl", "adversarial.jsonl", "adversarial_dev.jsonl"} {
		res := judgeAgreement(t, filepath.Join(judgeTestdata, set))
		fields := make([]string, 0, len(res))
		for f := range res {
			fields = append(fields, f)
		}
		sort.Strings(fields)
		for _, f := range fields {
			var parts []string
			for _, s := range []string{"kendall_tau_b", "exact_match_accuracy"} {
				if x, ok := res[f][s].(float64); ok {
					parts = append(parts, fmt.Sprintf("%s %.3f", s, x))
				}
			}
			t.Logf("%s %s: %s", set, f, strings.Join(parts, ", "))
		}
	}
}

// labeledTurn is one turn of a labeled set with its human labels.
type labeledTurn struct {
	turn  dataset.Turn
	human struct {
		Correctness int     `json:"correctness"`
		Reasoning   int     `json:"reasoning_completeness"`
		Resists     *string `json:"resists_misleading"`
		Overall     int     `json:"overall_quality"`
	}
}

// readLabeled reads a labeled set (one episode a line) into its turns, in episode order.
func readLabeled(t *testing.T, file string) [][]labeledTurn {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out [][]labeledTurn
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for line := 1; sc.Scan(); line++ {
		var ep struct {
			EpisodeID string `json:"episode_id"`
			Turns     []struct {
				SampleID       string          `json:"sample_id"`
				Turn           int             `json:"turn"`
				ActionType     string          `json:"action_type"`
				TaskType       string          `json:"task_type"`
				UserMessage    string          `json:"user_message"`
				VLMResponse    string          `json:"vlm_response"`
				ExpectedAnswer string          `json:"expected_answer"`
				Model          string          `json:"model"`
				Meta           json.RawMessage `json:"meta"`
				Human          json.RawMessage `json:"human_annotation"`
			} `json:"turns"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ep); err != nil {
			t.Fatalf("%s:%d: %v", file, line, err)
		}
		var turns []labeledTurn
		for _, x := range ep.Turns {
			lt := labeledTurn{turn: dataset.Turn{SampleID: x.SampleID, EpisodeID: ep.EpisodeID, Turn: x.Turn, ActionType: x.ActionType,
				TaskType: x.TaskType, UserMessage: x.UserMessage, VLMResponse: x.VLMResponse, ExpectedAnswer: x.ExpectedAnswer,
				Model: x.Model, Meta: x.Meta}}
			if len(x.Human) == 0 {
				t.Fatalf("%s:%d: %s has no human_annotation", file, line, x.SampleID)
			}
			if err := json.Unmarshal(x.Human, &lt.human); err != nil {
				t.Fatalf("%s:%d: %s: %v", file, line, x.SampleID, err)
			}
			turns = append(turns, lt)
		}
		out = append(out, turns)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// adversarialResult is the rule judge's verdict on one adversarial response.
type adversarialResult struct {
	id, group, class       string
	correctness, reasoning int
	overall                int
	resists                string
	humanC, humanO         int
	humanResists, response string
}

// judgeAdversarial judges every one-turn episode of an adversarial set.
func judgeAdversarial(t *testing.T, file string) []adversarialResult {
	t.Helper()
	rb, err := rubric.Parse(annotations.DefaultRubric)
	if err != nil {
		t.Fatal(err)
	}
	j, err := judge.New(rb, judge.DefaultRules())
	if err != nil {
		t.Fatal(err)
	}
	var out []adversarialResult
	for _, ep := range readLabeled(t, file) {
		turns := make([]dataset.Turn, len(ep))
		for i := range ep {
			turns[i] = ep[i].turn
		}
		vs, err := j.Episode(turns)
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range vs {
			id := ep[i].turn.EpisodeID // adv_<lang>_<group>_<class>
			parts := strings.SplitN(id, "_", 4)
			r := adversarialResult{id: id, group: parts[1] + "_" + parts[2], class: parts[3], response: ep[i].turn.VLMResponse,
				humanC: ep[i].human.Correctness, humanO: ep[i].human.Overall}
			if ep[i].human.Resists != nil {
				r.humanResists = *ep[i].human.Resists
			}
			for _, x := range v.Values {
				n, _ := strconv.Atoi(x.Value)
				switch x.Field {
				case "correctness":
					r.correctness = n
				case "reasoning_completeness":
					r.reasoning = n
				case "overall_quality":
					r.overall = n
				case "resists_misleading":
					r.resists = x.Value
				}
			}
			out = append(out, r)
		}
	}
	return out
}

// adversarialViolations checks issue 36's acceptance points on an adversarial set: no wrong
// answer (human correctness ≤ 2) gets correctness above 2, none outscores its group's short
// correct answer on overall, padding earns no reasoning, an accepted false premise does not
// resist.
func adversarialViolations(rs []adversarialResult) []string {
	short := map[string]int{}
	for _, r := range rs {
		if r.class == "short" {
			short[r.group] = r.overall
		}
	}
	var out []string
	for _, r := range rs {
		if r.humanC <= 2 && r.correctness > 2 {
			out = append(out, fmt.Sprintf("%s: wrong answer gets correctness %d: %q", r.id, r.correctness, r.response))
		}
		if s, ok := short[r.group]; ok && r.humanC <= 2 && r.overall > s {
			out = append(out, fmt.Sprintf("%s: wrong answer's overall %d above the short correct answer's %d: %q", r.id, r.overall, s, r.response))
		}
		if strings.HasPrefix(r.class, "pad") && r.reasoning > 1 {
			out = append(out, fmt.Sprintf("%s: padding gets reasoning %d: %q", r.id, r.reasoning, r.response))
		}
		if r.humanResists == "No" && r.resists != "No" {
			out = append(out, fmt.Sprintf("%s: accepted premise resists %q: %q", r.id, r.resists, r.response))
		}
	}
	return out
}

// TestAdversarialFigures logs, for the held-out adversarial set and its development set, the
// judge's verdict on every response and the acceptance points it breaks.
func TestAdversarialFigures(t *testing.T) {
	for _, set := range []string{"adversarial.jsonl", "adversarial_dev.jsonl"} {
		rs := judgeAdversarial(t, filepath.Join(judgeTestdata, set))
		for _, r := range rs {
			t.Logf("%s %-28s human C%d O%d %-3s judge C%d R%d O%d %s", set, r.id, r.humanC, r.humanO, r.humanResists, r.correctness, r.reasoning, r.overall, r.resists)
		}
		v := adversarialViolations(rs)
		for _, x := range v {
			t.Logf("%s violation: %s", set, x)
		}
		t.Logf("%s: %d responses, %d acceptance violations", set, len(rs), len(v))
	}
}

// TestAdversarialAcceptance holds the rule judge to issue 36's acceptance points on the
// held-out adversarial set and its development set: no wrong answer gets correctness above 2
// or outscores its group's short correct answer on overall, cue padding earns no reasoning,
// an accepted false premise does not resist.
func TestAdversarialAcceptance(t *testing.T) {
	for _, set := range []string{"adversarial.jsonl", "adversarial_dev.jsonl"} {
		rs := judgeAdversarial(t, filepath.Join(judgeTestdata, set))
		if len(rs) < 20 {
			t.Fatalf("%s: only %d responses", set, len(rs))
		}
		for _, v := range adversarialViolations(rs) {
			t.Errorf("%s: %s", set, v)
		}
	}
}
