package estimate

import (
	"math"
	"sort"

	"github.com/m3bench/m3eval/internal/ppi"
)

// computeActive estimates every cell from an active sample (--sample): the labels of the
// drawn turns, each weighted by 1/its inclusion probability, normalised within each model's
// turns (ppi.ActiveMean, Hájek); the human-only estimate is the same with λ = 0. Differences treat the models' estimates
// as independent (their episodes are distinct); the ranking has no bootstrap shares.
func computeActive(res *Result, cells map[cellKey]*cell, fs []field, q *Request) *Result {
	groups, models := groupsAndModels(cells)
	for _, f := range fs {
		for _, g := range groups {
			type est struct {
				model string
				r     ppi.Result
			}
			var ests []est
			for _, m := range models {
				c := cells[cellKey{f.name, g, m}]
				if c == nil || c.active == nil {
					continue
				}
				a := c.active
				p, h := ppi.ActiveMean(a, Alpha), ppi.ActiveWithLambda(a, 0, Alpha)
				j := ppi.JudgeOnly(&ppi.Data{Unlabeled: a.Judge, ClusterU: a.Cluster}, Alpha)
				n := 0
				for _, l := range a.Labeled {
					if l {
						n++
					}
				}
				lam := Num(p.Lambda)
				if n == 0 {
					lam = Num(math.NaN())
				}
				eps, labeledEps := map[int]bool{}, map[int]bool{}
				for i, e := range a.Cluster {
					eps[e] = true
					if a.Labeled[i] {
						labeledEps[e] = true
					}
				}
				res.Rows = append(res.Rows, Row{Field: f.name, Model: m, Group: g, Judge: res.Judge,
					NLabeled: n, NUnlabeled: len(a.Judge) - n, NEpisodes: len(eps),
					NLabeledEpisodes: len(labeledEps), DF: dfOf(p.Interval),
					Estimate: Num(p.Estimate), CI: f.clip(p.Interval), Lambda: lam,
					HumanOnly:          Simple{Estimate: Num(h.Estimate), CI: f.clip(h.Interval)},
					JudgeOnly:          JudgeOnly{Estimate: Num(j.Estimate), CI: f.clip(j)},
					EffectiveN:         Num(ppi.EffectiveN(n, h.Interval, p.Interval)),
					LabelsWithoutScore: c.orphans, ValuesWithoutScore: c.orphanN, LabelsOutsideSample: c.outside, SampledNotLabeled: c.waiting,
					Undefined: p.Undefined})
				if p.Undefined == "" { // only models with an interval are compared and ranked
					ests = append(ests, est{m, p})
				}
			}
			if len(ests) < 2 {
				continue
			}
			// Independent estimates: the covariance is diagonal, and the intervals normal.
			var diffs []ppi.Difference
			cov := make([][]float64, len(ests))
			for i := range ests {
				cov[i] = make([]float64, len(ests))
				cov[i][i] = ests[i].r.SE * ests[i].r.SE
			}
			pairs := allPairs(len(ests))
			for _, pr := range pairs {
				diffs = append(diffs, ppi.DiffIndependent(ests[pr.A].r.Interval, ests[pr.B].r.Interval, Alpha))
			}
			names := make([]string, len(ests))
			for i, e := range ests {
				names[i] = e.model
			}
			nu := math.Inf(1)
			for _, d := range diffs {
				if d.DF > 0 {
					nu = math.Min(nu, d.DF)
				}
			}
			res.Differences = append(res.Differences,
				family(f, g, names, diffs, ppi.MaxT(cov, pairs, nu, Alpha, q.Seed), q.adjustment())...)
			sets := rankSets(res.Differences[len(res.Differences)-len(diffs):], len(ests))
			order := make([]int, len(ests))
			for i := range order {
				order[i] = i
			}
			sort.SliceStable(order, func(a, b int) bool { return ests[order[a]].r.Estimate > ests[order[b]].r.Estimate })
			for r, i := range order {
				res.Ranking = append(res.Ranking, RankRow{Field: f.name, Group: g, Model: ests[i].model, Rank: r + 1, Share: Num(math.NaN()),
					RankSet: [2]int{sets[i].Lo, sets[i].Hi}})
			}
		}
	}
	res.Bootstrap = 0
	return res
}

// dfOf is an interval's t degrees of freedom, null without an interval or for a normal one.
func dfOf(iv ppi.Interval) Num {
	if iv.Undefined != "" || iv.DF == 0 {
		return Num(math.NaN())
	}
	return Num(iv.DF)
}
