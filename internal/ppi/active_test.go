package ppi

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/m3bench/m3eval/internal/sample"
)

// activePopulation is three models' turns on a 1–5 scale (episodes of 4 turns, 40, 60 and
// 80 turns, true means apart), a judge that is off by a turn-dependent amount, and the
// judge's uncertainty; the draw's inclusion probabilities are computed over all 180 turns,
// as sample --active does.
func activePopulation() (model []int, human, judge, unc []float64, cluster []int) {
	rng := rand.New(rand.NewPCG(32, 7))
	sizes := []int{40, 60, 80}
	mus := []float64{2.2, 3.1, 4.0}
	clip := func(x float64) float64 { return math.Max(1, math.Min(5, math.Round(x))) }
	ep := 0
	for m, size := range sizes {
		for i := range size {
			if i%4 == 0 {
				ep++
			}
			h := clip(mus[m] + rng.NormFloat64())
			u := 0.1
			if rng.Float64() < 0.3 {
				u = 1
			}
			model = append(model, m)
			human = append(human, h)
			judge = append(judge, clip(h+0.4+rng.NormFloat64()*2*u))
			unc = append(unc, u)
			cluster = append(cluster, ep)
		}
	}
	return
}

// TestActiveHajekPerModel: over 4000 seeded active draws of 45 of 180 turns (probabilities
// over all turns), each model's estimate (its own turns, Hájek-normalised weights) averages
// to the model's true mean within 4 standard errors of that average or, where the ratio's
// O(1/n) bias shows over so many draws, within 10% of one estimate's standard deviation; and the human-only estimate (λ = 0)
// stays within the labels' range 1–5 in every draw. The Horvitz–Thompson mean over the
// model's turns that this replaced left the range (an overall_quality of 7.31 on the tour).
func TestActiveHajekPerModel(t *testing.T) {
	model, human, judge, unc, cluster := activePopulation()
	pi, err := sample.Inclusion(unc, 45, sample.DefaultMix)
	if err != nil {
		t.Fatal(err)
	}
	const draws = 4000
	rng := rand.New(rand.NewPCG(5, 9))
	var sum, sumsq [2][3]float64
	var truth [3]float64
	var count [3]int
	for i, m := range model {
		truth[m] += human[i]
		count[m]++
	}
	outside := 0
	for range draws {
		drawn := sample.DrawSystematic(pi, rng)
		labeled := make([]bool, len(model))
		for _, i := range drawn {
			labeled[i] = true
		}
		for m := range 3 {
			d := &ActiveData{}
			for i, mi := range model {
				if mi == m {
					d.Judge, d.Human, d.Labeled = append(d.Judge, judge[i]), append(d.Human, human[i]), append(d.Labeled, labeled[i])
					d.Pi, d.Cluster = append(d.Pi, pi[i]), append(d.Cluster, cluster[i])
				}
			}
			for k, r := range []Result{ActiveMean(d, 0.05), ActiveWithLambda(d, 1, 0.05)} {
				if math.IsNaN(r.Estimate) {
					t.Fatalf("model %d: no estimate (no label drawn)", m)
				}
				sum[k][m] += r.Estimate
				sumsq[k][m] += r.Estimate * r.Estimate
			}
			if h := ActiveWithLambda(d, 0, 0.05).Estimate; h < 1 || h > 5 {
				outside++
			}
		}
	}
	if outside > 0 {
		t.Errorf("human-only estimate outside 1–5 in %d of %d model draws", outside, 3*draws)
	}
	for k, name := range []string{"tuned λ", "λ = 1"} {
		for m := range 3 {
			mu := truth[m] / float64(count[m])
			avg := sum[k][m] / draws
			sd := math.Sqrt(sumsq[k][m]/draws - avg*avg)
			se := sd / math.Sqrt(draws)
			t.Logf("%s, model %d (%d turns): true mean %.4f, mean of %d estimates %.4f (SE %.4f), bias %.4f = %.1f%% of the estimate's SD %.4f",
				name, m, count[m], mu, draws, avg, se, avg-mu, 100*math.Abs(avg-mu)/sd, sd)
			// Hájek's ratio (and λ tuned on the same labels) is biased by O(1/n): detectable
			// over 4000 draws, but it must stay negligible beside the estimate's own spread,
			// which is what the interval is made of.
			if math.Abs(avg-mu) > 4*se && math.Abs(avg-mu) > 0.1*sd {
				t.Errorf("%s, model %d: mean estimate %.4f, truth %.4f: off by %.1f SE, %.0f%% of the SD", name, m, avg, mu, math.Abs(avg-mu)/se, 100*math.Abs(avg-mu)/sd)
			}
		}
	}
}

// TestActiveFewEpisodes: labels from 2 episodes give a point estimate with λ = 1 (not tuned
// to two sums) and no interval; before, λ made the two episodes' sums cancel and the interval
// had zero width.
func TestActiveFewEpisodes(t *testing.T) {
	d := &ActiveData{
		Judge:   []float64{4, 3, 5, 2, 4, 3, 4, 5},
		Human:   []float64{5, 0, 0, 0, 3, 0, 0, 0},
		Labeled: []bool{true, false, false, false, true, false, false, false},
		Pi:      []float64{0.3, 1, 1, 1, 0.6, 1, 1, 1},
		Cluster: []int{1, 1, 1, 1, 2, 2, 2, 2},
	}
	r := ActiveWithLambda(d, 1, 0.05)
	if r.Lambda != 1 || r.Undefined != ReasonFewEpisodes || !math.IsNaN(r.Lo) {
		t.Errorf("2 labeled episodes: λ %v, interval [%v, %v] (%q); want λ 1 and no interval", r.Lambda, r.Lo, r.Hi, r.Undefined)
	}
	// λ = 1: judge mean 3.75 + weighted mean of (human − judge) with weights 1/0.3, 1/0.6.
	w1, w2 := 1/0.3, 1/0.6
	near(t, "estimate", r.Estimate, 3.75+(w1*(5-4)+w2*(3-4))/(w1+w2))
}
