package ppi

import (
	"math/rand/v2"
	"testing"
)

// benchModels are 3 models of 30,000 turns (episodes of 4, 500 labels each).
func benchModels() []*Data {
	rng := rand.New(rand.NewPCG(1, 2))
	var models []*Data
	for m := range 3 {
		d := &Data{Cluster: []int{}, ClusterU: []int{}}
		for i := range 30000 {
			y := float64(m) + rng.NormFloat64()
			if i%60 == 0 {
				d.Human, d.Judge, d.Cluster = append(d.Human, y), append(d.Judge, y+0.3), append(d.Cluster, m*30000+i/4)
			} else {
				d.Unlabeled, d.ClusterU = append(d.Unlabeled, y+0.3), append(d.ClusterU, m*30000+i/4)
			}
		}
		models = append(models, d)
	}
	return models
}

// BenchmarkJointSimultaneous: what m3eval estimate adds per field for issue #41 on a large
// database: the jackknife over the episodes of 3 models of 30,000 turns (22,500 episodes, λ
// re-tuned in each replicate), the 3 differences and the max-t critical value (200,000 draws, maxTDraws).
func BenchmarkJointSimultaneous(b *testing.B) {
	models := benchModels()
	b.ResetTimer()
	for range b.N {
		jt := NewJoint(models, true, 0)
		for _, p := range allPairsBench(3) {
			jt.Diff(p.A, p.B, 0.05)
		}
		jt.Simultaneous(allPairsBench(3), 0.05, 7)
	}
}

func allPairsBench(k int) []Pair {
	var out []Pair
	for a := range k {
		for b := a + 1; b < k; b++ {
			out = append(out, Pair{a, b})
		}
	}
	return out
}

// BenchmarkRankShares: 3 models of 30,000 turns (episodes of 4, 500 labels each), 1,000
// replicates: one field of m3eval estimate's ranking on a large database.
func BenchmarkRankShares(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	var models []*Data
	for m := range 3 {
		d := &Data{Cluster: []int{}, ClusterU: []int{}}
		for i := range 30000 {
			y := float64(m) + rng.NormFloat64()
			if i%60 == 0 {
				d.Human, d.Judge, d.Cluster = append(d.Human, y), append(d.Judge, y+0.3), append(d.Cluster, i/4)
			} else {
				d.Unlabeled, d.ClusterU = append(d.Unlabeled, y+0.3), append(d.ClusterU, i/4)
			}
		}
		models = append(models, d)
	}
	b.ResetTimer()
	for range b.N {
		RankShares(models, 1000, 7)
	}
}
