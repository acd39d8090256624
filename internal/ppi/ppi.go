// Package ppi estimates a mean human score from a few human labels and many automatic
// (judge) scores: prediction-powered inference with power tuning (PPI++, Angelopoulos, Duchi
// and Zrnic, arXiv 2311.01453), beside the human-only and the judge-only estimates.
//
// The point estimate and the power-tuning parameter λ follow ppi_py's ppi_mean_pointestimate
// and ppi_mean_ci (lhat=None) exactly. ppi_py's normal interval, with its variance computed
// over clusters of turns (episodes) instead of over turns because the turns of one
// conversation are not independent, is kept (MeanPPIPy; with one turn per cluster it is
// ppi_py's, which is how the tests check it). The intervals m3eval shows are small-sample
// ones (small.go): a jackknife over episodes that re-tunes λ, with a t quantile, which keeps
// their coverage with labels from a handful of episodes; beside them simultaneous (max-t)
// intervals of the differences and rank confidence sets (issue #41).
//
// Everything here is a pure function over in-memory values: no store, no output.
package ppi

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// Data is what one estimate is made of. It holds the turns with a human value (Human, and
// Judge on them) and the turns without one (Unlabeled, the judge's score only). Cluster ids put turns in
// clusters (episodes); a labeled and an unlabeled turn with the same id are in the same
// cluster. Nil Cluster slices make every turn its own cluster.
type Data struct {
	Human, Judge []float64 // one pair per labeled turn
	Cluster      []int     // cluster of each labeled turn (nil: every turn its own)
	Unlabeled    []float64 // the judge's score of each turn without a human value
	ClusterU     []int     // cluster of each unlabeled turn (nil: every turn its own)
}

// N returns the number of labeled and of unlabeled turns.
func (d *Data) N() (labeled, unlabeled int) { return len(d.Human), len(d.Unlabeled) }

// Interval is an estimate with its standard error and two-sided interval. Undefined says why
// there is no interval ("" when there is one); Lo, Hi and SE are NaN then.
type Interval struct {
	Estimate  float64
	SE        float64
	Lo, Hi    float64
	Undefined string
	// DF is the degrees of freedom of the t quantile of a small-sample interval (0: a normal
	// interval, ppi_py's). Clusters is the number of episodes with a labeled turn the
	// interval rests on (0 when not counted).
	DF       float64
	Clusters int
}

// Width is Hi − Lo (NaN without an interval).
func (iv Interval) Width() float64 { return iv.Hi - iv.Lo }

// Result is the PPI++ estimate with the power-tuning parameter it used.
type Result struct {
	Interval
	Lambda float64
}

// Reasons an interval is undefined.
const (
	ReasonFewLabels  = "fewer than 2 labeled turns"
	ReasonNoLabels   = "no labeled turn"
	ReasonNoTurns    = "no turn with a judge score"
	ReasonOneEpisode = "labeled turns from only 1 episode"
	// ReasonNoSpread: every episode left out gives the same estimate (every label the same
	// value, a Yes-rate of 1 or 0 with λ̂ = 0), so the estimated variance is 0 and the interval
	// would have zero width: that is no 95% statement about the mean (21 Yes from 7 episodes
	// leave a true rate of 0.9 quite possible), and no interval is given.
	ReasonNoSpread = "every labeled value the same: no spread to estimate a variance from"
)

// noSpread reports a standard error of 0 (up to rounding of the sums) or none.
func noSpread(se, est float64) bool { return !(se > 1e-12*math.Max(1, math.Abs(est))) }

func mean(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

// Lambda returns PPI++'s power-tuning parameter for a mean, as ppi_py's _calc_lam_glm
// computes it for d = 1 with clip=True. It is the labeled turns' covariance of human and
// judge values (divided by n) over (1 + n/N) times the sample variance (divided by n+N−1) of
// the judge's scores on all turns, clipped to [0, 1]. The gradients ppi_py centres first are the values minus the
// λ = 1 estimate, a shift that changes neither the covariance nor the variance. Where ppi_py
// divides by zero (no unlabeled turn, a constant judge) λ is 0: the judge cannot help, and
// the estimate is the human-only one.
func Lambda(d *Data) float64 {
	n, N := len(d.Human), len(d.Unlabeled)
	if n == 0 || N == 0 {
		return 0
	}
	my, mh := mean(d.Human), mean(d.Judge)
	var cov float64
	for i := range d.Human {
		cov += (d.Human[i] - my) * (d.Judge[i] - mh)
	}
	cov = 2 * cov / float64(n) // ppi_py: (1/n)(gᵀĝ + ĝᵀg) of the centred gradients
	// Sample variance of all judge scores, as np.cov of the stacked gradients.
	var sum float64
	for _, v := range d.Judge {
		sum += v
	}
	for _, v := range d.Unlabeled {
		sum += v
	}
	m := sum / float64(n+N)
	var ss float64
	for _, v := range d.Judge {
		ss += (v - m) * (v - m)
	}
	for _, v := range d.Unlabeled {
		ss += (v - m) * (v - m)
	}
	if n+N < 2 || ss == 0 {
		return 0
	}
	variance := ss / float64(n+N-1)
	lam := cov / (2 * (1 + float64(n)/float64(N)) * variance)
	return math.Min(1, math.Max(0, lam))
}

// PointEstimate returns the PPI estimate with parameter lam. It is λ × the judge's mean on
// the unlabeled turns + the labeled turns' mean of (human − λ × judge); lam = 0 gives the
// human-only mean.
func PointEstimate(d *Data, lam float64) float64 {
	var rect float64
	for i := range d.Human {
		rect += d.Human[i] - lam*d.Judge[i]
	}
	rect /= float64(len(d.Human))
	if lam == 0 || len(d.Unlabeled) == 0 {
		return rect
	}
	return lam*mean(d.Unlabeled) + rect
}

// z is the two-sided normal quantile of level 1 − alpha.
func z(alpha float64) float64 { return distuv.UnitNormal.Quantile(1 - alpha/2) }

// clusterVar adds up influence values by cluster and returns Σ_c (Σ_{i∈c} ψ_i)²: the
// cluster-robust variance of a sum of per-turn terms (no small-sample factor, so one turn per
// cluster gives ppi_py's Σψ², the population variance over n).
type clusterVar struct {
	at   map[int]int // cluster id → index in sums
	sums []float64   // per cluster, in first-seen order (a fixed order: sums are reproducible)
	own  float64     // Σψ² of turns in their own cluster
}

func (c *clusterVar) add(cluster []int, i int, psi float64) {
	if cluster == nil {
		c.own += psi * psi
		return
	}
	if c.at == nil {
		c.at = map[int]int{}
	}
	k, ok := c.at[cluster[i]]
	if !ok {
		k = len(c.sums)
		c.at[cluster[i]] = k
		c.sums = append(c.sums, 0)
	}
	c.sums[k] += psi
}

func (c *clusterVar) sum() float64 {
	v := c.own
	for _, s := range c.sums {
		v += s * s
	}
	return v
}

// influence adds the estimate's per-turn influence values, scaled by sign, to c: for a
// labeled turn (r_i − r̄)/n with r = human − λ·judge, for an unlabeled one λ(ŷ_j − ȳ)/N.
func influence(c *clusterVar, d *Data, lam, sign float64) {
	n, N := len(d.Human), len(d.Unlabeled)
	rbar := 0.0
	for i := range d.Human {
		rbar += d.Human[i] - lam*d.Judge[i]
	}
	rbar /= float64(n)
	for i := range d.Human {
		c.add(d.Cluster, i, sign*(d.Human[i]-lam*d.Judge[i]-rbar)/float64(n))
	}
	if lam == 0 || N == 0 {
		return
	}
	ubar := mean(d.Unlabeled)
	for j, v := range d.Unlabeled {
		c.add(d.ClusterU, j, sign*lam*(v-ubar)/float64(N))
	}
}

func interval(est, se, alpha float64) Interval {
	h := z(alpha) * se
	return Interval{Estimate: est, SE: se, Lo: est - h, Hi: est + h}
}

func undefined(est float64, why string) Interval {
	return Interval{Estimate: est, SE: math.NaN(), Lo: math.NaN(), Hi: math.NaN(), Undefined: why}
}

// WithLambda is the PPI estimate and its 1 − alpha interval for a given λ, with the
// cluster-robust variance.
func WithLambda(d *Data, lam, alpha float64) Result {
	n := len(d.Human)
	switch {
	case n == 0:
		return Result{Interval: undefined(math.NaN(), ReasonNoLabels), Lambda: lam}
	case n < 2:
		return Result{Interval: undefined(PointEstimate(d, lam), ReasonFewLabels), Lambda: lam}
	case d.Cluster != nil && !twoClusters(d.Cluster):
		// One cluster: its centred influence values add up to 0, a variance of 0 that only
		// says nothing was learnt about between-episode variation.
		return Result{Interval: undefined(PointEstimate(d, lam), ReasonOneEpisode), Lambda: lam}
	}
	var c clusterVar
	influence(&c, d, lam, 1)
	return Result{Interval: interval(PointEstimate(d, lam), math.Sqrt(c.sum()), alpha), Lambda: lam}
}

func twoClusters(ids []int) bool {
	for _, id := range ids {
		if id != ids[0] {
			return true
		}
	}
	return false
}

// Mean returns the PPI++ estimate of the mean human value, with λ tuned from the data
// (Lambda), and its small-sample 1 − alpha interval. The interval is the jackknife over
// episodes, each replicate re-tuning λ, with a t quantile (small.go). The point estimate and λ are ppi_py's; the
// interval is wider than ppi_py's (MeanPPIPy) by a factor that goes to 1 with many episodes.
func Mean(d *Data, alpha float64) Result {
	jt := NewJoint([]*Data{d}, true, 0)
	return Result{Interval: jt.Interval(0, alpha), Lambda: jt.Lambda[0]}
}

// MeanPPIPy returns Mean's estimate with ppi_py's own interval. That is the sandwich
// variance over episodes with λ fixed at its tuned value and a normal quantile (equal to
// ppi_mean_ci with one turn per episode). Too narrow with labels from few episodes; kept as the reference the tests check.
func MeanPPIPy(d *Data, alpha float64) Result { return WithLambda(d, Lambda(d), alpha) }

// HumanOnly returns the mean of the human values of the labeled turns and its small-sample
// interval over episodes. The interval is the jackknife with λ = 0 and a t quantile.
func HumanOnly(d *Data, alpha float64) Interval {
	return NewJoint([]*Data{d}, false, 0).Interval(0, alpha)
}

// HumanOnlyPPIPy is the human-only mean with ppi_py's classical_mean_ci interval (sandwich
// over episodes, normal quantile).
func HumanOnlyPPIPy(d *Data, alpha float64) Interval { return WithLambda(d, 0, alpha).Interval }

// JudgeOnly returns the judge's mean over every turn, labeled or not, with an interval. The
// interval treats the judge's scores as if they were the human values: it is as narrow as
// the judge has turns and ignores the judge's bias, which is why it is no estimate of the
// human score.
// The interval is the same small-sample one as HumanOnly's over the episodes of all turns,
// and undefined when they all lie in one episode (its sandwich variance was then 0, an
// interval of zero width).
func JudgeOnly(d *Data, alpha float64) Interval {
	all := make([]float64, 0, len(d.Judge)+len(d.Unlabeled))
	all = append(append(all, d.Judge...), d.Unlabeled...)
	if len(all) == 0 {
		return undefined(math.NaN(), ReasonNoTurns)
	}
	if len(all) < 2 {
		return undefined(mean(all), "fewer than 2 turns with a judge score")
	}
	var cl []int
	if d.Cluster != nil || d.ClusterU != nil {
		cl = make([]int, 0, len(all))
		cl = append(append(cl, clusterIDs(d.Cluster, len(d.Judge), -1)...), clusterIDs(d.ClusterU, len(d.Unlabeled), -1-len(d.Judge))...)
	}
	iv := HumanOnly(&Data{Human: all, Judge: all, Cluster: cl}, alpha)
	if iv.Undefined == ReasonOneEpisode {
		iv.Undefined = "every turn in 1 episode"
	}
	return iv
}

// clusterIDs returns ids, or (when nil) n ids of their own counting down from start (negative,
// so they never meet a caller's cluster id, which is ≥ 0 by convention of this package).
func clusterIDs(ids []int, n, start int) []int {
	if ids != nil {
		return ids
	}
	out := make([]int, n)
	for i := range out {
		out[i] = start - i
	}
	return out
}

// EffectiveN returns the number of human labels alone that would give an interval as narrow
// as PPI's. It is n × (SE_human / SE_ppi)², the ratio of the variances. NaN without either interval
// or when PPI's SE is 0. Standard errors, not widths: the small-sample intervals' t
// quantiles differ between the two (Satterthwaite's df of PPI's two strata against G − 1
// of the labeled episodes alone), and a ratio of widths would count that difference of
// quantiles as labels (about 6% more "labels" with 7 episodes).
func EffectiveN(n int, human, ppi Interval) float64 {
	if human.Undefined != "" || ppi.Undefined != "" || math.IsNaN(human.SE) || math.IsNaN(ppi.SE) || ppi.SE == 0 {
		return math.NaN()
	}
	return float64(n) * (human.SE / ppi.SE) * (human.SE / ppi.SE)
}

// Difference is an estimate of A − B with its interval and two-sided p-value for A = B.
type Difference struct {
	Interval
	P float64
}

// Diff returns the difference of the PPI++ estimates of a and b, each with its own tuned λ,
// with its small-sample interval and the two-sided t-test p-value. The interval is the
// jackknife over the union of their episodes: an episode holding turns of both (the same
// episode scored for two models) is left out of both at once, so their covariance is in it. Cluster ids of a and
// b must come from one numbering.
func Diff(a, b *Data, alpha float64) Difference {
	return NewJoint([]*Data{a, b}, true, 0).Diff(0, 1, alpha)
}

// DiffIndependent is the difference a − b of two independent estimates (no shared cluster)
// with the normal interval and two-sided p-value.
func DiffIndependent(a, b Interval, alpha float64) Difference {
	est := a.Estimate - b.Estimate
	if a.Undefined != "" || b.Undefined != "" {
		why := a.Undefined
		if why == "" {
			why = b.Undefined
		}
		return Difference{Interval: undefined(est, why), P: math.NaN()}
	}
	se := math.Hypot(a.SE, b.SE)
	if a.DF > 0 && b.DF > 0 {
		// Two t intervals: Welch–Satterthwaite degrees of freedom for the difference.
		va, vb := a.SE*a.SE, b.SE*b.SE
		df := (va + vb) * (va + vb) / (va*va/a.DF + vb*vb/b.DF)
		if math.IsNaN(df) {
			df = math.Min(a.DF, b.DF)
		}
		return Difference{Interval: tInterval(est, se, df, alpha), P: tP(est, se, df)}
	}
	p := math.NaN()
	if se > 0 {
		p = 2 * distuv.UnitNormal.Survival(math.Abs(est)/se)
	} else if est != 0 {
		p = 0
	}
	return Difference{Interval: interval(est, se, alpha), P: p}
}
