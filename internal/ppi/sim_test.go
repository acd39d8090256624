package ppi

import (
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/m3bench/m3eval/internal/sample"
)

// TestActiveUniformEqualsPPI: with every turn drawn with the same probability n/N, the
// weighted estimate is λ·(judge mean over all turns) + mean over labels of (human − λ·judge).
func TestActiveUniformEqualsPPI(t *testing.T) {
	c := loadCases(t)[0]
	N := len(c.Human) + len(c.Unlabeled)
	d := &ActiveData{Judge: append(append([]float64{}, c.Judge...), c.Unlabeled...), Human: make([]float64, N),
		Labeled: make([]bool, N), Pi: make([]float64, N)}
	copy(d.Human, c.Human)
	for i := range N {
		d.Labeled[i] = i < len(c.Human)
		d.Pi[i] = float64(len(c.Human)) / float64(N)
	}
	const lam = 0.7
	all := mean(d.Judge)
	var rect float64
	for i := range c.Human {
		rect += (c.Human[i] - lam*c.Judge[i]) / float64(len(c.Human))
	}
	near(t, "uniform active estimate", ActiveWithLambda(d, lam, 0.05).Estimate, lam*all+rect)
	if l := ActiveLambda(d); l < 0 || l > 1 {
		t.Errorf("λ = %v outside [0, 1]", l)
	}
}

// population draws N turns in episodes of 4: human values with an episode effect around mu,
// a judge with the given bias whose noise differs from turn to turn, and the judge's own
// uncertainty (its noise level), which active sampling uses.
func population(rng *rand.Rand, N int, mu, bias float64) (human, judge, sigma []float64, cluster []int) {
	human, judge, sigma, cluster = make([]float64, N), make([]float64, N), make([]float64, N), make([]int, N)
	var ep float64
	for i := range N {
		if i%4 == 0 {
			ep = rng.NormFloat64() * 0.5
		}
		cluster[i] = i / 4
		human[i] = mu + ep + rng.NormFloat64()
		// Most turns are easy for the judge, some are hard (noise 0.2 or 2.5).
		sigma[i] = 0.2
		if rng.Float64() < 0.2 {
			sigma[i] = 2.5
		}
		judge[i] = human[i] + bias + rng.NormFloat64()*sigma[i]
	}
	return
}

func soak(t *testing.T) {
	if os.Getenv("M3EVAL_SOAK") == "" {
		t.Skip("a soak simulation: set M3EVAL_SOAK=1 to run it")
	}
}

// TestCoverageSimulation (soak): over 500 seeded datasets with a judge of known bias (0.6)
// and noise, the PPI++ interval covers the true mean at 0.95 ± 0.02, the judge-only
// interval does not, and the PPI interval is narrower than the human-only one.
func TestCoverageSimulation(t *testing.T) {
	soak(t)
	const datasets, N, n, mu = 500, 2000, 200, 3.0
	rng := rand.New(rand.NewPCG(2026, 32))
	var coverPPI, coverHuman, coverJudge, narrower int
	var wPPI, wHuman float64
	for range datasets {
		human, judge, _, cluster := population(rng, N, mu, 0.6)
		perm := rng.Perm(N)
		d := &Data{Cluster: []int{}, ClusterU: []int{}}
		for k, i := range perm {
			if k < n {
				d.Human = append(d.Human, human[i])
				d.Judge = append(d.Judge, judge[i])
				d.Cluster = append(d.Cluster, cluster[i])
			} else {
				d.Unlabeled = append(d.Unlabeled, judge[i])
				d.ClusterU = append(d.ClusterU, cluster[i])
			}
		}
		p, h, j := Mean(d, 0.05), HumanOnly(d, 0.05), JudgeOnly(d, 0.05)
		in := func(iv Interval) bool { return iv.Lo <= mu && mu <= iv.Hi }
		if in(p.Interval) {
			coverPPI++
		}
		if in(h) {
			coverHuman++
		}
		if in(j) {
			coverJudge++
		}
		if p.Width() < h.Width() {
			narrower++
		}
		wPPI += p.Width() / datasets
		wHuman += h.Width() / datasets
	}
	rate := func(k int) float64 { return float64(k) / datasets }
	t.Logf("coverage PPI %.3f, human-only %.3f, judge-only %.3f; mean width PPI %.4f, human-only %.4f; PPI narrower in %d of %d",
		rate(coverPPI), rate(coverHuman), rate(coverJudge), wPPI, wHuman, narrower, datasets)
	if math.Abs(rate(coverPPI)-0.95) > 0.02 {
		t.Errorf("PPI coverage %.3f, want 0.95 ± 0.02", rate(coverPPI))
	}
	if rate(coverJudge) > 0.5 {
		t.Errorf("judge-only coverage %.3f: a biased judge's interval should miss the truth", rate(coverJudge))
	}
	if !(wPPI < wHuman) || narrower < datasets*9/10 {
		t.Errorf("PPI mean width %.4f vs human-only %.4f, narrower in %d of %d: want narrower", wPPI, wHuman, narrower, datasets)
	}
}

// TestActiveSimulation (soak): over 2000 seeded datasets, labeling n turns drawn actively
// (probabilities following the judge's uncertainty, sample.Inclusion and DrawSystematic)
// gives intervals no wider on average than labeling n turns drawn uniformly, and both cover
// the true mean at the nominal rate (0.95 ± 0.02).
func TestActiveSimulation(t *testing.T) {
	soak(t)
	const datasets, N, n, mu = 2000, 2000, 150, 3.0
	rng := rand.New(rand.NewPCG(7, 2024))
	var coverA, coverU int
	var wA, wU float64
	for range datasets {
		human, judge, sigma, cluster := population(rng, N, mu, 0.6)
		run := func(pi []float64) Result {
			drawn := sample.DrawSystematic(pi, rng)
			d := &ActiveData{Judge: judge, Human: human, Labeled: make([]bool, N), Pi: pi, Cluster: cluster}
			for _, i := range drawn {
				d.Labeled[i] = true
			}
			return ActiveMean(d, 0.05)
		}
		active, err := sample.Inclusion(sigma, n, sample.DefaultMix)
		if err != nil {
			t.Fatal(err)
		}
		uniform, _ := sample.Inclusion(make([]float64, N), n, 0)
		a, u := run(active), run(uniform)
		if a.Lo <= mu && mu <= a.Hi {
			coverA++
		}
		if u.Lo <= mu && mu <= u.Hi {
			coverU++
		}
		wA += a.Width() / datasets
		wU += u.Width() / datasets
	}
	ca, cu := float64(coverA)/datasets, float64(coverU)/datasets
	t.Logf("active: coverage %.3f, mean width %.4f; uniform: coverage %.3f, mean width %.4f", ca, wA, cu, wU)
	if wA > wU {
		t.Errorf("active mean width %.4f > uniform %.4f", wA, wU)
	}
	for name, c := range map[string]float64{"active": ca, "uniform": cu} {
		if math.Abs(c-0.95) > 0.02 {
			t.Errorf("%s coverage %.3f, want 0.95 ± 0.02", name, c)
		}
	}
}
