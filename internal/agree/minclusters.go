package agree

import (
	"fmt"

	"github.com/m3bench/m3eval/internal/plural"
)

// MinClusters is the fewest resampled units (episodes, turns, models, items) from which a
// bootstrap interval is given. The cluster bootstrap draws C clusters out of C; with 1–4 the
// replicates take only a handful of distinct values and the percentile interval is as narrow
// as their spread, which is not the statistic's uncertainty (score --bootstrap printed
// Fleiss' κ 0.45 [0.45, 0.45] from one episode, 0.720 [0.714, 0.727] from four). It is the
// same rule as m3eval estimate's (ppi.MinEpisodes, which a test holds equal): no interval
// below it, with the reason. A variable only so that the bit-for-bit test of the bootstrap
// engine (internal/scoring's TestIntervalsUnchanged) can still see every interval the engine
// computes; nothing else changes it.
var MinClusters = 5

// RefuseFewClusters takes the interval (ends and SE) away from every bootstrap interval of
// the results that resampled fewer than MinClusters units, with the reason. The replicates
// are still drawn (the cache keys and the comparisons' bootstrap tests do not change); only
// what is reported does. Comparisons point into the same intervals, so they follow.
func RefuseFewClusters(reports ...[]FieldResult) {
	for _, results := range reports {
		for fi := range results {
			for i := range results[fi].Bootstrap {
				iv := &results[fi].Bootstrap[i]
				if iv.Clusters >= MinClusters || !(iv.Lo.OK() || iv.Hi.OK() || iv.SE.OK()) {
					continue
				}
				unit := iv.Cluster
				if unit == "" {
					unit = "item"
				}
				why := Undefined(fmt.Sprintf("resampled only %s (an interval needs %d or more)", plural.N(iv.Clusters, unit), MinClusters))
				iv.Lo, iv.Hi, iv.SE = why, why, why
			}
		}
	}
}
