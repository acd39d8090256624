package ppi

import (
	"encoding/json"
	"math"
	"os"
	"testing"
)

// refCase is one case of testdata/ppi_cases.json (made by testdata/ppi_reference.py).
type refCase struct {
	Name          string     `json:"name"`
	Reference     string     `json:"reference"`
	Human         []float64  `json:"human"`
	Judge         []float64  `json:"judge"`
	Unlabeled     []float64  `json:"unlabeled"`
	Cluster       []int      `json:"cluster"`
	ClusterU      []int      `json:"cluster_unlabeled"`
	Alpha         float64    `json:"alpha"`
	Lambda        float64    `json:"lambda"`
	Estimate      float64    `json:"estimate"`
	CI            [2]float64 `json:"ci"`
	HumanEstimate float64    `json:"human_estimate"`
	HumanCI       [2]float64 `json:"human_ci"`
}

func loadCases(t *testing.T) []refCase {
	t.Helper()
	b, err := os.ReadFile("testdata/ppi_cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct{ Cases []refCase }
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Cases) < 8 {
		t.Fatalf("%d cases, want at least 8", len(f.Cases))
	}
	return f.Cases
}

func near(t *testing.T, what string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 1e-9 {
		t.Errorf("%s = %.15g, want %.15g (reference)", what, got, want)
	}
}

// TestMatchesPPIPy compares λ, the point estimate, the PPI++ interval and the human-only
// interval with ppi_py (one turn per episode) and with statsmodels' cluster-robust sandwich
// (several turns per episode), to 1e-9.
func TestMatchesPPIPy(t *testing.T) {
	seenPy, seenCl := 0, 0
	for _, c := range loadCases(t) {
		t.Run(c.Name, func(t *testing.T) {
			d := &Data{Human: c.Human, Judge: c.Judge, Unlabeled: c.Unlabeled, Cluster: c.Cluster, ClusterU: c.ClusterU}
			if c.Cluster != nil {
				seenCl++
			} else {
				seenPy++
			}
			near(t, "lambda", Lambda(d), c.Lambda)
			r := MeanPPIPy(d, c.Alpha)
			if r.Undefined != "" {
				t.Fatalf("undefined: %s", r.Undefined)
			}
			near(t, "estimate", r.Estimate, c.Estimate)
			near(t, "ci lo", r.Lo, c.CI[0])
			near(t, "ci hi", r.Hi, c.CI[1])
			h := HumanOnlyPPIPy(d, c.Alpha)
			near(t, "human estimate", h.Estimate, c.HumanEstimate)
			near(t, "human lo", h.Lo, c.HumanCI[0])
			near(t, "human hi", h.Hi, c.HumanCI[1])
		})
	}
	if seenPy < 5 || seenCl < 2 {
		t.Errorf("%d ppi_py cases and %d clustered ones, want ≥ 5 and ≥ 2", seenPy, seenCl)
	}
}

// TestClusterIDsMatter: giving every turn its own cluster and putting turns of one episode
// together change the clustered variance, and an episode mixing labeled and unlabeled turns
// contributes one term (a covariance), not two.
func TestClusterIDsMatter(t *testing.T) {
	d := &Data{
		Human:     []float64{1, 2, 3, 4, 5, 5},
		Judge:     []float64{1, 2, 2, 4, 5, 4},
		Unlabeled: []float64{1, 3, 2, 5, 4, 3},
	}
	flat := MeanPPIPy(d, 0.05)
	d.Cluster = []int{0, 0, 1, 1, 2, 2}
	d.ClusterU = []int{0, 0, 1, 1, 2, 2}
	cl := MeanPPIPy(d, 0.05)
	if flat.Estimate != cl.Estimate || flat.Lambda != cl.Lambda {
		t.Fatalf("clusters changed the estimate: %v vs %v", flat, cl)
	}
	if flat.SE == cl.SE {
		t.Fatalf("clusters left the standard error at %v", flat.SE)
	}
	// By hand: ψ summed per cluster, squared, added.
	lam := cl.Lambda
	r := make([]float64, 6)
	var rbar, ubar float64
	for i := range r {
		r[i] = d.Human[i] - lam*d.Judge[i]
		rbar += r[i] / 6
		ubar += d.Unlabeled[i] / 6
	}
	var v float64
	for c := 0; c < 3; c++ {
		var s float64
		for i := 2 * c; i < 2*c+2; i++ {
			s += (r[i]-rbar)/6 + lam*(d.Unlabeled[i]-ubar)/6
		}
		v += s * s
	}
	near(t, "clustered SE", cl.SE, math.Sqrt(v))
}

// TestDegenerate: no unlabeled turn or a constant judge give λ = 0 (the human-only
// estimate); fewer than two labels give no interval, with the reason.
func TestDegenerate(t *testing.T) {
	d := &Data{Human: []float64{1, 0, 1}, Judge: []float64{1, 1, 0}}
	if l := Lambda(d); l != 0 {
		t.Errorf("no unlabeled turns: λ = %v, want 0", l)
	}
	if r, h := Mean(d, 0.05), HumanOnly(d, 0.05); r.Estimate != h.Estimate || r.Lo != h.Lo {
		t.Errorf("no unlabeled turns: PPI %v differs from human-only %v", r, h)
	}
	d = &Data{Human: []float64{1, 0, 1}, Judge: []float64{1, 1, 1}, Unlabeled: []float64{1, 1}}
	if l := Lambda(d); l != 0 {
		t.Errorf("constant judge: λ = %v, want 0", l)
	}
	d = &Data{Human: []float64{1}, Judge: []float64{1}, Unlabeled: []float64{1, 0}}
	if r := Mean(d, 0.05); r.Undefined != ReasonFewLabels || !math.IsNaN(r.Lo) {
		t.Errorf("one label: %+v, want undefined %q", r, ReasonFewLabels)
	}
	if r := Mean(&Data{Unlabeled: []float64{1}}, 0.05); r.Undefined != ReasonNoLabels {
		t.Errorf("no label: %+v", r)
	}
}

// TestJudgeOnlyAndEffectiveN: the judge-only mean is the judge's mean over every turn, and
// the effective n follows its definition.
func TestJudgeOnlyAndEffectiveN(t *testing.T) {
	d := &Data{Human: []float64{1, 2}, Judge: []float64{2, 3}, Unlabeled: []float64{4, 5, 6}}
	j := JudgeOnly(d, 0.05)
	near(t, "judge-only", j.Estimate, 4)
	// One turn per episode: the jackknife of a mean is the sample variance over n, and the
	// sample variance of 2..6 is 2.5; the quantile is t on 4 degrees of freedom (2.776445).
	near(t, "judge-only SE", j.SE, math.Sqrt(2.5/5))
	if math.Abs(j.Hi-j.Estimate-2.7764451051977987*j.SE) > 1e-9 || j.DF != 4 {
		t.Errorf("judge-only interval %+v: want ± t(4)·SE", j)
	}
	// Every turn in one episode: no interval (it was one of zero width).
	one := &Data{Human: []float64{1, 2}, Judge: []float64{2, 3}, Unlabeled: []float64{4, 5}, Cluster: []int{7, 7}, ClusterU: []int{7, 7}}
	if j := JudgeOnly(one, 0.05); j.Undefined == "" || !math.IsNaN(j.Lo) {
		t.Errorf("judge-only of one episode: %+v, want no interval", j)
	}
	// The ratio of variances, whatever the t quantiles of the two intervals.
	h := tInterval(3, 0.5, 6, 0.05)
	p := tInterval(3, 0.25, 9.5, 0.05)
	near(t, "effective n", EffectiveN(10, h, p), 40)
	if !math.IsNaN(EffectiveN(10, h, undefined(3, ReasonFewEpisodes))) {
		t.Error("effective n without a PPI interval should be NaN")
	}
}

// TestDiff: independent models' difference has variance var_A + var_B; its p-value is the
// t test's on Satterthwaite's degrees of freedom (close to the normal one with 100s of labels).
func TestDiff(t *testing.T) {
	c := loadCases(t)
	a := &Data{Human: c[0].Human, Judge: c[0].Judge, Unlabeled: c[0].Unlabeled}
	b := &Data{Human: c[1].Human, Judge: c[1].Judge, Unlabeled: c[1].Unlabeled}
	ra, rb := Mean(a, 0.05), Mean(b, 0.05)
	d := Diff(a, b, 0.05)
	near(t, "diff", d.Estimate, ra.Estimate-rb.Estimate)
	near(t, "diff SE", d.SE, math.Hypot(ra.SE, rb.SE))
	zv := d.Estimate / d.SE
	// Welch–Satterthwaite from the two variances, and the p-value near the normal one (erfc).
	wdf := math.Pow(ra.SE*ra.SE+rb.SE*rb.SE, 2) / (math.Pow(ra.SE, 4)/ra.DF + math.Pow(rb.SE, 4)/rb.DF)
	if math.Abs(d.DF-wdf) > 1e-6*wdf {
		t.Errorf("diff df %v, want %v", d.DF, wdf)
	}
	if pz := math.Erfc(math.Abs(zv) / math.Sqrt2); d.P < pz || d.P > pz*1.1+1e-6 {
		t.Errorf("p %v, want a little above the normal %v", d.P, pz)
	}
	if same := Diff(a, a, 0.05); same.Estimate != 0 {
		t.Errorf("A − A = %v", same.Estimate)
	}
}

// TestRankShares: models far apart hold their ranks in every replicate, two identical ones
// split ranks 2 and 3; shares of a model add up to 1 and the same seed gives the same shares.
func TestRankShares(t *testing.T) {
	mk := func(shift float64, n int) *Data {
		d := &Data{}
		for i := range n {
			v := shift + float64(i%5)/10
			d.Human = append(d.Human, v)
			d.Judge = append(d.Judge, v+0.3)
			d.Unlabeled = append(d.Unlabeled, v+0.3+float64(i%3)/10)
		}
		return d
	}
	models := []*Data{mk(1, 30), mk(3, 30), mk(1.01, 30)}
	rank, shares := RankShares(models, 400, 7)
	if rank[0] != 3 || rank[1] != 1 || rank[2] != 2 {
		t.Fatalf("ranks %v, want [3 1 2]", rank)
	}
	if shares[1][0] != 1 {
		t.Errorf("the clear winner holds rank 1 in %v of replicates, want all", shares[1][0])
	}
	if s := shares[0][1] + shares[0][2]; math.Abs(s-1) > 1e-12 || shares[0][1] == 0 || shares[0][2] == 0 {
		t.Errorf("the two close models should split ranks 2 and 3: %v", shares[0])
	}
	_, again := RankShares(models, 400, 7)
	for i := range shares {
		for r := range shares[i] {
			if shares[i][r] != again[i][r] {
				t.Fatalf("same seed, different shares: %v vs %v", shares, again)
			}
		}
	}
}
