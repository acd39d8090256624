package ppi

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"testing"
)

// jkRef is one case of testdata/jackknife_cases.json (made by testdata/jackknife_reference.py
// from the inputs of ppi_cases.json, with ppi_py computing every replicate's estimate).
type jkRef struct {
	Name     string `json:"name"`
	PPI      jkIv   `json:"ppi"`
	Human    jkIv   `json:"human"`
	DiffNext *jkIv  `json:"diff_next"`
}

type jkIv struct {
	Estimate, SE, DF float64
	CI               [2]float64
}

func loadJackknife(t *testing.T) []jkRef {
	t.Helper()
	b, err := os.ReadFile("testdata/jackknife_cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct{ Cases []jkRef }
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	return f.Cases
}

func checkIv(t *testing.T, what string, got Interval, want jkIv) {
	t.Helper()
	if got.Undefined != "" {
		t.Fatalf("%s undefined: %s", what, got.Undefined)
	}
	near(t, what+" estimate", got.Estimate, want.Estimate)
	near(t, what+" SE", got.SE, want.SE)
	if math.Abs(got.DF-want.DF) > 1e-7*want.DF {
		t.Errorf("%s df = %.12g, want %.12g", what, got.DF, want.DF)
	}
	near(t, what+" lo", got.Lo, want.CI[0])
	near(t, what+" hi", got.Hi, want.CI[1])
}

// TestJackknifeMatchesReference compares the small-sample intervals (PPI++ with λ re-tuned in
// every replicate, human-only, and the difference of two cases) with a delete-one-episode
// loop over ppi_py's own point estimates and scipy's t quantile, to 1e-9.
func TestJackknifeMatchesReference(t *testing.T) {
	cases, refs := loadCases(t), loadJackknife(t)
	if len(refs) != len(cases) {
		t.Fatalf("%d jackknife cases for %d inputs", len(refs), len(cases))
	}
	data := func(c refCase) *Data {
		return &Data{Human: c.Human, Judge: c.Judge, Unlabeled: c.Unlabeled, Cluster: c.Cluster, ClusterU: c.ClusterU}
	}
	for i, c := range cases {
		ref := refs[i]
		t.Run(c.Name, func(t *testing.T) {
			checkIv(t, "ppi", Mean(data(c), 0.05).Interval, ref.PPI)
			checkIv(t, "human", HumanOnly(data(c), 0.05), ref.Human)
			if ref.DiffNext != nil {
				// The reference never lets two cases share an episode: number the next
				// case's episodes apart (equal ids would say the same episode).
				b := data(cases[i+1])
				shift := func(ids []int) []int {
					if ids == nil {
						return nil
					}
					out := make([]int, len(ids))
					for k, id := range ids {
						out[k] = id + 1_000_000
					}
					return out
				}
				b.Cluster, b.ClusterU = shift(b.Cluster), shift(b.ClusterU)
				checkIv(t, "diff", Diff(data(c), b, 0.05).Interval, *ref.DiffNext)
			}
		})
	}
}

// TestSimultaneousTwoModels: with one pair the max-t critical value is the pair's own t
// quantile (up to the Monte-Carlo error of the draws), and with more pairs it is larger.
func TestSimultaneousTwoModels(t *testing.T) {
	cases := loadCases(t)
	var models []*Data
	for _, c := range cases[:4] {
		models = append(models, &Data{Human: c.Human, Judge: c.Judge, Unlabeled: c.Unlabeled})
	}
	jt := NewJoint(models[:2], true, 0)
	d := jt.Diff(0, 1, 0.05)
	crit := jt.Simultaneous([]Pair{{0, 1}}, 0.05, 1)
	if q := tq(0.05, d.DF); math.Abs(crit-q) > 0.03 {
		t.Errorf("one pair: critical value %.4f, want t quantile %.4f", crit, q)
	}
	if again := jt.Simultaneous([]Pair{{0, 1}}, 0.05, 1); again != crit {
		t.Errorf("same seed, different value: %v vs %v", crit, again)
	}
	all := NewJoint(models, true, 0)
	c6 := all.Simultaneous(allPairs(4), 0.05, 1)
	// Bonferroni over 6 pairs bounds it from above, one pair's quantile from below.
	if lo, hi := tq(0.05, 200), tq(0.05/6, 19); !(c6 > lo && c6 < hi) {
		t.Errorf("6 pairs: critical value %.4f, want between %.4f and %.4f", c6, lo, hi)
	}
}

// TestRankSets: a model whose simultaneous interval lies wholly above another's gets a
// better rank set; overlapping ones share their ranks.
func TestRankSets(t *testing.T) {
	// Models 0, 1, 2; pairs (0,1): 0 clearly above 1; (0,2): overlap; (1,2): 2 clearly above 1.
	pairs := []Pair{{0, 1}, {0, 2}, {1, 2}}
	lo := []float64{0.2, -0.1, -0.9}
	hi := []float64{0.8, 0.3, -0.1}
	got := RankSets(3, pairs, lo, hi)
	want := []RankSet{{1, 2}, {3, 3}, {1, 2}}
	for k := range want {
		if got[k] != want[k] {
			t.Errorf("model %d: ranks %v, want %v", k, got[k], want[k])
		}
	}
}

// TestJointSharedEpisodes: two models scored on the same episodes (one numbering) are left out
// together, so a model compared with itself has a difference of SE 0; numbered apart, the
// same data are independent samples and the variances add.
func TestJointSharedEpisodes(t *testing.T) {
	c := loadCases(t)[7] // clustered_scale
	a := &Data{Human: c.Human, Judge: c.Judge, Unlabeled: c.Unlabeled, Cluster: c.Cluster, ClusterU: c.ClusterU}
	same := Diff(a, a, 0.05)
	if same.Estimate != 0 || same.SE > 1e-12 {
		t.Errorf("A − A on shared episodes: %v ± %v, want 0 ± 0", same.Estimate, same.SE)
	}
	shift := func(ids []int) []int {
		out := make([]int, len(ids))
		for i, id := range ids {
			out[i] = id + 1000
		}
		return out
	}
	b := &Data{Human: c.Human, Judge: c.Judge, Unlabeled: c.Unlabeled, Cluster: shift(c.Cluster), ClusterU: shift(c.ClusterU)}
	apart := Diff(a, b, 0.05)
	one := Mean(a, 0.05)
	near(t, "SE of A − A' apart", apart.SE, math.Sqrt2*one.SE)
}

// TestMaxTMatchesTukey: for independent estimates of equal variance the max-t critical value
// over all pairs is Tukey's studentized range quantile / √2 (scipy's studentized_range, in
// testdata/maxt_cases.json), within 1% (the Monte-Carlo error of MaxT's draws, maxTDraws).
func TestMaxTMatchesTukey(t *testing.T) {
	b, err := os.ReadFile("testdata/maxt_cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Cases []struct {
			K    int
			Nu   *float64
			Crit float64
		}
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Cases) < 12 {
		t.Fatalf("%d cases", len(f.Cases))
	}
	for _, c := range f.Cases {
		nu := math.Inf(1)
		if c.Nu != nil {
			nu = *c.Nu
		}
		cov := make([][]float64, c.K)
		for i := range cov {
			cov[i] = make([]float64, c.K)
			cov[i][i] = 0.3
		}
		got := MaxT(cov, allPairs(c.K), nu, 0.05, 11)
		t.Logf("K = %d, ν = %v: max-t %.4f, Tukey %.4f", c.K, nu, got, c.Crit)
		if math.Abs(got-c.Crit) > 0.01*c.Crit {
			t.Errorf("K = %d, ν = %v: critical value %.4f, want Tukey's %.4f (±1%%)", c.K, nu, got, c.Crit)
		}
	}
}

// TestHumanOnlyMatchesStatsmodelsCR1: with episodes of one size the human-only jackknife
// equals statsmodels' cluster-robust OLS of an intercept with its small-sample correction and
// t(G − 1) interval (testdata/cr1_cases.json): SE to 1e-12; the interval ends to 1e-8, scipy's
// t quantile behind statsmodels being good to about 1e-8 (testdata/README.md).
func TestHumanOnlyMatchesStatsmodelsCR1(t *testing.T) {
	b, err := os.ReadFile("testdata/cr1_cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Cases []struct {
			Name     string
			Human    []float64
			Cluster  []int
			Estimate float64
			SE, DF   float64
			CI       [2]float64
		}
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Cases) != 3 {
		t.Fatalf("%d cases", len(f.Cases))
	}
	for _, c := range f.Cases {
		h := HumanOnly(&Data{Human: c.Human, Judge: c.Human, Cluster: c.Cluster}, 0.05)
		if math.Abs(h.Estimate-c.Estimate) > 1e-12 || math.Abs(h.SE-c.SE) > 1e-12 || h.DF != c.DF {
			t.Errorf("%s: %v ± %v on %v df, want %v ± %v on %v", c.Name, h.Estimate, h.SE, h.DF, c.Estimate, c.SE, c.DF)
		}
		if math.Abs(h.Lo-c.CI[0]) > 1e-8 || math.Abs(h.Hi-c.CI[1]) > 1e-8 {
			t.Errorf("%s: [%.12f, %.12f], want [%.12f, %.12f]", c.Name, h.Lo, h.Hi, c.CI[0], c.CI[1])
		}
	}
}

// TestMaxTCorrelated: for correlated estimates of unequal variance (models on shared
// episodes), not only Tukey's case, the max-t critical value matches an independent
// reference (testdata/maxt_corr_cases.json, maxt_corr_reference.py): Genz's integration of
// the box probability for pairs of full rank (every model against the first), 4,000,000
// numpy draws for all pairs, each at ν = 6, ≈ 10.9 and ∞. Within 1%: about 3 Monte-Carlo
// SDs of MaxT's draws plus the reference's own error; with 20,000 draws for every family, as
// before, 7 of the 18 cases were 1.2–1.6% high with the default seed.
func TestMaxTCorrelated(t *testing.T) {
	b, err := os.ReadFile("testdata/maxt_corr_cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Cases []struct {
			Name, Method string
			Cov          [][]float64
			Pairs        [][2]int
			Nu           *float64
			Crit         float64
		}
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Cases) != 18 {
		t.Fatalf("%d cases, want 18", len(f.Cases))
	}
	for _, c := range f.Cases {
		nu := math.Inf(1)
		if c.Nu != nil {
			nu = *c.Nu
		}
		var pairs []Pair
		for _, p := range c.Pairs {
			pairs = append(pairs, Pair{p[0], p[1]})
		}
		got := MaxT(c.Cov, pairs, nu, 0.05, 12345)
		t.Logf("%s, %s, %d pairs, ν = %v: max-t %.4f, reference %.4f (%+.2f%%)", c.Name, c.Method, len(pairs), nu, got, c.Crit, 100*(got/c.Crit-1))
		if math.Abs(got-c.Crit) > 0.01*c.Crit {
			t.Errorf("%s, %s, ν = %v: critical value %.4f, want %.4f (±1%%)", c.Name, c.Method, nu, got, c.Crit)
		}
	}
}

// TestJointMatchesReviewReference: the jackknife of 4 models at once (8 strata: each model's
// labeled episodes, which hold unlabeled turns too, and its unlabeled-only episodes), each
// model's PPI++ and human-only interval and the 6 differences, against an implementation from
// the definitions that shares nothing with this package or ppi_py
// (testdata/review_reference.py): estimates, λ and SEs to 1e-12, df to 1e-9 relative,
// interval ends and p to 1e-9.
func TestJointMatchesReviewReference(t *testing.T) {
	b, err := os.ReadFile("testdata/review_cases.json")
	if err != nil {
		t.Fatal(err)
	}
	type iv struct {
		A, B          int
		Estimate, SE  float64
		Lambda, DF, P float64
		CI            [2]float64
	}
	var f struct {
		Models []struct {
			Human, Judge, Unlabeled []float64
			Cluster                 []int
			ClusterU                []int `json:"cluster_u"`
		}
		PPI         []iv
		HumanOnly   []iv `json:"human_only"`
		Differences []iv
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Models) != 4 || len(f.PPI) != 4 || len(f.HumanOnly) != 4 || len(f.Differences) != 6 {
		t.Fatalf("%d models, %d/%d rows, %d differences", len(f.Models), len(f.PPI), len(f.HumanOnly), len(f.Differences))
	}
	var models []*Data
	for _, m := range f.Models {
		models = append(models, &Data{Human: m.Human, Judge: m.Judge, Unlabeled: m.Unlabeled, Cluster: m.Cluster, ClusterU: m.ClusterU})
	}
	check := func(what string, got Interval, lam float64, want iv) {
		t.Helper()
		if math.Abs(got.Estimate-want.Estimate) > 1e-12 || math.Abs(got.SE-want.SE) > 1e-12 || math.Abs(lam-want.Lambda) > 1e-12 ||
			math.Abs(got.DF/want.DF-1) > 1e-9 || math.Abs(got.Lo-want.CI[0]) > 1e-9 || math.Abs(got.Hi-want.CI[1]) > 1e-9 {
			t.Errorf("%s: %.12f ± %.12f (λ %.12f, df %.9f) [%.12f, %.12f], want %.12f ± %.12f (λ %.12f, df %.9f) [%.12f, %.12f]",
				what, got.Estimate, got.SE, lam, got.DF, got.Lo, got.Hi, want.Estimate, want.SE, want.Lambda, want.DF, want.CI[0], want.CI[1])
		}
	}
	jt := NewJoint(models, true, 0)
	for k := range models {
		check(fmt.Sprintf("model %d PPI (joint)", k), jt.Interval(k, 0.05), jt.Lambda[k], f.PPI[k])
		m := Mean(models[k], 0.05)
		check(fmt.Sprintf("model %d PPI (Mean)", k), m.Interval, m.Lambda, f.PPI[k])
		check(fmt.Sprintf("model %d human only", k), HumanOnly(models[k], 0.05), 0, f.HumanOnly[k])
	}
	for _, w := range f.Differences {
		d := jt.Diff(w.A, w.B, 0.05)
		w.Lambda = 0
		check(fmt.Sprintf("difference %d − %d", w.A, w.B), d.Interval, 0, w)
		if math.Abs(d.P-w.P) > 1e-9 {
			t.Errorf("difference %d − %d: p %.12g, want %.12g", w.A, w.B, d.P, w.P)
		}
	}
}

// TestNoSpreadNoInterval: labels that are all the same value (a Yes-rate of 1 from 7
// episodes) gave a 95% interval of zero width, [1.00, 1.00], for PPI, human-only and, in an
// active sample, the weighted estimate; there is no interval now, with the reason, and no
// difference or rank set rests on one. A single other value restores the interval.
func TestNoSpreadNoInterval(t *testing.T) {
	d := &Data{}
	for e := range 7 {
		for k := range 3 {
			d.Human, d.Judge, d.Cluster = append(d.Human, 1), append(d.Judge, float64((e+k)%2)), append(d.Cluster, e)
			d.Unlabeled, d.ClusterU = append(d.Unlabeled, float64(k%2)), append(d.ClusterU, 100+e)
		}
	}
	for what, iv := range map[string]Interval{"PPI": Mean(d, 0.05).Interval, "human only": HumanOnly(d, 0.05)} {
		if iv.Undefined != ReasonNoSpread || !math.IsNaN(iv.Lo) || iv.Estimate != 1 {
			t.Errorf("%s of all-1 labels: %+v, want no interval (%q) and estimate 1", what, iv, ReasonNoSpread)
		}
	}
	other := &Data{Human: append([]float64(nil), d.Human...), Judge: d.Judge, Cluster: d.Cluster, Unlabeled: d.Unlabeled, ClusterU: d.ClusterU}
	other.Human[4] = 0
	if diff := Diff(d, other, 0.05); diff.Undefined != ReasonNoSpread || !math.IsNaN(diff.P) {
		t.Errorf("difference with a no-spread model: %+v, want none", diff)
	}
	if iv := Mean(other, 0.05); iv.Undefined != "" || !(iv.Hi > iv.Lo) {
		t.Errorf("one label of 0 among 21: %+v, want an interval", iv)
	}
	// The active design's weighted estimate: every turn drawn with probability 1/2.
	a := &ActiveData{}
	for i := range 42 {
		a.Judge, a.Human, a.Labeled = append(a.Judge, float64(i%2)), append(a.Human, 1), append(a.Labeled, i%2 == 0)
		a.Pi, a.Cluster = append(a.Pi, 0.5), append(a.Cluster, i/6)
	}
	if r := ActiveMean(a, 0.05); r.Undefined != ReasonNoSpread || r.Estimate != 1 {
		t.Errorf("active sample of all-1 labels: %+v, want no interval (%q)", r, ReasonNoSpread)
	}
}
