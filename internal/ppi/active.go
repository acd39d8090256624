package ppi

import "math"

// MinEpisodes is the fewest episodes (clusters) with a labeled turn for which an interval is
// given. m3eval estimate (which also tunes λ of an active sample only then) and m3eval
// score's bootstrap intervals follow it as one rule. ppi_py's sandwich variance was biased downward by about
// (G − 1)/G and as unstable as a variance on G − 1 degrees of freedom (Cameron & Miller, "A
// practitioner's guide to cluster-robust inference", J. Human Resources 2015). The jackknife
// with a t quantile (small.go) corrects that and covered at 0.955 with 4 labeled episodes in
// the simulation of docs/statistics.md, but its interval there was 1.3 points wide on a 1–5
// scale, and a percentile bootstrap from 2–4 clusters is not valid at all (its interval is as
// narrow as the few clusters' spread). Five keeps one rule for both commands.
const MinEpisodes = 5

// ReasonFewEpisodes is why there is no interval when the labeled turns come from fewer than
// MinEpisodes episodes.
const ReasonFewEpisodes = "labeled turns from fewer than 5 episodes"

// ActiveData is one model's population of turns, of which some were labeled after an active
// draw. Turn i was drawn with the known probability Pi[i] and, if drawn and labeled, has the
// human value Human[i]. m3eval sample --active records Pi; the draw was over the turns of
// every model, so the Pi of one model's turns need not add up to anything in particular.
type ActiveData struct {
	Judge   []float64 // the judge's score of every turn
	Human   []float64 // the human value (read only where Labeled)
	Labeled []bool
	Pi      []float64 // inclusion probability of every turn (> 0; read only where Labeled)
	Cluster []int     // cluster (episode) of every turn; nil: every turn its own
}

// activeParts are the pieces of the Hájek-weighted PPI estimate of one ActiveData:
//
//	θ̂(λ) = λ·Ŷ̄ + R_Y − λ·R_Ŷ,   R_x = Σ ξ_i x_i/π_i / Σ ξ_i/π_i,
//
// where Ŷ̄ is the judge's mean over all the model's turns and R_x the weighted (Hájek) mean
// over its labeled turns, and the estimate's linearised per-turn influence ψ_i(λ) = a_i + λb_i
// with a_i = ξ_i w_i (Y_i − R_Y)/W and b_i = (Ŷ_i − Ŷ̄)/N − ξ_i w_i (Ŷ_i − R_Ŷ)/W
// (w = 1/π, W = Σ ξ w, N the model's turns).
type activeParts struct {
	judgeMean, ry, rj float64
	a, b              []float64
	n                 int // labeled turns
	episodes          int // episodes with a labeled turn
}

func activeSplit(d *ActiveData) activeParts {
	N := len(d.Judge)
	p := activeParts{a: make([]float64, N), b: make([]float64, N)}
	if N == 0 {
		p.judgeMean, p.ry, p.rj = math.NaN(), math.NaN(), math.NaN()
		return p
	}
	p.judgeMean = mean(d.Judge)
	var W, sy, sj float64
	eps := map[int]bool{}
	for i, l := range d.Labeled {
		if !l {
			continue
		}
		w := 1 / d.Pi[i]
		W += w
		sy += w * d.Human[i]
		sj += w * d.Judge[i]
		p.n++
		if d.Cluster != nil {
			eps[d.Cluster[i]] = true
		} else {
			eps[-1-i] = true
		}
	}
	p.episodes = len(eps)
	if p.n == 0 {
		p.ry, p.rj = math.NaN(), math.NaN()
	} else {
		p.ry, p.rj = sy/W, sj/W
	}
	for i := range d.Judge {
		p.b[i] = (d.Judge[i] - p.judgeMean) / float64(N)
		if d.Labeled[i] {
			w := 1 / d.Pi[i]
			p.a[i] = w * (d.Human[i] - p.ry) / W
			p.b[i] -= w * (d.Judge[i] - p.rj) / W
		}
	}
	return p
}

// clusterTotals adds x by cluster (nil cluster: every turn its own).
func clusterTotals(x []float64, cluster []int) []float64 {
	if cluster == nil {
		return append([]float64(nil), x...)
	}
	at := map[int]int{}
	var out []float64
	for i, v := range x {
		k, ok := at[cluster[i]]
		if !ok {
			k = len(out)
			at[cluster[i]] = k
			out = append(out, 0)
		}
		out[k] += v
	}
	return out
}

// ActiveLambda returns the λ that minimises the clustered variance Σ_c (A_c + λB_c)² of the
// estimate. It is −Σ A_cB_c / Σ B_c² over the episode sums of a and b, clipped to [0, 1].
// With labels from fewer than MinEpisodes episodes that minimum is fitted to a handful of
// sums (with two it can make them cancel and the variance 0), so λ is then 1: plain PPI, the
// judge's mean corrected by its weighted error on the labels, which uses the judge without
// tuning to it.
// λ is 0 when B does not vary (the judge cannot help).
func ActiveLambda(d *ActiveData) float64 {
	p := activeSplit(d)
	if p.episodes < MinEpisodes {
		return 1
	}
	sa, sb := clusterTotals(p.a, d.Cluster), clusterTotals(p.b, d.Cluster)
	var cov, vb float64
	for k := range sa {
		cov += sa[k] * sb[k]
		vb += sb[k] * sb[k]
	}
	if vb == 0 {
		return 0
	}
	return math.Min(1, math.Max(0, -cov/vb))
}

// ActiveWithLambda returns the inverse-probability-weighted PPI estimate of the mean human
// value of d's turns with parameter lam, and its interval. It is Hájek-normalised (see
// activeParts): the labels' weights 1/π are divided by their own sum within d, so the human-only estimate (λ = 0) is a weighted mean of the
// labels and stays in their range whatever the draw. Its 1 − alpha interval uses the
// linearised variance Σ_episodes (Σ ψ_i)², which treats the draws as independent and with
// replacement (for the fixed-size systematic draw of sample --active, whose draws are
// slightly negatively dependent and without replacement, this errs on the wide side), times
// G/(G − 1) with a t(G − 1) quantile for G labeled episodes (CR1). The interval is undefined
// with fewer than 2 labels or labels from fewer than MinEpisodes episodes.
func ActiveWithLambda(d *ActiveData, lam, alpha float64) Result {
	p := activeSplit(d)
	est := lam*p.judgeMean + p.ry - lam*p.rj
	switch {
	case p.n == 0:
		return Result{Interval: undefined(math.NaN(), ReasonNoLabels), Lambda: lam}
	case p.n < 2:
		return Result{Interval: undefined(est, ReasonFewLabels), Lambda: lam}
	case p.episodes < 2:
		return Result{Interval: undefined(est, ReasonOneEpisode), Lambda: lam}
	case p.episodes < MinEpisodes:
		return Result{Interval: undefined(est, ReasonFewEpisodes), Lambda: lam}
	}
	psi := make([]float64, len(p.a))
	for i := range psi {
		psi[i] = p.a[i] + lam*p.b[i]
	}
	var v float64
	for _, s := range clusterTotals(psi, d.Cluster) {
		v += s * s
	}
	// Small-sample correction (issue #41): CR1, the factor G/(G − 1) over the G episodes with
	// a label, and a t quantile on G − 1 degrees of freedom. It kept 0.94–0.95 coverage at
	// 6–40 labeled episodes in the uniform design's simulation (docs/statistics.md), where
	// the jackknife that re-tunes λ is used instead; for the weighted estimator a jackknife
	// would re-run the variance-minimising λ per episode left out, O(G²), which this release
	// does not do.
	G := float64(p.episodes)
	if noSpread(math.Sqrt(v), est) {
		return Result{Interval: undefined(est, ReasonNoSpread), Lambda: lam}
	}
	iv := tInterval(est, math.Sqrt(v*G/(G-1)), G-1, alpha)
	iv.Clusters = p.episodes
	return Result{Interval: iv, Lambda: lam}
}

// ActiveMean is the inverse-probability-weighted PPI estimate with λ tuned by ActiveLambda.
func ActiveMean(d *ActiveData, alpha float64) Result {
	return ActiveWithLambda(d, ActiveLambda(d), alpha)
}
