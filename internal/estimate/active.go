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
func computeActive(res *Result, cells map[cellKey]*cell, fs []field) *Result {
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
				eps := map[int]bool{}
				for _, e := range a.Cluster {
					eps[e] = true
				}
				res.Rows = append(res.Rows, Row{Field: f.name, Model: m, Group: g, Judge: res.Judge,
					NLabeled: n, NUnlabeled: len(a.Judge) - n, NEpisodes: len(eps),
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
			for i := range ests {
				for k := i + 1; k < len(ests); k++ {
					d := ppi.DiffIndependent(ests[i].r.Interval, ests[k].r.Interval, Alpha)
					res.Differences = append(res.Differences, DiffRow{Field: f.name, Group: g, A: ests[i].model, B: ests[k].model,
						Estimate: Num(d.Estimate), CI: [2]Num{Num(d.Lo), Num(d.Hi)}, P: Num(d.P), Undefined: d.Undefined})
				}
			}
			if len(ests) < 2 {
				continue
			}
			order := make([]int, len(ests))
			for i := range order {
				order[i] = i
			}
			sort.SliceStable(order, func(a, b int) bool { return ests[order[a]].r.Estimate > ests[order[b]].r.Estimate })
			for r, i := range order {
				res.Ranking = append(res.Ranking, RankRow{Field: f.name, Group: g, Model: ests[i].model, Rank: r + 1, Share: Num(math.NaN())})
			}
		}
	}
	res.Bootstrap = 0
	return res
}
