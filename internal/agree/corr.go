package agree

import (
	"cmp"
	"math"
	"slices"

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
	byXY   []int32 // indices sorted by (x, y)
	byY    []int32 // indices sorted by y
	yRank  []int32 // dense rank of y[i] (0 = smallest distinct y)
	yCount int     // number of distinct y
}

func newPairs(x, y []float64) *pairs {
	n := len(x)
	p := &pairs{x: x, y: y, byXY: make([]int32, n), byY: make([]int32, n), yRank: make([]int32, n)}
	for i := range p.byXY {
		p.byXY[i] = int32(i)
		p.byY[i] = int32(i)
	}
	slices.SortFunc(p.byXY, func(a, b int32) int {
		if c := cmp.Compare(x[a], x[b]); c != 0 {
			return c
		}
		return cmp.Compare(y[a], y[b])
	})
	slices.SortFunc(p.byY, func(a, b int32) int { return cmp.Compare(y[a], y[b]) })
	rank := int32(-1)
	for i, j := range p.byY {
		if i == 0 || y[j] != y[p.byY[i-1]] {
			rank++
		}
		p.yRank[j] = rank
	}
	p.yCount = int(rank + 1)
	return p
}

// corrScratch is per-goroutine scratch space for weighted correlations.
type corrScratch struct {
	w, rx, ry []float64
	fen       []int64
	ytie      []int64
}

func newCorrScratch(n, ny int) *corrScratch {
	return &corrScratch{w: make([]float64, n), rx: make([]float64, n), ry: make([]float64, n),
		fen: make([]int64, ny+1), ytie: make([]int64, ny)}
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
	return Num(stat.Correlation(p.x, p.y, floatWeights(w, s)))
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
// multiplicities) of v, visited in the sorted order ord, into out.
func averageRanks(v []float64, ord []int32, w []int32, out []float64) {
	var cum int64
	for i := 0; i < len(ord); {
		j := i
		var t int64
		for j < len(ord) && v[ord[j]] == v[ord[i]] {
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
	averageRanks(p.x, p.byXY, w, s.rx)
	averageRanks(p.y, p.byY, w, s.ry)
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
	fen := s.fen[:p.yCount+1]
	clear(fen)
	ytie := s.ytie[:p.yCount]
	clear(ytie)
	var conc, disc, inserted, n1 int64
	ord := p.byXY
	for i := 0; i < len(ord); {
		j := i
		var t int64
		for j < len(ord) && p.x[ord[j]] == p.x[ord[i]] {
			e := ord[j]
			we := int64(1)
			if w != nil {
				we = int64(w[e])
			}
			if we > 0 {
				yr := int(p.yRank[e])
				var below, upto int64
				for q := yr; q > 0; q -= q & -q {
					below += fen[q]
				}
				for q := yr + 1; q > 0; q -= q & -q {
					upto += fen[q]
				}
				conc += we * below
				disc += we * (inserted - upto)
				ytie[yr] += we
				t += we
			}
			j++
		}
		for _, e := range ord[i:j] {
			we := int64(1)
			if w != nil {
				we = int64(w[e])
			}
			if we == 0 {
				continue
			}
			for q := int(p.yRank[e]) + 1; q <= p.yCount; q += q & -q {
				fen[q] += we
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
