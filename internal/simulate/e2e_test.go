package simulate_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/m3bench/m3eval/internal/dataset"
	"github.com/m3bench/m3eval/internal/simulate"
	"github.com/m3bench/m3eval/internal/simulate/demovlm"
	"github.com/m3bench/m3eval/internal/vlm"
)

const demoScenes = "../../annotations/demo/images/scenes.jsonl"

func loadDemo(t testing.TB) []simulate.Scene {
	t.Helper()
	scenes, err := simulate.ReadScenesFile(demoScenes)
	if err != nil {
		t.Fatal(err)
	}
	if err := simulate.ResolveImages(scenes, demoScenes, filepath.Dir(demoScenes)); err != nil {
		t.Fatal(err)
	}
	return scenes
}

// demoServer starts the scripted VLM on 127.0.0.1.
func demoServer(t testing.TB, scenes []simulate.Scene) (*httptest.Server, *demovlm.Server) {
	t.Helper()
	d, err := demovlm.New(scenes, os.ReadFile)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(d)
	t.Cleanup(srv.Close)
	return srv, d
}

func client(t testing.TB, url, model string, mod func(*vlm.Options)) *vlm.Client {
	t.Helper()
	o := vlm.Options{Endpoint: url + "/v1", Model: model, MaxRetries: 3, Backoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond, Timeout: 5 * time.Second}
	if mod != nil {
		mod(&o)
	}
	c, err := vlm.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func readTurns(t testing.TB, path string) []simulate.TurnRecord {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []simulate.TurnRecord
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var r simulate.TurnRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("%s: %v: %s", path, err, sc.Bytes())
		}
		out = append(out, r)
	}
	return out
}

// byEpisode groups turns by episode, in turn order.
func byEpisode(turns []simulate.TurnRecord) map[string][]simulate.TurnRecord {
	m := map[string][]simulate.TurnRecord{}
	for _, r := range turns {
		m[r.EpisodeID] = append(m[r.EpisodeID], r)
	}
	return m
}

func actions(turns []simulate.TurnRecord) string {
	var s []string
	for _, r := range turns {
		s = append(s, string(r.ActionType))
	}
	return strings.Join(s, " ")
}

func run(t testing.TB, scenes []simulate.Scene, c simulate.Chatter, model string, mod func(*simulate.Options)) (string, *simulate.Summary, error) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "turns.jsonl")
	opts := simulate.Options{Scenes: scenes, Strategies: []simulate.Strategy{simulate.StrategyRules, simulate.StrategyCrossImage},
		Turns: 10, Difficulty: 2, Seed: 42, Model: model, Concurrency: 3, Chat: c, Out: out, ScenesDigest: "demo"}
	if mod != nil {
		mod(&opts)
	}
	sum, err := simulate.Run(context.Background(), opts)
	return out, sum, err
}

// The rule strategy's action sequences for each persona on the demo scenes (10 turns per
// task: turn 1 opens, turns 2-5 are memory build at most, turn 10 is the direct question).
// Why each sequence is what the strategy must choose:
//
// umbrella_zh, faithful: the opening answer names the sky with its grey color and the
// puddles (a keyword), 2 of 4 facts: coverage 0.5 -> follow_up; the answer gives the next
// fact of the chain (the umbrella held open): 0.75 -> logic_skip, which ends memory build;
// state evolution cycles update, mislead, redundancy, distraction, fine_grained from turn 4;
// turn 10 asks.
//
// apples_en, faithful: the opening answer gives colors only, none of the four facts:
// coverage 0 -> guidance, then 0.25 -> guidance, 0.5 -> follow_up, 0.75 -> logic_skip. Its
// second task (next_tasks) opens with next_task at turn 11; the answer gives both of its
// facts, so logic_skip at once, then state evolution and the direct question at turn 20.
//
// umbrella_zh, confused: the opening answer swaps the colors of the objects, so the next turn
// is a negation (one wrong value per turn is corrected); the acknowledgement is correct, so
// coverage decides again: 0.25 -> guidance, 0.5 -> follow_up, 0.75 -> logic_skip.
//
// apples_en, confused: negation, then guidance twice (0, 0.25); turn 5 is the phase's last,
// where the logic-skip test is asked whatever the coverage (the document's _test_logic_skip
// asks it below 0.7).
//
// gullible answers like faithful until a false claim: the same sequences as faithful.
func TestRuleSequencesPerPersona(t *testing.T) {
	scenes := loadDemo(t)
	srv, _ := demoServer(t, scenes)
	task2 := " next_task logic_skip update mislead redundancy distraction fine_grained update mislead initial"
	want := map[string]map[string]string{
		"faithful": {
			"umbrella_zh_rules": "initial follow_up logic_skip update mislead redundancy distraction fine_grained update initial",
			"apples_en_rules":   "initial guidance guidance follow_up logic_skip update mislead redundancy distraction initial" + task2,
		},
		"gullible": {
			"umbrella_zh_rules": "initial follow_up logic_skip update mislead redundancy distraction fine_grained update initial",
			"apples_en_rules":   "initial guidance guidance follow_up logic_skip update mislead redundancy distraction initial" + task2,
		},
		"confused": {
			"umbrella_zh_rules": "initial negation guidance follow_up logic_skip update mislead redundancy distraction initial",
			"apples_en_rules":   "initial negation guidance guidance logic_skip update mislead redundancy distraction initial" + task2,
		},
	}
	for persona, eps := range want {
		t.Run(persona, func(t *testing.T) {
			out, sum, err := run(t, scenes, client(t, srv.URL, persona, nil), persona, func(o *simulate.Options) {
				o.Strategies = []simulate.Strategy{simulate.StrategyRules}
			})
			if err != nil {
				t.Fatalf("%v: %+v", err, sum)
			}
			got := byEpisode(readTurns(t, out))
			for ep, seq := range eps {
				turns := got[ep+"_"+persona]
				if a := actions(turns); a != seq {
					t.Errorf("%s: actions\n got %s\nwant %s", ep, a, seq)
				}
				checkRuleTurns(t, persona, turns)
			}
		})
	}
}

// checkRuleTurns holds what every rule episode must show, whatever the persona.
func checkRuleTurns(t *testing.T, persona string, turns []simulate.TurnRecord) {
	t.Helper()
	phaseOrder := map[simulate.Phase]int{simulate.PhaseNextTask: 0, simulate.PhaseMemoryBuild: 0, simulate.PhaseStateEvolve: 1, simulate.PhaseReasoningTest: 2}
	last, lastCov := 0, 0.0
	for i, r := range turns {
		m := r.Meta
		if r.ActionType == simulate.ActNextTask {
			// A new task of the same conversation: its phases and coverage start again.
			if m.Phase != simulate.PhaseNextTask || i == 0 || turns[i-1].Meta.Phase != simulate.PhaseReasoningTest {
				t.Errorf("%s: next task in phase %s after %s", r.SampleID, m.Phase, turns[max(i-1, 0)].Meta.Phase)
			}
			last, lastCov = 0, 0
		}
		if r.Turn != i+1 || r.SampleID != r.EpisodeID+"_turn_"+itoa(i+1) {
			t.Errorf("turn %d: numbered %d, sample %s", i+1, r.Turn, r.SampleID)
		}
		if p := phaseOrder[m.Phase]; p < last {
			t.Errorf("%s: phase %s after a later phase", r.SampleID, m.Phase)
		} else {
			last = p
		}
		if m.Coverage == nil || *m.Coverage < lastCov || *m.Coverage > 1 {
			t.Errorf("%s: coverage %v after %v", r.SampleID, m.Coverage, lastCov)
		} else {
			lastCov = *m.Coverage
		}
		if len(m.RequiredEvidence) == 0 || r.ExpectedAnswer == "" || r.VLMResponse == "" || strings.ContainsAny(r.UserMessage, "{}") {
			t.Errorf("%s: incomplete record %+v", r.SampleID, r)
		}
		// The user turn is one of the action's templates, filled.
		if rec := simulate.Recognize(r.UserMessage, m.Language); r.ActionType != simulate.ActInitial && rec.Key != string(r.ActionType) {
			t.Errorf("%s: %q is not a %s template (reads as %q)", r.SampleID, r.UserMessage, r.ActionType, rec.Key)
		}
		switch r.ActionType {
		case simulate.ActFollowUp:
			if m.Phase != simulate.PhaseMemoryBuild && m.Phase != simulate.PhaseReasoningTest {
				t.Errorf("%s: %s outside memory build and the reasoning test", r.SampleID, r.ActionType)
			}
		case simulate.ActGuidance, simulate.ActLogicSkip:
			if m.Phase != simulate.PhaseMemoryBuild {
				t.Errorf("%s: %s outside memory build", r.SampleID, r.ActionType)
			}
		case simulate.ActMislead:
			if m.FalseValue == "" || m.TrueValue == "" || simulate.SameValue(m.FalseValue, m.TrueValue) || m.Entity == "" {
				t.Errorf("%s: mislead meta %+v", r.SampleID, m)
			}
			accepted := strings.Contains(r.VLMResponse, m.FalseValue) && !strings.Contains(r.VLMResponse, m.TrueValue)
			if (persona == "gullible") != accepted && persona != "confused" {
				t.Errorf("%s: %s answered %q to a false %s", r.SampleID, persona, r.VLMResponse, m.FalseValue)
			}
		case simulate.ActUpdate:
			if m.OldValue == "" || m.NewValue == "" || m.OldValue == m.NewValue || !strings.Contains(r.UserMessage, m.NewValue) {
				t.Errorf("%s: update meta %+v", r.SampleID, m)
			}
		case simulate.ActNegation:
			if m.FalseValue == "" || m.TrueValue == "" || !strings.Contains(turns[i-1].VLMResponse, m.FalseValue) {
				t.Errorf("%s: negation of %q, which the previous answer %q did not say", r.SampleID, m.FalseValue, turns[i-1].VLMResponse)
			}
		}
	}
	// The reasoning test opens with the direct question (follow-ups may come after it).
	for i, r := range turns {
		if r.Meta.Phase == simulate.PhaseReasoningTest && (i == 0 || turns[i-1].Meta.Phase != simulate.PhaseReasoningTest) && r.ActionType != simulate.ActInitial {
			t.Errorf("%s: the reasoning test opens with %s, not the direct question", r.SampleID, r.ActionType)
		}
	}
	if n := len(turns); n == 0 || turns[n-1].Meta.Phase != simulate.PhaseReasoningTest {
		t.Errorf("the episode does not end in the reasoning test")
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// The cross-image test: the five phases in order, the meta the judge needs, and the
// personas' behaviour visible in the answers.
func TestCrossImagePerPersona(t *testing.T) {
	scenes := loadDemo(t)
	srv, _ := demoServer(t, scenes)
	for _, persona := range []string{"faithful", "gullible", "confused"} {
		t.Run(persona, func(t *testing.T) {
			out, _, err := run(t, scenes, client(t, srv.URL, persona, nil), persona, func(o *simulate.Options) {
				o.Strategies = []simulate.Strategy{simulate.StrategyCrossImage}
			})
			if err != nil {
				t.Fatal(err)
			}
			eps := byEpisode(readTurns(t, out))
			if len(eps) != 2 {
				t.Fatalf("%d cross-image episodes, want 2 (the two street scenes)", len(eps))
			}
			for id, turns := range eps {
				// difficulty 2: 1 opening + 2 images, 8 filler, 2 types x (confusion, swap,
				// recall) + 1 shared-value ambiguous reference.
				want := "initial guidance guidance" + strings.Repeat(" distraction", 8) +
					" cross_image_confusion cross_image_confusion ambiguous_reference attribute_swap attribute_swap long_context_recall long_context_recall"
				if a := actions(turns); a != want {
					t.Errorf("%s:\n got %s\nwant %s", id, a, want)
				}
				for _, r := range turns {
					m := r.Meta
					if len(m.ObjectsPerImage) != 2 || m.ConfusableObjects == nil || *m.ConfusableObjects != 4 {
						t.Errorf("%s: objects_per_image / confusable_objects %+v", r.SampleID, m)
					}
					switch r.ActionType {
					case simulate.ActCrossImageConfusion, simulate.ActAmbiguousReference:
						if m.Ambiguous == nil || !*m.Ambiguous {
							t.Errorf("%s: not marked ambiguous", r.SampleID)
						}
						asks := strings.Contains(r.VLMResponse, "?") || strings.Contains(r.VLMResponse, "？")
						if asks != (persona == "faithful") {
							t.Errorf("%s: %s answered %q", r.SampleID, persona, r.VLMResponse)
						}
					case simulate.ActAttributeSwap:
						if m.TargetImage < 1 || m.FalseValue == "" || simulate.SameValue(m.FalseValue, m.TrueValue) {
							t.Errorf("%s: swap meta %+v", r.SampleID, m)
						}
						rejects := strings.Contains(r.VLMResponse, m.TrueValue)
						if rejects != (persona == "faithful") {
							t.Errorf("%s: %s answered %q to the swap", r.SampleID, persona, r.VLMResponse)
						}
					case simulate.ActLongContextRecall:
						img := []string{"Image ", "图片"}[map[simulate.Language]int{"en": 0, "zh": 1}[m.Language]] + itoa(m.TargetImage)
						right := strings.HasPrefix(r.VLMResponse, img)
						if right == (persona == "confused") {
							t.Errorf("%s: %s recalled %q, the fact is in %s", r.SampleID, persona, r.VLMResponse, img)
						}
					}
				}
			}
		})
	}
}

// A failing endpoint fails its episodes only; the summary names each with its turn and why.
func TestBadEndpointFailsPerEpisode(t *testing.T) {
	scenes := loadDemo(t)
	srv, _ := demoServer(t, scenes)
	cases := []struct{ model, says string }{
		{"http500@apples_en", "HTTP 500 Internal Server Error"},
		{"malformed@apples_en", "malformed response"},
		{"empty@apples_en", "the response has no choices"},
		{"hang@apples_en", "no response within 100ms"},
	}
	for _, tc := range cases {
		t.Run(tc.model, func(t *testing.T) {
			c := client(t, srv.URL, tc.model, func(o *vlm.Options) { o.Timeout = 100 * time.Millisecond; o.MaxRetries = 1 })
			out, sum, err := run(t, scenes, c, tc.model, nil)
			if !errors.Is(err, simulate.ErrEpisodesFailed) {
				t.Fatalf("err = %v", err)
			}
			if len(sum.Failed) != 1 || !strings.HasPrefix(sum.Failed[0].Episode, "apples_en_rules") || sum.Failed[0].Turn != 1 ||
				!strings.Contains(sum.Failed[0].Error(), tc.says) {
				t.Fatalf("failed: %v", sum.Failed)
			}
			eps := byEpisode(readTurns(t, out))
			if len(eps) != sum.Episodes-1 || sum.Done != sum.Episodes-1 {
				t.Errorf("%d episodes written, summary %+v", len(eps), sum)
			}
			for id := range eps {
				if strings.HasPrefix(id, "apples_en") {
					t.Errorf("the failed episode %s was written", id)
				}
			}
		})
	}
}

// flaky fails every third turn once with 503 or 429 and every fourth with a 200 HTML page;
// retries carry every episode through.
func TestFlakyEndpointRecovers(t *testing.T) {
	scenes := loadDemo(t)
	srv, d := demoServer(t, scenes)
	out, sum, err := run(t, scenes, client(t, srv.URL, "flaky", func(o *vlm.Options) { o.MaxRetries = 6 }), "flaky", nil)
	if err != nil {
		t.Fatalf("%v: %+v", err, sum.Failed)
	}
	turns := readTurns(t, out)
	if int64(len(turns)) >= d.Requests() || sum.Done != sum.Episodes {
		t.Errorf("%d turns from %d requests; summary %+v", len(turns), d.Requests(), sum)
	}
	// Every episode reached a fourth turn, so every one met the HTML page and went on.
	for id, ep := range byEpisode(turns) {
		if len(ep) < 4 {
			t.Errorf("%s: %d turns", id, len(ep))
		}
	}
}

// The meta of every simulated turn keeps the turn meta contract: only its keys, each of its
// type and range.
func TestMetaContract(t *testing.T) {
	scenes := loadDemo(t)
	srv, _ := demoServer(t, scenes)
	phases := map[string]bool{"memory_build": true, "state_evolve": true, "reasoning_test": true, "grounding": true,
		"filler_injection": true, "ambiguous_reference": true, "attribute_swap": true, "long_context_recall": true, "next_task": true}
	temp := 0.3
	for _, persona := range []string{"faithful", "confused"} {
		out, _, err := run(t, scenes, client(t, srv.URL, persona, nil), persona, func(o *simulate.Options) {
			if persona == "confused" { // meta.sampling too
				o.Sampling = simulate.Sampling{System: "Be brief.", Temperature: &temp, MaxTokens: 64}
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			var rec struct{ Meta map[string]any }
			if err := json.Unmarshal([]byte(line), &rec); err != nil {
				t.Fatal(err)
			}
			// The judge's reader takes it, and reads what was written.
			var raw struct{ Meta json.RawMessage }
			var ours struct{ Meta simulate.Meta }
			if err := json.Unmarshal([]byte(line), &raw); err != nil {
				t.Fatalf("%s line %d: %v", persona, i+1, err)
			}
			if err := json.Unmarshal([]byte(line), &ours); err != nil {
				t.Fatalf("%s line %d: simulate.Meta: %v", persona, i+1, err)
			}
			dm, err := dataset.ParseMeta(raw.Meta)
			if err != nil {
				t.Fatalf("%s line %d: dataset.ParseMeta: %v", persona, i+1, err)
			}
			m := ours.Meta
			if dm.Language != string(m.Language) || dm.Phase != string(m.Phase) || dm.Entity != m.Entity || dm.Attribute != m.Attribute ||
				dm.FalseValue != m.FalseValue || dm.TrueValue != m.TrueValue || dm.OldValue != m.OldValue || dm.NewValue != m.NewValue ||
				!slices.Equal(dm.RequiredEvidence, m.RequiredEvidence) || !reflect.DeepEqual(dm.ObjectsPerImage, m.ObjectsPerImage) ||
				dm.TargetImage != m.TargetImage || !reflect.DeepEqual(dm.Ambiguous, m.Ambiguous) ||
				!reflect.DeepEqual(dm.ConfusableObjects, m.ConfusableObjects) || !reflect.DeepEqual(dm.Coverage, m.Coverage) ||
				!reflect.DeepEqual(dm.EvidenceDependsOn, m.EvidenceDependsOn) || len(m.EvidenceDependsOn) != len(m.RequiredEvidence) {
				t.Errorf("%s line %d: dataset.ParseMeta reads %+v, we wrote %+v", persona, i+1, dm, m)
			}
			for k, v := range rec.Meta {
				ok := false
				switch k {
				case "language":
					ok = v == "en" || v == "zh"
				case "phase":
					s, _ := v.(string)
					ok = phases[s]
				case "entity", "attribute", "false_value", "true_value", "old_value", "new_value":
					s, isStr := v.(string)
					ok = isStr && s != ""
				case "evidence_depends_on":
					ok = allOf(v, func(row any) bool { return allOf(row, func(x any) bool { _, f := x.(float64); return f }) })
				case "required_evidence":
					ok = allOf(v, func(x any) bool { _, s := x.(string); return s })
				case "objects_per_image":
					ok = allOf(v, func(img any) bool {
						return allOf(img, func(o any) bool {
							m, _ := o.(map[string]any)
							_, id := m["id"].(string)
							_, typ := m["type"].(string)
							attrs, isMap := m["attributes"].(map[string]any)
							for _, a := range attrs {
								if _, s := a.(string); !s {
									return false
								}
							}
							return id && typ && isMap && len(m) == 3
						})
					})
				case "ambiguous":
					_, ok = v.(bool)
				case "target_image":
					f, isNum := v.(float64)
					ok = isNum && f >= 1 && f == float64(int(f))
				case "confusable_objects":
					f, isNum := v.(float64)
					ok = isNum && f >= 0 && f == float64(int(f))
				case "coverage":
					f, isNum := v.(float64)
					ok = isNum && f >= 0 && f <= 1
				case "sampling": // outside the typed keys: the run's request settings
					m, _ := v.(map[string]any)
					_, hasSys := m["system"]
					sum, _ := m["system_sha256"].(string)
					ok = persona == "confused" && len(sum) == 64 && m["temperature"] == 0.3 && m["max_tokens"] == 64.0 && !hasSys
				}
				if !ok {
					t.Errorf("%s line %d: meta.%s = %v breaks the contract", persona, i+1, k, v)
				}
			}
		}
	}
}

func allOf(v any, f func(any) bool) bool {
	list, ok := v.([]any)
	if !ok {
		return false
	}
	for _, x := range list {
		if !f(x) {
			return false
		}
	}
	return true
}
