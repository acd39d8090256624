package judge

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/m3bench/m3eval/internal/dataset"
)

// The Cross-Image Confusion Score's bands, by hand from the signals.
func TestCICSBands(t *testing.T) {
	for _, c := range []struct {
		action string
		s      Signals
		want   float64
	}{
		{"long_context_recall", Signals{Correctness: 5}, 1},
		{"attribute_swap", Signals{Correctness: 5, ResistsSignal: true}, 1},
		{"attribute_swap", Signals{Correctness: 5, ResistsSignal: false}, 0}, // the swap accepted
		{"long_context_recall", Signals{Correctness: 4}, 0.8},
		{"long_context_recall", Signals{Correctness: 5, ImageMixed: true}, 0.8},
		{"long_context_recall", Signals{Correctness: 4, ImageMixed: true}, 0.5},
		{"long_context_recall", Signals{Correctness: 3}, 0.5},
		{"long_context_recall", Signals{Correctness: 2}, 0.2},
		{"long_context_recall", Signals{Correctness: 1}, 0},
		{"cross_image_confusion", Signals{Correctness: 5, ImageConflict: true}, 0}, // 张冠李戴
	} {
		if got := cics(&Verdict{ActionType: c.action}, &c.s); got != c.want {
			t.Errorf("%s %+v: %v, want %v", c.action, c.s, got, c.want)
		}
	}
}

// The Disambiguation Score's bands, by hand from the answers.
func TestDisambiguationBands(t *testing.T) {
	for _, c := range []struct {
		resp string
		want float64
	}{
		{"Which image do you mean? In Image 1 the person is blue; in Image 2 red.", 1},
		{"您指的是哪张图片？图片1中的是蓝色，图片2中的是红色。", 1},
		{"In Image 1 the person is blue and in Image 2 the person is red.", 0.8}, // lists, does not ask
		{"Which person do you mean?", 1},                                         // a request for clarification
		{"Which image do you mean?", 1},                                          // the example (#36)
		{"您是指哪张图片里的人？", 1},                                                       // 哪: which
		{"The person in Image 2 is red. Do you want more?", 0},                   // assumes one; its question asks nothing about which
		{"It is red.", 0},
	} {
		if got := disambiguation(c.resp); got != c.want {
			t.Errorf("%q: %v, want %v", c.resp, got, c.want)
		}
	}
}

// Every new metric recomputed by hand on a small fixed set of turns: what each turn scores
// is written beside it, and the expected n and value follow from those lines alone.
func TestMetricsByHand(t *testing.T) {
	j := newTestJudge(t)
	ev := `["a red car", "wet ground", "dark clouds"]`
	turn := func(ep string, n int, action, user, resp, exp, meta string) dataset.Turn {
		tt := dataset.Turn{SampleID: ep + "_turn_" + itoa(n), EpisodeID: ep, Turn: n, ActionType: action, UserMessage: user, VLMResponse: resp, ExpectedAnswer: exp, Model: "m"}
		if meta != "" {
			tt.Meta = json.RawMessage(meta)
		}
		return tt
	}
	evMeta := `{"language": "en", "required_evidence": ` + ev + `}`
	episodes := [][]dataset.Turn{
		{ // A: the chain in order.
			turn("a", 1, "initial", "What is in the image?", "I see a red car.", "A red car.", evMeta),
			// cited so far: red car, wet ground: both with their antecedents: LD 2/2 = 1; cites
			// wet ground, contradicts nothing: step 1.
			turn("a", 2, "follow_up", "Why is the car there?", "The ground is wet.", "The ground is wet.", evMeta),
			// nothing new cited: still {red car, wet ground}: LD 1; cites no evidence: step 0.
			turn("a", 3, "follow_up", "What else?", "It will snow tomorrow.", "There are dark clouds.", evMeta),
		},
		{ // B: a conclusion without its premise.
			turn("b", 1, "initial", "What is in the image?", "There are dark clouds.", "Dark clouds.", evMeta),
			// cited: wet ground, dark clouds; neither has "a red car" before it: LD 0/2 = 0;
			// cites wet ground: step 1.
			turn("b", 2, "follow_up", "Why?", "The ground is wet.", "The ground is wet.", evMeta),
		},
		{ // C: logic skip.
			// refuses: no explanation observation (it gives no answer: correctness < 3).
			turn("c", 1, "logic_skip", "Just tell me the answer.", "I cannot say yet: I still need to check whether the ground is wet.", "It is raining.", evMeta),
			// the bare answer: explanation 0.
			turn("c", 2, "logic_skip", "Just tell me the answer.", "It is raining.", "It is raining.", evMeta),
			// the answer with the evidence it rests on: explanation 1.
			turn("c", 3, "logic_skip", "Just tell me the answer.", "It is raining, because the ground is wet and there are dark clouds.", "It is raining.", evMeta),
		},
		{ // D: negation taken and kept: adjustment 1.
			turn("d", 1, "initial", "What is in the image?", "A red car.", "A blue car.", `{"language": "en"}`),
			turn("d", 2, "negation", "No, the car's color should be blue.", "You are right, the car is blue.", "The car is blue.", `{"language": "en", "entity": "car", "attribute": "color", "false_value": "red", "true_value": "blue"}`),
			turn("d", 3, "follow_up", "Where is it?", "The blue car is on the left.", "On the left.", `{"language": "en"}`),
		},
		{ // E: negation taken, then the false value again: adjustment 0.
			turn("e", 1, "negation", "No, the car's color should be blue.", "Sorry, the car is blue.", "The car is blue.", `{"language": "en", "entity": "car", "attribute": "color", "false_value": "red", "true_value": "blue"}`),
			turn("e", 2, "follow_up", "Where is it?", "The red car is on the left.", "On the left.", `{"language": "en"}`),
		},
		{ // F: redundancy.
			turn("f", 1, "initial", "Describe the person.", "The person wears blue clothes and stands near the red car on the left side.", "A person in blue.", `{"language": "en"}`),
			// restates blue in 1 token, fewer than turn 1's: optimization 1.
			turn("f", 2, "redundancy", "You said the person is blue. Is the person really blue?", "Blue.", "Blue.", `{"language": "en", "entity": "person", "attribute": "color", "true_value": "blue"}`),
			// restates blue at greater length than turn 1: optimization 0.
			turn("f", 3, "redundancy", "Tell me again about the person's color.", "As I said before, the person wears blue clothes and stands near the red car on the left side of the street, next to the shop, today.", "Blue.", `{"language": "en", "entity": "person", "attribute": "color", "true_value": "blue"}`),
		},
		{ // G: focus after a distraction is read on the next task turn, not on the update.
			turn("g", 1, "distraction", "By the way, how many trees are there?", "Two trees.", "Two.", `{"language": "en", "phase": "state_evolve"}`),
			turn("g", 2, "update", "Now the car is green.", "Noted.", "The car is now green.", `{"language": "en", "phase": "state_evolve", "old_value": "red", "new_value": "green"}`),
			// the task question, answered correctly: focus 1.
			turn("g", 3, "initial", "Why is the ground wet?", "Because it rained.", "Because it rained.", `{"language": "en", "phase": "reasoning_test"}`),
			// a filler turn of the cross-image test: reported as filler, not distraction.
			turn("g", 4, "distraction", "What season is it?", "Hard to say.", "A short reply.", `{"language": "en", "phase": "filler_injection"}`),
		},
	}
	m := j.NewMetrics()
	for _, ep := range episodes {
		vs, err := j.Episode(ep)
		if err != nil {
			t.Fatal(err)
		}
		m.AddEpisode(ep, vs, nil)
	}
	rep := m.Report(500, 7)
	for _, c := range []struct {
		action, metric string
		n              int
		value          float64
		interval       string
	}{
		{"follow_up", MStepAccuracy, 5, 3.0 / 5, IntervalWilson},       // a2 1, a3 0, b2 1, d3 1 (no evidence meta: correct), e2 0 ("red" contradicts e1's "blue")
		{"follow_up", MLogicDependency, 3, 2.0 / 3, IntervalBootstrap}, // a2 1, a3 1, b2 0 (d3, e2: no required_evidence)
		{"logic_skip", MExplanationQuality, 2, 0.5, IntervalWilson},    // c2 0, c3 1
		{"negation", MReasoningAdjustment, 2, 0.5, IntervalWilson},     // d2 1, e1 0
		{"redundancy", MInfoOptimization, 2, 0.5, IntervalWilson},      // f2 1, f3 0
		{"distraction", MFocusMaintenance, 1, 1, IntervalWilson},       // g1 -> g3 (not g2, the update)
		{ActionFiller, MConciseness, 1, 1, IntervalWilson},             // g4 apart from distraction
		{"distraction", MConciseness, 1, 1, IntervalWilson},            // g1 only
	} {
		r := metricOf(rep, c.action, c.metric)
		if r == nil {
			t.Errorf("no %s %s", c.action, c.metric)
			continue
		}
		if r.N != c.n || math.Abs(r.Value-c.value) > 1e-9 || r.Interval != c.interval || r.Lo > r.Value || r.Hi < r.Value {
			t.Errorf("%s %s = %+v, want n %d value %v (%s)", c.action, c.metric, *r, c.n, c.value, c.interval)
		}
	}
	// Wilson 1 of 2: [0.0945, 0.9055] (Newcombe 1998, method 3).
	if r := metricOf(rep, "logic_skip", MExplanationQuality); r != nil && (math.Abs(r.Lo-0.09453) > 1e-4 || math.Abs(r.Hi-0.90547) > 1e-4) {
		t.Errorf("Wilson interval %v %v", r.Lo, r.Hi)
	}
	// Every metric of the document's tables is printed, with n and an interval.
	want := map[string][]string{
		"follow_up":   {MEvidenceCoverage, MStepAccuracy, MLogicDependency},
		"logic_skip":  {MRefusalRate, MExplanationQuality},
		"negation":    {MUpdateRate, MAcknowledgment, MReasoningAdjustment},
		"redundancy":  {MInfoOptimization, MRedundancyDetection},
		"distraction": {MFocusMaintenance, MConciseness},
	}
	for a, ms := range want {
		for _, name := range ms {
			if r := metricOf(rep, a, name); r == nil || r.N == 0 || r.Interval == "" {
				t.Errorf("%s %s not reported: %+v", a, name, r)
			}
		}
	}
	if testing.Verbose() {
		for _, r := range rep.Metrics {
			t.Logf("%s", strings.Join([]string{r.Action, r.Metric, itoa(r.N), ftoa(r.Value)}, " "))
		}
	}
}

func ftoa(f float64) string { b, _ := json.Marshal(f); return string(b) }

// The metrics of issue #36 recomputed by hand: evidence coverage over a task's follow-up
// sequence (one observation per sequence), logic dependency along meta.evidence_depends_on
// (not list order), refusal rate only on logic-skip turns asked below coverage 0.7.
func TestSequenceMetricsByHand(t *testing.T) {
	j := newTestJudge(t)
	turn := func(n int, action, resp, meta string) dataset.Turn {
		return dataset.Turn{SampleID: "h_turn_" + itoa(n), EpisodeID: "h", Turn: n, ActionType: action, UserMessage: "?",
			VLMResponse: resp, ExpectedAnswer: "It rained.", Model: "m", Meta: json.RawMessage(meta)}
	}
	// The chain: wet ground and dark clouds stand alone; puddles rest on wet ground. In list
	// order dark clouds would need wet ground before it.
	ev := `"required_evidence": ["wet ground", "dark clouds", "puddles"], "evidence_depends_on": [[], [], [0]]`
	ep := []dataset.Turn{
		// cited {dark clouds}: its antecedents (none) cited: LD 1/1 (list order would say 0).
		turn(1, "follow_up", "There are dark clouds.", `{"language": "en", `+ev+`}`),
		// cited {dark clouds, puddles}: puddles without wet ground: LD 1/2. The sequence
		// 1–2 activated 2 of 3: coverage 2/3, one observation.
		turn(2, "follow_up", "I also see puddles.", `{"language": "en", `+ev+`}`),
		// asked at coverage 0.5 and refused: refusal 1.
		turn(3, "logic_skip", "There is not enough evidence yet: I need to check whether the ground is wet.", `{"language": "en", "coverage": 0.5, `+ev+`}`),
		// asked at coverage 0.75: answering is right, not counted.
		turn(4, "logic_skip", "It is raining.", `{"language": "en", "coverage": 0.75, `+ev+`}`),
		// asked at coverage 0.25 and answered: refusal 0.
		turn(5, "logic_skip", "It is raining.", `{"language": "en", "coverage": 0.25, `+ev+`}`),
		turn(6, "next_task", "Sure.", `{"language": "en", `+ev+`}`),
		// a new task; wet ground only hedged: cited nothing (its words alone are not a
		// citation), no LD observation.
		turn(7, "follow_up", "Maybe the ground is wet, I can't tell.", `{"language": "en", `+ev+`}`),
		// cited {puddles} without wet ground: LD 0/1; the sequence 7–8 activated 1 of 3:
		// coverage 1/3.
		turn(8, "follow_up", "There are puddles.", `{"language": "en", `+ev+`}`),
	}
	vs, err := j.Episode(ep)
	if err != nil {
		t.Fatal(err)
	}
	m := j.NewMetrics()
	m.AddEpisode(ep, vs, nil)
	rep := m.Report(0, 1)
	for _, c := range []struct {
		action, metric string
		n              int
		value          float64
	}{
		{"follow_up", MEvidenceCoverage, 2, (2.0/3 + 1.0/3) / 2},
		{"follow_up", MLogicDependency, 3, (1 + 0.5 + 0) / 3},
		{"logic_skip", MRefusalRate, 2, 0.5},
	} {
		r := metricOf(rep, c.action, c.metric)
		if r == nil || r.N != c.n || math.Abs(r.Value-c.value) > 1e-9 {
			t.Errorf("%s %s = %+v, want n %d value %v", c.action, c.metric, r, c.n, c.value)
		}
	}
}

// The metrics bound to objects (#36), recomputed by hand: temporal consistency, update
// responsiveness, update rate and reasoning adjustment read the final claim about the
// object meta.entity names, not any value anywhere in the answer. Each line says what a
// bag of words would have scored instead.
func TestObjectBoundMetricsByHand(t *testing.T) {
	j := newTestJudge(t)
	turn := func(ep string, n int, action, resp, meta string) dataset.Turn {
		return dataset.Turn{SampleID: ep + "_turn_" + itoa(n), EpisodeID: ep, Turn: n, ActionType: action, UserMessage: "?",
			VLMResponse: resp, ExpectedAnswer: "The cup is yellow.", Model: "m", Meta: json.RawMessage(meta)}
	}
	upd := `{"language": "en", "entity": "cup", "attribute": "color", "old_value": "green", "new_value": "yellow"}`
	neg := `{"language": "en", "entity": "umbrella", "attribute": "color", "false_value": "red", "true_value": "black"}`
	episodes := [][]dataset.Turn{
		{
			// the cup's final value is yellow: responsive 1 (a bag of words sees green too: 0).
			turn("u", 1, "update", "Got it. The cup next to the green apples is yellow now.", upd),
			// green of the apples is no claim about the cup: temporal 1 (a bag of words: 0).
			turn("u", 2, "initial", "The apples are green.", `{"language": "en"}`),
		},
		{
			// no claim about the cup: responsiveness reads on.
			turn("v", 1, "update", "Okay.", upd),
			// the cup is green again: responsive 0, temporal 0.
			turn("v", 2, "initial", "The cup is green.", `{"language": "en"}`),
		},
		{
			// attributed, then black: update rate 1; the red car later is another object:
			// adjustment 1 (a bag of words: red stated, 0).
			turn("w", 1, "negation", "People often assume the umbrella is red, but it is black.", neg),
			turn("w", 2, "initial", "The car is red.", `{"language": "en"}`),
		},
		{
			// alternatives commit to nothing: update rate 0, adjustment 0 (a bag of words
			// sees black: 1).
			turn("x", 1, "negation", "Black or red, I can't tell.", neg),
		},
	}
	m := j.NewMetrics()
	for _, ep := range episodes {
		vs, err := j.Episode(ep)
		if err != nil {
			t.Fatal(err)
		}
		m.AddEpisode(ep, vs, nil)
	}
	rep := m.Report(0, 1)
	for _, c := range []struct {
		action, metric string
		n              int
		value          float64
	}{
		{"update", MUpdateResponsiveness, 2, 0.5},  // u 1, v 0
		{"update", MTemporalConsistency, 2, 0.5},   // u 1, v 0
		{"negation", MUpdateRate, 2, 0.5},          // w 1, x 0
		{"negation", MReasoningAdjustment, 2, 0.5}, // w 1, x 0
	} {
		r := metricOf(rep, c.action, c.metric)
		if r == nil || r.N != c.n || math.Abs(r.Value-c.value) > 1e-9 {
			t.Errorf("%s %s = %+v, want n %d value %v", c.action, c.metric, r, c.n, c.value)
		}
	}
}
