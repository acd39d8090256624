package ppi

import (
	"math"
	"math/rand/v2"
	"sort"
)

// clusters groups a Data's turns by cluster so that a bootstrap can resample whole clusters.
type clusters struct {
	lab   [][]int // per cluster: indexes of labeled turns
	unl   [][]int // per cluster: indexes of unlabeled turns (same cluster order)
	order []int   // cluster ids in first-seen order
}

func groupClusters(d *Data) clusters {
	var c clusters
	at := map[int]int{}
	slot := func(id int) int {
		k, ok := at[id]
		if !ok {
			k = len(c.order)
			at[id] = k
			c.order = append(c.order, id)
			c.lab = append(c.lab, nil)
			c.unl = append(c.unl, nil)
		}
		return k
	}
	for i := range d.Human {
		var k int
		if d.Cluster == nil {
			k = slot(-1 - i) // every turn its own cluster (ids < 0 never meet caller ids)
		} else {
			k = slot(d.Cluster[i])
		}
		c.lab[k] = append(c.lab[k], i)
	}
	for j := range d.Unlabeled {
		var k int
		if d.ClusterU == nil {
			k = slot(math.MinInt32 + j)
		} else {
			k = slot(d.ClusterU[j])
		}
		c.unl[k] = append(c.unl[k], j)
	}
	return c
}

// resample draws as many clusters as d has, with replacement, into buf (reused).
func (c *clusters) resample(d *Data, rng *rand.Rand, buf *Data) {
	buf.Human, buf.Judge, buf.Unlabeled = buf.Human[:0], buf.Judge[:0], buf.Unlabeled[:0]
	buf.Cluster, buf.ClusterU = nil, nil
	for range c.order {
		k := rng.IntN(len(c.order))
		for _, i := range c.lab[k] {
			buf.Human = append(buf.Human, d.Human[i])
			buf.Judge = append(buf.Judge, d.Judge[i])
		}
		for _, j := range c.unl[k] {
			buf.Unlabeled = append(buf.Unlabeled, d.Unlabeled[j])
		}
	}
}

// RankShares ranks the PPI++ estimates of several models and says how often each model holds
// each rank over B bootstrap replicates. Rank 1 is the highest. shares[m][r] is the fraction
// of replicates in which model m holds rank r+1; a replicate resamples each model's clusters
// (episodes) with replacement and re-estimates λ. A replicate in which a model draws no labeled turn ranks it last. seed fixes the
// replicates (the same seed gives the same shares on any machine).
func RankShares(models []*Data, B int, seed uint64) (rank []int, shares [][]float64) {
	m := len(models)
	est := make([]float64, m)
	for i, d := range models {
		est[i] = rankable(d, Lambda(d))
	}
	rank = ranks(est)
	shares = make([][]float64, m)
	for i := range shares {
		shares[i] = make([]float64, m)
	}
	if B <= 0 {
		return rank, nil
	}
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	cl := make([]clusters, m)
	for i, d := range models {
		cl[i] = groupClusters(d)
	}
	buf := &Data{}
	for range B {
		for i, d := range models {
			cl[i].resample(d, rng, buf)
			est[i] = rankable(buf, Lambda(buf))
		}
		for i, r := range ranks(est) {
			shares[i][r-1]++
		}
	}
	for i := range shares {
		for r := range shares[i] {
			shares[i][r] /= float64(B)
		}
	}
	return rank, shares
}

// rankable is the estimate, or −Inf without a labeled turn (ranked last).
func rankable(d *Data, lam float64) float64 {
	if len(d.Human) == 0 {
		return math.Inf(-1)
	}
	return PointEstimate(d, lam)
}

// ranks gives rank 1 to the highest value; ties keep the models' order (a stable sort).
func ranks(est []float64) []int {
	idx := make([]int, len(est))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return est[idx[a]] > est[idx[b]] })
	out := make([]int, len(est))
	for r, i := range idx {
		out[i] = r + 1
	}
	return out
}
