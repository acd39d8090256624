package ppi

import (
	"math"
	"math/rand/v2"
	"sort"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distuv"
)

// Small-sample inference over episodes.
//
// The sandwich variance Σ_episodes (Σψ)² of ppi.go is ppi_py's and is right when there are
// many episodes. With labels from 6–10 episodes it is too small: it is biased downward (by
// (G − 1)/G and more when episodes differ in size), its own spread is that of a variance on
// G − 1 degrees of freedom, and λ̂ is tuned on the same labels to make it as small as it can
// be, then treated as fixed. The intervals that m3eval shows therefore come from the
// delete-one-episode jackknife (the "CV3" cluster-jackknife variance recommended for few
// clusters by MacKinnon, Nielsen & Webb, J. Econometrics 2023), in which every replicate
// re-tunes λ, so the interval carries λ's own variability, with a Student t quantile on
// Satterthwaite's degrees of freedom (about G − 1 for G labeled episodes). The jackknife
// is stratified (Wolter 2007, §4.5, the "JKn" jackknife of surveys): episodes with a
// labeled turn form one stratum and episodes with unlabeled turns only another, since the
// labeled episodes are the few that carry almost all the variance and the unlabeled ones are
// a separate, much larger sample; each stratum's replicates get the factor (G_h − 1)/G_h of
// its own size. For a mean of equal-sized episodes this equals the classical variance of the
// episode means, s²/G (with G − 1 in s²), exactly.
//
// No library computes a jackknife of PPI++ over episodes with λ re-tuned, so it is written
// here; each replicate is computed from per-episode sums in O(1), so the jackknife costs one
// pass over the turns however many episodes there are.

// moments are the sums one PPI++ estimate (point estimate and tuned λ) is a function of:
// labeled turns' human values h and judge values j, unlabeled turns' judge values u, all
// taken minus one shift per model (the full data's mean judge and human values), which
// changes neither λ nor the differences between estimates and keeps the sums small.
type moments struct {
	n, h, j, hj, jj float64 // labeled turns
	N, u, uu        float64 // unlabeled turns
}

func (m *moments) sub(o *moments) moments {
	return moments{n: m.n - o.n, h: m.h - o.h, j: m.j - o.j, hj: m.hj - o.hj, jj: m.jj - o.jj,
		N: m.N - o.N, u: m.u - o.u, uu: m.uu - o.uu}
}

// lambda is Lambda computed from sums (the same formula, ppi_py's _calc_lam_glm).
func (m *moments) lambda() float64 {
	if m.n <= 0 || m.N <= 0 {
		return 0
	}
	cov := m.hj - m.h*m.j/m.n // Σ(h − h̄)(j − j̄)
	tot := m.n + m.N
	ss := m.jj + m.uu - (m.j+m.u)*(m.j+m.u)/tot
	// A judge constant on what is left (Lambda's ss == 0) leaves rounding of the order of
	// 1e-16 of the sums here, not an exact 0.
	if tot < 2 || ss <= 1e-12*(m.jj+m.uu) {
		return 0
	}
	lam := (cov / m.n) / ((1 + m.n/m.N) * ss / (tot - 1))
	return math.Min(1, math.Max(0, lam))
}

// estimate is PointEstimate from sums (minus the model's human shift).
func (m *moments) estimate(lam float64) float64 {
	if m.n <= 0 {
		return math.NaN()
	}
	rect := (m.h - lam*m.j) / m.n
	if lam == 0 || m.N <= 0 {
		return rect
	}
	return lam*m.u/m.N + rect
}

// clusterKey names an episode across models: caller ids (≥ 0, one numbering shared by the
// models) with model −1, and turns without a cluster id their own episode, per model.
type clusterKey struct{ model, id int }

// Joint is the jackknife over episodes of several models' estimates at once. The models are
// one model, a pair for a difference, or every model of a field for simultaneous
// intervals. Episodes
// shared by models (the same id) are left out of every model at once, so the covariance of
// models scored on the same episodes is in it.
type Joint struct {
	Est    []float64 // each model's point estimate (ppi_py's, with its λ)
	Lambda []float64 // each model's λ (tuned, or the fixed one)
	// Episodes is, per model, the number of episodes with a labeled turn (G, what its
	// interval rests on).
	Episodes []int
	labeled  []int // per model: labeled turns
	strata   []stratum
}

// stratum is one stratum of the jackknife: its number of episodes and the deviations of the
// replicates (one per episode left out) from their mean, per model.
type stratum struct {
	g   int
	dev [][]float64 // dev[e][k]
}

// NewJoint runs the jackknife over the episodes of models. With tune, every model's λ is
// tuned (Lambda) on the full data and re-tuned in every replicate; otherwise every λ is
// fixed at lam (0: human-only estimates).
func NewJoint(models []*Data, tune bool, lam float64) *Joint {
	K := len(models)
	jt := &Joint{Est: make([]float64, K), Lambda: make([]float64, K), Episodes: make([]int, K), labeled: make([]int, K)}
	type part struct {
		model int
		m     moments
	}
	at := map[clusterKey]int{}
	var parts [][]part // per episode
	var hasLabel []bool
	slot := func(key clusterKey, model int) *moments {
		e, ok := at[key]
		if !ok {
			e = len(parts)
			at[key] = e
			parts = append(parts, nil)
			hasLabel = append(hasLabel, false)
		}
		for i := range parts[e] {
			if parts[e][i].model == model {
				return &parts[e][i].m
			}
		}
		parts[e] = append(parts[e], part{model: model})
		return &parts[e][len(parts[e])-1].m
	}
	totals := make([]moments, K)
	for k, d := range models {
		lk := lam
		if tune {
			lk = Lambda(d)
		}
		jt.Lambda[k], jt.labeled[k] = lk, len(d.Human)
		if len(d.Human) == 0 {
			jt.Est[k] = math.NaN()
		} else {
			jt.Est[k] = PointEstimate(d, lk)
		}
		ch, cj := 0.0, 0.0
		if len(d.Human) > 0 {
			ch, cj = mean(d.Human), mean(d.Judge)
		}
		eps := map[clusterKey]bool{}
		for i := range d.Human {
			key := clusterKey{model: k, id: -1 - i}
			if d.Cluster != nil {
				key = clusterKey{model: -1, id: d.Cluster[i]}
			}
			m := slot(key, k)
			hasLabel[at[key]] = true
			eps[key] = true
			h, j := d.Human[i]-ch, d.Judge[i]-cj
			m.n++
			m.h += h
			m.j += j
			m.hj += h * j
			m.jj += j * j
		}
		jt.Episodes[k] = len(eps)
		for i, v := range d.Unlabeled {
			key := clusterKey{model: k, id: math.MinInt32 + i}
			if d.ClusterU != nil {
				key = clusterKey{model: -1, id: d.ClusterU[i]}
			}
			m := slot(key, k)
			u := v - cj
			m.N++
			m.u += u
			m.uu += u * u
		}
	}
	for e := range parts {
		for _, p := range parts[e] {
			t := &totals[p.model]
			t.n, t.h, t.j, t.hj, t.jj = t.n+p.m.n, t.h+p.m.h, t.j+p.m.j, t.hj+p.m.hj, t.jj+p.m.jj
			t.N, t.u, t.uu = t.N+p.m.N, t.u+p.m.u, t.uu+p.m.uu
		}
	}
	full := make([]float64, K)
	for k := range totals {
		l := lam
		if tune {
			l = totals[k].lambda()
		}
		full[k] = totals[k].estimate(l)
	}
	// Replicates, stratum by stratum. A stratum is the episodes of one set of models (one
	// model's, unless models share episodes) with a labeled turn, or with unlabeled turns
	// only: models on separate episodes are separate samples, so Var(A − B) = Var A + Var B.
	index := map[string]int{}
	var members [][]int
	for e := range parts {
		key := make([]byte, 0, 8)
		for _, p := range parts[e] {
			key = append(key, byte(p.model), byte(p.model>>8), byte(p.model>>16), ',')
		}
		if hasLabel[e] {
			key = append(key, 'L')
		}
		h, ok := index[string(key)]
		if !ok {
			h = len(members)
			index[string(key)] = h
			members = append(members, nil)
		}
		members[h] = append(members[h], e)
	}
	for _, eps := range members {
		st := stratum{g: len(eps)}
		if st.g < 2 {
			continue // one episode in the stratum: nothing about its spread is known
		}
		for _, e := range eps {
			rep := append([]float64(nil), full...)
			for _, p := range parts[e] {
				m := totals[p.model].sub(&p.m)
				l := lam
				if tune {
					l = m.lambda()
				}
				rep[p.model] = m.estimate(l)
			}
			st.dev = append(st.dev, rep)
		}
		mu := make([]float64, K)
		for _, rep := range st.dev {
			for k, v := range rep {
				mu[k] += v / float64(st.g)
			}
		}
		for _, rep := range st.dev {
			for k := range rep {
				rep[k] -= mu[k]
				if math.IsNaN(rep[k]) {
					rep[k] = 0 // a model left without labels by this replicate: see Interval's rules
				}
			}
		}
		jt.strata = append(jt.strata, st)
	}
	return jt
}

// Var returns the jackknife variance of Σ_k c_k θ̂_k and its Satterthwaite degrees of
// freedom. The strata's variances v_h add up, and df = (Σ v_h)² / Σ v_h²/(G_h − 1).
func (jt *Joint) Var(c []float64) (v, df float64) {
	var den float64
	for _, st := range jt.strata {
		var s float64
		for _, rep := range st.dev {
			var x float64
			for k, ck := range c {
				if ck != 0 {
					x += ck * rep[k]
				}
			}
			s += x * x
		}
		vh := s * float64(st.g-1) / float64(st.g)
		v += vh
		den += vh * vh / float64(st.g-1)
	}
	if den == 0 {
		return v, math.NaN()
	}
	return v, v * v / den
}

// tq is the two-sided Student t quantile of level 1 − alpha on df degrees of freedom.
func tq(alpha, df float64) float64 {
	if math.IsNaN(df) || math.IsInf(df, 1) {
		return z(alpha)
	}
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}
	p := 1 - alpha/2
	q := t.Quantile(p)
	// gonum's inverse incomplete beta is good to about 1e-8 here; two Newton steps on the
	// CDF bring the quantile to the CDF's own precision (scipy's t.ppf agrees to 1e-13).
	for range 2 {
		q -= (t.CDF(q) - p) / t.Prob(q)
	}
	return q
}

// tInterval is est ± t_{df}·se.
func tInterval(est, se, df, alpha float64) Interval {
	h := tq(alpha, df) * se
	return Interval{Estimate: est, SE: se, Lo: est - h, Hi: est + h, DF: df}
}

// Interval returns model k's estimate with its small-sample 1 − alpha interval. The interval
// is undefined, with the reason, without labels, with one label, or with labels from a
// single episode.
func (jt *Joint) Interval(k int, alpha float64) Interval {
	switch {
	case jt.labeled[k] == 0:
		return undefined(math.NaN(), ReasonNoLabels)
	case jt.labeled[k] < 2:
		return undefined(jt.Est[k], ReasonFewLabels)
	case jt.Episodes[k] < 2:
		return undefined(jt.Est[k], ReasonOneEpisode)
	}
	c := make([]float64, len(jt.Est))
	c[k] = 1
	v, df := jt.Var(c)
	if noSpread(math.Sqrt(v), jt.Est[k]) {
		return undefined(jt.Est[k], ReasonNoSpread)
	}
	iv := tInterval(jt.Est[k], math.Sqrt(v), df, alpha)
	iv.Clusters = jt.Episodes[k]
	return iv
}

// Diff is θ̂_a − θ̂_b with its small-sample interval and two-sided t-test p-value.
func (jt *Joint) Diff(a, b int, alpha float64) Difference {
	est := jt.Est[a] - jt.Est[b]
	for _, k := range []int{a, b} {
		if iv := jt.Interval(k, alpha); iv.Undefined != "" {
			return Difference{Interval: undefined(est, iv.Undefined), P: math.NaN()}
		}
	}
	c := make([]float64, len(jt.Est))
	c[a], c[b] = 1, -1
	v, df := jt.Var(c)
	se := math.Sqrt(v)
	iv := tInterval(est, se, df, alpha)
	iv.Clusters = min(jt.Episodes[a], jt.Episodes[b])
	return Difference{Interval: iv, P: tP(est, se, df)}
}

// tP is the two-sided p-value of est/se on df degrees of freedom (0 for a nonzero estimate
// of zero standard error, NaN for 0/0).
func tP(est, se, df float64) float64 {
	switch {
	case se > 0 && (math.IsNaN(df) || math.IsInf(df, 1)):
		return 2 * distuv.UnitNormal.Survival(math.Abs(est)/se)
	case se > 0:
		return 2 * distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Survival(math.Abs(est)/se)
	case est != 0:
		return 0
	}
	return math.NaN()
}

// Pair names a comparison of two models by their index in a Joint, A − B.
type Pair struct{ A, B int }

// Simultaneous returns the max-t critical value c for the pairs. With probability 1 − alpha
// every interval (θ̂_A − θ̂_B) ± c·SE covers its difference at once (Tukey's idea for the
// correlated differences of several estimates; Hothorn, Bretz & Westfall 2008). Its
// distribution is the maximum over the pairs of |Zᵀc_p|/SE_p / √(χ²_ν/ν), Z normal with the
// jackknife covariance of the estimates and ν the smallest of the pairs' degrees of freedom
// (a multivariate t, conservative when the pairs' df differ), found by draws seeded by seed
// (the same value on every machine). Pairs with a zero SE are left out of the maximum.
func (jt *Joint) Simultaneous(pairs []Pair, alpha float64, seed uint64) float64 {
	K := len(jt.Est)
	cov := make([][]float64, K)
	for a := range cov {
		cov[a] = make([]float64, K)
	}
	for _, st := range jt.strata {
		f := float64(st.g-1) / float64(st.g)
		for _, rep := range st.dev {
			for a := range K {
				for b := range K {
					cov[a][b] += f * rep[a] * rep[b]
				}
			}
		}
	}
	nu := math.Inf(1)
	for _, p := range pairs {
		c := make([]float64, K)
		c[p.A], c[p.B] = 1, -1
		if v, df := jt.Var(c); v > 0 && !math.IsNaN(df) {
			nu = math.Min(nu, df)
		}
	}
	return MaxT(cov, pairs, nu, alpha, seed)
}

// MaxT returns the 1 − alpha quantile of the maximum of a multivariate t over the pairs, by
// seeded draws (maxTDraws). The maximum is that of |Z_A − Z_B|/SD(Z_A − Z_B) / √(χ²_ν/ν) over
// the pairs, Z normal with covariance cov (ν = +Inf: no χ² factor). Pairs whose difference has no variance are left out; NaN when none is left.
// Written here: gonum has the multivariate normal but no quantile of this maximum, and the
// exact one (Genz's integration, as R's mvtnorm) is not needed to Monte-Carlo precision.
func MaxT(cov [][]float64, pairs []Pair, nu, alpha float64, seed uint64) float64 {
	K := len(cov)
	sym := mat.NewSymDense(K, nil)
	for a := range K {
		for b := a; b < K; b++ {
			sym.SetSym(a, b, cov[a][b])
		}
	}
	var use []Pair
	var sd []float64
	for _, p := range pairs {
		if v := cov[p.A][p.A] + cov[p.B][p.B] - 2*cov[p.A][p.B]; v > 0 {
			use, sd = append(use, p), append(sd, math.Sqrt(v))
		}
	}
	if len(use) == 0 {
		return math.NaN()
	}
	var eig mat.EigenSym
	if !eig.Factorize(sym, true) {
		return math.NaN()
	}
	vals := eig.Values(nil)
	var vecs mat.Dense
	eig.VectorsTo(&vecs)
	root := make([][]float64, K) // cov = root·rootᵀ
	for i := range K {
		root[i] = make([]float64, K)
		for j := range K {
			root[i][j] = vecs.At(i, j) * math.Sqrt(math.Max(0, vals[j]))
		}
	}
	draws := maxTDraws(len(use))
	rng := rand.New(rand.NewPCG(seed, 0x5851f42d4c957f2d))
	chi := distuv.ChiSquared{K: nu, Src: rng}
	zs, x := make([]float64, K), make([]float64, K)
	maxes := make([]float64, draws)
	for d := range maxes {
		for i := range zs {
			zs[i] = rng.NormFloat64()
		}
		for i := range K {
			x[i] = 0
			for j := range K {
				x[i] += root[i][j] * zs[j]
			}
		}
		scale := 1.0
		if !math.IsInf(nu, 1) {
			scale = math.Sqrt(chi.Rand() / nu)
		}
		var m float64
		for i, p := range use {
			m = math.Max(m, math.Abs(x[p.A]-x[p.B])/sd[i]/scale)
		}
		maxes[d] = m
	}
	sort.Float64s(maxes)
	return maxes[int(math.Ceil((1-alpha)*float64(draws)))-1]
}

// maxTDraws is the number of draws of MaxT for a family of pairs: 200,000 for up to 20
// pairs (6 models), fewer for larger families so that one family costs about as much as 20
// pairs do (a draw's cost grows with the pairs), never below 20,000. The Monte-Carlo
// standard deviation of the 95% critical value is about 0.006 (0.2%) with 200,000 draws and
// 0.018 (0.6%) with 20,000 (measured over seeds, 4 models, ν ≈ 11). With 20,000 draws for
// every family, --seed's default (12345) put the critical value 1.2–1.6% above the exact one
// in 7 of the 18 cases of TestMaxTCorrelated, and every simultaneous interval's half-width
// with it; with these draws the largest departure is 0.3%.
func maxTDraws(pairs int) int {
	return max(20000, min(maxTDrawsMost, 4000000/max(1, pairs)))
}

// maxTDrawsMost caps maxTDraws. Only the soak simulation lowers it (to 20,000): it computes
// 8,000 critical values, and its family-wise error is a mean over 1,000 datasets whose own
// Monte-Carlo error (0.007) is far above what the critical value's adds to it.
var maxTDrawsMost = 200000

// RankSet is a set of ranks {Lo, …, Hi}. Rank 1 is the highest estimate.
type RankSet struct{ Lo, Hi int }

// RankSets turns simultaneous intervals of every pair of K models into a confidence set of
// ranks per model. The sets hold for all models at once with the intervals' joint level
// (Klein, Wright & Wieczorek, "A joint confidence region for an overall ranking of
// populations", JRSS C 2020; Mogstad, Romano, Shaikh & Wilhelm, "Inference for ranks",
// REStud 2024). A model's rank is at least 1 + the number of models whose interval of the difference lies
// wholly above it, and at most K − the number wholly below. lo and hi hold the simultaneous
// interval of θ_A − θ_B for each pair (NaN: that pair is not known, which widens both sets).
func RankSets(K int, pairs []Pair, lo, hi []float64) []RankSet {
	out := make([]RankSet, K)
	above, below := make([]int, K), make([]int, K)
	for i, p := range pairs {
		switch {
		case lo[i] > 0: // A above B
			above[p.B]++
			below[p.A]++
		case hi[i] < 0: // B above A
			above[p.A]++
			below[p.B]++
		}
	}
	for k := range out {
		out[k] = RankSet{Lo: 1 + above[k], Hi: K - below[k]}
	}
	return out
}
