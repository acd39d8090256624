package ppi

import "math"

// ActiveData is a population of turns of which some were labeled after an active draw:
// turn i was drawn with the known probability Pi[i] (m3eval sample --active records it) and,
// if drawn and labeled, has the human value Human[i].
type ActiveData struct {
	Judge   []float64 // the judge's score of every turn
	Human   []float64 // the human value (read only where Labeled)
	Labeled []bool
	Pi      []float64 // inclusion probability of every turn (> 0)
	Cluster []int     // cluster (episode) of every turn; nil: every turn its own
}

// activeTerms returns, per turn, A_i = ξ_i·Y_i/π_i and B_i = Ŷ_i·(1 − ξ_i/π_i): the
// estimate's per-turn term is A_i + λB_i, whose mean is unbiased for the mean human value
// for any λ, because E[ξ_i/π_i] = 1 (inverse-probability weighting).
func activeTerms(d *ActiveData) (a, b []float64) {
	a, b = make([]float64, len(d.Judge)), make([]float64, len(d.Judge))
	for i := range d.Judge {
		w := 0.0
		if d.Labeled[i] {
			w = 1 / d.Pi[i]
			a[i] = d.Human[i] * w
		}
		b[i] = d.Judge[i] * (1 - w)
	}
	return a, b
}

// clusterSums adds x − mean(x) by cluster.
func clusterSums(x []float64, cluster []int) []float64 {
	m := mean(x)
	if cluster == nil {
		out := make([]float64, len(x))
		for i, v := range x {
			out[i] = v - m
		}
		return out
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
		out[k] += v - m
	}
	return out
}

// ActiveLambda minimises the clustered variance of mean(A + λB) over λ: −Cov(A, B)/Var(B)
// from the cluster sums, clipped to [0, 1] (0 when B does not vary).
func ActiveLambda(d *ActiveData) float64 {
	a, b := activeTerms(d)
	sa, sb := clusterSums(a, d.Cluster), clusterSums(b, d.Cluster)
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

// ActiveWithLambda is the inverse-probability-weighted estimate mean(A + λB) with its
// clustered 1 − alpha interval: Var = Σ_clusters (Σ (ψ_i − θ̂))² / N², treating the draws as
// independent (for the fixed-size systematic draw of sample --active, whose draws are
// slightly negatively dependent, this errs on the wide side). λ = 0 is the Horvitz–Thompson
// estimate from the labels alone.
func ActiveWithLambda(d *ActiveData, lam, alpha float64) Result {
	n := 0
	var labeledClusters []int
	for i, l := range d.Labeled {
		if l {
			n++
			if d.Cluster != nil {
				labeledClusters = append(labeledClusters, d.Cluster[i])
			} else {
				labeledClusters = append(labeledClusters, i)
			}
		}
	}
	a, b := activeTerms(d)
	psi := make([]float64, len(a))
	for i := range a {
		psi[i] = a[i] + lam*b[i]
	}
	est := math.NaN()
	if n > 0 {
		est = mean(psi)
	}
	switch {
	case n == 0:
		return Result{Interval: undefined(est, ReasonNoLabels), Lambda: lam}
	case n < 2:
		return Result{Interval: undefined(est, ReasonFewLabels), Lambda: lam}
	case !twoClusters(labeledClusters):
		return Result{Interval: undefined(est, ReasonOneEpisode), Lambda: lam}
	}
	var v float64
	for _, s := range clusterSums(psi, d.Cluster) {
		v += s * s
	}
	N := float64(len(psi))
	return Result{Interval: interval(est, math.Sqrt(v)/N, alpha), Lambda: lam}
}

// ActiveMean is the inverse-probability-weighted PPI estimate with λ tuned by ActiveLambda.
func ActiveMean(d *ActiveData, alpha float64) Result {
	return ActiveWithLambda(d, ActiveLambda(d), alpha)
}
