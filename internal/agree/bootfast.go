package agree

import "math"

// The bootstrap's inner loops, arranged for speed without changing a single number
// (issue #30): every replicate still draws the same clusters from the same stream, every
// count is the same integer, and every floating-point sum adds the same terms in the same
// order as before, so the intervals are the same bit for bit (TestIntervalsUnchanged,
// TestCorr3MatchesReference).

// clusterLists holds, for every cluster, the distinct ids (rating patterns, judge points or
// majority × label cells) of its items with how many of its items have each: a replicate
// adds draws[c]·count to each id of cluster c, which is what adding draws[c] once per item
// gives, in a pass over the clusters drawn instead of one over every item.
type clusterLists struct {
	start []int32 // cluster c's entries are start[c]..start[c+1]-1
	id    []int32
	count []int32
}

// newClusterLists groups the ids of the items (of[i] < 0: item i has none) by the items'
// clusters cl (0..nc−1); nid bounds the ids.
func newClusterLists(cl []int32, nc int, of []int32, nid int) clusterLists {
	// Items by cluster (a counting sort), then each cluster's ids merged.
	byCl := make([]int32, nc+1)
	for i, c := range cl {
		if of[i] >= 0 {
			byCl[c+1]++
		}
	}
	for c := 0; c < nc; c++ {
		byCl[c+1] += byCl[c]
	}
	items := make([]int32, byCl[nc])
	pos := append([]int32(nil), byCl[:nc]...)
	for i, c := range cl {
		if of[i] >= 0 {
			items[pos[c]] = int32(i)
			pos[c]++
		}
	}
	l := clusterLists{start: make([]int32, nc+1)}
	// slot[id] is id's entry in the current cluster's list, valid when its stamp is the
	// cluster's.
	slot := make([]int32, nid)
	stamp := make([]int32, nid)
	for i := range stamp {
		stamp[i] = -1
	}
	for c := 0; c < nc; c++ {
		l.start[c] = int32(len(l.id))
		for _, i := range items[byCl[c]:byCl[c+1]] {
			id := of[i]
			if stamp[id] == int32(c) {
				l.count[slot[id]]++
				continue
			}
			stamp[id], slot[id] = int32(c), int32(len(l.id))
			l.id = append(l.id, id)
			l.count = append(l.count, 1)
		}
	}
	l.start[nc] = int32(len(l.id))
	return l
}

// add64 adds cw[c]·count to dst[id] for every entry of every cluster c with cw[c] > 0.
func (l *clusterLists) add64(dst []int64, cw []int32) {
	for c, w := range cw {
		if w == 0 {
			continue
		}
		lo, hi := l.start[c], l.start[c+1]
		ids, counts := l.id[lo:hi], l.count[lo:hi]
		for t, id := range ids {
			dst[id] += int64(w) * int64(counts[t])
		}
	}
}

// add32 is add64 into int32 weights (a replicate's total weight is below 2^31).
func (l *clusterLists) add32(dst []int32, cw []int32) {
	for c, w := range cw {
		if w == 0 {
			continue
		}
		lo, hi := l.start[c], l.start[c+1]
		ids, counts := l.id[lo:hi], l.count[lo:hi]
		for t, id := range ids {
			dst[id] += w * counts[t]
		}
	}
}

// corr3 evaluates Pearson's r, Spearman's rho and Kendall's tau-b on the weighted points.
// It computes exactly what scaledCorrelation, averageRanks with gonum's stat.Correlation,
// and kendallWeighted compute one after the other (corr3Reference in the tests), with their
// passes over the points fused: each accumulator still adds the same terms in the same
// (point) order, so every result is the same float64. The sample size and constant checks
// are done once for the three.
func (j judgeUnits) corr3(w []int32, s *corrScratch) [3]Value {
	p := j.p
	x, y := p.x, p.y
	w = w[:len(x)]
	var n int64
	constX, constY, first := true, true, true
	var x0, y0 float64
	for i, wi := range w {
		if wi == 0 {
			continue
		}
		n += int64(wi)
		if first {
			x0, y0, first = x[i], y[i], false
			continue
		}
		if x[i] != x0 {
			constX = false
		}
		if y[i] != y0 {
			constY = false
		}
	}
	if n < 2 {
		u := Undefined("fewer than 2 items")
		return [3]Value{u, u, u}
	}
	if constX || constY {
		u := Undefined("constant input (zero variance)")
		return [3]Value{u, u, u}
	}
	rx, ry := s.rx[:len(x)], s.ry[:len(x)]
	averageRanks(p.xKeys, p.byXY, w, rx)
	averageRanks(p.yKeys, p.byY, w, ry)

	// Pass 1: the weighted sums of scaledCorrelation's first pass and of stat.Mean of the
	// two rank vectors (their sums of weights are the same sum, sw).
	var sw, sx, sy, srx, sry float64
	for i, wi := range w {
		f := float64(wi)
		sw += f
		sx += f * x[i]
		sy += f * y[i]
		srx += f * rx[i]
		sry += f * ry[i]
	}
	mx, my := sx/sw, sy/sw
	xu, yu := srx/sw, sry/sw
	// Pass 2: scaledCorrelation's largest deviations and stat.Correlation's weighted loop
	// (whose terms of weight 0 are ±0 and change no sum: they are skipped).
	var ax, ay float64
	var cxx, cyy, cxy, xcomp, ycomp, cw float64
	for i, wi := range w {
		if wi == 0 {
			continue
		}
		if d := math.Abs(x[i] - mx); d > ax {
			ax = d
		}
		if d := math.Abs(y[i] - my); d > ay {
			ay = d
		}
		f := float64(wi)
		xd := rx[i] - xu
		wxd := f * xd
		yd := ry[i] - yu
		wyd := f * yd
		cxx += wxd * xd
		cyy += wyd * yd
		cxy += wxd * yd
		xcomp += wxd
		ycomp += wyd
		cw += f
	}
	cxx -= xcomp * xcomp / cw
	cyy -= ycomp * ycomp / cw
	rho := Num((cxy - xcomp*ycomp/cw) / math.Sqrt(cxx*cyy))
	// Pass 3: scaledCorrelation's scaled products.
	r := math.NaN()
	if ax != 0 && ay != 0 {
		var pxy, pxx, pyy float64
		for i, wi := range w {
			if wi == 0 {
				continue
			}
			f := float64(wi)
			dx, dy := (x[i]-mx)/ax, (y[i]-my)/ay
			pxy += f * dx * dy
			pxx += f * dx * dx
			pyy += f * dy * dy
		}
		r = pxy / math.Sqrt(pxx*pyy)
	}
	return [3]Value{Num(r), rho, j.pk.kendallWeighted(w, s, n)}
}
