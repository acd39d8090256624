package estimate

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/m3bench/m3eval/internal/ppi"
)

// fewEpisodeTurns builds the turns of a Yes/No field ("ok") and a 1–5 scale ("q") for three
// models: "good" and "fair" with labels in 8 episodes each, "few" with labels in 2 episodes
// only (as qwen2-vl-7b on the README tour). Yes-rates are near 1, so a normal interval
// reaches past 1. It returns the turns and the inclusion probability of every turn (for an
// active sample in which every labeled turn was drawn).
func fewEpisodeTurns() (map[turnKey]*turn, map[string]float64) {
	rng := rand.New(rand.NewPCG(3, 2))
	turns := map[turnKey]*turn{}
	incl := map[string]float64{}
	ep := 0
	for _, m := range []string{"good", "fair", "few"} {
		for e := range 10 {
			ep++
			for k := range 4 {
				id := fmt.Sprintf("%s_%02d_%d", m, e, k)
				labeled := e < 8 && k < 2
				if m == "few" {
					labeled = e < 2
				}
				yes := 0.0
				if rng.Float64() < map[string]float64{"good": 0.97, "fair": 0.8, "few": 0.9}[m] {
					yes = 1
				}
				if m == "good" && e == 0 && k == 0 {
					yes = 0 // one No among good's labels: all Yes would give no interval at all
				}
				q := math.Max(1, math.Min(5, math.Round(4.6+rng.NormFloat64()*0.6)))
				for f, v := range map[string]float64{"ok": yes, "q": q} {
					t := &turn{model: m, episode: ep, judge: v, scored: true}
					if labeled {
						t.humanSum, t.humanN = v, 1
						incl[id] = 0.5 + 0.4*rng.Float64()
					}
					turns[turnKey{id, f}] = t
				}
			}
		}
	}
	return turns, incl
}

var fewFields = []field{{name: "ok", yesNo: true}, {name: "q", min: 1, max: 5}}

// TestFewEpisodesNoIntervalNotRanked: a model whose labeled turns come from fewer than
// ppi.MinEpisodes episodes keeps its point estimate (ppi_py's) but gets no interval, and is
// left out of the differences and the ranking, which the table says; every shown interval
// lies within the field's range (0–1 for a Yes-rate, 1–5 for the scale). Before, "few" got
// an interval from 2 episodes and a rank, and Yes-rate intervals went past 1.
func TestFewEpisodesNoIntervalNotRanked(t *testing.T) {
	for _, design := range []string{"uniform", "active"} {
		turns, incl := fewEpisodeTurns()
		if design == "uniform" {
			incl = nil
		}
		res := compute(turns, fewFields, &Request{Judge: "j", Bootstrap: 200, Seed: 1}, incl)
		for _, r := range res.Rows {
			lo, hi := fewFields[0].fieldRange()
			if r.Field == "q" {
				lo, hi = fewFields[1].fieldRange()
			}
			for _, c := range [][2]Num{r.CI, r.HumanOnly.CI, r.JudgeOnly.CI} {
				if !math.IsNaN(float64(c[0])) && (float64(c[0]) < lo || float64(c[1]) > hi) {
					t.Errorf("%s %s/%s: interval %v outside the field's range [%v, %v]", design, r.Model, r.Field, c, lo, hi)
				}
			}
			if r.Model == "few" {
				if r.Undefined != ppi.ReasonFewEpisodes || !math.IsNaN(float64(r.CI[0])) || !math.IsNaN(float64(r.EffectiveN)) {
					t.Errorf("%s few/%s: ci %v, effective n %v (%q): want no interval", design, r.Field, r.CI, r.EffectiveN, r.Undefined)
				}
				if math.IsNaN(float64(r.Estimate)) {
					t.Errorf("%s few/%s: no point estimate", design, r.Field)
				}
			} else if r.Undefined != "" {
				t.Errorf("%s %s/%s: no interval (%s)", design, r.Model, r.Field, r.Undefined)
			}
		}
		for _, d := range res.Differences {
			if d.A == "few" || d.B == "few" {
				t.Errorf("%s: difference %s − %s of a model without an interval", design, d.A, d.B)
			}
		}
		ranked := 0
		for _, r := range res.Ranking {
			if r.Model == "few" {
				t.Errorf("%s: few ranked %d (share %v)", design, r.Rank, r.Share)
			}
			ranked++
		}
		if ranked != 4 || len(res.Differences) != 2 {
			t.Errorf("%s: %d ranking rows, %d differences; want good and fair on 2 fields", design, ranked, len(res.Differences))
		}
		var b bytes.Buffer
		if err := WriteTable(&b, res); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), "not compared or ranked (no interval): few") || !strings.Contains(b.String(), ppi.ReasonFewEpisodes) {
			t.Errorf("%s table does not say few is left out:\n%s", design, b.String())
		}
	}
}

// TestUniformPointEstimateKept: the uniform design's point estimate and λ of a row without
// an interval are still ppi.Mean's.
func TestUniformPointEstimateKept(t *testing.T) {
	turns, _ := fewEpisodeTurns()
	res := compute(turns, fewFields, &Request{Judge: "j"}, nil)
	d := &ppi.Data{}
	for _, k := range sortedKeys(turns) {
		tu := turns[k]
		if tu.model != "few" || k.field != "q" {
			continue
		}
		if tu.humanN > 0 {
			d.Human, d.Judge, d.Cluster = append(d.Human, tu.humanSum), append(d.Judge, tu.judge), append(d.Cluster, tu.episode)
		} else {
			d.Unlabeled, d.ClusterU = append(d.Unlabeled, tu.judge), append(d.ClusterU, tu.episode)
		}
	}
	want := ppi.Mean(d, Alpha)
	for _, r := range res.Rows {
		if r.Model == "few" && r.Field == "q" && (math.Abs(float64(r.Estimate)-want.Estimate) > 1e-12 || float64(r.Lambda) != want.Lambda) {
			t.Errorf("few/q: estimate %v λ %v, want %v λ %v", r.Estimate, r.Lambda, want.Estimate, want.Lambda)
		}
	}
}

func sortedKeys(turns map[turnKey]*turn) []turnKey {
	var keys []turnKey
	for k := range turns {
		keys = append(keys, k)
	}
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j].sample < keys[j-1].sample; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}

// TestJudgeOnlyOneEpisode (issue #41): a row whose turns all come from one episode had a
// judge-only interval of zero width in JSON; now it has none, and the row says the episodes
// its interval would rest on.
func TestJudgeOnlyOneEpisode(t *testing.T) {
	turns := map[turnKey]*turn{}
	for k := range 6 {
		v := float64(1 + k%5)
		tu := &turn{model: "one", episode: 1, judge: v, scored: true}
		if k < 3 {
			tu.humanSum, tu.humanN = v, 1
		}
		turns[turnKey{fmt.Sprintf("one_%d", k), "q"}] = tu
	}
	res := compute(turns, []field{{name: "q", min: 1, max: 5}}, &Request{Judge: "j"}, nil)
	if len(res.Rows) != 1 {
		t.Fatalf("%d rows", len(res.Rows))
	}
	r := res.Rows[0]
	if !math.IsNaN(float64(r.JudgeOnly.CI[0])) || !math.IsNaN(float64(r.JudgeOnly.CI[1])) {
		t.Errorf("judge-only interval %v from one episode, want none", r.JudgeOnly.CI)
	}
	if math.IsNaN(float64(r.JudgeOnly.Estimate)) || r.NLabeledEpisodes != 1 || !math.IsNaN(float64(r.DF)) {
		t.Errorf("judge-only estimate %v, labeled episodes %d, df %v", r.JudgeOnly.Estimate, r.NLabeledEpisodes, r.DF)
	}
}

// TestNoSpreadNotCompared: a model whose labels on a field are all Yes (8 episodes) got the
// zero-width interval [1.00, 1.00] and was compared and ranked on it; now it has its point
// estimate, no interval with the reason, and is left out of that field's differences and
// ranking, in both designs.
func TestNoSpreadNotCompared(t *testing.T) {
	for _, design := range []string{"uniform", "active"} {
		turns, incl := fewEpisodeTurns()
		if design == "uniform" {
			incl = nil
		}
		for k, tn := range turns {
			if tn.model == "good" && k.field == "ok" && tn.humanN > 0 {
				tn.humanSum = 1
			}
		}
		res := compute(turns, fewFields, &Request{Judge: "j", Bootstrap: 0, Seed: 1}, incl)
		found := false
		for _, r := range res.Rows {
			if r.Model == "good" && r.Field == "ok" {
				found = true
				if r.Undefined != ppi.ReasonNoSpread || !math.IsNaN(float64(r.CI[0])) || float64(r.Estimate) != 1 {
					t.Errorf("%s good/ok: %v %v (%q), want estimate 1 and no interval (%q)", design, r.Estimate, r.CI, r.Undefined, ppi.ReasonNoSpread)
				}
			}
		}
		if !found {
			t.Fatalf("%s: no row good/ok", design)
		}
		for _, d := range res.Differences {
			if d.Field == "ok" && (d.A == "good" || d.B == "good") {
				t.Errorf("%s: difference %s − %s on ok", design, d.A, d.B)
			}
		}
		for _, r := range res.Ranking {
			if r.Field == "ok" && r.Model == "good" {
				t.Errorf("%s: good ranked on ok", design)
			}
		}
		var b bytes.Buffer
		if err := WriteTable(&b, res); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), ppi.ReasonNoSpread) {
			t.Errorf("%s table does not give the reason:\n%s", design, b.String())
		}
	}
}
