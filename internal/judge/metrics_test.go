package judge

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/m3bench/m3eval/internal/dataset"
)

func metricOf(rep MetricsReport, action, metric string) *MetricRow {
	for i := range rep.Metrics {
		if rep.Metrics[i].Action == action && rep.Metrics[i].Metric == metric {
			return &rep.Metrics[i]
		}
	}
	return nil
}

func TestMetrics(t *testing.T) {
	j := newTestJudge(t)
	turn := func(n int, action, user, resp, exp, meta string) dataset.Turn {
		tt := dataset.Turn{SampleID: "e_turn_" + itoa(n), EpisodeID: "e", Turn: n, ActionType: action, UserMessage: user, VLMResponse: resp, ExpectedAnswer: exp, Model: "m"}
		if meta != "" {
			tt.Meta = json.RawMessage(meta)
		}
		return tt
	}
	ep := []dataset.Turn{
		turn(1, "initial", "Describe the images.", "Image 1 has a red car; image 2 has a blue car.", "Image 1: red car; image 2: blue car.", `{"confusable_objects": 2}`),
		turn(2, "update", "The red car was repainted green.", "Understood, the car in image 1 is now green.", "The car in image 1 is green.", `{"old_value": "red", "new_value": "green"}`),
		turn(3, "ambiguous_reference", "What colour is the car?", "Which image do you mean? The car in image 1 is green and the one in image 2 is blue.", "Ambiguous.", `{"ambiguous": true, "confusable_objects": 2}`),
		turn(4, "ambiguous_reference", "Is the car parked?", "Yes, it is parked.", "Ambiguous: ask which car.", `{"ambiguous": true, "confusable_objects": 2}`),
		turn(5, "cross_image_confusion", "Which image has the blue car?", "The blue car is in image 2.", "Image 2.", ""),
		turn(6, "cross_image_confusion", "Which image has the green car?", "The green car is in image 2.", "Image 1.", ""),
		turn(7, "logic_skip", "Just the answer, no reasons.", "I cannot determine that without more evidence from the image.", "It cannot be determined.", ""),
	}
	vs, err := j.Episode(ep)
	if err != nil {
		t.Fatal(err)
	}
	// One episode: the bootstrap, which resamples episodes, has no interval, and says why.
	one := j.NewMetrics()
	one.AddEpisode(ep, vs, nil)
	if r := metricOf(one.Report(500, 7), "cross_image_confusion", MCrossImageConfusion); !math.IsNaN(r.Lo) || !math.IsNaN(r.Hi) || !strings.Contains(r.NoInterval, "one episode") {
		t.Errorf("one episode: %+v", *r)
	}
	if b, err := json.Marshal(metricOf(one.Report(500, 7), "cross_image_confusion", MCrossImageConfusion)); err != nil ||
		!strings.Contains(string(b), `"ci_low":null,"ci_high":null`) || !strings.Contains(string(b), `"no_interval":"one episode`) {
		t.Errorf("one episode, JSON: %s %v", b, err)
	}
	m := j.NewMetrics()
	m.AddEpisode(ep, vs, nil)
	m.AddEpisode(ep, vs, nil) // the same conversation twice: two episodes
	rep := m.Report(500, 7)
	if r := metricOf(m.Report(0, 7), "cross_image_confusion", MCrossImageConfusion); !math.IsNaN(r.Lo) || !strings.Contains(r.NoInterval, "--bootstrap 0") {
		t.Errorf("--bootstrap 0: %+v", *r)
	}
	for _, c := range []struct {
		action, metric string
		n              int
		value          float64
		interval       string
	}{
		{"update", MUpdateResponsiveness, 2, 1, IntervalWilson},
		{"update", MTemporalConsistency, 2, 1, IntervalWilson},
		{"ambiguous_reference", MDisambiguation, 4, 0.5, IntervalBootstrap},
		{"cross_image_confusion", MCrossImageConfusion, 4, 0.5, IntervalBootstrap},
		{"logic_skip", MRefusalRate, 2, 1, IntervalWilson},
	} {
		r := metricOf(rep, c.action, c.metric)
		if r == nil {
			t.Fatalf("no %s %s in %+v", c.action, c.metric, rep.Metrics)
		}
		if r.N != c.n || math.Abs(r.Value-c.value) > 1e-9 || r.Interval != c.interval || r.Lo > r.Value || r.Hi < r.Value {
			t.Errorf("%s %s = %+v, want n %d value %v (%s)", c.action, c.metric, *r, c.n, c.value, c.interval)
		}
	}
	// The bootstrap is seeded: the same seed, the same interval.
	again := j.NewMetrics()
	again.AddEpisode(ep, vs, nil)
	again.AddEpisode(ep, vs, nil)
	a, b := metricOf(again.Report(500, 7), "cross_image_confusion", MCrossImageConfusion), metricOf(rep, "cross_image_confusion", MCrossImageConfusion)
	if a.Lo != b.Lo || a.Hi != b.Hi {
		t.Errorf("bootstrap not reproducible: %+v %+v", a, b)
	}
	// Trends: both dimensions, confusable objects from meta or unknown.
	dims := map[string]int{}
	for _, tr := range rep.Trends {
		dims[tr.Dimension+"/"+tr.Bin]++
	}
	for _, want := range []string{"confusable_objects/2", "confusable_objects/unknown", "conversation_length/1–5", "conversation_length/6–10"} {
		if dims[want] == 0 {
			t.Errorf("no trend row %s in %v", want, dims)
		}
	}
}

// TestBootstrapResamplesEpisodes: episode A has three turns scoring 1, episode B one turn
// scoring 0. Resampling episodes, a replicate is AA (mean 1), BB (0) or AB (3/4), so the
// 95% interval is [0, 1]; resampling turns, a replicate of four zeros has probability
// (1/4)^4 < 2.5%, and the lower end would be 0.25.
func TestBootstrapResamplesEpisodes(t *testing.T) {
	o := []obs{{1, false, 1}, {1, false, 1}, {1, false, 1}, {0, false, 2}}
	e := summarize(o, 2000, 3)
	if e.Value != 0.75 || e.Lo != 0 || e.Hi != 1 || e.Interval != IntervalBootstrap || e.NoInterval != "" || e.N != 4 {
		t.Fatalf("summarize = %+v, want 0.75 [0, 1] bootstrap over 4", e)
	}
}
