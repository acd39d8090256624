package agree

import (
	"math"

	"gonum.org/v1/gonum/stat"
)

// Why some of this is by hand: gonum's stat.Correlation is exactly Pearson's r (weighted,
// with integer weights equal to r on the repeated data), so it is used. gonum has no
// Spearman, and its stat.Kendall is tau-a computed in O(n²) that counts x- or y-ties as
// concordant or discordant, not the tie-corrected tau-b asked for; tau-b below is the
// O(n log n) Fenwick-tree count of concordant and discordant pairs (Knight 1966 in spirit).

// pairs holds (x, y) points prepared once for repeated correlations (full data and every
// bootstrap replicate): the order by x then y, and the dense ranks of y.
type pairs struct {
	x, y   []float64
	byXY   []int32  // indices sorted by (x, y)
	xKeys  []uint64 // floatKey of x along byXY: ties are runs of equal keys
	yrXY   []int32  // dense rank of y along byXY
	byY    []int32  // indices sorted by y
	yKeys  []uint64 // floatKey of y along byY
	yRank  []int32  // dense rank of y[i] (0 = smallest distinct y)
	yCount int      // number of distinct y
	// xRuns holds where each run of equal x begins along byXY, then len(x): the bootstrap's
	// tau-b pass steps from run to run without comparing keys (issue #43).
	xRuns []int32
	// finite: no x or y is infinite or NaN (the bootstrap's passes may then add the zero
	// terms of unweighted points instead of branching on them).
	finite bool
}

func newPairs(x, y []float64) *pairs {
	p := &pairs{x: x, y: y, finite: true}
	for i := range x {
		if math.IsInf(x[i], 0) || math.IsNaN(x[i]) || math.IsInf(y[i], 0) || math.IsNaN(y[i]) {
			p.finite = false
			break
		}
	}
	p.sortOrders()
	return p
}

// corrScratch is per-goroutine scratch space for weighted correlations.
type corrScratch struct {
	w, rx, ry []float64
	fen       []int32 // a replicate has at most 2^31 points; int32 keeps the tree in L1
	ytie, aty []int64
	ws        []int32 // the weights in the order of pk.byXY, when the caller has none
}

func newCorrScratch(n, ny int) *corrScratch {
	return &corrScratch{w: make([]float64, n), rx: make([]float64, n), ry: make([]float64, n),
		fen: make([]int32, ny+1), ytie: make([]int64, ny), aty: make([]int64, ny), ws: make([]int32, n)}
}

// constant reports whether every point with positive weight has the same value of v.
func constant(v []float64, w []int32) bool {
	first := true
	var x0 float64
	for i, x := range v {
		if w != nil && w[i] == 0 {
			continue
		}
		if first {
			x0, first = x, false
		} else if x != x0 {
			return false
		}
	}
	return true
}

func weightSum(n int, w []int32) int64 {
	if w == nil {
		return int64(n)
	}
	var s int64
	for _, x := range w {
		s += int64(x)
	}
	return s
}

// pearson is Pearson's r of the points, each counted w[i] times (all once when w is nil).
func (p *pairs) pearson(w []int32, s *corrScratch) Value {
	if weightSum(len(p.x), w) < 2 {
		return Undefined("fewer than 2 items")
	}
	if constant(p.x, w) || constant(p.y, w) {
		return Undefined("constant input (zero variance)")
	}
	return Num(scaledCorrelation(p.x, p.y, w))
}

// scaledCorrelation is Pearson's r of the points weighted by w (nil: all 1). The deviations
// from the means are divided by their largest magnitude before any product is formed, so
// tiny but varying values (HANNA's CIDEr column holds scores like 1e-310, whose squared
// deviations underflow to 0) give the same r as SciPy and R instead of 0/0. gonum's
// stat.Correlation squares the raw deviations, hence this by hand.
func scaledCorrelation(x, y []float64, w []int32) float64 {
	var sw, sx, sy float64
	for i := range x {
		wi := weightOf(w, i)
		sw += wi
		sx += wi * x[i]
		sy += wi * y[i]
	}
	mx, my := sx/sw, sy/sw
	var ax, ay float64
	for i := range x {
		if weightOf(w, i) == 0 {
			continue
		}
		// Plain comparisons: math.Max's NaN and ±0 handling costs here and no NaN reaches it.
		if d := math.Abs(x[i] - mx); d > ax {
			ax = d
		}
		if d := math.Abs(y[i] - my); d > ay {
			ay = d
		}
	}
	if ax == 0 || ay == 0 {
		return math.NaN()
	}
	var sxy, sxx, syy float64
	for i := range x {
		if wi := weightOf(w, i); wi != 0 {
			dx, dy := (x[i]-mx)/ax, (y[i]-my)/ay
			sxy += wi * dx * dy
			sxx += wi * dx * dx
			syy += wi * dy * dy
		}
	}
	return sxy / math.Sqrt(sxx*syy)
}

// weightOf is the weight of point i: w[i], or 1 when w is nil.
func weightOf(w []int32, i int) float64 {
	if w == nil {
		return 1
	}
	return float64(w[i])
}

func floatWeights(w []int32, s *corrScratch) []float64 {
	if w == nil {
		return nil
	}
	for i, x := range w {
		s.w[i] = float64(x)
	}
	return s.w
}

// averageRanks writes the average ranks (ties get the mean of their ranks, counting
// multiplicities) into out, given the sorted order ord and the keys along it.
func averageRanks(keys []uint64, ord []int32, w []int32, out []float64) {
	var cum int64
	for i := 0; i < len(ord); {
		j := i
		var t int64
		for j < len(ord) && keys[j] == keys[i] {
			if w == nil {
				t++
			} else {
				t += int64(w[ord[j]])
			}
			j++
		}
		r := float64(cum) + float64(t+1)/2
		for _, idx := range ord[i:j] {
			out[idx] = r
		}
		cum += t
		i = j
	}
}

// spearman is Spearman's rho: Pearson's r of the average ranks.
func (p *pairs) spearman(w []int32, s *corrScratch) Value {
	if weightSum(len(p.x), w) < 2 {
		return Undefined("fewer than 2 items")
	}
	if constant(p.x, w) || constant(p.y, w) {
		return Undefined("constant input (zero variance)")
	}
	averageRanks(p.xKeys, p.byXY, w, s.rx)
	averageRanks(p.yKeys, p.byY, w, s.ry)
	return Num(stat.Correlation(s.rx, s.ry, floatWeights(w, s)))
}

// kendall is Kendall's tau-b = (C − D)/sqrt((n0 − n1)(n0 − n2)) in O(n log n): the points are
// visited by increasing x, one group of equal x at a time; a Fenwick tree over the y ranks
// of the points already visited (strictly smaller x) counts how many lie below and above.
func (p *pairs) kendall(w []int32, s *corrScratch) Value {
	n := weightSum(len(p.x), w)
	if n < 2 {
		return Undefined("fewer than 2 items")
	}
	if w == nil {
		return p.kendallKnight()
	}
	return p.kendallWeighted(w, s, n)
}

// kendallWeighted is kendall for weighted points whose total weight n ≥ 2 is known.
func (p *pairs) kendallWeighted(w []int32, s *corrScratch, n int64) Value {
	fen := s.fen[:p.yCount+1]
	clear(fen)
	ytie := s.ytie[:p.yCount]
	clear(ytie)
	aty := s.aty[:p.yCount] // weight inserted into the tree at each y rank
	clear(aty)
	var conc, disc, inserted, n1 int64
	ord := p.byXY
	for i := 0; i < len(ord); {
		j := i
		var t int64
		for j < len(ord) && p.xKeys[j] == p.xKeys[i] {
			e := ord[j]
			we := int64(1)
			if w != nil {
				we = int64(w[e])
			}
			if we > 0 {
				yr := int(p.yrXY[j])
				var below int64
				for q := yr; q > 0; q -= q & -q {
					below += int64(fen[q])
				}
				// Inserted points at or below yr: those below plus those equal to it.
				upto := below + aty[yr]
				conc += we * below
				disc += we * (inserted - upto)
				ytie[yr] += we
				t += we
			}
			j++
		}
		for jj, e := range ord[i:j] {
			we := int64(1)
			if w != nil {
				we = int64(w[e])
			}
			if we == 0 {
				continue
			}
			aty[p.yrXY[i+jj]] += we
			for q := int(p.yrXY[i+jj]) + 1; q <= p.yCount; q += q & -q {
				fen[q] += int32(we)
			}
		}
		inserted += t
		n1 += t * (t - 1) / 2
		i = j
	}
	var n2 int64
	for _, t := range ytie {
		n2 += t * (t - 1) / 2
	}
	n0 := n * (n - 1) / 2
	a, b := n0-n1, n0-n2
	if a <= 0 || b <= 0 {
		return Undefined("constant input (all pairs tied)")
	}
	return Num(float64(conc-disc) / math.Sqrt(float64(a)*float64(b)))
}

// Pearson returns Pearson's r of x and y.
func Pearson(x, y []float64) Value {
	if len(x) < 2 {
		return Undefined("fewer than 2 items")
	}
	return newPairs(x, y).pearson(nil, nil)
}

// Spearman returns Spearman's rho of x and y (average ranks for ties).
func Spearman(x, y []float64) Value {
	if len(x) < 2 {
		return Undefined("fewer than 2 items")
	}
	p := newPairs(x, y)
	return p.spearman(nil, newCorrScratch(len(x), p.yCount))
}

// KendallTauB returns Kendall's tau-b of x and y in O(n log n).
func KendallTauB(x, y []float64) Value {
	if len(x) < 2 {
		return Undefined("fewer than 2 items")
	}
	p := newPairs(x, y)
	return p.kendall(nil, newCorrScratch(0, p.yCount))
}

// kendallKnight is tau-b for unweighted points by Knight's (1966) method: with the points
// in (x, y) order, the number of inversions of the y sequence (found by a bottom-up merge
// sort, which streams through memory) is the number of discordant pairs, and
// C − D = n0 − n1 − n2 + n3 − 2·D, n3 counting pairs tied in both x and y. It is several
// times faster than the Fenwick tree on a million points.
func (p *pairs) kendallKnight() Value {
	n := int64(len(p.x))
	seq := make([]int32, len(p.x))
	copy(seq, p.yrXY)
	var n1, n3 int64
	xk, yr := p.xKeys, p.yrXY
	for i := 0; i < len(xk); {
		j, k := i, i
		for j < len(xk) && xk[j] == xk[i] {
			if yr[j] != yr[k] {
				t := int64(j - k)
				n3 += t * (t - 1) / 2
				k = j
			}
			j++
		}
		t := int64(j - k)
		n3 += t * (t - 1) / 2
		t = int64(j - i)
		n1 += t * (t - 1) / 2
		i = j
	}
	var n2 int64
	for i := 0; i < len(p.yKeys); {
		j := i
		for j < len(p.yKeys) && p.yKeys[j] == p.yKeys[i] {
			j++
		}
		t := int64(j - i)
		n2 += t * (t - 1) / 2
		i = j
	}
	disc := inversions(seq, make([]int32, len(seq)))
	n0 := n * (n - 1) / 2
	a, b := n0-n1, n0-n2
	if a <= 0 || b <= 0 {
		return Undefined("constant input (all pairs tied)")
	}
	return Num(float64(n0-n1-n2+n3-2*disc) / math.Sqrt(float64(a)*float64(b)))
}

// inversions counts the pairs i < j with s[i] > s[j] by a bottom-up merge sort (s is
// sorted on return, through tmp).
func inversions(s, tmp []int32) int64 {
	var inv int64
	n := len(s)
	src, dst := s, tmp
	for width := 1; width < n; width *= 2 {
		for lo := 0; lo < n; lo += 2 * width {
			mid, hi := min(lo+width, n), min(lo+2*width, n)
			i, j, k := lo, mid, lo
			for i < mid && j < hi {
				if src[j] < src[i] {
					dst[k] = src[j]
					inv += int64(mid - i)
					j++
				} else {
					dst[k] = src[i]
					i++
				}
				k++
			}
			k += copy(dst[k:], src[i:mid])
			copy(dst[k:], src[j:hi])
		}
		src, dst = dst, src
	}
	return inv
}
