package agree

import (
	"context"
	"math"
)

// LevelIntervals returns percentile intervals of the system- and segment-level correlations
// of judge j (the statistics of [Levels]). It bootstraps them with the clusters and
// replicates of opt, and names each interval as the report finds it beside its statistic
// ("human_vs_auto_[<judge>_]system_level_pearson" and so on). A replicate draws the
// clusters as the field's bootstrap does, then:
//
//   - a system (segment) whose items all lie in one cluster is resampled whole: it counts
//     as many times as its cluster was drawn, with its full-data means (coefficient). With
//     --cluster system this is the bootstrap over systems of system-level meta-evaluation;
//   - a system spread over several clusters counts once, its means recomputed from its
//     resampled items (the bootstrap over inputs); a segment likewise.
//
// judgeIndex numbers the judge's random streams. BCa is not offered here (percentile only).
func LevelIntervals(ctx context.Context, d *FieldData, j Judge, system, segment []int, floatMean bool, opt Options, index, judgeIndex int) ([]Interval, error) {
	prefix := "human_vs_auto_"
	if len(d.Judges) > 1 {
		prefix += sanitize(j.Name) + "_"
	}
	if opt.Bootstrap <= 0 {
		return nil, nil
	}
	cl, nc, err := clusterIndex(d, opt)
	if err != nil {
		return nil, err
	}
	if nc < 2 {
		return nil, nil
	}
	ld := newLevelData(d, j, system, segment, floatMean)
	// single returns the one cluster of the items, or −1 when they span several.
	single := func(items []int) int32 {
		c := cl[items[0]]
		for _, i := range items[1:] {
			if cl[i] != c {
				return -1
			}
		}
		return c
	}
	sysCl := make([]int32, len(ld.sysOrder))
	for k, id := range ld.sysOrder {
		sysCl[k] = single(ld.sysMembers[id])
	}
	segCl := make([]int32, len(ld.segOrder))
	segFull := make([][3]float64, len(ld.segOrder))
	for k, id := range ld.segOrder {
		segCl[k] = single(ld.segMembers[id])
		var xs, ys []float64
		for _, i := range ld.segMembers[id] {
			xs, ys = append(xs, ld.x[i]), append(ys, ld.y[i])
		}
		segFull[k] = smallCorr(xs, ys, make([]float64, len(xs)), make([]float64, len(xs)))
	}
	nstat := 0
	if system != nil {
		nstat += 3
	}
	if segment != nil {
		nstat += 3
	}
	vals := make([][]float64, nstat)
	for i := range vals {
		vals[i] = make([]float64, opt.Bootstrap)
	}
	type scratch struct {
		draws          []int32
		xs, ys, rx, ry []float64
	}
	err = parallel(ctx, opt.Bootstrap, opt.Workers, func() *scratch { return &scratch{draws: make([]int32, nc)} }, func(sc *scratch, r int) {
		draws := sc.draws
		drawClusters(draws, opt.Seed, streamID(index, 5, judgeIndex), r)
		xs, ys, rx, ry := sc.xs, sc.ys, sc.rx, sc.ry
		defer func() { sc.xs, sc.ys, sc.rx, sc.ry = xs, ys, rx, ry }()
		out := 0
		if system != nil {
			xs, ys = xs[:0], ys[:0]
			for k, id := range ld.sysOrder {
				if c := sysCl[k]; c >= 0 {
					for t := int32(0); t < draws[c]; t++ {
						xs, ys = append(xs, ld.sysX[k]), append(ys, ld.sysY[k])
					}
					continue
				}
				var sw, sx, sy float64
				for _, i := range ld.sysMembers[id] {
					wi := float64(draws[cl[i]])
					sw += wi
					sx += wi * ld.x[i]
					sy += wi * ld.y[i]
				}
				if sw > 0 {
					xs, ys = append(xs, sx/sw), append(ys, sy/sw)
				}
			}
			rx, ry = grow(rx, len(xs)), grow(ry, len(xs))
			for c, v := range smallCorr(xs, ys, rx, ry) {
				vals[out+c][r] = v
			}
			out += 3
		}
		if segment != nil {
			var sum [3]float64
			var n [3]int
			for k, id := range ld.segOrder {
				var co [3]float64
				mult := int32(1)
				if c := segCl[k]; c >= 0 {
					co, mult = segFull[k], draws[c]
				} else {
					xs, ys = xs[:0], ys[:0]
					for _, i := range ld.segMembers[id] {
						for t := int32(0); t < draws[cl[i]]; t++ {
							xs, ys = append(xs, ld.x[i]), append(ys, ld.y[i])
						}
					}
					rx, ry = grow(rx, len(xs)), grow(ry, len(xs))
					co = smallCorr(xs, ys, rx, ry)
				}
				for c := range co {
					if !math.IsNaN(co[c]) && mult > 0 {
						sum[c] += float64(mult) * co[c]
						n[c] += int(mult)
					}
				}
			}
			for c := range sum {
				vals[out+c][r] = math.NaN()
				if n[c] > 0 {
					vals[out+c][r] = sum[c] / float64(n[c])
				}
			}
		}
	})
	if err != nil {
		return nil, err
	}
	var out []Interval
	k := 0
	for _, level := range []struct {
		name string
		on   bool
	}{{"system_level_", system != nil}, {"segment_level_", segment != nil}} {
		if !level.on {
			continue
		}
		for _, c := range CorrNames {
			iv := summarize(prefix+level.name+c, vals[k])
			iv.Method, iv.Cluster, iv.Clusters = CIPercentile, opt.ClusterName, nc
			out = append(out, iv)
			k++
		}
	}
	return out, nil
}

// smallCorr returns Pearson's r, Spearman's rho and Kendall's tau-b of a few points (NaN
// when undefined) by direct O(n²) formulas: the bootstrap of the levels evaluates them on
// thousands of small samples, where the radix sorts of [newPairs] cost more than the
// whole computation. The definitions are those of [Pearson], [Spearman], [KendallTauB]
// (a test checks they agree).
func smallCorr(x, y []float64, rx, ry []float64) [3]float64 {
	nan := [3]float64{math.NaN(), math.NaN(), math.NaN()}
	n := len(x)
	if n < 2 || constant(x, nil) || constant(y, nil) {
		return nan
	}
	rank := func(v, out []float64) {
		for i := range v {
			var less, equal float64
			for j := range v {
				if v[j] < v[i] {
					less++
				} else if v[j] == v[i] {
					equal++
				}
			}
			out[i] = less + (equal+1)/2
		}
	}
	rank(x, rx)
	rank(y, ry)
	var c, d, tx, ty int64
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			sx := (x[i] > x[j]) != (x[i] < x[j])
			sy := (y[i] > y[j]) != (y[i] < y[j])
			switch {
			case !sx && !sy:
				tx++
				ty++
			case !sx:
				tx++
			case !sy:
				ty++
			case (x[i] < x[j]) == (y[i] < y[j]):
				c++
			default:
				d++
			}
		}
	}
	n0 := int64(n) * int64(n-1) / 2
	tau := math.NaN()
	if a, b := n0-tx, n0-ty; a > 0 && b > 0 {
		tau = float64(c-d) / math.Sqrt(float64(a)*float64(b))
	}
	return [3]float64{scaledCorrelation(x, y, nil), scaledCorrelation(rx, ry, nil), tau}
}

// grow returns s with length n, reusing its storage.
func grow(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	return s[:n]
}
