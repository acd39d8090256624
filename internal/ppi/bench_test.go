package ppi

import (
	"math/rand/v2"
	"testing"
)

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
